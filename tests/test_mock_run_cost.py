"""What a program run under mocks costs beyond the program (issue 25 item 4): no thread switch per registration, no
garbage collection inside the run."""

from __future__ import annotations

import gc
import threading
from typing import Any

import pytest

from gpu_dra.cli import offline
from gpu_dra.core.config.loader import load_stack, stack_values

from .conftest import ROOT


def _run(stack: str) -> offline.ProgramRun:
    values, _ = stack_values(ROOT, stack)
    return offline.run_program(ROOT, stack, values, load_stack(ROOT, stack))


def test_registrations_are_answered_on_the_programs_thread_with_the_collector_paused(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The SDK hands each monitor call to an executor thread, made for a round trip to the engine; the mocks answer
    where the program runs. The collector does not interrupt a run, the SDKs' modules the first run imported are
    frozen out of its sight, and it is as it was after the run (enabled here)."""
    seen: set[tuple[str, bool]] = set()
    register = offline.RecordingMonitor.RegisterResource

    def recorded(self: offline.RecordingMonitor, request: Any) -> Any:
        seen.add((threading.current_thread().name, gc.isenabled()))
        return register(self, request)

    monkeypatch.setattr(offline.RecordingMonitor, "RegisterResource", recorded)
    run = _run("dev")
    assert run.resources and seen == {(threading.current_thread().name, False)}
    assert gc.isenabled() and gc.get_freeze_count() > 100_000

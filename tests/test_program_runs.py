"""Many programs in one process, as `gpu-dra check --all-stacks` runs them: each stack's program under mocks, one
after another. The Pulumi SDK keeps its callback servicers (the server behind resource transforms) in one
process-wide list, `_CallbackServicer._servicers`, and appends a new servicer to it before the servicer has its
`_transforms`; the mock monitor reads every servicer's `_transforms` on an executor thread for each registration.
A registration that came while the loop thread was creating the chart's servicer failed with "AttributeError:
'_CallbackServicer' object has no attribute '_transforms'" (1 run in 4 of 20 stacks)."""

from __future__ import annotations

import shutil
from collections.abc import Iterator

import pytest
from pulumi.runtime._callbacks import _CallbackServicer

from gpu_dra.cli import check
from gpu_dra.cli.offline import run_program
from gpu_dra.core.config.loader import load_stack, stack_values

from .conftest import ROOT, Project


@pytest.fixture
def half_made_servicer() -> Iterator[None]:
    """A servicer in the moment between `_servicers.append(self)` and `self._transforms = {}`, made permanent so the
    race is not left to the scheduler."""
    servicer = object.__new__(_CallbackServicer)
    servicer._loop = None  # type: ignore[assignment]  # the SDK's shutdown at the end of a run skips other loops'
    _CallbackServicer._servicers.append(servicer)
    try:
        yield
    finally:
        _CallbackServicer._servicers.remove(servicer)


def test_a_registration_during_a_servicer_s_creation_does_not_fail(half_made_servicer: None) -> None:
    values, _ = stack_values(ROOT, "prod")
    run = run_program(ROOT, "prod", values, load_stack(ROOT, "prod"))
    chart = next(r for r in run.resources if r.type == "kubernetes:helm.sh/v4:Chart" and r.name == "nvidia-dra-driver")
    assert chart.transforms == 1  # the program's transform is still seen


def test_many_stacks_check_in_one_process(project: Project) -> None:
    """Nine stacks (copies of the repository's three) checked one after another in one process, as --all-stacks does:
    each gives the same verdicts as its original, and no servicer is left behind between runs."""
    stacks = project.root / "stacks"
    copies = {}
    for index in range(6):
        original = ("dev", "staging", "prod")[index % 3]
        name = f"{original}-{index}"
        shutil.copy(stacks / f"Pulumi.{original}.yaml", stacks / f"Pulumi.{name}.yaml")
        copies[name] = original
    expected = {s: _verdicts(s, check.check_stack(project.root, s)) for s in ("dev", "staging", "prod")}
    assert expected["dev"]  # dev has advisory findings: the comparison compares something
    for name, original in copies.items():
        assert _verdicts(name, check.check_stack(project.root, name)) == expected[original], name
        assert _CallbackServicer._servicers == []


def _verdicts(stack: str, verdicts: list[check.StackFinding]) -> list[tuple[str, str, str, int | None]]:
    """(rule, enforcement, file, line) of each verdict, the stack's own file named alike for every copy."""
    return sorted((v.finding.rule, v.enforcement, v.finding.file.replace(f"Pulumi.{stack}.yaml", "Pulumi.<stack>.yaml"),
                   v.finding.line) for v in verdicts)

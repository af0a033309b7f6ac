"""A verb reading standard input from a terminal says so before it waits, and ends at Ctrl-D (issue 32, item 5):
`gpu-dra lint -` or `gpu-dra logs` typed as is would otherwise wait in silence."""

from __future__ import annotations

import os
import pty
import subprocess
import sys

import pytest

from .conftest import ROOT


@pytest.mark.parametrize("args, said", [
    (["lint", "-"], "gpu-dra: reading YAML from the terminal; end with Ctrl-D"),
    (["logs"], "gpu-dra: reading a scheduler log from the terminal; end with Ctrl-D"),
])
def test_reading_a_terminal_says_so_and_ends_at_ctrl_d(args: list[str], said: str) -> None:
    controller, terminal = pty.openpty()
    try:
        child = subprocess.Popen([sys.executable, "-m", "gpu_dra.cli.main", *args], cwd=ROOT, stdin=terminal,
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                 env={**os.environ, "PYTHONPATH": str(ROOT)})
        assert child.stderr is not None
        first = child.stderr.readline()  # printed before it waits: the test would hang here without it
        assert said in first
        os.write(controller, b"\x04")  # Ctrl-D on an empty line: end of input
        out, err = child.communicate(timeout=60)
    finally:
        os.close(controller)
        os.close(terminal)
    assert child.returncode in (0, 1) and "Traceback" not in err, err

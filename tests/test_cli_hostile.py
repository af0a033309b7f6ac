"""Hostile and broken input to the CLI (issue 13): Ctrl-C at any moment, secrets in stack files, arguments and files
that are not what they should be, long values and terminal escape sequences. Each is bad input (exit 2, a message
naming the argument or file) or an interrupt (exit 130), never an internal error or a traceback."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import yaml

from gpu_dra.cli.text import cut

from .conftest import ROOT, Project
from .test_cli import gpu_dra

# --------------------------------------------------------------------------------------------- Ctrl-C

# The delays span the run: imports, loading the stack, the Pulumi program under mocks, writing the manifests.
RUN_SHARES = (0.1, 0.3, 0.5, 0.7, 0.85)  # of a whole run past Python's own start, when the signal is sent
COMPLETE = {"preview": "Kubernetes objects written to", "check": "stack dev: "}


def _interrupted(args: list[str], delay: float,
                 command: tuple[str, ...] = (sys.executable, "-m", "gpu_dra.cli.main"),
                 ) -> tuple[subprocess.CompletedProcess[str] | None, float]:
    """The run with SIGINT sent after `delay` seconds, and how long it took to end after it; None if it had ended
    before."""
    process = subprocess.Popen([*command, *args], cwd=ROOT, text=True,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               env={**os.environ, "PYTHONPATH": str(ROOT)})
    time.sleep(delay)
    if process.poll() is not None:
        process.communicate()
        return None, 0.0
    process.send_signal(signal.SIGINT)
    sent = time.monotonic()
    try:
        stdout, stderr = process.communicate(timeout=10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.communicate()
        raise AssertionError(f"{args} still running 10 s after Ctrl-C at {delay} s") from None
    return subprocess.CompletedProcess(args, process.returncode, stdout, stderr), time.monotonic() - sent


def _nothing_half_written(out: Path) -> None:
    assert not [p.name for p in out.rglob("*.tmp")]
    for path in out.rglob("*.yaml"):
        assert yaml.safe_load(path.read_text())["kind"], path  # whole documents
    record = out / ".gpu-dra-files"
    if record.exists():  # an interrupted write finishes first: the record lists exactly what is there
        listed = {line for line in record.read_text().splitlines() if line and not line.startswith("#")}
        assert listed == {p.relative_to(out).as_posix() for p in out.rglob("*.yaml")}


INSTALLED = Path(sys.executable).parent / "gpu-dra"  # the console script pip installs (pyproject's entry point)


def _python_startup() -> float:
    """How long this Python takes to start and stop doing nothing: a Ctrl-C before that is Python's own."""
    took = []
    for _ in range(3):
        start = time.monotonic()
        subprocess.run([sys.executable, "-c", "pass"], check=True)
        took.append(time.monotonic() - start)
    return max(took)


@pytest.mark.skipif(not INSTALLED.exists(), reason="gpu-dra is not installed beside this Python")
@pytest.mark.parametrize("after", [1.5, 2.5])
def test_ctrl_c_while_the_installed_command_starts_is_exit_130_without_a_traceback(after: float) -> None:
    """The entry point sets its handler before it imports the verbs, so a Ctrl-C that lands during the imports
    (soon after Python itself has started) ends the run as one that lands later does."""
    result, _ = _interrupted(["check", "--stack", "dev"], after * _python_startup(), (str(INSTALLED),))
    assert result is not None  # the run takes seconds
    assert result.returncode == 130, result.stderr
    assert "Traceback" not in result.stderr and "KeyboardInterrupt" not in result.stderr


def _delays(args: list[str]) -> tuple[list[float], float]:
    """When to send the signal: across the run as this machine runs it (from Python's start to the run's end), so
    that a fast machine does not finish before most signals and a busy one is not signalled before Python starts."""
    start = time.monotonic()
    subprocess.run([sys.executable, "-m", "gpu_dra.cli.main", *args], cwd=ROOT, capture_output=True,
                   env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=120)
    run, python = time.monotonic() - start, _python_startup()
    return [python + share * max(run - python, 0.0) for share in RUN_SHARES], python


@pytest.mark.parametrize("verb", ["preview", "check"])
def test_ctrl_c_ends_the_run_at_once_with_exit_130(verb: str, tmp_path: Path) -> None:
    delivered = 0
    scale = [verb, "--stack", "dev"] + (["--out", str(tmp_path / "out-whole")] if verb == "preview" else [])
    delays, python = _delays(scale)
    for delay in delays:
        out = tmp_path / f"out-{delay}"
        args = [verb, "--stack", "dev"] + (["--out", str(out)] if verb == "preview" else [])
        result, took = _interrupted(args, delay)
        if result is None:
            continue  # this machine finished the run first
        if result.returncode == -signal.SIGINT and delay < 2 * python:
            continue  # a busy machine had not started Python yet: the signal's default action, 130 to the shell
        delivered += 1
        assert "Traceback" not in result.stderr and "internal error" not in result.stderr, (delay, result.stderr)
        # Near its end a run may complete before the signal arrives.
        finished = result.returncode == 0 and COMPLETE[verb] in result.stdout
        assert result.returncode == 130 or finished, (delay, result.returncode, result.stderr)
        assert took < 3, (delay, took)
        if out.exists():
            _nothing_half_written(out)
    assert delivered >= 3


    _nothing_half_written(out)


# --------------------------------------------------------------------------------------------- secrets

TOKEN = "s3cr3t-t0ken-of-the-lab"


def _existing_cluster(project: Project) -> None:
    def to_existing(config: dict[str, Any]) -> None:
        config["gpu-dra:cluster"] = {"name": "lab", "platform": "existing", "kubernetesVersion": "1.34"}
        config["gpu-dra:nodeGroups"] = []
        config["gpu-dra:kubeconfig"] = yaml.safe_dump({"users": [{"name": "u", "user": {"token": TOKEN}}]})
    project.edit_stack("dev", to_existing)


def test_a_plaintext_kubeconfig_is_never_printed_and_is_warned_about(project: Project, tmp_path: Path) -> None:
    _existing_cluster(project)
    result = gpu_dra("--project-dir", str(project.root), "preview", "--stack", "dev", "--format", "json",
                     "--out", str(tmp_path / "out"))
    assert result.returncode == 0, result.stderr
    assert TOKEN not in result.stdout + result.stderr
    [provider] = [r for r in json.loads(result.stdout)["resources"] if r["type"] == "pulumi:providers:kubernetes"]
    assert provider["inputs"]["kubeconfig"] == "[secret]"
    assert ("gpu-dra: warning: stacks/Pulumi.dev.yaml: gpu-dra:kubeconfig is stored in plain text, with the "
            "credentials it holds: encrypt it with `pulumi config set --secret gpu-dra:kubeconfig < kubeconfig`"
            in result.stderr.splitlines())


def test_the_pr_gate_warns_about_a_plaintext_kubeconfig(project: Project) -> None:
    _existing_cluster(project)
    result = gpu_dra("--project-dir", str(project.root), "check", "--stack", "dev", "--format", "json")
    assert "gpu-dra:kubeconfig is stored in plain text" in result.stderr
    assert TOKEN not in result.stdout + result.stderr


# --------------------------------------------------------------------------------------------- bad arguments


def _one_short_line(result: subprocess.CompletedProcess[str]) -> str:
    """The single line of a usage error, with no traceback."""
    assert result.returncode == 2, result.stderr
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and len(lines[0]) < 400 and "Traceback" not in result.stderr, result.stderr
    return lines[0]


def test_out_pointing_at_a_file(tmp_path: Path) -> None:
    (tmp_path / "notes").write_text("mine")
    line = _one_short_line(gpu_dra("preview", "--stack", "dev", "--out", str(tmp_path / "notes")))
    assert line == f"gpu-dra: {cut(str(tmp_path / 'notes'))} is a file; --out takes a folder"  # any tmp_path
    assert (tmp_path / "notes").read_text() == "mine"


def test_out_with_a_name_too_long(tmp_path: Path) -> None:
    out = tmp_path / ("o" * 5000)
    line = _one_short_line(gpu_dra("render", "--stack", "dev", "--out", str(out)))
    assert line.startswith("gpu-dra: --out ") and cut(str(out)) in line and line.endswith(": File name too long")


def test_project_dir_with_a_name_too_long(tmp_path: Path) -> None:
    line = _one_short_line(gpu_dra("--project-dir", str(tmp_path / ("p" * 5000)), "preview"))
    assert "cannot look for the gpu-dra project there: File name too long" in line


@pytest.mark.parametrize("verb", [["preview"], ["render", "--out", "x"], ["check"], ["explain"], ["inventory"]])
@pytest.mark.parametrize("name", ["s" * 5000, "../stacks/Pulumi.dev", "dev\n"])
def test_a_stack_name_that_is_no_stack_name(verb: list[str], name: str) -> None:
    line = _one_short_line(gpu_dra(*verb, "--stack", name))
    assert line.startswith("gpu-dra: --stack '") and "not a stack name: at most 100 letters, digits" in line


def test_a_rejected_argument_is_echoed_cut() -> None:
    result = gpu_dra("lint", "--format", "j" * 5000, "claims.yaml")
    assert result.returncode == 2
    assert "argument --format: invalid choice: 'jjj" in result.stderr and len(result.stderr) < 1000


# --------------------------------------------------------------------------------------------- bad files

SLICE = """apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: s}
spec:
  driver: gpu.nvidia.com
  nodeName: node-a
  pool: {name: node-a, generation: 1, resourceSliceCount: 1}
  devices:
  - name: gpu-0
    attributes:
      productName: {string: %s}
"""


def test_a_yaml_date_in_an_inventory_dump_stays_text_in_json(tmp_path: Path) -> None:
    dump = tmp_path / "slices.yaml"
    dump.write_text(SLICE % "2024-01-01")
    result = gpu_dra("inventory", str(dump), "--format", "json")
    assert result.returncode == 0, result.stderr
    [device] = json.loads(result.stdout)["nodes"][0]["devices"]
    assert device["attributes"]["productName"] == {"string": "2024-01-01"}


def test_a_value_json_cannot_hold_is_bad_input_naming_the_device(tmp_path: Path) -> None:
    dump = tmp_path / "slices.yaml"
    dump.write_text(SLICE % ".nan")
    line = _one_short_line(gpu_dra("inventory", dump.name, "--format", "json", cwd=tmp_path))  # any tmp_path
    assert line == (f"gpu-dra: {dump.name}: device node-a/gpu-0: attribute and capacity values must be strings, finite "
                    "numbers or booleans")


def test_deeply_nested_json_log_lines_are_skipped(tmp_path: Path) -> None:
    log = tmp_path / "scheduler.log"
    nested = {"ts": 1, "caller": "dynamicresources/dynamicresources.go:1", "msg": "pod unschedulable",
              "pod": {"name": "p", "namespace": "ml"}}
    log.write_text(json.dumps({**nested, "reason": "["}).replace('"["', "[" * 100_000 + "]" * 100_000) + "\n"
                   + json.dumps({**nested, "reason": "cannot allocate all claims"}) + "\n")
    result = gpu_dra("logs", str(log))
    assert result.returncode == 0 and "Traceback" not in result.stderr, result.stderr
    assert "=> cannot allocate all claims" in result.stdout and "[[[" not in result.stdout


# --------------------------------------------------------------------------------------------- what is printed


def test_long_values_in_error_messages_are_cut(project: Project) -> None:
    project.edit_stack("dev", lambda config: config.update({"gpu-dra:environment": "x" * 30_000}))
    result = gpu_dra("--project-dir", str(project.root), "check", "--stack", "dev")
    assert result.returncode == 2
    [line] = [line for line in result.stderr.splitlines() if "gpu-dra:environment" in line]
    assert line.startswith("stacks/Pulumi.dev.yaml:") and "characters]" in line and len(line) < 1100


def test_escape_sequences_in_log_lines_reach_the_terminal_escaped(tmp_path: Path) -> None:
    log = tmp_path / "scheduler.log"
    log.write_text('I0101 00:00:00.000000       1 dynamicresources.go:1] "pod \x1b[2J\x1b]0;owned\x07 \x9b31m" '
                   'pod="ml/a\x1b[5m" err="claim\rfake"\n', encoding="utf-8")
    for args in ([str(log)], [str(log), "--pod", "ml/a\x1b[5m"]):
        result = gpu_dra("logs", *args)
        assert result.returncode == 0, result.stderr
        assert not any(c in result.stdout for c in "\x1b\x07\x9b\r")
        assert "pod ml/a\\x1b[5m" in result.stdout and "\\x1b[2J\\x1b]0;owned\\x07 \\x9b31m" in result.stdout


def test_escape_sequences_in_echoed_values_reach_the_terminal_escaped() -> None:
    result = gpu_dra("lint", "/nonexistent/\x1b[31mred\u202e.yaml")
    assert result.returncode == 2
    assert result.stderr == "gpu-dra: /nonexistent/\\x1b[31mred\\u202e.yaml: cannot read: No such file or directory\n"


def test_a_long_claim_name_is_echoed_cut() -> None:
    line = _one_short_line(gpu_dra("explain", "--stack", "dev", "--claim", "c" * 5000))
    assert line.startswith("gpu-dra: no claim or claim template named 'ccc") and "characters]" in line

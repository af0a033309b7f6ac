"""`gpu-dra logs` holds a bounded number of pods whatever the log: a pod's record is dropped once MAX_PODS changes
of pod have come after its last line (said in a note), the same whether the file is read in one go or in parts;
and a worker that dies is an error, not a wait."""

from __future__ import annotations

import io
import random
import resource
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from gpu_dra.core.analysis import schedlogs
from gpu_dra.core.analysis.schedlogs import parallel, records

from .test_logs import _full

ROOT = Path(__file__).resolve().parent.parent
UNABLE = ('I1201 10:00:00.000000       1 schedule_one.go:1050] "Unable to schedule pod; no fit; waiting" '
          'pod="ml/p{n}" err="0/3 nodes are available: 3 cannot allocate all claims."\n')
UNSCHEDULABLE = ('I1201 10:00:00.000000       1 dynamicresources.go:610] "pod unschedulable" pod="ml/p{n}" '
                 'reason="cannot allocate all claims"\n')


def _cli(*argv: str, memory: int, deadline: float) -> subprocess.CompletedProcess[str]:
    def capped() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (memory, memory))

    return subprocess.run([sys.executable, "-m", "gpu_dra.cli.main", *argv], cwd=ROOT, capture_output=True,
                          text=True, timeout=deadline, preexec_fn=capped)


def test_a_log_of_300_000_pods_is_read_in_500_mb(tmp_path: Path) -> None:
    """Each pod's record took 2-3 KB, so a log of many pods ran out of memory (300,000 pods: MemoryError, or a wait
    for ever when a worker's part could not be received). Now at most MAX_PODS are held: the report lists the last
    100,000 and says what it left out."""
    log = tmp_path / "scheduler.log"
    with log.open("w") as out:
        out.writelines(UNSCHEDULABLE.format(n=n) for n in range(300_000))
    result = _cli("logs", str(log), memory=500 << 20, deadline=600)
    assert (result.returncode, result.stderr) == (0, "")
    assert result.stdout.startswith("300000 DRA line(s) of 300000 read, 100000 pod(s)\n\npod ml/p200000\n")
    assert result.stdout.count("\npod ml/p") == 100_000 and "\npod ml/p299999\n" in result.stdout
    assert "\nnote: 200,000 DRA line(s) counted above are not listed" in result.stdout


def _cycles(seed: int, pods: int = 30, cycles: int = 600) -> str:
    """A scheduler's log of `pods` pods retried at random, some often, some rarely: allocator lines that name no
    pod, lines that name one, and lines before any pod is named."""
    rng = random.Random(seed)
    lines = ['I1201 10:00:00.000000       1 allocator.go:180] "Starting allocation" numClaims=1\n'] * rng.randint(0, 3)
    for n in range(cycles):
        pod = f"ml/p{min(int(rng.expovariate(0.15)), pods)}"
        header = f"I1201 10:{n // 60 % 60:02d}:{n % 60:02d}.000000       1 "
        if rng.random() < 0.8:
            lines.append(header + f'schedule_one.go:98] "Attempting to schedule pod" pod="{pod}"\n')
        if rng.random() < 0.5:
            lines.append(header + f'dynamicresources.go:420] "pod resource claims" pod="{pod}" '
                         f'resourceclaims=["{pod}-gpu"]\n')
        lines += [header + 'allocator.go:180] "Starting allocation" numClaims=1\n'] * rng.randint(0, 3)
        if rng.random() < 0.3:
            lines.append(header + f'allocator.go:250] "Done with allocation" success={rng.choice(["true", "false"])} '
                         "err=null\n")
        if rng.random() < 0.4:
            lines.append(UNABLE.format(n=pod.removeprefix("ml/p")).replace("10:00:00", header[6:14]))
    return "".join(lines)


@pytest.mark.parametrize("limit", [1, 2, 5, 1000])
def test_pods_are_dropped_as_one_pass_drops_them_however_the_file_is_cut(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, limit: int) -> None:
    """Which records last depends only on the changes of pod between a pod's lines, which each part counts on its
    own and the joining adds up (at the cuts too: a part's lines before it names a pod, a part's first pod the last
    one's): the parts give the one-pass report, drops and notes included."""
    monkeypatch.setattr(records, "MAX_PODS", limit)
    monkeypatch.setattr(parallel, "PARALLEL_BYTES", 0)
    path = tmp_path / "scheduler.log"
    for seed in range(4):
        text = _cycles(seed)
        path.write_text(text)
        one_pass = _full(schedlogs.scan(io.BytesIO(text.encode())))
        assert len(one_pass[3]) <= limit  # type: ignore[arg-type]
        assert bool(one_pass[5]) == (limit < 30)  # a note when some were dropped
        for workers in (2, 3, 5, 8):
            assert _full(schedlogs.scan_file(str(path), workers=workers)) == one_pass, (seed, workers)


def test_a_pod_seen_again_after_its_record_was_dropped_starts_anew(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(records, "MAX_PODS", 2)
    text = "".join(UNABLE.format(n=n) for n in (0, 0, 1, 2, 0))
    report = schedlogs.scan(io.BytesIO(text.encode()))
    assert {name: (log.count, [line.number for line in log.recent]) for name, log in report.pods.items()} == {
        "ml/p2": (1, [4]), "ml/p0": (1, [5])}
    assert report.kept == 5 and report.notes == [
        "3 DRA line(s) counted above are not listed: a pod's lines are dropped once 2 changes of pod have come "
        "after its last one, so that memory stays flat (a pod seen again starts anew); `--pod NAMESPACE/NAME` "
        "shows every line of one pod"]


def test_a_worker_that_dies_is_an_error_not_a_wait(tmp_path: Path) -> None:
    """A pool whose worker died (killed, out of memory) or whose result could not be received waited for ever."""
    log = tmp_path / "scheduler.log"
    log.write_text(UNABLE.format(n=0) * 1000)
    script = textwrap.dedent(f"""
        import os
        from gpu_dra.core.analysis import schedlogs
        from gpu_dra.core.analysis.schedlogs import parallel
        parallel.PARALLEL_BYTES = 0
        scan_part = parallel._scan_part
        parallel._scan_part = lambda path, start, *rest: os._exit(9) if start else scan_part(path, start, *rest)
        try:
            schedlogs.scan_file({str(log)!r}, workers=2)
        except schedlogs.WorkerLost as error:
            print("lost:", error)
        """)
    result = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert result.stdout.startswith("lost: a process reading part of the log ended before it was done"), result


def test_a_worker_that_dies_ends_the_command_with_a_message_not_a_traceback(tmp_path: Path) -> None:
    """`gpu-dra logs` names the file, says what happened and what reads with less memory: exit 2."""
    log = tmp_path / "scheduler.log"
    log.write_text(UNABLE.format(n=0) * 1000)
    script = textwrap.dedent("""
        import os, sys
        from gpu_dra.cli import main
        from gpu_dra.core.analysis.schedlogs import parallel
        parallel.PARALLEL_BYTES = 0
        parallel._cores = lambda: 2  # in parts, whatever cores the machine has
        scan_part = parallel._scan_part
        parallel._scan_part = lambda path, start, *rest: os._exit(9) if start else scan_part(path, start, *rest)
        sys.exit(main.main(["logs", sys.argv[1]]))
        """)
    result = subprocess.run([sys.executable, "-c", script, str(log)], cwd=ROOT, capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 2 and result.stdout == "", result
    assert result.stderr == (f"gpu-dra: {log}: reading it ran out of memory (or a process reading part of it was "
                             f"killed); `gpu-dra logs --pod NAME {log}` reads one pod's lines in one process and "
                             "keeps only those\n")

"""`gpu-dra logs`: kube-scheduler's DRA lines per pod, streamed in blocks with bounded memory."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from gpu_dra.core.analysis import schedlogs

from .test_cli import gpu_dra

KLOG = (Path(__file__).parent / "data" / "scheduler-klog.log").read_text()  # klog text, as kube-scheduler logs
JSON_LOG = "\n".join(json.dumps(r) for r in [
    {"ts": 1.0, "caller": "allocator/allocator.go:300", "msg": "CEL result", "v": 7,
     "device": "gpu-0", "claim": {"name": "p-gpu", "namespace": "inf"}, "selector": 0, "matches": False},
    {"ts": 1.1, "caller": "dynamicresources/dynamicresources.go:610", "msg": "pod unschedulable", "v": 5,
     "pod": {"name": "p", "namespace": "inf"}, "reason": "cannot allocate all claims"},
    {"ts": 1.2, "caller": "server.go:10", "msg": "unrelated", "v": 2},
])


def scan(text: str, **options: object) -> schedlogs.LogReport:
    return schedlogs.scan(io.BytesIO(text.encode()), **options)  # type: ignore[arg-type]


def test_logs_klog_text() -> None:
    report = scan(KLOG)
    assert report.scanned == 7 and report.kept == 5  # not the lease or the "Attempting" line
    assert list(report.pods) == ["ml/trainer-0"]  # allocator lines belong to the pod being scheduled
    pod = report.pods["ml/trainer-0"]
    assert [line.number for line in pod.recent] == [2, 3, 4, 5, 6]
    assert (pod.reason or "").startswith("0/3 nodes are available: 3 cannot allocate")
    assert pod.claims == {"ml/trainer-0-gpu"}
    assert "--v=7" in (report.verbosity_hint() or "")


def test_logs_json_with_per_device_lines() -> None:
    report = scan(JSON_LOG)
    lines = [line for pod in report.pods.values() for line in pod.recent]
    assert [line.message for line in lines] == ["CEL result", "pod unschedulable"]
    assert report.pods["(no pod named)"].claims == {"inf/p-gpu"}
    assert report.verbosity_hint() is None


def test_logs_success_and_claim_lists() -> None:
    report = scan('I1129 10:00:01.000000 1 dynamicresources.go:420] "pod resource claims" pod="ml/a" '
                  'resourceclaims=["ml/a-gpu"]\n'
                  'I1129 10:00:01.300000 1 allocator.go:250] "Done with allocation" success=true err=<nil>\n')
    pod = report.pods["ml/a"]
    assert pod.claims == {"ml/a-gpu"} and pod.reason == "allocated"


@pytest.mark.parametrize("block_size", [1, 7, 64, 1 << 20])
def test_blocks_of_any_size_give_the_same_report(block_size: int) -> None:
    """Lines cut across blocks, and the pod named in one block, still belong together."""
    text = KLOG * 3
    report = schedlogs.scan(io.BytesIO(text.encode()), block_size=block_size)
    assert report.scanned == 21 and report.kept == 15
    assert [line.number for line in report.pods["ml/trainer-0"].recent] == [
        n + 7 * k for k in range(3) for n in (2, 3, 4, 5, 6)]


def test_memory_is_bounded_per_pod() -> None:
    """Only the last TAIL lines of a pod are held, however long the log; the count says how many there were."""
    cycle = ('I1129 10:00:01.000000 1 schedule_one.go:98] "Attempting to schedule pod" pod="ml/p"\n'
             'I1129 10:00:01.200000 1 allocator.go:180] "Starting allocation" numClaims=1\n')
    report = scan(cycle * 1000)
    pod = report.pods["ml/p"]
    assert pod.count == 1000 and len(pod.recent) == schedlogs.TAIL
    assert pod.recent[-1].number == 2000


def test_non_dra_lines_that_share_a_word_are_not_kept() -> None:
    report = scan('I1129 10:00:01.000000 1 leaderelection.go:1] "claimed lease" name="kube-scheduler"\n'
                  'I1129 10:00:01.000000 1 server.go:1] "Parcel delivered"\n')
    assert report.kept == 0 and report.scanned == 2


def test_logs_cli(tmp_path: Path) -> None:
    path = tmp_path / "scheduler.log"
    path.write_text(KLOG)
    result = gpu_dra("logs", str(path))
    assert result.returncode == 0
    assert "pod ml/trainer-0" in result.stdout and "=> 0/3 nodes are available" in result.stdout
    assert "--vmodule=allocator=7,dynamicresources=7" in result.stdout


def test_logs_cli_one_pod_shows_every_line(tmp_path: Path) -> None:
    cycle = ('I1129 10:00:01.000000 1 schedule_one.go:98] "Attempting to schedule pod" pod="ml/p{n}"\n'
             'I1129 10:00:01.200000 1 allocator.go:180] "Starting allocation" numClaims=1\n')
    path = tmp_path / "scheduler.log"
    path.write_text("".join(cycle.format(n=n % 2) for n in range(100)))
    summary = gpu_dra("logs", str(path)).stdout
    assert "... 30 earlier line(s); `--pod ml/p0` shows all 50" in summary
    one = gpu_dra("logs", str(path), "--pod", "ml/p0").stdout
    assert one.count("Starting allocation") == 50 and "ml/p1" not in one


def test_a_character_that_lower_cases_to_two_keeps_the_lines_after_it() -> None:
    report = scan("I1129 10:00:01.000000 1 server.go:1] \"" + "\u0130" * 400 + "\"\n" + KLOG)
    assert report.kept == 5


def test_kept_lines_hold_only_what_is_shown() -> None:
    """Memory per pod is its last lines' shown text, not the raw line and its parsed fields."""
    (line,) = list(scan(KLOG).pods["ml/trainer-0"].recent)[:1]
    assert line == schedlogs.KeptLine(2, "dynamicresources.go:420", "pod resource claims",
                                      'resourceclaims=["ml/trainer-0-gpu"]')


def _summary(report: schedlogs.LogReport) -> tuple[object, ...]:
    return (report.scanned, report.kept, report.per_device_lines,
            [(p.pod, p.count, sorted(p.claims), p.reason, list(p.recent)) for p in report.pods.values()])


MIXED = "".join(
    KLOG.replace("trainer-0", f"trainer-{n % 7}") + JSON_LOG + "\n" +
    'I1129 10:00:02.000000 1 allocator.go:180] "Starting allocation" numClaims=1\n' * (n % 3)
    for n in range(60))


@pytest.mark.parametrize("workers", [2, 3, 5, 8])
def test_a_file_read_in_parallel_parts_gives_the_sequential_report(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, workers: int) -> None:
    """Parts cut anywhere: line numbers run on, and a part's lines before it names a pod (allocator lines) go to
    the pod the part before it was scheduling, as when the file is read in one go."""
    path = tmp_path / "scheduler.log"
    path.write_text(MIXED)
    monkeypatch.setattr(schedlogs, "PARALLEL_BYTES", 0)
    assert _summary(schedlogs.scan_file(str(path), workers=workers)) == _summary(scan(MIXED))
    assert _summary(schedlogs.scan_file(str(path), workers=1)) == _summary(scan(MIXED))


def test_parts_start_at_line_starts(tmp_path: Path) -> None:
    path = tmp_path / "scheduler.log"
    path.write_text(MIXED)
    data = path.read_bytes()
    parts = schedlogs._parts(str(path), len(data), 5)
    assert parts[0][0] == 0 and parts[-1][1] == len(data) and len(parts) == 5
    assert all(data[start - 1:start] == b"\n" for start, _ in parts[1:])
    assert all(end == start for (_, end), (start, _) in zip(parts, parts[1:], strict=False))


def test_remembered_readings_do_not_change_the_report(monkeypatch: pytest.MonkeyPatch) -> None:
    """Repeated lines are looked up, not parsed again; forgetting every reading gives the same report."""
    remembered = _summary(scan(MIXED))
    monkeypatch.setattr(schedlogs, "CACHED_TEXTS", 1)
    assert _summary(scan(MIXED)) == remembered


def test_bad_bytes_are_replaced_not_fatal(tmp_path: Path) -> None:
    path = tmp_path / "scheduler.log"
    path.write_bytes(b"\xff\xfe garbage\n" + KLOG.encode())
    result = gpu_dra("logs", str(path))
    assert result.returncode == 0 and "pod ml/trainer-0" in result.stdout


def test_logs_from_stdin() -> None:
    result = gpu_dra("logs", "-", input=KLOG)
    assert result.returncode == 0 and "5 DRA line(s) of 7 read" in result.stdout

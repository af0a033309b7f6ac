"""`gpu-dra logs`: kube-scheduler's DRA lines per pod, streamed in blocks with bounded memory."""

from __future__ import annotations

import importlib
import io
import json
import os
import pkgutil
import subprocess
import sys
from pathlib import Path

import pytest

from gpu_dra.core.analysis import schedlogs
from gpu_dra.core.analysis.schedlogs import blocks, parallel

from .conftest import ROOT
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


def test_a_pod_not_in_the_log_is_said_and_exits_1(tmp_path: Path) -> None:
    """`--pod` with a name the log does not have (a team's name for its namespace, a typo) says so, like grep's 1."""
    result = gpu_dra("logs", str(ROOT / "tests" / "data" / "scheduler-klog.log"), "--pod", "training/trainer-0")
    assert result.returncode == 1
    assert "note: no DRA line of pod training/trainer-0 in " in result.stdout
    assert "V(7)" not in result.stdout  # no line of the pod: nothing to say of the log's verbosity
    assert gpu_dra("logs", str(ROOT / "tests" / "data" / "scheduler-klog.log"), "--pod", "ml/trainer-0").returncode == 0


def test_an_empty_log_is_said(tmp_path: Path) -> None:
    (tmp_path / "empty.log").write_text("")
    result = gpu_dra("logs", str(tmp_path / "empty.log"))
    assert result.returncode == 0
    assert "note: the log is empty: nothing was read" in result.stdout
    assert "--vmodule" not in result.stdout  # no verbosity advice for a log that is not there


def test_one_pod_piped_into_head_ends_quietly(tmp_path: Path) -> None:
    """`gpu-dra logs --pod P FILE | head`: the reader goes away while lines are still printed as they are read; that
    is the end of the run (exit 0, nothing said), not "cannot read" the log."""
    path = tmp_path / "scheduler.log"
    path.write_text('I1129 10:00:01.000000 1 schedule_one.go:98] "Attempting to schedule pod" pod="ml/p0"\n'
                    + 'I1129 10:00:01.200000 1 allocator.go:180] "Starting allocation" numClaims=1\n' * 200_000)
    with subprocess.Popen([sys.executable, "-m", "gpu_dra.cli.main", "logs", "--pod", "ml/p0", str(path)], cwd=ROOT,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, env={**os.environ, "PYTHONPATH": str(ROOT)},
                          ) as run:
        assert run.stdout is not None and run.stderr is not None
        assert run.stdout.readline() == b"pod ml/p0\n"
        run.stdout.readline()
        run.stdout.close()
        errors = run.stderr.read()
    assert (run.returncode, errors) == (0, b"")


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
    monkeypatch.setattr(parallel, "PARALLEL_BYTES", 0)
    assert _summary(schedlogs.scan_file(str(path), workers=workers)) == _summary(scan(MIXED))
    assert _summary(schedlogs.scan_file(str(path), workers=1)) == _summary(scan(MIXED))


def test_parts_start_at_line_starts(tmp_path: Path) -> None:
    path = tmp_path / "scheduler.log"
    path.write_text(MIXED)
    data = path.read_bytes()
    parts = parallel._parts(str(path), len(data), 5)
    assert parts[0][0] == 0 and parts[-1][1] == len(data) and len(parts) == 5
    assert all(data[start - 1:start] == b"\n" for start, _ in parts[1:])
    assert all(end == start for (_, end), (start, _) in zip(parts, parts[1:], strict=False))


def _remember_one_text(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every cache of the reader holds one text: CACHED_TEXTS in each module of the package that reads it."""
    for found in pkgutil.iter_modules(schedlogs.__path__):
        module = importlib.import_module(f"{schedlogs.__name__}.{found.name}")
        if hasattr(module, "CACHED_TEXTS"):
            monkeypatch.setattr(module, "CACHED_TEXTS", 1)


def test_remembered_readings_do_not_change_the_report(monkeypatch: pytest.MonkeyPatch) -> None:
    """Repeated lines are looked up, not parsed again; forgetting every reading gives the same report."""
    remembered = _summary(scan(MIXED))
    _remember_one_text(monkeypatch)
    assert _summary(scan(MIXED)) == remembered


def test_bad_bytes_are_replaced_not_fatal(tmp_path: Path) -> None:
    path = tmp_path / "scheduler.log"
    path.write_bytes(b"\xff\xfe garbage\n" + KLOG.encode())
    result = gpu_dra("logs", str(path))
    assert result.returncode == 0 and "pod ml/trainer-0" in result.stdout


def test_logs_from_stdin() -> None:
    result = gpu_dra("logs", "-", input=KLOG)
    assert result.returncode == 0 and "5 DRA line(s) of 7 read" in result.stdout


# Real excerpts (tests/data/logs/README.md gives each one's source): what a user reads off the report. Per file the
# numbers of the lines kept as DRA lines (every other line is ignored) and per pod its claims and final reason.
LOGS = Path(__file__).parent / "data" / "logs"
PANIC = "panic: runtime error: invalid memory address or nil pointer dereference"
RESERVE = 'running Reserve plugin "DynamicResources": '
EXCERPTS: dict[str, tuple[list[int], dict[str, tuple[set[str], str | None]]]] = {
    "scheduler-klog_panic-allocation-mode-all_k8s-138882.log": (
        [1], {"default/dra-allocation-mode-all": (set(), PANIC)}),
    "scheduler-klog_panic-unstructured_k8s-86908.log": ([1], {"(no pod named)": (set(), PANIC)}),
    "scheduler-klog_allocator-incubating-v6_k8s-135755.log": ([1, 2], {"dra-8841/tester-3": (set(), None)}),
    "scheduler-klog_preenqueue-status_k8s-125223.log": ([1], {"init/test-drav6c2h": (
        {"init/test-drav6c2h-resource-64bqw"}, 'could not find ResourceClaim "init/test-drav6c2h-resource-64bqw"')}),
    "scheduler-klog_plugin-failed_k8s-117813.log": ([1, 2], {
        "test/test-draq58l2": (set(), "waiting for resource driver to allocate resource"),
        "test/test-draq58": (set(), RESERVE + "waiting for resource driver to allocate resource")}),  # cut short
    "scheduler-cri_deallocation_k8s-111023.log": ([1], {"dra-7746/tester-1": ({"dra-7746/external-claim"}, None)}),
    "ktesting_cel-runtime-error_k8s-135184.log": ([3, 4, 5, 6, 7, 8, 9, 10, 11], {
        "(no pod named)": (set(), None), "default/my-pod": ({"default/my-pod-my-resource"}, None)}),
    "unit-klog_correct-run_k8s-135184.log": ([], {}),
    "ktesting_plugin-failed-reserve_k8s-120334.log": ([1, 2], {"test/test-dragxd5c": (set(), RESERVE + (
        'Operation cannot be fulfilled on podschedulingcontexts.resource.k8s.io "test-dragxd5c": the object has '
        "been modified; please apply your changes to the latest version and try again"))}),
    "ktesting_scheduler-logger-prefix_k8s-136269.log": ([1, 2, 3, 5], {
        "testdra-all-usesallresources-kqjpj/my-pod-0091": ({"testdra-all-usesallresources-kqjpj/claim-0091"}, None)}),
    "ktesting-klog_logger-go_k8s-117844.log": ([1], {
        "init/test-dra9gjsz": (set(), RESERVE + "waiting for resource driver to allocate resource")}),
    "kubelet-journald_prepare-failed_k8s-124090.log": ([1], {"default/rdma-rc-6c5596fdb8-mf95q": (
        {"default/rdma-demo"}, "NodePrepareResources failed for claim default/rdma-demo: error preparing devices "
        "for claim 71d5aeee-5f6d-47aa-a3d6-98b7fcf3c005: unable to create CDI spec file for claim: failed to set "
        "permissions on spec file: chmod /var/run/cdik8s.netresources.spidernet.io-claim_71d5aeee-5f6d-47aa-a3d6-"
        "98b7fcf3c005.yaml: no such file or directory")}),
}
# the real lines that the constructed CloudWatch files wrap, in their order
WRAPPED = ["scheduler-klog_preenqueue-status_k8s-125223.log", "scheduler-klog_allocator-incubating-v6_k8s-135755.log",
           "scheduler-klog_panic-allocation-mode-all_k8s-138882.log"]


def _full(report: schedlogs.LogReport) -> tuple[object, ...]:
    return (*_summary(report), report.panics, report.notes)


def test_every_excerpt_is_in_the_readme() -> None:
    readme = (LOGS / "README.md").read_text()
    files = sorted(path.name for path in LOGS.iterdir() if path.name != "README.md")
    assert files == sorted([*EXCERPTS, *(name for name in files if "_constructed." in name)])
    assert all(f"`{name}`" in readme for name in files)
    assert len(EXCERPTS) >= 8


@pytest.mark.parametrize("name", sorted(EXCERPTS))
def test_a_real_excerpt_reads_as_a_user_needs(name: str) -> None:
    kept, pods = EXCERPTS[name]
    text = (LOGS / name).read_text()
    report = schedlogs.scan_file(str(LOGS / name))
    assert report.scanned == text.count("\n") and report.kept == len(kept)
    assert sorted(line.number for pod in report.pods.values() for line in pod.recent) == kept
    assert {pod.pod: (pod.claims, pod.reason) for pod in report.pods.values()} == pods


def test_ktesting_lines_lose_go_tests_prefix_and_the_logger_name() -> None:
    """The caller is the file:line before the header; `scheduler: ` and `Reserve/DynamicResources: ` are logger
    names, not the message; the message is unquoted and ends where key=value pairs start."""
    (pod,) = schedlogs.scan_file(str(LOGS / "ktesting_scheduler-logger-prefix_k8s-136269.log")).pods.values()
    assert [(line.caller, line.message) for line in pod.recent] == [
        ("dynamicresources.go:1150", "Claim stored in assume cache"), ("dra_manager.go:198", "Removed in-flight claim"),
        ("dynamicresources.go:1157", "Removed claim from in-flight claims"),
        ("allocateddevices.go:189", "Observed device allocation")]
    assert pod.recent[2].detail.endswith("allocation=<...>")  # klog's multi-line value, on the lines below
    (pod,) = schedlogs.scan_file(str(LOGS / "ktesting_plugin-failed-reserve_k8s-120334.log")).pods.values()
    assert [(line.caller, line.message) for line in pod.recent] == [
        ("framework.go:1280", "Plugin failed"), ("schedule_one.go:1001", "Error scheduling pod; retrying")]


def test_a_panic_is_the_pods_reason_and_shows_in_the_summary() -> None:
    named = gpu_dra("logs", str(LOGS / "scheduler-klog_panic-allocation-mode-all_k8s-138882.log"))
    assert named.returncode == 0 and "1 DRA line(s) of 10 read, 1 pod(s), 1 panic(s)" in named.stdout
    assert "pod default/dra-allocation-mode-all\n       1 panic.go:336" in named.stdout
    assert f"  => {PANIC}\n" in named.stdout
    unnamed = gpu_dra("logs", str(LOGS / "scheduler-klog_panic-unstructured_k8s-86908.log"))
    assert "1 pod(s), 1 panic(s)" in unnamed.stdout and "pod (no pod named)\n" in unnamed.stdout
    assert f"  => {PANIC}\n" in unnamed.stdout
    assert "goroutine" not in unnamed.stdout  # the stack's lines are not log lines


def test_cloudwatch_exports_and_aws_logs_tail_report_what_the_lines_they_wrap_report() -> None:
    plain = "".join((LOGS / name).read_text() for name in WRAPPED)
    expected = _full(scan(plain))
    assert _full(schedlogs.scan_file(str(LOGS / "eks-cloudwatch_filter-log-events_constructed.json"))) == expected
    assert _full(schedlogs.scan_file(str(LOGS / "eks-cloudwatch_logs-tail_constructed.log"))) == expected
    text = schedlogs.scan_file(str(LOGS / "eks-cloudwatch_filter-log-events-text_constructed.txt"))
    assert text.scanned == plain.count("\n") + 1  # and a SEARCHEDLOGSTREAMS row
    assert _full(text)[1:] == expected[1:]


def _events(lines: list[str]) -> list[dict[str, object]]:
    return [{"logStreamName": "kube-scheduler-0123456789abcdef0123456789abcdef", "timestamp": 1733047201000 + n,
             "message": line, "ingestionTime": 1733047202000 + n, "eventId": f"{n:056d}"}
            for n, line in enumerate(lines)]


def _wrapped(lines: list[str]) -> dict[str, str]:
    """`lines` as the AWS CLI prints CloudWatch events: filter-log-events --output json (one document, several
    pages, on one line, a bare list of events), --output text, and aws logs tail --format detailed and short."""
    events = _events(lines)
    half = len(events) // 2
    stream = events[0]["logStreamName"] if events else ""
    return {
        "json": json.dumps({"events": events, "searchedLogStreams": []}, indent=4) + "\n",
        "json pages": (json.dumps({"events": events[:half], "nextToken": "f/3852"}, indent=4) + "\n"
                       + json.dumps({"events": events[half:]}, indent=4) + "\n"),
        "json one line": json.dumps({"events": events}, separators=(",", ":")),
        "json list": json.dumps(events, indent=2),
        "text": "".join(f"EVENTS\t{e['eventId']}\t{e['ingestionTime']}\t{stream}\t{e['message']}\t{e['timestamp']}\n"
                        for e in events),
        "tail": "".join(f"2024-12-01T10:00:01.{n:03d}000+00:00 {stream} {line}".rstrip() + "\n"
                        for n, line in enumerate(lines)),
        "tail short": "".join(f"2024-12-01T10:00:01 {line}".rstrip() + "\n" for line in lines),
    }


@pytest.mark.parametrize("name", sorted(EXCERPTS))
def test_every_excerpt_read_from_cloudwatch_reports_what_its_lines_report(name: str) -> None:
    lines = [line for line in (LOGS / name).read_text().splitlines() if line]  # an event's message is not empty
    expected = _full(scan("".join(line + "\n" for line in lines)))
    for shape, text in _wrapped(lines).items():
        assert (shape, _full(scan(text))) == (shape, expected)


NEW_FORMATS = "".join((LOGS / name).read_text() for name in sorted(EXCERPTS)) * 40


@pytest.mark.parametrize("shape", ["lines", "json", "tail"])
@pytest.mark.parametrize("workers", [2, 3, 5])
def test_the_new_formats_read_in_parallel_parts_give_the_one_pass_report(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, shape: str, workers: int) -> None:
    text = NEW_FORMATS if shape == "lines" else _wrapped([line for line in NEW_FORMATS.splitlines() if line])[shape]
    path = tmp_path / "scheduler.log"
    path.write_text(text)
    monkeypatch.setattr(parallel, "PARALLEL_BYTES", 0)
    assert len(parallel._parts(str(path), len(text), workers)) == workers
    assert _full(schedlogs.scan_file(str(path), workers=workers)) == _full(scan(text))


def test_an_export_on_one_line_is_one_part(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    text = _wrapped([line for line in NEW_FORMATS.splitlines() if line])["json one line"]
    path = tmp_path / "events.json"
    path.write_text(text)
    monkeypatch.setattr(parallel, "PARALLEL_BYTES", 0)
    assert parallel._parts(str(path), len(text), 4) == [(0, len(text))]
    assert _full(schedlogs.scan_file(str(path), workers=4)) == _full(scan(text))


@pytest.mark.parametrize("block_size", [1, 7, 64, 1 << 20])
def test_an_export_cut_in_blocks_of_any_size_gives_the_same_report(block_size: int) -> None:
    """Messages, keys and escapes cut across blocks are read whole."""
    for shape in ("json", "json one line"):
        text = _wrapped(KLOG.splitlines())[shape]
        assert _full(scan(text, block_size=block_size)) == _full(scan(KLOG)), shape


def test_a_truncated_export_is_read_up_to_the_cut_and_said_so(tmp_path: Path) -> None:
    data = (LOGS / "eks-cloudwatch_filter-log-events_constructed.json").read_bytes()
    path = tmp_path / "events.json"
    path.write_bytes(data[:data.index(b"Observed a panic")])  # as a download cut short leaves it
    result = gpu_dra("logs", str(path))
    assert result.returncode == 0 and "Traceback" not in result.stderr
    assert "3 DRA line(s) of 3 read, 2 pod(s)\n" in result.stdout and "pod dra-8841/tester-3" in result.stdout
    assert f"note: {schedlogs.TRUNCATED_EXPORT}" in result.stdout
    assert schedlogs.scan_file(str(LOGS / "eks-cloudwatch_filter-log-events_constructed.json")).notes == []


def test_a_truncated_export_read_in_parallel_parts_is_said_so_once(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    text = _wrapped([line for line in NEW_FORMATS.splitlines() if line])["json"]
    path = tmp_path / "events.json"
    path.write_text(text[:text.rindex("Observed a panic")])
    monkeypatch.setattr(parallel, "PARALLEL_BYTES", 0)
    report = schedlogs.scan_file(str(path), workers=3)
    assert report.notes == [schedlogs.TRUNCATED_EXPORT]
    assert _full(report) == _full(scan(path.read_text()))


def test_a_message_longer_than_any_line_is_skipped_not_held_whole(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(blocks, "_LONGEST_LINE", 1000)  # longer than any line of KLOG
    text = _wrapped(KLOG.splitlines())["json"]
    cut = text.index('"message": ') + len('"message": ')
    report = scan(text[:cut] + '"' + "x" * 100_000 + text[cut:], block_size=64)
    assert report.notes == [schedlogs.LONG_MESSAGE]
    assert report.kept == 5  # the events after it are read (the first, a non-DRA line, is the one lost)


def test_quoted_messages_and_values_read_as_written() -> None:
    """klog quotes messages and values Go's way (strconv.Quote); the report shows them unquoted, on one line
    (a constructed line)."""
    (line,) = scan('E1201 10:00:00.000000       1 schedule_one.go:1] "Plugin \\"DynamicResources\\" failed" '
                   'err="claim \\"ml/a\\" at C:\\\\ttl\\nnext" pod="ml/a"\n').pods["ml/a"].recent
    assert line.message == 'Plugin "DynamicResources" failed'
    assert line.detail == 'err=claim "ml/a" at C:\\ttl\\nnext'


def test_bad_bytes_and_bad_escapes_in_an_export_are_read_around(tmp_path: Path) -> None:
    data = (LOGS / "eks-cloudwatch_filter-log-events_constructed.json").read_bytes()
    path = tmp_path / "events.json"
    path.write_bytes(data.replace(b"Gathered pool", b"Gathered \xff\xfe pool").replace(b"=1\"", b"=1\\q\"")
                     .replace(b'"events": [', b'"events": [\n        {"message": 12},', 1))
    result = gpu_dra("logs", str(path))
    assert result.returncode == 0 and "Traceback" not in result.stderr
    bad, good = schedlogs.scan_file(str(path)), schedlogs.scan_file(str(LOGS / WRAPPED[1]))
    tester = bad.pods["dra-8841/tester-3"]
    assert [line.message for line in tester.recent] == ["Gathered \ufffd\ufffd pool information",
                                                        "Gathered information about devices"]
    assert tester.recent[1].detail.endswith("minDevicesToBeAllocated=1\\q")
    assert (bad.kept, bad.panics, list(bad.pods)) == (4, 1, ["init/test-drav6c2h", *good.pods,
                                                             "default/dra-allocation-mode-all"])


def test_an_export_is_told_from_a_log_by_its_first_bytes() -> None:
    assert not schedlogs.is_cloudwatch_export(JSON_LOG.encode())  # klog JSON: a record per line
    assert not schedlogs.is_cloudwatch_export(KLOG.encode())
    for shape in ("json", "json pages", "json one line", "json list"):
        assert schedlogs.is_cloudwatch_export(_wrapped(KLOG.splitlines())[shape].encode()[:4096]), shape


def test_an_export_on_stdin_reads_as_the_file() -> None:
    path = LOGS / "eks-cloudwatch_filter-log-events_constructed.json"
    from_file = gpu_dra("logs", str(path))
    assert "1 panic(s)" in from_file.stdout
    assert gpu_dra("logs", "-", input=path.read_text()).stdout == from_file.stdout


# Lines as the DRA code writes them, constructed from its source (the messages and keys at the cited lines), for the
# callers no real excerpt here shows.
SOURCE_LINES = [
    # kubernetes/kubernetes pkg/kubelet/cm/dra/manager.go, reconcileLoop: logger named "dra-manager"
    'I1201 10:00:00.000000    2345 manager.go:184] "Unpreparing pod resources in reconcile loop failed, will retry" '
    'logger="dra-manager" podUID="6f1c2d1e-1b7a-4a53-9a5b-0c3e1d2f4a5b" err="context deadline exceeded"',
    # kubernetes/dynamic-resource-allocation@v0.35.0:resourceslice/tracker/tracker.go:443
    'I1201 10:00:00.000000       1 tracker.go:443] "DeviceTaintRule added" deviceTaintRule="gpu-maintenance"',
    # kubernetes/dynamic-resource-allocation@v0.35.0:structured/internal/experimental/constraint.go:61, in ktesting
    '    constraint.go:61: I1201 10:00:00.000000] distinctAttributeConstraint: First attribute added '
    'distinctAttribute="gpu.nvidia.com/uuid"',
]


@pytest.mark.parametrize("line", SOURCE_LINES)
def test_lines_of_the_dra_code_that_name_no_claim_are_kept(line: str) -> None:
    assert scan(line + "\n").kept == 1


def test_a_volume_claim_is_not_a_dra_claim() -> None:
    """The framework reports every plugin's failures: a PersistentVolumeClaim's is no DRA line (constructed from
    the framework's "Plugin failed" message)."""
    line = ('E1201 10:00:00.000000       1 framework.go:1280] "Plugin failed" err="persistentvolumeclaim \\"data\\" '
            'not found" plugin="VolumeBinding" pod="web/db-0"\n')
    assert scan(line).kept == 0
    assert scan(line.replace("VolumeBinding", "DynamicResources")).kept == 1


def test_remembered_readings_do_not_change_the_report_of_the_new_formats(monkeypatch: pytest.MonkeyPatch) -> None:
    texts = [NEW_FORMATS, _wrapped(NEW_FORMATS.splitlines())["tail"], _wrapped(NEW_FORMATS.splitlines())["text"]]
    remembered = [_full(scan(text)) for text in texts]
    _remember_one_text(monkeypatch)
    assert [_full(scan(text)) for text in texts] == remembered


def test_a_line_with_no_end_is_cut_not_held_whole(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(blocks, "_LONGEST_LINE", 1000)  # longer than any line of KLOG
    cut = list(blocks._line_blocks(blocks._chunks(io.BytesIO(b"x" * 100_000 + b"\n" + KLOG.encode()), 64)))
    assert max(len(block) for block in cut) <= 1000 + 64 + 1
    assert b"".join(cut).endswith(KLOG.encode())


def test_logs_help_names_the_formats_it_reads() -> None:
    result = gpu_dra("logs", "--help")
    assert "aws logs tail /aws/eks/prod/cluster --log-stream-name-prefix kube-scheduler --since 1h | gpu-dra logs -" \
        in result.stdout
    flat = " ".join(result.stdout.split())
    assert "ktesting" in flat and "filter-log-events" in flat and "--output json or text" in flat


def test_a_multi_line_claim_value_is_no_claim() -> None:
    """klog writes a multi-line value as `claim=<` and the value on the lines after: `<` names no claim."""
    report = scan('I1129 10:00:01.000000       1 dynamicresources.go:700] "Claim" pod="ml/b" claim=<\n'
                  '    apiVersion: resource.k8s.io/v1\n'
                  ' >\n')
    assert report.pods["ml/b"].claims == set()

"""kube-scheduler log lines about DRA, grouped per pod and claim, with the verbosity they need.

Reads klog text (`I1129 10:00:00.000000 1 allocator.go:123] "Starting allocation" numClaims=1`) and JSON
(`{"ts":..., "caller":"allocator.go:123", "msg":"...", "v":5, "pod":{"name":..,"namespace":..}}`). Which messages
exist at which verbosity (kubernetes/kubernetes `pkg/scheduler/framework/plugins/dynamicresources`,
kubernetes/dynamic-resource-allocation `structured/`): pod-level outcomes at V(5), allocator progress at
V(5)/V(6), per-device reasons ("CEL result", "Device not selectable") only at V(7).

Scheduler logs run to gigabytes, and most of their lines are not about DRA. The text is read in large blocks;
`str.find` over each block finds the lines that can be DRA lines at C speed, and only those are parsed; a line whose
text (without its klog header) was seen before is looked up, not parsed again, since a Pending pod is retried and
logs the same lines each time. Memory does not grow with the log but with its pods (per pod a count, its claims,
its final reason and the text of its last TAIL lines) and the CACHED_TEXTS remembered readings. A large file is
read in parts by one process per core (scan_file), joined in order.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import re
import signal
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import IO, NamedTuple

_DRA_SOURCES = ("dynamicresources", "allocator", "resourceclaim", "structured")
_DRA_WORDS = ("claim", "ResourceClaim", "allocat", "device class", "DeviceClass", "CEL", "resource slice",
              "ResourceSlice")
PER_DEVICE_MESSAGES = ("CEL result", "Device not selectable", "Device in use", "Device not usable",
                       "Constraint not satisfied")
OUTCOME_MESSAGES = ("pod unschedulable", "dynamic resource plugin failed", "cannot allocate all claims",
                    "timed out trying to allocate devices", "Done with allocation")
TAIL = 20  # lines kept per pod for the report; --pod shows every line of one pod
BLOCK = 8 << 20
CACHED_TEXTS = 20_000  # distinct line texts whose reading is remembered (a few MB at most)

# A line is a candidate when it holds any of these fragments: a superset of what _is_dra decides exactly (a DRA
# source in the caller, or schedule_one with a DRA word), found with str.find over whole blocks, about 20 times
# faster than Python's regular expressions at this. Fragments, not words, so that no lower-cased copy of the block
# is needed: "laim" is in claim, Claim and ResourceClaim; "llocat" in allocator and Allocation; "lass" in
# device class and DeviceClass; "lice" in resource slice and ResourceSlice. Callers are Go file names, lower case.
_CANDIDATE_FRAGMENTS = ("laim", "llocat", "dynamicresources", "structured", "lass", "lice", "CEL")

# klog: header, caller, then a quoted message and key=value pairs (or an unquoted message).
_KLOG = re.compile(r'[IWEF]\d{4} [\d:.]+\s+\d+ ([\w./-]+:\d+)\] (?:"((?:[^"\\]++|\\.)*+)"\s*(.*)|(.*))')
_KV = re.compile(r'(\w[\w.]*)=(?:"((?:[^"\\]++|\\.)*+)"|(\S+))')
_POD_KV = re.compile(r'(?:^|\s)pod="?([^"\s]+)')


@dataclass
class LogLine:
    number: int
    caller: str
    message: str
    fields: dict[str, str]
    verbosity: int | None
    raw: str
    pod: str = ""  # the pod the line names, or the pod being scheduled when it was logged

    @property
    def claims(self) -> list[str]:
        found = []
        for key in ("claim", "resourceClaim", "claims", "resourceclaims"):
            value = self.fields.get(key)
            if value:
                found += re.findall(r"[\w.-]+/[\w.-]+", value) or [value.strip('"')]
        return found

    @property
    def outcome(self) -> str | None:
        """What this line says of the pod's fate, if anything: the last such line is the final reason."""
        if self.message == "Done with allocation" and self.fields.get("success") == "true":
            return "allocated"
        reason = self.fields.get("reason") or self.fields.get("err")
        if reason in ("<nil>", "null", "nil"):
            reason = None
        if reason or any(m in self.message for m in OUTCOME_MESSAGES):
            return (reason or self.message).strip('"')
        return None


class KeptLine(NamedTuple):
    """What the report shows of a line: its number, caller, message and key=value details (the pod's aside)."""

    number: int
    caller: str
    message: str
    detail: str


class _Reading(NamedTuple):
    """What a line's text says, whatever its number and timestamp. A scheduler retries a Pending pod every few
    seconds and logs the same lines each time, so most DRA lines of a long log are read once and then looked up."""

    dra: bool
    pod: str
    claims: tuple[str, ...]
    outcome: str | None
    per_device: bool
    caller: str
    message: str
    detail: str

    @classmethod
    def of(cls, text: str) -> _Reading | None:
        line = parse_line(0, text)
        if line is None:
            return None
        message = line.message
        return cls(_is_dra(line), line.pod, tuple(line.claims), line.outcome,
                   any(m in message for m in PER_DEVICE_MESSAGES), line.caller, message,
                   " ".join(f"{k}={v}" for k, v in line.fields.items() if k != "pod"))


@dataclass
class PodLog:
    """One pod's DRA lines: how many, the claims named, the final reason and the last TAIL lines, as shown."""

    pod: str
    count: int = 0
    claims: set[str] = field(default_factory=set)
    reason: str | None = None
    recent: deque[KeptLine] = field(default_factory=lambda: deque(maxlen=TAIL))

    def add(self, number: int, reading: _Reading) -> KeptLine:
        self.count += 1
        self.claims.update(reading.claims)
        self.reason = reading.outcome or self.reason
        kept = KeptLine(number, reading.caller, reading.message, reading.detail)
        self.recent.append(kept)
        return kept


@dataclass
class LogReport:
    pods: dict[str, PodLog] = field(default_factory=dict)
    scanned: int = 0  # lines read
    kept: int = 0  # DRA lines among them
    per_device_lines: bool = False

    def verbosity_hint(self) -> str | None:
        if self.per_device_lines:
            return None
        return ("no per-device reasons in this log: they are logged only at V(7). Run kube-scheduler with --v=7, "
                "or just the DRA code paths with --vmodule=allocator=7,dynamicresources=7 (on EKS the control "
                "plane's verbosity is fixed: use `gpu-dra explain` instead)")


def _parse_json(number: int, text: str) -> LogLine | None:
    try:
        record = json.loads(text)
    except (ValueError, RecursionError):
        return None
    if not isinstance(record, dict) or "msg" not in record:
        return None
    fields = {}
    for key, value in record.items():
        if key in ("msg", "caller", "v", "ts"):
            continue
        if isinstance(value, dict) and {"name", "namespace"} <= set(value):
            fields[key] = f"{value['namespace']}/{value['name']}"
        else:
            fields[key] = value if isinstance(value, str) else json.dumps(value)
    verbosity = record.get("v")
    return LogLine(number, str(record.get("caller", "")), str(record["msg"]), fields,
                   int(verbosity) if isinstance(verbosity, int) else None, text, _pod(fields))


def _parse_klog(number: int, text: str) -> LogLine | None:
    match = _KLOG.fullmatch(text)
    if not match:
        return None
    caller, quoted, tail, plain = match.groups()
    fields = {key: in_quotes or bare for key, in_quotes, bare in _KV.findall(tail)} if tail else {}
    message = quoted.replace('\\"', '"') if quoted is not None else plain
    return LogLine(number, caller, message, fields, None, text, _pod(fields))


def _pod(fields: dict[str, str]) -> str:
    return fields.get("pod", "").strip('"').replace("\\", "")


def _pod_named(text: str) -> str:
    """The pod a line names, found without parsing the whole line where it can be."""
    if text.lstrip().startswith("{"):
        line = _parse_json(0, text)
        return line.pod if line is not None else ""
    match = _POD_KV.search(text)
    return match.group(1).replace("\\", "") if match else ""


def parse_line(number: int, text: str) -> LogLine | None:
    return _parse_json(number, text) if text.lstrip().startswith("{") else _parse_klog(number, text)


def _is_dra(line: LogLine) -> bool:
    caller = line.caller.lower()
    if any(source in caller for source in _DRA_SOURCES):
        return True
    if "schedule_one" not in caller:
        return False
    text = line.message + " " + " ".join(line.fields.values())
    return any(word in text for word in _DRA_WORDS)


def _candidates(block: str) -> list[int]:
    """Starts of the lines of `block` (which ends with a newline) that may be DRA lines."""
    starts: set[int] = set()
    for fragment in _CANDIDATE_FRAGMENTS:
        found = block.find(fragment)
        while found >= 0:
            starts.add(block.rfind("\n", 0, found) + 1)
            found = block.find(fragment, block.find("\n", found))
    return sorted(starts)


def _pod_named_between(block: str, start: int, end: int) -> str | None:
    """The pod of the last line in block[start:end] that names one (klog `pod=...`, JSON `"pod":{...}`)."""
    while True:
        found = block.rfind("pod", start, end)
        if found < 0:
            return None
        line_start = max(block.rfind("\n", 0, found) + 1, start)
        pod = _pod_named(block[line_start:block.find("\n", found)].rstrip("\r"))
        if pod:
            return pod
        end = line_start


def _byte_blocks(stream: IO[bytes], size: int, limit: int | None = None) -> Iterable[str]:
    """The text of the next `limit` bytes (all of them if None), in blocks of whole lines. Blocks are cut after a
    newline byte, which UTF-8 never uses inside a character, so each decodes alone; bad bytes become U+FFFD."""
    carry = b""
    while limit is None or limit > 0:
        chunk = stream.read(size if limit is None else min(size, limit))
        if not chunk:
            break
        if limit is not None:
            limit -= len(chunk)
        chunk = carry + chunk
        cut = chunk.rfind(b"\n") + 1
        carry = chunk[cut:]
        if cut:
            yield chunk[:cut].decode("utf-8", "replace")
    if carry:
        yield carry.decode("utf-8", "replace") + "\n"


def scan(stream: IO[bytes], only_pod: str | None = None, on_line: Callable[[KeptLine], None] | None = None,
         block_size: int = BLOCK) -> LogReport:
    """Keep the DRA lines, per pod. The scheduler handles one pod per scheduling cycle, so allocator lines, which
    name no pod, belong to the pod most recently named. `on_line` sees each kept line as it is read."""
    report = LogReport()
    _scan_blocks(_byte_blocks(stream, block_size), report, "", only_pod, on_line)
    return report


def scan_file(path: str, workers: int | None = None, block_size: int = BLOCK) -> LogReport:
    """scan() of a whole file, its parts read by several processes at once when the file is large (as grep -r and
    ripgrep do): each part is scanned on its own, then the parts are joined in order, the lines of a part that
    come before it names any pod going to the pod the part before it ended with."""
    size = os.path.getsize(path)
    workers = workers if workers is not None else min(os.cpu_count() or 1, MAX_WORKERS)
    if workers < 2 or size < PARALLEL_BYTES:
        with open(path, "rb") as stream:
            return scan(stream, block_size=block_size)
    parts = _parts(path, size, workers)
    if len(parts) == 1:
        return _joined([_scan_part(path, *parts[0], block_size)])
    with multiprocessing.get_context().Pool(len(parts), initializer=_ignore_interrupts) as pool:
        scanned = pool.starmap(_scan_part, [(path, start, end, block_size) for start, end in parts])
    return _joined(scanned)


MAX_WORKERS = 8
PARALLEL_BYTES = 32 << 20  # below this, starting processes costs more than it saves
_BEFORE_ANY_POD = "\0before any pod"  # a part's lines before it names a pod: the pod of the part before


def _parts(path: str, size: int, count: int) -> list[tuple[int, int]]:
    """`count` byte ranges of about equal size, each starting at the start of a line."""
    starts = [0]
    with open(path, "rb") as stream:
        for index in range(1, count):
            stream.seek(max(size * index // count, starts[-1]))
            stream.readline()
            if stream.tell() < size and stream.tell() > starts[-1]:
                starts.append(stream.tell())
    return list(zip(starts, [*starts[1:], size], strict=True))


def _ignore_interrupts() -> None:
    """Workers leave Ctrl-C to the parent, which stops them: one message, exit 130, no worker tracebacks."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


# What a worker sends back: lines read, lines kept, per-device lines seen, the pod at its end, and per pod
# (name, count, claims, final reason, last lines as plain tuples), plain data that pickles fast.
_PodPart = tuple[str, int, tuple[str, ...], "str | None", list[tuple[int, str, str, str]]]
_Part = tuple[int, int, bool, str, list[_PodPart]]


def _scan_part(path: str, start: int, end: int, block_size: int) -> _Part:
    report = LogReport()
    with open(path, "rb") as stream:
        stream.seek(start)
        last_pod = _scan_blocks(_byte_blocks(stream, block_size, end - start), report,
                                _BEFORE_ANY_POD if start else "", None, None)
    pods = [(log.pod, log.count, tuple(log.claims), log.reason,
             [(line.number, line.caller, line.message, line.detail) for line in log.recent])
            for log in report.pods.values()]
    return report.scanned, report.kept, report.per_device_lines, last_pod, pods


def _joined(parts: list[_Part]) -> LogReport:
    report = LogReport()
    current_pod = ""
    for scanned, kept, per_device_lines, last_pod, pods in parts:
        before = report.scanned
        for name, count, claims, reason, recent in pods:
            if name == _BEFORE_ANY_POD:
                name = current_pod or "(no pod named)"
            log = report.pods.get(name)
            if log is None:
                log = report.pods[name] = PodLog(name)
            log.count += count
            log.claims.update(claims)
            log.reason = reason or log.reason
            log.recent.extend(KeptLine(number + before, caller, message, detail)
                              for number, caller, message, detail in recent)
        current_pod = current_pod if last_pod == _BEFORE_ANY_POD else last_pod
        report.scanned += scanned
        report.kept += kept
        report.per_device_lines |= per_device_lines
    return report


def _scan_blocks(blocks: Iterable[str], report: LogReport, current_pod: str, only_pod: str | None,
                 on_line: Callable[[KeptLine], None] | None) -> str:
    """Add the DRA lines of `blocks` to `report`; the pod being scheduled at the end."""
    readings: dict[str, _Reading | None] = {}
    number = report.scanned
    for block in blocks:
        position = 0  # where the text not yet looked at starts: the end of the last candidate line
        for start in _candidates(block):
            end = block.find("\n", start)
            number += block.count("\n", position, start)
            text = block[start:end].rstrip("\r")
            # a klog line without its header (level, date, time, thread) is the same text at every retry of a
            # pod; JSON carries its time inside, so each JSON line is read
            bracket = text.find("] ") if text[:1] in "IWEF" else -1
            key = text[text.rfind(" ", 0, bracket) + 1:] if bracket > 0 else None
            if key is None:
                reading = _Reading.of(text)
            elif key in readings:
                reading = readings[key]
            else:
                if len(readings) >= CACHED_TEXTS:
                    readings.clear()
                reading = readings[key] = _Reading.of(text)
            if reading is not None and reading.pod:
                current_pod = reading.pod
            else:
                current_pod = _pod_named_between(block, position, end) or current_pod
            position = end
            if reading is None or not reading.dra:
                continue
            pod = reading.pod or current_pod
            if only_pod is not None and pod != only_pod:
                continue
            report.kept += 1
            report.per_device_lines |= reading.per_device
            pod = pod or "(no pod named)"
            if pod not in report.pods:
                report.pods[pod] = PodLog(pod)
            kept = report.pods[pod].add(number + 1, reading)
            if on_line is not None:
                on_line(kept)
        current_pod = _pod_named_between(block, position, len(block)) or current_pod
        number += block.count("\n", position)
        report.scanned = number
    return current_pod

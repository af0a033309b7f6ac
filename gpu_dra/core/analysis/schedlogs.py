"""kube-scheduler log lines about DRA, grouped per pod and claim, with the verbosity they need.

Reads klog text (`I1129 10:00:00.000000 1 allocator.go:123] "Starting allocation" numClaims=1`) and JSON
(`{"ts":..., "caller":"allocator.go:123", "msg":"...", "v":5, "pod":{"name":..,"namespace":..}}`). Which messages
exist at which verbosity (kubernetes/kubernetes `pkg/scheduler/framework/plugins/dynamicresources`,
kubernetes/dynamic-resource-allocation `structured/`): pod-level outcomes at V(5), allocator progress at
V(5)/V(6), per-device reasons ("CEL result", "Device not selectable") only at V(7).

Scheduler logs run to gigabytes, and most of their lines are not about DRA. The text is read in large blocks;
`str.find` over each block finds the lines that can be DRA lines at C speed, and only those are parsed. Memory does
not grow with the log but with its pods: per pod a count, its claims, its final reason and the text of its last
TAIL lines.
"""

from __future__ import annotations

import json
import re
import string
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import IO

_DRA_SOURCES = ("dynamicresources", "allocator", "resourceclaim", "structured")
_DRA_WORDS = ("claim", "ResourceClaim", "allocat", "device class", "DeviceClass", "CEL", "resource slice",
              "ResourceSlice")
PER_DEVICE_MESSAGES = ("CEL result", "Device not selectable", "Device in use", "Device not usable",
                       "Constraint not satisfied")
OUTCOME_MESSAGES = ("pod unschedulable", "dynamic resource plugin failed", "cannot allocate all claims",
                    "timed out trying to allocate devices", "Done with allocation")
TAIL = 20  # lines kept per pod for the report; --pod shows every line of one pod
BLOCK = 8 << 20

# A line is a candidate when it holds any of these (lower case; "CEL" as written): a superset of what _is_dra
# decides exactly (a DRA source in the caller, or schedule_one with a DRA word), found with str.find over whole
# blocks, about 20 times faster than Python's regular expressions at this. "allocat" covers "allocator",
# "claim" covers "resourceclaim".
_CANDIDATE_WORDS = ("dynamicresources", "structured", "allocat", "claim", "device class", "deviceclass",
                    "resource slice", "resourceslice")

# klog: header, caller, then a quoted message and key=value pairs (or an unquoted message).
_KLOG = re.compile(r'[IWEF]\d{4} [\d:.]+\s+\d+ ([\w./-]+:\d+)\] (?:"((?:[^"\\]|\\.)*)"\s*(.*)|(.*))')
_KV = re.compile(r'(\w[\w.]*)=(?:"((?:[^"\\]|\\.)*)"|(\S+))')
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


@dataclass(frozen=True)
class KeptLine:
    """What the report shows of a line: its number, caller, message and key=value details (the pod's aside)."""

    number: int
    caller: str
    message: str
    detail: str

    @classmethod
    def of(cls, line: LogLine) -> KeptLine:
        return cls(line.number, line.caller, line.message,
                   " ".join(f"{k}={v}" for k, v in line.fields.items() if k != "pod"))


@dataclass
class PodLog:
    """One pod's DRA lines: how many, the claims named, the final reason and the last TAIL lines, as shown."""

    pod: str
    count: int = 0
    claims: set[str] = field(default_factory=set)
    reason: str | None = None
    recent: deque[KeptLine] = field(default_factory=lambda: deque(maxlen=TAIL))

    def add(self, line: LogLine) -> None:
        self.count += 1
        self.claims.update(line.claims)
        self.reason = line.outcome or self.reason
        self.recent.append(KeptLine.of(line))


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
    text = line.message + " " + " ".join(line.fields.values())
    return "schedule_one" in caller and any(word in text for word in _DRA_WORDS)


def _line_starts(text: str, block: str, word: str) -> Iterable[int]:
    """Where each line of `block` that contains `word` (searched in `text`, the block or its lower case) starts."""
    found = text.find(word)
    while found >= 0:
        yield block.rfind("\n", 0, found) + 1
        end = block.find("\n", found)
        found = text.find(word, end) if end >= 0 else -1


_ASCII_LOWER = str.maketrans(string.ascii_uppercase, string.ascii_lowercase)


def _candidates(block: str) -> list[int]:
    """Starts of the lines that may be DRA lines."""
    lower = block.lower()
    if len(lower) != len(block):  # some characters lower-case to several ('İ'): keep positions, ASCII only
        lower = block.translate(_ASCII_LOWER)
    starts = {start for word in _CANDIDATE_WORDS for start in _line_starts(lower, block, word)}
    starts.update(_line_starts(block, block, "CEL"))
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


def _blocks(stream: IO[str], size: int) -> Iterable[str]:
    """The text in blocks of whole lines, each ending with a newline."""
    carry = ""
    while True:
        chunk = stream.read(size)
        if not chunk:
            if carry:
                yield carry + "\n"
            return
        chunk = carry + chunk
        cut = chunk.rfind("\n") + 1
        carry = chunk[cut:]
        if cut:
            yield chunk[:cut]


def scan(stream: IO[str], only_pod: str | None = None, on_line: Callable[[LogLine], None] | None = None,
         block_size: int = BLOCK) -> LogReport:
    """Keep the DRA lines, per pod. The scheduler handles one pod per scheduling cycle, so allocator lines, which
    name no pod, belong to the pod most recently named. `on_line` sees each kept line as it is read."""
    report = LogReport()
    current_pod = ""
    number = 0
    for block in _blocks(stream, block_size):
        position = 0
        for start in _candidates(block):
            end = block.find("\n", start)
            number += block.count("\n", position, start)
            line = parse_line(number + 1, block[start:end].rstrip("\r"))
            if line is not None and line.pod:
                current_pod = line.pod
            else:
                current_pod = _pod_named_between(block, position, start) or current_pod
            position = start
            if line is None:
                continue
            if not line.pod and current_pod:
                line.pod = line.fields["pod"] = current_pod
            if not _is_dra(line) or (only_pod is not None and line.pod != only_pod):
                continue
            report.kept += 1
            report.per_device_lines |= any(m in line.message for m in PER_DEVICE_MESSAGES)
            pod = line.pod or "(no pod named)"
            report.pods.setdefault(pod, PodLog(pod)).add(line)
            if on_line is not None:
                on_line(line)
        current_pod = _pod_named_between(block, position, len(block)) or current_pod
        number += block.count("\n", position)
        report.scanned = number
    return report

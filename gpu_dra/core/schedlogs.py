"""kube-scheduler log lines about DRA, grouped per pod and claim, with the verbosity they need.

Reads klog text (`I1129 10:00:00.000000 1 allocator.go:123] "Starting allocation" numClaims=1`) and JSON
(`{"ts":..., "caller":"allocator.go:123", "msg":"...", "v":5, "pod":{"name":..,"namespace":..}}`). Which messages
exist at which verbosity: kubernetes-dra.md section 5 (PLUGIN-133/PLUGIN-NEW, ALLOC): pod-level outcomes at V(5),
allocator progress at V(5)/V(6), per-device reasons ("CEL result", "Device not selectable") only at V(7).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, field

_DRA_SOURCES = ("dynamicresources", "allocator", "resourceclaim", "structured")
_DRA_WORDS = ("claim", "ResourceClaim", "allocat", "device class", "DeviceClass", "CEL", "resource slice",
              "ResourceSlice")
PER_DEVICE_MESSAGES = ("CEL result", "Device not selectable", "Device in use", "Device not usable",
                       "Constraint not satisfied")
OUTCOME_MESSAGES = ("pod unschedulable", "dynamic resource plugin failed", "cannot allocate all claims",
                    "timed out trying to allocate devices", "Done with allocation")

_KLOG = re.compile(r"^(?P<level>[IWEF])(?P<date>\d{4}) (?P<time>[\d:.]+)\s+\d+ "
                   r"(?P<caller>[\w./-]+:\d+)\] (?P<rest>.*)$")
_QUOTED_MSG = re.compile(r'^"((?:[^"\\]|\\.)*)"\s*(.*)$')
_KV = re.compile(r'(\w[\w.]*)=("(?:[^"\\]|\\.)*"|\S+)')


@dataclass
class LogLine:
    number: int
    caller: str
    message: str
    fields: dict[str, str]
    verbosity: int | None
    raw: str

    @property
    def pod(self) -> str:
        pod = self.fields.get("pod", "")
        return pod.strip('"').replace("\\", "")

    @property
    def claims(self) -> list[str]:
        found = []
        for key in ("claim", "resourceClaim", "claims", "resourceclaims"):
            value = self.fields.get(key)
            if value:
                found += re.findall(r"[\w.-]+/[\w.-]+", value) or [value.strip('"')]
        return found


@dataclass
class LogReport:
    lines: list[LogLine] = field(default_factory=list)
    scanned: int = 0

    def by_pod(self) -> dict[str, list[LogLine]]:
        groups: dict[str, list[LogLine]] = {}
        for line in self.lines:
            groups.setdefault(line.pod or "(no pod named)", []).append(line)
        return groups

    def final_reason(self, lines: list[LogLine]) -> str | None:
        for line in reversed(lines):
            reason = line.fields.get("reason") or line.fields.get("err")
            if reason in ("<nil>", "null", "nil"):
                reason = None
            if line.message == "Done with allocation" and line.fields.get("success") == "true":
                return "allocated"
            if reason or any(m in line.message for m in OUTCOME_MESSAGES):
                return (reason or line.message).strip('"')
        return None

    def verbosity_hint(self) -> str | None:
        if any(any(m in line.message for m in PER_DEVICE_MESSAGES) for line in self.lines):
            return None
        return ("no per-device reasons in this log: they are logged only at V(7). Run kube-scheduler with --v=7, "
                "or just the DRA code paths with --vmodule=allocator=7,dynamicresources=7 (on EKS the control "
                "plane's verbosity is fixed: use `gpu-dra explain` instead)")


def _parse_json(number: int, text: str) -> LogLine | None:
    try:
        record = json.loads(text)
    except json.JSONDecodeError:
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
                   int(verbosity) if isinstance(verbosity, int) else None, text)


def _parse_klog(number: int, text: str) -> LogLine | None:
    match = _KLOG.match(text)
    if not match:
        return None
    rest = match.group("rest")
    quoted = _QUOTED_MSG.match(rest)
    message, tail = (quoted.group(1), quoted.group(2)) if quoted else (rest, "")
    fields = {k: v.strip('"') for k, v in _KV.findall(tail)}
    return LogLine(number, match.group("caller"), message.replace('\\"', '"'), fields, None, text)


def _is_dra(line: LogLine) -> bool:
    caller = line.caller.lower()
    if any(source in caller for source in _DRA_SOURCES):
        return True
    text = line.message + " " + " ".join(line.fields.values())
    return "schedule_one" in caller and any(word in text for word in _DRA_WORDS)


def parse(lines: Iterable[str]) -> LogReport:
    """Keep the DRA lines. The scheduler handles one pod per scheduling cycle, so allocator lines, which name no
    pod, belong to the pod most recently named."""
    report = LogReport()
    current_pod = ""
    for number, raw in enumerate(lines, start=1):
        text = raw.rstrip("\n")
        if not text.strip():
            continue
        report.scanned += 1
        line = _parse_json(number, text) if text.lstrip().startswith("{") else _parse_klog(number, text)
        if line is None:
            continue
        if line.pod:
            current_pod = line.pod
        elif current_pod:
            line.fields["pod"] = current_pod
        if _is_dra(line):
            report.lines.append(line)
    return report

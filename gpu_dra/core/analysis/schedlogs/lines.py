"""What a log line says: its shape (klog text, also behind a prefix; ktesting; klog JSON), its parse into caller,
message and key=value pairs, the pod, claims and outcome it names, and whether it is a DRA line.

DRA lines are those of the DRA code (the scheduler plugin, the structured allocator, the ResourceSlice tracker,
kubelet's DRA manager), any line about plugin="DynamicResources", the scheduler's and kubelet's own lines that
speak of claims, and every `Observed a panic`. Which messages exist at which verbosity (kubernetes/kubernetes
`pkg/scheduler/framework/plugins/dynamicresources`, kubernetes/dynamic-resource-allocation `structured/`): pod-level
outcomes at V(5), allocator progress at V(5)/V(6), per-device reasons ("CEL result", "Device not selectable") only
at V(7). The caches here (callers, messages) hold at most CACHED_TEXTS entries each.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import NamedTuple

# Callers (Go files) of the DRA code, in kubernetes/kubernetes (master, 2026) and kubernetes/dynamic-resource-allocation
# @v0.35.0: pkg/scheduler/framework/plugins/dynamicresources/ (dynamicresources.go, allocateddevices.go,
# dra_manager.go, claims.go, extendeddynamicresources.go, ...), structured/ (allocator.go, allocatedstate.go,
# internal/{stable,incubating,experimental}/allocator_*.go and pools_*.go, experimental/constraint.go),
# resourceslice/tracker/tracker.go, and kubelet's pkg/kubelet/cm/dra/ (manager.go, claiminfo.go,
# plugin/dra_plugin.go, plugin/dra_plugin_manager.go). A caller is a file's base name in klog text, a path in JSON.
_DRA_SOURCES = ("dynamicresources", "allocator", "allocateddevices", "allocatedstate", "dra_manager", "dra_plugin",
                "draplugin", "resourceclaim", "resourceslice", "structured", "claiminfo")
_DRA_FILES = ("tracker.go", "claims.go", "constraint.go")  # names the DRA code shares with nothing else logged there
# Callers that log for every plugin or device kind: DRA lines when they speak of claims. schedule_one.go and
# framework.go (the framework runtime) report plugin failures, scheduling_queue.go PreEnqueue rejections;
# kubelet's kuberuntime_manager.go, pod_workers.go and cm/dra/manager.go the preparation of a pod's claims.
_GENERIC_CALLERS = ("schedule_one", "framework", "scheduling_queue", "manager", "pod_workers")
_DRA_WORDS = ("claim", "ResourceClaim", "allocat", "device class", "DeviceClass", "CEL", "resource slice",
              "ResourceSlice", "DynamicResources", "dynamic resource")
PER_DEVICE_MESSAGES = ("CEL result", "Device not selectable", "Device in use", "Device not usable",
                       "Constraint not satisfied")
OUTCOME_MESSAGES = ("pod unschedulable", "dynamic resource plugin failed", "cannot allocate all claims",
                    "timed out trying to allocate devices", "Done with allocation")
# apimachinery's runtime.logPanic (kubernetes/apimachinery@v0.35.0:pkg/util/runtime/runtime.go): `"Observed a panic"
# panic="..." panicGoValue=... stacktrace=<...>`; up to v0.30.0 (Kubernetes 1.30) `Observed a panic: %#v (%v)`.
# HandleCrash re-panics by default, so the process restarts: whichever code panicked, it is the fate of the pod
# being scheduled, and every such line is kept.
PANIC_MESSAGE = "Observed a panic"
_NO_REASON = ("", "<nil>", "null", "nil", "Success", "success")
# The same checks as one regular expression each, short strings searched at C speed
_DRA_CALLER = re.compile("|".join(_DRA_SOURCES) + r"|(?:^|/)(?:" + "|".join(f.removesuffix(".go") for f in _DRA_FILES)
                         + r")\.go:")
_GENERIC_CALLER = re.compile("|".join(_GENERIC_CALLERS))
_PER_DEVICE = re.compile("|".join(map(re.escape, PER_DEVICE_MESSAGES)))
_OUTCOME = re.compile("|".join(map(re.escape, OUTCOME_MESSAGES)))

CACHED_TEXTS = 20_000  # distinct line texts whose reading is remembered (a few MB at most)


# klog's header: level, month and day, time, thread, caller (kubernetes/klog@v2.130.1:internal/buffer/buffer.go).
# ktesting writes the first three only, after go test's `file.go:line: ` (the caller of the log call), then the
# logger's name and `: `, the message unquoted (kubernetes/klog@v2.130.1:ktesting/testinglogger.go).
_KLOG_HEADER = re.compile(r"[IWEF]\d{4} [\d:.]+\s+\d+ ([\w./+-]+:\d+)\] ")
_HEADER = re.compile(r"[IWEF]\d{4} \d\d:\d\d:\d\d\.\d+(?:\s+\d+ ([\w./+-]+:\d+))?\] ")
_QUOTED = re.compile(r'"((?:[^"\\]++|\\.)*+)"\s*(.*)', re.DOTALL)
# A key starts where a run of word characters and dots starts (after its leading dots): tried at every character of
# the run instead, a 40,000-character word took 13 s (each try scans to the run's end). The keys found are the same.
_KV = re.compile(r'(?<![\w.])\.*+(\w[\w.]*+)=(?:"((?:[^"\\]++|\\.)*+)"|(\S+))')
_KV_START = re.compile(r"\s(?=[A-Za-z_][\w.]*=)")  # where an unquoted message ends and its key=value pairs begin
_LOGGER_PREFIX = re.compile(r"([\w.-]+(?:/[\w.-]+)*): ")  # ktesting's `logger-name: ` (WithName joined with /)
_POD_KV = re.compile(r'(?:^|\s)pod="?([^"\s]+)')
_NAMESPACED = re.compile(r"[\w.-]+/[\w.-]+")  # namespace/name
_CLAIM_KEYS = ("claim", "resourceClaim", "resourceclaim", "claims", "resourceclaims")  # keys whose values name claims
_CLAIM_IN_TEXT = re.compile(r'(?:ResourceClaim|claim) "?([\w.-]+/[\w.-]+)')
_PANIC_IN_PARENS = re.compile(r"\(([^()]+)\)\s*$")


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
        return _claims(self.fields.get)

    @property
    def outcome(self) -> str | None:
        """What this line says of the pod's fate, if anything: the last such line is the final reason."""
        return _outcome(self.message, self.fields.get)


_Get = Callable[[str], "str | None"]  # a line's value of a key, or None


def _claims(get: _Get) -> list[str]:
    found = []
    for key in _CLAIM_KEYS:
        value = get(key)
        if value and value != "<":  # `claim=<` opens a multi-line klog value: no name on this line
            found += _NAMESPACED.findall(value) or [value.strip('"')]
    for key in ("status", "err", "reason"):  # `could not find ResourceClaim "ns/name"`, `for claim ns/name:`
        value = get(key)
        if value and ("laim " in value or 'laim "' in value):
            found += _CLAIM_IN_TEXT.findall(value)
    return found


def _outcome(message: str, get: _Get) -> str | None:
    if message.startswith(PANIC_MESSAGE):
        value = get("panic")
        if value is None:  # the unstructured form: `Observed a panic: "..." (runtime error: ...)`
            detail = message[len(PANIC_MESSAGE):].lstrip(": ")
            inner = _PANIC_IN_PARENS.search(detail)
            value = inner.group(1) if inner else detail.strip('"')
        return f"panic: {value}"
    if message == "Done with allocation" and get("success") == "true":
        return "allocated"
    reason = get("reason") or get("err") or get("status")
    if reason in _NO_REASON:
        reason = None
    if reason or _OUTCOME.search(message):
        value = reason or message
        return value[1:-1] if len(value) > 1 and value[0] == value[-1] == '"' else value
    return None


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
                   int(verbosity) if isinstance(verbosity, int) else None, text, _pod(fields.get))


class _Located(NamedTuple):
    """Where a text line's klog record is: its caller and what follows the header, and whether ktesting wrote it."""

    caller: str
    rest: str
    ktesting: bool

    @property
    def key(self) -> str:  # the same at every retry of a pod: no prefix, level, date, time or thread
        return ("\0t" if self.ktesting else "\0k") + self.caller + "] " + self.rest


def _locate(text: str) -> _Located | None:
    match = _KLOG_HEADER.match(text)
    if match:
        return _Located(match.group(1), text[match.end():], False)
    if text.startswith("EVENTS\t"):  # `aws logs filter-log-events --output text`: EVENTS, eventId, ingestionTime,
        text = text[:text.rfind("\t")]  # logStreamName, message, timestamp (aws/aws-cli@0993070:awscli/text.py)
    match = _HEADER.search(text)
    if match is None:
        return None
    caller = match.group(1)
    if caller is not None:
        return _Located(caller, text[match.end():], False)
    before = text[:match.start()]  # ktesting: go test's `file.go:line: ` before the header
    token = before[:-2].rsplit(None, 1)[-1] if before.endswith(": ") and before[:-2].strip() else ""
    return _Located(token if ".go:" in token else "", text[match.end():], True)


def _parse_record(number: int, text: str, caller: str, rest: str, ktesting: bool) -> LogLine:
    fields: dict[str, str] = {}
    if ktesting:  # `logger-name: message key=value ...`, the message unquoted
        prefix = _LOGGER_PREFIX.match(rest)
        if prefix:
            fields["logger"] = prefix.group(1)
            rest = rest[prefix.end():]
    quoted = _QUOTED.fullmatch(rest) if rest.startswith('"') else None
    if quoted:
        message, tail = _unquote(quoted.group(1)), quoted.group(2)
    else:
        start = _KV_START.search(rest)
        message, tail = (rest[:start.start()], rest[start.start():]) if start else (rest, "")
    for key, in_quotes, bare in _KV.findall(tail):
        fields[key] = _unquote(in_quotes) if in_quotes else bare
    return LogLine(number, caller, message, fields, None, text, _pod(fields.get))


def _unquote(value: str) -> str:
    """A Go-quoted value's quotes and backslashes as written; \\n and the like stay escaped, one line shown."""
    if "\\" not in value:
        return value
    return value.replace("\\\\", "\0").replace('\\"', '"').replace("\0", "\\")


def _pod(get: _Get) -> str:
    return (get("pod") or "").strip('"').replace("\\", "")


def _pod_named(text: str) -> str:
    """The pod a line names, found without parsing the whole line where it can be."""
    if text.lstrip().startswith("{"):
        line = _parse_json(0, text)
        return line.pod if line is not None else ""
    match = _POD_KV.search(text)
    return match.group(1).replace("\\", "") if match else ""


def parse_line(number: int, text: str) -> LogLine | None:
    match = _KLOG_HEADER.match(text)
    if match:  # the common case, without the detour
        return _parse_record(number, text, match.group(1), text[match.end():], False)
    if text.lstrip().startswith("{"):
        return _parse_json(number, text)
    located = _locate(text)
    return None if located is None else _parse_record(number, text, *located)


_CALLER_KINDS: dict[str, int] = {}  # caller: 2 DRA code, 1 generic, 0 other; a log has a few hundred callers


_MESSAGES: dict[str, tuple[bool, bool, str | None]] = {}  # klog messages are constants: a log has a few hundred


def _message_facts(message: str) -> tuple[bool, bool, str | None]:
    """Whether a message is a per-device reason, a panic, and the outcome it says with no key=value pairs."""
    found = _MESSAGES.get(message)
    if found is None:
        found = (_PER_DEVICE.search(message) is not None, message.startswith(PANIC_MESSAGE),
                 _outcome(message, _no_value))
        if len(_MESSAGES) < CACHED_TEXTS:
            _MESSAGES[message] = found
    return found


def _no_value(key: str) -> None:
    return None


def _caller_kind(caller: str) -> int:
    kind = _CALLER_KINDS.get(caller)
    if kind is None:
        lower = caller.lower()
        kind = 2 if _DRA_CALLER.search(lower) else 1 if _GENERIC_CALLER.search(lower) else 0
        if len(_CALLER_KINDS) < CACHED_TEXTS:
            _CALLER_KINDS[caller] = kind
    return kind


def _is_dra(caller: str, message: str, get: _Get, values: Callable[[], Iterable[str]]) -> bool:
    kind = _caller_kind(caller)
    if kind == 2 or message.startswith(PANIC_MESSAGE):
        return True
    logger = get("logger") or ""  # FilterWithNominatedPods.Filter.DynamicResources, dra-manager
    if get("plugin") == "DynamicResources" or "DynamicResources" in logger or "dra-" in logger:
        return True
    if kind == 0:
        return False
    text = message + " " + " ".join(values())
    if "olume" in text:  # a PersistentVolumeClaim is no DRA claim
        text = text.replace("olumeClaim", "").replace("olumeclaim", "")
    return any(word in text for word in _DRA_WORDS)


def _detail(fields: dict[str, str]) -> str:
    """A line's key=value details as shown: all but the pod and logger, `<` (klog's multi-line value) as `<...>`."""
    return " ".join(f"{k}={'<...>' if v == '<' else v}" for k, v in fields.items() if k not in ("pod", "logger"))


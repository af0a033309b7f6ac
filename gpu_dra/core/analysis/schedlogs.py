"""kube-scheduler (and kubelet) log lines about DRA, grouped per pod and claim, with the verbosity they need.

Reads the shapes clusters and test runs write:
- klog text (`I1129 10:00:00.000000 1 allocator.go:123] "Starting allocation" numClaims=1`), also behind a prefix:
  a container runtime's (`2022-11-10T20:30:18.670662874Z stderr F `), journald's, `aws logs tail`'s
  (`2024-11-29T10:00:01.000000+00:00 kube-scheduler-abc `), the `EVENTS` rows of `aws logs filter-log-events
  --output text`, or go test's (`logger.go:85: `);
- ktesting, the scheduler's unit, integration and scheduler_perf tests (`dynamicresources.go:542: I1106
  16:40:23.108330] scheduler: pod resource claims pod="default/my-pod"`: the caller before the header, no thread,
  an optional logger name, an unquoted message);
- klog JSON (`{"ts":..., "caller":"allocator.go:123", "msg":"...", "v":5, "pod":{"name":..,"namespace":..}}`);
- a CloudWatch Logs JSON export (`aws logs filter-log-events` or `get-log-events --output json`, indented or not,
  pages concatenated): each event's "message" is a klog line, decoded as the export is read.

DRA lines are those of the DRA code (the scheduler plugin, the structured allocator, the ResourceSlice tracker,
kubelet's DRA manager), any line about plugin="DynamicResources", the scheduler's and kubelet's own lines that
speak of claims, and every `Observed a panic`. Which messages exist at which verbosity (kubernetes/kubernetes
`pkg/scheduler/framework/plugins/dynamicresources`, kubernetes/dynamic-resource-allocation `structured/`): pod-level
outcomes at V(5), allocator progress at V(5)/V(6), per-device reasons ("CEL result", "Device not selectable") only
at V(7).

Scheduler logs run to gigabytes, and most of their lines are not about DRA. The text is read in large blocks;
`str.find` over each block finds the lines that can be DRA lines at C speed, and only those are parsed; a line whose
text (without its header) was seen before is looked up, not parsed again, since a Pending pod is retried and logs
the same lines each time. Memory does not grow with the log but with its pods (per pod a count, its claims, its
final reason and the text of its last TAIL lines) and the CACHED_TEXTS remembered readings. A large file is read in
parts by one process per core (scan_file), joined in order.
"""

from __future__ import annotations

import codecs
import contextlib
import json
import multiprocessing
import os
import re
import signal
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from json import decoder as _json_decoder
from typing import IO, NamedTuple

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
TAIL = 20  # lines kept per pod for the report; --pod shows every line of one pod
BLOCK = 8 << 20
CACHED_TEXTS = 20_000  # distinct line texts whose reading is remembered (a few MB at most)
_HEAD = 4096  # bytes read to tell a CloudWatch JSON export from a log
_LONGEST_LINE = 64 << 20  # a "line" longer than this is cut: no log writes one, and memory stays flat

# A line is a candidate when it holds any of these fragments: a superset of what _is_dra decides exactly (a DRA
# caller or a DRA word), found with str.find over whole blocks, about 20 times faster than Python's regular
# expressions at this. Fragments, not words, so that no lower-cased copy of the block is needed: "laim" is in claim,
# Claim and ResourceClaim (and claims.go, claiminfo.go); "llocat" in allocator, allocateddevices and Allocation;
# "ynamic" in dynamicresources, DynamicResources and dynamic resources; "lass" in device class and DeviceClass;
# "lice" in resource slice and ResourceSlice; "dra" in dra_manager, dra_plugin and the dra-manager logger;
# "onstraint" in constraint.go and its loggers' names. Every message of tracker.go names a ResourceSlice, DeviceClass
# or DeviceTaintRule, and pools_*.go log nothing (v0.35.0). Each fragment costs one pass over the block (about 4 ms
# for 8 MB), so there are few.
_CANDIDATE_FRAGMENTS = ("laim", "llocat", "ynamic", "structured", "lass", "lice", "CEL", "dra", "onstraint",
                        "DeviceTaint", PANIC_MESSAGE)

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
        found = []
        fields = self.fields
        for key in ("claim", "resourceClaim", "resourceclaim", "claims", "resourceclaims"):
            value = fields.get(key)
            if value and value != "<":  # `claim=<` opens a multi-line klog value: no name on this line
                found += re.findall(r"[\w.-]+/[\w.-]+", value) or [value.strip('"')]
        for key in ("status", "err", "reason"):  # `could not find ResourceClaim "ns/name"`, `for claim ns/name:`
            value = fields.get(key)
            if value and ("laim " in value or 'laim "' in value):
                found += _CLAIM_IN_TEXT.findall(value)
        return found

    @property
    def outcome(self) -> str | None:
        """What this line says of the pod's fate, if anything: the last such line is the final reason."""
        if self.message.startswith(PANIC_MESSAGE):
            value = self.fields.get("panic")
            if value is None:  # the unstructured form: `Observed a panic: "..." (runtime error: ...)`
                detail = self.message[len(PANIC_MESSAGE):].lstrip(": ")
                inner = _PANIC_IN_PARENS.search(detail)
                value = inner.group(1) if inner else detail.strip('"')
            return f"panic: {value}"
        if self.message == "Done with allocation" and self.fields.get("success") == "true":
            return "allocated"
        reason = self.fields.get("reason") or self.fields.get("err") or self.fields.get("status")
        if reason in _NO_REASON:
            reason = None
        if reason or _OUTCOME.search(self.message):
            value = reason or self.message
            return value[1:-1] if len(value) > 1 and value[0] == value[-1] == '"' else value
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
    panic: bool
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
                   _PER_DEVICE.search(message) is not None, message.startswith(PANIC_MESSAGE), line.caller,
                   message, " ".join(f"{k}={'<...>' if v == '<' else v}" for k, v in line.fields.items()
                                     if k not in ("pod", "logger")))  # `<`: klog's multi-line value, on the lines below


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
    scanned: int = 0  # lines read (of a CloudWatch export: the lines of its events' messages)
    kept: int = 0  # DRA lines among them
    per_device_lines: bool = False
    panics: int = 0  # `Observed a panic` lines among the kept ones
    notes: list[str] = field(default_factory=list)  # what the reader could not read, said once each

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
    return LogLine(number, caller, message, fields, None, text, _pod(fields))


def _unquote(value: str) -> str:
    """A Go-quoted value's quotes and backslashes as written; \\n and the like stay escaped, one line shown."""
    if "\\" not in value:
        return value
    return value.replace("\\\\", "\0").replace('\\"', '"').replace("\0", "\\")


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
    match = _KLOG_HEADER.match(text)
    if match:  # the common case, without the detour
        return _parse_record(number, text, match.group(1), text[match.end():], False)
    if text.lstrip().startswith("{"):
        return _parse_json(number, text)
    located = _locate(text)
    return None if located is None else _parse_record(number, text, *located)


_CALLER_KINDS: dict[str, int] = {}  # caller: 2 DRA code, 1 generic, 0 other; a log has a few hundred callers


def _caller_kind(caller: str) -> int:
    kind = _CALLER_KINDS.get(caller)
    if kind is None:
        lower = caller.lower()
        kind = 2 if _DRA_CALLER.search(lower) else 1 if _GENERIC_CALLER.search(lower) else 0
        if len(_CALLER_KINDS) < CACHED_TEXTS:
            _CALLER_KINDS[caller] = kind
    return kind


def _is_dra(line: LogLine) -> bool:
    kind = _caller_kind(line.caller)
    if kind == 2 or line.message.startswith(PANIC_MESSAGE):
        return True
    fields = line.fields
    logger = fields.get("logger", "")  # FilterWithNominatedPods.Filter.DynamicResources, dra-manager
    if fields.get("plugin") == "DynamicResources" or "DynamicResources" in logger or "dra-" in logger:
        return True
    if kind == 0:
        return False
    text = line.message + " " + " ".join(fields.values())
    if "olume" in text:  # a PersistentVolumeClaim is no DRA claim
        text = text.replace("olumeClaim", "").replace("olumeclaim", "")
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


def _chunks(stream: IO[bytes], size: int, limit: int | None = None, head: bytes = b"") -> Iterator[bytes]:
    """The next `limit` bytes (all of them if None) in pieces of `size`, starting with `head`, already read."""
    for start in range(0, len(head), size):
        yield head[start:start + size]
    if limit is not None:
        limit -= len(head)
    while limit is None or limit > 0:
        chunk = stream.read(size if limit is None else min(size, limit))
        if not chunk:
            break
        if limit is not None:
            limit -= len(chunk)
        yield chunk


def _line_blocks(chunks: Iterable[bytes]) -> Iterator[str]:
    """The text of `chunks` in blocks of whole lines. Blocks are cut after a newline byte, which UTF-8 never uses
    inside a character, so each decodes alone; bad bytes become U+FFFD."""
    carry = b""
    for chunk in chunks:
        chunk = carry + chunk
        cut = chunk.rfind(b"\n") + 1
        if not cut and len(chunk) > _LONGEST_LINE:  # no newline in sight: no log; cut it rather than hold it whole
            carry = b""
            yield chunk.decode("utf-8", "replace") + "\n"
            continue
        carry = chunk[cut:]
        if cut:
            yield chunk[:cut].decode("utf-8", "replace")
    if carry:
        yield carry.decode("utf-8", "replace") + "\n"


# A CloudWatch Logs export, as the AWS CLI prints a FilterLogEvents or GetLogEvents response (json.dump, indent 4:
# aws/aws-cli@0080339:awscli/formatter.py): {"events": [{"logStreamName": "kube-scheduler-...", "timestamp": ...,
# "message": "I1201 ...", "ingestionTime": ..., "eventId": "..."}, ...], ...}
# (docs.aws.amazon.com/AmazonCloudWatchLogs/latest/APIReference/API_FilteredLogEvent.html).
_EXPORT_KEYS = re.compile(rb'^\s*\{\s*"events"\s*:|"(?:logStreamName|eventId|ingestionTime)"\s*:')
_MESSAGE_KEY = '"message"'
# the JSON decoder's own string reader, in C: (value, index after its closing quote)
_scanstring: Callable[[str, int, bool], tuple[str, int]] = _json_decoder.scanstring  # type: ignore[attr-defined]
_KEY_TAIL = re.compile(r'\s*:\s*"')
_KEY_TAIL_CUT = re.compile(r"\s*(?::\s*)?")  # what the end of a block can hold of a key's tail, cut short
_STRING_END = re.compile(r'(?:[^"\\]++|\\.)*+"', re.DOTALL)
TRUNCATED_EXPORT = "the CloudWatch export ends inside an event: it looks cut short; the events before it were read"
LONG_MESSAGE = f"the CloudWatch export has an event message longer than {_LONGEST_LINE >> 20} MB: it was skipped"


def is_cloudwatch_export(head: bytes) -> bool:
    """Whether a file that starts with `head` is a CloudWatch Logs JSON export rather than a log."""
    return head.lstrip()[:1] in (b"{", b"[") and _EXPORT_KEYS.search(head) is not None


def _export_blocks(chunks: Iterable[bytes], notes: list[str]) -> Iterator[str]:
    """The klog lines of a CloudWatch export: its events' "message" values, decoded one by one with the C string
    decoder where they stand (json.decoder.scanstring), so that a multi-GB export is never held or parsed whole;
    pretty-printed or on one line, one document or several. A message cut off by the end of the file is noted."""
    decoder = codecs.getincrementaldecoder("utf-8")("replace")
    carry = ""
    for chunk in chunks:
        messages, carry = _messages(carry + decoder.decode(chunk))
        if messages:
            yield "\n".join(messages) + "\n"
        if len(carry) > _LONGEST_LINE:  # a message that does not end: skipped, memory stays flat
            carry = ""
            if LONG_MESSAGE not in notes:
                notes.append(LONG_MESSAGE)
    messages, carry = _messages(carry + decoder.decode(b"", final=True))
    if messages:
        yield "\n".join(messages) + "\n"
    if _MESSAGE_KEY in carry and TRUNCATED_EXPORT not in notes:
        notes.append(TRUNCATED_EXPORT)


def _messages(text: str) -> tuple[list[str], str]:
    """The "message" values of `text`, and the text they leave that the next block may complete."""
    found: list[str] = []
    position = 0
    while True:
        key = text.find(_MESSAGE_KEY, position)
        if key < 0:
            return found, text[max(position, len(text) - len(_MESSAGE_KEY)):]
        after = key + len(_MESSAGE_KEY)
        if text.startswith(': "', after):  # as the AWS CLI indents it; then as jq -c and the API write it
            start = after + 3
        elif text.startswith(':"', after):
            start = after + 2
        else:
            tail = _KEY_TAIL.match(text, after)
            if tail is None:
                if _KEY_TAIL_CUT.fullmatch(text, after):
                    return found, text[key:]
                position = after  # "message" as a value, not a key
                continue
            start = tail.end()
        try:
            value, position = _scanstring(text, start, False)
        except ValueError as error:
            end = _STRING_END.match(text, start)
            if end is None or str(error).startswith("Unterminated"):
                return found, text[key:]
            value, position = _lenient(text[start:end.end() - 1]), end.end()
        found.append(value.rstrip("\r\n"))


def _lenient(raw: str) -> str:
    """A JSON string's value despite a bad escape: the bad escapes as written."""
    try:
        return str(json.loads('"' + re.sub(r'\\(?!["\\/bfnrt]|u[0-9a-fA-F]{4})', r"\\\\", raw) + '"', strict=False))
    except ValueError:
        return raw


def _read_head(stream: IO[bytes]) -> bytes:
    head = b""
    while len(head) < _HEAD:
        chunk = stream.read(_HEAD - len(head))
        if not chunk:
            break
        head += chunk
    return head


def _text_blocks(chunks: Iterable[bytes], export: bool, notes: list[str]) -> Iterator[str]:
    return _export_blocks(chunks, notes) if export else _line_blocks(chunks)


def scan(stream: IO[bytes], only_pod: str | None = None, on_line: Callable[[KeptLine], None] | None = None,
         block_size: int = BLOCK) -> LogReport:
    """Keep the DRA lines, per pod. The scheduler handles one pod per scheduling cycle, so allocator lines, which
    name no pod, belong to the pod most recently named. `on_line` sees each kept line as it is read."""
    report = LogReport()
    head = _read_head(stream)
    blocks = _text_blocks(_chunks(stream, block_size, head=head), is_cloudwatch_export(head), report.notes)
    _scan_blocks(blocks, report, "", only_pod, on_line)
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
    with open(path, "rb") as stream:
        export = is_cloudwatch_export(_read_head(stream))
    parts = _parts(path, size, workers)
    if len(parts) == 1:
        return _joined([_scan_part(path, *parts[0], block_size, export)])
    with _signals_held():
        pool = multiprocessing.get_context().Pool(len(parts), initializer=_leave_signals_to_the_parent)
    try:
        scanned = pool.starmap(_scan_part, [(path, start, end, block_size, export) for start, end in parts])
    finally:
        with _signals_held():
            pool.terminate()
    return _joined(scanned)


MAX_WORKERS = 8
PARALLEL_BYTES = 32 << 20  # below this, starting processes costs more than it saves
_BEFORE_ANY_POD = "\0before any pod"  # a part's lines before it names a pod: the pod of the part before


def _parts(path: str, size: int, count: int) -> list[tuple[int, int]]:
    """`count` byte ranges of about equal size, each starting at the start of a line (an export's events are on
    lines of their own when it is indented; one on a single line is one part)."""
    starts = [0]
    with open(path, "rb") as stream:
        for index in range(1, count):
            stream.seek(max(size * index // count, starts[-1]))
            while True:  # to the next line start, in pieces: a line may be gigabytes long
                piece = stream.readline(1 << 20)
                if not piece or piece.endswith(b"\n"):
                    break
            if stream.tell() < size and stream.tell() > starts[-1]:
                starts.append(stream.tell())
    return list(zip(starts, [*starts[1:], size], strict=True))


_ENDING = {signal.SIGINT, signal.SIGTERM}


@contextlib.contextmanager
def _signals_held() -> Iterator[None]:
    """Ctrl-C and SIGTERM wait while the pool starts or stops. A signal ends gpu-dra through its exit handlers, and
    multiprocessing's (Lib/multiprocessing/util.py _exit_function) stop a pool whole only once it has started and
    before it stops: in between, they terminate its workers and wait for the ones its own thread starts in their
    place, forever."""
    held = signal.pthread_sigmask(signal.SIG_BLOCK, _ENDING)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, held)


def _leave_signals_to_the_parent() -> None:
    """Workers leave Ctrl-C to the parent, which stops them: one message, exit 130, no worker tracebacks. SIGTERM
    ends a worker at once, silently, as by default: it is how the parent's exit handlers stop the pool
    (`Pool.terminate()`; a worker ignoring it would leave that waiting), and a handler inherited from the parent
    through fork would run the parent's exit handlers in the worker. A worker forked while the parent held the
    signals (`_signals_held`) starts with them held: a SIGTERM that came since ends it here."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, _ENDING)


# What a worker sends back: lines read, lines kept, per-device lines seen, panics, notes, the pod at its end, and per
# pod (name, count, claims, final reason, last lines as plain tuples), plain data that pickles fast.
_PodPart = tuple[str, int, tuple[str, ...], "str | None", list[tuple[int, str, str, str]]]
_Part = tuple[int, int, bool, int, list[str], str, list[_PodPart]]


def _scan_part(path: str, start: int, end: int, block_size: int, export: bool = False) -> _Part:
    report = LogReport()
    with open(path, "rb") as stream:
        stream.seek(start)
        blocks = _text_blocks(_chunks(stream, block_size, end - start), export, report.notes)
        last_pod = _scan_blocks(blocks, report, _BEFORE_ANY_POD if start else "", None, None)
    pods = [(log.pod, log.count, tuple(log.claims), log.reason,
             [(line.number, line.caller, line.message, line.detail) for line in log.recent])
            for log in report.pods.values()]
    return report.scanned, report.kept, report.per_device_lines, report.panics, report.notes, last_pod, pods


def _joined(parts: list[_Part]) -> LogReport:
    report = LogReport()
    current_pod = ""
    for scanned, kept, per_device_lines, panics, notes, last_pod, pods in parts:
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
        report.panics += panics
        report.notes += [note for note in notes if note not in report.notes]
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
            # a line without its header (prefix, level, date, time, thread) is the same text at every retry of a
            # pod: klog at the start of the line is the common case, cut without a regular expression; JSON carries
            # its time inside, so each JSON line is read
            if text[:1] in "IWEF" and text[1:2].isdigit() and (bracket := text.find("] ")) > 0:
                key: str | None = text[text.rfind(" ", 0, bracket) + 1:]
            elif text.lstrip()[:1] == "{":
                key = None
            else:
                located = _locate(text)
                key = located.key if located is not None else ""
            if key is None:
                reading = _Reading.of(text)
            elif key in readings:
                reading = readings[key]
            else:
                if len(readings) >= CACHED_TEXTS:
                    readings.clear()
                reading = readings[key] = _Reading.of(text) if key else None
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
            report.panics += reading.panic
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

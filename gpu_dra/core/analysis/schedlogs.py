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

Scheduler logs run to gigabytes, and most of their lines are not about DRA. The bytes are read in large blocks;
one RE2 pass over a block finds the runs of lines that can be DRA lines (candidates), and only those are decoded and
read; a block after one of mostly DRA lines (an allocator's at V(7)) is read line by line instead. A line whose text
(without its header) was seen before is looked up, not read again, since a Pending pod is retried and logs the same
lines each time (after a block of mostly new lines, as at V(7), the next blocks' lines are read each); a new line in
klog's own form is read through its skeleton, the line without its quoted values, when its pairs are all plain
(_Skeleton: a log has a few skeletons), else for the few keys the report needs, key by key (_PlainPairs), and what
the report shows of a line is made only for the lines it shows. A large file is read in parts by one
process per core this process may run on (scan_file), joined in order as if read in one go.

Memory does not grow with the log or with its pods. Per pod the report keeps a count, its claims, its final reason
and its last TAIL lines, for at most MAX_PODS pods: a pod's record is dropped once MAX_PODS changes of pod have come
since its last line, and a note says how many lines were counted but are not listed. Besides that, the CACHED_TEXTS
remembered readings and as many message, caller and pair shapes.
"""

from __future__ import annotations

import codecs
import json
import multiprocessing
import os
import re
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from json import decoder as _json_decoder
from typing import IO, Any, NamedTuple

import re2

from gpu_dra.core.workers import leave_signals_to_the_parent, signals_held
from gpu_dra.core.yamlsource import collector_paused

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
MAX_PODS = 100_000  # changes of pod after which a pod's record is dropped: at most this many pods are held
BLOCK = 8 << 20
CACHED_TEXTS = 20_000  # distinct line texts whose reading is remembered (a few MB at most)
_HEAD = 4096  # bytes read to tell a CloudWatch JSON export from a log
_LONGEST_LINE = 64 << 20  # a "line" longer than this is cut: no log writes one, and memory stays flat

# A line is a candidate when it holds any of these fragments: a superset of what _is_dra decides exactly (a DRA
# caller or a DRA word). Fragments, not words, so that no lower-cased copy of the block is needed: "laim" is in claim,
# Claim and ResourceClaim (and claims.go, claiminfo.go); "llocat" in allocator, allocateddevices and Allocation;
# "ynamic" in dynamicresources, DynamicResources and dynamic resources; "lass" in device class and DeviceClass;
# "lice" in resource slice and ResourceSlice; "dra" in dra_manager, dra_plugin and the dra-manager logger;
# "onstraint" in constraint.go and its loggers' names. Every message of tracker.go names a ResourceSlice, DeviceClass
# or DeviceTaintRule, and pools_*.go log nothing (v0.35.0).
_CANDIDATE_FRAGMENTS = ("llocat", "laim", "ynamic", "dra", "lice", "lass", "CEL", "structured", "onstraint",
                        "DeviceTaint", PANIC_MESSAGE)  # the most frequent in a V(7) log first (_scan_blocks, dense)


def _runs_of_candidates() -> Any:
    """RE2 over the raw bytes (Latin-1: any byte but a newline is a line's, valid UTF-8 or not; the fragments are
    ASCII, which UTF-8 and its replacement of bad bytes leave as they are): a match is a run of candidate lines, each
    with its newline. One pass of RE2's automaton finds them all, where a `str.find` per fragment took a pass each
    and Python's `re` is slower still."""
    options = re2.Options()
    options.encoding = re2.Options.Encoding.LATIN1
    fragments = b"|".join(fragment.encode() for fragment in _CANDIDATE_FRAGMENTS)  # letters and spaces only
    return re2.compile(rb"(?:[^\n]*(?:" + fragments + rb")[^\n]*\n)+", options)


_CANDIDATE_RUNS = _runs_of_candidates()

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


class KeptLine(NamedTuple):
    """What the report shows of a line: its number, caller, message and key=value details (the pod's aside)."""

    number: int
    caller: str
    message: str
    detail: str


_Shown = tuple[str, str, str]  # what the report shows of a line: its caller, message and key=value details


class _Reading(NamedTuple):
    """What a line's text says, whatever its number and timestamp. A scheduler retries a Pending pod every few
    seconds and logs the same lines each time, so most DRA lines of a long log are read once and then looked up.
    `shown` is what the report shows of the line, or the line itself where that is parsed only if shown (_shown)."""

    dra: bool
    pod: str
    claims: tuple[str, ...]
    outcome: str | None
    per_device: bool
    panic: bool
    shown: _Shown | str

    @classmethod
    def of(cls, text: str) -> _Reading | None:
        match = _KLOG_HEADER.match(text)
        if match:  # the common case, without the detour
            caller, end = match.group(1), match.end()
            if text[end:end + 1] == '"' and "\\" not in text:  # the header holds no quote and no backslash
                reading = _Skeleton.reading(text, caller, text.split('"'))
                if reading is not None:
                    return reading
            return cls._of_record(text, caller, text[end:], False, plain_tried=True)
        if text.lstrip().startswith("{"):
            line = _parse_json(0, text)
            return None if line is None else cls._of_fields(text, line.caller, line.message, line.fields)
        located = _locate(text)
        return None if located is None else cls._of_record(text, *located)

    @classmethod
    def _of_record(cls, text: str, caller: str, rest: str, ktesting: bool, plain_tried: bool = False) -> _Reading:
        """`plain_tried`: _Skeleton.reading found the line not fully plain."""
        kind = _caller_kind(caller)
        if not ktesting:
            if not plain_tried and rest[:1] == '"' and "\\" not in rest:
                reading = _Skeleton.reading(text, caller, rest.split('"'))
                if reading is not None:
                    return reading
            if kind != 1:  # a generic caller's DRA words are looked for in all values
                try:
                    return cls._of_plain(text, caller, rest, kind)
                except _NotPlain:
                    pass
        line = _parse_record(0, text, caller, rest, ktesting)
        return cls._of_fields(text, caller, line.message, line.fields)

    @classmethod
    def _of_fields(cls, text: str, caller: str, message: str, fields: dict[str, str],
                   shown: _Shown | str | None = None) -> _Reading:
        """The reading of a line parsed whole, every key=value pair read by _KV (`shown`: what the report shows of
        it, if not made here)."""
        return cls(_is_dra(caller, message, fields.get, fields.values), _pod(fields.get), tuple(_claims(fields.get)),
                   _outcome(message, fields.get), _message_facts(message)[0],
                   message.startswith(PANIC_MESSAGE), (caller, message, _detail(fields)) if shown is None else shown)

    @classmethod
    def _of_plain(cls, text: str, caller: str, rest: str, kind: int) -> _Reading:
        """The reading of a line in klog's own form (a quoted message, then key=value pairs, no backslash), read
        one key at a time: what the full parse would give, or _NotPlain where that cannot be told so. The keys of
        the common lines are looked up here, the others through _PlainPairs."""
        close = rest.find('"', 1) if rest[:1] == '"' and "\\" not in rest else -1
        if close < 0:
            raise _NotPlain
        message = rest[1:close]
        tail = rest[close + 1:].lstrip()
        per_device, panic, outcome = _MESSAGES.get(message) or _message_facts(message)
        # the keys _outcome reads: without them it says what it says of the message alone
        if panic or "reason=" in tail or "err=" in tail or "status=" in tail or "success=" in tail:
            outcome = _PlainPairs(tail).outcome(message, outcome)
        at = tail.find("pod=")
        if at < 0:
            pod = ""
        elif ((not at or tail[at - 1] == " " and (_PLAIN_BEFORE.get(tail[:at]) or _plain_before(tail[:at])))
              and tail[at + 4:at + 5] == '"' and tail.find("pod=", at + 4) < 0
              and (end := tail.find('"', at + 5)) >= 0):
            pod = tail[at + 5:end]  # _PlainPairs.get("pod") where a scheduler's lines have it, with fewer steps
        else:
            pod = (_PlainPairs(tail).get("pod") or "").strip('"')  # _pod: a plain line has no backslash
        return tuple.__new__(cls, (  # made as tuple() makes it: NamedTuple's own __new__ is a Python call
            kind == 2 or _is_dra(caller, message, _PlainPairs(tail).get, _NotPlain.raised), pod,
            tuple(_claims(_PlainPairs(tail).get)) if "laim" in tail and (
                "claim=" in tail or "Claim=" in tail or "claims=" in tail or "laim " in tail or 'laim "' in tail)
            else (),
            outcome, per_device, panic, text))


_UNREAD = _Reading(False, "", (), None, False, False, "")  # a text whose reading is not remembered
_NOTHING = _Reading(False, "", (), None, False, False, "")  # the reading of a line that is none (no klog, no JSON)


# The keys whose values a line's reading may depend on, but for a generic caller's (all of them): _pod, _claims
# (the claim keys and the texts that may name one), _outcome, and _is_dra for a caller of other code.
_CLAIMS_READ = frozenset((*_CLAIM_KEYS, "status", "err", "reason"))
_READ_KEYS = _CLAIMS_READ | {"pod", "success", "panic"}
_OTHER_CODE_READ_KEYS = _READ_KEYS | {"logger", "plugin"}


class _Skeleton(NamedTuple):
    """A line in klog's form whose pairs are all plain (_PLAIN_SHAPE), each key once, read through its skeleton: the
    caller, the message and the pairs with their quoted values left out. The full parse reads such pairs as written
    (a quoted value ends at the next quote, a bare one at the next space), so the skeleton says which value each key
    has, and which values the reading needs: at V(7) the allocator logs a few skeletons, in lines that differ in the
    quoted pod, node and device they name. A line is taken as its parts between quotes: the text before the message
    (ignored), the message, then the pairs' text and their quoted values in turn.

    `fixed`: the reading but its pod, claims and shown, when no quoted value but the pod's and the claim keys' is
    read; `pod_at`: where the pod's quoted value is in the parts (0: none); `claims_at`: the claim keys with a quoted
    value and where it is, `claims_read`: the other values _claims reads; `pairs`: each key, where its quoted value
    is (0: none) and its bare value; `shown`: the pairs the report shows (_shown_plain), `key=`, where the quoted
    value is, the bare value as shown."""

    kind: int
    fixed: _Reading | None
    pod_at: int
    claims_at: tuple[tuple[str, int], ...]
    claims_read: dict[str, str]
    pairs: tuple[tuple[str, int, str], ...]
    shown: tuple[tuple[str, int, str], ...]

    @staticmethod
    def reading(text: str, caller: str, parts: list[str]) -> _Reading | None:
        """The line's reading (shown: the line, but for a generic caller's line read whole), or None when it is not
        fully plain."""
        skeleton = _Skeleton.find(caller, parts)
        if skeleton is None:
            return None
        fixed = skeleton.fixed
        if fixed is None:
            fields = {key: parts[at] if at else value for key, at, value in skeleton.pairs}
            return _Reading._of_fields(text, caller, parts[1], fields, None if skeleton.kind == 1 else text)
        claims = fixed.claims
        if skeleton.claims_at:
            values = {**skeleton.claims_read, **{key: parts[at] for key, at in skeleton.claims_at}}
            claims = tuple(_claims(values.get))
        return tuple.__new__(_Reading, (fixed.dra, parts[skeleton.pod_at] if skeleton.pod_at else fixed.pod,
                                        claims, fixed.outcome, fixed.per_device, fixed.panic, text))

    @staticmethod
    def find(caller: str, parts: list[str]) -> _Skeleton | None:
        """The skeleton of a line of these parts, or None when the line is not fully plain."""
        if len(parts) < 3 or not len(parts) % 2:  # no message, or a quote left open
            return None
        key = f'{caller}"{parts[1]}"' + '""'.join(parts[2::2])
        skeleton = _SKELETONS.get(key, _UNKNOWN)
        if skeleton is _UNKNOWN:
            if len(_SKELETONS) >= CACHED_TEXTS:
                _SKELETONS.clear()
            skeleton = _SKELETONS[key] = _Skeleton._of(caller, parts)
        return skeleton

    @staticmethod
    def _of(caller: str, parts: list[str]) -> _Skeleton | None:
        shape = '""'.join([parts[2].lstrip(), *parts[4::2]])
        if shape and _PLAIN_SHAPE.fullmatch(shape + " ") is None:
            return None
        pairs, at = [], 3  # the quoted values are parts[3], parts[5], ...
        for pair in shape.split(" ") if shape else ():
            key, _, value = pair.partition("=")
            pairs.append((key, at if value == '""' else 0, value))
            at += 2 if value == '""' else 0
        if len({key for key, _, _ in pairs}) < len(pairs):
            return None
        kind = _caller_kind(caller)
        read = _READ_KEYS if kind == 2 else _OTHER_CODE_READ_KEYS
        quoted = {key: at for key, at, _ in pairs if at}
        shown = tuple((f"{key}=", at, "<...>" if value == "<" else value) for key, at, value in pairs
                      if key not in ("pod", "logger"))
        if quoted.keys() if kind == 1 else quoted.keys() & read - {"pod", *_CLAIM_KEYS}:  # the line is read whole
            return _Skeleton(kind, None, 0, (), {}, tuple(pairs), shown)
        fields = {key: "" if at else value for key, at, value in pairs}  # the quoted values read: the pod's alone
        return _Skeleton(kind, _Reading._of_fields("", caller, parts[1], fields, ""), quoted.get("pod", 0),
                         tuple((key, at) for key, at in quoted.items() if key in _CLAIM_KEYS),
                         {key: value for key, at, value in pairs if not at and key in _CLAIMS_READ}, tuple(pairs),
                         shown)

    def detail(self, parts: list[str]) -> str:
        """The line's key=value details as shown (_detail)."""
        return " ".join([key + ("<...>" if parts[at] == "<" else parts[at]) if at else key + value
                         for key, at, value in self.shown])


_SKELETONS: dict[str, _Skeleton | None] = {}
_UNKNOWN = _Skeleton(0, None, 0, (), {}, (), ())


class _NotPlain(Exception):
    """A line that _PlainPairs cannot read as the full parse would: it is parsed whole."""

    @classmethod
    def raised(cls) -> list[str]:
        """All the values of a line's pairs (what _is_dra reads of a generic caller's line): the full parse's."""
        raise cls


# Pairs as klog writes them (kubernetes/klog@v2.130.1:internal/serialize/keyvalues.go): `key=value`, one space
# apart, a value Go-quoted or bare. Without backslashes, a run of them is read by _KV exactly as written here: a key
# at the start or after a space, a quoted value up to the next quote, a bare one up to the next space. A run with a
# bare value that holds quotes (`["a/b"]`) is left to _KV.
_PLAIN_SHAPE = re.compile(r'(?:\w[\w.]*=(?:""|[^\s"\\]+) )*')
_PLAIN_SHAPES: dict[str, bool] = {}  # a few per message: `logger="" pod="" node="" ` before a claim=
_PLAIN_BEFORE: dict[str, bool] = {}  # the texts before a pod=: mostly one, `logger="..." `


def _plain_before(prefix: str) -> bool:
    """Whether `prefix`, a line's text before a key, is a run of plain pairs each followed by a space. Told from
    its shape, the text with what its quotes hold left out: a quoted value is plain whatever it holds (no quote by
    the split, no backslash in a plain line), so lines of a message share a few shapes where their values differ."""
    parts = prefix.split('"')
    if not len(parts) % 2:
        return False  # a quote left open
    shape = '""'.join(parts[::2])
    plain = _PLAIN_SHAPES.get(shape)
    if plain is None:
        plain = _PLAIN_SHAPE.fullmatch(shape) is not None
        if len(_PLAIN_SHAPES) < CACHED_TEXTS:
            _PLAIN_SHAPES[shape] = plain
    if len(_PLAIN_BEFORE) < CACHED_TEXTS:  # the few texts seen before a key again and again
        _PLAIN_BEFORE[prefix] = plain
    return plain


class _PlainPairs:
    """The key=value pairs after a klog message, one key looked up at a time: a scheduler's line has a dozen pairs
    and the report needs two or three of them. A key is taken where the text before it is a run of plain pairs and
    nothing else in the text can be that key: then _KV, which reads the pairs in turn, finds the same value there.
    Anything else raises _NotPlain."""

    __slots__ = ("tail",)

    def __init__(self, tail: str):
        self.tail = tail

    def get(self, key: str) -> str | None:
        tail = self.tail
        needle = key + "="
        at = tail.find(needle)
        if at < 0:
            return None
        if at and tail[at - 1] != " " or tail.find(needle, at + 1) >= 0:  # not the one key of the common case
            at = self._key_at(needle, at)
            if at < 0:
                return None
        if at and not _plain_before(tail[:at]):
            raise _NotPlain
        value = self._value(at + len(needle))
        if value is None:
            raise _NotPlain
        return value

    def _value(self, start: int) -> str | None:
        """The value _KV reads after a key's `=` at `start`, without backslashes (None: it reads none there)."""
        tail = self.tail
        first = tail[start:start + 1]
        if first == '"':
            end = tail.find('"', start + 1)
            if end >= 0:
                return tail[start + 1:end]
        elif not first or first.isspace():
            return None
        return tail[start:].split(None, 1)[0]

    def outcome(self, message: str, of_message: str | None) -> str | None:
        """_outcome of the line, `of_message` what it says of the message alone. When every value written after
        `reason=`, `err=` and `status=` is no reason, and none after `success=` is true, whichever of them are
        keys, that is it (a V(7) allocator line ends with `err=null`); else the keys are read."""
        tail = self.tail
        if message.startswith(PANIC_MESSAGE):
            return _outcome(message, self.get)
        for needle in ("reason=", "err=", "status=", "success="):
            found = tail.find(needle)
            while found >= 0:
                value = self._value(found + len(needle))
                if value == "true" if needle == "success=" else value not in _NO_REASON:
                    return _outcome(message, self.get)
                found = tail.find(needle, found + 1)
        return of_message

    def _key_at(self, needle: str, found: int) -> int:
        """Where the one `needle` that may be a key is (-1: none is), from its first occurrence `found`."""
        tail = self.tail
        at = -1
        while found >= 0:
            before = tail[found - 1] if found else " "
            if before == " ":
                if at >= 0:
                    raise _NotPlain  # the key twice, or inside a quoted value
                at = found
            elif before == "." or not (before.isalnum() or before == "_"):
                raise _NotPlain  # `.key=` and `"key=` may be keys to _KV; after a word character it is none
            found = tail.find(needle, found + 1)
        return at


@dataclass(slots=True)
class PodLog:
    """One pod's DRA lines: how many, the claims named, the final reason and the last TAIL lines, as shown. While
    the log is read, `read` holds the last lines' numbers and texts; `recent` what is shown of them."""

    pod: str
    count: int = 0
    claims: set[str] | frozenset[str] = frozenset()  # a set once a claim is named
    reason: str | None = None
    recent: list[KeptLine] = field(default_factory=list)
    read: list[tuple[int, _Shown | str]] = field(default_factory=list)
    first: int = 0  # the change of pod (_Pods.changes) at which the record was made, and at its last line
    last: int = 0
    whole: bool = True  # whether the pod's first line made it (told within the first MAX_PODS + 1 changes: _joined)

    def add_claims(self, claims: Iterable[str]) -> None:
        """The claims a line names."""
        self.claims = {*self.claims, *claims}

    def settle(self) -> None:
        """What is shown of the lines read (see _shown), after the ones shown already, the last TAIL."""
        self.recent = [*self.recent, *(KeptLine(number, *_shown(shown)) for number, shown in self.read)][-TAIL:]
        self.read = []


class _Pods:
    """The pods' records, in the order they were made. A change of pod is a DRA line of another pod than the line
    before; a record is dropped once MAX_PODS changes have come since its last line, so at most MAX_PODS are held
    whatever the log (each change brings one pod). The rule depends only on what came between two lines of a pod,
    which is what lets a file read in parts be joined as if read in one go (_joined)."""

    def __init__(self, logs: dict[str, PodLog]):
        self.logs = logs
        self.by_last: OrderedDict[str, PodLog] = OrderedDict()  # least recently seen first
        self.changes = 0
        self.last_pod: str | None = None
        self.current = PodLog("")  # the record of last_pod, once there is one
        self.first_pod: str | None = None  # the first line's pod, and the first other than kept_first
        self.first_other: str | None = None
        self.early: set[str] = set()  # pods first seen within the first MAX_PODS + 1 changes
        self.kept_first = ""  # a pod that is never dropped here (_BEFORE_ANY_POD: the joining decides)

    def log(self, pod: str) -> PodLog:
        """The record of `pod`, whose line comes next."""
        if pod == self.last_pod:
            return self.current
        if self.last_pod is None:
            self.first_pod = pod
        if self.first_other is None and pod != self.kept_first:
            self.first_other = pod
        self.changes += 1
        self.last_pod = pod
        by_last = self.by_last
        oldest = self.changes - MAX_PODS + 1  # the change of the oldest last line kept
        while by_last:
            name, oldest_log = next(iter(by_last.items()))
            if oldest_log.last >= oldest:
                break
            del by_last[name], self.logs[name]
        log = self.logs.get(pod)
        if log is None:
            whole = pod not in self.early and self.changes <= MAX_PODS + 1
            if whole:
                self.early.add(pod)
            log = self.logs[pod] = PodLog(pod, first=self.changes, whole=whole)
        if pod != self.kept_first:
            by_last[pod] = log
            by_last.move_to_end(pod)
        log.last = self.changes
        self.current = log
        return log


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

    def note_dropped(self) -> None:
        """Say how many DRA lines belong to records dropped to keep memory flat (see _Pods)."""
        dropped = self.kept - sum(log.count for log in self.pods.values())
        if dropped:
            self.notes.append(f"{dropped:,} DRA line(s) counted above are not listed: a pod's lines are dropped once "
                              f"{MAX_PODS:,} changes of pod have come after its last one, so that memory stays flat "
                              "(a pod seen again starts anew); `--pod NAMESPACE/NAME` shows every line of one pod")


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


_SHOWN: dict[str, _Shown] = {}  # the lines parsed to be shown: a retried pod's are the same texts


def _shown(shown: _Shown | str) -> _Shown:
    """What the report shows of a line read (_Reading.shown)."""
    if isinstance(shown, tuple):
        return shown
    found = _SHOWN.get(shown)
    if found is None:
        found = _shown_plain(shown)
        if found is None:
            line = parse_line(0, shown)
            assert line is not None, "a line read is a line parse_line reads"
            found = (line.caller, line.message, _detail(line.fields))
        if len(_SHOWN) >= CACHED_TEXTS:
            _SHOWN.clear()
        _SHOWN[shown] = found
    return found


def _shown_plain(text: str) -> _Shown | None:
    """What the report shows of a klog line whose pairs are all plain, each key once (_Skeleton): its pairs as
    written, the quotes of quoted values left out; else None."""
    match = _KLOG_HEADER.match(text)
    if match is None or text[match.end():match.end() + 1] != '"' or "\\" in text:
        return None
    parts = text.split('"')
    skeleton = _Skeleton.find(match.group(1), parts)
    return None if skeleton is None else (match.group(1), parts[1], skeleton.detail(parts))


def _last_pod_named(lines: list[str]) -> str | None:
    """The pod of the last of `lines` that names one."""
    return next(filter(None, map(_pod_named, reversed(lines))), None)


def _pod_named_between(block: bytes, start: int, end: int, errors: str) -> str | None:
    """The pod of the last line in block[start:end] that names one (klog `pod=...`, JSON `"pod":{...}`)."""
    while True:
        found = block.rfind(b"pod", start, end)
        if found < 0:
            return None
        line_start = max(block.rfind(b"\n", 0, found) + 1, start)
        pod = _pod_named(block[line_start:block.find(b"\n", found)].decode("utf-8", errors).rstrip("\r"))
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


def _line_blocks(chunks: Iterable[bytes]) -> Iterator[bytes]:
    """`chunks` in blocks of whole lines, each ending with a newline. Blocks are cut after a newline byte, which
    UTF-8 never uses inside a character, so each line decodes alone (bad bytes become U+FFFD: _LOG_ERRORS)."""
    carry = b""
    for chunk in chunks:
        chunk = carry + chunk
        cut = chunk.rfind(b"\n") + 1
        if not cut and len(chunk) > _LONGEST_LINE:  # no newline in sight: no log; cut it rather than hold it whole
            carry = b""
            yield chunk + b"\n"
            continue
        carry = chunk[cut:]
        if cut:
            yield chunk[:cut]
    if carry:
        yield carry + b"\n"


_LOG_ERRORS = "replace"  # a log's bad bytes, as they are decoded
_EXPORT_ERRORS = "surrogatepass"  # an export's messages, already text, back from the bytes they are scanned as


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


def _export_blocks(chunks: Iterable[bytes], notes: list[str]) -> Iterator[bytes]:
    """The klog lines of a CloudWatch export: its events' "message" values, decoded one by one with the C string
    decoder where they stand (json.decoder.scanstring), so that a multi-GB export is never held or parsed whole;
    pretty-printed or on one line, one document or several. A message cut off by the end of the file is noted.
    The lines come as UTF-8 again, lone surrogates of JSON escapes and all (_EXPORT_ERRORS), to be scanned as a
    log's bytes are."""
    decoder = codecs.getincrementaldecoder("utf-8")("replace")
    carry = ""
    for chunk in chunks:
        messages, carry = _messages(carry + decoder.decode(chunk))
        if messages:
            yield ("\n".join(messages) + "\n").encode("utf-8", _EXPORT_ERRORS)
        if len(carry) > _LONGEST_LINE:  # a message that does not end: skipped, memory stays flat
            carry = ""
            if LONG_MESSAGE not in notes:
                notes.append(LONG_MESSAGE)
    messages, carry = _messages(carry + decoder.decode(b"", final=True))
    if messages:
        yield ("\n".join(messages) + "\n").encode("utf-8", _EXPORT_ERRORS)
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


def _text_blocks(chunks: Iterable[bytes], export: bool, notes: list[str]) -> tuple[Iterator[bytes], str]:
    """The blocks of lines of a log or an export, and how their bytes decode."""
    return (_export_blocks(chunks, notes), _EXPORT_ERRORS) if export else (_line_blocks(chunks), _LOG_ERRORS)


def scan(stream: IO[bytes], only_pod: str | None = None, on_line: Callable[[KeptLine], None] | None = None,
         block_size: int = BLOCK) -> LogReport:
    """Keep the DRA lines, per pod. The scheduler handles one pod per scheduling cycle, so allocator lines, which
    name no pod, belong to the pod most recently named. `on_line` sees each kept line as it is read."""
    report = LogReport()
    head = _read_head(stream)
    blocks, errors = _text_blocks(_chunks(stream, block_size, head=head), is_cloudwatch_export(head), report.notes)
    with collector_paused():  # a log's lines make millions of short-lived objects, its records no cycles
        _scan_blocks(blocks, errors, report, _Pods(report.pods), "", only_pod, on_line)
        for log in report.pods.values():
            log.settle()
    report.note_dropped()
    return report


def scan_file(path: str, workers: int | None = None, block_size: int = BLOCK) -> LogReport:
    """scan() of a whole file, its parts read by several processes at once when the file is large (as grep -r and
    ripgrep do), one per core this process may run on: each part is scanned on its own, then the parts are joined
    in order, the lines of a part that come before it names any pod going to the pod the part before it ended
    with."""
    size = os.path.getsize(path)
    workers = workers if workers is not None else min(_cores(), MAX_WORKERS)
    if workers < 2 or size < PARALLEL_BYTES:
        with open(path, "rb") as stream:
            return scan(stream, block_size=block_size)
    with open(path, "rb") as stream:
        export = is_cloudwatch_export(_read_head(stream))
    parts = _parts(path, size, workers)
    if len(parts) == 1:
        return _joined([_scan_part(path, *parts[0], block_size, export)])
    context = multiprocessing.get_context()
    workers_started: list[tuple[multiprocessing.process.BaseProcess, Any]] = []
    try:
        with signals_held():
            for start, end in parts:
                receiver, sender = context.Pipe(duplex=False)
                worker = context.Process(target=_send_part, args=(sender, path, start, end, block_size, export),
                                         daemon=True)
                workers_started.append((worker, receiver))
                worker.start()
                sender.close()
        # each part joined as it comes, in order, by this thread: only the parts not yet joined are held, and a
        # result that cannot be received (a worker gone, no memory left for it) is an error here, not a wait
        return _joined(_received(receiver) for _, receiver in workers_started)
    finally:
        with signals_held():
            for started, receiver in workers_started:
                if started.is_alive():
                    started.terminate()
                started.join()
                receiver.close()


class WorkerLost(RuntimeError):
    """A worker reading part of a log ended without sending what it read (killed, or out of memory)."""


def _received(receiver: Any) -> _Part:
    try:
        done, sent = receiver.recv()
    except EOFError:
        raise WorkerLost("a process reading part of the log ended before it was done (killed, or out of "
                         "memory?)") from None
    if not done:
        raise sent  # the worker's exception, as Pool would raise it
    return sent  # type: ignore[no-any-return]


def _send_part(sender: Any, path: str, start: int, end: int, block_size: int, export: bool) -> None:
    """A worker: scan its part and send the result, or the exception that stopped it."""
    leave_signals_to_the_parent()
    try:
        result: tuple[bool, _Part | Exception] = (True, _scan_part(path, start, end, block_size, export))
    except Exception as error:
        result = (False, error)
    try:
        sender.send(result)
    except Exception:  # it cannot be sent (no memory left): the parent says the part was lost, no traceback here
        os._exit(1)


def _cores() -> int:
    """The cores this process may run on (`taskset -c 0 gpu-dra logs ...` reads with one), else the machine's."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


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


# What a worker sends back: lines read, lines kept, per-device lines seen, panics, notes, the pod at its end; its
# changes of pod (_Pods): how many, the first line's pod, the first other than _BEFORE_ANY_POD, the last line's; per
# pod (name, count, claims, final reason, last lines as shown, change at which its record was made and at its last
# line, whether the pod's first line made it), plain data that pickles fast.
_PodPart = tuple[str, int, tuple[str, ...], "str | None", list[tuple[int, str, str, str]], int, int, bool]
_Part = tuple[int, int, bool, int, list[str], str, int, "str | None", "str | None", "str | None", list[_PodPart]]


def _scan_part(path: str, start: int, end: int, block_size: int, export: bool = False) -> _Part:
    report = LogReport()
    pods = _Pods(report.pods)
    if start:
        pods.kept_first = _BEFORE_ANY_POD  # the pod of the part before: whether its record lasts is the join's
    with open(path, "rb") as stream, collector_paused():
        stream.seek(start)
        blocks, errors = _text_blocks(_chunks(stream, block_size, end - start), export, report.notes)
        last_pod = _scan_blocks(blocks, errors, report, pods, _BEFORE_ANY_POD if start else "", None, None)
        records = [(log.pod, log.count, tuple(log.claims), log.reason,
                    [(number, *_shown(shown)) for number, shown in log.read], log.first, log.last, log.whole)
                   for log in report.pods.values()]
    return (report.scanned, report.kept, report.per_device_lines, report.panics, report.notes, last_pod,
            pods.changes, pods.first_pod, pods.first_other, pods.last_pod, records)


def _joined(parts: Iterable[_Part]) -> LogReport:
    """The parts' reports as one, as scan() reads the whole file: line numbers run on, a part's lines before it
    names a pod go to the pod the part before ended with, and a record lasts as _Pods decides in one pass. A part
    counts its changes of pod from its own first line; here they become the file's (its first is none if its first
    line's pod is the last line's before it, and the change to its first named pod is none if that is the pod its
    first lines went to), and a record of the parts before goes on with the part's record of its pod if the part
    kept every line of it and fewer than MAX_PODS changes came between, else it is dropped."""
    report = LogReport()
    logs = report.pods
    changes, last_line_pod = 0, None  # the file's changes of pod so far and the last DRA line's pod
    current_pod = ""
    for (scanned, kept, per_device_lines, panics, notes, last_pod, part_changes, first_pod, first_other,
         part_last_pod, records) in parts:
        before = report.scanned
        went_to = current_pod or "(no pod named)"  # where the part's lines before it names a pod go

        def named(pod: str | None, went_to: str = went_to) -> str | None:
            return went_to if pod == _BEFORE_ANY_POD else pod

        shift = changes - (first_pod is not None and named(first_pod) == last_line_pod)
        named_shift = shift - (first_pod == _BEFORE_ANY_POD and first_other == went_to)
        for pod, count, claims, reason, recent, first, last, whole in records:
            at = shift if pod == _BEFORE_ANY_POD else named_shift
            pod = named(pod) or pod
            log = logs.get(pod)
            if log is not None and not (whole and at + first - log.last < MAX_PODS):
                del logs[pod]
                log = None
            if log is None:
                log = logs[pod] = PodLog(pod)
            log.count += count
            if claims:
                log.add_claims(claims)
            log.reason = reason or log.reason
            log.recent = [*log.recent, *(KeptLine(number + before, caller, message, detail)
                                         for number, caller, message, detail in recent)][-TAIL:]
            log.last = at + last
        end = (named_shift if first_other is not None else shift) + part_changes
        if end > changes:  # a record the part did not go on with lasts MAX_PODS changes
            for pod in [pod for pod, log in logs.items() if end - log.last >= MAX_PODS]:
                del logs[pod]
        changes, last_line_pod = end, named(part_last_pod) if part_last_pod is not None else last_line_pod
        current_pod = current_pod if last_pod == _BEFORE_ANY_POD else last_pod
        report.scanned += scanned
        report.kept += kept
        report.per_device_lines |= per_device_lines
        report.panics += panics
        report.notes += [note for note in notes if note not in report.notes]
    report.note_dropped()
    return report


def _mostly(dra_lines: int, lines: int) -> bool:
    """Whether a block was mostly DRA lines, so that the next is read line by line (_scan_blocks)."""
    return dra_lines * 2 > lines


def _mostly_new(new_lines: int, lines: int) -> bool:
    """Whether a block was mostly lines not seen before, so that the next MEMO_OFF_BLOCKS blocks' lines are read
    each, not looked up (_scan_blocks)."""
    return new_lines * 2 > lines


MEMO_OFF_BLOCKS = 8


def _scan_blocks(blocks: Iterable[bytes], errors: str, report: LogReport, pods: _Pods, current_pod: str,
                 only_pod: str | None, on_line: Callable[[KeptLine], None] | None) -> str:
    """Add the DRA lines of `blocks` to `report` and `pods`; the pod being scheduled at the end. A block is read in
    the runs of candidate lines RE2 finds, or, after a block of mostly DRA lines (an allocator's at V(7), where RE2
    takes longer than the lines' own check), line by line, as one run whose lines that are no candidates stand
    aside (`aside`) as the lines between runs do."""
    readings: dict[str, _Reading] = {}
    # the names the loop below looks up for each of millions of lines, as local names
    fragments, unread, nothing, read_text, cached, tail = (_CANDIDATE_FRAGMENTS, _UNREAD, _NOTHING, _Reading.of,
                                                           CACHED_TEXTS, TAIL)
    number = report.scanned
    kept, panics, per_device_lines = report.kept, report.panics, report.per_device_lines
    log_pod: str | None = None  # the pod of the last DRA line, and its record (the first DRA line's to come)
    log = PodLog("")
    dense = False
    # Whether lines are looked up in `readings` (memo), or read each: most lines of a V(7) log are new (they name
    # the pod, node and device), and the look-up costs them more than reading the few seen before saves. A block
    # whose lines were mostly new turns it off for the next MEMO_OFF_BLOCKS blocks.
    memo_off = 0  # the blocks left whose lines are read each
    for block in blocks:
        first = number
        memo = not memo_off
        new_lines = 0  # lines looked up and not found, in this block
        position = 0  # where the bytes not yet looked at start: the end of the last run of candidate lines
        aside: list[str] = []  # in a dense block, the lines since the last candidate line that may name a pod
        for start, end in [(0, len(block))] if dense else (run.span() for run in _CANDIDATE_RUNS.finditer(block)):
            number += block.count(b"\n", position, start)
            between = position  # the lines before the run since the last candidate line, for its first line
            run_text = block[start:end - 1].decode("utf-8", errors)
            lines = run_text.split("\n")
            for text in lines if "\r" not in run_text else [line.rstrip("\r") for line in lines]:
                number += 1
                if dense:
                    for fragment in fragments:
                        if fragment in text:
                            break
                    else:
                        if "pod" in text:
                            aside.append(text)
                        continue
                # a line without its header (prefix, level, date, time, thread) is the same text at every retry
                # of a pod: klog at the start of the line is the common case, cut without a regular expression;
                # JSON carries its time inside, so each JSON line is read
                if not memo:
                    reading = read_text(text) or nothing
                elif text[:1] in "IWEF" and text[1:2].isdigit() and (bracket := text.find("] ")) > 0:
                    key = text[text.rfind(" ", 0, bracket) + 1:]
                    reading = readings.get(key, unread)
                    if reading is unread:
                        new_lines += 1
                        if len(readings) >= cached:
                            readings.clear()
                        reading = readings[key] = read_text(text) or nothing
                elif text.lstrip()[:1] == "{":
                    reading = read_text(text) or nothing
                else:
                    located = _locate(text)
                    if located is None:
                        reading = nothing
                    else:
                        key = located.key
                        reading = readings.get(key, unread)
                        if reading is unread:
                            if len(readings) >= cached:
                                readings.clear()
                            reading = readings[key] = read_text(text) or nothing
                dra, pod, claims, outcome, per_device, panic, shown = reading
                if pod:
                    current_pod = pod
                else:  # the pod of the last line that names one, up to this one
                    current_pod = ((_pod_named(text) if "pod" in text else "")
                                   or (_pod_named_between(block, between, start, errors) if between >= 0 else "")
                                   or _last_pod_named(aside) or current_pod)
                between = -1
                if aside:
                    aside.clear()
                if not dra:
                    continue
                pod = pod or current_pod
                if only_pod is not None and pod != only_pod:
                    continue
                kept += 1
                if per_device:
                    per_device_lines = True
                if panic:
                    panics += 1
                if pod != log_pod:
                    log_pod, log = pod, pods.log(pod or "(no pod named)")
                log.count += 1  # PodLog.add, here for the millions of lines
                if claims:
                    log.add_claims(claims)
                if outcome:
                    log.reason = outcome
                read = log.read
                read.append((number, shown))
                if len(read) > tail:
                    del read[0]
                if on_line is not None:
                    on_line(KeptLine(number, *_shown(shown)))
            position = end
        number += block.count(b"\n", position)
        current_pod = (_pod_named_between(block, position, len(block), errors) or _last_pod_named(aside)
                       or current_pod)
        dense = _mostly(kept - report.kept, number - first)
        if memo_off:
            memo_off -= 1
        elif _mostly_new(new_lines, number - first):
            memo_off = MEMO_OFF_BLOCKS
        report.scanned, report.kept, report.panics, report.per_device_lines = number, kept, panics, per_device_lines
    return current_pod

"""A line's reading (_Reading): what the report needs of a line's text, by shorter ways than the full parse where
they give what it gives, and what the report shows of the line, made only for the lines it shows (_shown).

A new line in klog's own form is read through its skeleton, the line without its quoted values, when its pairs are
all plain (_Skeleton: a log has a few skeletons), else for the few keys the report needs, key by key (_PlainPairs);
anything else is parsed whole (lines.parse_line). The caches here hold at most CACHED_TEXTS entries each.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from . import lines
from .lines import (
    _CLAIM_KEYS,
    _NO_REASON,
    CACHED_TEXTS,
    PANIC_MESSAGE,
    _caller_kind,
    _claims,
    _detail,
    _is_dra,
    _locate,
    _message_facts,
    _outcome,
    _parse_json,
    _parse_record,
    _pod,
    parse_line,
)

# Bound here, not imported by name: a method called on a name a module imports is looked up as an attribute, a bound
# method made at each call, where an assigned name's is called as it stands (LOAD_METHOD), once per line read
# (python/cpython@v3.11.7:Python/compile.c, maybe_optimize_method_call and is_import_originated).
_KLOG_HEADER = lines._KLOG_HEADER
_MESSAGES = lines._MESSAGES

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


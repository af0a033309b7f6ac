"""The bytes of a log, or of a CloudWatch Logs JSON export, as blocks of whole lines: read in large pieces, a line
no log writes (over _LONGEST_LINE) cut, an export's events' messages decoded as it is read."""

from __future__ import annotations

import codecs
import json
import re
from collections.abc import Callable, Iterable, Iterator
from json import decoder as _json_decoder
from typing import IO

BLOCK = 8 << 20  # bytes read at a time
_HEAD = 4096  # bytes read to tell a CloudWatch JSON export from a log
_LONGEST_LINE = 64 << 20  # a "line" longer than this is cut: no log writes one, and memory stays flat


def _chunks(stream: IO[bytes], size: int, limit: int | None = None, head: bytes = b"",
            ended: bool = False) -> Iterator[bytes]:
    """The next `limit` bytes (all of them if None) in pieces of `size`, starting with `head`, already read; `ended`:
    reading the head met the stream's end, so it is not read again (a terminal would wait for a second Ctrl-D)."""
    for start in range(0, len(head), size):
        yield head[start:start + size]
    if ended:
        return
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


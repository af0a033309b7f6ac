"""The scan of a log: one RE2 pass over each block finds the runs of lines that can be DRA lines (candidates), and
only those are decoded and read; a block after one of mostly DRA lines is read line by line instead, as one run whose
lines that are no candidates stand aside (`aside`) as the lines between runs do. A line whose text without its
header (prefix, level, date, time, thread) was seen before is looked up, not read again, since a Pending pod is
retried and logs the same lines each time: klog at the start of the line is the common case, cut without a regular
expression; JSON carries its time inside, so each JSON line is read. After a block of mostly new lines, as at V(7),
the next blocks' lines are read each. Each DRA line goes to its pod's record."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import IO, Any

import re2

from gpu_dra.core.yamlsource import collector_paused

from .blocks import _HEAD, BLOCK, _chunks, _read_head, _text_blocks, is_cloudwatch_export
from .lines import CACHED_TEXTS, PANIC_MESSAGE, _locate, _pod_named
from .reading import _NOTHING, _UNREAD, _Reading, _shown
from .records import TAIL, KeptLine, LogReport, _Pods

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


def scan(stream: IO[bytes], only_pod: str | None = None, on_line: Callable[[KeptLine], None] | None = None,
         block_size: int = BLOCK) -> LogReport:
    """Keep the DRA lines, per pod. The scheduler handles one pod per scheduling cycle, so allocator lines, which
    name no pod, belong to the pod most recently named. `on_line` sees each kept line as it is read."""
    report = LogReport()
    head = _read_head(stream)
    blocks, errors = _text_blocks(_chunks(stream, block_size, head=head, ended=len(head) < _HEAD),
                                  is_cloudwatch_export(head), report.notes)
    with collector_paused():  # a log's lines make millions of short-lived objects, its records no cycles
        _scan_blocks(blocks, errors, report, _Pods(report.pods), "", only_pod, on_line)
        for log in report.pods.values():
            log.settle()
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
    the runs of candidate lines RE2 finds, or, after a block of mostly DRA lines (dense: an allocator's at V(7), where
    RE2 takes longer than the lines' own check), line by line. Lines are looked up in `readings` (memo), or read
    each: most lines of a V(7) log are new (they name the pod, node and device), and the look-up costs them more than
    reading the few seen before saves. A block whose lines were mostly new turns it off for the next MEMO_OFF_BLOCKS
    blocks."""
    readings: dict[str, _Reading] = {}
    dense = False
    memo_off = 0  # the blocks left whose lines are read each
    for block in blocks:
        first, kept = report.scanned, report.kept
        current_pod, new_lines = _scan_block(block, errors, report, pods, current_pod, only_pod, on_line, readings,
                                             dense, not memo_off)
        dense = _mostly(report.kept - kept, report.scanned - first)
        if memo_off:
            memo_off -= 1
        elif _mostly_new(new_lines, report.scanned - first):
            memo_off = MEMO_OFF_BLOCKS
    return current_pod


def _scan_block(block: bytes, errors: str, report: LogReport, pods: _Pods, current_pod: str, only_pod: str | None,
                on_line: Callable[[KeptLine], None] | None, readings: dict[str, _Reading], dense: bool,
                memo: bool) -> tuple[str, int]:
    """_scan_blocks of one block: the pod being scheduled at its end, and how many lines were looked up and not
    found (see the module's docstring). The names the loop looks up for each of millions of lines are local names."""
    fragments, unread, nothing, read_text, cached, tail = (_CANDIDATE_FRAGMENTS, _UNREAD, _NOTHING, _Reading.of,
                                                           CACHED_TEXTS, TAIL)
    number, kept, panics, per_device_lines = report.scanned, report.kept, report.panics, report.per_device_lines
    log_pod, log = pods.last_pod, pods.current  # the pod of the last DRA line (or pods.log's name of it), its record
    new_lines = position = 0  # lines looked up and not found; where the bytes not yet looked at start (a run's end)
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
            if memo and text[:1] in "IWEF" and text[1:2].isdigit() and (bracket := text.find("] ")) > 0:
                key = text[text.rfind(" ", 0, bracket) + 1:]
                reading = readings.get(key, unread)
                if reading is unread:
                    new_lines += 1
                    if len(readings) >= cached:
                        readings.clear()
                    reading = readings[key] = read_text(text) or nothing
            elif not memo or text.lstrip()[:1] == "{":
                reading = read_text(text) or nothing
            elif (located := _locate(text)) is None:
                reading = nothing
            else:
                key = located.key
                reading = readings.get(key, unread)
                if reading is unread:
                    if len(readings) >= cached:
                        readings.clear()
                    reading = readings[key] = read_text(text) or nothing
            dra, pod, claims, outcome, per_device, panic, shown = reading
            current_pod = pod or ((_pod_named(text) if "pod" in text else "")  # else the last line's that names one
                                  or (_pod_named_between(block, between, start, errors) if between >= 0 else "")
                                  or _last_pod_named(aside) or current_pod)
            between = -1
            if aside:
                aside.clear()
            if not dra:
                continue
            if only_pod is not None and current_pod != only_pod:
                continue
            kept += 1
            per_device_lines = per_device_lines or per_device
            if panic:
                panics += 1
            if current_pod != log_pod:
                log_pod, log = current_pod, pods.log(current_pod or "(no pod named)")
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
    report.scanned, report.kept, report.panics, report.per_device_lines = number, kept, panics, per_device_lines
    return (_pod_named_between(block, position, len(block), errors) or _last_pod_named(aside) or current_pod,
            new_lines)

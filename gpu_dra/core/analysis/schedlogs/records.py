"""Per pod, the record of its DRA lines and the bound on how many are held (_Pods), the report they make, and the
joining of the reports of a file's parts as one pass would make it (_joined)."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import NamedTuple

from .reading import _Shown, _shown

TAIL = 20  # lines kept per pod for the report; --pod shows every line of one pod
MAX_PODS = 100_000  # changes of pod after which a pod's record is dropped: at most this many pods are held
_BEFORE_ANY_POD = "\0before any pod"  # a part's lines before it names a pod: the pod of the part before


class KeptLine(NamedTuple):
    """What the report shows of a line: its number, caller, message and key=value details (the pod's aside)."""

    number: int
    caller: str
    message: str
    detail: str


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


# What a worker sends back: lines read, lines kept, per-device lines seen, panics, notes, the pod at its end; its
# changes of pod (_Pods): how many, the first line's pod, the first other than _BEFORE_ANY_POD, the last line's; per
# pod (name, count, claims, final reason, last lines as shown, change at which its record was made and at its last
# line, whether the pod's first line made it), plain data that pickles fast.
_PodPart = tuple[str, int, tuple[str, ...], "str | None", list[tuple[int, str, str, str]], int, int, bool]
_Part = tuple[int, int, bool, int, list[str], str, int, "str | None", "str | None", "str | None", list[_PodPart]]


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


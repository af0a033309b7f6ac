"""A large file read in parts by one process per core this process may run on (scan_file), each part scanned on its
own and the parts joined in order as if the file were read in one go (records._joined)."""

from __future__ import annotations

import multiprocessing
import os
from typing import Any

from gpu_dra.core.workers import leave_signals_to_the_parent, signals_held, start_method
from gpu_dra.core.yamlsource import collector_paused

from . import records
from .blocks import BLOCK, _chunks, _read_head, _text_blocks, is_cloudwatch_export
from .reading import _shown
from .records import _BEFORE_ANY_POD, LogReport, _joined, _Part, _Pods
from .scanning import _scan_blocks, scan

MAX_WORKERS = 8
PARALLEL_BYTES = 32 << 20  # below this, starting processes costs more than it saves


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
    context: Any = multiprocessing.get_context(start_method())
    workers_started: list[tuple[multiprocessing.process.BaseProcess, Any]] = []
    try:
        with signals_held():
            for start, end in parts:
                receiver, sender = context.Pipe(duplex=False)
                worker = context.Process(target=_send_part, daemon=True, args=(
                    sender, path, start, end, block_size, export, records.MAX_PODS))
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


def _send_part(sender: Any, path: str, start: int, end: int, block_size: int, export: bool, max_pods: int) -> None:
    """A worker: scan its part and send the result, or the exception that stopped it. `max_pods`: the parent's bound
    on the pods held, which a worker started by the forkserver does not inherit."""
    records.MAX_PODS = max_pods
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


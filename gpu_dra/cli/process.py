"""The process's life: its exit codes, in one place as pip keeps its own (pypa/pip@24.0:src/pip/_internal/cli/
status_codes.py), the usage error that ends a run with exit 2, and how Ctrl-C and SIGTERM end a run: at once, with
the exit handlers run, files being written finished first and child processes killed."""

from __future__ import annotations

import atexit
import contextlib
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from typing import Any, NoReturn

EXIT_OK, EXIT_FINDINGS, EXIT_USAGE, EXIT_INTERNAL = 0, 1, 2, 3
EXIT_INTERRUPTED, EXIT_TERMINATED = 130, 143  # Ctrl-C (SIGINT), SIGTERM


class UsageError(Exception):
    """Bad arguments or environment: printed as one line, exit 2."""


def end_at_once_on_signals() -> None:
    """Until main() installs the handlers that let a file being written finish (`end_on_interrupt`), Ctrl-C ends the
    run with exit 130 and SIGTERM with 143 (128 + the signal), at once: a KeyboardInterrupt raised into an import
    prints a traceback, and nothing is written or held yet that needs cleaning up."""
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, lambda received, frame: os._exit(128 + received))


class _Interrupts:
    """Ctrl-C's and SIGTERM's state in this process."""

    held = 0  # open `uninterrupted()` blocks
    pending: int | None = None  # the exit code of a signal that came inside one
    ending = False
    pid = 0  # the process that set the handlers: a child forked from it inherits them


_interrupts = _Interrupts()
# The shell's convention, 128 + the signal's number.
_EXIT_ON = {signal.SIGINT: EXIT_INTERRUPTED, signal.SIGTERM: EXIT_TERMINATED}


def end_process(code: int) -> NoReturn:
    """End now with `code`: flush what was printed and run the exit handlers (the kubernetes client removes its
    temporary credential files, multiprocessing stops its pools' workers), without waiting for other threads or
    tearing modules down. An interrupted Pulumi program can leave its event loop waiting on executor threads forever,
    and tearing down the Pulumi SDKs takes half a second in which a Ctrl-C would kill the process by the signal
    instead of exit 130."""
    if not _interrupts.ending:
        _interrupts.ending = True
        for stream in (sys.stdout, sys.stderr):
            # OSError, ValueError: the reader went away, nothing more to say; RuntimeError: the signal came while
            # the stream was being written (a reentrant call)
            with contextlib.suppress(OSError, ValueError, RuntimeError):
                stream.flush()
        atexit._run_exitfuncs()
    os._exit(code)


def _on_interrupt(signum: int, frame: Any) -> None:
    code = _EXIT_ON[signal.Signals(signum)]
    if os.getpid() != _interrupts.pid:  # a forked child (a pool's worker): the parent's exit handlers are not its own
        os._exit(code)
    if _interrupts.held:
        _interrupts.pending = _interrupts.pending or code
    else:
        end_process(code)


def end_on_interrupt() -> None:
    """Ctrl-C (exit 130) and SIGTERM (exit 143: `kill`, `timeout`, a CI job cancelled, a container stopped) end the
    run at once, wherever they come, through `end_process`: a KeyboardInterrupt raised into a half-done import or
    inside the Pulumi runtime (which catches it and waits for its RPCs) would turn into another error, a hang or a
    lost interrupt, and SIGTERM's default would skip the exit handlers. Only the main thread can set a signal
    handler; elsewhere Python's defaults stay."""
    if threading.current_thread() is threading.main_thread():
        _interrupts.pid = os.getpid()
        for signum in _EXIT_ON:
            signal.signal(signum, _on_interrupt)


def killed(process: Any, kill: Callable[[], object] | None = None) -> Callable[[], None]:
    """A cleanup for `ended_on_exit` that kills a child process (`kill`: how, by default SIGKILL to it alone) and
    waits a moment for it to end, so that it has ended, not only been signalled, when gpu-dra has."""

    def cleanup() -> None:
        (kill or process.kill)()
        with contextlib.suppress(Exception):  # gone already, or being waited on where the signal came
            process.wait(timeout=5)
    return cleanup


@contextlib.contextmanager
def ended_on_exit(cleanup: Callable[[], object]) -> Iterator[None]:
    """`cleanup` (a child process's kill) runs also when a signal ends the run inside the block: `end_process` runs
    the exit handlers, not `finally` blocks."""
    atexit.register(cleanup)
    try:
        yield
    finally:
        atexit.unregister(cleanup)


@contextlib.contextmanager
def child_process(args: list[str], **options: Any) -> Iterator[subprocess.Popen[str]]:
    """A child process (text mode) that a signal cannot leave running: it is started and its kill registered with the
    signals held, since a SIGTERM between the fork and the registration would end gpu-dra and leave the child."""
    with uninterrupted():
        process = subprocess.Popen(args, text=True, **options)
        cleanup = killed(process)
        atexit.register(cleanup)
    try:
        with process:
            yield process
    finally:
        atexit.unregister(cleanup)


@contextlib.contextmanager
def uninterrupted() -> Iterator[None]:
    """A Ctrl-C or SIGTERM inside the block ends the run when the block is done: files are written whole or not at
    all."""
    _interrupts.held += 1
    try:
        yield
    finally:
        _interrupts.held -= 1
        if not _interrupts.held and _interrupts.pending is not None:
            end_process(_interrupts.pending)

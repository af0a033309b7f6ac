"""Worker processes that end with the run: how `gpu-dra logs` and `gpu-dra check --jobs` start and stop the
processes they fork, so that Ctrl-C and SIGTERM end the whole run at once, with one message and no worker left."""

from __future__ import annotations

import contextlib
import os
import signal
import threading
from collections.abc import Iterator

_ENDING = {signal.SIGINT, signal.SIGTERM}


@contextlib.contextmanager
def signals_held() -> Iterator[None]:
    """Ctrl-C and SIGTERM wait while workers start or stop: a worker forked meanwhile starts with them held, so that
    it does not run the parent's handlers before it has its own (`leave_signals_to_the_parent`); a signal ends
    gpu-dra through its exit handlers, and multiprocessing's (Lib/multiprocessing/util.py _exit_function) terminate
    the daemonic workers and wait for them, which they can do only once a worker has started and before it stops."""
    held = signal.pthread_sigmask(signal.SIG_BLOCK, _ENDING)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, held)


def leave_signals_to_the_parent() -> None:
    """In a worker: Ctrl-C is left to the parent, which stops the workers (one message, exit 130, no worker
    tracebacks). SIGTERM ends a worker at once, silently, as by default: it is how the parent and its exit handlers
    stop the workers (`Process.terminate()`; a worker ignoring it would leave them waiting), and a handler inherited
    from the parent through fork would run the parent's exit handlers in the worker. A worker forked while the
    parent held the signals (`signals_held`) starts with them held: a SIGTERM that came since ends it here."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, _ENDING)


def start_method() -> str:
    """fork where this process runs one thread (gpu-dra's own CLI: a worker starts at once, sharing the parent's
    memory and modules); forkserver where it runs more (a test runner, a program embedding gpu-dra), since forking a
    multi-threaded process may deadlock the child and Python 3.12+ warns of it (the default becomes forkserver in
    3.14: https://docs.python.org/3.14/library/multiprocessing.html#contexts-and-start-methods)."""
    try:  # every thread of the process, a native library's too (as Python's own warning counts them)
        threads = len(os.listdir("/proc/self/task"))
    except OSError:
        threads = threading.active_count()
    return "fork" if threads == 1 else "forkserver"

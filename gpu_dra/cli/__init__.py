"""The `gpu-dra` command line (`main.py`, one module per verb under `commands/`)."""

import os
import signal


def end_at_once_on_signals() -> None:
    """Until main() installs the handlers that let a file being written finish (`common.end_on_interrupt`), Ctrl-C
    ends the run with exit 130 and SIGTERM with 143 (128 + the signal), at once: a KeyboardInterrupt raised into an
    import prints a traceback, and nothing is written or held yet that needs cleaning up."""
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, lambda received, frame: os._exit(128 + received))


def run() -> None:
    """The installed `gpu-dra` command: the signals end it from its first moment, also while the verbs' modules load;
    main() then installs the handlers that run the exit handlers and let a file being written finish."""
    end_at_once_on_signals()
    from gpu_dra.cli.main import main

    main()

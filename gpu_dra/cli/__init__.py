"""The `gpu-dra` command line (`main.py`, one module per verb under `commands/`)."""


def run() -> None:
    """The installed `gpu-dra` command: Ctrl-C ends the run with exit 130 from its first moment, also while the
    verbs' modules load (a KeyboardInterrupt raised into an import prints a traceback); main() then installs the
    handler that lets a file being written finish."""
    import os
    import signal

    signal.signal(signal.SIGINT, lambda signum, frame: os._exit(130))
    from gpu_dra.cli.main import main

    main()

"""The `gpu-dra` command line (`main.py`, one module per verb under `commands/`)."""

from gpu_dra.cli.process import end_at_once_on_signals


def run() -> None:
    """The installed `gpu-dra` command: the signals end it from its first moment, also while the verbs' modules load;
    main() then installs the handlers that run the exit handlers and let a file being written finish."""
    end_at_once_on_signals()
    from gpu_dra.cli.main import main  # after the handlers: main's imports are the first thing a signal may hit

    main()

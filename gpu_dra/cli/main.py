"""`gpu-dra`: one verb per user task, one module per verb (`gpu_dra/cli/commands/<verb>.py`), exit codes in
`gpu_dra.cli.common`: 0 ok, 1 findings, 2 bad input, 3 a bug in gpu-dra, 130 interrupted (Ctrl-C, SIGINT), 143
terminated (SIGTERM). Both signals end a run at once, except that files being written are finished first; the exit
handlers run (temporary files removed, worker processes stopped), so a signal leaves no half-written output folder,
no temporary credential file and no orphaned process.

Every verb imports what it needs when it runs: `--help` and the light verbs never pay for pydantic or Pulumi.
"""

from __future__ import annotations

from gpu_dra.cli import end_at_once_on_signals

if __name__ == "__main__":  # `python -m gpu_dra.cli.main`: what gpu_dra.cli.run does for the installed command
    end_at_once_on_signals()

import argparse  # noqa: E402
import contextlib  # noqa: E402
import gc  # noqa: E402
import os  # noqa: E402
import sys  # noqa: E402
import traceback  # noqa: E402
from typing import NoReturn  # noqa: E402

from gpu_dra import __version__  # noqa: E402
from gpu_dra.cli.commands import (  # noqa: E402
    check,
    doctor,
    explain,
    inventory,
    lint,
    logs,
    migrate,
    permissions,
    policy_pack,
    preview,
    render,
    schema,
)
from gpu_dra.cli.common import (  # noqa: E402
    EXIT_INTERNAL,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_USAGE,
    OutputError,
    UsageError,
    check_stack_name,
    cut,
    end_on_interrupt,
    end_process,
    message_text,
    printable_output,
)
from gpu_dra.core.findings import ConfigError  # noqa: E402

VERBS = (preview, render, lint, check, inventory, explain, doctor, migrate, logs, schema, policy_pack,
         permissions)


class _Parser(argparse.ArgumentParser):
    """argparse echoes a rejected argument whole: a 5,000-character --format would fill the screen."""

    def error(self, message: str) -> NoReturn:
        super().error(cut(message, 300))

    def exit(self, status: int = 0, message: str | None = None) -> NoReturn:
        """What argparse printed (--help, --version) is written out before it exits: a write that fails is an
        OutputError, not an exit 0 with the text lost."""
        sys.stdout.flush()
        super().exit(status, message)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="gpu-dra", description="GPU scheduling on EKS with Kubernetes DRA.")
    parser.add_argument("--version", action="version", version=f"gpu-dra {__version__}")
    parser.add_argument("--project-dir", help="the gpu-dra project (default: found from the current directory)")
    parser.add_argument("--debug", action="store_true", help="show tracebacks of internal errors")
    verbs = parser.add_subparsers(dest="verb", required=True, metavar="VERB")
    for verb in VERBS:
        verb.register(verbs)
    return parser


def _report(message: str) -> None:
    with contextlib.suppress(OutputError, OSError):  # stderr cannot be written either: the exit code says it
        print(message_text(message), file=sys.stderr)


def execute(argv: list[str] | None = None) -> int:
    """Run one command and return its exit code; what it prints is escaped (see `printable_output`)."""
    with printable_output():
        args = build_parser().parse_args(argv)
        try:
            # Every verb's --stack names a file: check it once here, before any path is built from it.
            if isinstance(getattr(args, "stack", None), str):
                check_stack_name(args.stack)
            code = int(args.func(args))
            sys.stdout.flush()  # a write that fails now is an OutputError here, not lost at exit
            return code
        except KeyboardInterrupt:  # first: whatever else it interrupted, the user asked to stop
            return EXIT_INTERRUPTED
        except ConfigError as error:
            _report(str(error))
            return EXIT_USAGE
        except UsageError as error:
            _report(f"gpu-dra: {error}")
            return EXIT_USAGE
        except BrokenPipeError:  # the reader (head, less) went away: nothing left to say
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            return EXIT_OK
        except OutputError as error:  # a full disk, /dev/full, a closed stdout
            _report(f"gpu-dra: {error}")
            return EXIT_USAGE
        except Exception as error:  # a bug in gpu-dra, not a user mistake
            if args.debug:
                traceback.print_exc()
            _report(f"gpu-dra: internal error: {type(error).__name__}: {error} (rerun with --debug for the "
                    "traceback; please report it)")
            return EXIT_INTERNAL


# A run allocates millions of objects that live to its end (a fleet's slices and devices, their indexes): at the
# default thresholds (700, 10, 10) the collector ran 1,700 times and took 5 of explain's 10 s at 10,000 nodes. A
# run makes little cyclic garbage, and it waits a little longer to be collected (peak memory unchanged there).
GC_THRESHOLDS = (100_000, 50, 100)


def run(argv: list[str] | None = None) -> int:
    """`execute`, with argparse's exits (--help, --version, a usage error) as exit codes: the command's whole work
    short of the process-wide state `main` sets up (signal handlers, the collector's thresholds, the exit)."""
    try:
        return execute(argv)
    except SystemExit as exit:  # argparse: --help, --version, a usage error (already printed)
        return exit.code if isinstance(exit.code, int) else EXIT_USAGE if exit.code else EXIT_OK
    except OutputError as error:  # argparse's --help or --version could not be written
        _report(f"gpu-dra: {error}")
        return EXIT_USAGE


def main(argv: list[str] | None = None) -> NoReturn:
    """The `gpu-dra` command: Ctrl-C ends it at once with exit 130, SIGTERM with 143, and it ends without waiting
    for Pulumi's threads (`common.end_process`)."""
    gc.set_threshold(*GC_THRESHOLDS)
    end_on_interrupt()
    end_process(run(argv))


if __name__ == "__main__":
    main()

"""`gpu-dra`: one verb per user task, one module per verb (`gpu_dra/cli/commands/<verb>.py`), exit codes in
`gpu_dra.cli.process`: 0 ok, 1 findings, 2 bad input, 3 a bug in gpu-dra, 130 interrupted (Ctrl-C, SIGINT), 143
terminated (SIGTERM). Both signals end a run at once, except that files being written are finished first; the exit
handlers run (temporary files removed, worker processes stopped), so a signal leaves no half-written output folder,
no temporary credential file and no orphaned process.

A verb's module is imported only when that verb runs, as pip does (pypa/pip@24.0:src/pip/_internal/commands/
__init__.py `commands_dict`, `create_command`): this module knows each verb's module and one-line help, so `--help`
and the light verbs never pay for pydantic, Pulumi or the kubernetes client, and each verb imports what it uses at
its top, with its real types.
"""

from __future__ import annotations

from gpu_dra.cli.process import end_at_once_on_signals

if __name__ == "__main__":  # `python -m gpu_dra.cli.main`: what gpu_dra.cli.run does for the installed command
    end_at_once_on_signals()

import argparse  # noqa: E402
import contextlib  # noqa: E402
import gc  # noqa: E402
import importlib  # noqa: E402
import os  # noqa: E402
import sys  # noqa: E402
import traceback  # noqa: E402
from collections.abc import Sequence  # noqa: E402
from typing import Any, NamedTuple, NoReturn, Protocol, cast  # noqa: E402

from gpu_dra import __version__  # noqa: E402
from gpu_dra.cli.arguments import check_stack_name  # noqa: E402
from gpu_dra.cli.process import (  # noqa: E402
    EXIT_INTERNAL,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_USAGE,
    UsageError,
    end_on_interrupt,
    end_process,
)
from gpu_dra.cli.text import OutputError, cut, message_text, printable_output  # noqa: E402
from gpu_dra.core.findings import ConfigError  # noqa: E402


class VerbModule(Protocol):
    """What each `gpu_dra/cli/commands/<verb>.py` defines: its examples (the help's epilog), `register` (its
    arguments, added to its own parser) and `run` (the verb, given the parsed arguments; returns the exit code)."""

    EXAMPLES: str

    def register(self, parser: argparse.ArgumentParser) -> None: ...

    def run(self, args: argparse.Namespace) -> int: ...


class Verb(NamedTuple):
    module: str
    help: str


_COMMANDS = "gpu_dra.cli.commands."
# In the order `gpu-dra --help` lists them.
VERBS = {
    "preview": Verb(_COMMANDS + "preview", "run the program offline under Pulumi mocks; print the resources"),
    "render": Verb(_COMMANDS + "render", "write the stack's Kubernetes objects as YAML, nothing else"),
    "lint": Verb(_COMMANDS + "lint", "check DeviceClass/ResourceClaim(Template) YAML offline: schema, CEL, lint "
                                     "rules, feature gates"),
    "check": Verb(_COMMANDS + "check", "run the policy pack offline on stacks (exit 1 on a mandatory violation, 2 "
                                       "on a config error; the report of every stack comes first either way)"),
    "inventory": Verb(_COMMANDS + "inventory", "nodes x devices from ResourceSlice files or a stack's fleet"),
    "explain": Verb(_COMMANDS + "explain", "which devices and nodes satisfy each claim and pod, and why not"),
    "doctor": Verb(_COMMANDS + "doctor", "is DRA healthy on the cluster: GPU nodes without slices, double "
                                         "allocation, stale or outdated slices, tainted devices, dropped fields, "
                                         "drift from the stack (read-only)"),
    "migrate": Verb(_COMMANDS + "migrate", "each GPU workload's migration phase on a stack, its claim template and "
                                           "its rewrite to claims"),
    "upgrade": Verb(_COMMANDS + "upgrade", "what moving a stack to another Kubernetes minor, driver chart or Karpenter "
                                           "release does to its teams, before it happens"),
    "logs": Verb(_COMMANDS + "logs", "kube-scheduler DRA log lines per pod and claim, with the final reason"),
    "schema": Verb(_COMMANDS + "schema", "print the JSON Schema of stack or team files, for editors"),
    "policy-pack": Verb(_COMMANDS + "policy_pack", "build the policy pack as a self-contained folder "
                                                   "(PulumiPolicy.yaml, source, requirements.txt)"),
    "permissions": Verb(_COMMANDS + "permissions", "print the IAM policy a deploy of the stacks needs (derived from "
                                                   "their resources; not tested on AWS)"),
    "team": Verb(_COMMANDS + "team", "add a team to a stack (its file, the stack's entry, CODEOWNERS), or show what "
                                     "a stack gives a team"),
    "completion": Verb(_COMMANDS + "completion", "print a shell completion script (bash, zsh or fish)"),
}


class _Parser(argparse.ArgumentParser):
    """argparse echoes a rejected argument whole: a 5,000-character --format would fill the screen."""

    def error(self, message: str) -> NoReturn:
        super().error(cut(message, 300))

    def exit(self, status: int = 0, message: str | None = None) -> NoReturn:
        """What argparse printed (--help, --version) is written out before it exits: a write that fails is an
        OutputError, not an exit 0 with the text lost."""
        sys.stdout.flush()
        super().exit(status, message)


def with_arguments(name: str, parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """The verb's parser with its arguments, examples and `run`: its module imported and registered, once."""
    if parser.get_default("func") is None:
        verb = cast(VerbModule, importlib.import_module(VERBS[name].module))
        parser.epilog = verb.EXAMPLES
        parser.formatter_class = argparse.RawDescriptionHelpFormatter
        verb.register(parser)
        parser.set_defaults(func=verb.run)
    return parser


class _LazyVerbs(argparse._SubParsersAction):
    """The verbs' subparsers, each given its arguments when it is chosen: argparse has checked the name by then."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: str | Sequence[Any] | None, option_string: str | None = None) -> None:
        assert isinstance(values, list)  # nargs=PARSER: the verb, then its arguments
        with_arguments(values[0], self.choices[values[0]])
        super().__call__(parser, namespace, values, option_string)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="gpu-dra", description="GPU scheduling on EKS with Kubernetes DRA.")
    parser.add_argument("--version", action="version", version=f"gpu-dra {__version__}")
    parser.add_argument("--project-dir", help="the gpu-dra project (default: found from the current directory)")
    parser.add_argument("--debug", action="store_true", help="show tracebacks of internal errors")
    verbs = parser.add_subparsers(dest="verb", required=True, metavar="VERB", action=_LazyVerbs)
    for name, verb in VERBS.items():
        verbs.add_parser(name, help=verb.help)
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
    for Pulumi's threads (`process.end_process`)."""
    gc.set_threshold(*GC_THRESHOLDS)
    end_on_interrupt()
    end_process(run(argv))


if __name__ == "__main__":
    main()

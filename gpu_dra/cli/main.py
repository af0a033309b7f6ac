"""`gpu-dra`: one verb per user task, one module per verb (`gpu_dra/cli/commands/<verb>.py`), exit codes in
`gpu_dra.cli.common`: 0 ok, 1 findings, 2 bad input, 3 a bug in gpu-dra, 130 interrupted.

Every verb imports what it needs when it runs: `--help` and the light verbs never pay for pydantic or Pulumi.
"""

from __future__ import annotations

import argparse
import os
import sys
import traceback

from gpu_dra import __version__
from gpu_dra.cli.commands import check, explain, inventory, lint, logs, preview, render, schema
from gpu_dra.cli.common import EXIT_INTERNAL, EXIT_INTERRUPTED, EXIT_OK, EXIT_USAGE, UsageError
from gpu_dra.core.findings import ConfigError

VERBS = (preview, render, lint, check, inventory, explain, logs, schema)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="gpu-dra", description="GPU scheduling on EKS with Kubernetes DRA.")
    parser.add_argument("--version", action="version", version=f"gpu-dra {__version__}")
    parser.add_argument("--project-dir", help="the gpu-dra project (default: found from the current directory)")
    parser.add_argument("--debug", action="store_true", help="show tracebacks of internal errors")
    verbs = parser.add_subparsers(dest="verb", required=True, metavar="VERB")
    for verb in VERBS:
        verb.register(verbs)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return int(args.func(args))
    except ConfigError as error:
        print(error, file=sys.stderr)
        return EXIT_USAGE
    except UsageError as error:
        print(f"gpu-dra: {error}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED
    except BrokenPipeError:  # the reader (head, less) went away: nothing left to say
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_OK
    except Exception as error:  # a bug in gpu-dra, not a user mistake
        if args.debug:
            traceback.print_exc()
        print(f"gpu-dra: internal error: {type(error).__name__}: {error} (rerun with --debug for the traceback; "
              "please report it)", file=sys.stderr)
        return EXIT_INTERNAL


if __name__ == "__main__":
    sys.exit(main())

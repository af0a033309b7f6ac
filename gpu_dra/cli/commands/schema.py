"""`gpu-dra schema`: the JSON Schema of stack or team files, for editors."""

from __future__ import annotations

import argparse
import json
from typing import Any

from gpu_dra.cli.common import EXIT_OK

EXAMPLES = """examples:
  gpu-dra schema stack > schemas/stack.schema.json
  gpu-dra schema team
"""


def register(verbs: Any) -> None:
    schema = verbs.add_parser("schema", epilog=EXAMPLES, formatter_class=argparse.RawDescriptionHelpFormatter,
        help="print the JSON Schema of stack or team files, for editors")
    schema.add_argument("file", choices=["stack", "team"], nargs="?", default="stack")
    schema.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from gpu_dra.core.config.schema import stack_schema, team_schema

    schemas = {"stack": stack_schema, "team": team_schema}
    print(json.dumps(schemas[args.file](), indent=2))
    return EXIT_OK

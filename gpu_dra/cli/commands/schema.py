"""`gpu-dra schema`: the JSON Schema of stack or team files, for editors."""

from __future__ import annotations

import argparse
import json

from gpu_dra.cli.process import EXIT_OK
from gpu_dra.core.config.schema import stack_schema, team_schema

EXAMPLES = """examples:
  gpu-dra schema stack > schemas/stack.schema.json
  gpu-dra schema team

exit codes: 0 the schema was printed, 2 an unknown schema name
"""


def register(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", choices=["stack", "team"], nargs="?", default="stack")


def run(args: argparse.Namespace) -> int:
    schemas = {"stack": stack_schema, "team": team_schema}
    print(json.dumps(schemas[args.file](), indent=2))
    return EXIT_OK

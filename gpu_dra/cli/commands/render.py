"""`gpu-dra render`: only the stack's Kubernetes objects, one YAML file per object."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from gpu_dra.cli.commands.preview import OUT_HELP, write
from gpu_dra.cli.common import EXIT_OK, project_root, run_program_offline, shown

EXAMPLES = """examples:
  gpu-dra render --stack prod --out manifests
  kubectl apply --dry-run=server -R -f manifests/
"""


def register(verbs: Any) -> None:
    render = verbs.add_parser("render", epilog=EXAMPLES, formatter_class=argparse.RawDescriptionHelpFormatter,
        help="write the stack's Kubernetes objects as YAML, nothing else")
    render.add_argument("--stack", required=True)
    render.add_argument("--out", required=True, help=f"folder for the manifests; {OUT_HELP}")
    render.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    root = project_root(args)
    program = run_program_offline(root, args.stack)
    out = Path(args.out).resolve()
    for path in write(program, out):
        print(shown(path, Path.cwd()))
    return EXIT_OK

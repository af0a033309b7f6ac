"""`gpu-dra render`: only the stack's Kubernetes objects, one YAML file per object."""

from __future__ import annotations

import argparse
from pathlib import Path

from gpu_dra.cli.commands.preview import folder_taken, write
from gpu_dra.cli.manifest_files import OUT_HELP
from gpu_dra.cli.offline import run_program_offline
from gpu_dra.cli.process import EXIT_OK
from gpu_dra.cli.project import project_root
from gpu_dra.cli.text import shown

EXAMPLES = """examples:
  gpu-dra render --stack prod --out manifests
  kubectl apply --dry-run=server -R -f manifests/

exit codes: 0 the manifests were written, 2 a configuration error, or a file of yours in the way under --out
"""


def register(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--stack", required=True)
    parser.add_argument("--out", required=True, help=f"folder for the manifests; {OUT_HELP}")


def run(args: argparse.Namespace) -> int:
    root = project_root(args)
    out = Path(args.out).resolve()
    folder_taken(out)
    program = run_program_offline(root, args.stack)
    for path in write(program, out):
        print(shown(path, Path.cwd()))
    return EXIT_OK

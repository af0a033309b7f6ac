"""`gpu-dra preview`: the program under Pulumi mocks, its resource tree, and its Kubernetes objects on disk."""

from __future__ import annotations

import argparse
import json
from collections import Counter
from pathlib import Path
from typing import Any

from gpu_dra.cli.manifest_files import OUT_HELP, FolderError, kubernetes_objects, write_manifests
from gpu_dra.cli.offline import ProgramRun, Registration, run_program_offline
from gpu_dra.cli.output_folder import MANIFESTS, check_folder
from gpu_dra.cli.process import EXIT_OK, UsageError
from gpu_dra.cli.project import project_root
from gpu_dra.cli.text import shown

EXAMPLES = """examples:
  gpu-dra preview                          # the dev stack; manifests to build/dev/
  gpu-dra preview --stack prod --format json > prod.json

exit codes: 0 the preview ran, 2 a configuration error in a stack or team file
"""


def register(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--stack", default="dev", help="stack name (stacks/Pulumi.<stack>.yaml; default dev)")
    parser.add_argument("--format", choices=["text", "json"], default="text")
    parser.add_argument("--out", help=f"folder for the Kubernetes manifests (default build/<stack>); {OUT_HELP}")


def _tree_lines(program: ProgramRun) -> list[str]:
    children: dict[str, list[Registration]] = {}
    urns = {r.urn for r in program.resources}
    for resource in program.resources:
        parent = resource.parent if resource.parent in urns else ""
        children.setdefault(parent, []).append(resource)
    lines: list[str] = []

    def walk(parent: str, prefix: str) -> None:
        items = sorted(children.get(parent, []), key=lambda r: (r.type, r.name))
        for index, resource in enumerate(items):
            last = index == len(items) - 1
            branch = "└─ " if last else "├─ "
            lock = " [protected]" if resource.protect else ""
            lines.append(f"{prefix}{branch}{resource.type}  {resource.name}{lock}")
            walk(resource.urn, prefix + ("   " if last else "│  "))

    walk("", "")
    return lines


def folder_taken(out: Path) -> None:
    """A usage error when `out` cannot take the manifests (a file, a name too long, a folder of the user's): said
    before the program runs, not after its warnings and a second or two, as the write checks again."""
    try:
        check_folder(out, MANIFESTS)
    except FolderError as error:
        raise UsageError(str(error)) from None


def write(program: ProgramRun, out: Path) -> list[Path]:
    """The run's Kubernetes objects into `out`; a file of the user's in the way is a usage error."""
    return write_objects(kubernetes_objects(program), out)


def write_objects(objects: list[dict[str, Any]], out: Path) -> list[Path]:
    """`objects` into `out`, one file each; a file of the user's in the way is a usage error."""
    try:
        return write_manifests(objects, out)
    except FolderError as error:
        raise UsageError(str(error)) from None


def run(args: argparse.Namespace) -> int:
    root = project_root(args)
    out = Path(args.out).resolve() if args.out else root / "build" / args.stack
    folder_taken(out)
    program = run_program_offline(root, args.stack)
    written = write(program, out)
    if args.format == "json":
        print(json.dumps({"stack": args.stack, "resources": [
            {"type": r.type, "name": r.name, "urn": r.urn, "parent": r.parent or None, "protect": r.protect,
             "inputs": r.inputs} for r in program.resources]}, indent=2, sort_keys=True))
        return EXIT_OK
    print(f"Stack {args.stack} (project gpu-dra), offline preview under Pulumi mocks: nothing was deployed.")
    print()
    print("\n".join(_tree_lines(program)))
    print()
    print("Resources by type:")
    for type_, count in sorted(Counter(r.type for r in program.resources).items()):
        print(f"  {count:4d}  {type_}")
    print(f"  {len(program.resources):4d}  total")
    print()
    print(f"{len(written)} Kubernetes objects written to {shown(out, root)}/")
    return EXIT_OK

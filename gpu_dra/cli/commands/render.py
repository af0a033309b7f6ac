"""`gpu-dra render`: only the stack's Kubernetes objects, one YAML file per object or one stream on stdout."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from gpu_dra.cli.commands.preview import folder_taken, write_objects
from gpu_dra.cli.manifest_files import OUT_HELP, dump_yaml, kubernetes_objects
from gpu_dra.cli.offline import ProgramRun, run_program_offline
from gpu_dra.cli.process import EXIT_OK
from gpu_dra.cli.project import project_root
from gpu_dra.cli.text import shown
from gpu_dra.core.data import mapping
from gpu_dra.core.facts.pulumi_types import CHART
from gpu_dra.core.render.chart_templates import chart_objects

EXAMPLES = """examples:
  gpu-dra render --stack prod --out manifests
  kubectl apply --dry-run=server -R -f manifests/
  gpu-dra render --stack prod -o yaml | kubectl diff -f -
  gpu-dra render --stack prod -o yaml --charts | kubectl apply --dry-run=server -f -

exit codes: 0 the manifests were written, 2 a configuration error, or a file of yours in the way under --out
"""


def register(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--stack", required=True)
    where = parser.add_mutually_exclusive_group(required=True)
    where.add_argument("--out", help=f"folder for the manifests; {OUT_HELP}")
    where.add_argument("-o", "--output", choices=["yaml", "json"],
                       help="to stdout instead: one multi-document YAML stream, or a JSON List (kubectl's -o)")
    parser.add_argument("--charts", action="store_true",
                        help="also the objects of NVIDIA's charts the stack installs, as gpu-dra models their "
                             "templates (the objects the policy pack reads: not every object `helm template` "
                             "writes); other charts (Karpenter, Kueue) are named on stderr")


def run(args: argparse.Namespace) -> int:
    root = project_root(args)
    out = Path(args.out).resolve() if args.out else None
    if out is not None:
        folder_taken(out)
    program = run_program_offline(root, args.stack)
    objects = kubernetes_objects(program) + (_chart_objects(program) if args.charts else [])
    if out is None:  # as kubectl writes an object: apiVersion, kind and metadata first
        objects = [{key: obj[key] for key in ("apiVersion", "kind", "metadata") if key in obj} | obj
                   for obj in objects]
        if args.output == "json":
            print(json.dumps({"apiVersion": "v1", "kind": "List", "items": objects}, indent=2))
        else:
            sys.stdout.write("---\n".join(dump_yaml(obj) for obj in objects))
        return EXIT_OK
    for path in write_objects(objects, out):
        print(shown(path, Path.cwd()))
    return EXIT_OK


def _chart_objects(program: ProgramRun) -> list[dict[str, Any]]:
    """The objects of the stack's Helm charts gpu-dra models (render/chart_templates), as helm.v4.Chart would install
    them: its release name, its namespace; a chart it does not model is said on stderr."""
    objects: list[dict[str, Any]] = []
    for chart in (r for r in program.resources if r.type == CHART):
        name = str(chart.inputs.get("chart", "")).rstrip("/").rsplit("/", 1)[-1]
        version = str(chart.inputs.get("version", ""))
        found = chart_objects(name, version, mapping(chart.inputs.get("values")),
                              str(chart.inputs.get("name") or chart.name), str(chart.inputs.get("namespace") or
                                                                                "default"))
        if not found:
            print(f"gpu-dra: note: chart {name} {version} is not modelled by gpu-dra: `helm template` renders its "
                  "objects", file=sys.stderr)
        objects += found
    return objects

#!/usr/bin/env python3
"""Vendor the OpenAPI schemas of the Kueue kinds gpu-dra renders (ResourceFlavor, ClusterQueue, LocalQueue,
WorkloadPriorityClass at kueue.x-k8s.io/v1beta2), read from a git clone of kubernetes-sigs/kueue at a release tag:
the tests validate every queue object the program renders against them, as the API server would (structural schema
and its CEL rules are not run: only the schema's types, required fields and enums).

Writes tests/data/kueue/<kind>.v1beta2.schema.json (the CRD's `openAPIV3Schema`, unchanged), Kueue's documented
DRA examples (queues and the Jobs that use them, unchanged under a source line), and tests/data/kueue/SOURCES.md
(repository, tag, commit, path and licence of each). Development tool, not shipped:
stdlib + PyYAML. Usage:

    tools/vendor_kueue_crds.py --git /path/to/kueue-clone [--tag v0.19.2]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
VENDORED = ROOT / "tests" / "data" / "kueue"
KINDS = {"ResourceFlavor": "resourceflavors", "ClusterQueue": "clusterqueues", "LocalQueue": "localqueues",
         "WorkloadPriorityClass": "workloadpriorityclasses"}
VERSION = "v1beta2"
# Kueue's documented DRA quota example (site/content/en/docs/tasks/manage/setup_dra.md) and the Jobs its users run
# (site/content/en/docs/tasks/run/dra.md).
SAMPLES = ("sample-dra-queues.yaml", "sample-dra-rct-job.yaml", "sample-dra-extended-resource-job.yaml")


def _git(clone: str, *args: str) -> str:
    return subprocess.run(["git", "-C", clone, *args], check=True, capture_output=True, text=True).stdout


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--git", required=True, help="a clone (or bare mirror) of kubernetes-sigs/kueue")
    parser.add_argument("--tag", default="v0.19.2")
    args = parser.parse_args()
    commit = _git(args.git, "rev-list", "-n", "1", args.tag).strip()
    VENDORED.mkdir(parents=True, exist_ok=True)
    lines = ["# Kueue CRD schemas", "",
             f"From github.com/kubernetes-sigs/kueue tag {args.tag} (commit {commit}), Apache-2.0 (the repository's "
             "LICENSE), written by tools/vendor_kueue_crds.py: the `openAPIV3Schema` of each CRD's "
             f"{VERSION} version, unchanged. Do not edit; run the tool again.", ""]
    for kind, plural in KINDS.items():
        path = f"config/components/crd/bases/kueue.x-k8s.io_{plural}.yaml"
        crd = yaml.safe_load(_git(args.git, "show", f"{args.tag}:{path}"))
        (version,) = [v for v in crd["spec"]["versions"] if v["name"] == VERSION]
        if crd["spec"]["names"]["kind"] != kind or not version.get("served"):
            sys.exit(f"{path} at {args.tag}: not a served {kind} {VERSION}")
        target = VENDORED / f"{kind.lower()}.{VERSION}.schema.json"
        target.write_text(json.dumps(version["schema"]["openAPIV3Schema"], indent=1, sort_keys=True) + "\n")
        lines.append(f"- `{target.name}`: {path}")
    for sample in SAMPLES:
        path = f"site/static/examples/dra/{sample}"
        header = (f"# Source: github.com/kubernetes-sigs/kueue tag {args.tag} (commit {commit[:8]}), {path}, "
                  "Apache-2.0; unchanged below this line\n")
        (VENDORED / sample).write_text(header + _git(args.git, "show", f"{args.tag}:{path}"))
    lines += [f"- {', '.join(f'`{s}`' for s in SAMPLES)}: site/static/examples/dra/ at the same tag, Kueue's "
              "documented DRA quota example (site/content/en/docs/tasks/manage/setup_dra.md) and the Jobs its users "
              "run (site/content/en/docs/tasks/run/dra.md), unchanged under a source line."]
    (VENDORED / "SOURCES.md").write_text("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())

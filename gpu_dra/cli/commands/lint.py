"""`gpu-dra lint`: DeviceClass and ResourceClaim(Template) YAML checked offline, as the API server and the
scheduler would."""

from __future__ import annotations

import argparse
import json
import re

from gpu_dra.cli.arguments import check_kubernetes_version
from gpu_dra.cli.inputs import read_inputs
from gpu_dra.cli.manifest_files import dump_yaml
from gpu_dra.cli.process import EXIT_FINDINGS, EXIT_OK, UsageError
from gpu_dra.core.checks.manifest_lint import ManifestObject, fixed_object, lint_object, objects_in, severity_counts
from gpu_dra.core.facts.gates import DEFAULT_KUBERNETES_VERSION
from gpu_dra.core.facts.nvidia import CHART_RELEASES, CHART_VERSION_PATTERN, DEFAULT_CHART_VERSION, release_level_of
from gpu_dra.core.facts.target import Platform, Target
from gpu_dra.core.findings import Finding

EXAMPLES = """examples:
  gpu-dra lint claims.yaml
  gpu-dra lint --kubernetes-version 1.36 --format json - < claims.yaml
  gpu-dra lint --platform existing --feature-gates DRAConsumableCapacity=true claims.yaml

exit codes: 0 no error (warnings allowed), 1 an error finding, 2 bad input (an unreadable file, a bad option)
"""


def register(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("paths", nargs="+", metavar="PATH", help="YAML files (multi-document or kind: List), or -")
    parser.add_argument("--kubernetes-version", default=DEFAULT_KUBERNETES_VERSION,
                        help=f"target Kubernetes minor version (default {DEFAULT_KUBERNETES_VERSION})")
    parser.add_argument("--platform", choices=[p.value for p in Platform], default=Platform.eks.value,
                        help="eks: upstream gate defaults, no alpha; existing: --feature-gates apply")
    parser.add_argument("--feature-gates", help="gates of an existing cluster, e.g. DRAConsumableCapacity=true")
    parser.add_argument("--chart", default="dra-driver-nvidia-gpu", help="NVIDIA DRA chart line (attribute catalog)")
    parser.add_argument("--chart-version", default=DEFAULT_CHART_VERSION,
                        help=f"NVIDIA DRA chart version (default {DEFAULT_CHART_VERSION})")
    parser.add_argument("--format", choices=["text", "json"], default="text")


def _feature_gates(text: str) -> dict[str, bool]:
    gates: dict[str, bool] = {}
    for item in filter(None, (part.strip() for part in text.split(","))):
        name, sep, value = item.partition("=")
        if not sep or value.lower() not in ("true", "false"):
            raise UsageError(f"--feature-gates: {item!r} is not Name=true or Name=false")
        gates[name] = value.lower() == "true"
    return gates


def run(args: argparse.Namespace) -> int:
    check_kubernetes_version(args.kubernetes_version)
    if args.chart not in CHART_RELEASES or not re.fullmatch(CHART_VERSION_PATTERN, args.chart_version):
        raise UsageError(f"--chart {args.chart} --chart-version {args.chart_version}: not a pinned chart version "
                         "such as 0.4.1 or 25.12.0")
    target = Target(args.kubernetes_version, Platform(args.platform), _feature_gates(args.feature_gates or ""),
                    release_level_of(args.chart_version))
    findings: list[Finding] = []
    objects: list[ManifestObject] = []
    gpu_dra_files: list[str] = []
    for name, documents in read_inputs(args.paths):
        for obj in objects_in(name, documents):
            objects.append(obj)
            findings.extend(lint_object(obj, target))
        if any(_gpu_dra_file(d.data) for d in documents):
            gpu_dra_files.append(name)
    counts = severity_counts(findings)
    if args.format == "json":
        print(json.dumps({"findings": [f.as_dict() for f in findings]}, indent=2))
    else:
        _print_lint(objects, findings, counts, gpu_dra_files)
    return EXIT_FINDINGS if counts["error"] else EXIT_OK


def _gpu_dra_file(data: object) -> bool:
    """A team file (name, namespace, quota, claimTemplates) or a stack file (config: gpu-dra:...), not manifests."""
    if not isinstance(data, dict) or "kind" in data:
        return False
    config = data.get("config")
    return bool({"claimTemplates", "quota", "queue"} & set(data)) or (
        isinstance(config, dict) and any(str(k).startswith("gpu-dra:") for k in config))


def _print_lint(objects: list[ManifestObject], findings: list[Finding], counts: dict[str, int],
                gpu_dra_files: list[str]) -> None:
    if not objects:
        print("no DeviceClass, ResourceClaim or ResourceClaimTemplate found")
        for name in gpu_dra_files:
            print(f"{name} is a gpu-dra stack or team file, not Kubernetes manifests: `gpu-dra check --stack S` "
                  "lints the claim templates and classes the stack renders from it (`gpu-dra render --stack S --out "
                  "DIR` writes them, for lint)")
        return
    for obj in objects:
        mine = [f for f in findings if f.object == obj.name and f.file == obj.file]
        status = "ok" if not mine else f"{len(mine)} finding(s)"
        print(f"{obj.file}:{obj.line(('kind',)) or 1}: {obj.name}: {status}")
        for finding in mine:
            print(f"  {finding.severity:7} {finding.rule}  {finding.path} (line {finding.line})")
            print(f"          {finding.message}")
            if finding.fix:
                fix = finding.fix.strip().replace("\n", "\n               ")
                print(f"          fix: {fix}")
        fixed = fixed_object(obj) if any(f.severity == "error" for f in mine) else None
        if fixed is not None:
            print(f"  corrected {obj.name}:")
            print("    " + dump_yaml(fixed).rstrip().replace("\n", "\n    "))
    print(f"{len(objects)} object(s): {counts['error']} error(s), {counts['warning']} warning(s)")

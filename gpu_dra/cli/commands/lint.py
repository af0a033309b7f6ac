"""`gpu-dra lint`: DeviceClass and ResourceClaim(Template) YAML checked offline, as the API server and the
scheduler would."""

from __future__ import annotations

import argparse
import json
import re
from typing import Any

from gpu_dra.cli.common import EXIT_FINDINGS, EXIT_OK, UsageError, check_kubernetes_version, read_inputs
from gpu_dra.core.facts.gates import DEFAULT_KUBERNETES_VERSION
from gpu_dra.core.facts.nvidia import DEFAULT_CHART_VERSION

EXAMPLES = """examples:
  gpu-dra lint claims.yaml
  gpu-dra lint --kubernetes-version 1.36 --format json - < claims.yaml
  gpu-dra lint --platform existing --feature-gates DRAConsumableCapacity=true claims.yaml
"""


def register(verbs: Any) -> None:
    lint = verbs.add_parser("lint", epilog=EXAMPLES, formatter_class=argparse.RawDescriptionHelpFormatter,
        help="check DeviceClass/ResourceClaim(Template) YAML offline: schema, CEL, "
                                         "lint rules, feature gates")
    lint.add_argument("paths", nargs="+", metavar="PATH", help="YAML files (multi-document or kind: List), or -")
    lint.add_argument("--kubernetes-version", default=DEFAULT_KUBERNETES_VERSION,
                      help=f"target Kubernetes minor version (default {DEFAULT_KUBERNETES_VERSION})")
    lint.add_argument("--platform", choices=["eks", "existing"], default="eks",
                      help="eks: upstream gate defaults, no alpha; existing: --feature-gates apply")
    lint.add_argument("--feature-gates", help="gates of an existing cluster, e.g. DRAConsumableCapacity=true")
    lint.add_argument("--chart", default="dra-driver-nvidia-gpu", help="NVIDIA DRA chart line (attribute catalog)")
    lint.add_argument("--chart-version", default=DEFAULT_CHART_VERSION,
                      help=f"NVIDIA DRA chart version (default {DEFAULT_CHART_VERSION})")
    lint.add_argument("--format", choices=["text", "json"], default="text")
    lint.set_defaults(func=run)


def _feature_gates(text: str) -> dict[str, bool]:
    gates: dict[str, bool] = {}
    for item in filter(None, (part.strip() for part in text.split(","))):
        name, sep, value = item.partition("=")
        if not sep or value.lower() not in ("true", "false"):
            raise UsageError(f"--feature-gates: {item!r} is not Name=true or Name=false")
        gates[name] = value.lower() == "true"
    return gates


def run(args: argparse.Namespace) -> int:
    from gpu_dra.core.checks.manifest_lint import fixed_object, lint_object, objects_in, severity_counts
    from gpu_dra.core.checks.target import Target
    from gpu_dra.core.facts.nvidia import CHART_RELEASES, CHART_VERSION_PATTERN, release_level_of

    check_kubernetes_version(args.kubernetes_version)
    if args.chart not in CHART_RELEASES or not re.fullmatch(CHART_VERSION_PATTERN, args.chart_version):
        raise UsageError(f"--chart {args.chart} --chart-version {args.chart_version}: not a pinned chart version "
                         "such as 0.4.1 or 25.12.0")
    target = Target(args.kubernetes_version, args.platform, _feature_gates(args.feature_gates or ""),
                    release_level_of(args.chart_version))
    findings = []
    objects = []
    for name, documents in read_inputs(args.paths):
        for obj in objects_in(name, documents):
            objects.append(obj)
            findings.extend(lint_object(obj, target))
    counts = severity_counts(findings)
    if args.format == "json":
        print(json.dumps({"findings": [f.as_dict() for f in findings]}, indent=2))
    else:
        _print_lint(objects, findings, counts, fixed_object)
    return EXIT_FINDINGS if counts["error"] else EXIT_OK


def _print_lint(objects: list[Any], findings: list[Any], counts: dict[str, int], fixer: Any) -> None:
    from gpu_dra.cli.manifest_files import dump_yaml

    if not objects:
        print("no DeviceClass, ResourceClaim or ResourceClaimTemplate found")
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
        fixed = fixer(obj) if any(f.severity == "error" for f in mine) else None
        if fixed is not None:
            print(f"  corrected {obj.name}:")
            print("    " + dump_yaml(fixed).rstrip().replace("\n", "\n    "))
    print(f"{len(objects)} object(s): {counts['error']} error(s), {counts['warning']} warning(s)")

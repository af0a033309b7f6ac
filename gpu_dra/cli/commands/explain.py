"""`gpu-dra explain`: which devices and nodes satisfy each claim, and why not."""

from __future__ import annotations

import argparse
import json
from typing import Any

from gpu_dra.cli.common import EXIT_FINDINGS, EXIT_OK, UsageError, cluster_options, cut, gather

EXAMPLES = """examples:
  gpu-dra explain --stack prod
  gpu-dra explain slices.yaml classes.yaml claims.yaml --claim ml/pair
  gpu-dra explain --cluster --context prod claim.yaml --format json
"""


def register(verbs: Any) -> None:
    explain = verbs.add_parser("explain", epilog=EXAMPLES, formatter_class=argparse.RawDescriptionHelpFormatter,
        help="which devices and nodes satisfy each claim, and why not")
    explain.add_argument("paths", nargs="*", metavar="FILE",
                         help="ResourceSlices, DeviceClasses, ResourceClaims, ResourceClaimTemplates (YAML), or -")
    explain.add_argument("--stack", help="add the stack's classes and templates (and its fleet, without slices)")
    explain.add_argument("--claim", help="only this claim or template (name or namespace/name)")
    cluster_options(explain)
    explain.add_argument("--verbose", action="store_true", help="list more devices per reason")
    explain.add_argument("--all-devices", action="store_true",
                         help="JSON: list every matching and rejected device (default: each count and the first 5)")
    explain.add_argument("--format", choices=["text", "json"], default="text")
    explain.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from gpu_dra.core.analysis.explain import (
        EXAMPLES,
        Explainer,
        claims_from_objects,
        classes_from_objects,
        in_use_from_claims,
    )

    devices, objects, origin = gather(args)
    claims = everything = claims_from_objects(objects)
    if args.claim:
        claims = [c for c in claims if args.claim in (c.name, c.name.rsplit("/", 1)[-1])]
        if not claims:
            raise UsageError(f"no claim or claim template named {cut(args.claim, 100)!r} in the inputs")
    if not claims:
        raise UsageError("no ResourceClaim or ResourceClaimTemplate in the inputs (give files, or --stack)")
    explainer = Explainer(classes_from_objects(objects))
    in_use = in_use_from_claims(everything)
    reports = [explainer.explain(claim, devices, in_use) for claim in claims]
    if args.format == "json":
        examples = None if args.all_devices else EXAMPLES
        print(json.dumps({"source": origin, "claims": [r.as_dict(examples) for r in reports]},
                         separators=(",", ":")))
    else:
        print(f"Devices from {origin}: {len(devices.nodes())} node(s), {len(devices.devices)} device(s)\n")
        for report in reports:
            _print_report(report, args.verbose)
    return EXIT_OK if all(r.allocatable for r in reports) else EXIT_FINDINGS


def _print_report(report: Any, verbose: bool) -> None:
    if report.allocatable:
        nodes = ", ".join(report.nodes[:5]) + (f", ... ({len(report.nodes)} in all)" if len(report.nodes) > 5 else "")
        print(f"claim {report.claim}: allocatable on {len(report.nodes)} node(s): {nodes}")
    else:
        print(f"claim {report.claim}: NOT allocatable: {report.reason}")
    for request in report.requests:
        print(f"  request {request.name}: {len(request.matching)} device(s) match")
        for reason, devices in sorted(request.rejected.items(), key=lambda item: -len(item[1])):
            where = ", ".join(f"{d.node}/{d.name}" for d in devices[: 6 if verbose else 3])
            more = f", +{len(devices) - (6 if verbose else 3)}" if len(devices) > (6 if verbose else 3) else ""
            print(f"    {len(devices)} x {reason}  ({where}{more})")
    if report.solution:
        node, allocations = report.solution
        picked = "; ".join(f"{a.request}{'/' + a.subrequest if a.subrequest else ''} -> "
                           f"{', '.join(d.name for d in a.devices)}" for a in allocations)
        print(f"  first solution: {node}: {picked}")
    print()

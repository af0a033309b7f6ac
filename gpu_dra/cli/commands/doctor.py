"""`gpu-dra doctor`: is DRA healthy on this cluster (read-only), and does it hold what the stack renders."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from gpu_dra.cli.arguments import check_kubernetes_version, cluster_options
from gpu_dra.cli.cluster import CLAIMS, CLASSES, NODES, QUOTAS, SLICES, TEMPLATES, ClusterState
from gpu_dra.cli.inputs import read_inputs
from gpu_dra.cli.live import read_live_cluster
from gpu_dra.cli.process import EXIT_FINDINGS, EXIT_OK, UsageError
from gpu_dra.cli.project import chosen_stack
from gpu_dra.cli.text import cut, sarif_document
from gpu_dra.core.analysis import doctor
from gpu_dra.core.analysis.doctor import RULES, Diagnosis
from gpu_dra.core.analysis.inventory import InventoryError, objects_in_document
from gpu_dra.core.config.models import Stack
from gpu_dra.core.facts.gates import DEFAULT_KUBERNETES_VERSION, VERSIONS, nearest_version
from gpu_dra.core.facts.target import Platform, Target
from gpu_dra.core.findings import Finding
from gpu_dra.core.render import manifests

EXAMPLES = """examples:
  gpu-dra doctor --cluster
  gpu-dra doctor --cluster --context prod --stack prod      # and drift from what the stack renders
  gpu-dra doctor --cluster --format sarif > doctor.sarif
  kubectl get nodes,resourceslices,deviceclasses,resourceclaims,resourceclaimtemplates,resourcequotas -A -o yaml \\
    > state.yaml && gpu-dra doctor state.yaml --kubernetes-version 1.35   # offline, on a captured state

exit codes: 0 no error-level finding, 1 an error-level finding, 2 bad input (an unreadable cluster or file)
"""

FORMATS = ("text", "json", "sarif")


def register(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("paths", nargs="*", metavar="FILE",
                        help="a captured state instead of (or beside) --cluster: Nodes, ResourceSlices, "
                             "DeviceClasses, ResourceClaims, ResourceClaimTemplates, ResourceQuotas, "
                             "DeviceTaintRules (YAML or JSON, `kubectl get -o yaml` lists too), or -")
    parser.add_argument("--stack", help="compare the cluster with what this stack renders (drift), and take its "
                                        "version, platform and feature gates where the cluster does not say")
    parser.add_argument("--kubernetes-version",
                        help="judge as this Kubernetes minor version (default: the API server's with --cluster, "
                             "else the stack's, else 1.35)")
    parser.add_argument("--platform", choices=[p.value for p in Platform],
                        help="eks: the version's upstream gate defaults; existing: declared and observed gates over "
                             "them (default: from the API server's version with --cluster, else the stack's)")
    cluster_options(parser)
    parser.add_argument("--format", choices=FORMATS, default="text")


def run(args: argparse.Namespace) -> int:
    if not args.cluster and not args.paths:
        raise UsageError("doctor needs --cluster or FILEs of a captured state (kubectl get nodes,resourceslices,"
                         "deviceclasses -o yaml > state.yaml); `gpu-dra doctor --help` shows examples")
    check_kubernetes_version(args.kubernetes_version)
    sources: list[tuple[str, list[dict[str, Any]]]] = []
    complete: set[str] = set()
    for name, documents in read_inputs(args.paths, lines=False, args=args):
        objects = [obj for document in documents for obj in objects_in_document(document.data)]
        sources.append((name, objects))
        # A list of a kind (`kubectl get nodes -o yaml`) is taken to hold all of it; one object
        # (`kubectl get node n1 -o yaml`) is not, so nothing is concluded from what it lacks.
        complete |= {str(obj.get("kind")) for document in documents if isinstance(document.data, dict)
                     and str(document.data.get("kind", "")).endswith("List")
                     for obj in objects_in_document(document.data)}
    state: ClusterState | None = None
    notes: list[str] = []
    if args.cluster:
        reads = (SLICES, CLASSES, CLAIMS, NODES, TEMPLATES, QUOTAS)
        state = read_live_cluster(args, reads)
        sources.append(("cluster", state.objects))
        complete |= {read.kind for read in reads} | {"DeviceTaintRule"}
        notes += state.notes
    checked = {"Node", "ResourceSlice", "DeviceClass", "ResourceClaim", "ResourceClaimTemplate", "ResourceQuota",
               "DeviceTaintRule"}
    if not args.cluster and not any(obj.get("kind") in checked for _, objects in sources for obj in objects):
        raise UsageError(f"no {', '.join(sorted(checked))} in {', '.join(cut(p) for p in args.paths)}: nothing to "
                         "check (`kubectl get nodes,resourceslices,deviceclasses -o yaml > state.yaml`)")
    stack = _stack(args)
    target, judged = _target(args, state, stack, notes)
    rendered = _rendered(stack) if stack is not None else None
    try:
        diagnosis = doctor.diagnose(sources, target, complete, rendered, args.stack or "")
    except InventoryError as error:
        raise UsageError(str(error)) from None
    diagnosis.notes[:0] = notes
    if args.format == "json":
        print(json.dumps([_entry(f) for f in diagnosis.findings], indent=2))
        _notes_to_stderr(diagnosis.notes)
    elif args.format == "sarif":
        print(json.dumps(as_sarif(diagnosis.findings), indent=2))
        _notes_to_stderr(diagnosis.notes)
    else:
        _print_text(diagnosis, judged)
    return EXIT_FINDINGS if diagnosis.errors else EXIT_OK


def _stack(args: argparse.Namespace) -> Stack | None:
    return chosen_stack(args) if args.stack else None


def _rendered(stack: Stack) -> list[dict[str, Any]]:
    """What the stack applies of the kinds doctor compares: its DeviceClasses, claim templates and quotas."""
    objects = manifests.dra_objects(stack)
    objects += [quota for team in stack.teams if (quota := manifests.resource_quota(team)) is not None]
    return objects


def _target(args: argparse.Namespace, state: ClusterState | None, stack: Stack | None,
            notes: list[str]) -> tuple[Target, str]:
    """The version and platform judged, and how they were chosen: the flags, else the API server's (EKS builds say
    -eks-), else the stack's, else the default. The stack's declared gates apply on an existing cluster."""
    version, platform, declared, origin = args.kubernetes_version, args.platform, {}, "--kubernetes-version"
    if state is not None and state.version:
        minor = state.minor
        if version is None and minor in VERSIONS:
            version, origin = minor, f"the API server's {state.version}"
        elif version is None and minor is not None:
            nearest = nearest_version(minor)
            version, origin = nearest, f"the API server's {state.version}"
            notes.append(f"the API server is {cut(state.version, 40)}, whose gates gpu-dra does not know: judged as "
                         f"Kubernetes {nearest}")
        platform = platform or (Platform.eks if state.on_eks else Platform.existing)
    elif state is not None:
        notes.append("the API server's version could not be read (GET /version): judged with the stack's or the "
                     "default version")
    if stack is not None:
        cluster = stack.config.cluster
        if version is None:
            version, origin = cluster.kubernetes_version, f"stack {args.stack}"
        platform = platform or cluster.platform
        declared = dict(cluster.feature_gates)
    if version is None:
        version, origin = DEFAULT_KUBERNETES_VERSION, "the default"
    target = Target(version, Platform(platform or Platform.eks), declared)
    return target, f"judged as {target.label}, from {origin}"


def _entry(finding: Finding) -> dict[str, Any]:
    return {"rule": finding.rule, "severity": finding.severity, "object": finding.object,
            "message": finding.message, "fix": finding.fix}


def _notes_to_stderr(notes: list[str]) -> None:
    for note in notes:
        print(f"note: {note}", file=sys.stderr)


def _print_text(diagnosis: Diagnosis, judged: str) -> None:
    for finding in diagnosis.findings:
        first, *rest = finding.message.splitlines() or [""]
        print(f"{finding.severity} {finding.rule} {finding.object}: {first}")
        for line in rest:
            print(f"    {line}")
        if finding.fix:
            print(f"    fix: {finding.fix}")
    for note in diagnosis.notes:
        print(f"note: {note}")
    errors = diagnosis.errors
    warnings = len(diagnosis.findings) - errors
    verdict = "" if diagnosis.findings else ": DRA looks healthy"
    print(f"{errors} error(s), {warnings} warning(s){verdict} ({judged})")


def as_sarif(findings: list[Finding]) -> dict[str, Any]:
    """One result per finding, as `gpu-dra check` writes them, located at the cluster object it names (a logical
    location: cluster objects have no file)."""
    results = []
    for finding in findings:
        text = f"{finding.object}: {finding.message.rstrip('.')}"
        kind, _, name = finding.object.partition(" ")
        results.append({
            "ruleId": finding.rule, "level": finding.severity,
            "message": {"text": f"{text}. Fix: {finding.fix}" if finding.fix else text},
            "locations": [{"logicalLocations": [{"name": name, "fullyQualifiedName": finding.object,
                                                 "kind": "resource"}]}],
            "properties": {"object": finding.object, "kind": kind},
        })
    return sarif_document(RULES, results)

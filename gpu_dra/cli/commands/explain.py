"""`gpu-dra explain`: which devices and nodes satisfy each claim and each pod, and why not."""

from __future__ import annotations

import argparse
import json
import re
from dataclasses import replace
from functools import partial
from typing import Any

from gpu_dra.cli.arguments import check_kubernetes_version, cluster_options
from gpu_dra.cli.cluster import DEVICE_READS, PENDING_READS, ClusterState
from gpu_dra.cli.live import read_live_cluster
from gpu_dra.cli.process import EXIT_FINDINGS, EXIT_OK, UsageError
from gpu_dra.cli.sources import gather
from gpu_dra.cli.text import cut
from gpu_dra.core.analysis.allocator import ClaimAllocation
from gpu_dra.core.analysis.explain import BINDING_NOT_SIMULATED, ClaimReport, Explainer, TaintRuleError, binding_waits
from gpu_dra.core.analysis.explain import EXAMPLES as DEVICE_EXAMPLES
from gpu_dra.core.analysis.explain.gates import DROPPED_ON_WRITE
from gpu_dra.core.analysis.explain.report import DroppedField
from gpu_dra.core.analysis.explain.taints import TaintedInventory
from gpu_dra.core.analysis.features import features_for
from gpu_dra.core.analysis.inventory import Inventory, LaunchedPool
from gpu_dra.core.analysis.pending import (
    QueueHold,
    SchedulerVerdict,
    hints,
    holders,
    named_holders,
    pending_pods,
    queue_hint,
    queue_holds,
    scheduler_verdicts,
    untainted,
)
from gpu_dra.core.analysis.pods import PodClaim, PodReport, PodSpec, explain_pods, nodes_from_objects, pods_from_objects
from gpu_dra.core.analysis.provisioning import Provisioning, ProvisioningJudge, claim_provisioning, only_launched
from gpu_dra.core.dra.cel.lexer import tokenize
from gpu_dra.core.dra.claims import (
    DeviceClass,
    ResourceClaim,
    claims_from_objects,
    classes_from_objects,
    gate_sites,
    in_use_from_claims,
    parse_device_class,
)
from gpu_dra.core.dra.objects import ObjectError
from gpu_dra.core.facts import auto_mode, gates, nvidia
from gpu_dra.core.facts.gates import nearest_version
from gpu_dra.core.facts.target import Platform, Target
from gpu_dra.core.findings import did_you_mean
from gpu_dra.core.yamlsource import collector_paused, format_path

EXAMPLES = """examples:
  gpu-dra explain --cluster                      # every Pending pod with claims, and why
  gpu-dra explain --cluster --pod ml/trainer-0 --context prod
  gpu-dra explain --cluster -n ml --format json
  gpu-dra explain --stack prod
  gpu-dra explain slices.yaml classes.yaml claims.yaml --claim ml/pair
  gpu-dra explain slices.yaml nodes.yaml templates.yaml deployment.yaml --pod ml/trainer
  gpu-dra explain slices.yaml claims.yaml --kubernetes-version 1.36
  gpu-dra explain slices.yaml devicetaintrules.yaml pod.yaml --kubernetes-version 1.37
  gpu-dra explain --cluster --context prod claim.yaml --format json

exit codes: 0 every claim and pod is allocatable (and, with a stack's NodePools, would get a node), 1 some is not
or a pod is held by Kueue, 2 bad input (an unreadable file or cluster, a --claim or --pod that names nothing)
"""


# The chart release whose templates CHART_CLASS_SELECTORS were read from (gpu_dra/core/facts/nvidia.py's sources).
CHART_CLASSES_RELEASE = "dra-driver-nvidia-gpu 0.4.1, nvidia-dra-driver-gpu 25.12.0"


def register(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("paths", nargs="*", metavar="FILE",
                        help="ResourceSlices, DeviceTaintRules, DeviceClasses, ResourceClaims, "
                             "ResourceClaimTemplates, Nodes, and Pods, Deployments, StatefulSets, DaemonSets, "
                             "ReplicaSets, Jobs or CronJobs naming resource claims (YAML or JSON), or -")
    parser.add_argument("--stack", help="add the stack's classes and templates (and its fleet, without slices)")
    parser.add_argument("--claim", help="only this claim or template (name or namespace/name)")
    parser.add_argument("--pod", metavar="NAMESPACE/NAME",
                        help="only this pod or workload (and no claims, unless --claim names one)")
    parser.add_argument("--kubernetes-version",
                        help="the scheduler's Kubernetes minor version, whose feature gates decide the verdict "
                             "(default: the cluster's with --cluster, else the stack's with --stack, else 1.35)")
    parser.add_argument("--platform", choices=[p.value for p in Platform],
                        help="eks: the version's upstream gate defaults; existing: the stack's declared "
                             "feature gates apply over them (default: the API server's build with --cluster, EKS "
                             "where it says -eks-; else the stack's with --stack; else eks)")
    cluster_options(parser)
    parser.add_argument("-n", "--namespace",
                        help="with --cluster and no FILE: only the Pending pods of this namespace (default: all)")
    parser.add_argument("--verbose", action="store_true", help="list more devices per reason")
    parser.add_argument("--all-devices", action="store_true",
                        help="JSON: list every matching and rejected device (default: each count and the first 5)")
    parser.add_argument("--format", choices=["text", "json"], default="text")


def _target(args: argparse.Namespace, cluster: ClusterState | None = None) -> Target:
    """The scheduler's Kubernetes version, platform and declared gates: the flags', else the live cluster's (its
    /version: what its scheduler runs; EKS where the build says so), else the stack's, else the default on EKS."""
    target = Target()
    if args.stack:
        from gpu_dra.cli.project import chosen_stack  # the stack models (pydantic) only when a stack is read

        target = chosen_stack(args).config.target
    if cluster is not None and cluster.minor is not None:
        version = nearest_version(cluster.minor)
        target = replace(target, kubernetes_version=version,
                         platform=Platform.eks if cluster.on_eks else Platform.existing)
        if version != cluster.minor and not args.kubernetes_version:
            cluster.notes.append(f"the API server is {cluster.version}, whose gates gpu-dra does not know: judged as "
                                 f"Kubernetes {version}")
    return replace(target, kubernetes_version=args.kubernetes_version or target.kubernetes_version,
                   platform=Platform(args.platform or target.platform))


def run(args: argparse.Namespace) -> int:
    check_kubernetes_version(args.kubernetes_version)
    pending = args.cluster and not args.paths and not args.claim
    if args.namespace and not pending:
        raise UsageError("--namespace: only with --cluster and no FILE or --claim (it picks the Pending pods read)")
    cluster: ClusterState | None = None
    if args.cluster:  # read here, so that the cluster's version is the scheduler's with FILEs too
        cluster = read_live_cluster(args, PENDING_READS if pending else DEVICE_READS)
    target = _target(args, cluster)  # its notes before gather takes them
    # The inputs and their typed objects live to the end of the run and hold no cycles: no collection traverses
    # what a fleet's (a million objects at 10,000 nodes) are made of.
    files: dict[int, str] = {}
    with collector_paused(keep=True):
        devices, objects, origin = gather(args, cluster, with_stack=not pending, files=files)
    everything = claims_from_objects(objects)
    try:
        every_pod = pending_pods(objects) if pending else pods_from_objects(objects)
    except ObjectError as error:
        raise UsageError(f"{error} (in {cut(origin)})") from None
    claims, pods = _chosen(args, everything, every_pod, pending)
    nodes = nodes_from_objects(objects)
    classes = classes_from_objects(objects)
    pools = devices.launched_pools
    # No chart runs on an Auto Mode stack's nodes (Auto Mode stands alone: one provisioner per stack).
    chart = not (pools and pools[0].auto_mode)
    explainer = Explainer(classes, features=features_for(target), chart_classes=chart)
    try:
        tainted = explainer.with_taint_rules(devices)
    except TaintRuleError as error:
        raise UsageError(str(error)) from None
    devices = tainted.inventory
    gate = target.taint_rule_gate
    in_use = in_use_from_claims(everything)
    if pending:
        in_use = named_holders(in_use, holders(objects))
    reports = [explainer.explain(claim, devices, in_use, nodes=[n.node for n in nodes] or None) for claim in claims]
    pod_reports = explain_pods(pods, everything, devices, explainer, in_use, nodes or None)
    if pools:  # the stack's fleet counts nodes not launched yet: would they ever be?
        _judge_provisioning(ProvisioningJudge(explainer, target.driver_level), pools,
                            list(zip(claims, reports, strict=True)), pod_reports, everything)
    said = scheduler_verdicts(objects) if pending else {}
    held = queue_holds(objects) if pending else {}
    free = untainted(nodes)
    advice = {pod.name: [queue_hint(report, held[pod.name])] if pod.name in held else
              hints(pod, report, everything, devices, explainer, in_use, nodes, free)
              for pod, report in zip(pods, pod_reports, strict=True)} if pending else {}
    _name_files(list(zip(claims, reports, strict=True)), everything, objects, files, args.stack)
    judged = _judged(list(zip(claims, reports, strict=True)), pod_reports, everything)
    notes = [*_auto_mode_assumptions(pools), *(_assumed_classes(judged, classes) if chart else []),
             *_dropped_fields(judged, objects, target), *_missing_drivers(judged, devices, explainer.classes)]
    if pod_reports and not nodes:
        notes.append("no Node in the inputs: the pods are judged on the nodes the ResourceSlices name, without "
                     "labels or taints, so their nodeSelector, node affinity and tolerations are not checked (add "
                     "the Nodes: kubectl get nodes -o yaml)")
    if args.format == "json":
        examples = None if args.all_devices else DEVICE_EXAMPLES
        with collector_paused():  # JSON data makes no cycles: no collection traverses the fleet's node lists
            output = _json_sharing_node_lists({
                "source": origin, "taint_rules": {"gate": gate, **tainted.as_dict()},
                "kubernetes": {"version": target.kubernetes_version, "platform": target.platform,
                               "server": cluster.version if cluster else None},
                "claims": [r.as_dict(examples) for r in reports],
                "pods": [_pod_dict(p, examples, said, advice, pending, held) for p in pod_reports],
                "notes": [*devices.notes, *notes]})
        print(output)
    else:
        print(f"Devices from {origin}: {len(devices.nodes())} node(s), {len(devices.devices)} device(s)")
        if cluster is not None:
            server = f", API server {cluster.version}" if cluster.version else ""
            print(f"Judged as the kube-scheduler of {target.label}{server}")
            for note in devices.notes:
                print(f"note: {note}")
        for note in notes:
            print(f"note: {note}")
        print()
        _print_taint_rules(tainted, f"{gate} is off in {target.label}")
        _print_text(args, reports, pod_reports, said, advice, pending, held)
    fine = (all(r.allocatable and not r.never_provisioned for r in reports)
            and all(p.allocatable and p.pod not in held for p in pod_reports))
    return EXIT_OK if fine else EXIT_FINDINGS


def _chosen(args: argparse.Namespace, claims: list[ResourceClaim], pods: list[PodSpec],
            pending: bool) -> tuple[list[ResourceClaim], list[PodSpec]]:
    """The claims and pods --claim and --pod name (by name or namespace/name), or all of them; with --cluster and no
    FILE or --claim, only the Pending pods."""
    if args.claim:
        named = [c for c in claims if args.claim in (c.name, c.name.rsplit("/", 1)[-1])]
        if not named:
            raise UsageError(f"no claim or claim template named {cut(args.claim, 100)!r} in the inputs; "
                             f"{_what_there_is(args.claim, [c.name for c in claims])}")
        claims = named
    if pending:
        claims = []
    if args.pod:
        every_pod, pods = pods, [p for p in pods if args.pod in (p.name, p.name.rsplit("/", 1)[-1])]
        if not pods and pending:
            raise UsageError(f"no Pending pod with resource claims named {cut(args.pod, 100)!r} in the cluster"
                             + (f"'s namespace {cut(args.namespace, 63)}" if args.namespace else "")
                             + " (a pod that is running or names no claims is not explained)")
        if not pods:
            raise UsageError(f"no pod or workload with resource claims named {cut(args.pod, 100)!r} in the inputs; "
                             f"{_what_there_is(args.pod, [p.name for p in every_pod])}")
        if not args.claim:
            claims = []
    if not claims and not pods and not pending:
        raise UsageError("no ResourceClaim, ResourceClaimTemplate, or Pod or workload naming resource claims in "
                         "the inputs (give files, or --stack)")
    return claims, pods


def _name_files(claim_reports: list[tuple[ResourceClaim, ClaimReport]], everything: list[ResourceClaim],
                objects: list[dict[str, Any]], files: dict[int, str], stack: str | None) -> None:
    """Give a report the input its claim came from where claims of its name came from more than one (two clusters'
    dumps, a dump and a manifest): they would print alike."""
    written = [obj for obj in objects if obj.get("kind") in ("ResourceClaim", "ResourceClaimTemplate")]
    # claims_from_objects keeps every claim and template, in order: the claims and the objects pair up
    file_of = {id(claim): files.get(id(obj), f"stack {stack}") for claim, obj in zip(everything, written, strict=True)}
    inputs: dict[str, set[str]] = {}
    for claim in everything:
        inputs.setdefault(claim.name, set()).add(file_of[id(claim)])
    for claim, report in claim_reports:
        if len(inputs[claim.name]) > 1:
            report.file = file_of[id(claim)]


# A claim or template as written, and the reports that judged it (a template's, one per pod made from it).
Judged = list[tuple[ResourceClaim, list[ClaimReport]]]


def _judged(claim_reports: list[tuple[ResourceClaim, ClaimReport]], pod_reports: list[PodReport],
            everything: list[ResourceClaim]) -> Judged:
    """Each claim or template explained, alone or for a pod, once, with its reports."""
    by_name = {(claim.kind, claim.name): claim for claim in everything}
    judged: dict[int, tuple[ResourceClaim, list[ClaimReport]]] = {}
    for claim, report in claim_reports:
        judged.setdefault(id(claim), (claim, []))[1].append(report)
    for pod_report in pod_reports:
        for item in pod_report.claims:
            if item.report is None:
                continue
            kind, _, name = item.source.partition(" ")  # "template ns/name" or "claim ns/name"
            written = by_name.get(("ResourceClaim", item.claim)) or by_name.get(
                ("ResourceClaimTemplate" if kind == "template" else "ResourceClaim", name))
            if written is not None:
                judged.setdefault(id(written), (written, []))[1].append(item.report)
    return list(judged.values())


def _classes_used(claim: ResourceClaim) -> list[str]:
    return sorted({choice.device_class for request in claim.requests for choice in request.choices})


def _what_there_is(wanted: str, names: list[str], shown: int = 12) -> str:
    """What --claim or --pod could have named: the same name in another namespace (a team's name given for its
    namespace), else the closest, then the names there are."""
    if not names:
        return "the inputs have none"
    same = [n for n in names if n.rsplit("/", 1)[-1] == wanted.rsplit("/", 1)[-1]]
    hint = f"did you mean {same[0]!r}? " if same else did_you_mean(wanted, names)
    more = f", and {len(names) - shown} more" if len(names) > shown else ""
    return f"{hint}there are: {', '.join(sorted(names)[:shown])}{more}"


def _assumed_classes(judged: Judged, defined: dict[str, list[str]]) -> list[str]:
    """A note per NVIDIA chart DeviceClass a claim used that the inputs do not define: the Explainer judged it with
    the chart's selectors, which a cluster may not have (another release, a class of its own under that name)."""
    users: dict[str, list[str]] = {}
    for claim, reports in judged:
        assumed = [name for name in _classes_used(claim) if name in nvidia.CHART_CLASS_SELECTORS
                   and name not in defined]
        for report in reports:
            report.assumed_classes = assumed
        for name in assumed:
            if claim.name not in users.setdefault(name, []):
                users[name].append(claim.name)
    return [f"DeviceClass {name} is not in the inputs: judged as NVIDIA's chart defines it ({CHART_CLASSES_RELEASE}) "
            f"for {_some(users[name])}; give the cluster's own (kubectl get deviceclasses -o yaml) if it differs"
            for name in sorted(users)]


def _dropped_fields(judged: Judged, objects: list[dict[str, Any]], target: Target) -> list[str]:
    """A note per field the API server drops because its gate is off for the target, on the claims judged and the
    DeviceClasses read; each claim's report lists its own."""
    def dropped(parsed: ResourceClaim | DeviceClass, kind: str, name: str) -> list[DroppedField]:
        return [DroppedField(f"{kind} {name}", format_path(path), guarded.gate, target.kubernetes_version,
                             target.platform) for path, guarded in gate_sites(parsed)
                if guarded in DROPPED_ON_WRITE and not target.enabled(guarded.gate)]

    found: list[DroppedField] = []
    for claim, reports in judged:
        mine = dropped(claim, claim.kind, claim.name)
        for report in reports:
            report.dropped = mine
        found += mine
    for obj in objects:
        device_class = parse_device_class(obj) if obj.get("kind") == "DeviceClass" else None
        if device_class is not None:
            found += dropped(device_class, "DeviceClass", device_class.name)
    # A cluster's object may hold the field from when the gate was on: the scheduler of this version ignores it.
    return [f"{d.object}: {d.field} dropped: {_gate_off(d.gate, target)}, so the API server does not store it and "
            "the scheduler ignores it; judged without it" for d in found]


def _gate_off(gate: str, target: Target) -> str:
    """Why a gate is off for the target, as lint says it (gpu_dra.core.checks.manifest_lint.gates_off)."""
    current = gates.state(gate, target.kubernetes_version)
    stage = f"{current.stage} and off" if current else "not present"
    where = ("EKS runs only the upstream defaults" if target.platform is Platform.eks
             else "the cluster does not declare it on")
    return f"{gate} is {stage} in Kubernetes {target.kubernetes_version} ({where})"


def _missing_drivers(judged: Judged, devices: Inventory, selectors: dict[str, list[str]]) -> list[str]:
    """A note per driver a DeviceClass the claims ask for selects (`device.driver == '...'` in its selectors) that
    has no device in the inputs: its ResourceSlices were not dumped, or its kubelet plugin publishes none."""
    present = {device.driver for device in devices.devices}
    wanted: dict[str, dict[str, list[str]]] = {}  # driver -> class -> claims
    for claim, _ in judged:
        for name in _classes_used(claim):
            for driver in _drivers_selected(selectors.get(name, [])) - present:
                claims = wanted.setdefault(driver, {}).setdefault(name, [])
                if claim.name not in claims:
                    claims.append(claim.name)
    if not wanted:
        return []
    counts: dict[str, int] = {}
    for device in devices.devices:
        counts[device.driver] = counts.get(device.driver, 0) + 1
    held = ", ".join(f"{count} of driver {driver}" for driver, count in sorted(counts.items()))
    return [f"no device of driver {driver} in the inputs, which DeviceClass "
            + "; ".join(f"{name} selects for {_some(claims)}" for name, claims in sorted(classes.items()))
            + f": they hold {held} only; give every driver's ResourceSlices (kubectl get resourceslices -o yaml), "
            f"and check that {driver}'s kubelet plugin runs on the nodes" for driver, classes in sorted(wanted.items())]


def _drivers_selected(expressions: list[str]) -> set[str]:
    """The drivers named by `device.driver == '...'` (either way round) in a class's selectors."""
    found = set()
    for expression in expressions:
        tokens = tokenize(expression) or []
        texts = [t.text if t.kind != "string" else "STRING" for t in tokens]
        for index in range(len(tokens) - 4):
            if texts[index:index + 4] == ["device", ".", "driver", "=="] and texts[index + 4] == "STRING":
                found.add(tokens[index + 4].string_value)
            elif texts[index:index + 5] == ["STRING", "==", "device", ".", "driver"]:
                found.add(tokens[index].string_value)
    return {driver for driver in found if driver is not None}


def _auto_mode_assumptions(pools: list[LaunchedPool]) -> list[str]:
    """What a verdict on Auto Mode's nodes assumes, where AWS does not document it."""
    if not any(pool.auto_mode for pool in pools):
        return []
    return [f"EKS Auto Mode does not document {what}" for what in auto_mode.UNDOCUMENTED.values()]


def _some(names: list[str], shown: int = 3) -> str:
    return ", ".join(names[:shown]) + (f" and {len(names) - shown} more" if len(names) > shown else "")


def _judge_provisioning(judge: ProvisioningJudge, pools: list[LaunchedPool],
                        claim_reports: list[tuple[ResourceClaim, ClaimReport]], pod_reports: list[PodReport],
                        everything: list[ResourceClaim]) -> None:
    """Where only nodes of the stack's Karpenter or Auto Mode NodePools fit, whether one would be launched: each
    claim's verdict, and a pod that fits such nodes alone is not allocatable when one of its claims never gets one.
    Each claim is judged once, for itself and for the pods using it. A stack has one provisioner (Auto Mode stands
    alone: stack_rules.auto_mode_alone)."""
    release, who = pools[0].provisioner, pools[0].launcher
    verdicts: dict[str, Provisioning] = {}

    def verdict(claim: ResourceClaim) -> Provisioning:
        if claim.name not in verdicts:
            verdicts[claim.name] = judge.judge(claim, pools)
        return verdicts[claim.name]

    for claim, report in claim_reports:
        said = claim_provisioning(partial(verdict, claim), pools, report.allocatable, report.nodes)
        if said is not None:  # else served by node groups alone: the provisioner has no say
            report.provisioning, report.never_provisioned = said
    by_name = {claim.name: claim for claim in everything}
    for pod_report in pod_reports:
        if not pod_report.allocatable or not only_launched(pools, pod_report.nodes):
            continue
        for item in pod_report.claims:
            own = by_name.get(item.source.split(" ", 1)[-1])
            never = verdict(own) if own is not None else None
            if never is not None and not never.provisionable:
                pod_report.allocatable, pod_report.node = False, None
                pod_report.reason = (f"it fits only nodes {who} has not launched, and {release} would never "
                                     f"launch one for its {item.source}: {never.summary().removeprefix('never: ')}")
                break


def _print_text(args: argparse.Namespace, reports: list[ClaimReport], pod_reports: list[PodReport],
                said: dict[str, SchedulerVerdict], advice: dict[str, list[str]], pending: bool,
                held: dict[str, QueueHold]) -> None:
    for report in reports:
        _print_report(report, args.verbose)
    if pending and not pod_reports:
        where = f" in namespace {args.namespace}" if args.namespace else ""
        print(f"No Pending pod with resource claims{where}: every such pod is placed.")
    for pod_report in pod_reports:
        _print_pod(pod_report, said.get(pod_report.pod), advice.get(pod_report.pod), pending, held.get(pod_report.pod))


# Stands for a claim's node list while the rest of the report is encoded (as JSON: "\u0000node list 3").
_NODE_LIST = "\x00node list "
_NODE_LIST_JSON = re.compile(re.escape(json.dumps(_NODE_LIST)[:-1]) + r'(\d+)"')


def _json_sharing_node_lists(document: dict[str, Any]) -> str:
    """`json.dumps(document, separators=(",", ":"))`, each distinct node list of its claims encoded once: on a
    10,000-node fleet each claim lists every node it fits on, mostly the same 10,000 for every claim."""
    encoded: dict[tuple[str, ...], int] = {}
    texts: list[str] = []
    for claim in document["claims"]:
        nodes = tuple(claim["nodes"])
        index = encoded.get(nodes)
        if index is None:
            index = encoded[nodes] = len(texts)
            texts.append(json.dumps(claim["nodes"], separators=(",", ":")))
        claim["nodes"] = f"{_NODE_LIST}{index}"
    text = json.dumps(document, separators=(",", ":"))
    if len(_NODE_LIST_JSON.findall(text)) != len(document["claims"]):  # an input's text that reads like one
        for claim in document["claims"]:
            claim["nodes"] = json.loads(texts[int(claim["nodes"].removeprefix(_NODE_LIST))])
        return json.dumps(document, separators=(",", ":"))
    return _NODE_LIST_JSON.sub(lambda found: texts[int(found[1])], text)


def _print_taint_rules(tainted: TaintedInventory, why_not: str) -> None:
    """What each DeviceTaintRule does to the devices, or why the scheduler applies none."""
    for rule, devices in tainted.rules:
        if not tainted.applied:
            print(f"DeviceTaintRule {rule.name} ({rule.taint.label}): not applied: {why_not}")
            continue
        shown = ", ".join(f"{d.node}/{d.name}" for d in devices[:5]) + (", ..." if len(devices) > 5 else "")
        print(f"DeviceTaintRule {rule.name} ({rule.taint.label}): taints {len(devices)} device(s)"
              + (f": {shown}" if devices else ""))
    for note in tainted.notes:
        print(f"  note: {note}")
    if tainted.rules:
        print()


def _print_binding(allocations: list[ClaimAllocation | None], with_claim: bool) -> None:
    """The binding conditions binding waits for, which gpu-dra reports and does not simulate."""
    waits = binding_waits(allocations)
    if not waits:
        return
    print(f"  binding waits for the binding conditions of {len(waits)} device(s):")
    for claim, device in waits:
        failure = device.binding_failure_conditions
        fails = f" (fails on {', '.join(failure)})" if failure else ""
        print(f"    {claim + ': ' if with_claim else ''}{device.driver}/{device.pool}/{device.device}: "
              f"{', '.join(device.binding_conditions)}{fails}")
    print(f"  {BINDING_NOT_SIMULATED}")


def _not_allocatable(report: ClaimReport | PodReport) -> str:
    """The heading of a claim or pod no node was found for: NOT DECIDED where a search was stopped before it could
    tell (the scheduler's filter timeout), else NOT allocatable."""
    if report.timed_out and report.reason.startswith("not decided: "):
        return f"NOT DECIDED: {report.reason.removeprefix('not decided: ')}"
    return f"NOT allocatable: {report.reason}"


def _print_report(report: ClaimReport, verbose: bool) -> None:
    claim = report.claim + (f" (from {cut(report.file)})" if report.file else "")
    if report.never_provisioned:
        print(f"claim {claim}: NOT provisionable: it fits only nodes not launched yet, and none would ever be "
              "launched for it")
    elif report.allocatable:
        nodes = ", ".join(report.nodes[:5]) + (f", ... ({len(report.nodes)} in all)" if len(report.nodes) > 5 else "")
        print(f"claim {claim}: allocatable on {len(report.nodes)} node(s): {nodes}")
    else:
        print(f"claim {claim}: {_not_allocatable(report)}")
    if report.provisioning:
        print(f"  {report.provisioning}")
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
        _print_binding([report.allocation], with_claim=False)
    print()


def _pod_dict(report: PodReport, examples: int | None, said: dict[str, SchedulerVerdict], advice: dict[str, list[str]],
              pending: bool, held: dict[str, QueueHold]) -> dict[str, Any]:
    """A pod's JSON: the report, and for a live cluster's Pending pod what holds it in Kueue, the scheduler's last
    word and the hints."""
    data: dict[str, Any] = report.as_dict(examples)
    if pending:
        verdict, hold = said.get(report.pod), held.get(report.pod)
        data["kueue"] = hold.as_dict() if hold else None
        data["scheduler"] = verdict.as_dict() if verdict else None
        data["hints"] = advice.get(report.pod, [])
    return data


def _print_pod(report: PodReport, verdict: SchedulerVerdict | None = None, advice: list[str] | None = None,
               pending: bool = False, hold: QueueHold | None = None) -> None:
    """The pod's verdict, then per claim its devices on the pod's node, or how it fares alone; for a Pending pod of
    a live cluster, the layer that holds it first (Kueue, then the scheduler's own message) and what would make it
    schedulable last."""
    kind = "Pending" if pending else report.kind
    if report.allocatable:
        others = f" (of {len(report.nodes)} node(s))" if len(report.nodes) > 1 else ""
        print(f"pod {report.pod} ({kind}): allocatable on {report.node}{others}")
    else:
        print(f"pod {report.pod} ({kind}): {_not_allocatable(report)}")
    if hold is not None:
        print(f"  {hold.words()}")
    if verdict is not None:
        times = f", {verdict.count} times" if verdict.count > 1 else ""
        when = f", last {verdict.last}" if verdict.last else ""
        origin = "FailedScheduling" if verdict.source == "event" else "PodScheduled condition"
        print(f"  scheduler ({origin}{times}{when}): {cut(verdict.message, 600)}")
    elif pending and hold is not None:
        print("  scheduler: not tried while Kueue holds the pod; once admitted, the verdict below applies")
    elif pending:
        print("  scheduler: no FailedScheduling event or PodScheduled condition yet (not tried, or the events "
              "expired: they are kept 1 h by default)")
    for item in report.claims:
        source = f"{item.source} -> {item.claim}" if item.source.startswith("template ") else item.source
        print(f"  claim {item.entry} ({source}): {_claim_state(item, report.reason)}")
    _print_binding([item.allocation for item in report.claims], with_claim=True)
    for hint in advice or []:
        print(f"  => {hint}")
    print()


def _claim_state(item: PodClaim, pod_reason: str) -> str:
    if item.allocation is not None:
        return ", ".join(f"{d.request} -> {d.driver}/{d.pool}/{d.device}" for d in item.allocation.devices)
    if item.allocated_already:
        return "allocated already: the pod goes where its devices are"
    if item.report is None:
        return "not in the inputs"
    if item.report.allocatable:
        return f"fits alone on {len(item.report.nodes)} node(s)"
    if pod_reason == f"claim {item.claim} ({item.entry}): {item.report.reason}":
        return "NOT allocatable alone (the reason above)"
    return f"NOT allocatable alone: {item.report.reason}"

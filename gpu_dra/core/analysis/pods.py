"""Pods as the DynamicResources plugin schedules them: all of a pod's claims allocated together on one node.

A Pod, or a workload's pod template (Deployment, StatefulSet, DaemonSet, ReplicaSet, Job, CronJob), names its claims
in `spec.resourceClaims`: a `resourceClaimTemplateName` (the pod gets a claim of its own, made from the template) or
a `resourceClaimName` (a claim shared with other pods; if it is allocated already, the pod must go where its devices
are). The claims are resolved against the input's templates and claims, each is explained on its own (the match
report and whether it fits alone), then all are allocated together per node with the faithful core
(`allocate_claims`, through `Explainer`; binding conditions of the devices are reported, not simulated), on the nodes
the pod may use: its nodeName, nodeSelector, required node affinity and its tolerations of the nodes' taints when Node
objects are in the input (gpu_dra.core.dra.scheduling); without them, the nodes the slices name (only nodeName is
checked then, since their labels are unknown).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from gpu_dra.core.analysis.allocator import ClaimAllocation
from gpu_dra.core.analysis.explain import ClaimReport, Explainer, binding_as_dict
from gpu_dra.core.analysis.inventory import Inventory
from gpu_dra.core.analysis.pools import Node
from gpu_dra.core.data import mapping
from gpu_dra.core.dra.claims import DeviceId, ResourceClaim
from gpu_dra.core.dra.objects import ObjectError
from gpu_dra.core.dra.scheduling import schedules_on, why_not_on
from gpu_dra.core.findings import ERROR, Finding

# Where each pod-bearing kind keeps its pod template.
POD_TEMPLATES: dict[str, tuple[str, ...]] = {
    "Pod": (),
    "Deployment": ("spec", "template"),
    "StatefulSet": ("spec", "template"),
    "DaemonSet": ("spec", "template"),
    "ReplicaSet": ("spec", "template"),
    "Job": ("spec", "template"),
    "CronJob": ("spec", "jobTemplate", "spec", "template"),
}
CLAIM_MISSING, NO_NODE = "pod-claim-missing", "pod-no-node"


@dataclass(frozen=True)
class PodSpec:
    name: str  # namespace/name of the Pod or workload
    kind: str
    spec: Mapping[str, Any]  # the pod spec (a workload's template's)
    # A live Pod's claims made from templates, by entry: the resourceclaim controller names them <pod>-<entry>-<random>
    # and records the name in status.resourceClaimStatuses (kubernetes/api@v0.34.0 core/v1 types.go
    # PodResourceClaimStatus).
    claim_names: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class ClusterNode:
    node: Node
    taints: tuple[Mapping[str, Any], ...] = ()
    taint_key: str = field(init=False, repr=False, compare=False)  # equal for nodes tainted alike

    def __post_init__(self) -> None:
        object.__setattr__(self, "taint_key", repr(self.taints))


@dataclass
class PodClaim:
    entry: str  # the pod's spec.resourceClaims[].name
    source: str  # "template ns/name" or "claim ns/name"
    claim: str = ""  # the claim's name as allocated: ns/<pod>-<entry> for a template's
    report: ClaimReport | None = None  # the claim on its own
    allocation: ClaimAllocation | None = None  # on the pod's node, allocated together
    allocated_already: bool = False

    def as_dict(self, examples: int | None) -> dict[str, Any]:
        return {"name": self.entry, "source": self.source, "claim": self.claim,
                "allocated_already": self.allocated_already,
                "devices": [] if self.allocation is None else [
                    {"request": d.request, "driver": d.driver, "pool": d.pool, "device": d.device}
                    for d in self.allocation.devices],
                "alone": None if self.report is None else self.report.as_dict(examples)}


@dataclass
class PodReport:
    pod: str
    kind: str
    allocatable: bool = False
    node: str | None = None
    nodes: list[str] = field(default_factory=list)  # every node the claims fit on together
    timed_out: list[str] = field(default_factory=list)  # nodes whose search was stopped: not decided there
    claims: list[PodClaim] = field(default_factory=list)
    errors: list[Finding] = field(default_factory=list)
    reason: str = ""

    def as_dict(self, examples: int | None = 5) -> dict[str, Any]:
        return {"pod": self.pod, "kind": self.kind, "allocatable": self.allocatable, "node": self.node,
                "nodes": self.nodes, "timed_out": self.timed_out, "reason": self.reason,
                "errors": [{"rule": e.rule, "message": e.message} for e in self.errors],
                "claims": [c.as_dict(examples) for c in self.claims],
                "binding": binding_as_dict(c.allocation for c in self.claims)}


def _at(obj: Any, path: Sequence[str]) -> Any:
    for key in path:
        obj = obj.get(key) if isinstance(obj, Mapping) else None
    return obj


def pods_from_objects(objects: Iterable[Mapping[str, Any]]) -> list[PodSpec]:
    """The Pods and workloads' pod templates that name resource claims; ObjectError for one the API would refuse."""
    out = []
    for obj in objects:
        kind = obj.get("kind")
        if not isinstance(kind, str) or kind not in POD_TEMPLATES:  # `kind: [Pod]` is unhashable
            continue
        spec = _at(obj, (*POD_TEMPLATES[str(kind)], "spec"))
        if not isinstance(spec, Mapping) or not spec.get("resourceClaims"):
            continue
        meta = mapping(obj.get("metadata"))
        name = f"{meta.get('namespace') or 'default'}/{meta.get('name', '?')}"
        node_name = spec.get("nodeName")
        if node_name is not None and not isinstance(node_name, str):  # no API server stores one: bad input
            raise ObjectError(f"{kind} {name[:200]}: spec.nodeName: must be a string (a node's name), not "
                              f"{type(node_name).__name__}")
        statuses = _at(obj, ("status", "resourceClaimStatuses")) if kind == "Pod" else None
        made = {str(s.get("name")): str(s["resourceClaimName"])
                for s in (statuses if isinstance(statuses, list) else [])
                if isinstance(s, Mapping) and s.get("resourceClaimName")}
        out.append(PodSpec(name, str(kind), spec, made))
    return out


def nodes_from_objects(objects: Iterable[Mapping[str, Any]]) -> list[ClusterNode]:
    """Node objects with their labels and taints."""
    out = []
    for obj in objects:
        if obj.get("kind") != "Node":
            continue
        meta = mapping(obj.get("metadata"))
        labels = mapping(meta.get("labels"))
        taints = _at(obj, ("spec", "taints")) or []
        out.append(ClusterNode(Node(str(meta.get("name", "")), {str(k): str(v) for k, v in labels.items()}),
                               tuple(t for t in taints if isinstance(t, Mapping))))
    return out


def explain_pods(pods: Sequence[PodSpec], claims: Sequence[ResourceClaim], inventory: Inventory,
                 explainer: Explainer, in_use: Mapping[Any, str] | None = None,
                 nodes: Sequence[ClusterNode] | None = None) -> list[PodReport]:
    """Per pod: its claims resolved, each explained alone, then all allocated together on one node it may use
    (the first such node in name order is its node)."""
    by_name = {(c.kind, c.name): c for c in claims}
    node_list = [n.node for n in nodes] if nodes else None
    return [_explain_pod(pod, by_name, inventory, explainer, in_use or {}, nodes, node_list) for pod in pods]


def _usable_nodes(pod: PodSpec, inventory: Inventory, nodes: Sequence[ClusterNode] | None) -> list[str]:
    wanted = pod.spec.get("nodeName")
    if nodes and not wanted and not pod.spec.get("nodeSelector") and not pod.spec.get("affinity"):
        by_taints: dict[str, bool] = {}  # only the taints decide: nodes tainted alike are judged once
        usable = []
        for n in nodes:
            fits = by_taints.get(n.taint_key)
            if fits is None:
                fits = by_taints[n.taint_key] = schedules_on(pod.spec, n.node.labels, n.taints)
            if fits:
                usable.append(n.node.name)
        return usable
    if nodes:
        return [n.node.name for n in nodes if (not wanted or n.node.name == wanted)
                and schedules_on(pod.spec, n.node.labels, n.taints)]
    return [name for name in inventory.nodes() if not wanted or name == wanted]


def _refused_by_nodes(pod: PodSpec, claim: ClaimReport, nodes: Sequence[ClusterNode],
                      reach: Mapping[str, frozenset[DeviceId]], known: dict[Any, tuple[Any, str]]) -> str:
    """Where every node that reaches a device the claim matches refuses the pod by its node selection or taints
    (NodeAffinity and TaintToleration filter nodes before DynamicResources runs): the first, and why. `known`: the
    answers of one run, by the fleet's reach (one per set of nodes, kept by the explainer), the claim's match lists
    (shared by claims alike) and what the pod says of nodes, so that a cluster's many alike Pending pods cost one
    pass over the nodes, not one each."""
    spec = pod.spec
    key = (id(reach), tuple(id(request.matching) for request in claim.requests),
           repr((spec.get("nodeSelector"), spec.get("affinity"), spec.get("tolerations"))))
    if key in known:
        return known[key][1]
    lists = [request.matching for request in claim.requests]  # kept with the answer: their ids stay theirs
    matching = {DeviceId(d.driver, d.pool, d.name) for found in lists for d in found}
    reaching = [node for node in nodes if reach.get(node.node.name, frozenset()) & matching]
    selects = spec.get("nodeSelector") or spec.get("affinity")
    by_taints: dict[str, str | None] = {}  # without node selection only the taints decide: judged once per set
    refusals = []
    for node in reaching:
        if selects:
            why = why_not_on(spec, node.node.labels, node.taints)
        elif node.taint_key in by_taints:
            why = by_taints[node.taint_key]
        else:
            why = by_taints[node.taint_key] = why_not_on(spec, node.node.labels, node.taints)
        if why is None:
            known[key] = (lists, "")
            return ""
        refusals.append((node.node.name, why))
    known[key] = (lists, _refusal(refusals))
    return known[key][1]


def _refusal(refusals: Sequence[tuple[str, str]]) -> str:
    if not refusals:
        return ""
    name, why = refusals[0]
    return (f"; none of the {len(refusals)} nodes with matching devices admits the pod ({name}: {why})"
            if len(refusals) > 1 else f"; the one node with matching devices does not admit the pod ({name}: {why})")


def _explain_pod(pod: PodSpec, by_name: Mapping[tuple[str, str], ResourceClaim], inventory: Inventory,
                 explainer: Explainer, in_use: Mapping[Any, str], nodes: Sequence[ClusterNode] | None,
                 node_list: Sequence[Node] | None) -> PodReport:
    report = PodReport(pod.name, pod.kind)
    namespace, _, pod_name = pod.name.partition("/")
    resolved: list[tuple[PodClaim, ResourceClaim]] = []
    for index, entry in enumerate(pod.spec.get("resourceClaims") or []):
        if not isinstance(entry, Mapping):
            continue
        name = str(entry.get("name") or f"#{index}")
        template, shared = entry.get("resourceClaimTemplateName"), entry.get("resourceClaimName")
        generated = pod.claim_names.get(name)
        made = by_name.get(("ResourceClaim", f"{namespace}/{generated}")) if generated else None
        claim: ResourceClaim | None
        if template and made is not None:  # the live claim made from the template: it may be allocated already
            item = PodClaim(name, f"template {namespace}/{template}", made.name)
            claim = made
        elif template:
            item = PodClaim(name, f"template {namespace}/{template}", f"{namespace}/{pod_name}-{name}")
            found = by_name.get(("ResourceClaimTemplate", f"{namespace}/{template}"))
            claim = None if found is None else replace(found, name=item.claim, kind="ResourceClaim", allocated=())
        else:
            item = PodClaim(name, f"claim {namespace}/{shared}", f"{namespace}/{shared}")
            claim = by_name.get(("ResourceClaim", f"{namespace}/{shared}"))
        report.claims.append(item)
        if claim is None:
            report.errors.append(Finding(CLAIM_MISSING, ERROR, f"pod {pod.name}: resourceClaims {name}: "
                                                               f"{item.source} is not in the inputs", object=pod.name))
            continue
        resolved.append((item, claim))
    allowed = set(_usable_nodes(pod, inventory, nodes))
    # A shared claim allocated already keeps its devices: the pod must go to a node that reaches them all.
    pending: list[tuple[PodClaim, ResourceClaim]] = []
    reach: Mapping[str, frozenset[DeviceId]] = {}
    if resolved:
        reach = explainer.reachable(inventory, node_list)
        for item, claim in resolved:
            if claim.allocated:
                item.allocated_already = True
                held = {(a.driver, a.pool, a.device) for a in claim.allocated}
                allowed = {n for n in allowed if held <= reach.get(n, set())}
            else:
                pending.append((item, claim))
    for item, claim in pending:
        item.report = explainer.explain(claim, inventory, in_use, node_list, allowed)
        for error in item.report.errors:
            report.errors.append(error)
    if report.errors:
        report.reason = report.errors[0].message
        return report
    if not allowed:
        report.errors.append(Finding(NO_NODE, ERROR, f"pod {pod.name}: no node it may use (nodeName, nodeSelector, "
                                                     "node affinity, taints) reaches the devices of its allocated "
                                                     "claims" if any(i.allocated_already for i, _ in resolved)
                                     else f"pod {pod.name}: no node it may use (nodeName, nodeSelector, node "
                                          "affinity, taints)", object=pod.name))
        report.reason = report.errors[0].message
        return report
    if not pending:
        report.allocatable, report.nodes = True, sorted(allowed)
        report.node = report.nodes[0]
        return report
    verdict = explainer.together([claim for _, claim in pending], inventory, in_use, node_list, allowed)
    if not verdict.give(report):
        return report
    if verdict.first is not None:
        report.node, allocations = verdict.first
        for (item, _), allocation in zip(pending, allocations, strict=True):
            item.allocation = allocation
        return report
    alone = [item for item, _ in pending if item.report is not None and not item.report.allocatable]
    if alone:
        first = alone[0]
        report.reason = f"claim {first.claim} ({first.entry}): {first.report.reason if first.report else ''}"
        if first.report is not None and nodes:
            report.reason += _refused_by_nodes(pod, first.report, nodes, reach, explainer.refusals)
    elif not verdict.timed_out:  # else the verdict's reason: not decided
        report.reason = (f"each of its {len(pending)} claims fits alone, but no node it may use has devices for all "
                         "of them together (they compete for the same devices)")
        if verdict.why_failed:
            report.reason += f"; {verdict.why_failed}"
    return report

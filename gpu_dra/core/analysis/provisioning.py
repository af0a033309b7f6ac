"""Will a claim ever get a node from Karpenter or EKS Auto Mode? Karpenter decides before a node exists, from the DRA
metadata its release ships for each instance type (facts/karpenter_dra): it presents each candidate type as template
ResourceSlices and runs its allocator over them (sigs.k8s.io/karpenter pkg/scheduling/dynamicresources/allocator.go,
request.go; aws/karpenter-provider-aws pkg/providers/nvidiadra/nvidiadra.go). Here the same templates go through
gpu-dra's allocator of the stack's Kubernetes version, after the claim shapes and selectors Karpenter refuses
outright, so a claim is judged by one allocator in every verb and by Karpenter's knowledge where Karpenter decides.

What Karpenter refuses outright: distinctAttribute constraints ("DistinctAttribute constraints not done yet",
kubernetes-sigs/karpenter@2266468:pkg/scheduling/dynamicresources/request.go:153-154; `exactly` and `firstAvailable`
requests are taken, 170-174, the latter since #3142 of 2026-07-17: which sigs.k8s.io/karpenter commit a provider
release pins is not read), and selectors on an attribute it cannot know before launch (driverVersion,
cudaDriverVersion, pcieRoot: matchAttribute only; karpenter.sh/docs/tasks/dra/, "Supported Attributes by Driver").
driverVersion and cudaDriverVersion are bound across the GPUs of one instance type (AttributeBindings), which
Karpenter ignores below two devices: matchAttribute on them holds on a multi-GPU type and fails on a one-GPU type.

EKS Auto Mode launches nodes with a Karpenter of its own whose DRA knowledge AWS does not publish
(facts/auto_mode.UNDOCUMENTED): an Auto Mode NodePool's instance types are judged on the devices the stack's fleet
gives them (those the pinned driver release publishes), with none of Karpenter's pre-launch refusals, which AWS does
not say Auto Mode shares. A "never" there holds whatever Auto Mode knows: no allowed type has the devices.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import cache
from typing import Any

from gpu_dra.core.analysis.explain import Explainer
from gpu_dra.core.analysis.inventory import GroupSpec, Inventory, LaunchedPool, devices_of, synthesize_groups
from gpu_dra.core.dra.cel.lexer import device_lookups, tokenize
from gpu_dra.core.dra.claims import ResourceClaim
from gpu_dra.core.dra.slices import NodeSelection, ResourcePool, ResourceSlice, SliceDevice
from gpu_dra.core.facts import karpenter_dra
from gpu_dra.core.facts.karpenter_dra import KARPENTER_DRA, KarpenterGpu, Version

# The value the bound attributes take on a template (never read by a selector: those are refused first), shared by
# the GPUs of a type so that matchAttribute holds among them, as Karpenter's binding makes it.
_BOUND = "bound at launch"


@dataclass
class Provisioning:
    """Where Karpenter would launch a node for a claim: the instance types per NodePool, or why it never would."""

    claim: str
    types: dict[str, list[str]] = field(default_factory=dict)  # NodePool -> the instance types that serve it
    reasons: dict[str, str] = field(default_factory=dict)  # NodePool -> why none of its types does

    @property
    def provisionable(self) -> bool:
        return any(self.types.values())

    def summary(self) -> str:
        """`provisionable on l4: g6.xlarge, g6.2xlarge` or `never: l4: <reason>`."""
        if self.provisionable:
            return "provisionable on " + "; ".join(f"{pool}: {', '.join(types)}"
                                                   for pool, types in self.types.items() if types)
        return "never: " + _grouped(self.reasons)


@cache
def _launched_groups(pools: tuple[LaunchedPool, ...]) -> frozenset[str]:
    return frozenset(pool.group(itype) for pool in pools for itype in pool.instance_types)


def launched_nodes(pools: Sequence[LaunchedPool], nodes: Sequence[str]) -> list[str]:
    """The nodes among `nodes` that are NodePools' not yet launched ones (LaunchedPool.fleet names them
    <group>-<n>)."""
    groups = _launched_groups(tuple(pools))
    return [node for node in nodes if node.rsplit("-", 1)[0] in groups]


def only_launched(pools: Sequence[LaunchedPool], nodes: Sequence[str]) -> bool:
    """Whether every node is one of the NodePools' not yet launched nodes: a claim allocatable there alone waits on
    the provisioner's own judgement."""
    return bool(nodes) and len(launched_nodes(pools, nodes)) == len(nodes)


def claim_provisioning(judged: Callable[[], Provisioning], pools: Sequence[LaunchedPool], allocatable: bool,
                       nodes: Sequence[str]) -> tuple[str, bool] | None:
    """What the NodePools' provisioner says of a claim explained on the fleet (allocatable or not, on `nodes`):
    (its release and summary, whether the claim fits only nodes not launched and none would ever be launched for it);
    None where the provisioner has no say, the claim being allocatable on node groups' nodes alone. `judged` gives
    the claim's ProvisioningJudge verdict, asked only where needed. One judgement for explain --stack and upgrade."""
    if allocatable and not launched_nodes(pools, nodes):
        return None
    found = judged()
    return f"{pools[0].provisioner}: {found.summary()}", only_launched(pools, nodes) and not found.provisionable


def _attribute(value: karpenter_dra.AttributeValue) -> dict[str, Any]:
    if isinstance(value, Version):
        return {"version": value.text}
    if isinstance(value, bool):
        return {"bool": value}
    if isinstance(value, int):
        return {"int": value}
    return {"string": value}


def _template_device(gpu: KarpenterGpu, bound: bool) -> SliceDevice:
    attributes = {name: _attribute(value) for name, value in gpu.attributes.items()}
    if bound:
        attributes |= {name: {"string": _BOUND} for name in karpenter_dra.BOUND_ATTRIBUTES}
    return SliceDevice(gpu.name, attributes, dict(gpu.capacity))


@cache
def template_inventory(version: str, instance_type: str) -> Inventory | None:
    """One node of `instance_type` as Karpenter `version` pictures it before launch, or None without metadata; made
    once a process (the vendored metadata does not change)."""
    gpus = KARPENTER_DRA.get(version, {}).get(instance_type)
    if gpus is None:
        return None
    node = f"{instance_type} (not launched)"
    slice_ = ResourceSlice(f"{node}-{karpenter_dra.DRIVER}", karpenter_dra.DRIVER, ResourcePool(node, 1, 1),
                           NodeSelection(node_name=node),
                           tuple(_template_device(gpu, bound=len(gpus) >= 2) for gpu in gpus), {},
                           f"Karpenter {version} DRA metadata")
    inventory = Inventory()
    inventory.slices.append(slice_)
    inventory.devices.extend(devices_of(slice_, slice_.source))
    return inventory


def _unknowable(expression: str) -> str | None:
    """The attribute a selector reads that Karpenter cannot know before launch, or None."""
    tokens = tokenize(expression)
    for lookup in device_lookups(tokens) if tokens is not None else []:
        if lookup.map != "attributes" or lookup.name is None:
            continue
        qualified = lookup.name if lookup.domain == karpenter_dra.DRIVER else f"{lookup.domain}/{lookup.name}"
        if qualified in karpenter_dra.RUNTIME_ONLY_ATTRIBUTES:
            return qualified
    return None


def karpenter_view(claim: ResourceClaim, classes: Mapping[str, Sequence[str]]) -> tuple[ResourceClaim | None, str]:
    """The claim as Karpenter can judge it before launch: the alternatives of a request whose selectors read what
    Karpenter cannot know dropped (they match no template device: its allocator takes a CEL error for no match,
    kubernetes-sigs/karpenter@2266468:pkg/scheduling/dynamicresources/allocator.go tryDevice). None, with why, where
    a request keeps no alternative or a constraint is one Karpenter refuses."""
    for constraint in claim.constraints:
        if constraint.distinct_attribute:
            return None, (f"distinctAttribute {constraint.distinct_attribute}: Karpenter's simulation does not take "
                          "distinctAttribute constraints")
    requests = []
    for request in claim.requests:
        kept, why = [], ""
        for choice in request.choices:
            named = f"{request.name}/{choice.subrequest}" if choice.subrequest else request.name
            unknowable = next(((where, name) for where, expressions in (
                (f"DeviceClass {choice.device_class}", classes.get(choice.device_class, ())),
                (f"request {named}", choice.selectors)) for name in map(_unknowable, expressions) if name), None)
            if unknowable is None:
                kept.append(choice)
            elif not why:
                why = (f"a selector of {unknowable[0]} reads {unknowable[1]}, which Karpenter cannot know before the "
                       "node launches (it allows it in matchAttribute only)")
        if not kept:
            return None, why
        requests.append(replace(request, choices=tuple(kept)))
    return replace(claim, requests=tuple(requests)), ""


@cache
def launched_inventory(instance_type: str, level: tuple[int, int]) -> Inventory:
    """One node of `instance_type` as the fleet synthesizes it with driver release `level`: what an Auto Mode NodePool
    is judged on (made once a process)."""
    return synthesize_groups([GroupSpec(instance_type, instance_type, 1, True)], level)


class ProvisioningJudge:
    """Claims judged against the NodePools' instance types, one node per type: Karpenter's template node
    (template_inventory), or for Auto Mode the fleet's (launched_inventory) with the driver release `level`."""

    def __init__(self, explainer: Explainer, level: tuple[int, int]):
        self.explainer = explainer
        self.level = level

    def judge(self, claim: ResourceClaim, pools: Sequence[LaunchedPool]) -> Provisioning:
        verdict = Provisioning(claim.name)
        judged, refusal = karpenter_view(claim, self.explainer.classes)
        for pool in pools:
            if not pool.dra:
                verdict.reasons[pool.name] = "a device-plugin NodePool runs no DRA driver"
                continue
            subject = claim if pool.auto_mode else judged
            if subject is None:
                verdict.reasons[pool.name] = refusal
                continue
            served, why = [], {}
            for instance_type in pool.instance_types:
                inventory = (launched_inventory(instance_type, self.level) if pool.auto_mode
                             else template_inventory(pool.version, instance_type))
                if inventory is None:
                    why[instance_type] = f"Karpenter {pool.version} has no DRA metadata for it"
                    continue
                report = self.explainer.explain(subject, inventory)
                if report.allocatable:
                    served.append(instance_type)
                else:
                    why[instance_type] = report.reason
            verdict.types[pool.name] = served
            if not served:
                verdict.reasons[pool.name] = _grouped(why)
        return verdict


def _grouped(why: Mapping[str, str]) -> str:
    """Why not per NodePool or instance type, those with the same reason named together."""
    names_by_reason: dict[str, list[str]] = {}
    for name, reason in why.items():
        names_by_reason.setdefault(reason, []).append(name)
    return "; ".join(f"{', '.join(names)}: {reason}" for reason, names in names_by_reason.items())

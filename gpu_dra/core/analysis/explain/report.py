"""What explain says of a claim: per request the matching devices and the others by reason, the allocator's
verdict across the nodes tried, the binding conditions it reports and does not simulate, as JSON data too."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from gpu_dra.core.analysis.allocator import ClaimAllocation, DeviceResult, FailedOnNode
from gpu_dra.core.analysis.inventory import Device
from gpu_dra.core.findings import Finding

EXAMPLES = 5  # devices shown per reason in JSON reports unless every device is asked for
# Rules of the errors that stop a claim before allocation is tried.
CEL_COMPILE, CEL_RUNTIME = "cel-compile", "cel-runtime-error"
INVALID_CLAIM, MISSING_CLASS = "invalid-claim", "device-class-missing"
# Rule of what allocate_claims refuses on a node (an invalid pool, All on a pool being updated, too many devices),
# which fails the pod on every node.
ALLOCATION_ERROR = "allocation-error"

# What the scheduler does with the binding conditions of the devices it allocated, which explain reports and does not
# simulate: PreBind waits until the claim's status.devices has each condition True, and undoes the allocation when a
# failure condition is True or bindingTimeout passes (600 s: BindingTimeoutDefaultSeconds in kubernetes/kubernetes
# pkg/scheduler/framework/plugins/dynamicresources/dynamicresources.go, 1.34-era; `DynamicResourcesArgs.BindingTimeout`
# from 1.35, kubernetes/kube-scheduler@v0.35.0:config/v1/types.go;
# https://kubernetes.io/docs/concepts/scheduling-eviction/dynamic-resource-allocation/#device-binding-conditions).
BINDING_NOT_SIMULATED = ("the scheduler binds the pod only once each binding condition is True in the claim's "
                         "status.devices, and undoes the allocation when a failure condition is True or after "
                         "bindingTimeout (10 minutes by default); gpu-dra does not simulate binding conditions")


def binding_waits(allocations: Iterable[ClaimAllocation | None]) -> list[tuple[str, DeviceResult]]:
    """(claim, device) for each device allocated whose binding conditions the scheduler waits for."""
    return [(allocation.claim, device) for allocation in allocations if allocation is not None
            for device in allocation.devices if device.binding_conditions]


def binding_as_dict(allocations: Iterable[ClaimAllocation | None]) -> dict[str, Any] | None:
    """The binding conditions binding waits for, as JSON data; None when there are none."""
    waits = binding_waits(allocations)
    if not waits:
        return None
    return {"simulated": False, "note": BINDING_NOT_SIMULATED, "devices": [
        {"claim": claim, "request": d.request, "driver": d.driver, "pool": d.pool, "device": d.device,
         "conditions": list(d.binding_conditions), "failure_conditions": list(d.binding_failure_conditions)}
        for claim, d in waits]}


@dataclass(frozen=True)
class Allocation:
    """The devices one request (or subrequest) of a claim gets on the solution's node, as the report shows them."""

    request: str
    subrequest: str
    devices: tuple[Device, ...]


@dataclass
class RequestReport:
    name: str
    matching: list[Device] = field(default_factory=list)
    rejected: dict[str, list[Device]] = field(default_factory=dict)  # reason -> devices
    in_use: list[tuple[Device, str]] = field(default_factory=list)  # matching devices other claims hold, holder


@dataclass(frozen=True)
class DroppedField:
    """A field the API server drops on write because its feature gate is off for the cluster judged (dropDisabledFields
    in kubernetes/kubernetes pkg/registry/resource/*/strategy.go), so the scheduler, and explain, judge without it."""

    object: str  # kind and name, e.g. "ResourceClaimTemplate ml/cap"
    field: str  # where it was written, e.g. "spec.spec.devices.requests[0].exactly.capacity"
    gate: str
    kubernetes: str  # the version judged
    platform: str

    def as_dict(self) -> dict[str, str]:
        return {"object": self.object, "field": self.field, "gate": self.gate, "kubernetes": self.kubernetes,
                "platform": self.platform}


@dataclass
class ClaimReport:
    claim: str
    allocatable: bool = False
    nodes: list[str] = field(default_factory=list)
    requests: list[RequestReport] = field(default_factory=list)
    errors: list[Finding] = field(default_factory=list)  # what stops the claim before allocation is tried
    reason: str = ""
    solution: tuple[str, list[Allocation]] | None = None
    allocation: ClaimAllocation | None = None  # the core's result on the solution's node
    timed_out: list[str] = field(default_factory=list)  # nodes whose search was stopped: not decided there
    # What the verdict rests on beyond the inputs: the DeviceClasses it assumed as NVIDIA's chart installs them (not
    # in the inputs), and the fields the API server drops (their gate off).
    assumed_classes: list[str] = field(default_factory=list)
    dropped: list[DroppedField] = field(default_factory=list)
    file: str | None = None  # the input it came from, where another claim of the inputs has its name
    # Where Karpenter or EKS Auto Mode would launch a node for it, when the stack's NodePools serve it
    # (Provisioning.summary), and whether it fits only such not yet launched nodes and would never get one.
    provisioning: str = ""
    never_provisioned: bool = False

    def as_dict(self, examples: int | None = EXAMPLES) -> dict[str, Any]:
        """The report as JSON data: per request the matching devices and each rejection reason with its count and
        the first `examples` devices (None: every device; a 1,000-node fleet has 800,000 such entries)."""
        def devices(items: list[Device]) -> dict[str, Any]:
            shown = items if examples is None else items[:examples]
            return {"count": len(items), "devices": [{"node": d.node, "driver": d.driver, "pool": d.pool,
                                                      "device": d.name} for d in shown]}

        return {
            "claim": self.claim, "allocatable": self.allocatable, "nodes": self.nodes, "timed_out": self.timed_out,
            **({"provisioning": self.provisioning, "never_provisioned": self.never_provisioned}
               if self.provisioning else {}),
            "errors": [{"rule": e.rule, "message": e.message} for e in self.errors],
            "reason": self.reason,
            "requests": [{
                "name": r.name,
                "matching": devices(r.matching),
                "rejected": [{"reason": reason, **devices(items)}
                             for reason, items in sorted(r.rejected.items(), key=lambda item: -len(item[1]))],
                "in_use": {"count": len(r.in_use), "devices": [
                    {"node": d.node, "driver": d.driver, "pool": d.pool, "device": d.name, "claim": holder}
                    for d, holder in (r.in_use if examples is None else r.in_use[:examples])]},
            } for r in self.requests],
            "solution": None if self.solution is None else {
                "node": self.solution[0],
                "devices": [{"request": a.request + (f"/{a.subrequest}" if a.subrequest else ""),
                             "devices": [d.name for d in a.devices]} for a in self.solution[1]]},
            "binding": binding_as_dict([self.allocation]),
            "assumed_classes": self.assumed_classes, "dropped": [d.as_dict() for d in self.dropped],
            "file": self.file,
        }


class SearchStopped(Exception):
    """A search stopped at its deadline (AllocationTimeout), with why, as explain says it."""


@dataclass
class ClaimVerdict:
    """What allocate_claims says of claims together across the nodes tried."""

    nodes: list[str] = field(default_factory=list)
    first: tuple[str, list[ClaimAllocation]] | None = None
    error: Finding | None = None
    timed_out: list[str] = field(default_factory=list)  # nodes whose search was stopped
    why_stopped: str = ""  # of the first of them
    why_failed: str = ""  # a node failure the scheduler reports for the nodes (FailedOnNode), with the nodes

    def stopped(self, search: SearchStopped, nodes: list[str]) -> None:
        """These nodes (alike) are not decided: their search was stopped."""
        self.why_stopped = self.why_stopped or f"on {_nodes_text(nodes)}: {search}"
        self.timed_out = sorted([*self.timed_out, *nodes])

    def failed(self, failure: FailedOnNode, nodes: list[str]) -> None:
        """These nodes (alike) failed for a reason the scheduler reports for them."""
        self.why_failed = self.why_failed or f"on {_nodes_text(nodes)}: {failure} ({failure.detail})"

    def give(self, report: Any) -> bool:
        """Set a claim's or a pod's report from this verdict (errors, reason, nodes, allocatable, the nodes not
        decided); whether it is free of errors, so the caller may read `first`."""
        if self.error is not None:
            report.errors.append(self.error)
            report.reason = self.error.message
            return False
        report.nodes = self.nodes
        report.allocatable = bool(self.nodes)
        report.timed_out = self.timed_out
        if self.timed_out and not self.nodes:
            report.reason = f"not decided: {self.why_stopped}"
        return True


def _nodes_text(nodes: list[str]) -> str:
    return nodes[0] + (f" (and {len(nodes) - 1} more alike)" if len(nodes) > 1 else "")

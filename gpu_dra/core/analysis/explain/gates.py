"""The scheduler's feature gates as explain applies them: the allocator's switches per Kubernetes version and
platform, and a claim as the API server stores it with those gates."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from gpu_dra.core.analysis.allocator import Features
from gpu_dra.core.dra.objects import ResourceClaim
from gpu_dra.core.facts import gates


def taint_rule_gate(version: str) -> str:
    """The gate under which the scheduler applies DeviceTaintRules: DRADeviceTaintRules from 1.35, DRADeviceTaints
    before. The scheduler sets its ResourceSlice tracker's `EnableDeviceTaints` from DRADeviceTaints in 1.34 and
    `EnableDeviceTaintRules` from DRADeviceTaintRules from 1.35 (kubernetes/kubernetes pkg/scheduler/scheduler.go;
    `Options` in kubernetes/dynamic-resource-allocation@v0.34.9 and @v0.35.0 resourceslice/tracker/tracker.go)."""
    return "DRADeviceTaintRules" if gates.state("DRADeviceTaintRules", version) else "DRADeviceTaints"


def features_for(version: str = gates.DEFAULT_KUBERNETES_VERSION, platform: str = "eks",
                 declared: dict[str, bool] | None = None) -> Features:
    """The allocator's switches as the scheduler of this Kubernetes version and platform has them."""
    def on(gate: str) -> bool:
        return gates.enabled(gate, version, platform, declared)

    rules = taint_rule_gate(version)
    allocator = Features(admin_access=on("DRAAdminAccess"), prioritized_list=on("DRAPrioritizedList"),
                         partitionable_devices=on("DRAPartitionableDevices"), device_taints=on("DRADeviceTaints"),
                         consumable_capacity=on("DRAConsumableCapacity"),
                         device_binding=on("DRADeviceBindingConditions"),
                         device_status=on("DRAResourceClaimDeviceStatus"))
    # 1.34's "stable" allocator, which the scheduler picks when none of the allocator's features is on, never looks
    # at its context (kubernetes/dynamic-resource-allocation@v0.34.9 structured/internal/stable/allocator_stable.go;
    # it does from v0.35.0), so no filter timeout stops it.
    stops = on("DRASchedulerFilterTimeout") and (version != "1.34" or allocator != Features())
    return replace(allocator, device_taint_rules=on(rules),
                   taint_rule_selectors=rules == "DRADeviceTaints" and on(rules), filter_timeout=stops)


# Request fields behind a gate, and their value once the API server drops them (k8s resource strategy
# dropDisabledFields: a field whose gate is off is not stored on create).
_GATED_FIELDS = (("consumable_capacity", "capacity_requests", None), ("admin_access", "written_admin_access", None),
                 ("device_taints", "tolerations", ()))


def as_stored(claim: ResourceClaim, features: Features) -> ResourceClaim:
    """The claim as the API server stores it with these gates: fields of a gate that is off are dropped on write
    (lint and dra-feature-gates report them), so the scheduler never sees them."""
    dropped: dict[str, Any] = {name: value for gate, name, value in _GATED_FIELDS if not getattr(features, gate)}
    if not dropped:
        return claim
    requests = tuple(replace(request, choices=tuple(
        replace(choice, **{k: v for k, v in dropped.items() if getattr(choice, k) != v}) for choice in request.choices))
        for request in claim.requests)
    return replace(claim, requests=requests)

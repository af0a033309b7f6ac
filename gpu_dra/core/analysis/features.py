"""The allocator's switches for a target cluster: the one place a Target becomes what the scheduler of its
Kubernetes version and platform hands the structured allocator. Explain, doctor, migrate and pending all judge
through it; a Kubernetes minor that needs its own allocator is chosen here too.

The Target is a fact (gpu_dra.core.facts.target) and `Features` the allocator's own (gpu_dra.core.analysis.allocator,
as upstream's `structured.Features`), so the mapping lives with the allocator, above both."""

from __future__ import annotations

from dataclasses import replace

from gpu_dra.core.analysis.allocator import Features
from gpu_dra.core.facts.target import Target


def features_for(target: Target) -> Features:
    """The allocator's switches as the scheduler of this Kubernetes version and platform has them."""
    on = target.enabled
    rules = target.taint_rule_gate
    allocator = Features(admin_access=on("DRAAdminAccess"), prioritized_list=on("DRAPrioritizedList"),
                         partitionable_devices=on("DRAPartitionableDevices"), device_taints=on("DRADeviceTaints"),
                         consumable_capacity=on("DRAConsumableCapacity"),
                         device_binding=on("DRADeviceBindingConditions"),
                         device_status=on("DRAResourceClaimDeviceStatus"))
    # 1.34's "stable" allocator, which the scheduler picks when none of the allocator's features is on, never looks
    # at its context (kubernetes/dynamic-resource-allocation@v0.34.9 structured/internal/stable/allocator_stable.go;
    # it does from v0.35.0), so no filter timeout stops it.
    stops = on("DRASchedulerFilterTimeout") and (target.kubernetes_version != "1.34" or allocator != Features())
    return replace(allocator, device_taint_rules=on(rules),
                   taint_rule_selectors=rules == "DRADeviceTaints" and on(rules), filter_timeout=stops,
                   list_type_attributes=on("DRAListTypeAttributes"), minor=allocator_minor(target))


def allocator_minor(target: Target) -> int:
    """The minor whose allocator gpu-dra runs for the target: its own from 1.34 to 1.36; 1.37 runs 1.36's, the
    newest with a release's test table to check it against (kubernetes/dynamic-resource-allocation had no v0.37.0
    tag when vendored; v0.37.0-alpha.2 changes which nodes a counter slice reaches, config results and CEL error
    texts)."""
    minor = int(target.kubernetes_version.split(".")[1])
    return min(max(minor, 34), 36)

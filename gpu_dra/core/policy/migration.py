"""Rules of the migration from NVIDIA's device plugin to DRA: a stack change must not strand a workload a team
names.

A team file may name its workload manifests (`workloads:`, paths in the repository). `gpu-dra check --pack-config`
reads them with `gpu-dra migrate`'s core and writes, per workload that still needs the device plugin (its pods not
served by an effective extendedResourceName mapping or on claims already), what it asks of a node: pods, GPUs per pod,
and its nodeSelector, affinity and tolerations. The rule places those pods on the device-plugin node groups the
engine sends (or an existing cluster's device-plugin pools), first fit, a pod's GPUs on one node, in the order the
team files name them: what is left has nowhere to run once the change is applied.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from gpu_dra.core.data import UNKNOWN
from gpu_dra.core.dra.scheduling import why_not_on
from gpu_dra.core.facts.hardware import INSTANCE_TYPES
from gpu_dra.core.facts.labels import ALLOCATION_LABEL
from gpu_dra.core.findings import Finding
from gpu_dra.core.policy.resources import Context, Resource, error, node_groups, not_judged, stack_of
from gpu_dra.core.render.nodes import well_known_labels

RULE = "legacy-workloads-placed"
DEVICE_PLUGIN = "device-plugin"


@dataclass
class _Group:
    """A device-plugin group at max size: its nodes' free GPUs, labels and taints."""

    name: str
    resource: Resource | None  # None for an existing cluster's pool
    gpus: int  # per node
    free: list[int]
    labels: dict[str, str]
    taints: Sequence[Mapping[str, Any]]
    instance_type: str


def _groups(resources: list[Resource], context: Context) -> tuple[list[_Group], list[Resource]]:
    """The device-plugin node groups the engine sends, else the declared device-plugin pools of an existing
    cluster; and the node groups whose configuration is unknown in this preview."""
    groups, unknown = node_groups(resources)
    # A group whose labels say it is a DRA group is no place for these pods, whatever else of it is unknown.
    unknown = [r for r in unknown if not (isinstance(r.props.get("labels"), Mapping)
                                          and r.props["labels"].get(ALLOCATION_LABEL) not in (DEVICE_PLUGIN, UNKNOWN))]
    found = []
    for group in groups:
        if group.labels.get(ALLOCATION_LABEL) != DEVICE_PLUGIN:
            continue
        itype = group.instance_types[0] if group.instance_types else ""
        gpus = INSTANCE_TYPES[itype].gpus if itype in INSTANCE_TYPES else 0
        labels = {**group.labels, **well_known_labels(itype)}  # as `gpu-dra migrate` sees the nodes (group_views)
        if isinstance(group.resource.props.get("nodeGroupName"), str):
            labels["eks.amazonaws.com/nodegroup"] = group.resource.props["nodeGroupName"]
        found.append(_Group(group.name, group.resource, gpus, [gpus] * group.max_size, labels, group.taints, itype))
    if not groups and not unknown:
        for pool in context.node_pools:
            if pool.get("dra"):
                continue
            gpus = int(pool.get("gpus") or 0) or (INSTANCE_TYPES[pool["instanceType"]].gpus
                                                   if pool.get("instanceType") in INSTANCE_TYPES else 0)
            found.append(_Group(str(pool["name"]), None, gpus, [gpus] * int(pool.get("maxNodes") or 0),
                                {**{str(k): str(v) for k, v in (pool.get("labels") or {}).items()},
                                 "kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64"},
                                list(pool.get("taints") or []), str(pool.get("instanceType") or "")))
    return found, unknown


def place(workloads: Sequence[Mapping[str, Any]],
          groups: Sequence[_Group]) -> list[tuple[Mapping[str, Any], int, str, _Group | None]]:
    """(workload, pods left, why, the group that ran out of room) for every workload whose pods do not all fit,
    placing in order: first fit, node by node, on the groups its nodeSelector, affinity and tolerations admit (as
    `gpu-dra migrate` places them)."""
    stranded: list[tuple[Mapping[str, Any], int, str, _Group | None]] = []
    for workload in workloads:
        left, count = int(workload.get("pods") or 0), int(workload.get("gpus") or 0)
        if workload.get("other"):  # gpu-dra's device plugin sets no MIG strategy: only whole GPUs
            stranded.append((workload, left, "the device plugin advertises only nvidia.com/gpu, not "
                                             + ", ".join(workload["other"]), None))
            continue
        spec = {key: workload[key] for key in ("nodeSelector", "affinity", "tolerations") if workload.get(key)}
        reasons = [] if groups else ["the stack has no device-plugin node group"]
        full: _Group | None = None
        for group in groups:
            why = why_not_on(spec, group.labels, group.taints)
            if why:
                reasons.append(f"{group.name}: {why}")
                continue
            if count > group.gpus or not group.free:
                reasons.append(f"{group.name}: a pod needs {count} GPU(s) on one node; its {len(group.free)} "
                               f"{group.instance_type} node(s) have {group.gpus}")
                continue
            taken = group.gpus * len(group.free) - sum(group.free)
            for index in range(len(group.free)):
                while left and group.free[index] >= count:
                    group.free[index] -= count
                    left -= 1
            if not left:
                break
            full = group
            reasons.append(f"{group.name} is full ({group.gpus * len(group.free)} GPUs, {taken} taken by the "
                           "workloads named before it)")
        if left:
            stranded.append((workload, left, "; ".join(reasons), full))
    return stranded


def legacy_workloads_placed(resources: list[Resource], context: Context) -> list[Finding]:
    if not context.workloads:
        return []
    groups, unknown = _groups(resources, context)
    if unknown:
        return [not_judged(RULE, r, "node group labels, size, instance types or taints", r.unknown) for r in unknown]
    stack = next((name for r in resources if (name := stack_of(r))), None) or "<stack>"
    out = []
    for workload, left, why, full in place(context.workloads, groups):
        pods, count = int(workload.get("pods") or 0), int(workload.get("gpus") or 0)
        asks = f"{count} nvidia.com/gpu" if not workload.get("other") else ", ".join(workload["other"])
        # On the group that ran out of room, where a shrink shows; none where no group is left to blame.
        at = full.resource if full is not None else None
        found = error(RULE, f"{workload['workload']} ({workload['file']}, named by team {workload['team']}): {left} "
                            f"of its {pods} pod(s) asking for {asks} each have nowhere to run: {why}", at,
                      "scalingConfig.maxSize" if at is not None else "",
                      fix=f"keep a device-plugin node group with room for it, or move it to claims first: `gpu-dra "
                          f"migrate --stack {stack} {workload['file']}` prints the template and the rewritten "
                          "workload")
        line = workload.get("line")  # a float once the pack config has been a protobuf Struct, as in the engine
        out.append(found.at(file=str(workload.get("teamFile") or ""), line=int(line) if line else None))
    return out

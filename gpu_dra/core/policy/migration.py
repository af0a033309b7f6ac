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

from gpu_dra.core.analysis import placement
from gpu_dra.core.analysis.placement import DevicePluginGroup
from gpu_dra.core.data import UNKNOWN
from gpu_dra.core.facts.hardware import INSTANCE_TYPES
from gpu_dra.core.facts.labels import ALLOCATION_LABEL
from gpu_dra.core.findings import Finding
from gpu_dra.core.policy.resources import Context, Resource, error, node_groups, not_judged, stack_of
from gpu_dra.core.render.nodes import well_known_labels

RULE = "legacy-workloads-placed"
DEVICE_PLUGIN = "device-plugin"


@dataclass
class _Group(DevicePluginGroup):
    """A device-plugin group at max size, and the node group resource a finding points at."""

    resource: Resource | None = None  # None for an existing cluster's pool


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
        found.append(_Group(group.name, labels, group.taints, gpus, [gpus] * group.max_size, itype, group.resource))
    if not groups and not unknown:
        for pool in context.node_pools:
            if pool.get("dra"):
                continue
            gpus = int(pool.get("gpus") or 0) or (INSTANCE_TYPES[pool["instanceType"]].gpus
                                                   if pool.get("instanceType") in INSTANCE_TYPES else 0)
            labels = {**{str(k): str(v) for k, v in (pool.get("labels") or {}).items()},
                      "kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64"}
            found.append(_Group(str(pool["name"]), labels, list(pool.get("taints") or []), gpus,
                                [gpus] * int(pool.get("maxNodes") or 0), str(pool.get("instanceType") or "")))
    return found, unknown


def place(workloads: Sequence[Mapping[str, Any]],
          groups: Sequence[_Group]) -> list[tuple[Mapping[str, Any], int, str, _Group | None]]:
    """(workload, pods left, why, the group that ran out of room) for every workload whose pods do not all fit,
    placing in order: first fit, node by node, on the groups its nodeSelector, affinity and tolerations admit (as
    `gpu-dra migrate` places them: analysis/placement)."""
    stranded: list[tuple[Mapping[str, Any], int, str, _Group | None]] = []
    for workload in workloads:
        pods, count = int(workload.get("pods") or 0), int(workload.get("gpus") or 0)
        if workload.get("other"):  # gpu-dra's device plugin sets no MIG strategy: only whole GPUs
            stranded.append((workload, pods, "the device plugin advertises only nvidia.com/gpu, not "
                                             + ", ".join(workload["other"]), None))
            continue
        spec = {key: workload[key] for key in ("nodeSelector", "affinity", "tolerations") if workload.get(key)}
        fit = placement.place(pods, count, spec, groups)
        if fit.left:
            full = [o.group for o in fit.outcomes if o.full]
            reasons = [_reason(o, count) for o in fit.outcomes] if groups \
                else ["the stack has no device-plugin node group"]
            stranded.append((workload, fit.left, "; ".join(reasons), full[-1] if full else None))
    return stranded


def _reason(outcome: placement.GroupOutcome[_Group], count: int) -> str:
    group = outcome.group
    if outcome.refused:
        return f"{group.name}: {outcome.refused}"
    if outcome.too_small:
        return (f"{group.name}: a pod needs {count} GPU(s) on one node; its {len(group.free)} {group.instance_type} "
                f"node(s) have {group.gpus}")
    return f"{group.name} is full ({group.total} GPUs, {outcome.taken} taken by the workloads named before it)"


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

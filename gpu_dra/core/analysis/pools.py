"""Which ResourceSlices one node reaches, grouped into pools as the scheduler's structured allocator groups them.

Upstream: `GatherPools`, `nodeMatches` and `createNodeSelector` in kubernetes/dynamic-resource-allocation@v0.34.9
structured/internal/experimental/pools_experimental.go and allocator_experimental.go
(docs/sources.md#the-structured-allocator). Only the newest generation of a pool counts; a pool with fewer slices
than its `resourceSliceCount` is incomplete, one that names a device twice is invalid. The allocator decides what
each of those means for a request. Slices and pools with binding conditions come after the others, so that the
search prefers devices that need no binding conditions.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from gpu_dra.core.dra.scheduling import schedules_on
from gpu_dra.core.dra.slices import NodeSelection, ResourceSlice, SliceDevice

NODE_NAME_FIELD = "metadata.name"  # the one node field a NodeSelector's matchFields can read


@dataclass(frozen=True)
class Node:
    name: str
    labels: Mapping[str, str]


@dataclass
class Pool:
    """One driver's pool as this node sees it: the slices of its newest generation, in the order given."""

    driver: str
    name: str
    slices: list[ResourceSlice] = field(default_factory=list)
    incomplete: bool = False
    invalid: str | None = None  # why the allocator must not take devices from it

    @property
    def id(self) -> str:
        return f"{self.driver}/{self.name}"


class UnsupportedNodeSelector(ValueError):
    """A slice's NodeSelector the allocator cannot carry into an allocation (more than one term)."""


def _has_binding_conditions(slice_: ResourceSlice) -> bool:
    return any(device.binding_conditions for device in slice_.devices)


def gather_pools(slices: Iterable[ResourceSlice], node: Node, partitionable_devices: bool) -> list[Pool]:
    """The pools with devices this node can reach, in the order their first slice was seen, those with binding
    conditions last. Per-device node selection is a DRAPartitionableDevices field: with the gate off such slices
    are ignored."""
    pools: dict[tuple[str, str], Pool] = {}
    with_conditions: list[ResourceSlice] = []
    for slice_ in slices:
        if slice_.per_device_node_selection and not partitionable_devices:
            continue
        if slice_.node_selection is not None:
            reached = node_matches(node, slice_.node_selection)
        elif slice_.per_device_node_selection:
            reached = any(d.node_selection is not None and node_matches(node, d.node_selection)
                          for d in slice_.devices)
        else:
            reached = False  # nothing selects a node: a future field, upstream skips the slice too
        if reached and _has_binding_conditions(slice_):
            with_conditions.append(slice_)
        elif reached:
            _add(pools, slice_)
    for slice_ in with_conditions:
        _add(pools, slice_)
    for pool in pools.values():
        pool.incomplete = len(pool.slices) != pool.slices[0].pool.slice_count
        pool.invalid = _duplicate_device(pool)
    return sorted(pools.values(), key=lambda pool: any(map(_has_binding_conditions, pool.slices)))


def _add(pools: dict[tuple[str, str], Pool], slice_: ResourceSlice) -> None:
    """Newer generations replace older ones; slices of an older generation than the pool's are out of date."""
    pool = pools.setdefault((slice_.driver, slice_.pool.name), Pool(slice_.driver, slice_.pool.name))
    if pool.slices:
        generation = pool.slices[0].pool.generation
        if slice_.pool.generation < generation:
            return
        if slice_.pool.generation > generation:
            pool.slices = []
    pool.slices.append(slice_)


def _duplicate_device(pool: Pool) -> str | None:
    seen: set[str] = set()
    for slice_ in pool.slices:
        for device in slice_.devices:
            if device.name in seen:
                return f"duplicate device name {device.name}"
            seen.add(device.name)
    return None


def node_matches(node: Node, selection: NodeSelection) -> bool:
    if selection.node_name:
        return node.name == selection.node_name
    if selection.all_nodes:
        return True
    if selection.node_selector is not None:
        return any(_term_matches(term, node) for term in selection.node_selector.get("nodeSelectorTerms") or [])
    return False


def _term_matches(term: Mapping[str, Any], node: Node) -> bool:
    """A term's requirements ANDed; an empty term selects nothing (nodeaffinity.NewNodeSelector). Labels go
    through gpu_dra.core.dra.scheduling; matchFields, which it does not read, are evaluated here. A requirement
    the API server would reject matches nothing here, where upstream reports an error: ResourceSlice validation
    keeps such selectors out of a cluster."""
    expressions = list(term.get("matchExpressions") or [])
    fields = list(term.get("matchFields") or [])
    if not expressions and not fields:
        return False
    if expressions:
        pod = {"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [{"matchExpressions": expressions}]}}}}
        if not schedules_on(pod, node.labels, ()):
            return False
    return all(_field_holds(requirement, node) for requirement in fields)


def _field_holds(requirement: Mapping[str, Any], node: Node) -> bool:
    """matchFields take In or NotIn with exactly one value, compared with the node's fields, of which a Node has
    only metadata.name (any other key reads as empty)."""
    operator, values = requirement.get("operator"), list(requirement.get("values") or [])
    if operator not in ("In", "NotIn") or len(values) != 1:
        return False
    actual = node.name if requirement.get("key") == NODE_NAME_FIELD else ""
    return (actual == values[0]) == (operator == "In")


def node_selector_for(devices: Iterable[tuple[ResourceSlice, SliceDevice]], node_name: str
                      ) -> dict[str, Any] | None:
    """Where an allocation's devices are reachable (AllocationResult.nodeSelector): this node alone as soon as one
    device is node-local or binds to its node (`bindsToNode`), else the union of the network-attached devices'
    selectors (one term each), else None for devices every node reaches."""
    fields: list[dict[str, Any]] = []
    expressions: list[dict[str, Any]] = []
    for slice_, device in devices:
        selection = device.node_selection if slice_.per_device_node_selection else slice_.node_selection
        if device.binds_to_node or (selection is not None and selection.node_name):
            return {"nodeSelectorTerms": [{"matchFields": [
                {"key": NODE_NAME_FIELD, "operator": "In", "values": [node_name]}]}]}
        if selection is None:
            continue
        terms = list((selection.node_selector or {}).get("nodeSelectorTerms") or [])
        if len(terms) > 1:
            raise UnsupportedNodeSelector(f"unsupported ResourceSlice.NodeSelector with {len(terms)} terms "
                                          f"(slice {slice_.name})")
        for term in terms:
            _add_requirements(term.get("matchFields") or [], fields)
            _add_requirements(term.get("matchExpressions") or [], expressions)
    union: dict[str, Any] = {}
    if expressions:
        union["matchExpressions"] = expressions
    if fields:
        union["matchFields"] = fields
    return {"nodeSelectorTerms": [union]} if union else None


def _add_requirements(new: Iterable[Mapping[str, Any]], into: list[dict[str, Any]]) -> None:
    """Requirements equal in key, operator and set of values are kept once."""
    for requirement in new:
        key, operator = requirement.get("key"), requirement.get("operator")
        values = list(requirement.get("values") or [])
        if not any(r["key"] == key and r["operator"] == operator and set(r["values"]) == set(values) for r in into):
            into.append({"key": key, "operator": operator, "values": values})

"""Which ResourceSlices one node reaches, grouped into pools as the scheduler's structured allocator of each
Kubernetes minor groups them.

Upstream: `GatherPools`, `nodeMatches` and `createNodeSelector` of kubernetes/dynamic-resource-allocation
structured/internal/: experimental/pools_experimental.go at v0.34.9 (1.34), incubating/pools_incubating.go at v0.35.6
(1.35) and v0.36.2 (1.36) (docs/sources.md#the-structured-allocator). Only the newest generation of a pool counts.
- 1.34: a pool with fewer slices than its `resourceSliceCount` is incomplete, one that names a device twice is
  invalid; slices and pools with binding conditions come after the others.
- 1.35 (kubernetes/dynamic-resource-allocation bcad823, 4f64cd2): a pool that looks incomplete from the node is
  checked against its slices on every node: a newer generation elsewhere drops it, and it is incomplete only if the
  whole pool is. Counter sets come from the pool's own slices that hold only `sharedCounters` (always relevant,
  whatever their node selection), and are validated (duplicate set, unknown set or counter: the pool is invalid);
  the pool's device slices on other nodes are kept to count the counters their allocated devices use.
- 1.36 (33492dc): pools in (driver, pool) order, those with binding conditions last; slices in name order.
The allocator decides what incomplete and invalid mean for a request.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
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
    """One driver's pool as this node sees it: the device slices of its newest generation that reach the node."""

    driver: str
    name: str
    slices: list[ResourceSlice] = field(default_factory=list)
    incomplete: bool = False
    invalid: str | None = None  # why the allocator must not take devices from it
    # From 1.35: the pool's counter sets (set -> counter -> quantity, from its counter slices), and its device slices
    # that do not reach the node, whose allocated devices use those counters too. None before 1.35, where a device's
    # counter sets are those of its own slice.
    counter_sets: dict[str, Mapping[str, str]] | None = None
    elsewhere: list[ResourceSlice] = field(default_factory=list)

    @property
    def id(self) -> str:
        return f"{self.driver}/{self.name}"


class UnsupportedNodeSelector(ValueError):
    """A slice's NodeSelector the allocator cannot carry into an allocation (more than one term)."""


def _has_binding_conditions(slice_: ResourceSlice) -> bool:
    return any(device.binding_conditions for device in slice_.devices)


def gather_pools(slices: Iterable[ResourceSlice], node: Node, partitionable_devices: bool, minor: int = 34,
                 everywhere: Sequence[ResourceSlice] | None = None) -> list[Pool]:
    """The pools with devices this node can reach, as the allocator of Kubernetes 1.`minor` gathers them.
    Per-device node selection (and, from 1.35, counter slices) are DRAPartitionableDevices fields: with the gate off
    such slices are ignored. `everywhere`: all the cluster's slices, where `slices` holds only those that may reach
    the node (None: `slices` are all); 1.35 reads a pool's slices on every node."""
    if minor < 35:
        return _gather_134(slices, node, partitionable_devices)
    slices = list(slices)
    pools: dict[tuple[str, str], Pool] = {}
    with_conditions: list[ResourceSlice] = []  # 1.35: slices with binding conditions are added last
    for slice_ in slices:
        counters = bool(slice_.shared_counters)
        if not partitionable_devices and (slice_.per_device_node_selection or counters):
            continue
        if counters or _reaches(node, slice_):
            if minor == 35 and _has_binding_conditions(slice_):
                with_conditions.append(slice_)
            else:
                _add(pools, slice_)
    for slice_ in with_conditions:
        _add(pools, slice_)
    gathered: list[Pool] = []
    for (driver, name), pool in pools.items():
        generation, count = pool.slices[0].pool.generation, pool.slices[0].pool.slice_count
        whole = None
        if len(pool.slices) != count:
            whole = _pool_slices(slices if everywhere is None else everywhere, driver, name, generation)
            if whole is None:
                continue  # a newer generation is being published on other nodes: this one is out of date
            if len(whole) != count:
                gathered.append(Pool(driver, name, incomplete=True))
                continue
        gathered.append(_build(driver, name, pool.slices, partitionable_devices, minor, whole))
    if minor >= 36:
        return sorted(gathered, key=lambda pool: (_pool_has_binding_conditions(pool), pool.driver, pool.name))
    return sorted(gathered, key=_pool_has_binding_conditions)


def _gather_134(slices: Iterable[ResourceSlice], node: Node, partitionable_devices: bool) -> list[Pool]:
    """1.34: the pools in the order their first slice was seen, those with binding conditions last."""
    pools: dict[tuple[str, str], Pool] = {}
    with_conditions: list[ResourceSlice] = []
    for slice_ in slices:
        if slice_.per_device_node_selection and not partitionable_devices:
            continue
        reached = _reaches(node, slice_)
        if reached and _has_binding_conditions(slice_):
            with_conditions.append(slice_)
        elif reached:
            _add(pools, slice_)
    for slice_ in with_conditions:
        _add(pools, slice_)
    for pool in pools.values():
        pool.incomplete = len(pool.slices) != pool.slices[0].pool.slice_count
        pool.invalid = _duplicate_device(pool.slices)
    return sorted(pools.values(), key=lambda pool: any(map(_has_binding_conditions, pool.slices)))


def _reaches(node: Node, slice_: ResourceSlice) -> bool:
    """The slice, or one of its devices (per-device node selection), selects the node. A slice selecting nothing
    is a future field: upstream skips it too."""
    if slice_.node_selection is not None:
        return node_matches(node, slice_.node_selection)
    if slice_.per_device_node_selection:
        return any(d.node_selection is not None and node_matches(node, d.node_selection) for d in slice_.devices)
    return False


def _pool_slices(slices: Iterable[ResourceSlice], driver: str, name: str,
                 generation: int) -> list[ResourceSlice] | None:
    """The pool's slices of this generation on every node; None if a newer generation exists (checkSlicesInPool)."""
    found = []
    for slice_ in slices:
        if slice_.driver != driver or slice_.pool.name != name:
            continue
        if slice_.pool.generation > generation:
            return None
        if slice_.pool.generation == generation:
            found.append(slice_)
    return found


def _build(driver: str, name: str, slices: list[ResourceSlice], partitionable_devices: bool, minor: int,
           whole: list[ResourceSlice] | None) -> Pool:
    """A complete pool, validated in upstream's order (buildPool): device names, then with the gate on counter-set
    names, then every counter a device of the node's slices uses, then those of the pool's other slices."""
    if minor >= 36:
        slices = sorted(slices, key=lambda slice_: slice_.name)
    counter_slices = [s for s in slices if s.shared_counters] if partitionable_devices else []
    device_slices = [s for s in slices if not s.shared_counters] if partitionable_devices else slices
    pool = Pool(driver, name, device_slices)
    pool.invalid = _duplicate_device(device_slices)
    if pool.invalid or not partitionable_devices:
        return pool
    counter_sets: dict[str, Mapping[str, str]] = {}
    for slice_ in counter_slices:
        for set_name, counters in slice_.shared_counters.items():
            if set_name in counter_sets:
                pool.invalid = f"duplicate counter set name {set_name}"
                return pool
            counter_sets[set_name] = counters
    pool.counter_sets = counter_sets
    pool.invalid = _unknown_counter(counter_sets, slices)
    if pool.invalid or whole is None or len(whole) == len(slices):
        return pool
    seen = {slice_.name for slice_ in slices}
    pool.elsewhere = [slice_ for slice_ in whole if slice_.name not in seen]
    pool.invalid = _unknown_counter(counter_sets, pool.elsewhere)  # device names there are not checked (upstream)
    return pool


def _unknown_counter(counter_sets: Mapping[str, Mapping[str, str]], slices: Iterable[ResourceSlice]) -> str | None:
    """A device's use of a counter set or counter the pool does not declare (validateDeviceCounterConsumption); a
    set declared in another pool is unknown here too."""
    for slice_ in slices:
        for device in slice_.devices:
            for use in device.consumes_counters:
                counter_set = counter_sets.get(use.counter_set)
                if counter_set is None:
                    return f"counter set {use.counter_set} not found"
                for counter in use.counters:
                    if counter not in counter_set:
                        return f"counter {counter} not found in counter set {use.counter_set}"
    return None


def _pool_has_binding_conditions(pool: Pool) -> bool:
    return any(map(_has_binding_conditions, pool.slices))


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


def _duplicate_device(slices: Iterable[ResourceSlice]) -> str | None:
    seen: set[str] = set()
    for slice_ in slices:
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

"""Per inventory (and set of Nodes) the indexes every claim explained against it shares, and the caches keyed on
them: which slices and devices each node reaches, a key of what the allocator sees of each node, per set of devices
in use and per choice which of a node's devices are held and match, so claims alike and nodes alike are judged
once."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, fields
from operator import attrgetter
from typing import Any

from gpu_dra.core.analysis.allocator import KNOWN_KINDS, ClaimAllocation, FailedOnNode, Features
from gpu_dra.core.analysis.inventory import Device, Inventory
from gpu_dra.core.analysis.pools import Node, gather_pools, node_matches
from gpu_dra.core.dra.claims import AllocatedDevice, DeviceId, RequestChoice, ResourceClaim, Share
from gpu_dra.core.dra.slices import NodeSelection, ResourcePool, ResourceSlice, SliceDevice

from .report import Allocation, ClaimReport, SearchStopped


@dataclass
class Matched:
    """A claim past its match report: per request the choices with their matching-device keys."""

    claim: ResourceClaim
    report: ClaimReport
    choices: list[list[tuple[RequestChoice, Any]]]
    attributes: tuple[str, ...]  # the constrained attributes


def _fields_but(cls: type, skipped: Collection[str]) -> Callable[[Any], tuple[Any, ...]]:
    """A getter of every field of the dataclass but `skipped`, present and future, so no field is forgotten."""
    return attrgetter(*(f.name for f in fields(cls) if f.name not in skipped))


_SLICE_SHAPE = _fields_but(ResourceSlice, ("name", "source", "pool", "node_selection", "devices"))
_POOL_SHAPE = _fields_but(ResourcePool, ("name",))
_DEVICE_SHAPE = _fields_but(SliceDevice, ("attributes", "node_selection", "convertible"))


def _shape_of(slice_: ResourceSlice) -> str:
    """All the allocator reads of a slice but its names and attributes (selectors and constraints, which read
    them, are keyed apart)."""
    def local(selection: NodeSelection | None) -> str:
        return "node" if selection is not None and selection.node_name else repr(selection)

    return repr((_SLICE_SHAPE(slice_), _POOL_SHAPE(slice_.pool), local(slice_.node_selection),
                 [(_DEVICE_SHAPE(d), local(d.node_selection)) for d in slice_.devices]))


class Busy(dict[DeviceId, str]):
    """Device -> the claim holding it whole, for the claims judged; the shares other claims hold; both as the
    allocator takes them (shares with their shareID and consumed capacity, which it counts against the device's
    capacity, not as the device taken), and frozen as the fleet's caches are keyed."""

    def __init__(self, holders: Mapping[DeviceId, str], shares: Mapping[DeviceId, Sequence[Share]] | None = None):
        super().__init__(holders)
        self.frozen = frozenset(holders)
        shares = shares or {}
        self.shares = frozenset((device, share.share_id, tuple(sorted(share.consumed_capacity.items())))
                                for device, held in shares.items() for share in held)
        self.allocated = [*(AllocatedDevice(*key) for key in holders),
                          *(AllocatedDevice(*device, share_id=share.share_id,
                                            consumed_capacity=share.consumed_capacity)
                            for device, held in shares.items() for share in held)]

    @property
    def key(self) -> tuple[frozenset[DeviceId], frozenset[Any]]:
        """All the allocator reads of what is held: verdicts are kept under it."""
        return self.frozen, self.shares


NOTHING_BUSY = Busy({})


def _generations(slices: Sequence[ResourceSlice]) -> dict[tuple[str, str], dict[int, int]]:
    """Per pool, how many of its slices each generation has, on all nodes."""
    found: dict[tuple[str, str], dict[int, int]] = defaultdict(dict)
    for slice_ in slices:
        counts = found[(slice_.driver, slice_.pool.name)]
        counts[slice_.pool.generation] = counts.get(slice_.pool.generation, 0) + 1
    return found


def _pools_elsewhere(pools: Mapping[tuple[str, str], int], slices: Sequence[ResourceSlice],
                     generations: Mapping[tuple[str, str], Mapping[int, int]]) -> tuple[Any, ...]:
    """What the 1.35 allocator reads of the node's pools on other nodes, per pool in the node's order: whether the
    generation the node sees is the newest and how many slices that generation has everywhere; and the pool itself
    where its counter sets may be used by devices of other nodes (the counters they hold then differ by pool)."""
    seen: dict[tuple[str, str], int] = {}
    for slice_ in slices:
        key = (slice_.driver, slice_.pool.name)
        seen[key] = max(seen.get(key, slice_.pool.generation), slice_.pool.generation)
    out = []
    for key in pools:
        counts, generation = generations[key], seen[key]
        spans = counts[generation] != sum(1 for s in slices if (s.driver, s.pool.name) == key
                                          and s.pool.generation == generation)
        out.append((generation == max(counts), counts[generation], key if spans else None))
    return tuple(out)


class Fleet:
    """Per inventory (and set of Nodes) indexes, shared by every claim explained against it: the nodes in name
    order, the slices each reaches, a key of what the allocator sees of them, device groups per selector view, and
    per set of claims what allocation sees of each node's matching devices."""

    def __init__(self, inventory: Inventory, nodes: Sequence[Node] | None,
                 grouping: dict[Any, list[list[Device]]], features: Features):
        self.inventory, self.given = inventory, nodes  # held, so the ids this is filed under are not reused
        self.nodes = sorted(nodes, key=lambda n: n.name) if nodes else [Node(n, {}) for n in inventory.nodes()]
        self.grouping = grouping  # the explainer's device groups per selector view, of this inventory
        members = inventory.slice_members()
        self.typed: dict[int, SliceDevice] = {}
        for slice_, devices in members:
            for typed, device in zip(slice_.devices, devices, strict=False):
                self.typed[id(device)] = typed
        self.uses_counters = any(s.shared_counters for s, _ in members)
        self.everywhere = [slice_ for slice_, _ in members]  # the pool checks of 1.35 read every node's slices
        minor, partitionable = features.minor, features.partitionable_devices
        # From 1.35 a counter slice is part of every node's view (GatherPools: "Always include slices with
        # SharedCounters"), whatever it selects.
        counters_everywhere = minor >= 35 and partitionable
        local: dict[str, list[int]] = defaultdict(list)
        shared = []
        for index, (slice_, _) in enumerate(members):
            if counters_everywhere and slice_.shared_counters:
                shared.append(index)
            elif slice_.node_selection is not None and slice_.node_selection.node_name:
                local[slice_.node_selection.node_name].append(index)
            else:
                shared.append(index)
        self.slices_of: dict[str, list[ResourceSlice]] = {}
        self.devices: dict[str, tuple[Device, ...]] = {}
        self.static: dict[str, int] = {}
        self.risky: dict[str, bool] = {}
        statics: dict[Any, int] = {}
        risky_by_static: dict[int, bool] = {}
        # Each slice's shape once (a shared one reaches every node), as the id of its kind: a fleet's slices are few
        # kinds, and the text of each is hundreds of characters.
        kinds: dict[str, int] = {}
        shapes = [kinds.setdefault(_shape_of(slice_), len(kinds)) for slice_, _ in members]
        generations = _generations(self.everywhere) if minor >= 35 else {}
        for node in self.nodes:
            indices = sorted([*local.get(node.name, ()),
                              *(i for i in shared if (counters_everywhere and members[i][0].shared_counters)
                                or self._reaches(node, members[i][0]))])
            slices = self.slices_of[node.name] = [members[i][0] for i in indices]
            reachable: list[Device] = []
            parts = []
            pools: dict[tuple[str, str], int] = {}
            for i in indices:
                slice_, devices = members[i]
                per_device = slice_.node_selection is None
                flags = [not per_device or (typed.node_selection is not None
                                            and node_matches(node, typed.node_selection)) for typed in slice_.devices]
                reachable += [d for d, reach in zip(devices, flags, strict=False) if reach]
                parts.append((pools.setdefault((slice_.driver, slice_.pool.name), len(pools)), tuple(flags),
                              shapes[i]))
            self.devices[node.name] = tuple(reachable)
            if generations:
                parts.append(_pools_elsewhere(pools, slices, generations))
            static = self.static[node.name] = statics.setdefault(tuple(parts), len(statics))
            # Pools are gathered from what the static key holds (the slices' pools, generations, counts, device
            # names, binding conditions; each slice here reaches the node): once per key.
            risky = risky_by_static.get(static)
            if risky is None:
                risky = risky_by_static[static] = any(
                    p.invalid or p.incomplete
                    for p in gather_pools(slices, node, partitionable or minor < 35, minor, self.everywhere))
            self.risky[node.name] = risky
        self._features = features
        self._pool_problems: dict[str, dict[tuple[str, str], str]] = {}
        self._reach: dict[str, frozenset[DeviceId]] | None = None
        self._passing: dict[Any, frozenset[int]] = {}
        self._interned: dict[Any, int] = {}
        self._held: dict[frozenset[DeviceId], dict[str, tuple[tuple[bool, ...], int]]] = {}
        self._matched: dict[Any, dict[str, tuple[int, int, int]]] = {}
        self._compared: dict[str, dict[str, int]] = {}
        # Verdicts shared by claims alike to the allocator (their shape: all but names and selectors, whose
        # matching devices are keyed apart): (node static key, signature, shapes) -> fits, or the search stopped;
        # with the node's name, the allocation found.
        self.outcomes: dict[Any, bool | SearchStopped | FailedOnNode] = {}
        self.results: dict[Any, list[ClaimAllocation]] = {}
        self._looks: dict[Any, tuple[dict[str, tuple[bool, int]], dict[int, list[Node]]]] = {}
        self._names: dict[tuple[int, ...], tuple[list[list[Node]], tuple[str, ...]]] = {}

    @property
    def reach(self) -> dict[str, frozenset[DeviceId]]:
        """node -> the devices it reaches."""
        if self._reach is None:
            self._reach = {name: frozenset(DeviceId(d.driver, d.pool, d.name) for d in devices)
                           for name, devices in self.devices.items()}
        return self._reach

    def pool_problem(self, node: str, device: Device) -> str | None:
        """Why, from 1.35, the allocator passes over the device's pool on this node (incomplete, invalid, or out of
        date); None where it may take from it (and always before 1.35, which used incomplete pools and failed the
        pod on an invalid one)."""
        if self._features.minor < 35:
            return None
        problems = self._pool_problems.get(node)
        if problems is None:
            problems = self._pool_problems[node] = self._problems_on(node)
        return problems.get((device.driver, device.pool))

    def _problems_on(self, name: str) -> dict[tuple[str, str], str]:
        node = next(n for n in self.nodes if n.name == name)
        slices = self.slices_of[name]
        gathered = {(p.driver, p.name): p for p in gather_pools(slices, node, self._features.partitionable_devices,
                                                                 self._features.minor, self.everywhere)}
        problems = {}
        for slice_ in slices:
            key = (slice_.driver, slice_.pool.name)
            pool = gathered.get(key)
            if pool is None:
                problems[key] = (f"its pool {'/'.join(key)} is out of date: a newer generation of it is published "
                                 "for other nodes, so the scheduler ignores it until the driver publishes it here")
            elif pool.incomplete:
                have = sum(1 for s in self.everywhere if (s.driver, s.pool.name) == key
                           and s.pool.generation == slice_.pool.generation)
                problems[key] = (f"its pool {'/'.join(key)} is incomplete: {have} slice(s) of generation "
                                 f"{slice_.pool.generation} where its resourceSliceCount says "
                                 f"{slice_.pool.slice_count}, and from 1.35 the scheduler takes no device from a pool "
                                 "until the driver has published all of it")
            elif pool.invalid:
                problems[key] = (f"its pool {'/'.join(key)} is invalid ({pool.invalid}), and the scheduler takes no "
                                 "device from it")
        return problems

    @staticmethod
    def _reaches(node: Node, slice_: ResourceSlice) -> bool:
        if slice_.node_selection is not None:
            return node_matches(node, slice_.node_selection)
        return any(d.node_selection is not None and node_matches(node, d.node_selection) for d in slice_.devices)

    def passing(self, matching: tuple[Any, tuple[int, ...]]) -> frozenset[int]:
        """The ids of the devices a choice matches."""
        found = self._passing.get(matching)
        if found is None:
            spec, indices = matching
            groups = self.grouping[spec]
            found = self._passing[matching] = frozenset(id(d) for i in indices for d in groups[i])
        return found

    def passing_any(self, keys: Sequence[Any]) -> frozenset[int]:
        return frozenset().union(*(self.passing(k) for k in keys))

    def _intern(self, value: Any) -> int:
        return self._interned.setdefault(value, len(self._interned))

    def held(self, busy: frozenset[DeviceId]) -> dict[str, tuple[tuple[bool, ...], int]]:
        """node -> (per reachable device whether another claim holds it, that pattern's id)."""
        found = self._held.get(busy)
        if found is None:
            found = self._held[busy] = {}
            for node in self.nodes:
                flags = tuple(bool(busy) and DeviceId(d.driver, d.pool, d.name) in busy
                              for d in self.devices[node.name])
                found[node.name] = (flags, self._intern(flags))
        return found

    def matched(self, matching: Any, busy: frozenset[DeviceId]) -> dict[str, tuple[int, int, int]]:
        """node -> (id of the pattern of devices the choice matches, how many match, how many of those are free)."""
        key = (matching, busy)
        found = self._matched.get(key)
        if found is None:
            passing, held = self.passing(matching), self.held(busy)
            found = self._matched[key] = {}
            for node in self.nodes:
                flags = tuple(id(d) in passing for d in self.devices[node.name])
                free = sum(1 for f, h in zip(flags, held[node.name][0], strict=True) if f and not h)
                found[node.name] = (self._intern(flags), sum(flags), free)
        return found

    def compared(self, attribute: str) -> dict[str, int]:
        """node -> id of its devices' values of a constrained attribute by equality class (all a constraint
        compares: equal type and value, a type constraints know, or absent)."""
        found = self._compared.get(attribute)
        if found is None:
            found = self._compared[attribute] = {}
            for node in self.nodes:
                classes: dict[Any, int] = {}
                found[node.name] = self._intern(tuple(
                    None if (v := d.typed_attribute(attribute)) is None
                    else (classes.setdefault(v, len(classes)), v[0] in KNOWN_KINDS) for d in self.devices[node.name]))
        return found

    def looks(self, claims: Sequence[Matched],
              busy: frozenset[DeviceId]) -> tuple[dict[str, tuple[bool, int]], dict[int, list[Node]]]:
        """node -> (whether each request of each claim has enough matching, free devices there alone; the id of
        all the allocator's verdict depends on: the node's static key, per reachable device which choices it
        matches and whether another claim holds it, and the constrained attributes by equality class); and the
        nodes a search is tried on (those where each request fits alone, or whose pools are invalid or incomplete)
        by that id, in name order: claims alike share both, and a fleet has 10,000 nodes."""
        cache = (tuple((tuple(tuple((key, spec.allocation_mode, spec.count, spec.admin_access)
                                    for spec, key in choices) for choices in m.choices), m.attributes)
                       for m in claims), busy)
        cached = self._looks.get(cache)
        if cached is not None:
            return cached
        held = self.held(busy)
        requests = [[(self.matched(key, busy), spec.allocation_mode, spec.count, spec.admin_access)
                     for spec, key in choices] for m in claims for choices in m.choices]
        compared = [self.compared(a) for m in claims for a in m.attributes]
        names = [node.name for node in self.nodes]
        # Per node, all the verdict depends on (which also decides whether each request fits alone), one column
        # each: nodes alike share a row, judged once.
        columns = [[self.static[name] for name in names], [held[name][1] for name in names],
                   *([per_node[name][0] for name in names] for choices in requests for per_node, *_ in choices),
                   *([per_node[name] for name in names] for per_node in compared)]
        found: dict[str, tuple[bool, Any]] = {}
        tried: dict[int, list[Node]] = {}
        judged: dict[tuple[int, ...], tuple[bool, int]] = {}
        for node, row in zip(self.nodes, zip(*columns, strict=True), strict=True):
            name = node.name
            looked = judged.get(row)
            if looked is None:
                candidate = True
                for choices in requests:
                    fits = False
                    for per_node, mode, count, admin in choices:
                        _, matching, free = per_node[name]
                        usable = matching if admin else free
                        fits = fits or (usable >= count if mode != "All" else 0 < matching == usable)
                    candidate = candidate and fits
                looked = judged[row] = (candidate, self._intern(row))
            found[name] = looked
            if looked[0] or self.risky[name]:
                tried.setdefault(looked[1], []).append(node)
        self._looks[cache] = found, tried
        return found, tried

    def names(self, groups: list[list[Node]], cached: bool) -> tuple[str, ...]:
        """The names of the nodes of these groups, in name order; `cached`: the groups are the fleet's own (`looks`),
        and claims alike fit on the same ones: 10,000 names sorted once, not per claim."""
        key = tuple(map(id, groups))
        found = self._names.get(key) if cached else None
        if found is None:
            names = ([n.name for n in groups[0]] if len(groups) == 1
                     else sorted(n.name for group in groups for n in group))
            found = (groups, tuple(names))
            if cached:  # held with its groups, so their ids are not reused
                self._names[key] = found
        return found[1]

    def allocations(self, node: str, allocation: ClaimAllocation) -> list[Allocation]:
        """The core's result as explain's solution: per request (or subrequest) the inventory devices."""
        by_id = {DeviceId(d.driver, d.pool, d.name): d for d in self.devices[node]}
        out: list[Allocation] = []
        for result in allocation.devices:
            request, _, subrequest = result.request.partition("/")
            device = by_id.get(DeviceId(result.driver, result.pool, result.device))
            if device is None:
                continue
            if out and (out[-1].request, out[-1].subrequest) == (request, subrequest):
                out[-1] = Allocation(request, subrequest, (*out[-1].devices, device))
            else:
                out.append(Allocation(request, subrequest, (device,)))
        return out

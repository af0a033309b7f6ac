"""Allocation with the semantics of the scheduler's structured allocator of each Kubernetes minor
(kubernetes/dynamic-resource-allocation structured/internal/: experimental/allocator_experimental.go at v0.34.9 for
1.34, incubating/allocator_incubating.go at v0.35.6 for 1.35 and at v0.36.2 for 1.36; docs/sources.md#the-structured-
allocator). `Features.minor` chooses; where the minors differ, the code says which does what.

`allocate_claims` is the faithful core: all claims of a pod together on one node, from the pools the node reaches,
with admin access, firstAvailable alternatives, constraints, shared counters, device taints and tolerations, binding
conditions, and devices allocated more than once with their consumable capacity, each behind its feature switch; it
is checked case by case against upstream's own test tables of each minor (tests/test_allocator_upstream.py).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from math import ceil
from typing import Any

from gpu_dra.core.analysis.pools import (
    Node,
    Pool,
    UnsupportedNodeSelector,
    gather_pools,
    node_matches,
    node_selector_for,
)
from gpu_dra.core.dra.cel import CompiledSelector, CompileError, DeviceView, compile_selector, device_view, evaluate
from gpu_dra.core.dra.claims import AllocatedDevice, DeviceToleration, RequestChoice, ResourceClaim
from gpu_dra.core.dra.quantity import QuantityError, parse_quantity
from gpu_dra.core.dra.slices import CapacityRequestPolicy, DeviceTaint, ResourceSlice, SliceDevice

# --------------------------------------------------------------------------------------------- the faithful core

MAX_RESULTS = 32  # AllocationResultsMaxSize: devices one claim's allocation may hold
KNOWN_KINDS = ("int", "bool", "string", "version")  # attribute types constraints compare


@dataclass(frozen=True)
class Features:
    """The allocator's switches (upstream `structured.Features`), each set by the feature gate named beside it, the
    two of the scheduler's ResourceSlice tracker, which decide what explain hands the allocator, and whether the
    scheduler stops a search at its filter timeout, which decides how explain words a search it stopped."""

    admin_access: bool = False  # DRAAdminAccess
    prioritized_list: bool = False  # DRAPrioritizedList
    partitionable_devices: bool = False  # DRAPartitionableDevices
    device_taints: bool = False  # DRADeviceTaints
    consumable_capacity: bool = False  # DRAConsumableCapacity
    device_binding: bool = False  # DRADeviceBindingConditions
    device_status: bool = False  # DRAResourceClaimDeviceStatus
    # The tracker adds DeviceTaintRules' taints to the slices' devices: DRADeviceTaintRules from 1.35, DRADeviceTaints
    # before, when its rules' deviceClassName and CEL selectors also select (`taint_rule_selectors`).
    device_taint_rules: bool = False
    taint_rule_selectors: bool = False
    filter_timeout: bool = False  # DRASchedulerFilterTimeout, where the allocator looks at its context
    # DRAListTypeAttributes (alpha from 1.36): selectors may iterate over attribute values; list-valued attributes
    # and constraints over them are not modelled.
    list_type_attributes: bool = False
    # The Kubernetes minor whose allocator runs: 34 for 1.34, 35, 36 (1.37 runs 36's: no v0.37.0 table yet).
    minor: int = 34


class AllocationTimeout(Exception):
    """The search passed its deadline before it ended. Upstream's allocateOne checks its context at every step and
    returns "filter operation aborted: context deadline exceeded" (kubernetes/dynamic-resource-allocation@v0.34.9
    structured/internal/experimental/allocator_experimental.go), which the scheduler's Filter reports for the node
    (gpu_dra.core.analysis.explain.FILTER_TIMED_OUT)."""


class FailedOnNode(Exception):
    """The claims do not fit on this node for a reason the scheduler reports for the node, not the pod: from 1.35,
    "invalid resource pools were encountered" when nothing else fits (`ErrFailedAllocationOnNode` in
    kubernetes/dynamic-resource-allocation@v0.35.6 structured/internal/incubating/allocator_incubating.go, which the
    scheduler's Filter turns into Unschedulable for the node). The message is the scheduler's; `pools` says which
    pools are invalid and why, which the scheduler logs only."""

    def __init__(self, message: str, pools: Sequence[tuple[str, str]] = ()):
        super().__init__(message)
        self.pools = tuple(pools)  # (driver/pool, why it is invalid)

    @property
    def detail(self) -> str:
        return "; ".join(f"pool {pool}: {why}" for pool, why in self.pools)


class AllocationError(ValueError):
    """Input the scheduler refuses for the pod as a whole, on every node (a missing class, a bad selector, an
    invalid pool, too many devices): the message names the claim and, where one is at fault, the request and the
    selector."""

    def __init__(self, claim: str, message: str):
        super().__init__(message)
        self.claim = claim


@dataclass(frozen=True)
class DeviceResult:
    """One entry of the allocation's results. `shared`: a share of a device allocated more than once, to which
    the scheduler gives a fresh shareID; `consumed_capacity` is set for shares only (upstream consumedCapacity).
    Binding conditions are copied from the device with DRADeviceBindingConditions on."""

    request: str  # "req", or "req/sub" for the firstAvailable alternative chosen
    driver: str
    pool: str
    device: str
    admin_access: bool = False
    shared: bool = False
    consumed_capacity: Mapping[str, Decimal] = field(default_factory=dict)  # capacity name -> quantity
    binding_conditions: tuple[str, ...] = ()
    binding_failure_conditions: tuple[str, ...] = ()
    tolerations: tuple[DeviceToleration, ...] = ()  # from 1.35, all of the request's, tainted device or not


@dataclass(frozen=True)
class ClaimAllocation:
    claim: str
    devices: tuple[DeviceResult, ...]
    node_selector: dict[str, Any] | None  # nodes that reach all the devices; None: every node


_DeviceId = tuple[str, str, str]  # driver, pool, device


@dataclass(frozen=True)
class _Device:
    pool: Pool
    slice: ResourceSlice
    device: SliceDevice

    @property
    def id(self) -> _DeviceId:
        return self.pool.driver, self.pool.name, self.device.name

    @property
    def label(self) -> str:
        return "/".join(self.id)


@dataclass
class _Request:
    """A request or one of its subrequests, checked and resolved before the search (upstream `requestData`)."""

    key: tuple[int, int, int]  # claim, request, subrequest indices
    name: str  # the request's name; a subrequest's parent
    subrequest: str  # "" for `exactly`
    choice: RequestChoice
    class_selectors: tuple[str, ...] = ()
    count: int = 0  # devices to allocate
    all_devices: list[_Device] | None = None  # allocationMode All: exactly these

    @property
    def claim(self) -> int:
        return self.key[0]

    @property
    def label(self) -> str:
        return f"{self.name}/{self.subrequest}" if self.subrequest else self.name


@dataclass(frozen=True)
class _Picked:
    """A device being allocated to a request, with what a share of it consumes."""

    request: _Request
    device: _Device
    shared: bool
    consumed: dict[str, Decimal]


class _ResultLimit(Exception):
    """The claim would exceed MAX_RESULTS on this path: upstream backtracks further than on a plain failure."""


_Position = tuple[int, int, int, int]  # claim, request, subrequest, device: the device to allocate next


def allocate_claims(claims: Sequence[ResourceClaim], slices: Sequence[ResourceSlice], node: Node,
                    classes: Mapping[str, Sequence[str]], allocated: Iterable[AllocatedDevice],
                    features: Features, deadline: float | None = None,
                    clock: Callable[[], float] = time.monotonic,
                    compiled: dict[str, CompiledSelector | CompileError] | None = None,
                    everywhere: Sequence[ResourceSlice] | None = None) -> list[ClaimAllocation] | None:
    """All claims of one pod allocated together on one node, as `Allocator.Allocate(ctx, node, claims)` does
    (kubernetes/dynamic-resource-allocation@v0.34.9 structured/internal/experimental/allocator_experimental.go;
    docs/sources.md#the-structured-allocator): one result per claim in claim order, or None when they do not fit
    on this node. `classes` maps a DeviceClass to its CEL selectors; `allocated` are the results of existing
    claims: admin-access ones hold no device, shares (a share ID, with DRAConsumableCapacity on) hold the capacity
    they consume, the others the whole device (`foreachAllocatedDevice` in kubernetes/kubernetes
    pkg/scheduler/framework/plugins/dynamicresources/allocateddevices.go). Raises AllocationError for input the
    scheduler refuses everywhere, and AllocationTimeout once `clock()` reaches `deadline` (None: no deadline) while
    searching, as upstream's search stops when its context is done, and FailedOnNode where from 1.35 an invalid
    pool is the node's failure. `compiled`: selectors compiled with these features by an earlier call, kept across
    calls (filled here). `everywhere`: all the cluster's slices where `slices` holds only those that may reach the
    node (from 1.35 the allocator reads a pool's slices on every node)."""
    busy: set[_DeviceId] = set()
    shares: dict[_DeviceId, list[Mapping[str, str]]] = {}
    for result in allocated:
        if result.admin_access:
            continue
        device = (result.driver, result.pool, result.device)
        if features.consumable_capacity and result.share_id is not None:
            shares.setdefault(device, []).append(result.consumed_capacity)
        else:
            busy.add(device)
    pools = gather_pools(slices, node, features.partitionable_devices, features.minor, everywhere)
    return _Allocator(claims, pools, node, classes, busy, shares, features, deadline, clock,
                      {} if compiled is None else compiled).run()


class _Allocator:
    """One Allocate call: exhaustive depth-first search in upstream's order (claims, requests, subrequests in
    order, then pools, slices and devices as listed); the first full solution wins."""

    def __init__(self, claims: Sequence[ResourceClaim], pools: list[Pool], node: Node,
                 classes: Mapping[str, Sequence[str]], busy: set[_DeviceId],
                 shares: Mapping[_DeviceId, list[Mapping[str, str]]], features: Features, deadline: float | None,
                 clock: Callable[[], float], compiled: dict[str, CompiledSelector | CompileError]):
        self.claims, self.pools, self.node, self.classes = claims, pools, node, classes
        self.busy, self.shares, self.features = busy, shares, features
        self.deadline, self.clock = deadline, clock
        self.devices = [[_Device(pool, s, d) for s in pool.slices for d in s.devices] for pool in pools]
        self.requests: dict[tuple[int, int, int], _Request] = {}
        self.alternatives: dict[tuple[int, int], int] = {}  # (claim, request) -> number of firstAvailable choices
        self.constraints: list[list[_MatchAttribute | _DistinctAttribute]] = []
        self.allocating: dict[_DeviceId, set[int]] = {}  # device -> claims it is being allocated to
        self.sharing: dict[_DeviceId, dict[str, Decimal]] = {}  # capacity taken by shares being allocated
        self.shares_allocating: dict[_DeviceId, int] = {}  # how many shares of the device are being allocated
        # Counters left: counter set -> counter -> quantity, per slice name before 1.35, per pool name from 1.35
        # (upstream keys its cache by the pool's name alone, so two drivers' pools of one name share it).
        self.available: dict[str, dict[str, dict[str, Decimal]]] = {}
        self.consumed: dict[str, dict[str, dict[str, Decimal]]] = {}  # ... taken by allocations being made
        self.results: list[list[_Picked]] = [[] for _ in claims]
        self.matches: dict[tuple[_DeviceId, tuple[int, int, int]], bool] = {}
        self.compiled = compiled
        self.views: dict[_DeviceId, DeviceView] = {}

    def run(self) -> list[ClaimAllocation] | None:
        for index, claim in enumerate(self.claims):
            self._prepare(index, claim)
        if not self._allocate_one((0, 0, 0, 0), False):
            invalid = [(pool.id, pool.invalid) for pool in self.pools if pool.invalid]
            if self.features.minor >= 35 and invalid:
                raise FailedOnNode("invalid resource pools were encountered", invalid)
            return None
        return [self._result(index, claim) for index, claim in enumerate(self.claims)]

    # ------------------------------------------------------------------------------------------- before the search

    def _prepare(self, index: int, claim: ResourceClaim) -> None:
        """Checks upstream makes before searching, in its order; resolves classes and `All` device lists."""
        if claim.problem:
            raise AllocationError(claim.name, f"claim {claim.name}: {claim.problem}")
        minimum = 0
        for r, request in enumerate(claim.requests):
            alternatives = any(choice.subrequest for choice in request.choices)
            if alternatives and not self.features.prioritized_list:
                raise AllocationError(claim.name, f"claim {claim.name}, request {request.name}: has subrequests, "
                                                  "but the DRAPrioritizedList feature is disabled")
            counts = []
            for s, choice in enumerate(request.choices):
                prepared = _Request((index, r, s), request.name, choice.subrequest, choice)
                self._prepare_request(prepared)
                self.requests[prepared.key] = prepared
                counts.append(prepared.count)
            if alternatives:
                self.alternatives[(index, r)] = len(request.choices)
            minimum += min(counts, default=0)
        if minimum > MAX_RESULTS:
            raise AllocationError(claim.name, f"claim {claim.name}: number of requested devices {minimum} exceeds "
                                              f"the claim limit of {MAX_RESULTS}")
        constraints: list[_MatchAttribute | _DistinctAttribute] = []
        for c, constraint in enumerate(claim.constraints):
            if constraint.match_attribute:
                constraints.append(_MatchAttribute(constraint.requests, constraint.match_attribute))
            elif constraint.distinct_attribute:
                constraints.append(_DistinctAttribute(constraint.requests, constraint.distinct_attribute))
            else:
                raise AllocationError(claim.name, f"claim {claim.name}, constraint #{c}: empty constraint "
                                                  "(unsupported constraint type?)")
        self.constraints.append(constraints)

    def _prepare_request(self, request: _Request) -> None:
        """Upstream validateDeviceRequest: the request's own checks, its class, and how many devices it takes."""
        claim = self.claims[request.claim].name
        where = f"claim {claim}, request {request.label}"
        choice = request.choice
        if choice.requests_capacity and not self.features.consumable_capacity:
            named = f"subrequest {request.subrequest}" if request.subrequest else f"request {request.name}"
            raise self._error(request, f"claim {claim}, {named}: has capacity requests, but the DRAConsumableCapacity "
                                       "feature is disabled")
        if choice.unknown_selectors:
            raise self._error(request, f"{where}, selector #{choice.unknown_selectors[0]}: CEL expression empty "
                                       "(unsupported selector type?)")
        if choice.written_admin_access is not None and not self.features.admin_access:
            raise self._error(request, f"{where}: admin access is requested, but the feature is disabled")
        if not choice.device_class:
            raise self._error(request, f"{where}: missing device class name (unsupported request type?)")
        if choice.device_class not in self.classes:
            raise self._error(request, f"{where}: could not retrieve device class {choice.device_class}: not found")
        request.class_selectors = tuple(self.classes[choice.device_class])
        if choice.allocation_mode == "ExactCount":
            request.count = choice.count
        elif choice.allocation_mode == "All":
            request.all_devices = []
            for pool, devices in zip(self.pools, self.devices, strict=True):
                if pool.incomplete:
                    raise self._error(request, f"{where}: asks for all devices, but resource pool {pool.id} is "
                                               "currently being updated")
                if pool.invalid:
                    raise self._error(request, f"{where}: asks for all devices, but resource pool {pool.id} is "
                                               f"currently invalid ({pool.invalid})")
                request.all_devices += [d for d in devices if self._selectable(request, d)
                                        and (not self.features.consumable_capacity
                                             or self._capacity_fits(request, d))]
            request.count = len(request.all_devices)
        else:
            raise self._error(request, f"{where}: unsupported count mode {choice.allocation_mode}")

    def _error(self, request: _Request, message: str) -> AllocationError:
        return AllocationError(self.claims[request.claim].name, message)

    # ------------------------------------------------------------------------------------------- the search

    def _allocate_one(self, at: _Position, in_subrequest: bool) -> bool:
        """Allocate the device at `at` and everything after it (upstream `allocateOne`). `in_subrequest`: one
        firstAvailable alternative is being tried, so the alternatives loop is not entered again."""
        if self.deadline is not None and self.clock() >= self.deadline:
            raise AllocationTimeout("filter operation aborted: context deadline exceeded")
        claim, r, s, d = at
        if claim >= len(self.claims):
            return True
        if r >= len(self.claims[claim].requests):
            try:
                return self._allocate_one((claim + 1, 0, 0, 0), False)
            except _ResultLimit:
                return False  # a later claim's limit: another choice in this claim may still need fewer devices
        if not in_subrequest and (claim, r) in self.alternatives:
            all_at_limit = True
            for alternative in range(self.alternatives[(claim, r)]):
                try:
                    done = self._allocate_one((claim, r, alternative, d), True)
                except _ResultLimit:
                    continue
                all_at_limit = False
                if done:
                    return True
            if all_at_limit:
                raise _ResultLimit
            return False
        request = self.requests[(claim, r, s)]
        if request.all_devices is not None and not request.all_devices:
            return False  # All needs at least one device
        if d >= request.count:
            return self._allocate_one((claim, r + 1, 0, 0), False)
        if len(self.results[claim]) + request.count - d > MAX_RESULTS:
            raise _ResultLimit
        if d == 0 and request.all_devices is None and self._too_few(request):
            return False
        following = (claim, r, s, d + 1)
        if request.all_devices is not None:
            # The order of "all" devices does not matter: if this one cannot be taken, there is no solution.
            undo = self._allocate_device(at, request.all_devices[d], must=True)
            if undo is None:
                return False
            try:
                done = self._allocate_one(following, in_subrequest)
            except _ResultLimit:
                undo()
                raise
            if not done:
                undo()
            return done
        for device in self._candidates(request):
            if self.features.consumable_capacity and not self._capacity_fits(request, device):
                continue
            undo = self._allocate_device(at, device, must=False)
            if undo is None:
                continue
            try:
                done = self._allocate_one(following, in_subrequest)
            except _ResultLimit:
                undo()
                raise
            if done:
                return True
            undo()
        return False

    def _candidates(self, request: _Request) -> Iterator[_Device]:
        """The devices the search tries for `request`, in its order, past the checks each try starts with (free, or
        held only by other claims where the request has admin access; selected by the class and the request). In
        1.34 an invalid pool is fatal when the search reaches it (another pool may satisfy the request first); from
        1.35 incomplete and invalid pools are passed over (the search's end reports the invalid ones)."""
        claim, admin = request.claim, request.choice.admin_access
        for pool, devices in zip(self.pools, self.devices, strict=True):
            if self.features.minor >= 35 and (pool.incomplete or pool.invalid):
                continue
            if pool.invalid:
                raise self._invalid_pool(request, pool)
            for device in devices:
                if admin and claim in self.allocating.get(device.id, ()):
                    continue
                if not admin and self._in_use(device.id):
                    continue
                if self._selectable(request, device):
                    yield device

    def _in_use(self, device: _DeviceId) -> bool:
        return device in self.busy or bool(self.allocating.get(device))

    def _invalid_pool(self, request: _Request, pool: Pool) -> AllocationError:
        return self._error(request, f"claim {self.claims[request.claim].name}, request {request.label}: pool "
                                    f"{pool.name} is invalid: {pool.invalid} (driver {pool.driver})")

    def _too_few(self, request: _Request) -> bool:
        """Whether fewer devices than the request's count can ever be taken for it from this point, so the search
        of its first device would fail. Not upstream's: v0.34.9 tries every order of the devices before failing
        (e·n! steps for n devices: minutes for 11 of 10), which the scheduler cuts at its filter timeout. This
        walk is the search's own first pass over the devices, with its checks in its order and so its first error,
        stopped once enough devices are seen; it decides only where that search would leave nothing behind. A
        device that consumes counters (taken before a later check can fail, and not given back, as upstream does)
        or that can be shared (one device, several results) leaves it to the search."""
        found = 0
        for device in self._candidates(request):
            if self.features.consumable_capacity:
                if device.device.allow_multiple_allocations:
                    return False
                if not self._capacity_fits(request, device):
                    continue
            if device.device.consumes_counters:
                if self.features.partitionable_devices:
                    return False
                continue  # never allocated without the feature
            if self.features.device_taints and untolerated(device.device.taints, request.choice.tolerations):
                continue
            found += 1
            if found >= request.count:
                return False
        return True

    def _allocate_device(self, at: _Position, device: _Device, must: bool) -> Callable[[], None] | None:
        """Take one selectable device if it is free, its counters suffice, its taints allow it and the claim's
        constraints hold; returns how to give it back, or None. Checks run in upstream's order (allocateDevice),
        and what is taken before a later check fails (counters, constraint entries) is not given back, as upstream
        does not give it back; nor does giving back a shared device return its counters."""
        claim, r, s, _ = at
        request = self.requests[(claim, r, s)]
        admin = request.choice.admin_access
        shared = self.features.consumable_capacity and device.device.allow_multiple_allocations
        if not shared and admin and claim in self.allocating.get(device.id, ()):
            return None
        if not admin and self._in_use(device.id):
            return None
        counters = device.device.consumes_counters
        if counters and not self.features.partitionable_devices:
            return None
        # From 1.35 a device allocated more than once takes its counters with its first share only.
        if counters and not (shared and self.features.minor >= 35 and self._capacity_in_use(device.id)) \
                and not self._take_counters(request, device):
            return None
        if self.features.device_taints and untolerated(device.device.taints, request.choice.tolerations):
            return None
        constraints = self.constraints[claim]
        for index, constraint in enumerate(constraints):
            if not constraint.add(request.name, request.subrequest, device):
                if must:
                    raise self._error(request, f"claim {self.claims[claim].name}, request {request.label}: cannot "
                                               f"add device {device.label} because a claim constraint would not be "
                                               "satisfied")
                for earlier in constraints[:index]:
                    earlier.remove(request.name, request.subrequest)
                return None
        holders = self.allocating.setdefault(device.id, set())
        if not shared:
            holders.add(claim)
        taken: dict[str, Decimal] = {}
        if self.features.consumable_capacity:
            if not self._capacity_fits(request, device):
                return None
            if shared:
                taken = self._consumed(request, device)
                share = self.sharing.setdefault(device.id, {})
                for name, value in taken.items():
                    share[name] = share.get(name, Decimal(0)) + value
                self.shares_allocating[device.id] = self.shares_allocating.get(device.id, 0) + 1
        self.results[claim].append(_Picked(request, device, shared, taken))
        kept = len(self.results[claim]) - 1

        def undo() -> None:
            for constraint in constraints:
                constraint.remove(request.name, request.subrequest)
            holders.discard(claim)
            if shared:
                share = self.sharing[device.id]
                for name, value in taken.items():
                    share[name] -= value
                self.shares_allocating[device.id] -= 1
            elif self.features.partitionable_devices and counters:
                self._give_back_counters(request, device)
            del self.results[claim][kept:]

        return undo

    # ------------------------------------------------------------------------------------------- device checks

    def _selectable(self, request: _Request, device: _Device) -> bool:
        """Class selectors, then request selectors, then (per-device node selection) the device's own nodes. A
        device with binding conditions needs DRADeviceBindingConditions and DRAResourceClaimDeviceStatus."""
        if device.device.binding_conditions and not (self.features.device_binding and self.features.device_status):
            return False
        key = (device.id, request.key)
        if key not in self.matches:
            self.matches[key] = (self._selectors_hold(request, device, request.class_selectors, True)
                                 and self._selectors_hold(request, device, request.choice.selectors, False)
                                 and (not device.slice.per_device_node_selection
                                      or (device.device.node_selection is not None
                                          and node_matches(self.node, device.device.node_selection))))
        return self.matches[key]

    def _selectors_hold(self, request: _Request, device: _Device, selectors: Sequence[str], of_class: bool) -> bool:
        """A compile or runtime error aborts the allocation, never reads as "no match"."""
        owner = f"class {request.choice.device_class}: " if of_class else ""
        where = f"claim {self.claims[request.claim].name}, request {request.label}: {owner}selector"
        for index, expression in enumerate(selectors):
            compiled = self.compiled.get(expression)
            if compiled is None:
                try:
                    compiled = compile_selector(expression, self.features.consumable_capacity, check_cost=False,
                                                list_type_attributes=self.features.list_type_attributes)
                except CompileError as error:
                    compiled = error
                self.compiled[expression] = compiled
            if isinstance(compiled, CompileError):
                raise self._error(request, f"{where} #{index}: CEL compile error: {compiled.message}")
            view = self.views.get(device.id)
            if view is None:
                view = self.views[device.id] = device_view(device.pool.driver, device.device.attributes,
                                                           device.device.capacity,
                                                           device.device.allow_multiple_allocations)
            result = evaluate(compiled, view)
            if result.error:
                raise self._error(request, f"{where} #{index} on device {device.label}: CEL runtime error: "
                                           f"{result.error}")
            if not result.matches:
                return False
        return True

    def _consumed(self, request: _Request, device: _Device) -> dict[str, Decimal]:
        """What one allocation consumes of each capacity of the device (upstream GetConsumedCapacityFromRequest):
        the request's amount rounded up by the capacity's requestPolicy; where it names none, the policy's
        default, else all of it."""
        requests = request.choice.capacity_requests or {}
        consumed = {}
        for name, text in device.device.capacity.items():
            policy = device.device.request_policies.get(name)
            if name not in requests:
                default = policy.default if policy and policy.default is not None else text
                consumed[name] = self._quantity(request, f"device {device.label}: capacity {name}", default)
                continue
            asked = self._quantity(request, f"capacity request {name}", requests[name])
            consumed[name] = self._round_up(request, asked, policy) if policy else asked
        return consumed

    def _round_up(self, request: _Request, asked: Decimal, policy: CapacityRequestPolicy) -> Decimal:
        """The smallest amount the policy allows at or above `asked` (upstream roundUpRange, roundUpValidValues);
        with a step, amounts are whole units as Quantity.Value() takes them."""
        valid_range = policy.valid_range
        if valid_range is not None and valid_range.min is not None:
            minimum = self._quantity(request, "requestPolicy validRange.min", valid_range.min)
            if asked < minimum:
                return minimum
            if valid_range.step is None:
                return asked
            step, low = (Decimal(ceil(self._quantity(request, f"requestPolicy validRange.{what}", text)))
                         for what, text in (("step", valid_range.step), ("min", valid_range.min)))
            return low + step * ceil((Decimal(ceil(asked)) - low) / step)
        for text in policy.valid_values:
            value = self._quantity(request, "requestPolicy validValues", text)
            if asked <= value:
                return value
        return asked

    def _violates(self, request: _Request, amount: Decimal, policy: CapacityRequestPolicy) -> bool:
        """Upstream violatesPolicy: the default is always allowed; otherwise above validRange.max, off its step,
        or not one of validValues. (Upstream compares the default as a Go struct, gpu-dra by value.)"""
        if policy.default is not None and amount == self._quantity(request, "requestPolicy default", policy.default):
            return False
        valid_range = policy.valid_range
        if valid_range is not None:
            if valid_range.max is not None and amount > self._quantity(request, "requestPolicy validRange.max",
                                                                         valid_range.max):
                return True
            if valid_range.step is not None:
                step, low = (Decimal(ceil(self._quantity(request, f"requestPolicy validRange.{what}", text or "0")))
                             for what, text in (("step", valid_range.step), ("min", valid_range.min)))
                return (Decimal(ceil(amount)) - low) % step != 0
            return False
        return bool(policy.valid_values) and all(
            amount != self._quantity(request, "requestPolicy validValues", text) for text in policy.valid_values)

    def _capacity_fits(self, request: _Request, device: _Device) -> bool:
        """Every capacity the request names exists, each amount keeps to its policy, and what existing shares
        hold, plus shares being allocated, plus this allocation stays within the capacity (upstream
        CmpRequestOverCapacity)."""
        requests = request.choice.capacity_requests or {}
        if any(name not in device.device.capacity for name in requests):
            return False
        allocating = self.sharing.get(device.id, {})
        for name, amount in self._consumed(request, device).items():
            policy = device.device.request_policies.get(name)
            if policy is not None and self._violates(request, amount, policy):
                return False
            held = sum((self._quantity(request, f"device {device.label}: consumed capacity {name}", share[name])
                        for share in self.shares.get(device.id, ()) if name in share), Decimal(0))
            capacity = self._quantity(request, f"device {device.label}: capacity {name}",
                                      device.device.capacity[name])
            if held + amount + allocating.get(name, Decimal(0)) > capacity:
                return False
        return True

    def _quantity(self, request: _Request, what: str, text: str) -> Decimal:
        """A slice's quantity; one the API server would not have stored aborts the allocation like a bad selector."""
        try:
            return parse_quantity(text)
        except QuantityError as error:
            raise self._error(request, f"claim {self.claims[request.claim].name}, request {request.label}: {what}: "
                                       f"{error}") from None

    def _take_counters(self, request: _Request, device: _Device) -> bool:
        """Take the device's counters if every counter of its counter sets stays within what is left after the
        devices already allocated (upstream checkAvailableCounters): before 1.35 the counter sets of the device's own
        slice, from 1.35 those of its pool, used by allocated devices on any node."""
        key = device.slice.name if self.features.minor < 35 else device.pool.name
        if key not in self.available:
            self.available[key] = self._counters_left(request, device)
        consumed = self.consumed.setdefault(key, {})
        for use in device.device.consumes_counters:
            counter_set = consumed.setdefault(use.counter_set, {})
            for counter, value in use.counters.items():
                counter_set[counter] = (counter_set.get(counter, Decimal(0))
                                        + self._quantity(request, f"device {device.label}: counter "
                                                                  f"{use.counter_set}/{counter}", value))
        for name, counters in self.available[key].items():
            for counter, left_value in counters.items():
                if left_value < consumed.get(name, {}).get(counter, Decimal(0)):
                    self._give_back_counters(request, device)
                    return False
        return True

    def _counters_left(self, request: _Request, device: _Device) -> dict[str, dict[str, Decimal]]:
        """The counters the devices other claims hold leave: of the device's slice before 1.35; of its pool from
        1.35, counting every slice of the pool, and from 1.36 the devices held through shares too
        (`IsDeviceAllocated`, kubernetes/dynamic-resource-allocation@v0.36.2 structured/internal/allocatedstate.go)."""
        if self.features.minor < 35:
            where, counter_sets, slices = f"slice {device.slice.name}", device.slice.shared_counters, [device.slice]
        else:
            pool = device.pool
            where, counter_sets, slices = f"pool {pool.id}", pool.counter_sets or {}, [*pool.slices, *pool.elsewhere]
        left = {name: {counter: self._quantity(request, f"{where}: counter {name}/{counter}", value)
                       for counter, value in counters.items()}
                for name, counters in counter_sets.items()}
        for slice_ in slices:
            for other in slice_.devices:
                held = (slice_.driver, slice_.pool.name, other.name)
                if held not in self.busy and not (self.features.minor >= 36 and held in self.shares):
                    continue
                for use in other.consumes_counters:
                    counter_set = left.get(use.counter_set, {})
                    for counter, value in use.counters.items():
                        if counter in counter_set:
                            counter_set[counter] -= self._quantity(
                                request, f"device {'/'.join(held)}: counter {use.counter_set}/{counter}", value)
        return left

    def _capacity_in_use(self, device: _DeviceId) -> bool:
        """Shares of the device are held by other claims or being allocated (upstream deviceCapacityInUse)."""
        return bool(self.shares.get(device)) or self.shares_allocating.get(device, 0) > 0

    def _give_back_counters(self, request: _Request, device: _Device) -> None:
        consumed = self.consumed[device.slice.name if self.features.minor < 35 else device.pool.name]
        for use in device.device.consumes_counters:
            for counter, value in use.counters.items():
                consumed[use.counter_set][counter] -= self._quantity(
                    request, f"device {device.label}: counter {use.counter_set}/{counter}", value)

    # ------------------------------------------------------------------------------------------- the result

    def _result(self, index: int, claim: ResourceClaim) -> ClaimAllocation:
        picked = self.results[index]
        try:
            selector = node_selector_for(((p.device.slice, p.device.device) for p in picked), self.node.name)
        except UnsupportedNodeSelector as error:
            raise AllocationError(claim.name, f"create NodeSelector for claim {claim.name}: {error}") from None
        # 1.35 joined the two gates into one switch (DeviceBindingAndStatus); 1.34 copied with the first alone.
        binding = self.features.device_binding and (self.features.minor < 35 or self.features.device_status)
        tolerations = self.features.minor >= 35
        return ClaimAllocation(claim.name, tuple(
            DeviceResult(p.request.label, *p.device.id, p.request.choice.admin_access, p.shared, p.consumed,
                         p.device.device.binding_conditions if binding else (),
                         p.device.device.binding_failure_conditions if binding else (),
                         p.request.choice.tolerations if tolerations else ())
            for p in picked), selector)


# Effects that keep a device from a request not tolerating them. 1.35 added `None` (informational) and has the allocator
# ignore it and any effect it does not know (`taintPreventsAllocation` in kubernetes/dynamic-resource-allocation@v0.35.0
# structured/internal/experimental/allocator_experimental.go; "Unknown effects and the None effect must be ignored",
# resourceclaim/devicetoleration.go). 1.34's allTaintsTolerated checked every taint, but its API server stored only
# these two (`validDeviceTaintEffects` in kubernetes/kubernetes pkg/apis/resource/validation/validation.go, 1.34-era;
# kubernetes/api@v0.34.0:resource/v1/types.go), so both read every stored slice alike.
PREVENTING_EFFECTS = ("NoSchedule", "NoExecute")


def untolerated(taints: Iterable[DeviceTaint], tolerations: Sequence[DeviceToleration]) -> list[DeviceTaint]:
    """The taints that keep a device from a request: an effect that prevents allocation, and no toleration of it."""
    return [taint for taint in taints if taint.effect in PREVENTING_EFFECTS
            and not any(tolerates(toleration, taint) for toleration in tolerations)]


def tolerates(toleration: DeviceToleration, taint: DeviceTaint) -> bool:
    """Upstream resourceclaim.ToleratesTaint: an empty effect or key matches any; an empty operator is Equal."""
    if toleration.effect and toleration.effect != taint.effect:
        return False
    if toleration.key and toleration.key != taint.key:
        return False
    if toleration.operator in ("", "Equal"):
        return toleration.value == taint.value
    return toleration.operator == "Exists"


# --------------------------------------------------------------------------------------------- constraints


def _attribute(device: _Device, qualified: str) -> tuple[str, Any] | None:
    """(type, value) of an attribute by fully qualified name; the bare name too in the driver's own domain."""
    domain, _, name = qualified.partition("/")
    attributes = device.device.attributes
    found = attributes.get(qualified)
    if found is None and name and domain == device.pool.driver:
        found = attributes.get(name)
    if found is None:
        return None
    ((kind, value),) = found.items()
    return kind, tuple(value) if isinstance(value, list) else value


class _Scoped:
    """A constraint's scope: all requests, or the named ones ("req" covers its subrequests, "req/sub" one)."""

    def __init__(self, requests: Sequence[str], attribute: str):
        self.requests = set(requests)
        self.attribute = attribute
        self.count = 0

    def applies(self, request: str, subrequest: str) -> bool:
        return (not self.requests or request in self.requests
                or bool(subrequest and f"{request}/{subrequest}" in self.requests))


class _MatchAttribute(_Scoped):
    """Every device in scope has the attribute with one type and value; the first device sets it."""

    value: tuple[str, Any] | None = None

    def add(self, request: str, subrequest: str, device: _Device) -> bool:
        if not self.applies(request, subrequest):
            return True
        found = _attribute(device, self.attribute)
        if found is None:
            return False
        if self.count == 0:
            self.value = found
        elif found[0] not in KNOWN_KINDS or found != self.value:
            return False
        self.count += 1
        return True

    def remove(self, request: str, subrequest: str) -> None:
        if self.applies(request, subrequest):
            self.count -= 1


class _DistinctAttribute(_Scoped):
    """Devices in scope carry different values. As upstream, one value is remembered per request name, so the
    devices of one request are compared only with the last one added; values are compared, as from 1.35
    (kubernetes/dynamic-resource-allocation e5c5ce5; 1.34 compared pointers, which only caught a device shared
    with itself)."""

    def __init__(self, requests: Sequence[str], attribute: str):
        super().__init__(requests, attribute)
        self.values: dict[str, tuple[str, Any]] = {}

    def add(self, request: str, subrequest: str, device: _Device) -> bool:
        if not self.applies(request, subrequest):
            return True
        found = _attribute(device, self.attribute)
        if found is None:
            return False
        if self.count and any(found[0] not in KNOWN_KINDS or found == value for value in self.values.values()):
            return False
        self.values[request] = found
        self.count += 1
        return True

    def remove(self, request: str, subrequest: str) -> None:
        if self.applies(request, subrequest):
            self.values.pop(request, None)
            self.count -= 1

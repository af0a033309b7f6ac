"""Which devices and nodes satisfy each claim, and why not: what the scheduler decides but does not say.

Per request (and subrequest): the devices passing the class's and the request's selectors, the others grouped by
reason naming the selector and, where it can be told, the failing term. A CEL runtime error on any device aborts the
claim, as in the allocator. Then the verdict per node is the faithful core's (`allocate_claims` in
gpu_dra.core.analysis.allocator: pools and generations, node selection, counters, taints, devices other claims hold,
several claims together), tried on the nodes where every request has enough matching, free devices, in name order.
Before that, `with_taint_rules` adds the DeviceTaintRules' taints to the devices they select, where the scheduler's
ResourceSlice tracker would. Binding conditions of the devices allocated are reported, not simulated.
Each distinct (selector, device shape) is evaluated once, and each distinct node (as the allocator sees it: its
slices, pools, which devices match, are held, and how their constrained attributes compare) allocated once, so large
uniform fleets stay fast. An unallocatable claim's reason names the devices in use and the claims holding them.
Each node's search stops at the scheduler's filter timeout, and all of them when the command's search budget is spent
(FILTER_TIMEOUT, SEARCH_BUDGET): a node whose search was stopped is not decided, and says so in the scheduler's words.
"""

from __future__ import annotations

import re
import time
from collections import defaultdict
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from contextlib import suppress
from dataclasses import dataclass, field, fields, replace
from operator import attrgetter
from typing import Any

from gpu_dra.core.analysis.allocator import (
    KNOWN_KINDS,
    AllocationError,
    AllocationTimeout,
    ClaimAllocation,
    DeviceResult,
    Features,
    allocate_claims,
    untolerated,
)
from gpu_dra.core.analysis.inventory import Device, Inventory, devices_of
from gpu_dra.core.analysis.pools import Node, gather_pools, node_matches
from gpu_dra.core.dra.cel import CompileError, compile_selector, device_view, evaluate
from gpu_dra.core.dra.cel.compile import CompiledSelector
from gpu_dra.core.dra.cel.lexer import device_lookups, tokenize
from gpu_dra.core.dra.objects import (
    AllocatedDevice,
    Constraint,
    DeviceChoice,
    DeviceTaintRule,
    NodeSelection,
    Pool,
    ResourceClaim,
    ResourceSlice,
    SliceDevice,
    parse_claim,
    parse_device_class,
)
from gpu_dra.core.facts import gates, nvidia
from gpu_dra.core.findings import ERROR, Finding

EXAMPLES = 5  # devices shown per reason in JSON reports unless every device is asked for
# Rules of the errors that stop a claim before allocation is tried.
CEL_COMPILE, CEL_RUNTIME = "cel-compile", "cel-runtime-error"
INVALID_CLAIM, MISSING_CLASS = "invalid-claim", "device-class-missing"
# Rule of what allocate_claims refuses on a node (an invalid pool, All on a pool being updated, too many devices),
# which fails the pod on every node.
ALLOCATION_ERROR = "allocation-error"
# The scheduler stops each Filter call's search (one pod on one node) at DynamicResourcesArgs.filterTimeout, 10 s by
# default (DynamicResourcesFilterTimeoutDefault, kubernetes/kubernetes pkg/scheduler/apis/config/types_pluginargs.go),
# with DRASchedulerFilterTimeout on (beta, on by default from 1.34), and Filter reports the node unschedulable for this
# attempt with these words (`Filter` in kubernetes/kubernetes
# pkg/scheduler/framework/plugins/dynamicresources/dynamicresources.go, 1.34). gpu-dra stops its searches there too,
# the gate on or not.
FILTER_TIMEOUT = 10.0
FILTER_TIMED_OUT = "timed out trying to allocate devices"
# gpu-dra's bound on the time all searches of one Explainer take together (one command): the scheduler runs the
# Filter calls of a pod on 16 nodes at once, gpu-dra one after the other, so a per-node bound alone would let many
# nodes or claims that each take their 10 s add up without end. A search that starts with less left gets only that.
SEARCH_BUDGET = 30.0


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


class TaintRuleError(ValueError):
    """A DeviceTaintRule explain cannot apply as the scheduler would: the message names its file, the rule and the
    field."""


@dataclass
class TaintedInventory:
    """An inventory as the scheduler's allocator sees it once DeviceTaintRules are applied, and what each did."""

    inventory: Inventory  # applied: the devices carry the rules' taints, and it holds no rules to apply twice
    applied: bool  # whether the features apply DeviceTaintRules at all
    rules: list[tuple[DeviceTaintRule, list[Device]]]  # each rule read, with the devices it taints
    notes: list[str] = field(default_factory=list)  # devices a rule's selector errors on, which stay untainted

    def as_dict(self) -> dict[str, Any]:
        return {"applied": self.applied, "notes": self.notes, "rules": [
            {"name": rule.name, "source": rule.source, "taint": rule.taint.label,
             "devices": [{"node": d.node, "driver": d.driver, "pool": d.pool, "device": d.name} for d in tainted]}
            for rule, tainted in self.rules]}


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

    def as_dict(self, examples: int | None = EXAMPLES) -> dict[str, Any]:
        """The report as JSON data: per request the matching devices and each rejection reason with its count and
        the first `examples` devices (None: every device; a 1,000-node fleet has 800,000 such entries)."""
        def devices(items: list[Device]) -> dict[str, Any]:
            shown = items if examples is None else items[:examples]
            return {"count": len(items), "devices": [{"node": d.node, "driver": d.driver, "pool": d.pool,
                                                      "device": d.name} for d in shown]}

        return {
            "claim": self.claim, "allocatable": self.allocatable, "nodes": self.nodes, "timed_out": self.timed_out,
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
        }


class Explainer:
    """Caches compiled selectors and per-shape results across claims."""

    def __init__(self, classes: Mapping[str, list[str]], consumable_capacity: bool = True,
                 features: Features | None = None, clock: Callable[[], float] = time.monotonic,
                 filter_timeout: float = FILTER_TIMEOUT, search_budget: float = SEARCH_BUDGET):
        """`consumable_capacity` defaults on: the scheduler compiles stored selectors with every field declared
        (StoredExpressions, kubernetes/dynamic-resource-allocation@v0.34.0:cel/cache.go;
        docs/sources.md#cel-environment); the API server decides what may be stored. `features`: the allocator's
        switches (default: a Kubernetes 1.34 EKS scheduler's, `features_for()`). Each search is stopped after
        `filter_timeout`, or when all of them have taken `search_budget`, on `clock`."""
        self.classes = {**nvidia.CHART_CLASS_SELECTORS, **classes}
        self.consumable_capacity = consumable_capacity
        self.features = features if features is not None else features_for()
        self.clock, self.filter_timeout, self.search_budget = clock, filter_timeout, search_budget
        self.searched = 0.0  # time all searches took so far
        self._compiled: dict[str, CompiledSelector | CompileError] = {}
        self._search_compiled: dict[str, CompiledSelector | CompileError] = {}  # the allocator's, with `features`
        self._results: dict[tuple[str, Any], tuple[bool, Finding | None]] = {}
        self._specs: dict[tuple[str, ...], tuple[tuple[str, str, str | None], ...] | None] = {}
        self._fleets: dict[tuple[int, tuple[int, ...]], _Fleet] = {}
        self._last_fleet: tuple[Inventory, Sequence[Node] | None, _Fleet] | None = None
        # (inventory, class, selectors, devices in use) -> per request what match found, shared by the reports
        self._matches: dict[tuple[Any, ...], tuple[Any, ...]] = {}
        # (fleet, requests, devices in use, nodes tried, constraints) -> why a claim is not allocatable
        self._reasons: dict[tuple[Any, ...], tuple[_Fleet, _Busy, str]] = {}
        self._busies: dict[int, tuple[Mapping[Any, str], frozenset[str], dict[frozenset[str], _Busy]]] = {}
        self._grouping: dict[int, tuple[Inventory, dict[Any, list[list[Device]]]]] = {}

    # ------------------------------------------------------------------------------------------- evaluation

    def _compile(self, expression: str) -> CompiledSelector | CompileError:
        if expression not in self._compiled:
            try:
                # Stored selectors are evaluated whatever their estimated cost (the API server checks it on write).
                self._compiled[expression] = compile_selector(expression, self.consumable_capacity, check_cost=False)
            except CompileError as error:
                self._compiled[expression] = error
        return self._compiled[expression]

    def _evaluate(self, expression: str, device: Device) -> tuple[bool, Finding | None]:
        """(matches, the error that aborts allocation) for one selector on one device, once per distinct view."""
        key = (expression, self._device_key(device, self._spec([expression])))
        if key not in self._results:
            compiled = self._compile(expression)
            if isinstance(compiled, CompileError):
                self._results[key] = (False, Finding(CEL_COMPILE, ERROR, f"CEL compile error: {compiled.message}"))
            else:
                view = device_view(device.driver, device.attributes, device.capacity, device.allow_multiple_allocations)
                result = evaluate(compiled, view)
                error = Finding(CEL_RUNTIME, ERROR, f"CEL runtime error: {result.error}") if result.error else None
                self._results[key] = (result.matches, error)
        return self._results[key]

    def _spec(self, expressions: Iterable[str]) -> tuple[tuple[str, str, str | None], ...] | None:
        """The parts of a device these expressions can read, or None when they may read anything."""
        key = tuple(expressions)
        if key not in self._specs:
            self._specs[key] = _reads(key)
        return self._specs[key]

    def _device_key(self, device: Device, spec: tuple[tuple[str, str, str | None], ...] | None) -> Any:
        if spec is None:
            return device.shape
        # A device whose attributes do not convert (a bad version) errors whatever the selector reads.
        return (device.driver, device.allow_multiple_allocations, device.unreadable,
                tuple(_project(device, field) for field in spec))

    def _fleet(self, inventory: Inventory, nodes: Sequence[Node] | None = None) -> _Fleet:
        """The indexes of this inventory on these Nodes, built once: callers pass the same Node objects in lists
        made anew (a pod's usable nodes, a hint's), so the key is the nodes' identities, not the list's."""
        last = self._last_fleet  # the same list again (a pod's claims one after another): no key to build
        if last is not None and last[0] is inventory and last[1] is nodes:
            return last[2]
        key = (id(inventory), tuple(map(id, nodes)) if nodes else ())
        fleet = self._fleets.get(key)
        if fleet is None:  # the fleet holds its inventory and nodes, so ids filed here are never reused
            fleet = self._fleets[key] = _Fleet(inventory, nodes, self._grouping_of(inventory))
        self._last_fleet = (inventory, nodes, fleet)
        return fleet

    def _grouping_of(self, inventory: Inventory) -> dict[Any, list[list[Device]]]:
        """Device groups per selector view, per inventory (held with it, so its id is not reused)."""
        held = self._grouping.get(id(inventory))
        if held is None:
            held = self._grouping[id(inventory)] = (inventory, {})
        return held[1]

    def _groups(self, expressions: list[str], inventory: Inventory) -> list[list[Device]]:
        """The inventory's devices grouped by what these expressions can see: one evaluation per group."""
        spec = self._spec(expressions)
        grouping = self._grouping_of(inventory)
        if spec not in grouping:
            groups: dict[Any, list[Device]] = {}
            for device in inventory.devices:
                groups.setdefault(self._device_key(device, spec), []).append(device)
            grouping[spec] = list(groups.values())
        return grouping[spec]

    def _failing_term(self, expression: str, device: Device) -> str | None:
        """Describe the first top-level `&&` term that is false on the device, in the user's words."""
        for term in _top_level_terms(expression):
            matches, error = self._evaluate(term, device)
            if error is None and not matches:
                return _describe(term, device)
        return None

    def _judge(self, device: Device, class_name: str, selectors: list[str],
               claim: str) -> tuple[bool, str | None, Finding | None]:
        """(passes, rejection reason, fatal error) for class then request selectors, as the allocator orders them."""
        stages = [(f"class {class_name}", self.classes[class_name]), (f"claim {claim}", selectors)]
        for owner, expressions in stages:
            for index, expression in enumerate(expressions):
                matches, error = self._evaluate(expression, device)
                if error is not None:
                    return False, None, error.at(message=f"{owner}: selector #{index}: {error.message}",
                                                 object=claim, path=f"{owner} selector #{index}")
                if not matches:
                    term = self._failing_term(expression, device)
                    prefix = f"class {class_name}: " if owner.startswith("class") else ""
                    return False, f"{prefix}selector #{index}: {term or 'false'}", None
        return True, None, None

    # ------------------------------------------------------------------------------------------- device taint rules

    def with_taint_rules(self, inventory: Inventory) -> TaintedInventory:
        """The inventory as the scheduler's ResourceSlice tracker hands it to the allocator: with the features that
        apply DeviceTaintRules, each rule's taint added to the devices it selects (`applyPatches` in
        kubernetes/dynamic-resource-allocation@v0.34.9 and @v0.35.0 resourceslice/tracker/tracker.go: driver, pool
        and device name; before 1.35 also the class's and the rule's CEL selectors, a device on which one errors
        left untainted); otherwise as it is. Raises TaintRuleError for a rule it cannot apply as the scheduler
        would."""
        applied = self.features.device_taint_rules
        tainted: dict[int, list[Device]] = {id(rule): [] for rule in inventory.taint_rules}
        result = TaintedInventory(inventory, applied, [(rule, tainted[id(rule)]) for rule in inventory.taint_rules])
        if not applied or not inventory.taint_rules:
            return result
        for rule in inventory.taint_rules:
            self._check_taint_rule(rule)
        slices: dict[int, ResourceSlice] = {}  # id of a slice a rule taints -> the slice with the taints
        devices: dict[int, Device] = {}  # id of one of its devices -> the device of the tainted slice
        for slice_, members in inventory.slice_members():
            views = list(devices_of(slice_, slice_.source))
            added = [[rule for rule in inventory.taint_rules if self._taint_rule_selects(rule, slice_, view,
                                                                                          result.notes)]
                     for view in views]
            if not any(added):
                continue
            patched = slices[id(slice_)] = replace(slice_, devices=tuple(
                replace(typed, taints=(*typed.taints, *(rule.taint for rule in rules)))
                for typed, rules in zip(slice_.devices, added, strict=True)))
            fresh = list(devices_of(patched, slice_.source))
            devices.update((id(old), new) for old, new in zip(members, fresh, strict=False))
            for device, rules in zip(fresh, added, strict=True):
                for rule in rules:
                    tainted[id(rule)].append(device)
        result.inventory = Inventory([devices.get(id(d), d) for d in inventory.devices], list(inventory.notes),
                                     [slices.get(id(s), s) for s in inventory.slices])
        return result

    def _check_taint_rule(self, rule: DeviceTaintRule) -> None:
        """What the tracker would do with the rule's class and CEL selectors must be known: they select only before
        1.35, the class must be in the inputs, and each selector must compile."""
        where = f"{rule.source}: DeviceTaintRule {rule.name}: spec.deviceSelector"
        written = [key for key, present in (("deviceClassName", rule.device_class is not None),
                                            ("selectors", bool(rule.selectors))) if present]
        if written and not self.features.taint_rule_selectors:
            raise TaintRuleError(f"{where}.{written[0]}: only Kubernetes 1.33-1.34 (resource.k8s.io/v1alpha3) "
                                 "select devices so; 1.35 removed the field (the API server refuses or drops it, and "
                                 "the rule then taints every device its driver, pool and device match): select with "
                                 "those")
        if rule.device_class is not None and rule.device_class not in self.classes:
            raise TaintRuleError(f"{where}.deviceClassName: DeviceClass {rule.device_class} is not in the inputs "
                                 "(the scheduler applies no rule whose class does not exist): give the class")
        for index, expression in enumerate(rule.selectors):
            compiled = self._compile(expression)
            if isinstance(compiled, CompileError):
                raise TaintRuleError(f"{where}.selectors[{index}]: CEL compile error: {compiled.message}")

    def _taint_rule_selects(self, rule: DeviceTaintRule, slice_: ResourceSlice, device: Device,
                            notes: list[str]) -> bool:
        """Driver, pool and device name as written, then the class's and the rule's selectors: a runtime error on
        the device leaves it untainted, as the tracker does, and says so in `notes`."""
        if (rule.driver is not None and rule.driver != slice_.driver
                or rule.pool is not None and rule.pool != slice_.pool.name
                or rule.device is not None and rule.device != device.name):
            return False
        stages = [(f"class {rule.device_class}: ", self.classes[rule.device_class])] if rule.device_class else []
        for owner, expressions in [*stages, ("", list(rule.selectors))]:
            for index, expression in enumerate(expressions):
                matches, error = self._evaluate(expression, device)
                if error is not None:
                    notes.append(f"{rule.source}: DeviceTaintRule {rule.name}: {owner}selector #{index} on device "
                                 f"{device.driver}/{device.pool}/{device.name}: {error.message}; the scheduler "
                                 "leaves that device untainted")
                    return False
                if not matches:
                    return False
        return True

    # ------------------------------------------------------------------------------------------- claims

    def explain(self, claim: ResourceClaim, inventory: Inventory, in_use: Mapping[Any, str] | None = None,
                nodes: Sequence[Node] | None = None, only: Collection[str] | None = None) -> ClaimReport:
        """The claim's match report, then the scheduler's verdict per node (allocate_claims). `in_use` maps
        (driver, pool, device) -> the claim holding it; `nodes` are the cluster's Nodes with their labels (without
        them, the nodes the slices name, unlabelled); `only` limits the nodes tried (a pod's)."""
        report, matched = self.match(claim, inventory, in_use)
        if matched is None:
            return report
        fleet = self._fleet(inventory, nodes)
        busy = self._busy(in_use, {claim.name})
        verdict = self._verdict([matched], fleet, busy, only)
        if not verdict.give(report):
            return report
        if verdict.first is not None:
            node, (allocation,) = verdict.first
            report.allocation = allocation
            report.solution = (node, fleet.allocations(node, allocation))
            return report
        if verdict.timed_out:
            return report
        report.reason = self._unallocatable_reason(matched, fleet, busy, only)
        if claim.constraints and all(r.matching for r in report.requests):
            loose = _Matched(replace(matched.claim, constraints=()), report, matched.choices, ())
            unconstrained = self._verdict([loose], fleet, busy, only)
            if unconstrained.nodes:
                report.reason = _constraint_reason(list(claim.constraints), report.requests, unconstrained.nodes[0])
        return report

    def match(self, claim: ResourceClaim, inventory: Inventory,
              in_use: Mapping[Any, str] | None = None) -> tuple[ClaimReport, _Matched | None]:
        """Per request the matching devices and the others by reason; None beside the report when an error
        stops the claim before allocation is tried."""
        report = ClaimReport(claim.name)
        if claim.problem:
            report.errors.append(Finding(INVALID_CLAIM, ERROR, claim.problem, object=claim.name))
            report.reason = claim.problem
            return report, None
        claim = _as_stored(claim, self.features)  # what the scheduler reads, from the match on
        held = self._busy(in_use, {claim.name})  # its own devices are not busy
        choices_by_request: list[list[tuple[DeviceChoice, Any]]] = []
        for request in claim.requests:
            choices = []
            for spec in request.choices:
                label = f"{request.name}/{spec.subrequest}" if spec.subrequest else request.name
                request_report = RequestReport(label)
                report.requests.append(request_report)
                class_name = spec.device_class
                if class_name not in self.classes:
                    report.errors.append(Finding(MISSING_CLASS, ERROR, f"request {label}: device class {class_name} "
                                                                       "does not exist", object=claim.name))
                    continue
                selectors = list(spec.selectors)
                expressions = [*self.classes[class_name], *selectors]
                # The same class and selectors against the same devices in use: the lists another claim got
                # (a cluster's Pending pods mostly use a few templates; each list holds every matching device).
                cache = (id(inventory), class_name, spec.selectors, id(held))
                cached = self._matches.get(cache)
                if cached is not None and cached[0] is inventory and cached[1] is held:
                    _, _, request_report.matching, request_report.rejected, request_report.in_use, known = cached
                    choices.append((spec, (self._spec(expressions), known)))
                    continue
                passing = []
                fatal_here = False
                for index, group in enumerate(self._groups(expressions, inventory)):
                    passes, reason, fatal = self._judge(group[0], class_name, selectors, claim.name)
                    if fatal:
                        fatal_here = True
                        if fatal not in report.errors:
                            report.errors.append(fatal)
                        request_report.rejected.setdefault(f"aborts the claim: {fatal.message}", []).extend(group)
                    elif passes:
                        request_report.matching.extend(group)
                        passing.append(index)
                    else:
                        request_report.rejected.setdefault(reason or "no match", []).extend(group)
                if held:
                    request_report.in_use = [(d, held[key]) for d in request_report.matching
                                             if (key := (d.driver, d.pool, d.name)) in held]
                if not fatal_here:  # an error names its claim: kept for this claim only
                    self._matches[cache] = (inventory, held, request_report.matching, request_report.rejected,
                                            request_report.in_use, tuple(passing))
                choices.append((spec, (self._spec(expressions), tuple(passing))))
            choices_by_request.append(choices)
        if report.errors:
            first = report.errors[0]
            report.reason = first.message + (" (a CEL runtime error on any device aborts the whole claim)"
                                             if first.rule == CEL_RUNTIME else "")
            return report, None
        attributes = tuple(c.match_attribute or c.distinct_attribute or "" for c in claim.constraints)
        return report, _Matched(claim, report, choices_by_request, attributes)

    # ------------------------------------------------------------------------------------------- verdicts

    def together(self, claims: Sequence[ResourceClaim], inventory: Inventory, in_use: Mapping[Any, str] | None,
                 nodes: Sequence[Node] | None = None, only: Collection[str] | None = None) -> Verdict:
        """Claims of one pod allocated together (their match reports must be free of errors): the nodes they fit
        on together, the first such node with the allocations, or the error that fails them."""
        matched = []
        for claim in claims:
            _, one = self.match(claim, inventory, in_use)
            if one is None:
                raise ValueError(f"claim {claim.name} has errors: explain it first")
            matched.append(one)
        busy = self._busy(in_use, {claim.name for claim in claims})
        return self._verdict(matched, self._fleet(inventory, nodes), busy, only)

    def reachable(self, inventory: Inventory, nodes: Sequence[Node] | None = None) -> dict[str, frozenset[Any]]:
        """node -> the (driver, pool, device) it reaches."""
        return self._fleet(inventory, nodes).reach

    def _busy(self, in_use: Mapping[Any, str] | None, own: Collection[str]) -> _Busy:
        """The devices other claims hold, built once per `in_use` and claims: a cluster's every node holds some,
        and every claim of every Pending pod is judged against them."""
        if not in_use:
            return _NOTHING_BUSY
        held = self._busies.get(id(in_use))
        if held is None or held[0] is not in_use:  # held with its in_use, so the id is not reused
            held = self._busies[id(in_use)] = (in_use, frozenset(in_use.values()), {})
        mine = frozenset(own) & held[1]  # most claims judged hold nothing yet: all share one
        busy = held[2].get(mine)
        if busy is None:
            busy = held[2][mine] = _Busy({device: owner for device, owner in in_use.items() if owner not in mine})
        return busy

    def _verdict(self, matched: Sequence[_Matched], fleet: _Fleet, busy: _Busy,
                 only: Collection[str] | None = None) -> Verdict:
        """allocate_claims for these claims together on every node they may fit (in name order), each distinct
        node (as the allocator sees it) once. An error on any node fails them, as a Filter error fails the pod; a
        node whose search is stopped is not decided, and the others still are."""
        claims = [m.claim for m in matched]  # as stored (match)
        allocated, frozen = busy.allocated, busy.frozen
        looks, tried = fleet.looks(matched, frozen)
        shapes = tuple(_claim_shape(claim, m) for claim, m in zip(claims, matched, strict=True))
        verdict = Verdict()

        def allocate(node: Node) -> list[ClaimAllocation] | None:
            return self._search(claims, fleet.slices_of[node.name], node, allocated)

        alike = tried  # nodes alike to the allocator, in name order
        if only is not None:
            alike = {}
            for node in fleet.nodes:
                if node.name in only and ((looked := looks[node.name])[0] or fleet.risky[node.name]):
                    alike.setdefault(looked[1], []).append(node)
        fitting: list[tuple[Any, list[Node]]] = []
        try:
            for kind, nodes in alike.items():  # every kind is tried: an error on any node fails the claims
                key = (kind, shapes, frozen)
                fits = fleet.outcomes.get(key)
                if fits is None:
                    try:
                        result = allocate(nodes[0])
                    except SearchStopped as stopped:
                        fits = stopped
                    else:
                        fits = result is not None
                        if result is not None:
                            fleet.results[(nodes[0].name, key)] = result
                    fleet.outcomes[key] = fits
                if isinstance(fits, SearchStopped):
                    verdict.stopped(fits, [n.name for n in nodes])
                elif fits:
                    fitting.append((key, nodes))
            for key, nodes in sorted(fitting, key=lambda item: item[1][0].name):
                result = fleet.results.get((nodes[0].name, key))
                if result is None:  # the kind's verdict was found on a node the caller now leaves out
                    try:
                        result = fleet.results[(nodes[0].name, key)] = allocate(nodes[0]) or []
                    except SearchStopped as stopped:
                        verdict.stopped(stopped, [n.name for n in nodes])
                        fitting.remove((key, nodes))
                        continue
                verdict.first = (nodes[0].name, [replace(r, claim=claim.name)
                                                 for r, claim in zip(result, claims, strict=True)])
                break
            if fitting:
                verdict.nodes = list(fleet.names([group for _, group in fitting], cached=alike is tried))
            if not alike and fleet.nodes:  # checks made before any search (limits, pools for All) still apply
                passed = ("checks", looks[fleet.nodes[0].name][1], shapes, frozen)
                if passed not in fleet.outcomes:  # an error names its claim: only a pass is kept for claims alike
                    with suppress(SearchStopped):  # they passed, and no node is a candidate: the search decides nothing
                        allocate(fleet.nodes[0])
                    fleet.outcomes[passed] = True
        except AllocationError as error:
            verdict.error = Finding(ALLOCATION_ERROR, ERROR, str(error), object=error.claim)
        if verdict.error is not None:
            verdict.nodes, verdict.first, verdict.timed_out = [], None, []
        return verdict

    def _search(self, claims: Sequence[ResourceClaim], slices: Sequence[ResourceSlice], node: Node,
                allocated: Sequence[AllocatedDevice]) -> list[ClaimAllocation] | None:
        """allocate_claims as one Filter call: its search stopped at the filter timeout, or sooner when what is
        left of the search budget runs out (SearchStopped)."""
        start = self.clock()
        allowed = min(self.filter_timeout, max(self.search_budget - self.searched, 0.0))
        try:
            return allocate_claims(claims, slices, node, self.classes, allocated, self.features, start + allowed,
                                   self.clock, self._search_compiled)
        except AllocationTimeout:
            raise SearchStopped(self._stopped_words(allowed)) from None
        finally:
            self.searched += self.clock() - start

    def _stopped_words(self, allowed: float) -> str:
        """Why a search was stopped, in the scheduler's words where its filter timeout is what stopped it."""
        took = _seconds(allowed)
        if allowed < self.filter_timeout:
            return (f"gpu-dra stopped the search for devices after {took} s, when its {_seconds(self.search_budget)} "
                    f"s for all the searches of this command ran out (the scheduler gives each node "
                    f"{_seconds(self.filter_timeout)} s)")
        if not self.features.filter_timeout:
            return (f"gpu-dra stopped the search for devices after {took} s; with DRASchedulerFilterTimeout off, the "
                    "scheduler has no filter timeout and searches until it ends, holding up the scheduling of every "
                    "other pod meanwhile")
        return (f"the search for devices did not end within the scheduler's filter timeout ({took} s) and was stopped "
                f"there, as the scheduler stops its own: the scheduler then reports \"{FILTER_TIMED_OUT}\" for the "
                "node and counts it unschedulable for this attempt (gpu-dra searches more slowly, so the scheduler's "
                "search may still end in time)")

    def _unallocatable_reason(self, matched: _Matched, fleet: _Fleet, busy: _Busy,
                              only: Collection[str] | None) -> str:
        """In the scheduler's terms, naming the devices in use and the claims holding them."""
        for request in matched.report.requests:
            if not request.matching:
                top = max(request.rejected.items(), key=lambda item: len(item[1]), default=None)
                why = f"; most common: {top[0]} ({len(top[1])} devices)" if top else ""
                return f"request {request.name}: no device matches{why}"
        # It reads every node the claim may use: claims alike (the same requests, on the same nodes, against the
        # same devices in use) share it.
        labels = tuple(r.name for r in matched.report.requests)
        key = (id(fleet), id(busy), None if only is None else frozenset(only), labels,
               # as text: a choice may hold a dict (its capacity requests), and its paths in the file do not matter
               repr(tuple(tuple((replace(choice, path=(), selector_paths=()), devices) for choice, devices in choices)
                          for choices in matched.choices)), bool(matched.claim.constraints))
        cached = self._reasons.get(key)
        if cached is None or cached[0] is not fleet or cached[1] is not busy:
            cached = self._reasons[key] = (fleet, busy, self._node_reason(matched, fleet, busy, only))
        return cached[2]

    def _node_reason(self, matched: _Matched, fleet: _Fleet, busy: _Busy, only: Collection[str] | None) -> str:
        nodes = [n for n in fleet.nodes if only is None or n.name in only]
        if not nodes:
            return "no node the pod may use reaches the devices"
        offset = 0
        for choices in matched.choices:
            labels = [r.name for r in matched.report.requests[offset:offset + len(choices)]]
            offset += len(choices)
            best: tuple[Any, ...] | None = None
            fits = False
            for (spec, key), label in zip(choices, labels, strict=True):
                passing = fleet.passing(key)
                for node in nodes:
                    matching = [d for d in fleet.devices[node.name] if id(d) in passing]
                    blocked = [(d, cause) for d in matching
                               if (cause := self._unavailable(d, spec, fleet, busy)) is not None]
                    wanted = len(matching) if spec.allocation_mode == "All" else spec.count
                    if matching and len(matching) - len(blocked) >= wanted:
                        fits = True
                        break
                    score = (len(matching) - len(blocked) - wanted, len(matching), -len(blocked))
                    if best is None or score > best[0]:
                        best = (score, label, spec, node.name, matching, blocked, wanted)
                if fits:
                    break
            if fits or best is None:
                continue
            _, label, spec, node_name, matching, blocked, wanted = best
            if not matching:
                return f"request {label}: none of its matching devices is reachable from the nodes tried"
            held = _listing(blocked)
            if spec.allocation_mode == "All":
                return (f"request {label} asks for all {wanted} matching device(s) on {node_name}, but "
                        f"{len(blocked)} cannot be allocated: {held}")
            if not blocked:
                return (f"request {label} needs {wanted} device(s), but at most {len(matching)} match on one "
                        f"node ({node_name})")
            return (f"request {label} needs {wanted} device(s); on {node_name} {len(matching) - len(blocked)} of "
                    f"its {len(matching)} matching device(s) are free: {held}")
        blocked_anywhere = [(d, cause) for node in nodes[:1] for d in fleet.devices[node.name]
                            if id(d) in fleet.passing_any([k for cs in matched.choices for _, k in cs])
                            and (cause := self._unavailable(d, None, fleet, busy)) is not None]
        more = f"; on {nodes[0].name}: {_listing(blocked_anywhere)}" if blocked_anywhere else ""
        if fleet.uses_counters:
            more += "; devices share counters, which one allocation can exhaust for its siblings"
        return ("cannot allocate all claims: no single node has enough matching, free devices for all requests "
                f"together{' within the constraints' if matched.claim.constraints else ''}{more}")

    def _unavailable(self, device: Device, spec: DeviceChoice | None, fleet: _Fleet,
                     busy: Mapping[Any, str]) -> str | None:
        """Why the allocator cannot take a matching device whatever else it picks, or None."""
        holder = busy.get((device.driver, device.pool, device.name))
        if holder and not (spec is not None and spec.admin_access):
            return f"allocated to {holder}"
        typed = fleet.typed.get(id(device))
        if typed is None:
            return None
        if typed.binding_conditions and not (self.features.device_binding and self.features.device_status):
            off = " and ".join(gate for gate, on in (("DRADeviceBindingConditions", self.features.device_binding),
                                                     ("DRAResourceClaimDeviceStatus", self.features.device_status))
                               if not on)
            return f"has binding conditions ({' '.join(typed.binding_conditions)}), which {off} (off) must allow"
        if typed.consumes_counters and not self.features.partitionable_devices:
            return "consumes shared counters, which DRAPartitionableDevices (off) must allow"
        if self.features.device_taints:
            taints = untolerated(typed.taints, spec.tolerations if spec is not None else ())
            if taints:
                slice_name = device.slice.name if device.slice is not None else "of the device"
                shown = " and ".join(f"{t.label} from " + (f"DeviceTaintRule {t.rule}" if t.rule
                                                            else f"ResourceSlice {slice_name}") for t in taints)
                return f"taint{'s' if len(taints) > 1 else ''} {shown}, not tolerated"
        return None


# Request fields behind a gate, and their value once the API server drops them (k8s resource strategy
# dropDisabledFields: a field whose gate is off is not stored on create).
_GATED_FIELDS = (("consumable_capacity", "capacity_requests", None), ("admin_access", "written_admin_access", None),
                 ("device_taints", "tolerations", ()))


def _as_stored(claim: ResourceClaim, features: Features) -> ResourceClaim:
    """The claim as the API server stores it with these gates: fields of a gate that is off are dropped on write
    (lint and dra-feature-gates report them), so the scheduler never sees them."""
    dropped: dict[str, Any] = {name: value for gate, name, value in _GATED_FIELDS if not getattr(features, gate)}
    if not dropped:
        return claim
    requests = tuple(replace(request, choices=tuple(
        replace(choice, **{k: v for k, v in dropped.items() if getattr(choice, k) != v}) for choice in request.choices))
        for request in claim.requests)
    return replace(claim, requests=requests)


@dataclass
class _Matched:
    """A claim past its match report: per request the choices with their matching-device keys."""

    claim: ResourceClaim
    report: ClaimReport
    choices: list[list[tuple[DeviceChoice, Any]]]
    attributes: tuple[str, ...]  # the constrained attributes


def _claim_shape(claim: ResourceClaim, matched: _Matched) -> str:
    """What the allocator reads of a claim but its name and selectors (their matching devices are keyed apart):
    every field of the typed claim, present and future."""
    requests = tuple(replace(request, path=(), choices=tuple(replace(choice, selectors=(), path=(), selector_paths=())
                                                             for choice in request.choices))
                     for request in claim.requests)
    keys = tuple(tuple(key for _, key in choices) for choices in matched.choices)
    return repr((replace(claim, name="", requests=requests), keys))


class SearchStopped(Exception):
    """A search stopped at its deadline (AllocationTimeout), with why, as explain says it."""


@dataclass
class Verdict:
    """What allocate_claims says of claims together across the nodes tried."""

    nodes: list[str] = field(default_factory=list)
    first: tuple[str, list[ClaimAllocation]] | None = None
    error: Finding | None = None
    timed_out: list[str] = field(default_factory=list)  # nodes whose search was stopped
    why_stopped: str = ""  # of the first of them

    def stopped(self, search: SearchStopped, nodes: list[str]) -> None:
        """These nodes (alike) are not decided: their search was stopped."""
        self.why_stopped = self.why_stopped or f"on {_nodes_text(nodes)}: {search}"
        self.timed_out = sorted([*self.timed_out, *nodes])

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


def _seconds(amount: float) -> str:
    return f"{round(amount, 1):g}"


def _nodes_text(nodes: list[str]) -> str:
    return nodes[0] + (f" (and {len(nodes) - 1} more alike)" if len(nodes) > 1 else "")


def _listing(blocked: list[tuple[Device, str]], limit: int = 8) -> str:
    """The first `limit` devices with their causes, those of one cause together: `gpu-0, gpu-1: allocated to
    ml/a; gpu-2: taint ...` (a busy node's eight devices are mostly held by one claim)."""
    by_cause: dict[str, list[str]] = {}
    for device, why in blocked[:limit]:
        by_cause.setdefault(why, []).append(device.name)
    shown = "; ".join(f"{', '.join(names)}: {why}" for why, names in by_cause.items())
    return shown + (f"; +{len(blocked) - limit} more" if len(blocked) > limit else "")


def _fields_but(cls: type, skipped: Collection[str]) -> Callable[[Any], tuple[Any, ...]]:
    """A getter of every field of the dataclass but `skipped`, present and future, so no field is forgotten."""
    return attrgetter(*(f.name for f in fields(cls) if f.name not in skipped))


_SLICE_SHAPE = _fields_but(ResourceSlice, ("name", "source", "pool", "node_selection", "devices"))
_POOL_SHAPE = _fields_but(Pool, ("name",))
_DEVICE_SHAPE = _fields_but(SliceDevice, ("attributes", "node_selection", "convertible"))


def _shape_of(slice_: ResourceSlice) -> str:
    """All the allocator reads of a slice but its names and attributes (selectors and constraints, which read
    them, are keyed apart)."""
    def local(selection: NodeSelection | None) -> str:
        return "node" if selection is not None and selection.node_name else repr(selection)

    return repr((_SLICE_SHAPE(slice_), _POOL_SHAPE(slice_.pool), local(slice_.node_selection),
                 [(_DEVICE_SHAPE(d), local(d.node_selection)) for d in slice_.devices]))


class _Busy(dict[Any, str]):
    """(driver, pool, device) -> the claim holding it, for the claims judged: also as the allocator takes it, and
    frozen as the fleet's caches are keyed."""

    def __init__(self, holders: Mapping[Any, str]):
        super().__init__(holders)
        self.frozen = frozenset(holders)
        self.allocated = [AllocatedDevice(*key) for key in holders]


_NOTHING_BUSY = _Busy({})


class _Fleet:
    """Per inventory (and set of Nodes) indexes, shared by every claim explained against it: the nodes in name
    order, the slices each reaches, a key of what the allocator sees of them, device groups per selector view, and
    per set of claims what allocation sees of each node's matching devices."""

    def __init__(self, inventory: Inventory, nodes: Sequence[Node] | None,
                 grouping: dict[Any, list[list[Device]]]):
        self.inventory, self.given = inventory, nodes  # held, so the ids this is filed under are not reused
        self.nodes = sorted(nodes, key=lambda n: n.name) if nodes else [Node(n, {}) for n in inventory.nodes()]
        self.grouping = grouping  # the explainer's device groups per selector view, of this inventory
        members = inventory.slice_members()
        self.typed: dict[int, SliceDevice] = {}
        for slice_, devices in members:
            for typed, device in zip(slice_.devices, devices, strict=False):
                self.typed[id(device)] = typed
        self.uses_counters = any(s.shared_counters for s, _ in members)
        local: dict[str, list[int]] = defaultdict(list)
        shared = []
        for index, (slice_, _) in enumerate(members):
            if slice_.node_selection is not None and slice_.node_selection.node_name:
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
        for node in self.nodes:
            indices = sorted([*local.get(node.name, ()),
                              *(i for i in shared if self._reaches(node, members[i][0]))])
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
            static = self.static[node.name] = statics.setdefault(tuple(parts), len(statics))
            # Pools are gathered from what the static key holds (the slices' pools, generations, counts, device
            # names, binding conditions; each slice here reaches the node): once per key.
            risky = risky_by_static.get(static)
            if risky is None:
                risky = risky_by_static[static] = any(p.invalid or p.incomplete
                                                      for p in gather_pools(slices, node, True))
            self.risky[node.name] = risky
        self._reach: dict[str, frozenset[Any]] | None = None
        self._passing: dict[Any, frozenset[int]] = {}
        self._interned: dict[Any, int] = {}
        self._held: dict[frozenset[Any], dict[str, tuple[tuple[bool, ...], int]]] = {}
        self._matched: dict[Any, dict[str, tuple[int, int, int]]] = {}
        self._compared: dict[str, dict[str, int]] = {}
        # Verdicts shared by claims alike to the allocator (their shape: all but names and selectors, whose
        # matching devices are keyed apart): (node static key, signature, shapes) -> fits, or the search stopped;
        # with the node's name, the allocation found.
        self.outcomes: dict[Any, bool | SearchStopped] = {}
        self.results: dict[Any, list[ClaimAllocation]] = {}
        self._looks: dict[Any, tuple[dict[str, tuple[bool, int]], dict[int, list[Node]]]] = {}
        self._names: dict[tuple[int, ...], tuple[list[list[Node]], tuple[str, ...]]] = {}

    @property
    def reach(self) -> dict[str, frozenset[Any]]:
        """node -> the (driver, pool, device) it reaches."""
        if self._reach is None:
            self._reach = {name: frozenset((d.driver, d.pool, d.name) for d in devices)
                           for name, devices in self.devices.items()}
        return self._reach

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

    def held(self, busy: frozenset[Any]) -> dict[str, tuple[tuple[bool, ...], int]]:
        """node -> (per reachable device whether another claim holds it, that pattern's id)."""
        found = self._held.get(busy)
        if found is None:
            found = self._held[busy] = {}
            for node in self.nodes:
                flags = tuple(bool(busy) and (d.driver, d.pool, d.name) in busy for d in self.devices[node.name])
                found[node.name] = (flags, self._intern(flags))
        return found

    def matched(self, matching: Any, busy: frozenset[Any]) -> dict[str, tuple[int, int, int]]:
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

    def looks(self, claims: Sequence[_Matched],
              busy: frozenset[Any]) -> tuple[dict[str, tuple[bool, int]], dict[int, list[Node]]]:
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
        by_id = {(d.driver, d.pool, d.name): d for d in self.devices[node]}
        out: list[Allocation] = []
        for result in allocation.devices:
            request, _, subrequest = result.request.partition("/")
            device = by_id.get((result.driver, result.pool, result.device))
            if device is None:
                continue
            if out and (out[-1].request, out[-1].subrequest) == (request, subrequest):
                out[-1] = Allocation(request, subrequest, (*out[-1].devices, device))
            else:
                out.append(Allocation(request, subrequest, (device,)))
        return out


def _constraint_reason(constraints: list[Constraint], requests: list[RequestReport], node: str) -> str:
    """Enough devices match, but not together: show the constrained values on a node that has the devices."""
    parts = []
    for constraint in constraints:
        attribute = constraint.match_attribute or constraint.distinct_attribute or ""
        values: dict[str, int] = {}
        for request in requests:
            for device in request.matching:
                if device.node == node:
                    found = device.attribute(attribute)
                    value = "(attribute not set)" if found is None else str(found)
                    values[value] = values.get(value, 0) + 1
        kind = "matchAttribute" if constraint.match_attribute else "distinctAttribute"
        seen = ", ".join(f"{v} x{n}" if n > 1 else v for v, n in sorted(values.items()))
        parts.append(f"{kind} {attribute}: on {node} the matching devices carry {seen}")
    return ("enough devices match, but no node has a set that satisfies the constraints; " + "; ".join(parts))


# --------------------------------------------------------------------------------------------- projections


def _reads(expressions: tuple[str, ...]) -> tuple[tuple[str, str, str | None], ...] | None:
    """(map, domain, name or None for the whole domain) for every device lookup; None when an expression reads
    device.attributes or device.capacity other than through a literal domain (then everything may matter)."""
    fields: set[tuple[str, str, str | None]] = set()
    for expression in expressions:
        tokens = tokenize(expression)
        if tokens is None:
            return None
        lookups = device_lookups(tokens)
        uses = sum(1 for i in range(len(tokens) - 2) if tokens[i].text == "device" and tokens[i + 1].text == "."
                   and tokens[i + 2].text in ("attributes", "capacity"))
        if uses != len(lookups) or any(lookup.domain is None for lookup in lookups):
            return None
        fields.update((lookup.map, lookup.domain or "", lookup.name) for lookup in lookups)
    return tuple(sorted(fields, key=lambda f: (f[0], f[1], f[2] or "")))


_ABSENT = object()


def _project(device: Device, field: tuple[str, str, str | None]) -> Any:
    map_name, domain, name = field
    source: Mapping[str, Any] = device.attributes if map_name == "attributes" else device.capacity
    if name is None:  # the whole domain
        return tuple(sorted((k, repr(v)) for k, v in source.items()
                            if k.rpartition("/")[0] == domain or (domain == device.driver and "/" not in k)))
    if domain == device.driver and name in source:
        return repr(source[name])
    found = source.get(f"{domain}/{name}", _ABSENT)
    return found if found is _ABSENT else repr(found)


# --------------------------------------------------------------------------------------------- failing terms


def _top_level_terms(expression: str) -> list[str]:
    tokens = tokenize(expression)
    if not tokens:
        return [expression]
    terms, depth, start = [], 0, 0
    for token in tokens:
        if token.text in ("(", "[", "[?", "{"):
            depth += 1
        elif token.text in (")", "]", "}"):
            depth -= 1
        elif token.text in ("||", "?"):
            if depth == 0:
                return [expression]  # not a conjunction: judge it whole
        elif token.text == "&&" and depth == 0:
            terms.append(expression[start:token.start].strip())
            start = token.end
    terms.append(expression[start:].strip())
    return terms


_LOOKUP = r"device\.attributes\[\s*['\"]([^'\"]+)['\"]\s*\]\.(\w+)"
_CAPACITY = r"device\.capacity\[\s*['\"]([^'\"]+)['\"]\s*\]\.(\w+)"


def _value(device: Device, match: re.Match[str]) -> Any:
    return device.attribute(f"{match.group(1)}/{match.group(2)}")


def _describe(term: str, device: Device) -> str:
    if m := re.fullmatch(_LOOKUP + r"\.matches\(\s*['\"](.*)['\"]\s*\)", term, re.S):
        pattern = m.group(3).encode().decode("unicode_escape")  # as written in CEL: 'L4\\b' is the regex L4\b
        return f'{m.group(2)} "{_value(device, m)}" does not match "{pattern}"'
    if m := re.fullmatch(_LOOKUP + r"\s*==\s*['\"](.*)['\"]", term, re.S):
        return f'{m.group(2)} is "{_value(device, m)}", not "{m.group(3)}"'
    if m := re.fullmatch(_LOOKUP + r"\s+in\s+\[(.*)\]", term, re.S):
        return f'{m.group(2)} "{_value(device, m)}" is not one of [{m.group(3)}]'
    if m := re.fullmatch(_CAPACITY + r"\.compareTo\(\s*quantity\(\s*['\"]([^'\"]+)['\"]\s*\)\s*\)\s*>=\s*0", term):
        have = device.capacity.get(m.group(2)) or device.capacity.get(f"{m.group(1)}/{m.group(2)}")
        return f"{m.group(2)} {have} is less than {m.group(3)}"
    if m := re.fullmatch(_LOOKUP + r"\.compareTo\(\s*semver\(\s*['\"]([^'\"]+)['\"].*\)\s*>=\s*0", term):
        return f"{m.group(2)} {_value(device, m)} is below {m.group(3)}"
    if re.fullmatch(r"device\.driver\s*==\s*['\"]([^'\"]+)['\"]", term):
        return f"driver is {device.driver}"
    return f"`{term}` is false"


# --------------------------------------------------------------------------------------------- inputs


def claims_from_objects(objects: Iterable[Mapping[str, Any]]) -> list[ResourceClaim]:
    return [claim for claim in map(parse_claim, objects) if claim is not None]


def classes_from_objects(objects: Iterable[Mapping[str, Any]]) -> dict[str, list[str]]:
    return {device_class.name: list(device_class.selectors) for device_class in map(parse_device_class, objects)
            if device_class is not None}


def in_use_from_claims(claims: Iterable[ResourceClaim]) -> dict[Any, str]:
    """Devices allocated to existing ResourceClaims (status.allocation.devices.results), admin access excluded:
    (driver, pool, device) -> the claim holding it. Templates carry no allocation."""
    used: dict[Any, str] = {}
    for claim in claims:
        for result in claim.allocated:
            if not result.admin_access:
                used[(result.driver, result.pool, result.device)] = claim.name
    return used

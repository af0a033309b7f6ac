"""The Explainer: a claim's match report per request, then the allocator's verdict per node, with what claims alike
share computed once (selector results per device view, the fleet's indexes, the devices in use, the reasons)."""

from __future__ import annotations

import time
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import replace
from functools import cache
from typing import Any

from gpu_dra.core.analysis.allocator import Features
from gpu_dra.core.analysis.features import features_for
from gpu_dra.core.analysis.inventory import Device, Inventory
from gpu_dra.core.analysis.pools import Node
from gpu_dra.core.dra.claims import DeviceId, InUse, RequestChoice, ResourceClaim
from gpu_dra.core.facts import nvidia
from gpu_dra.core.facts.target import Target
from gpu_dra.core.findings import ERROR, Finding

from .fleet import NOTHING_BUSY, Busy, Fleet, Matched
from .gates import as_stored
from .reasons import UnallocatableReasons, constraint_reason, failing_term
from .report import CEL_RUNTIME, INVALID_CLAIM, MISSING_CLASS, ClaimReport, ClaimVerdict, RequestReport
from .search import FILTER_TIMEOUT, SEARCH_BUDGET, NodeSearch
from .taints import TaintedInventory, TaintRules
from .views import SelectorEvaluator


class Explainer:
    """Caches compiled selectors and per-shape results across claims."""

    def __init__(self, classes: Mapping[str, list[str]], consumable_capacity: bool = True,
                 features: Features | None = None, clock: Callable[[], float] = time.monotonic,
                 filter_timeout: float = FILTER_TIMEOUT, search_budget: float = SEARCH_BUDGET,
                 chart_classes: bool = True):
        """`consumable_capacity` defaults on: the scheduler compiles stored selectors with every field declared
        (StoredExpressions, kubernetes/dynamic-resource-allocation@v0.34.0:cel/cache.go;
        docs/sources.md#cel-environment); the API server decides what may be stored. `features`: the allocator's
        switches (default: the default version's EKS scheduler's, `features_for(Target())`). Each search is stopped
        after `filter_timeout`, or when all of them have taken `search_budget`, on `clock`. `chart_classes`: NVIDIA's
        chart's DeviceClasses stand in for those of their names `classes` lacks, but where no chart is installed (EKS
        Auto Mode)."""
        self.classes = {**(nvidia.CHART_CLASS_SELECTORS if chart_classes else {}), **classes}
        self.features = features if features is not None else features_for(Target())
        self.selectors = SelectorEvaluator(consumable_capacity, self.features.list_type_attributes)
        self.search = NodeSearch(self.classes, self.features, clock, filter_timeout, search_budget)
        self.reasons = UnallocatableReasons(self.features)
        self._fleets: dict[tuple[int, tuple[int, ...]], Fleet] = {}
        self._last_fleet: tuple[Inventory, Sequence[Node] | None, Fleet] | None = None
        # (inventory, class, selectors, devices in use) -> per request what match found, shared by the reports
        self._matches: dict[tuple[Any, ...], tuple[Any, ...]] = {}
        self._busies: dict[int, tuple[Mapping[DeviceId, str], frozenset[str], dict[frozenset[str], Busy]]] = {}
        # pods.py's answers to "does every node reaching the claim's devices refuse the pod", for pods alike
        self.refusals: dict[Any, tuple[Any, str]] = {}

    @property
    def searched(self) -> float:
        """The time all searches took so far."""
        return self.search.searched

    def with_taint_rules(self, inventory: Inventory) -> TaintedInventory:
        """The inventory as the scheduler's ResourceSlice tracker hands it to the allocator (TaintRules.apply)."""
        return TaintRules(self.selectors, self.classes, self.features).apply(inventory)

    # ------------------------------------------------------------------------------------------- claims

    def explain(self, claim: ResourceClaim, inventory: Inventory, in_use: Mapping[DeviceId, str] | None = None,
                nodes: Sequence[Node] | None = None, only: Collection[str] | None = None) -> ClaimReport:
        """The claim's match report, then the scheduler's verdict per node (allocate_claims). `in_use` maps a
        device to the claim holding it; `nodes` are the cluster's Nodes with their labels (without them, the nodes
        the slices name, unlabelled); `only` limits the nodes tried (a pod's)."""
        fleet = self._fleet(inventory, nodes)
        report, matched = self.match(claim, inventory, in_use, self._reached(fleet, only))
        if matched is None:
            return report
        busy = self._busy(in_use, {claim.name})
        verdict = self.search.verdict([matched], fleet, busy, only)
        if not verdict.give(report):
            return report
        if verdict.first is not None:
            node, (allocation,) = verdict.first
            report.allocation = allocation
            report.solution = (node, fleet.allocations(node, allocation))
            return report
        if verdict.timed_out:
            return report
        report.reason = self.reasons.of(matched, fleet, busy, only)
        if verdict.why_failed:
            report.reason += f"; {verdict.why_failed}"
        if claim.constraints and all(r.matching for r in report.requests):
            loose = Matched(replace(matched.claim, constraints=()), report, matched.choices, ())
            unconstrained = self.search.verdict([loose], fleet, busy, only)
            if unconstrained.nodes:
                report.reason = constraint_reason(list(claim.constraints), report.requests, unconstrained.nodes[0])
        return report

    def match(self, claim: ResourceClaim, inventory: Inventory, in_use: Mapping[DeviceId, str] | None = None,
              reached: Callable[[], frozenset[DeviceId]] | None = None) -> tuple[ClaimReport, Matched | None]:
        """Per request the matching devices and the others by reason; None beside the report when an error
        stops the claim before allocation is tried. `reached`: the devices the nodes a pod may use reach, whose
        selector errors alone stop it (the scheduler filters nodes by affinity and taints before
        DynamicResources evaluates a selector); None: every device's."""
        report = ClaimReport(claim.name)
        if claim.problem:
            report.errors.append(Finding(INVALID_CLAIM, ERROR, claim.problem, object=claim.name))
            report.reason = claim.problem
            return report, None
        claim = as_stored(claim, self.features)  # what the scheduler reads, from the match on
        held = self._busy(in_use, {claim.name})  # its own devices are not busy
        choices_by_request: list[list[tuple[RequestChoice, Any]]] = []
        for request in claim.requests:
            choices = []
            for spec in request.choices:
                label = f"{request.name}/{spec.subrequest}" if spec.subrequest else request.name
                request_report = RequestReport(label)
                report.requests.append(request_report)
                if spec.device_class not in self.classes:
                    report.errors.append(Finding(MISSING_CLASS, ERROR, f"request {label}: device class "
                                                 f"{spec.device_class} does not exist", object=claim.name))
                    continue
                choices.append((spec, self._match_choice(spec, claim.name, inventory, held, report, request_report,
                                                         reached)))
            choices_by_request.append(choices)
        if report.errors:
            first = report.errors[0]
            report.reason = first.message + (" (a CEL runtime error on any device aborts the whole claim)"
                                             if first.rule == CEL_RUNTIME else "")
            return report, None
        attributes = tuple(c.match_attribute or c.distinct_attribute or "" for c in claim.constraints)
        return report, Matched(claim, report, choices_by_request, attributes)

    def _match_choice(self, spec: RequestChoice, claim: str, inventory: Inventory, held: Busy, report: ClaimReport,
                      request_report: RequestReport, reached: Callable[[], frozenset[DeviceId]] | None = None) -> Any:
        """Fill one request's (or subrequest's) report: its matching devices, the others by reason, those other
        claims hold; the key of its matching devices, as the fleet reads it."""
        class_name = spec.device_class
        selectors = list(spec.selectors)
        expressions = [*self.classes[class_name], *selectors]
        # The same class and selectors against the same devices in use: the lists another claim got
        # (a cluster's Pending pods mostly use a few templates; each list holds every matching device).
        cache = (id(inventory), class_name, spec.selectors, id(held))
        cached = self._matches.get(cache)
        if cached is not None and cached[0] is inventory and cached[1] is held:
            _, _, request_report.matching, request_report.rejected, request_report.in_use, known = cached
            return (self.selectors.spec(expressions), known)
        passing = []
        fatal_here = False
        for index, group in enumerate(self.selectors.groups(expressions, inventory)):
            passes, reason, fatal = self._judge(group[0], class_name, selectors, claim)
            if fatal:
                fatal_here = True  # the lists depend on the claim (and on `reached`): not shared
                if reached is not None and not any(DeviceId(d.driver, d.pool, d.name) in reached() for d in group):
                    request_report.rejected.setdefault(f"on nodes the pod may not use: {fatal.message}",
                                                       []).extend(group)
                    continue
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
                                     if (key := DeviceId(d.driver, d.pool, d.name)) in held]
        if not fatal_here:  # an error names its claim: kept for this claim only
            self._matches[cache] = (inventory, held, request_report.matching, request_report.rejected,
                                    request_report.in_use, tuple(passing))
        return (self.selectors.spec(expressions), tuple(passing))

    def _judge(self, device: Device, class_name: str, selectors: list[str],
               claim: str) -> tuple[bool, str | None, Finding | None]:
        """(passes, rejection reason, fatal error) for class then request selectors, as the allocator orders them."""
        stages = [(f"class {class_name}", self.classes[class_name]), (f"claim {claim}", selectors)]
        for owner, expressions in stages:
            for index, expression in enumerate(expressions):
                matches, error = self.selectors.evaluate(expression, device)
                if error is not None:
                    return False, None, error.at(message=f"{owner}: selector #{index}: {error.message}",
                                                 object=claim, path=f"{owner} selector #{index}")
                if not matches:
                    term = failing_term(self.selectors, expression, device)
                    prefix = f"class {class_name}: " if owner.startswith("class") else ""
                    return False, f"{prefix}selector #{index}: {term or 'false'}", None
        return True, None, None

    # ------------------------------------------------------------------------------------------- verdicts

    def together(self, claims: Sequence[ResourceClaim], inventory: Inventory,
                 in_use: Mapping[DeviceId, str] | None, nodes: Sequence[Node] | None = None,
                 only: Collection[str] | None = None) -> ClaimVerdict:
        """Claims of one pod allocated together (their match reports must be free of errors): the nodes they fit
        on together, the first such node with the allocations, or the error that fails them."""
        fleet = self._fleet(inventory, nodes)
        reached = self._reached(fleet, only)
        matched = []
        for claim in claims:
            _, one = self.match(claim, inventory, in_use, reached)
            if one is None:
                raise ValueError(f"claim {claim.name} has errors: explain it first")
            matched.append(one)
        busy = self._busy(in_use, {claim.name for claim in claims})
        return self.search.verdict(matched, fleet, busy, only)

    @staticmethod
    def _reached(fleet: Fleet, only: Collection[str] | None) -> Callable[[], frozenset[DeviceId]] | None:
        """The devices the nodes in `only` reach, worked out once if a selector error asks (None: no node is left
        out)."""
        if only is None:
            return None
        return cache(lambda: frozenset().union(*(fleet.reach.get(node, frozenset()) for node in only)))

    def reachable(self, inventory: Inventory, nodes: Sequence[Node] | None = None) -> dict[str, frozenset[DeviceId]]:
        """node -> the devices it reaches."""
        return self._fleet(inventory, nodes).reach

    def _fleet(self, inventory: Inventory, nodes: Sequence[Node] | None = None) -> Fleet:
        """The indexes of this inventory on these Nodes, built once: callers pass the same Node objects in lists
        made anew (a pod's usable nodes, a hint's), so the key is the nodes' identities, not the list's."""
        last = self._last_fleet  # the same list again (a pod's claims one after another): no key to build
        if last is not None and last[0] is inventory and last[1] is nodes:
            return last[2]
        key = (id(inventory), tuple(map(id, nodes)) if nodes else ())
        fleet = self._fleets.get(key)
        if fleet is None:  # the fleet holds its inventory and nodes, so ids filed here are never reused
            fleet = self._fleets[key] = Fleet(inventory, nodes, self.selectors.grouping_of(inventory), self.features)
        self._last_fleet = (inventory, nodes, fleet)
        return fleet

    def _busy(self, in_use: Mapping[DeviceId, str] | None, own: Collection[str]) -> Busy:
        """The devices other claims hold, built once per `in_use` and claims: a cluster's every node holds some,
        and every claim of every Pending pod is judged against them."""
        shares = in_use.shares if isinstance(in_use, InUse) else {}
        if in_use is None or (not in_use and not shares):
            return NOTHING_BUSY
        held = self._busies.get(id(in_use))
        if held is None or held[0] is not in_use:  # held with its in_use, so the id is not reused
            holding = {*in_use.values(), *(share.claim for owned in shares.values() for share in owned)}
            held = self._busies[id(in_use)] = (in_use, frozenset(holding), {})
        mine = frozenset(own) & held[1]  # most claims judged hold nothing yet: all share one
        busy = held[2].get(mine)
        if busy is None:
            busy = held[2][mine] = Busy({device: owner for device, owner in in_use.items() if owner not in mine},
                                        {device: [share for share in owned if share.claim not in mine]
                                         for device, owned in shares.items()})
        return busy

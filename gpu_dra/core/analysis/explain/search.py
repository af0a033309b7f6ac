"""The allocator's verdict on claims together across the nodes they may use: allocate_claims on each distinct node
(as the allocator sees it) once, in name order, each search stopped at the scheduler's filter timeout and all of them
when the command's search budget is spent."""

from __future__ import annotations

import time
from collections.abc import Callable, Collection, Mapping, Sequence
from contextlib import suppress
from dataclasses import replace
from typing import Any

from gpu_dra.core.analysis.allocator import (
    AllocationError,
    AllocationTimeout,
    ClaimAllocation,
    FailedOnNode,
    Features,
    allocate_claims,
)
from gpu_dra.core.analysis.pools import Node
from gpu_dra.core.dra.cel import CompileError
from gpu_dra.core.dra.cel.compile import CompiledSelector
from gpu_dra.core.dra.claims import AllocatedDevice, ResourceClaim
from gpu_dra.core.dra.slices import ResourceSlice
from gpu_dra.core.findings import ERROR, Finding

from .fleet import Busy, Fleet, Matched
from .report import ALLOCATION_ERROR, ClaimVerdict, SearchStopped

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


class NodeSearch:
    """allocate_claims as the scheduler's Filter calls run it, with their time limits, and the verdict of claims
    together across nodes; `searched` is the time all searches took so far."""

    def __init__(self, classes: Mapping[str, list[str]], features: Features,
                 clock: Callable[[], float] = time.monotonic, filter_timeout: float = FILTER_TIMEOUT,
                 search_budget: float = SEARCH_BUDGET):
        self.classes, self.features = classes, features
        self.clock, self.filter_timeout, self.search_budget = clock, filter_timeout, search_budget
        self.searched = 0.0
        self._compiled: dict[str, CompiledSelector | CompileError] = {}  # the allocator's, with `features`

    def verdict(self, matched: Sequence[Matched], fleet: Fleet, busy: Busy,
                only: Collection[str] | None = None) -> ClaimVerdict:
        """allocate_claims for these claims together on every node they may fit (in name order), each distinct
        node (as the allocator sees it) once. An error on any node fails them, as a Filter error fails the pod; a
        node whose search is stopped is not decided, and the others still are."""
        claims = [m.claim for m in matched]  # as stored (match)
        allocated, frozen = busy.allocated, busy.frozen
        looks, tried = fleet.looks(matched, frozen)
        shapes = tuple(claim_shape(claim, m) for claim, m in zip(claims, matched, strict=True))
        verdict = ClaimVerdict()

        def allocate(node: Node) -> list[ClaimAllocation] | None:
            return self._allocate(claims, fleet.slices_of[node.name], node, allocated, fleet.everywhere)

        alike = tried  # nodes alike to the allocator, in name order
        if only is not None:
            alike = {}
            for node in fleet.nodes:
                if node.name in only and ((looked := looks[node.name])[0] or fleet.risky[node.name]):
                    alike.setdefault(looked[1], []).append(node)
        fitting: list[tuple[Any, list[Node]]] = []
        try:
            for kind, nodes in alike.items():  # every kind is tried: an error on any node fails the claims
                key = (kind, shapes, busy.key)
                fits = fleet.outcomes.get(key)
                if fits is None:
                    try:
                        result = allocate(nodes[0])
                    except (SearchStopped, FailedOnNode) as stopped:
                        fits = stopped
                    else:
                        fits = result is not None
                        if result is not None:
                            fleet.results[(nodes[0].name, key)] = result
                    fleet.outcomes[key] = fits
                if isinstance(fits, SearchStopped):
                    verdict.stopped(fits, [n.name for n in nodes])
                elif isinstance(fits, FailedOnNode):
                    verdict.failed(fits, [n.name for n in nodes])
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
                passed = ("checks", looks[fleet.nodes[0].name][1], shapes, busy.key)
                if passed not in fleet.outcomes:  # an error names its claim: only a pass is kept for claims alike
                    with suppress(SearchStopped, FailedOnNode):  # they passed; no node is a candidate: nothing decided
                        allocate(fleet.nodes[0])
                    fleet.outcomes[passed] = True
        except AllocationError as error:
            verdict.error = Finding(ALLOCATION_ERROR, ERROR, str(error), object=error.claim)
        if verdict.error is not None:
            verdict.nodes, verdict.first, verdict.timed_out = [], None, []
        return verdict

    def _allocate(self, claims: Sequence[ResourceClaim], slices: Sequence[ResourceSlice], node: Node,
                  allocated: Sequence[AllocatedDevice],
                  everywhere: Sequence[ResourceSlice]) -> list[ClaimAllocation] | None:
        """allocate_claims as one Filter call: its search stopped at the filter timeout, or sooner when what is
        left of the search budget runs out (SearchStopped)."""
        start = self.clock()
        allowed = min(self.filter_timeout, max(self.search_budget - self.searched, 0.0))
        try:
            return allocate_claims(claims, slices, node, self.classes, allocated, self.features, start + allowed,
                                   self.clock, self._compiled, everywhere)
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


def claim_shape(claim: ResourceClaim, matched: Matched) -> str:
    """What the allocator reads of a claim but its name and selectors (their matching devices are keyed apart):
    every field of the typed claim, present and future."""
    requests = tuple(replace(request, path=(), choices=tuple(replace(choice, selectors=(), path=(), selector_paths=())
                                                             for choice in request.choices))
                     for request in claim.requests)
    keys = tuple(tuple(key for _, key in choices) for choices in matched.choices)
    return repr((replace(claim, name="", requests=requests), keys))


def _seconds(amount: float) -> str:
    return f"{round(amount, 1):g}"

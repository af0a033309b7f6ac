"""Allocation on one node with the upstream structured allocator's semantics (kubernetes/dynamic-resource-allocation
@v0.34.0 structured/internal/*/allocator_*.go; docs/sources.md#allocator-and-scheduler): requests in order;
ExactCount and All; firstAvailable alternatives in order; matchAttribute and distinctAttribute constraints; devices
in use by other claims skipped unless the request has admin access; depth-first search with backtracking, and the
first full solution wins.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import combinations
from typing import Any

from gpu_dra.core.analysis.inventory import Device
from gpu_dra.core.dra.objects import Constraint


@dataclass(frozen=True)
class Choice:
    """One way to satisfy a request: a subrequest name ('' for exactly), mode, count and the devices it may take."""

    subrequest: str
    mode: str  # ExactCount or All
    count: int
    candidates: tuple[Device, ...]
    admin_access: bool = False


@dataclass(frozen=True)
class Allocation:
    request: str
    subrequest: str
    devices: tuple[Device, ...]


def _applies(constraint: Constraint, request: str, subrequest: str) -> bool:
    return (not constraint.requests or request in constraint.requests
            or bool(subrequest and f"{request}/{subrequest}" in constraint.requests))


def _constraints_hold(constraints: Sequence[Constraint], picked: list[Allocation]) -> bool:
    for constraint in constraints:
        devices = [d for a in picked if _applies(constraint, a.request, a.subrequest) for d in a.devices]
        attribute = constraint.match_attribute or constraint.distinct_attribute or ""
        values = [d.typed_attribute(attribute) for d in devices]
        if any(v is None for v in values):
            return False
        if constraint.match_attribute and len(set(values)) > 1:
            return False
        if constraint.distinct_attribute and len(set(values)) != len(values):
            return False
    return True


def allocate(requests: Sequence[tuple[str, Sequence[Choice]]], constraints: Sequence[Constraint],
             in_use: Mapping[Any, str]) -> list[Allocation] | None:
    """The first solution on one node's candidates, or None. `in_use` maps device identity -> allocated elsewhere."""

    def free(device: Device, choice: Choice, taken: set[int]) -> bool:
        return id(device) not in taken and (choice.admin_access or not in_use.get((device.driver, device.pool,
                                                                                   device.name), False))

    def search(index: int, picked: list[Allocation], taken: set[int]) -> list[Allocation] | None:
        if index == len(requests):
            return list(picked)
        name, choices = requests[index]
        for choice in choices:  # firstAvailable: in order; exactly: one choice
            usable = [d for d in choice.candidates if free(d, choice, taken)]
            if choice.mode == "All":
                # every matching device must be allocatable, and there must be at least one
                if not choice.candidates or len(usable) != len(choice.candidates):
                    continue
                options: Any = [tuple(usable)]
            else:
                if len(usable) < choice.count:
                    continue
                options = combinations(usable, choice.count)
            for devices in options:
                allocation = Allocation(name, choice.subrequest, tuple(devices))
                picked.append(allocation)
                if _constraints_hold(constraints, picked):
                    found = search(index + 1, picked, taken | {id(d) for d in devices})
                    if found is not None:
                        return found
                picked.pop()
        return None

    return search(0, [], set())

"""Upstream's own allocator table (k8s.io/dynamic-resource-allocation structured/internal/allocatortesting
TestAllocator), case by case through allocate_claims: the verdict, and per claim the devices and node selector.

tests/data/allocator_upstream_cases.yaml names its source commit and how its fields read. A skipped case carries its
reason, and the skipped set is pinned below, so a case cannot start skipping unnoticed. Shares are compared by being
shares (upstream replaces every share ID by one fixed UID), consumed capacity by value.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import pytest
import yaml

from gpu_dra.core.analysis.allocator import AllocationError, ClaimAllocation, Features, allocate_claims
from gpu_dra.core.analysis.pools import Node
from gpu_dra.core.dra.claims import AllocatedDevice, ResourceClaim, parse_claim, parse_device_class
from gpu_dra.core.dra.quantity import parse_quantity
from gpu_dra.core.dra.slices import parse_slice

CASES: list[dict[str, Any]] = yaml.safe_load(
    (Path(__file__).parent / "data" / "allocator_upstream_cases.yaml").read_text())["cases"]
FEATURES = {"AdminAccess": "admin_access", "PrioritizedList": "prioritized_list",
            "PartitionableDevices": "partitionable_devices", "DeviceTaints": "device_taints",
            "ConsumableCapacity": "consumable_capacity", "DeviceBinding": "device_binding",
            "DeviceStatus": "device_status"}
COMPARED = {"request", "driver", "pool", "device", "adminAccess", "shareID", "consumedCapacity", "bindingConditions",
            "bindingFailureConditions"}  # of each expected device
EXISTING_SHARE = "existing-share"  # the share ID of `allocatedCapacityDevices`, which upstream passes as consumed

CAPACITY_INDEX_BUG = ("1.34 bug gpu-dra does not reproduce: allocateDevice checks capacity against the slice's device "
                      "at the request's device index, not the device being allocated (fixed in 1.35 by kubernetes "
                      "81e3dbd, which gives this case a result)")
SKIPPED = {CAPACITY_INDEX_BUG: {"consumable-capacity-multi-allocatable-device-allocation-mode-all-in-use-insufficient"}}


def test_the_table_is_whole_and_its_skips_are_the_documented_ones() -> None:
    names = [case["name"] for case in CASES]
    assert len(names) == len(set(names)) == 151
    skipped = {case["name"]: case["skip"] for case in CASES if "skip" in case}
    assert skipped == {name: reason for reason, group in SKIPPED.items() for name in group}


def _claims(case: dict[str, Any]) -> list[ResourceClaim]:
    claims = [parse_claim(obj) for obj in case.get("claims") or []]
    assert all(claim is not None for claim in claims)
    return [claim for claim in claims if claim is not None]


def _classes(case: dict[str, Any]) -> dict[str, tuple[str, ...]]:
    parsed = [parse_device_class(obj) for obj in case.get("classes") or []]
    return {c.name: c.selectors for c in parsed if c is not None}


def _features(case: dict[str, Any]) -> Features:
    written = case.get("features") or {}
    unknown = set(written) - set(FEATURES)
    assert not unknown, f"a feature the runner does not map: {unknown}"
    return Features(**{FEATURES[name]: bool(value) for name, value in written.items()})


def _node(case: dict[str, Any]) -> Node:
    """Upstream passes no node where a case has no slices; any node then gives the same answer."""
    node = case["node"] or {"name": "", "labels": {}}
    return Node(node["name"], node.get("labels") or {})


def _selector(selector: dict[str, Any] | None) -> Any:
    """A NodeSelector with terms, requirements and values in any order, as upstream's matcher compares them."""
    if selector is None:
        return None
    return Counter(
        (frozenset((kind, frozenset(Counter((r["key"], r["operator"], frozenset(Counter(r["values"]).items()))
                                            for r in term.get(kind) or []).items()))
                   for kind in ("matchExpressions", "matchFields")))
        for term in selector["nodeSelectorTerms"]).items()


def _expected_devices(result: dict[str, Any], unchecked: set[str]) -> Counter[tuple[Any, ...]]:
    for device in result["devices"]:
        assert set(device) - COMPARED <= unchecked, f"an expected field neither compared nor listed: {device}"
    return Counter((d["request"], d["driver"], d["pool"], d["device"], bool(d.get("adminAccess")),
                    bool(d.get("shareID")),
                    frozenset((name, parse_quantity(q)) for name, q in (d.get("consumedCapacity") or {}).items()),
                    tuple(d.get("bindingConditions") or ()), tuple(d.get("bindingFailureConditions") or ()))
                   for d in result["devices"])


def _devices(allocation: ClaimAllocation) -> Counter[tuple[Any, ...]]:
    return Counter((d.request, d.driver, d.pool, d.device, d.admin_access, d.shared,
                    frozenset(d.consumed_capacity.items()), d.binding_conditions, d.binding_failure_conditions)
                   for d in allocation.devices)


def _allocated(case: dict[str, Any]) -> list[AllocatedDevice]:
    """Devices other claims hold, and the capacity their shares consume."""
    return [*(AllocatedDevice(d["driver"], d["pool"], d["device"]) for d in case.get("allocatedDevices") or []),
            *(AllocatedDevice(d["driver"], d["pool"], d["device"], share_id=EXISTING_SHARE,
                              consumed_capacity=d["consumedCapacity"])
              for d in case.get("allocatedCapacityDevices") or [])]


@pytest.mark.parametrize("case", CASES, ids=[case["name"] for case in CASES])
def test_upstream_case(case: dict[str, Any]) -> None:
    if "skip" in case:
        pytest.skip(case["skip"])
    expect, unchecked = case["expect"], set(case.get("unchecked") or [])
    assert set(expect) - {"results", "allocatable", "error"} <= unchecked
    slices = [parse_slice(obj, case["name"]) for obj in case.get("slices") or []]
    try:
        outcome = allocate_claims(_claims(case), slices, _node(case), _classes(case), _allocated(case),
                                  _features(case))
    except AllocationError as error:
        assert "error" in expect, f"unexpected error: {error}"
        assert expect["error"] in str(error)
        return
    assert "error" not in expect, f"expected the error {expect['error']!r}, got {outcome}"
    if expect.get("allocatable") is False:
        assert outcome is None
        return
    assert outcome is not None, "expected an allocation"
    assert [a.claim for a in outcome] == [r["claim"] for r in expect["results"]]
    for allocation, result in zip(outcome, expect["results"], strict=True):
        assert set(result) - {"claim", "devices", "nodeSelector"} <= unchecked
        assert _devices(allocation) == _expected_devices(result, unchecked), allocation.claim
        assert _selector(allocation.node_selector) == _selector(result["nodeSelector"]), allocation.claim

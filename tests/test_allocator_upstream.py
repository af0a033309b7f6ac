"""Upstream's own allocator table (k8s.io/dynamic-resource-allocation structured/internal/allocatortesting
TestAllocator), case by case through allocate_claims: the verdict, and per claim the devices and node selector.

tests/data/allocator_upstream_cases.yaml names its source commit and how its fields read. A skipped case carries its
reason, and the skipped set is pinned below, so a case cannot start skipping unnoticed.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import pytest
import yaml

from gpu_dra.core.analysis.allocator import AllocationError, ClaimAllocation, Features, allocate_claims
from gpu_dra.core.analysis.pools import Node
from gpu_dra.core.dra.objects import AllocatedDevice, ResourceClaim, parse_claim, parse_device_class, parse_slice

CASES: list[dict[str, Any]] = yaml.safe_load(
    (Path(__file__).parent / "data" / "allocator_upstream_cases.yaml").read_text())["cases"]
FEATURES = {"AdminAccess": "admin_access", "PrioritizedList": "prioritized_list",
            "PartitionableDevices": "partitionable_devices", "DeviceTaints": "device_taints",
            "ConsumableCapacity": "consumable_capacity"}
COMPARED = {"request", "driver", "pool", "device", "adminAccess"}  # of each expected device

BINDING = ("binding conditions (DRADeviceBindingConditions): objects.py's SliceDevice carries no bindingConditions, "
           "bindingFailureConditions or bindsToNode")
TOLERATIONS = "request tolerations (DRADeviceTaints): objects.py's DeviceChoice carries no tolerations"
CAPACITY = ("consumable capacity (DRAConsumableCapacity): objects.py carries no request capacity, no capacity "
            "requestPolicy and no consumed capacity of existing allocations")
NO_CEL = ("a selector without `cel` (an unknown future selector type): objects.py leaves it out, where upstream "
          "refuses the claim")
SKIPPED = {
    BINDING: {
        "device-binding-conditions", "binding-conditions-multiple-devices", "binding-conditions-without-feature-gate",
        "device-binding-conditions-without-binding-conditions-feature-gate",
        "device-binding-conditions-without-device-status-feature-gate", "node-restriction",
        "partitionable-devices-with-binding-conditions", "partitionable-devices-with-binding-conditions-multiple",
        "partitionable-devices-with-binding-conditions-some-devices-no-conditions",
        "partitionable-devices-with-binding-conditions-multi-slices",
        "partitionable-devices-with-binding-conditions-and-taints"},
    f"{BINDING}; {TOLERATIONS}": {"partitionable-devices-with-binding-conditions-and-taints-tolerated"},
    TOLERATIONS: {"tainted-two-devices-tolerated", "tainted-one-device-two-taints-both-tolerated"},
    NO_CEL: {"unknown-selector"},
    CAPACITY: {
        *(f"consumable-capacity-multi-allocatable-device-{suffix}" for suffix in (
            "without-policy-with-capacity-request", "with-policy-without-capacity-request",
            "with-zero-request-policy", "violates-zero-request-policy", "with-range-policy-with-capacity-request",
            "with-range-policy-step", "with-valid-values-policy", "with-valid-values-policy-round-up",
            "with-exceeded-consumable-capacity-request", "with-request-over-max-sharing-policy",
            "with-some-remaining-consumable-capacity", "with-subrequest", "with-no-available-consumable-capacity",
            "allocation-mode-all-filter-out-no-capacity", "allocation-mode-all-filter-out-insufficient-capacity",
            "allocation-mode-all-allocating-sufficient", "allocation-mode-all-in-use-sufficient",
            "allocation-mode-all-allocating-insufficient", "allocation-mode-all-in-use-insufficient")),
        "consumable-capacity-with-multi-allocatable-device-backtrack",
        "consumable-capacity-dedicated-device-with-consumable-capacity-request",
        "consumable-capacity-dedicated-device-with-multiple-consumable-capacity-request",
        "allow-multiple-allocations-exclude-multi-allocatable-device-by-class-selector",
        "allow-multiple-allocations-not-allocate-multi-allocatable-device-which-already-dedicated",
        "allow-multiple-allocations-not-allocate-dedicated-device-which-change-from-multi-allocatable",
        "distinct-constraint-one-multi-allocatable-device-with-distinct-constraint",
        "distinct-constraint-two-multi-allocatable-devices-with-distinct-constraint"},
}


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
    return Counter((d["request"], d["driver"], d["pool"], d["device"], bool(d.get("adminAccess")))
                   for d in result["devices"])


def _devices(allocation: ClaimAllocation) -> Counter[tuple[Any, ...]]:
    return Counter((d.request, d.driver, d.pool, d.device, d.admin_access) for d in allocation.devices)


@pytest.mark.parametrize("case", CASES, ids=[case["name"] for case in CASES])
def test_upstream_case(case: dict[str, Any]) -> None:
    if "skip" in case:
        pytest.skip(case["skip"])
    expect, unchecked = case["expect"], set(case.get("unchecked") or [])
    assert set(expect) - {"results", "allocatable", "error"} <= unchecked
    slices = [parse_slice(obj, case["name"]) for obj in case.get("slices") or []]
    allocated = [AllocatedDevice(d["driver"], d["pool"], d["device"]) for d in case.get("allocatedDevices") or []]
    try:
        outcome = allocate_claims(_claims(case), slices, _node(case), _classes(case), allocated, _features(case))
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

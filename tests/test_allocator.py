"""allocate_claims beyond upstream's table: the real EKS p5 dump with devices held by other claims, tainted and
tolerated, and with capacity requests; pods with several claims, a network-attached slice, partitionable
(MIG-shaped) devices with taints, devices shared by several claims."""

from __future__ import annotations

import copy
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
import yaml

from gpu_dra.core.analysis.allocator import AllocationError, Features, allocate_claims
from gpu_dra.core.analysis.pools import Node
from gpu_dra.core.dra.claims import AllocatedDevice, ResourceClaim, claim_from_devices
from gpu_dra.core.dra.slices import ResourceSlice, parse_slice
from gpu_dra.core.facts import nvidia

P5 = Path(__file__).parent / "data" / "resourceslices" / "h100-80gb-hbm3_eks-p5_v25.12.0.yaml"
P5_NODE = Node("ip-100-64-147-149.ec2.internal", {"node.kubernetes.io/instance-type": "p5.48xlarge"})
CLASSES = nvidia.CHART_CLASS_SELECTORS
ALL_ON = Features(admin_access=True, prioritized_list=True, partitionable_devices=True, device_taints=True,
                  consumable_capacity=True)


def p5_slices(taints: dict[str, list[dict[str, str]]] | None = None) -> list[ResourceSlice]:
    """The real dump, with `taints` (device name -> taints) put on its GPUs as the driver or a DeviceTaintRule
    would."""
    items = copy.deepcopy(yaml.safe_load(P5.read_text())["items"])
    for item in items:
        for device in item["spec"]["devices"]:
            if item["spec"]["driver"] == "gpu.nvidia.com" and device["name"] in (taints or {}):
                device["taints"] = (taints or {})[device["name"]]
    return [parse_slice(item, P5.name) for item in items]


def gpus(name: str, count: int = 1, selectors: tuple[str, ...] = (), klass: str = "gpu.nvidia.com",
         **exactly: Any) -> ResourceClaim:
    spec = {"deviceClassName": klass, "count": count, **exactly,
            "selectors": [{"cel": {"expression": s}} for s in selectors]}
    return claim_from_devices(name, {"requests": [{"name": "gpu", "exactly": spec}]})


def held(*indices: int) -> list[AllocatedDevice]:
    return [AllocatedDevice("gpu.nvidia.com", P5_NODE.name, f"gpu-{i}") for i in indices]


def test_p5_devices_held_by_other_claims_are_skipped_and_a_pod_s_claims_compete_for_the_rest() -> None:
    slices, busy = p5_slices(), held(*range(7))
    (one,) = allocate_claims([gpus("ml/one")], slices, P5_NODE, CLASSES, busy, Features()) or []
    assert [(d.driver, d.pool, d.device) for d in one.devices] == [("gpu.nvidia.com", P5_NODE.name, "gpu-7")]
    assert one.node_selector == {"nodeSelectorTerms": [{"matchFields": [
        {"key": "metadata.name", "operator": "In", "values": [P5_NODE.name]}]}]}
    assert allocate_claims([gpus("ml/two", 2)], slices, P5_NODE, CLASSES, busy, Features()) is None
    # Two claims of one pod are allocated together: each alone fits, both do not.
    assert allocate_claims([gpus("ml/a"), gpus("ml/b")], slices, P5_NODE, CLASSES, busy, Features()) is None
    both = allocate_claims([gpus("ml/a"), gpus("ml/b")], slices, P5_NODE, CLASSES, held(*range(6)), Features())
    assert [[d.device for d in c.devices] for c in both or []] == [["gpu-6"], ["gpu-7"]]


def test_admin_access_allocations_hold_no_device_and_an_admin_request_ignores_holders() -> None:
    slices = p5_slices()
    admin_held = [AllocatedDevice("gpu.nvidia.com", P5_NODE.name, f"gpu-{i}", admin_access=True) for i in range(8)]
    assert allocate_claims([gpus("ml/all", 8)], slices, P5_NODE, CLASSES, admin_held, Features())
    monitor = gpus("ops/monitor", 8, adminAccess=True)
    (result,) = allocate_claims([monitor], slices, P5_NODE, CLASSES, held(*range(8)),
                                Features(admin_access=True)) or []
    assert all(d.admin_access for d in result.devices) and len(result.devices) == 8
    with pytest.raises(AllocationError, match="claim ops/monitor, request gpu: admin access is requested, but the "
                                              "feature is disabled"):
        allocate_claims([monitor], slices, P5_NODE, CLASSES, [], Features())


def test_a_cel_runtime_error_aborts_and_names_claim_request_selector_and_device() -> None:
    typo = gpus("ml/typo", selectors=("device.attributes['gpu.nvidia.com'].productname == 'x'",))
    with pytest.raises(AllocationError) as raised:
        allocate_claims([typo], p5_slices(), P5_NODE, CLASSES, [], Features())
    assert str(raised.value) == (f"claim ml/typo, request gpu: selector #0 on device gpu.nvidia.com/{P5_NODE.name}/"
                                 "gpu-0: CEL runtime error: no such key: productname")
    assert raised.value.claim == "ml/typo"
    broken = {"gpu.nvidia.com": ["device.driver =="]}
    with pytest.raises(AllocationError, match=r"^claim ml/a, request gpu: class gpu.nvidia.com: selector #0: CEL "
                                              "compile error"):
        allocate_claims([gpus("ml/a")], p5_slices(), P5_NODE, broken, [], Features())


def test_a_claim_the_api_server_would_not_store_is_refused() -> None:
    misplaced = claim_from_devices("ml/old", {"requests": [{"name": "gpu", "deviceClassName": "gpu.nvidia.com"}]})
    with pytest.raises(AllocationError, match="^claim ml/old: request gpu: deviceClassName sit on the request"):
        allocate_claims([misplaced], p5_slices(), P5_NODE, CLASSES, [], Features())


def _slice(name: str, devices: list[dict[str, Any]], pool: str = "pool", generation: int = 1, count: int = 1,
           counters: list[dict[str, Any]] | None = None, **selection: Any) -> ResourceSlice:
    spec = {"driver": "gpu.nvidia.com", "pool": {"name": pool, "generation": generation, "resourceSliceCount": count},
            "devices": devices, **selection}
    if counters:
        spec["sharedCounters"] = counters
    return parse_slice({"kind": "ResourceSlice", "metadata": {"name": name}, "spec": spec}, "test")


GPU = {"attributes": {"type": {"string": "gpu"}}}


def test_a_network_attached_slice_is_reached_through_the_node_s_labels_and_bounds_the_allocation() -> None:
    selector = {"nodeSelectorTerms": [{"matchExpressions": [
        {"key": "topology.kubernetes.io/zone", "operator": "In", "values": ["us-east-1a"]}]}]}
    shared = _slice("fabric", [{"name": "gpu-0", **GPU}], nodeSelector=selector)
    near = Node("n1", {"topology.kubernetes.io/zone": "us-east-1a"})
    (result,) = allocate_claims([gpus("ml/a")], [shared], near, CLASSES, [], Features()) or []
    assert result.node_selector == selector
    assert allocate_claims([gpus("ml/a")], [shared], Node("n2", {}), CLASSES, [], Features()) is None
    everywhere = _slice("any", [{"name": "gpu-0", **GPU}], allNodes=True)
    (result,) = allocate_claims([gpus("ml/a")], [everywhere], Node("n2", {}), CLASSES, [], Features()) or []
    assert result.node_selector is None
    by_name = {"nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "NotIn",
                                                       "values": ["n1"]}]}]}
    elsewhere = _slice("elsewhere", [{"name": "gpu-0", **GPU}], nodeSelector=by_name)
    assert allocate_claims([gpus("ml/a")], [elsewhere], near, CLASSES, [], Features()) is None
    two_terms = _slice("odd", [{"name": "gpu-0", **GPU}],
                       nodeSelector={"nodeSelectorTerms": [selector["nodeSelectorTerms"][0]] * 2})
    with pytest.raises(AllocationError, match="create NodeSelector for claim ml/a: unsupported "
                                              "ResourceSlice.NodeSelector with 2 terms"):
        allocate_claims([gpus("ml/a")], [two_terms], near, CLASSES, [], Features())


def test_only_the_newest_generation_counts_and_an_incomplete_pool_still_serves_an_exact_count() -> None:
    node = Node("n1", {})
    old = _slice("old", [{"name": "gpu-0", **GPU}, {"name": "gpu-1", **GPU}], nodeName="n1")
    new = _slice("new", [{"name": "gpu-0", **GPU}], generation=2, count=2, nodeName="n1")
    assert allocate_claims([gpus("ml/a", 2)], [old, new], node, CLASSES, [], Features()) is None
    (result,) = allocate_claims([gpus("ml/a")], [old, new], node, CLASSES, [], Features()) or []
    assert [d.device for d in result.devices] == ["gpu-0"]
    every = claim_from_devices("ml/all", {"requests": [{"name": "gpu", "exactly": {
        "deviceClassName": "gpu.nvidia.com", "allocationMode": "All"}}]})
    with pytest.raises(AllocationError, match="resource pool gpu.nvidia.com/pool is currently being updated"):
        allocate_claims([every], [old, new], node, CLASSES, [], Features())


MIG = {"attributes": {"type": {"string": "mig"}}}
COUNTERS = [{"name": "gpu-0-counters", "counters": {"memory": {"value": "8"}}}]


def _mig(name: str, memory: str, **extra: Any) -> dict[str, Any]:
    return {"name": name, **MIG, **extra,
            "consumesCounters": [{"counterSet": "gpu-0-counters", "counters": {"memory": {"value": memory}}}]}


def test_partitions_share_their_gpu_s_counters_only_with_the_gate_on() -> None:
    node = Node("n1", {})
    partitions = _slice("mig", [_mig("gpu-0-mig-4g", "4"), _mig("gpu-0-mig-4g-b", "4"), _mig("gpu-0-mig-7g", "7")],
                        counters=COUNTERS, nodeName="n1")
    two = gpus("ml/a", 2, klass="mig.nvidia.com")
    (result,) = allocate_claims([two], [partitions], node, CLASSES, [], Features(partitionable_devices=True)) or []
    assert [d.device for d in result.devices] == ["gpu-0-mig-4g", "gpu-0-mig-4g-b"]
    held_7g = [AllocatedDevice("gpu.nvidia.com", "pool", "gpu-0-mig-7g")]
    assert allocate_claims([gpus("ml/b", klass="mig.nvidia.com")], [partitions], node, CLASSES, held_7g,
                           Features(partitionable_devices=True)) is None
    assert allocate_claims([two], [partitions], node, CLASSES, [], Features()) is None


def test_a_tainted_partition_keeps_its_counters_taken_as_upstream_does() -> None:
    """allocateDevice takes the counters before it checks taints and does not give them back on that rejection
    (kubernetes/dynamic-resource-allocation@v0.34.9, unchanged on master): an untainted sibling that would fit
    alone is refused in the same search."""
    node = Node("n1", {})
    tainted = _mig("gpu-0-mig-a", "6", taints=[{"key": "nvidia.com/xid", "value": "79", "effect": "NoSchedule"}])
    partitions = _slice("mig", [tainted, _mig("gpu-0-mig-b", "6")], counters=COUNTERS, nodeName="n1")
    one = gpus("ml/a", klass="mig.nvidia.com")
    features = Features(partitionable_devices=True, device_taints=True)
    assert allocate_claims([one], [partitions], node, CLASSES, [], features) is None
    alone = _slice("mig", [_mig("gpu-0-mig-b", "6")], counters=COUNTERS, nodeName="n1")
    assert allocate_claims([one], [alone], node, CLASSES, [], features)
    (ignored,) = allocate_claims([one], [partitions], node, CLASSES, [], Features(partitionable_devices=True)) or []
    assert [d.device for d in ignored.devices] == ["gpu-0-mig-a"]  # DRADeviceTaints off: taints do not count


XID = {"key": "nvidia.com/gpu.xid", "value": "79", "effect": "NoExecute"}


@pytest.mark.parametrize("tolerations,allocated", [
    ([], False),
    ([{"key": "nvidia.com/gpu.xid", "operator": "Equal", "value": "79", "effect": "NoExecute"}], True),
    ([{"key": "nvidia.com/gpu.xid", "value": "79"}], True),  # no operator: Equal; no effect: any
    ([{"key": "nvidia.com/gpu.xid", "operator": "Exists", "tolerationSeconds": 300}], True),
    ([{"operator": "Exists"}], True),  # no key with Exists: every taint
    ([{"key": "nvidia.com/gpu.xid", "value": "48"}], False),
    ([{"key": "nvidia.com/gpu.xid", "operator": "Exists", "effect": "NoSchedule"}], False),
])
def test_a_request_takes_a_tainted_p5_gpu_only_if_it_tolerates_the_taint(tolerations: list[dict[str, Any]],
                                                                         allocated: bool) -> None:
    slices, busy = p5_slices({"gpu-7": [XID]}), held(*range(7))
    claim = gpus("ml/a", tolerations=tolerations)
    result = allocate_claims([claim], slices, P5_NODE, CLASSES, busy, Features(device_taints=True))
    assert ([d.device for d in result[0].devices] if result else None) == (["gpu-7"] if allocated else None)
    (ignored,) = allocate_claims([claim], slices, P5_NODE, CLASSES, busy, Features()) or []
    assert [d.device for d in ignored.devices] == ["gpu-7"]  # DRADeviceTaints off: taints do not count


def test_every_taint_of_a_device_must_be_tolerated() -> None:
    """Each NoSchedule or NoExecute taint is checked against the request's tolerations (upstream allTaintsTolerated,
    taintPreventsAllocation from 1.35)."""
    drain = {"key": "example.com/drain", "value": "", "effect": "NoSchedule"}
    slices, busy = p5_slices({"gpu-7": [XID, drain]}), held(*range(7))
    xid_only = gpus("ml/a", tolerations=[{"key": XID["key"], "operator": "Exists"}])
    assert allocate_claims([xid_only], slices, P5_NODE, CLASSES, busy, Features(device_taints=True)) is None
    both = gpus("ml/a", tolerations=[{"key": XID["key"], "operator": "Exists"},
                                     {"key": "example.com/drain", "operator": "Exists", "effect": "NoSchedule"}])
    assert allocate_claims([both], slices, P5_NODE, CLASSES, busy, Features(device_taints=True))


@pytest.mark.parametrize("effect", ["None", "PreferNoSchedule"])
def test_a_taint_whose_effect_prevents_no_allocation_is_ignored(effect: str) -> None:
    """1.35's `None` (informational) and effects the allocator does not know keep no request off the device
    (taintPreventsAllocation in kubernetes/dynamic-resource-allocation@v0.35.0); a NoSchedule one beside it does."""
    informational = {"key": "example.com/firmware", "value": "outdated", "effect": effect}
    slices, busy = p5_slices({"gpu-7": [informational]}), held(*range(7))
    (result,) = allocate_claims([gpus("ml/a")], slices, P5_NODE, CLASSES, busy, Features(device_taints=True)) or []
    assert [d.device for d in result.devices] == ["gpu-7"]
    both = p5_slices({"gpu-7": [informational, XID]})
    assert allocate_claims([gpus("ml/a")], both, P5_NODE, CLASSES, busy, Features(device_taints=True)) is None


def test_capacity_requests_on_p5_gpus_need_the_gate_and_must_fit_the_gpu() -> None:
    """A GPU allocated to one claim (no allowMultipleAllocations) still checks the amount asked against its
    capacity, and a capacity it does not have refuses it (upstream CmpRequestOverCapacity)."""
    slices, features = p5_slices(), Features(consumable_capacity=True)
    (fits,) = allocate_claims([gpus("ml/a", capacity={"requests": {"memory": "40Gi"}})], slices, P5_NODE, CLASSES,
                              [], features) or []
    assert [d.device for d in fits.devices] == ["gpu-0"] and not fits.devices[0].shared
    assert fits.devices[0].consumed_capacity == {}  # only shares record what they consume
    assert allocate_claims([gpus("ml/b", capacity={"requests": {"memory": "100Gi"}})], slices, P5_NODE, CLASSES,
                           [], features) is None
    assert allocate_claims([gpus("ml/c", capacity={"requests": {"cores": "1"}})], slices, P5_NODE, CLASSES,
                           [], features) is None
    with pytest.raises(AllocationError, match="has capacity requests, but the DRAConsumableCapacity feature is "
                                              "disabled"):
        allocate_claims([gpus("ml/a", capacity={"requests": {"memory": "40Gi"}})], slices, P5_NODE, CLASSES, [],
                        Features())


def _distinct(count: int) -> ResourceClaim:
    return claim_from_devices("ml/d", {
        "requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu.nvidia.com", "count": count}}],
        "constraints": [{"distinctAttribute": "gpu.nvidia.com/numa"}]})


def test_distinct_attribute_compares_values_with_the_last_device_of_a_request() -> None:
    """Values, as from 1.35 (1.34 compared pointers); one value is remembered per request name, as upstream."""
    node = Node("n1", {})

    def numa(name: str, value: int) -> dict[str, Any]:
        return {"name": name, "attributes": {"type": {"string": "gpu"}, "numa": {"int": value}}}

    same = _slice("s", [numa("gpu-0", 0), numa("gpu-1", 0)], nodeName="n1")
    assert allocate_claims([_distinct(2)], [same], node, CLASSES, [], ALL_ON) is None
    mixed = _slice("m", [numa("gpu-0", 0), numa("gpu-1", 1), numa("gpu-2", 0)], nodeName="n1")
    (result,) = allocate_claims([_distinct(3)], [mixed], node, CLASSES, [], ALL_ON) or []
    assert [d.device for d in result.devices] == ["gpu-0", "gpu-1", "gpu-2"]


def test_allow_multiple_allocations_shares_a_device_only_with_consumable_capacity() -> None:
    node = Node("n1", {})
    shared = _slice("s", [{"name": "gpu-0", **GPU, "allowMultipleAllocations": True}], nodeName="n1")
    pod = [gpus("ml/a"), gpus("ml/b")]
    results = allocate_claims(pod, [shared], node, CLASSES, [], Features(consumable_capacity=True)) or []
    assert [[(d.device, d.shared) for d in r.devices] for r in results] == [[("gpu-0", True)], [("gpu-0", True)]]
    assert allocate_claims(pod, [shared], node, CLASSES, [], Features()) is None


def test_shares_consume_capacity_rounded_up_by_the_policy_and_existing_shares_count() -> None:
    """MPS-style sharing: each share takes what it asks, rounded up to the policy's step; shares held by other
    claims (a shareID in their allocation) leave only the rest; with the gate off such a result holds the device."""
    node = Node("n1", {})
    policy = {"default": "10Gi", "validRange": {"min": "10Gi", "max": "80Gi", "step": "10Gi"}}
    shared = _slice("s", [{"name": "gpu-0", **GPU, "allowMultipleAllocations": True,
                           "capacity": {"memory": {"value": "80Gi", "requestPolicy": policy}}}], nodeName="n1")
    features = Features(consumable_capacity=True)
    ask = [gpus(f"ml/{name}", capacity={"requests": {"memory": "25Gi"}}) for name in "abc"]
    results = allocate_claims(ask[:2], [shared], node, CLASSES, [], features) or []
    assert [r.devices[0].consumed_capacity for r in results] == [{"memory": Decimal(30 * 2**30)}] * 2
    assert allocate_claims(ask, [shared], node, CLASSES, [], features) is None  # 3 x 30Gi > 80Gi
    (default,) = allocate_claims([gpus("ml/d")], [shared], node, CLASSES, [], features) or []
    assert default.devices[0].consumed_capacity == {"memory": Decimal(10 * 2**30)}
    other = [AllocatedDevice("gpu.nvidia.com", "pool", "gpu-0", share_id="5f0c", consumed_capacity={"memory": "60Gi"})]
    assert allocate_claims(ask[:1], [shared], node, CLASSES, other, features) is None  # 60Gi + 30Gi > 80Gi
    assert allocate_claims([gpus("ml/d")], [shared], node, CLASSES, other, features)
    assert allocate_claims([gpus("ml/d")], [shared], node, CLASSES, other, Features()) is None


def test_p5_a_request_for_more_gpus_than_are_free_is_refused_before_the_search() -> None:
    """6 of the p5's 8 GPUs with 3 held by other claims: upstream's search tries every order of the 5 free ones
    first (326 steps); gpu-dra sees at its first step that only 5 can be taken. A clock that ticks once per step
    stops the old search."""
    ticks = iter(range(1, 1_000))
    assert allocate_claims([gpus("ml/six", 6)], p5_slices(), P5_NODE, CLASSES, held(0, 1, 2), Features(),
                           deadline=3, clock=lambda: next(ticks)) is None
    ticks = iter(range(1, 1_000))
    (five,) = allocate_claims([gpus("ml/five", 5)], p5_slices(), P5_NODE, CLASSES, held(0, 1, 2), Features(),
                              deadline=10, clock=lambda: next(ticks)) or []
    assert [d.device for d in five.devices] == [f"gpu-{i}" for i in range(3, 8)]

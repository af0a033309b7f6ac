"""Shares are shares, counters are the pool's: what `gpu-dra explain` says, from files, of a 1.36 cluster's devices
allocated more than once (DRAConsumableCapacity) and of partitioned GPUs whose counter sets sit in a ResourceSlice of
their own (DRAPartitionableDevices), both beta and on by default from 1.36."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml

from .test_cli import gpu_dra

NODE = "gpu-node-1"


def _slice(name: str, spec: dict[str, Any], count: int = 1) -> dict[str, Any]:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": name},
            "spec": {"driver": "gpu.nvidia.com", "pool": {"name": NODE, "generation": 1, "resourceSliceCount": count},
                     **spec}}


def _claim(name: str, request: dict[str, Any], allocated: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    claim: dict[str, Any] = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
                             "metadata": {"name": name, "namespace": "ml"},
                             "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {
                                 "deviceClassName": "gpu.nvidia.com", **request}}]}}}
    if allocated is not None:
        claim["status"] = {"allocation": {"devices": {"results": allocated}}}
    return claim


def _explain(tmp_path: Path, objects: list[dict[str, Any]], claim: str, version: str = "1.36") -> dict[str, Any]:
    path = tmp_path / "cluster.yaml"
    path.write_text(yaml.safe_dump_all(objects))
    result = gpu_dra("explain", str(path), "--claim", claim, "--kubernetes-version", version, "--format", "json")
    assert result.returncode in (0, 1), result.stderr
    (report,) = [r for r in json.loads(result.stdout)["claims"] if r["claim"] == claim]
    return report


SHARED_GPU = _slice("shared", {"nodeName": NODE, "devices": [{
    "name": "gpu-0", "allowMultipleAllocations": True,
    "attributes": {"type": {"string": "gpu"}},
    "capacity": {"memory": {"value": "40Gi"}}}]})


def _share_of(gi: int) -> dict[str, Any]:
    return {"request": "gpu", "driver": "gpu.nvidia.com", "pool": NODE, "device": "gpu-0",
            "shareID": "8f0c8a4e-5c55-4a8e-9d53-2b1f6f0e0a01", "consumedCapacity": {"memory": f"{gi}Gi"}}


def test_a_share_held_by_another_claim_leaves_the_rest_of_the_device(tmp_path: Path) -> None:
    """30Gi of a 40Gi GPU held as a share: 10Gi more fits beside it, 20Gi does not. Read as the whole device held,
    the 10Gi claim was reported unschedulable."""
    held = _claim("inference-a", {"capacity": {"requests": {"memory": "30Gi"}}}, [_share_of(30)])
    small = _claim("inference-b", {"capacity": {"requests": {"memory": "10Gi"}}})
    large = _claim("inference-c", {"capacity": {"requests": {"memory": "20Gi"}}})
    objects = [SHARED_GPU, held, small, large]
    fits = _explain(tmp_path, objects, "ml/inference-b")
    assert fits["allocatable"], fits["reason"]
    assert fits["solution"]["devices"] == [{"request": "gpu", "devices": ["gpu-0"]}]
    assert not _explain(tmp_path, objects, "ml/inference-c")["allocatable"]


def test_a_device_held_whole_is_still_taken(tmp_path: Path) -> None:
    """The same GPU allocated without a shareID (a claim that took it whole) leaves nothing."""
    whole = {key: value for key, value in _share_of(30).items() if key not in ("shareID", "consumedCapacity")}
    objects = [SHARED_GPU, _claim("trainer", {}, [whole]),
               _claim("inference-b", {"capacity": {"requests": {"memory": "10Gi"}}})]
    report = _explain(tmp_path, objects, "ml/inference-b")
    assert not report["allocatable"]
    assert "allocated to ml/trainer" in report["reason"], report["reason"]


def _partitioned(counter_gi: int) -> list[dict[str, Any]]:
    """One 80Gi GPU's memory as a counter set in its own slice (count 2), and two 40Gi partitions and the whole GPU
    consuming it in the other, as a 1.36 driver publishes them."""
    counters = _slice("counters", {"nodeName": NODE, "sharedCounters": [
        {"name": "gpu-0-counters", "counters": {"memory": {"value": f"{counter_gi}Gi"}}}]}, count=2)

    def device(name: str, gi: int) -> dict[str, Any]:
        return {"name": name, "attributes": {"type": {"string": "gpu"}},
                "capacity": {"memory": {"value": f"{gi}Gi"}},
                "consumesCounters": [{"counterSet": "gpu-0-counters", "counters": {"memory": {"value": f"{gi}Gi"}}}]}

    devices = _slice("devices", {"nodeName": NODE, "devices": [device("gpu-0-part-0", 40), device("gpu-0-part-1", 40),
                                                                 device("gpu-0", 80)]}, count=2)
    return [counters, devices]


def _part(name: str) -> dict[str, Any]:
    return {"request": "gpu", "driver": "gpu.nvidia.com", "pool": NODE, "device": name}


def test_counter_sets_in_their_own_slice_count_at_1_36(tmp_path: Path) -> None:
    """With one partition held, the whole GPU's counters are half used: the other partition fits, the whole GPU
    does not; with both partitions held nothing fits. Read per slice, the devices' slice had no counter set and
    every device looked free."""
    one_held = [*_partitioned(80), _claim("a", {}, [_part("gpu-0-part-0")])]
    whole = _claim("whole", {"selectors": [{"cel": {"expression": 'device.capacity["gpu.nvidia.com"].memory'
                                                                  '.compareTo(quantity("80Gi")) >= 0'}}]})
    part = _claim("part", {})
    report = _explain(tmp_path, [*one_held, whole, part], "ml/part")
    assert report["allocatable"] and report["solution"]["devices"] == [{"request": "gpu", "devices": ["gpu-0-part-1"]}]
    assert not _explain(tmp_path, [*one_held, whole, part], "ml/whole")["allocatable"]
    both_held = [*_partitioned(80), _claim("a", {}, [_part("gpu-0-part-0"), _part("gpu-0-part-1")]), part]
    assert not _explain(tmp_path, both_held, "ml/part")["allocatable"]


def test_a_device_using_a_counter_set_its_pool_lacks_makes_the_pool_invalid(tmp_path: Path) -> None:
    """A device consuming an unknown counter set: from 1.35 the pool is invalid, the node fails with the
    scheduler's words, and explain names the fault."""
    objects = [*_partitioned(80), _claim("part", {})]
    objects[1]["spec"]["devices"][0]["consumesCounters"][0]["counterSet"] = "gpu-9-counters"
    report = _explain(tmp_path, objects, "ml/part")
    assert not report["allocatable"]
    assert "invalid resource pools were encountered" in report["reason"], report["reason"]
    assert "counter set gpu-9-counters not found" in report["reason"], report["reason"]

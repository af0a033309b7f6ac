"""The scheduler runs NodeAffinity and TaintToleration before DynamicResources: a selector is evaluated only on the
devices of nodes the pod may use, so a CEL runtime error on another node's device does not stop the pod (while a
claim explained alone, with no pod, is still aborted by it, as the allocator aborts on any device it evaluates)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from .test_cli import gpu_dra

DUMPS = Path(__file__).resolve().parent / "data" / "resourceslices"
P5 = DUMPS / "h100-80gb-hbm3_eks-p5_v25.12.0.yaml"  # node ip-100-64-147-149.ec2.internal, Hopper
GB200 = DUMPS / "gb200_oke_bm-gpu-gb200-v3.4.yaml"  # node 10.140.65.248, Blackwell
# True on Blackwell devices; on Hopper devices the right side runs and raises (memory is a capacity, not an attribute)
SELECTOR = ("device.attributes['gpu.nvidia.com'].architecture == 'Blackwell' || "
            "device.attributes['gpu.nvidia.com'].memory > 0")


def _node(name: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}}}


def _inputs(tmp_path: Path, pinned_to: str | None) -> Path:
    pod: dict[str, Any] = {
        "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "trainer", "namespace": "ml"},
        "spec": {"resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "blackwell"}],
                 "containers": [{"name": "c", "image": "x", "resources": {"claims": [{"name": "gpu"}]}}]}}
    if pinned_to:
        pod["spec"]["nodeSelector"] = {"kubernetes.io/hostname": pinned_to}
    template = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
                "metadata": {"name": "blackwell", "namespace": "ml"},
                "spec": {"spec": {"devices": {"requests": [{"name": "gpu", "exactly": {
                    "deviceClassName": "gpu.nvidia.com", "selectors": [{"cel": {"expression": SELECTOR}}]}}]}}}}
    path = tmp_path / "pod.yaml"
    path.write_text(yaml.safe_dump_all([pod, template, _node("ip-100-64-147-149.ec2.internal"),
                                        _node("10.140.65.248")]))
    return path


def test_an_error_on_a_node_the_pod_may_not_use_does_not_stop_it(tmp_path: Path) -> None:
    result = gpu_dra("explain", str(P5), str(GB200), str(_inputs(tmp_path, "10.140.65.248")), "--pod", "ml/trainer")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "pod ml/trainer (Pod): allocatable on 10.140.65.248" in result.stdout


def test_an_error_on_a_node_the_pod_may_use_stops_it(tmp_path: Path) -> None:
    result = gpu_dra("explain", str(P5), str(GB200), str(_inputs(tmp_path, None)), "--pod", "ml/trainer")
    assert result.returncode == 1, result.stdout + result.stderr
    assert "pod ml/trainer (Pod): NOT allocatable" in result.stdout and "CEL runtime error" in result.stdout


def test_an_error_on_a_device_every_node_reaches_stops_the_pod_wherever_it_is_pinned(tmp_path: Path) -> None:
    """A network-attached device (`allNodes`) is in reach of the node the pod is pinned to: its error counts."""
    fabric = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": "fabric"},
              "spec": {"driver": "gpu.nvidia.com", "pool": {"name": "fabric", "generation": 1,
                                                            "resourceSliceCount": 1},
                       "allNodes": True, "devices": [{"name": "gpu-0", "attributes": {
                           "type": {"string": "gpu"}, "architecture": {"string": "Hopper"}}}]}}
    shared = tmp_path / "fabric.yaml"
    shared.write_text(yaml.safe_dump(fabric))
    result = gpu_dra("explain", str(GB200), str(shared), str(_inputs(tmp_path, "10.140.65.248")), "--pod",
                     "ml/trainer")
    assert result.returncode == 1, result.stdout + result.stderr
    assert "pod ml/trainer (Pod): NOT allocatable" in result.stdout and "CEL runtime error" in result.stdout

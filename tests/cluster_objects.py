"""Kubernetes objects as a list request returns them (items carry no apiVersion or kind), for the fake API server
(tests/fake_apiserver.py) in tests and in `make bench`: Nodes, Pods, ResourceClaims and their templates, Events. A
pod's template claim is named by the resourceclaim controller `<pod>-<entry>-<5 random characters>` and recorded in
status.resourceClaimStatuses; FailedScheduling Events are core/v1 Events with `count` and `lastTimestamp`
(kubernetes/api@v0.34.0 core/v1 types.go)."""

from __future__ import annotations

from typing import Any

GPU_CLASS = {"metadata": {"name": "gpu.nvidia.com"}, "spec": {"selectors": [{"cel": {"expression": (
    "device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'gpu'")}}]}}
GPU_TAINT = {"key": "nvidia.com/gpu", "value": "true", "effect": "NoSchedule"}
TOLERATES_GPU = [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}]


def node(name: str, taints: list[dict[str, Any]]) -> dict[str, Any]:
    return {"metadata": {"name": name, "labels": {
                "kubernetes.io/hostname": name, "node.kubernetes.io/instance-type": "p5.48xlarge",
                "nvidia.com/gpu.present": "true", "gpu-dra.io/allocation": "dra"}},
            "spec": {"taints": taints},
            "status": {"allocatable": {"cpu": "191450m", "memory": "2043246096Ki", "pods": "100"},
                       "nodeInfo": {"kubeletVersion": "v1.35.2-eks-3cfe0ce"}}}


def template(name: str, count: int) -> dict[str, Any]:
    return {"metadata": {"name": name, "namespace": "ml"}, "spec": {"spec": {"devices": {"requests": [
        {"name": "gpu", "exactly": {"deviceClassName": "gpu.nvidia.com", "allocationMode": "ExactCount",
                                    "count": count}}]}}}}


def pod(name: str, template: str, tolerations: list[dict[str, Any]] | None = None, phase: str = "Pending",
        node: str | None = None, made: str | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {"containers": [{"name": "main", "image": "nvcr.io/nvidia/pytorch:25.01-py3",
                                            "resources": {"claims": [{"name": "gpus"}]}}],
                            "resourceClaims": [{"name": "gpus", "resourceClaimTemplateName": template}],
                            "tolerations": tolerations or [], "schedulerName": "default-scheduler"}
    if node:
        spec["nodeName"] = node
    status: dict[str, Any] = {"phase": phase, "qosClass": "BestEffort"}
    if made:
        status["resourceClaimStatuses"] = [{"name": "gpus", "resourceClaimName": made}]
    return {"metadata": {"name": name, "namespace": "ml", "uid": f"uid-{name}"}, "spec": spec, "status": status}


def claim(name: str, count: int, devices: list[str], node: str, pod: str | None) -> dict[str, Any]:
    """A claim the controller made from a template: the template's spec, and its allocation once it has one."""
    made_claim: dict[str, Any] = {"metadata": {"name": name, "namespace": "ml"}, "spec": {"devices": {"requests": [
        {"name": "gpu", "exactly": {"deviceClassName": "gpu.nvidia.com", "allocationMode": "ExactCount",
                                    "count": count}}]}}}
    if devices:
        made_claim["status"] = {"allocation": {"devices": {"results": [
            {"request": "gpu", "driver": "gpu.nvidia.com", "pool": node, "device": d} for d in devices]}}}
        if pod:
            made_claim["status"]["reservedFor"] = [{"resource": "pods", "name": pod, "uid": f"uid-{pod}"}]
    return made_claim


def event(pod: str, message: str, count: int, last: str) -> dict[str, Any]:
    return {"metadata": {"name": f"{pod}.18c2a5f0e2b1c3d4", "namespace": "ml"},
            "involvedObject": {"kind": "Pod", "namespace": "ml", "name": pod, "uid": f"uid-{pod}"},
            "reason": "FailedScheduling", "message": message, "source": {"component": "default-scheduler"},
            "count": count, "firstTimestamp": "2026-12-01T09:00:00Z", "lastTimestamp": last, "type": "Warning",
            "reportingComponent": "default-scheduler"}

"""A minimal valid stack's resources in the engine's shape (camelCase props, numbers as floats), and helpers to
change one field of it and run every rule: the happy path the policy tests mutate, one field per case.

By default the stack is a production one (so eks-hardening and no-alpha-in-production are active) on EKS 1.34: an
encrypted, private, protected cluster; a protected L40S node group for DRA and one still on NVIDIA's device plugin,
each plugin's chart kept off the other's nodes; the pinned DRA driver chart; a DeviceClass; an `inference` team with
a quota and a claim template for that class; an `ops` team labelled for admin access whose template uses it.
"""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any

from gpu_dra.core import policy
from gpu_dra.core.findings import Finding
from gpu_dra.core.policy import Resource
from gpu_dra.core.render.manifests import ADMIN_ACCESS_LABEL

from .conftest import named

STACK = "prod"
# 92 days before the end of EKS standard support for 1.34 (2026-12-02): outside the 90-day warning window.
TODAY = "2026-09-01"
CONFIG: dict[str, Any] = {"today": TODAY}

CLUSTER = "eks:index:Cluster"
NODE_GROUP = "eks:index:ManagedNodeGroup"
CHART = "kubernetes:helm.sh/v4:Chart"
NAMESPACE = "kubernetes:core/v1:Namespace"
QUOTA = "kubernetes:core/v1:ResourceQuota"
DEVICE_CLASS = "kubernetes:resource.k8s.io/v1:DeviceClass"
TEMPLATE = "kubernetes:resource.k8s.io/v1:ResourceClaimTemplate"
LAUNCH_TEMPLATE = "aws:ec2/launchTemplate:LaunchTemplate"
DAEMON_SET = "kubernetes:apps/v1:DaemonSet"

GPU_TAINT = {"key": "nvidia.com/gpu", "value": "true", "effect": "NO_SCHEDULE"}
GPU_TOLERATION = {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}
L40S_SELECTOR = ("device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].productName.matches('L40S')"
                 " && device.attributes['gpu.nvidia.com'].type == 'gpu'")


def urn(type_: str, name: str) -> str:
    return f"urn:pulumi:{STACK}::gpu-dra::{type_}::{name}"


def resource(type_: str, name: str, props: Mapping[str, Any], protect: bool = False) -> Resource:
    return Resource(type_, name, urn(type_, name), copy.deepcopy(dict(props)), protect)


def _meta(name: str, namespace: str | None = None, labels: Mapping[str, str] | None = None) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "labels": {"app.kubernetes.io/managed-by": "gpu-dra", **(labels or {})}}
    if namespace:
        meta["namespace"] = namespace
    return meta


def _template(namespace: str, name: str, request: Mapping[str, Any]) -> dict[str, Any]:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate", "metadata": _meta(name, namespace),
            "spec": {"spec": {"devices": {"requests": [dict(request)]}}}}


def _quota(namespace: str, hard: Mapping[str, str]) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ResourceQuota", "metadata": _meta("gpu-dra-devices", namespace),
            "spec": {"hard": dict(hard)}}


def happy_resources(environment: str = "prod", kubernetes_version: str = "1.34") -> list[Resource]:
    """Resources every rule passes: each test changes one field of them."""
    return [
        resource(CLUSTER, "gpu-prod", {
            "name": "gpu-prod", "version": kubernetes_version, "endpointPublicAccess": False,
            "endpointPrivateAccess": True, "encryptionConfigKeyArn": "arn:aws:kms:us-east-1:123456789012:key/secrets",
            "tags": {"gpu-dra.io/environment": environment, "gpu-dra.io/stack": STACK}}, protect=True),
        resource(LAUNCH_TEMPLATE, "gpu-prod-l40s", {"metadataOptions": {"httpTokens": "required",
                                                                        "httpPutResponseHopLimit": 2.0}}),
        resource(NODE_GROUP, "gpu-prod-l40s", {
            "version": kubernetes_version, "instanceTypes": ["g6e.xlarge"], "amiType": "AL2023_x86_64_NVIDIA",
            "scalingConfig": {"minSize": 0.0, "desiredSize": 1.0, "maxSize": 2.0},
            "labels": {"nvidia.com/gpu.present": "true", "gpu-dra.io/node-group": "l40s",
                       "gpu-dra.io/allocation": "dra"},
            "taints": [dict(GPU_TAINT)]}, protect=True),
        # A group still on NVIDIA's device plugin during migration: no DRA label, no GPU taint.
        resource(NODE_GROUP, "gpu-prod-legacy-a10g", {
            "version": kubernetes_version, "instanceTypes": ["g5.xlarge"], "amiType": "AL2023_x86_64_NVIDIA",
            "scalingConfig": {"minSize": 0.0, "desiredSize": 1.0, "maxSize": 2.0},
            "labels": {"gpu-dra.io/node-group": "legacy-a10g", "gpu-dra.io/allocation": "device-plugin",
                       "gpu-dra.io/device-plugin": "chart"},
            "taints": []}, protect=True),
        resource(CHART, "nvidia-dra-driver", {
            "chart": "oci://registry.k8s.io/dra-driver-nvidia/charts/dra-driver-nvidia-gpu", "version": "0.4.1",
            "namespace": "nvidia-dra-driver",
            "values": {"nvidiaDriverRoot": "/", "gpuResourcesEnabledOverride": True,
                       "resourceApiVersion": "resource.k8s.io/v1",
                       "resources": {"gpus": {"enabled": True}, "computeDomains": {"enabled": False}},
                       "kubeletPlugin": {"nodeSelector": {"nvidia.com/gpu.present": "true",
                                                          "gpu-dra.io/allocation": "dra"},
                                         "tolerations": [dict(GPU_TOLERATION)]}}}),
        resource(CHART, "nvidia-device-plugin", {
            "chart": "nvidia-device-plugin", "version": "0.18.2", "namespace": "nvidia-dra-driver",
            "repositoryOpts": {"repo": "https://nvidia.github.io/k8s-device-plugin"},
            "values": {"nvidiaDriverRoot": "/",
                       "nodeSelector": {"gpu-dra.io/allocation": "device-plugin", "gpu-dra.io/device-plugin": "chart"},
                       "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
                           "nodeSelectorTerms": [{"matchExpressions": [{
                               "key": "gpu-dra.io/allocation", "operator": "In", "values": ["device-plugin"]}]}]}}},
                       "tolerations": [dict(GPU_TOLERATION)]}}),
        resource(DEVICE_CLASS, "deviceclass-gpu-l40s", {
            "apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": _meta("gpu-l40s"),
            "spec": {"selectors": [{"cel": {"expression": L40S_SELECTOR}}]}}),
        resource(NAMESPACE, "inference-namespace", {"apiVersion": "v1", "kind": "Namespace",
                                                    "metadata": _meta("inference", labels={"team": "inference"})}),
        resource(QUOTA, "inference-quota", _quota("inference", {
            "count/resourceclaims.resource.k8s.io": "16", "gpu-l40s.deviceclass.resource.k8s.io/devices": "4"})),
        resource(TEMPLATE, "inference.l40s", _template("inference", "l40s", {
            "name": "gpu", "exactly": {"deviceClassName": "gpu-l40s", "allocationMode": "ExactCount",
                                       "count": 1.0}})),
        resource(NAMESPACE, "ops-namespace", {"apiVersion": "v1", "kind": "Namespace", "metadata": _meta(
            "gpu-ops", labels={"team": "platform", ADMIN_ACCESS_LABEL: "true"})}),
        resource(QUOTA, "ops-quota", _quota("gpu-ops", {
            "count/resourceclaims.resource.k8s.io": "4", "gpu.nvidia.com.deviceclass.resource.k8s.io/devices": "8"})),
        resource(TEMPLATE, "ops.all-gpus-monitoring", _template("gpu-ops", "all-gpus-monitoring", {
            "name": "gpus", "exactly": {"deviceClassName": "gpu.nvidia.com", "allocationMode": "All",
                                        "adminAccess": True}})),
    ]


# ------------------------------------------------------------------------------------------------ mutations

DELETE = object()  # as a value: remove the key


def _step(node: Any, segment: str) -> Any:
    """One path segment: a mapping key, or `[x]` for the list entry whose name (or taint/toleration key) is x."""
    if segment.startswith("[") and segment.endswith("]"):
        return named(node, segment[1:-1])
    return node[segment]


def find(resources: Sequence[Resource], target: str) -> Resource:
    """The resource `Kind/name`: the last part of its Pulumi type and its Pulumi name, e.g. Chart/nvidia-dra-driver."""
    kind, _, name = target.partition("/")
    found = [r for r in resources if r.type.rsplit(":", 1)[-1] == kind and r.name == name]
    if len(found) != 1:
        raise KeyError(f"{len(found)} resources {target!r}")
    return found[0]


def mutate(resources: Sequence[Resource], target: str, path: Sequence[str] = (), value: Any = DELETE, *,
           protect: bool | None = None) -> list[Resource]:
    """A copy of `resources` with one field of `target` set to `value` (or removed with DELETE), or its protect flag
    changed. Missing mappings along the path are created."""
    old = find(resources, target)
    props = copy.deepcopy(dict(old.props))
    if path:
        node: Any = props
        for segment in path[:-1]:
            if not (segment.startswith("[") or segment in node):
                node[segment] = {}
            node = _step(node, segment)
        if value is DELETE:
            del node[path[-1]]
        else:
            node[path[-1]] = copy.deepcopy(value)
    new = dataclasses.replace(old, props=props, protect=old.protect if protect is None else protect)
    return [new if r is old else r for r in resources]


def remove(resources: Sequence[Resource], target: str) -> list[Resource]:
    """A copy of `resources` without `target`."""
    old = find(resources, target)
    return [r for r in resources if r is not old]


# ------------------------------------------------------------------------------------------------ running rules


def run_rules(resources: Sequence[Resource], config: Mapping[str, Any] | None = None) -> dict[str, list[Finding]]:
    """Every rule of `policy.RULES` on the resources, as gpu_dra.policypack runs them: {rule id: findings}, silent
    rules left out."""
    resources = list(resources)
    context = policy.context_from(resources, {**CONFIG, **(config or {})})
    found = {rule.name: rule.run(resources, context) for rule in policy.RULES}
    return {name: findings for name, findings in found.items() if findings}


def violations(resources: Sequence[Resource], config: Mapping[str, Any] | None = None) -> dict[str, list[str]]:
    """{rule id: messages} of every rule that fires."""
    return {rule: [f.message for f in findings] for rule, findings in run_rules(resources, config).items()}

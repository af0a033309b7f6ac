"""A minimal valid stack as the program registers it (component inputs, camelCase, numbers as floats), and helpers
to change one field of it and run every rule the way the Pulumi engine runs the pack: the registrations become the
engine's requests (gpu_dra.core.policy.engine: remote components with no inputs, their children, outputs), and
pulumi-policy's analyzer service answers them with the pack's policies (gpu_dra.cli.check.analyze). The happy path
the policy tests mutate, one field per case.

By default the stack is a production one (so eks-hardening and no-alpha-in-production are active) on EKS 1.34: an
encrypted, private, protected cluster; a protected L40S node group for DRA and one still on NVIDIA's device plugin,
each plugin's chart kept off the other's nodes (both at desired size 1: a DRA group at 0 gets no node); the pinned
DRA driver chart; a DeviceClass for whole GPUs; an `inference` team with a quota and a claim template for that class;
an `ops` team the stack grants admin access (its namespace labelled for it) whose template uses it, its quota one
`All` claim's worth (32).
The pack config is derived from the registrations as `gpu-dra check --pack-config` derives it from a stack.
"""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any

from gpu_dra.cli import check
from gpu_dra.cli.offline import mock_outputs
from gpu_dra.core import policy
from gpu_dra.core.facts.target import Target
from gpu_dra.core.findings import Finding
from gpu_dra.core.policy.engine import EngineResource, Registered, engine_view
from gpu_dra.core.render.manifests import ADMIN_ACCESS_LABEL

from .conftest import named

STACK = "prod"
# 92 days before the end of EKS standard support for 1.34 (2026-12-02): outside the 90-day warning window.
TODAY = "2026-09-01"
# A workload a team names that needs the device plugin: 1 pod x 1 GPU fits the happy stack's legacy-a10g group.
LEGACY_WORKLOAD = {"workload": "CronJob gpu-ops/gpu-diag", "team": "ops", "teamFile": "stacks/teams/ops.yaml",
                   "line": 29.0, "file": "workloads/ops/gpu-diag.yaml", "pods": 1.0, "gpus": 1.0, "other": []}
# The stack grants the ops team admin access (gpu-dra:teams.ops.admin), and no team file claims a platform key.
CONFIG: dict[str, Any] = {"today": TODAY, "legacyWorkloads": [LEGACY_WORKLOAD], "adminNamespaces": ["gpu-ops"],
                          # the base of the change hosted the same teams (gpu-dra check --base)
                          "namespacesBefore": [
                              {"team": "inference", "namespace": "inference", "templates": ["l40s"], "quota": True},
                              {"team": "ops", "namespace": "gpu-ops", "templates": [], "quota": False}]}

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
# What the shorthand `match: {migProfiles: [1g.10gb]}` compiles to.
MIG_SELECTOR = ("device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'mig' && "
                "device.attributes['gpu.nvidia.com'].profile in ['1g.10gb']")


def urn(type_: str, name: str) -> str:
    return f"urn:pulumi:{STACK}::gpu-dra::{type_}::{name}"


def resource(type_: str, name: str, props: Mapping[str, Any], protect: bool = False) -> Registered:
    """A registration as the mock run records it: its inputs, and the outputs the mocks invent."""
    inputs = copy.deepcopy(dict(props))
    return Registered(type_, name, urn(type_, name), "", protect, inputs, mock_outputs(type_, name, inputs))


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


def device_class(name: str, *expressions: str) -> Registered:
    """A stack DeviceClass `name` with these CEL selectors, as the program registers one."""
    return resource(DEVICE_CLASS, f"deviceclass-{name}", {
        "apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": _meta(name),
        "spec": {"selectors": [{"cel": {"expression": e}} for e in expressions]}})


def happy_resources(environment: str = "prod", kubernetes_version: str = "1.34") -> list[Registered]:
    """Resources every rule passes: each test changes one field of them."""
    return [
        resource(CLUSTER, "gpu-prod", {
            "name": "gpu-prod", "version": kubernetes_version, "endpointPublicAccess": False,
            "endpointPrivateAccess": True, "encryptionConfigKeyArn": "arn:aws:kms:us-east-1:123456789012:key/secrets",
            "tags": {"gpu-dra.io/environment": environment, "gpu-dra.io/stack": STACK}}, protect=True),
        resource(LAUNCH_TEMPLATE, "gpu-prod-l40s", {"metadataOptions": {"httpTokens": "required",
                                                                        "httpPutResponseHopLimit": 2.0}}),
        resource(NODE_GROUP, "gpu-prod-l40s", {
            "cluster": urn(CLUSTER, "gpu-prod"), "nodeGroupNamePrefix": "gpu-prod-l40s-",
            "launchTemplate": {"id": "gpu-prod-l40s-id", "version": "1"},
            "version": kubernetes_version, "instanceTypes": ["g6e.xlarge"], "amiType": "AL2023_x86_64_NVIDIA",
            "scalingConfig": {"minSize": 0.0, "desiredSize": 1.0, "maxSize": 2.0},
            "labels": {"nvidia.com/gpu.present": "true", "gpu-dra.io/node-group": "l40s",
                       "gpu-dra.io/allocation": "dra"},
            "taints": [dict(GPU_TAINT)]}, protect=True),
        # A group still on NVIDIA's device plugin during migration: no DRA label, no GPU taint.
        resource(NODE_GROUP, "gpu-prod-legacy-a10g", {
            "cluster": urn(CLUSTER, "gpu-prod"), "nodeGroupNamePrefix": "gpu-prod-legacy-a10g-",
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
        # An allocationMode All claim is charged 32 devices (AllocationResultsMaxSize), however many the node has.
        resource(QUOTA, "ops-quota", _quota("gpu-ops", {
            "count/resourceclaims.resource.k8s.io": "4", "gpu.nvidia.com.deviceclass.resource.k8s.io/devices": "32"})),
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


def find(resources: Sequence[Any], target: str) -> Any:
    """The registration or engine resource `Kind/name`: the last part of its Pulumi type and its Pulumi name, e.g.
    Chart/nvidia-dra-driver, NodeGroup/gpu-prod-l40s (the child pulumi-eks registers)."""
    kind, _, name = target.partition("/")
    found = [r for r in resources if r.type.rsplit(":", 1)[-1] == kind and r.name == name]
    if len(found) != 1:
        raise KeyError(f"{len(found)} resources {target!r}")
    return found[0]


def mutate(resources: Sequence[Registered], target: str, path: Sequence[str] = (), value: Any = DELETE, *,
           protect: bool | None = None) -> list[Registered]:
    """A copy of `resources` with one input of `target` set to `value` (or removed with DELETE), or its protect flag
    changed. Missing mappings along the path are created; the mocks' outputs follow the inputs."""
    old = find(resources, target)
    props = copy.deepcopy(dict(old.inputs))
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
    new = dataclasses.replace(old, inputs=props, outputs=mock_outputs(old.type, old.name, props),
                              protect=old.protect if protect is None else protect)
    return [new if r is old else r for r in resources]


def add(resources: Sequence[Registered], *more: Registered) -> list[Registered]:
    """A copy of `resources` with `more` registered after them."""
    return [*resources, *more]


def remove(resources: Sequence[Registered], target: str) -> list[Registered]:
    """A copy of `resources` without `target`."""
    old = find(resources, target)
    return [r for r in resources if r is not old]


# ------------------------------------------------------------------------------------------------ running rules


def _dra_chart(resources: Sequence[Registered]) -> Registered | None:
    return next((r for r in resources if r.type == CHART and r.name == "nvidia-dra-driver"), None)


def pack_config_of(resources: Sequence[Registered], overrides: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The pack config `gpu-dra check --stack S --pack-config` would write for a stack declaring these resources."""
    cluster = next(r for r in resources if r.type == CLUSTER)
    chart = _dra_chart(resources)
    values = dict(chart.inputs.get("values") or {}) if chart else {}
    context: dict[str, Any] = {
        "kubernetesVersion": cluster.inputs.get("version", "1.34"), "platform": "eks",
        "environment": (cluster.inputs.get("tags") or {}).get("gpu-dra.io/environment", "dev"),
        "chart": str(chart.inputs.get("chart", "")).rsplit("/", 1)[-1] if chart else "dra-driver-nvidia-gpu",
        "chartVersion": str(chart.inputs.get("version", "")) if chart else "0.4.1",
        "driverGates": dict(values.get("featureGates") or {}),
        "chartValues": {k: values[k] for k in ("gpuResourcesEnabledOverride", "nvidiaDriverRoot") if k in values},
        "deviceClasses": {r.inputs["metadata"]["name"]: [s["cel"]["expression"] for s in r.inputs["spec"]["selectors"]]
                          for r in resources if r.type == DEVICE_CLASS},
        **CONFIG, **(overrides or {}),
    }
    return {rule.name: {"enforcementLevel": policy.default_enforcement(rule, context["environment"]), **context}
            for rule in policy.RULES}


def engine(resources: Sequence[Registered], first_preview: bool = False) -> list[EngineResource]:
    """What the engine sends for these registrations, the program's chart transform applied where it registers it
    (DRAExtendedResource off)."""
    cluster = next(r for r in resources if r.type == CLUSTER)
    transform = not Target(str(cluster.inputs.get("version", "1.34"))).enabled("DRAExtendedResource")
    return check.transformed(engine_view(resources, first_preview), transform)


def analyze(resources: Sequence[Registered], config: Mapping[str, Any] | None = None,
            first_preview: bool = False) -> check.Analysis:
    """Every policy of the pack on these resources, through pulumi-policy's analyzer service."""
    configured = pack_config_of(resources, config)
    environment = next(iter(configured.values()))["environment"]
    return check.analyze(engine(resources, first_preview), configured, environment)


def run_rules(resources: Sequence[Registered], config: Mapping[str, Any] | None = None,
              first_preview: bool = False) -> dict[str, list[Finding]]:
    """{rule id: findings} of the rules that found something (violations and checks not judged)."""
    found: dict[str, list[Finding]] = {}
    for finding in analyze(resources, config, first_preview).findings:
        found.setdefault(finding.rule, []).append(finding)
    return found


def violations(resources: Sequence[Registered], config: Mapping[str, Any] | None = None) -> dict[str, list[str]]:
    """{rule id: messages} of every rule that fires."""
    return {rule: [f.message for f in findings] for rule, findings in run_rules(resources, config).items()}

"""NVIDIA's DRA driver chart and, during migration, NVIDIA's device plugin chart: versions, gates, values.

Values are derived from the stack (node groups, driver location, config), never hand-typed per stack.
Sources: the chart values files (kubernetes-sigs/dra-driver-nvidia-gpu@v0.4.1 and NVIDIA/k8s-dra-driver-gpu@v25.12.0,
deployments/helm/<chart>/values.yaml; vendored in tests/data/chart-values/), pkg/featuregates/featuregates.go and the
chart's templates/validation.yaml of those repositories (docs/sources.md#nvidia-dra-driver); the device plugin's from
NVIDIA/k8s-device-plugin deployments/helm/nvidia-device-plugin/values.yaml.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from gpu_dra.core import gates as kubernetes_gates
from gpu_dra.core.config import (
    DRA_NODE_LABEL,
    GPU_TAINT_KEY,
    AllocationMode,
    ChartName,
    DraDriver,
    DriverSource,
    SharingStrategy,
    StackConfig,
    Team,
)
from gpu_dra.core.nodes import ALLOCATION_LABEL, DEVICE_PLUGIN_SOURCE_LABEL, SYSTEM_NODE_LABEL, device_plugin_source
from gpu_dra.core.scheduling import helm_merge, schedules_on


@dataclass(frozen=True)
class ChartLine:
    name: ChartName
    repository: str
    first_supported: tuple[int, int, int]
    why_first: str


CHART_LINES = {
    ChartName.dra_driver_nvidia_gpu: ChartLine(
        ChartName.dra_driver_nvidia_gpu, "oci://registry.k8s.io/dra-driver-nvidia/charts", (0, 4, 0),
        "the chart is named dra-driver-nvidia-gpu from 0.4.0 (kubernetes-sigs/dra-driver-nvidia-gpu)"),
    ChartName.nvidia_dra_driver_gpu: ChartLine(
        ChartName.nvidia_dra_driver_gpu, "oci://nvcr.io/nvidia/k8s", (25, 12, 0),
        "older 25.x charts lack the resourceApiVersion value, so rendering would depend on cluster discovery, "
        "and publish attributes (index, minor, pcieBusID) since removed"),
}

# Driver releases in the 0.x numbering the gate table uses: ~25.3 -> 0.1, ~25.8 -> 0.2, ~25.12 -> 0.3, ~26.4 -> 0.4
# (comment in NVIDIA/k8s-dra-driver-gpu v0.4.0 pkg/featuregates/featuregates.go).
_CALENDAR_TO_SEMVER = {(25, 3): (0, 1), (25, 8): (0, 2), (25, 12): (0, 3), (26, 4): (0, 4)}


@dataclass(frozen=True)
class DriverGate:
    name: str
    stage: str
    default: bool
    since: tuple[int, int]  # 0.x release that introduced it


# kubernetes-sigs/dra-driver-nvidia-gpu pkg/featuregates/featuregates.go: `defaultFeatureGates` for stage, default and
# release, `ValidateFeatureGates` for the pairs below (docs/sources.md#driver-feature-gates).
DRIVER_GATES = {g.name: g for g in (
    DriverGate("TimeSlicingSettings", "alpha", False, (0, 2)),
    DriverGate("MPSSupport", "alpha", False, (0, 2)),
    DriverGate("IMEXDaemonsWithDNSNames", "beta", True, (0, 2)),
    DriverGate("PassthroughSupport", "alpha", False, (0, 3)),
    DriverGate("DynamicMIG", "alpha", False, (0, 3)),
    DriverGate("NVMLDeviceHealthCheck", "alpha", False, (0, 3)),
    DriverGate("ComputeDomainCliques", "beta", True, (0, 3)),
    DriverGate("CrashOnNVLinkFabricErrors", "beta", True, (0, 3)),
    DriverGate("DeviceMetadata", "alpha", False, (0, 4)),
    DriverGate("HostManagedIMEXDaemon", "alpha", False, (0, 5)),
    DriverGate("FabricManagerPartitioning", "alpha", False, (0, 5)),
    DriverGate("DRAListTypeAttributes", "alpha", False, (0, 5)),
    DriverGate("ConsumableShares", "alpha", False, (0, 5)),
)}
# Pairs that must not both be on, and gates that need another one on.
EXCLUSIVE_GATES = (("DynamicMIG", "MPSSupport"), ("DynamicMIG", "PassthroughSupport"),
                   ("DynamicMIG", "NVMLDeviceHealthCheck"), ("PassthroughSupport", "NVMLDeviceHealthCheck"))
REQUIRED_GATES = (("DeviceMetadata", "PassthroughSupport"), ("ComputeDomainCliques", "IMEXDaemonsWithDNSNames"))
SHARING_GATES = {SharingStrategy.TimeSlicing: "TimeSlicingSettings", SharingStrategy.MPS: "MPSSupport"}

DRIVER_ROOTS = {DriverSource.host: "/", DriverSource.gpu_operator: "/run/nvidia/driver"}

DEVICE_PLUGIN_CHART = "nvidia-device-plugin"
DEVICE_PLUGIN_REPOSITORY = "https://nvidia.github.io/k8s-device-plugin"
# Pinned; 0.18.x is the current line (seen pinned in public HelmReleases, e.g. rwlove/home-ops 0.18.2).
DEVICE_PLUGIN_VERSION = "0.18.2"


def parse_version(text: str) -> tuple[int, int, int]:
    match = re.match(r"^v?(\d+)\.(\d+)\.(\d+)", text)
    if not match:
        raise ValueError(f"{text!r} is not a version such as 0.4.1")
    major, minor, patch = (int(g) for g in match.groups())
    return major, minor, patch


def release_level(driver: DraDriver) -> tuple[int, int]:
    """The pinned chart's release in the 0.x numbering of the gate table."""
    major, minor, _ = parse_version(driver.version)
    if major == 0:
        return major, minor
    return _CALENDAR_TO_SEMVER.get((major, minor), (0, 4) if (major, minor) > (26, 4) else (0, 1))


DEFAULT_LEVEL = release_level(DraDriver())  # what lint and the pack assume when no chart is named


def chart_reference(driver: DraDriver) -> str:
    repository = driver.repository or CHART_LINES[driver.chart].repository
    return f"{repository.rstrip('/')}/{driver.chart.value}"


def effective_gates(driver: DraDriver) -> dict[str, bool]:
    """The driver's gates as it will run: defaults of the pinned release, overridden by config."""
    level = release_level(driver)
    gates = {g.name: g.default for g in DRIVER_GATES.values() if g.since <= level}
    gates.update(driver.feature_gates)
    return gates


def gate_conflicts(chart: ChartName, version: str, feature_gates: dict[str, bool], partitionable_devices: bool,
                   sharing: list[tuple[str, SharingStrategy]]) -> list[tuple[str | None, str]]:
    """Driver gate mistakes as (what, message), `what` being "version", a gate name, or None for a template's
    sharing: one source for config validation and the policy pack.

    `partitionable_devices`: whether the cluster runs the Kubernetes gate DRAPartitionableDevices (the gate table
    decides, per version and platform). `sharing` lists (who, strategy) for every claim template asking for
    time-slicing or MPS.
    """
    problems: list[tuple[str | None, str]] = []
    line = CHART_LINES[chart]
    if parse_version(version) < line.first_supported:
        first = ".".join(map(str, line.first_supported))
        return [("version", f"{chart.value} {version} is older than {first}, the first release gpu-dra supports: "
                            f"{line.why_first}")]
    driver = DraDriver.model_validate({"chart": chart.value, "version": version, "featureGates": feature_gates})
    level = release_level(driver)
    for name in feature_gates:
        gate = DRIVER_GATES.get(name)
        if gate is None:
            problems.append((name, f"unknown driver gate; gates of {chart.value} {version}: "
                                   f"{', '.join(sorted(effective_gates(driver)))}"))
        elif gate.since > level:
            problems.append((name, f"{name} arrives in driver release 0.{gate.since[1]}; {chart.value} {version} "
                                   "does not have it"))
    gates = effective_gates(driver)
    for first, second in EXCLUSIVE_GATES:
        if gates.get(first) and gates.get(second):
            problems.append((first, f"{first} and {second} cannot both be on (the driver refuses to start)"))
    for gate_name, needed in REQUIRED_GATES:
        if gates.get(gate_name) and not gates.get(needed):
            problems.append((gate_name, f"{gate_name} needs {needed} on"))
    if gates.get("DynamicMIG") and not partitionable_devices:
        problems.append(("DynamicMIG", "DynamicMIG needs the Kubernetes gate DRAPartitionableDevices, which this "
                                       "cluster does not run (alpha and off before 1.36; EKS runs no alpha gates)"))
    for who, strategy in sharing:
        needed = SHARING_GATES[strategy]
        if not gates.get(needed):
            problems.append((None, f"{who} uses {strategy.value} sharing, which the driver rejects unless "
                                   f"{needed}: true"))
    return problems


def gate_problems(config: StackConfig, teams: list[Team]) -> list[tuple[tuple[str | int, ...], str]]:
    """Driver gate mistakes of a stack as (path under gpu-dra:draDriver, message)."""
    driver = config.dra_driver
    sharing = [(f"team {team.name}'s template {t.name}", t.sharing.strategy)
               for team in teams for t in team.claim_templates if t.sharing is not None]
    out: list[tuple[tuple[str | int, ...], str]] = []
    cluster = config.cluster
    partitionable = kubernetes_gates.enabled("DRAPartitionableDevices", cluster.kubernetes_version,
                                             cluster.platform.value, cluster.feature_gates)
    for gate, message in gate_conflicts(driver.chart, driver.version, dict(driver.feature_gates), partitionable,
                                        sharing):
        if gate == "version":
            out.append((("version",), message))
        else:
            out.append((("featureGates", gate) if gate else ("featureGates",), message))
    return out


def driver_root(config: StackConfig) -> str:
    """Where the DRA node groups' NVIDIA driver lives; one chart install serves them all (the loader checks)."""
    sources = {g.driver for g in config.node_groups if g.allocation_mode is AllocationMode.dra}
    return DRIVER_ROOTS[sources.pop() if len(sources) == 1 else DriverSource.host]


def _node_affinity(key: str, value: str) -> dict[str, Any]:
    """A required node affinity on one label; Helm replaces lists, so it replaces the chart's selector terms."""
    return {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
        {"matchExpressions": [{"key": key, "operator": "In", "values": [value]}]}]}}}


GPU_TOLERATION = {"key": GPU_TAINT_KEY, "operator": "Exists", "effect": "NoSchedule"}


def _tolerations(config: StackConfig, mode: AllocationMode) -> list[dict[str, str]]:
    """The GPU taint, plus every taint a user added to node groups of `mode`: a plugin must land on all of them."""
    tolerations = [GPU_TOLERATION]
    for group in config.node_groups:
        if group.allocation_mode is mode:
            for taint in group.taints:
                toleration = {"key": taint.key, "operator": "Exists", "effect": taint.effect.value}
                if toleration not in tolerations:
                    tolerations.append(toleration)
    return tolerations


def dra_chart_values(config: StackConfig) -> dict[str, Any]:
    """Values for NVIDIA's DRA driver chart: every key exists in the pinned chart's values.yaml (a test checks)."""
    driver = config.dra_driver
    multi_node = any(g.multi_node_nvlink for g in config.node_groups if g.allocation_mode is AllocationMode.dra)
    controller: dict[str, Any] = {"nodeSelector": dict([SYSTEM_NODE_LABEL])}
    if driver.chart is ChartName.nvidia_dra_driver_gpu:
        # 25.x requires a control-plane node for the controller; EKS has none (NVIDIA/aicr overlays/eks.yaml).
        controller["affinity"] = _node_affinity(*SYSTEM_NODE_LABEL)
    values: dict[str, Any] = {
        "nvidiaDriverRoot": driver_root(config),
        # The chart refuses resources.gpus.enabled without this acknowledgement that no device plugin runs on the
        # same nodes; gpu-dra guarantees it through node labels (templates/validation.yaml).
        "gpuResourcesEnabledOverride": True,
        "resourceApiVersion": "resource.k8s.io/v1",
        "resources": {"gpus": {"enabled": True}, "computeDomains": {"enabled": multi_node}},
        "logVerbosity": str(driver.log_verbosity),
        "controller": controller,
        "kubeletPlugin": {
            # DRA node groups only. The chart's own affinity also admits NFD-labelled GPU nodes, which may be
            # device-plugin nodes; nvidia.com/gpu.present is on DRA groups alone, and the allocation label also
            # keeps out a node someone labelled by hand.
            "nodeSelector": {DRA_NODE_LABEL[0]: DRA_NODE_LABEL[1], ALLOCATION_LABEL: "dra"},
            "tolerations": _tolerations(config, AllocationMode.dra),
        },
    }
    if driver.feature_gates:
        values["featureGates"] = dict(sorted(driver.feature_gates.items()))
    return values


# The charts' own node selection (defaults the values above are merged into): dra-driver-nvidia-gpu 0.4.1
# values.yaml kubeletPlugin (tests/data/chart-values/; 25.12.0 has the same affinity and no tolerations), and
# NVIDIA/k8s-device-plugin deployments/helm/nvidia-device-plugin/values.yaml (commit 00f2a02).
_NFD_OR_LABEL_TERMS = [
    {"matchExpressions": [{"key": "feature.node.kubernetes.io/pci-10de.present", "operator": "In",
                           "values": ["true"]}]},
    {"matchExpressions": [{"key": "feature.node.kubernetes.io/cpu-model.vendor_id", "operator": "In",
                           "values": ["NVIDIA"]}]},
    {"matchExpressions": [{"key": DRA_NODE_LABEL[0], "operator": "In", "values": [DRA_NODE_LABEL[1]]}]},
]
DRA_PLUGIN_DEFAULTS: dict[str, Any] = {
    "nodeSelector": {},
    "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
        _NFD_OR_LABEL_TERMS[0],
        {"matchExpressions": [{"key": "feature.node.kubernetes.io/pci-0302_10de.present", "operator": "In",
                               "values": ["true"]}]},
        {"matchExpressions": [{"key": "feature.node.kubernetes.io/pci-0300_10de.present", "operator": "In",
                               "values": ["true"]}]},
        *_NFD_OR_LABEL_TERMS[1:]]}}},
    "tolerations": [GPU_TOLERATION],
}
DEVICE_PLUGIN_DEFAULTS: dict[str, Any] = {
    "nodeSelector": {},
    "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": _NFD_OR_LABEL_TERMS}}},
    "tolerations": [{"key": "CriticalAddonsOnly", "operator": "Exists"}, GPU_TOLERATION],
}
# NFD (installed with the GPU Operator) labels every NVIDIA GPU node like this; the check assumes it is present.
NFD_GPU_LABELS = {"feature.node.kubernetes.io/pci-10de.present": "true"}


@dataclass(frozen=True)
class NodeGroupView:
    name: str
    labels: dict[str, str]
    taints: list[dict[str, Any]]  # {key, value, effect} with Kubernetes effect names


def shared_gpu_nodes(groups: list[NodeGroupView], dra_plugin: dict[str, Any] | None,
                     device_plugin: dict[str, Any] | None) -> list[str]:
    """Node groups both NVIDIA's device plugin and the DRA kubelet plugin would run on (with NFD labels present).

    `dra_plugin` and `device_plugin` are the pod placement values (nodeSelector, affinity, tolerations) as set,
    merged here over the charts' defaults; None when that plugin is not installed.
    """
    if dra_plugin is None or device_plugin is None:
        return []
    dra_pod = helm_merge(DRA_PLUGIN_DEFAULTS, dra_plugin)
    device_plugin_pod = helm_merge(DEVICE_PLUGIN_DEFAULTS, device_plugin)
    shared = []
    for group in groups:
        labels = {**group.labels, **NFD_GPU_LABELS}
        if schedules_on(dra_pod, labels, group.taints) and schedules_on(device_plugin_pod, labels, group.taints):
            shared.append(group.name)
    return shared


def device_plugin_needed(config: StackConfig) -> bool:
    """NVIDIA's device plugin chart serves AL2023 device-plugin groups; Bottlerocket ones run their built-in plugin."""
    return any(g.allocation_mode is AllocationMode.device_plugin and device_plugin_source(g) == "chart"
               for g in config.node_groups)


def device_plugin_values(config: StackConfig) -> dict[str, Any]:
    """NVIDIA's device plugin restricted to device-plugin node groups (its default affinity would take any GPU)."""
    sources = {g.driver for g in config.node_groups if g.allocation_mode is AllocationMode.device_plugin}
    root = DRIVER_ROOTS[sources.pop() if len(sources) == 1 else DriverSource.host]
    return {
        "nodeSelector": {ALLOCATION_LABEL: "device-plugin", DEVICE_PLUGIN_SOURCE_LABEL: "chart"},
        "affinity": _node_affinity(ALLOCATION_LABEL, "device-plugin"),
        "tolerations": _tolerations(config, AllocationMode.device_plugin),
        "nvidiaDriverRoot": root,
    }

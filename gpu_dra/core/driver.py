"""NVIDIA's DRA driver chart and, during migration, NVIDIA's device plugin chart: versions, gates, values.

Values are derived from the stack (node groups, driver location, config), never hand-typed per stack.
Sources: ../shared/docs/nvidia-dra-driver.md (sections 0-2, 6, 7) and the chart values files in
../shared/fixtures/chart-values/; the device plugin's from NVIDIA/k8s-device-plugin
deployments/helm/nvidia-device-plugin/values.yaml.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

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


# pkg/featuregates/featuregates.go (nvidia-dra-driver.md section 6).
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


def chart_reference(driver: DraDriver) -> str:
    repository = driver.repository or CHART_LINES[driver.chart].repository
    return f"{repository.rstrip('/')}/{driver.chart.value}"


def effective_gates(driver: DraDriver) -> dict[str, bool]:
    """The driver's gates as it will run: defaults of the pinned release, overridden by config."""
    level = release_level(driver)
    gates = {g.name: g.default for g in DRIVER_GATES.values() if g.since <= level}
    gates.update(driver.feature_gates)
    return gates


def gate_problems(config: StackConfig, teams: list[Team]) -> list[tuple[tuple[str | int, ...], str]]:
    """Driver gate mistakes as (path under gpu-dra:draDriver, message); empty when the gates are consistent."""
    driver = config.dra_driver
    problems: list[tuple[tuple[str | int, ...], str]] = []
    line = CHART_LINES[driver.chart]
    if parse_version(driver.version) < line.first_supported:
        first = ".".join(map(str, line.first_supported))
        problems.append((("version",), f"{driver.chart.value} {driver.version} is older than {first}, the first "
                                       f"release gpu-dra supports: {line.why_first}"))
        return problems
    level = release_level(driver)
    for name in driver.feature_gates:
        gate = DRIVER_GATES.get(name)
        if gate is None:
            problems.append((("featureGates", name), f"unknown driver gate; gates of {driver.chart.value} "
                                                     f"{driver.version}: {', '.join(sorted(effective_gates(driver)))}"))
        elif gate.since > level:
            problems.append((("featureGates", name), f"{name} arrives in driver release 0.{gate.since[1]}; "
                                                     f"{driver.chart.value} {driver.version} does not have it"))
    gates = effective_gates(driver)
    for first, second in EXCLUSIVE_GATES:
        if gates.get(first) and gates.get(second):
            problems.append((("featureGates", first), f"{first} and {second} cannot both be on (the driver refuses "
                                                      "to start)"))
    for gate_name, needed in REQUIRED_GATES:
        if gates.get(gate_name) and not gates.get(needed):
            problems.append((("featureGates", gate_name), f"{gate_name} needs {needed} on"))
    if gates.get("DynamicMIG") and config.cluster.kubernetes_version in ("1.34", "1.35"):
        problems.append((("featureGates", "DynamicMIG"), "DynamicMIG needs the Kubernetes gate "
                                                         "DRAPartitionableDevices, alpha and off before 1.36"))
    for team in teams:
        for template in team.claim_templates:
            if template.sharing is None:
                continue
            needed = SHARING_GATES[template.sharing.strategy]
            if not gates.get(needed):
                problems.append((("featureGates",), f"team {team.name}'s template {template.name} uses "
                                                    f"{template.sharing.strategy.value} sharing, which the driver "
                                                    f"rejects unless {needed}: true"))
    return problems


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

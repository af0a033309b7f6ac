"""NVIDIA's DRA driver as a stack may name it: chart lines, releases, driver feature gates and their rules.

Used by config validation, lint (which attributes a release publishes) and the policy pack alike. Sources: the
charts' values files and pkg/featuregates/featuregates.go of kubernetes-sigs/dra-driver-nvidia-gpu@v0.4.1 and
NVIDIA/k8s-dra-driver-gpu@v25.12.0 (docs/sources.md#nvidia-dra-driver).
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from gpu_dra.core.facts.nvidia import CHART_RELEASES, UNREAD_RELEASES, parse_version, release_level_of


# The two chart lines (the config's draDriver.chart). Enums here carry no docstring: the config's JSON Schema would.
class ChartName(StrEnum):
    dra_driver_nvidia_gpu = "dra-driver-nvidia-gpu"
    nvidia_dra_driver_gpu = "nvidia-dra-driver-gpu"


# How a claim template shares a GPU (the config's sharing.strategy); each needs its driver gate (SHARING_GATES).
class SharingStrategy(StrEnum):
    TimeSlicing = "TimeSlicing"
    MPS = "MPS"


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


# With NVMLDeviceHealthCheck on, the kubelet plugin from 0.4.0 taints a GPU in its ResourceSlice when NVML reports it
# unhealthy, one key per kind of event (kubernetes-sigs/dra-driver-nvidia-gpu@v0.4.1:cmd/gpu-kubelet-plugin/
# device_health.go:35-39 and 65-95, driver.go:157 and 500-530; the same keys at v0.4.0). v25.12.0 publishes no device
# taints (no DeviceTaint in its cmd/). The scheduler honours them only where DRADeviceTaints is on (facts/gates.py).
HEALTH_TAINT_GATE = "NVMLDeviceHealthCheck"
HEALTH_TAINTS_SINCE = (0, 4)
HEALTH_TAINTS = {"gpu.nvidia.com/xid": "NoSchedule, or None for an XID the health monitor deems non-fatal",
                 "gpu.nvidia.com/gpu-lost": "NoSchedule",
                 "gpu.nvidia.com/unmonitored": "None (information only)"}


# Pairs that must not both be on, and gates that need another one on.
EXCLUSIVE_GATES = (("DynamicMIG", "MPSSupport"), ("DynamicMIG", "PassthroughSupport"),
                   ("DynamicMIG", "NVMLDeviceHealthCheck"), ("PassthroughSupport", "NVMLDeviceHealthCheck"))
REQUIRED_GATES = (("DeviceMetadata", "PassthroughSupport"), ("ComputeDomainCliques", "IMEXDaemonsWithDNSNames"))
SHARING_GATES = {SharingStrategy.TimeSlicing: "TimeSlicingSettings", SharingStrategy.MPS: "MPSSupport"}


def supported_releases(chart: ChartName) -> list[str]:
    """The chart's releases from the first gpu-dra supports on."""
    first = CHART_LINES[chart].first_supported
    return [v for v in CHART_RELEASES[chart.value] if parse_version(v) >= first]


def unreleased(chart: ChartName, version: str) -> str | None:
    """Why `version` is no release of `chart` gpu-dra knows, or None: an unknown version has no known gates or
    attributes, and Helm would refuse a version that does not exist only at `pulumi up`."""
    bare = version.removeprefix("v")
    if bare in CHART_RELEASES[chart.value]:
        return None
    newest = CHART_RELEASES[chart.value][-1]
    unread = UNREAD_RELEASES.get(chart.value, {}).get(bare)
    if unread:
        return (f"{chart.value} {version} is a release gpu-dra has not read yet ({unread}; no snapshot gpu-dra read "
                "holds the tag): its chart values, driver gates and published attributes are not modelled, so gpu-dra "
                f"cannot check the stack against it; pin {newest}")
    other = next((c for c in ChartName if c is not chart and bare in supported_releases(c)), None)
    hint = f" ({version} is a release of {other.value}: set chart: {other.value})" if other else ""
    message = (f"{chart.value} {version} is not a release of that chart{hint}; releases gpu-dra supports: "
               f"{', '.join(supported_releases(chart))}")
    if not other and parse_version(bare) > parse_version(newest):
        message += f" (a release newer than {newest} would be one gpu-dra has not read: pin {newest})"
    return message


def chart_reference(chart: ChartName, repository: str | None = None) -> str:
    """The chart's reference for Helm: in `repository`, else in the chart line's official registry."""
    return f"{(repository or CHART_LINES[chart].repository).rstrip('/')}/{chart.value}"


def effective_gates(version: str, feature_gates: Mapping[str, bool]) -> dict[str, bool]:
    """The driver's gates as it will run: defaults of the pinned release `version`, overridden by `feature_gates`
    (the stack's draDriver.featureGates)."""
    level = release_level_of(version)
    gates = {g.name: g.default for g in DRIVER_GATES.values() if g.since <= level}
    gates.update(feature_gates)
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
    unknown = unreleased(chart, version)
    if unknown:
        return [("version", unknown)]
    if parse_version(version) < line.first_supported:
        first = ".".join(map(str, line.first_supported))
        return [("version", f"{chart.value} {version} is older than {first}, the first release gpu-dra supports: "
                            f"{line.why_first}")]
    level = release_level_of(version)
    for name in feature_gates:
        gate = DRIVER_GATES.get(name)
        if gate is None:
            known = sorted(g.name for g in DRIVER_GATES.values() if g.since <= level)
            guess = difflib.get_close_matches(name, known, n=1)
            hint = f"did you mean {guess[0]!r}? " if guess else ""
            problems.append((name, f"unknown driver gate {name}; {hint}gates of {chart.value} {version}: "
                                   f"{', '.join(known)}"))
        elif gate.since > level:
            problems.append((name, f"{name} arrives in driver release 0.{gate.since[1]}; {chart.value} {version} "
                                   "does not have it"))
    gates = effective_gates(version, feature_gates)
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


# --------------------------------------------------------------------------------------- values a stack passes through
# The chart values gpu-dra derives from the stack (gpu_dra.core.render.charts.dra_chart_values), each with the stack
# key that decides it: a stack's draDriver.values may not set them. The first three are the Helm flags of NVIDIA's
# install guide (`--set nvidiaDriverRoot=... --set resources.gpus.enabled=... --set
# resources.computeDomains.enabled=...`; kubernetes-sigs/dra-driver-nvidia-gpu@v0.4.1:docs/install.md).
_PLACEMENT = ("the kubelet plugin runs only on nodes labelled gpu-dra.io/allocation=dra, so that it never runs beside "
              "NVIDIA's device plugin; extra kubeletPlugin.tolerations are added to gpu-dra's own")
DERIVED_VALUES: dict[tuple[str, ...], str] = {
    ("nvidiaDriverRoot",): "set from the DRA node groups' (or node pools') `driver`: host -> /, gpu-operator -> "
                           "/run/nvidia/driver",
    ("resources", "gpus", "enabled"): "always true: gpu-dra allocates GPUs through the driver",
    ("resources", "computeDomains", "enabled"): "set from `multiNodeNvlink` on the DRA node groups",
    ("featureGates",): "set draDriver.featureGates, which gpu-dra checks against the release's gates",
    ("logVerbosity",): "set draDriver.logVerbosity",
    ("namespaceOverride",): "set draDriver.namespace",
    ("allowDefaultNamespace",): "gpu-dra installs the chart in draDriver.namespace, never `default`",
    ("resourceApiVersion",): "gpu-dra pins resource.k8s.io/v1",
    ("gpuResourcesEnabledOverride",): "gpu-dra sets it: its node labels keep NVIDIA's device plugin off DRA nodes",
    ("kubeletPlugin", "nodeSelector"): _PLACEMENT,
    ("kubeletPlugin", "affinity"): _PLACEMENT,
    ("controller", "nodeSelector"): "gpu-dra places the controller on the system node group",
    ("controller", "affinity"): "gpu-dra places the controller on the system node group",
}


def _kind(default: Any) -> tuple[type | tuple[type, ...], str] | None:
    """The type a value must have where the chart's default is `default`, and how to say it; None for any."""
    if isinstance(default, bool):
        return bool, "true or false"
    if isinstance(default, int):
        return int, "a whole number"
    if isinstance(default, str):
        return str, "a string"
    if isinstance(default, list):
        return list, "a list"
    if isinstance(default, dict):
        return dict, "a mapping"
    return None


def values_problems(chart: ChartName, version: str, chart_values: Mapping[str, Any], values: Mapping[str, Any],
                    path: tuple[str, ...] = ()) -> list[tuple[tuple[str, ...], str]]:
    """What is wrong with a stack's draDriver.values as (key path, message): a key gpu-dra derives, a key the chart's
    values.yaml at `version` (`chart_values`) does not have, or a value of another type than its default there.
    No release ships a values.schema.json, so the values file's structure is the schema; an empty map in it (a
    nodeSelector, resources, podAnnotations) takes any keys, and a null default any value."""
    problems: list[tuple[tuple[str, ...], str]] = []
    for key, value in values.items():
        here = (*path, key)
        if here in DERIVED_VALUES:
            problems.append((here, f"gpu-dra sets this value: {DERIVED_VALUES[here]}"))
            continue
        if key not in chart_values:
            guess = difflib.get_close_matches(key, [str(k) for k in chart_values], n=1)
            hint = f"; did you mean {guess[0]!r}?" if guess else ""
            where = ".".join(path) or "the top level"
            problems.append((here, f"{chart.value} {version} has no value {key!r} at {where} (its values.yaml)"
                                   f"{hint}"))
            continue
        default = chart_values[key]
        kind = _kind(default)
        if kind is not None and (not isinstance(value, kind[0]) or (kind[0] is int and isinstance(value, bool))):
            problems.append((here, f"must be {kind[1]}, as in {chart.value} {version}'s values.yaml (got {value!r})"))
        elif isinstance(default, dict) and default:
            problems += values_problems(chart, version, default, value, here)
    return problems


# EC2 instance families whose GPUs share an NVLink domain across instances, the only ones where ComputeDomains (IMEX
# channels over multi-node NVLink) can work: "NVIDIA UltraServer instances (p6e-gb200.36xlarge, p6e-gb200.72xlarge,
# p6e-gb300.36xlarge, p6e-gb300.72xlarge) connect multiple GPUs across instances using NVLink"
# (https://docs.aws.amazon.com/pcs/latest/userguide/capacity-blocks-nvidia-imex.html). NVIDIA's ComputeDomains need
# Multi-Node NVLink, e.g. GB200 NVL72 (https://docs.nvidia.com/datacenter/cloud-native/gpu-operator/latest/
# dra-cds.html); NVLink inside one instance (p5's NVSwitch) is no NVLink domain across nodes.
MULTI_NODE_NVLINK_FAMILIES = ("p6e-gb200", "p6e-gb300")


def has_multi_node_nvlink(instance_type: str) -> bool:
    return instance_type.split(".", 1)[0] in MULTI_NODE_NVLINK_FAMILIES

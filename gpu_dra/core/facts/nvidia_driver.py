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

from gpu_dra.core.facts.nvidia import CHART_RELEASES, parse_version, release_level_of


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
    """Why `version` is no release of `chart`, or None: an unknown version has no known gates or attributes, and
    Helm would refuse it only at `pulumi up`."""
    bare = version.removeprefix("v")
    if bare in CHART_RELEASES[chart.value]:
        return None
    other = next((c for c in ChartName if c is not chart and bare in supported_releases(c)), None)
    hint = f" ({version} is a release of {other.value}: set chart: {other.value})" if other else ""
    return (f"{chart.value} {version} is not a release of that chart{hint}; releases gpu-dra supports: "
            f"{', '.join(supported_releases(chart))}")


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

"""NVIDIA's DRA driver as a stack may name it: chart lines, releases, driver feature gates and their rules.

Used by config validation, lint (which attributes a release publishes) and the policy pack alike. Sources: the
charts' values files and pkg/featuregates/featuregates.go of kubernetes-sigs/dra-driver-nvidia-gpu@v0.4.1 and
NVIDIA/k8s-dra-driver-gpu@v25.12.0 (docs/sources.md#nvidia-dra-driver).
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass

from gpu_dra.core.config.models import ChartName, DraDriver, SharingStrategy, StackConfig, Team
from gpu_dra.core.facts import gates as kubernetes_gates
from gpu_dra.core.facts.nvidia import CHART_RELEASES, parse_version, release_level_of


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


def release_level(driver: DraDriver) -> tuple[int, int]:
    """The pinned chart's release in the 0.x numbering of the gate table."""
    return release_level_of(driver.version)


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
    unknown = unreleased(chart, version)
    if unknown:
        return [("version", unknown)]
    if parse_version(version) < line.first_supported:
        first = ".".join(map(str, line.first_supported))
        return [("version", f"{chart.value} {version} is older than {first}, the first release gpu-dra supports: "
                            f"{line.why_first}")]
    driver = DraDriver.model_validate({"chart": chart.value, "version": version, "featureGates": feature_gates})
    level = release_level(driver)
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

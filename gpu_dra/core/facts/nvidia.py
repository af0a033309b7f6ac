"""Facts about NVIDIA's DRA driver that config validation, manifests and lint share.

Sources: the chart templates deviceclass-*.yaml (NVIDIA/k8s-dra-driver-gpu@v25.12.0:deployments/helm/
nvidia-dra-driver-gpu/templates/, identical in kubernetes-sigs/dra-driver-nvidia-gpu@v0.4.1:deployments/helm/
dra-driver-nvidia-gpu/templates/) and what the kubelet plugin publishes, per release (cmd/gpu-kubelet-plugin/
deviceinfo.go, partitions.go, mig.go at each tag). Summary: docs/sources.md#nvidia-dra-driver.
"""

from __future__ import annotations

import fnmatch
import re
from typing import Any

from gpu_dra.core.facts.chart_values import CHART_VALUES

DRIVER_NAME = "gpu.nvidia.com"
# The default chart line's newest release gpu-dra has read; 0.5.0 is newer but unread (UNREAD_RELEASES), so defaulting
# to it would install a chart whose values, gates and published attributes nothing here has checked.
DEFAULT_CHART_VERSION = "0.4.1"
CHART_VERSION_PATTERN = r"^v?\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?$"  # an exact chart version, never a range

# Every release of each chart line gpu-dra has read: the repositories' release tags (pre-releases left out), each
# tag's deployments/helm/<chart>/Chart.yaml `version` being the tag without its "v" (`git tag` of
# kubernetes-sigs/dra-driver-nvidia-gpu at 95932046, 2026-08-07, tags v25.3.0 to v0.4.1, and of
# NVIDIA/k8s-dra-driver-gpu at 22407113, 2026-05-15, tags v25.3.0 to v0.4.0; docs/sources.md#chart-lines). The gate
# table and the published attributes were read per release, so a newer release is refused until it is added here.
CHART_RELEASES = {
    "nvidia-dra-driver-gpu": ("25.3.0", "25.3.1", "25.3.2", "25.8.0", "25.8.1", "25.12.0"),
    "dra-driver-nvidia-gpu": ("0.4.0", "0.4.1"),
}
# Releases known to exist whose tags no snapshot gpu-dra read holds (main at 95932046 still says 0.5.0-dev): their
# values, gates and attributes are not modelled, so a stack naming one is refused with why (nvidia_driver.unreleased).
# 0.5.1 is said to ship in GPU Operator 26.7.2, but no source for its tag was found, so it is not listed.
UNREAD_RELEASES = {
    "dra-driver-nvidia-gpu": {"0.5.0": "tagged 2026-08-19 (kubernetes-sigs/dra-driver-nvidia-gpu PR #1367, issue "
                                       "#1365; github.com/kubernetes-sigs/dra-driver-nvidia-gpu/releases/tag/v0.5.0)"},
}
STANDARD_DOMAIN = "resource.kubernetes.io"
# The oldest Kubernetes minor each supported chart release installs on: Chart.yaml `kubeVersion: ">=1.32.0-0"` at
# kubernetes-sigs/dra-driver-nvidia-gpu tags v0.4.0 and v0.4.1 (deployments/helm/dra-driver-nvidia-gpu/Chart.yaml:34)
# and v25.12.0 (deployments/helm/nvidia-dra-driver-gpu/Chart.yaml); none names an upper bound. Helm refuses to install
# a chart whose kubeVersion the cluster does not satisfy.
CHART_MIN_KUBERNETES = {("dra-driver-nvidia-gpu", "0.4.0"): "1.32", ("dra-driver-nvidia-gpu", "0.4.1"): "1.32",
                        ("nvidia-dra-driver-gpu", "25.12.0"): "1.32"}


# Driver releases in the 0.x numbering the gate table uses: ~25.3 -> 0.1, ~25.8 -> 0.2, ~25.12 -> 0.3, ~26.4 -> 0.4
# (comment in NVIDIA/k8s-dra-driver-gpu v0.4.0 pkg/featuregates/featuregates.go).
_CALENDAR_TO_SEMVER = {(25, 3): (0, 1), (25, 8): (0, 2), (25, 12): (0, 3), (26, 4): (0, 4)}


def parse_version(text: str) -> tuple[int, int, int]:
    match = re.match(r"^v?(\d+)\.(\d+)\.(\d+)", text)
    if not match:
        raise ValueError(f"{text!r} is not a version such as 0.4.1")
    major, minor, patch = (int(g) for g in match.groups())
    return major, minor, patch


def release_level_of(version: str) -> tuple[int, int]:
    """A chart release in the 0.x numbering of the gate table."""
    major, minor, _ = parse_version(version)
    if major == 0:
        return major, minor
    return _CALENDAR_TO_SEMVER.get((major, minor), (0, 4) if (major, minor) > (26, 4) else (0, 1))


DEFAULT_LEVEL = release_level_of(DEFAULT_CHART_VERSION)  # what lint and the pack assume when no chart is named

# NVIDIA's device plugin's extended resource for a whole GPU (node status.allocatable, a pod's limits), and the prefix
# of its MIG resources under the mixed strategy (NVIDIA/k8s-device-plugin@v0.18.2:README.md, "MIG support").
DEVICE_PLUGIN_GPU = "nvidia.com/gpu"
DEVICE_PLUGIN_MIG_PREFIX = "nvidia.com/mig-"

# DeviceClasses the chart installs; a stack may not define them itself.
CHART_DEVICE_CLASSES = ("gpu.nvidia.com", "mig.nvidia.com", "vfio.gpu.nvidia.com",
                        "compute-domain-daemon.nvidia.com", "compute-domain-default-channel.nvidia.com")
_CHART_CLASS_PATTERNS = ("compute-domain-*.nvidia.com",)
# The chart's DeviceClass selectors (templates/deviceclass-*.yaml).
_TYPE = "device.attributes['{domain}'].type == '{type}'"
CHART_CLASS_SELECTORS = {
    "gpu.nvidia.com": [f"device.driver == 'gpu.nvidia.com' && {_TYPE.format(domain='gpu.nvidia.com', type='gpu')}"],
    "mig.nvidia.com": [f"device.driver == 'gpu.nvidia.com' && {_TYPE.format(domain='gpu.nvidia.com', type='mig')}"],
    "vfio.gpu.nvidia.com": [
        f"device.driver == 'gpu.nvidia.com' && {_TYPE.format(domain='gpu.nvidia.com', type='vfio')}"],
    "compute-domain-daemon.nvidia.com": [
        "device.driver == 'compute-domain.nvidia.com' && "
        f"{_TYPE.format(domain='compute-domain.nvidia.com', type='daemon')}"],
    "compute-domain-default-channel.nvidia.com": [
        "device.driver == 'compute-domain.nvidia.com' && "
        f"{_TYPE.format(domain='compute-domain.nvidia.com', type='channel')} && "
        "device.attributes['compute-domain.nvidia.com'].id == 0"],
}
# The device type each chart class admits (its selector: `device.attributes['gpu.nvidia.com'].type == ...`).
CHART_CLASS_DEVICE_TYPES = {"gpu.nvidia.com": "gpu", "mig.nvidia.com": "mig", "vfio.gpu.nvidia.com": "vfio"}

DEVICE_TYPES = ("gpu", "mig", "vfio")


def is_chart_device_class(name: str) -> bool:
    return name in CHART_DEVICE_CLASSES or any(fnmatch.fnmatch(name, p) for p in _CHART_CLASS_PATTERNS)


# --------------------------------------------------------------------------------------------- what is published
# Release levels in the 0.x numbering: 0.1 = 25.3, 0.2 = 25.8, 0.3 = 25.12, 0.4 = 0.4.x
# (gpu_dra.core.facts.nvidia_driver).
_COMMON = {"type", "uuid", "productName", "brand", "architecture", "cudaComputeCapability", "driverVersion",
           "cudaDriverVersion", f"{STANDARD_DOMAIN}/pcieRoot"}


def published_attributes(level: tuple[int, int], device_type: str) -> set[str]:
    """Attribute names (driver-domain ones bare, others qualified) a device of this type carries at a release."""
    if device_type == "vfio":
        if level < (0, 3):
            return set()
        names = {"type", "uuid", "deviceID", "vendorID", "numa", "productName", f"{STANDARD_DOMAIN}/pcieRoot"}
        names.add(f"{STANDARD_DOMAIN}/pciBusID")
        if level >= (0, 4):
            names.add("iommuFDEnabled")
        return names
    names = set(_COMMON)
    names.add("pcieBusID" if level < (0, 3) else f"{STANDARD_DOMAIN}/pciBusID")
    if level >= (0, 3):
        names.add("addressingMode")
    if level < (0, 2):
        names |= {"index", "minor"}
    if device_type == "mig":
        names |= {"parentUUID", "profile"}
        if level < (0, 2):
            names |= {"parentIndex"}
            names.discard("minor")
    return names


def published_capacity(device_type: str) -> set[str]:
    if device_type == "gpu":
        return {"memory"}
    if device_type == "mig":
        return {"multiprocessors", "copyEngines", "decoders", "encoders", "jpegEngines", "ofaEngines", "memory"}
    return {"addressableMemory"}


# Omitted by the driver when it cannot resolve them, even on device types that normally carry them.
SOMETIMES_OMITTED = {f"{STANDARD_DOMAIN}/pcieRoot", "addressingMode"}

# Why a name that older guides use is gone (issues and PRs in kubernetes-sigs/dra-driver-nvidia-gpu;
# docs/sources.md#published-attributes).
RENAMED_OR_REMOVED = {
    "index": "removed in 25.8 (kubernetes-sigs/dra-driver-nvidia-gpu#563, PR #624)",
    "minor": "removed in 25.8 (kubernetes-sigs/dra-driver-nvidia-gpu#563, PR #624)",
    "parentIndex": "removed in 25.8 (PR #624)",
    "pcieBusID": "renamed to resource.kubernetes.io/pciBusID in 25.12 (#802, PR #800)",
}


# ---------------------------------------------------------------------------------------- the charts' own defaults
# The values the charts' objects are rendered from (the engine model renders them; gpu_dra.core.render.charts merges
# gpu-dra's values over their placement): each chart's values.yaml at the tag named, generated into chart_values by
# tools/vendor_chart_values.py (vendored in tests/data/chart-values/ too). The 25.x line's 25.12.0 values serve every
# 25.x release (only 25.12.0 was read; older ones are refused).
DRA_CHART_DEFAULTS: dict[str, dict[str, Any]] = {
    "dra-driver-nvidia-gpu": CHART_VALUES[("dra-driver-nvidia-gpu", "0.4.1")],
    "nvidia-dra-driver-gpu": CHART_VALUES[("nvidia-dra-driver-gpu", "25.12.0")],
}

# NVIDIA's device plugin chart, the release gpu-dra installs (gpu_dra.core.render.charts.DEVICE_PLUGIN_VERSION).
DEVICE_PLUGIN_CHART_VERSION = "0.20.0"
DEVICE_PLUGIN_CHART_DEFAULTS: dict[str, Any] = CHART_VALUES[("nvidia-device-plugin", DEVICE_PLUGIN_CHART_VERSION)]


def chart_values_of(chart: str, version: str) -> dict[str, Any] | None:
    """The chart's values.yaml at `version`, or None where gpu-dra has not read that release's."""
    return CHART_VALUES.get((chart, version.removeprefix("v")))

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

DRIVER_NAME = "gpu.nvidia.com"
DEFAULT_CHART_VERSION = "0.4.1"  # of the default chart line, dra-driver-nvidia-gpu
CHART_VERSION_PATTERN = r"^v?\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?$"  # an exact chart version, never a range

# Every release of each chart line: the repositories' release tags (pre-releases left out), each tag's
# deployments/helm/<chart>/Chart.yaml `version` being the tag without its "v" (`git tag` of
# kubernetes-sigs/dra-driver-nvidia-gpu at 95932046, 2026-08-07, tags v25.3.0 to v0.4.1, and of
# NVIDIA/k8s-dra-driver-gpu at 22407113, 2026-05-15, tags v25.3.0 to v0.4.0; docs/sources.md#chart-lines). The gate
# table and the published attributes were read per release, so a newer release is refused until it is added here.
CHART_RELEASES = {
    "nvidia-dra-driver-gpu": ("25.3.0", "25.3.1", "25.3.2", "25.8.0", "25.8.1", "25.12.0"),
    "dra-driver-nvidia-gpu": ("0.4.0", "0.4.1"),
}
STANDARD_DOMAIN = "resource.kubernetes.io"


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
# gpu-dra's values over their placement), copied from each chart's values.yaml at the tag named (vendored in
# tests/data/chart-values/; a test checks them against those).
_GPU_TOLERATION = {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}


def _term(key: str, value: str, operator: str = "In") -> dict[str, Any]:
    return {"matchExpressions": [{"key": key, "operator": operator, "values": [value]}]}


def _required(*terms: dict[str, Any]) -> dict[str, Any]:
    return {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": list(terms)}}}


_NFD_PCI = _term("feature.node.kubernetes.io/pci-10de.present", "true")
_NFD_CPU = _term("feature.node.kubernetes.io/cpu-model.vendor_id", "NVIDIA")
_GPU_PRESENT = _term("nvidia.com/gpu.present", "true")
_CONTROL_PLANE = "node-role.kubernetes.io/control-plane"

DRA_CHART_DEFAULTS: dict[str, dict[str, Any]] = {
    # kubernetes-sigs/dra-driver-nvidia-gpu@v0.4.1 deployments/helm/dra-driver-nvidia-gpu/values.yaml
    "dra-driver-nvidia-gpu": {
        "nameOverride": "", "fullnameOverride": "", "namespaceOverride": "", "resourceApiVersion": "",
        "serviceAccount": {"create": True, "name": ""},
        "resources": {"gpus": {"enabled": True}, "computeDomains": {"enabled": True}},
        "controller": {
            "replicas": 1, "priorityClassName": "system-node-critical", "nodeSelector": {},
            "affinity": {
                "nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
                    {"weight": 100, "preference": {"matchExpressions": [
                        {"key": _CONTROL_PLANE, "operator": "Exists"}]}}]},
                "podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
                    {"weight": 100, "podAffinityTerm": {
                        "labelSelector": {"matchLabels": {"dra-driver-nvidia-gpu-component": "controller"}},
                        "topologyKey": "kubernetes.io/hostname"}}]}},
            "tolerations": [{"key": _CONTROL_PLANE, "operator": "Exists", "effect": "NoSchedule"},
                            {"key": "node-role.kubernetes.io/master", "operator": "Exists", "effect": "NoSchedule"},
                            {"key": "CriticalAddonsOnly", "operator": "Exists"}],
        },
        "kubeletPlugin": {
            "priorityClassName": "system-node-critical", "nodeSelector": {},
            "affinity": _required(_NFD_PCI, _term("feature.node.kubernetes.io/pci-0302_10de.present", "true"),
                                  _term("feature.node.kubernetes.io/pci-0300_10de.present", "true"),
                                  _NFD_CPU, _GPU_PRESENT),
            "tolerations": [_GPU_TOLERATION],
        },
    },
    # NVIDIA/k8s-dra-driver-gpu@v25.12.0 deployments/helm/nvidia-dra-driver-gpu/values.yaml; used for every 25.x
    # release of that line (only 25.12.0 was read).
    "nvidia-dra-driver-gpu": {
        "nameOverride": "", "fullnameOverride": "", "namespaceOverride": "", "resourceApiVersion": "",
        "serviceAccount": {"create": True, "name": ""},
        "resources": {"gpus": {"enabled": True}, "computeDomains": {"enabled": True}},
        "controller": {
            "priorityClassName": "system-node-critical", "nodeSelector": {},
            "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
                {"matchExpressions": [{"key": _CONTROL_PLANE, "operator": "Exists"}]}]}}},
            "tolerations": [{"key": _CONTROL_PLANE, "operator": "Exists", "effect": "NoSchedule"}],
        },
        "kubeletPlugin": {
            "priorityClassName": "system-node-critical", "nodeSelector": {},
            "affinity": _required(_NFD_PCI, _NFD_CPU, _GPU_PRESENT),
            "tolerations": [],
        },
    },
}

# NVIDIA/k8s-device-plugin@v0.18.2 deployments/helm/nvidia-device-plugin/values.yaml:63-99 (nodeSelector, affinity,
# tolerations, priorityClassName), with devicePlugin.enabled and the name overrides.
DEVICE_PLUGIN_CHART_DEFAULTS: dict[str, Any] = {
    "nameOverride": "", "fullnameOverride": "", "namespaceOverride": "",
    "devicePlugin": {"enabled": True}, "priorityClassName": "system-node-critical", "nodeSelector": {},
    "affinity": _required(_NFD_PCI, _NFD_CPU, _GPU_PRESENT),
    "tolerations": [{"key": "CriticalAddonsOnly", "operator": "Exists"}, _GPU_TOLERATION],
}

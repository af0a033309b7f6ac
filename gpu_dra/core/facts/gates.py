"""Kubernetes DRA feature gates per version (1.33 to 1.37), and which API fields each guards.

One row per gate and version, from the versioned gate specs upstream: kubernetes/kubernetes
pkg/features/kube_features.go (1.35 cycle) and, with the full history through 1.37,
`defaultVersionedKubernetesFeatureGates` in
kubernetes/kubernetes@ead35706:staging/src/k8s.io/kube-scheduler/pkg/features/kube_features.go; cross-checked with
https://kubernetes.io/blog/2025/09/01/kubernetes-v1-34-dra-updates/ and
https://kubernetes.io/blog/2026/05/07/kubernetes-v1-36-dra-136-updates/ (docs/sources.md#feature-gates-per-version).
1.37 was a pre-release when read. On EKS a gate is its upstream default (EKS runs no alpha gates and lets no one
set them: "Alpha features aren't supported", EKS version FAQ in awsdocs/amazon-eks-user-guide
latest/ug/versioning/kubernetes-versions.adoc); an existing cluster declares its own.
"""

from __future__ import annotations

from dataclasses import dataclass

VERSIONS = ("1.33", "1.34", "1.35", "1.36", "1.37")
# Of those, the versions a stack may run: DRA's resource.k8s.io/v1 is GA from 1.34 (1.33 serves only the beta APIs,
# off unless enabled, and EKS enables none), and EKS offers 1.36 at the newest (gpu_dra.core.facts.eks.
# SUPPORT_CALENDAR). lint and explain judge manifests at any of VERSIONS: a cluster of another platform, or the next
# release before EKS offers it.
STACK_VERSIONS = ("1.34", "1.35", "1.36")


def stack_version_note(version: str) -> str:
    """Why `version`, which lint and explain judge, is not one a stack may run; "" where it is."""
    if version in STACK_VERSIONS:
        return ""
    stacks = f"stacks run {', '.join(STACK_VERSIONS)}"
    if VERSIONS.index(version) < VERSIONS.index(STACK_VERSIONS[0]):
        return f"{version} serves DRA only as beta APIs, off unless enabled (EKS enables none); {stacks}"
    return f"EKS does not offer {version} yet; {stacks}"
# Of new stacks, and what lint, explain and the pack assume when none is named: a version in EKS standard support
# (gpu_dra.core.facts.eks.SUPPORT_CALENDAR; 1.34 left it on 2026-12-02).
DEFAULT_KUBERNETES_VERSION = "1.35"


@dataclass(frozen=True)
class GateState:
    stage: str  # alpha, beta, ga
    default: bool


# gate -> per version (None: the gate does not exist yet)
_TABLE: dict[str, tuple[tuple[str, bool] | None, ...]] = {
    #                              1.33              1.34              1.35              1.36              1.37
    "DynamicResourceAllocation": (("beta", False), ("ga", True), ("ga", True), ("ga", True), ("ga", True)),
    "DRAAdminAccess": (("alpha", False), ("beta", True), ("beta", True), ("ga", True), ("ga", True)),
    "DRAPrioritizedList": (("alpha", False), ("beta", True), ("beta", True), ("ga", True), ("ga", True)),
    "DRADeviceTaints": (("alpha", False), ("alpha", False), ("alpha", False), ("beta", True), ("ga", True)),
    "DRADeviceTaintRules": (None, None, ("alpha", False), ("beta", False), ("ga", True)),
    "DRAPartitionableDevices": (("alpha", False), ("alpha", False), ("alpha", False), ("beta", True),
                                ("beta", True)),
    "DRAExtendedResource": (None, ("alpha", False), ("alpha", False), ("beta", True), ("ga", True)),
    "DRAConsumableCapacity": (None, ("alpha", False), ("alpha", False), ("beta", True), ("beta", True)),
    "DRADeviceBindingConditions": (None, ("alpha", False), ("alpha", False), ("beta", True), ("beta", True)),
    "DRAResourceClaimDeviceStatus": (("beta", True), ("beta", True), ("beta", True), ("beta", True),
                                     ("ga", True)),
    "DRASchedulerFilterTimeout": (None, ("beta", True), ("beta", True), ("beta", True), ("beta", True)),
    "DRAListTypeAttributes": (None, None, None, ("alpha", False), ("alpha", False)),
    "DRANodeAllocatableResources": (None, None, None, ("alpha", False), ("alpha", False)),
    "DRAWorkloadResourceClaims": (None, None, None, ("alpha", False), ("beta", False)),
}

GATES = tuple(_TABLE)


def nearest_version(minor: str) -> str:
    """The known minor version closest to `minor` (a live cluster's, newer or older than the table): the newest for
    a newer one, the oldest for an older one."""
    def key(text: str) -> tuple[int, ...]:
        return tuple(int(part) for part in text.split(".")[:2])

    return minor if minor in VERSIONS else VERSIONS[-1] if key(minor) > key(VERSIONS[-1]) else VERSIONS[0]


def state(gate: str, version: str) -> GateState | None:
    """The gate's stage and default at a Kubernetes minor version, or None where it does not exist."""
    row = _TABLE[gate][VERSIONS.index(version)]
    return GateState(*row) if row else None


@dataclass(frozen=True)
class GuardedField:
    gate: str
    what: str


# Which resource.k8s.io/v1 fields each gate guards: the `+featureGate` tags on DeviceClass and ResourceClaim fields in
# kubernetes/api@v0.34.0:resource/v1/types.go (docs/sources.md#kubernetes-dra-api).
EXTENDED_RESOURCE = GuardedField("DRAExtendedResource", "DeviceClass spec.extendedResourceName")
PRIORITIZED_LIST = GuardedField("DRAPrioritizedList", "firstAvailable")
ADMIN_ACCESS = GuardedField("DRAAdminAccess", "adminAccess")
DEVICE_TAINTS = GuardedField("DRADeviceTaints", "tolerations")
CAPACITY_REQUESTS = GuardedField("DRAConsumableCapacity", "capacity requests")
DISTINCT_ATTRIBUTE = GuardedField("DRAConsumableCapacity", "distinctAttribute")


# What a gate's switch changes for a cluster's DRA objects, said when an upgrade turns it on or off (sources as the
# table above; the KEPs: 5004 extended resources, 5075 consumable capacity, 4815 partitionable devices, 5055 device
# taints, 4381 DRA, 5027 device status, 5007 binding conditions, 4816 prioritized list, 5018 admin access).
WHAT_IT_CHANGES = {
    "DynamicResourceAllocation": "the scheduler allocates ResourceClaims at all",
    "DRAAdminAccess": "adminAccess requests are kept and allocate devices other claims hold (admin namespaces only)",
    "DRAPrioritizedList": "firstAvailable requests are kept and allocated in their order",
    "DRADeviceTaints": "device taints in ResourceSlices block claims that do not tolerate them, and requests' "
                       "tolerations are kept",
    "DRADeviceTaintRules": "DeviceTaintRule objects taint the devices they select",
    "DRAPartitionableDevices": "shared counters and consumesCounters count: partitions of one GPU (MIG) cannot be "
                               "allocated beyond what the GPU has",
    "DRAExtendedResource": "a DeviceClass's extendedResourceName is kept: pods asking for that extended resource "
                           "(nvidia.com/gpu) are served by DRA devices of the class on nodes without a device plugin",
    "DRAConsumableCapacity": "request capacity, distinctAttribute and devices shared by several claims "
                             "(allowMultipleAllocations) are kept and counted",
    "DRADeviceBindingConditions": "binding waits for the device's bindingConditions before the pod binds",
    "DRAResourceClaimDeviceStatus": "drivers may write a claim's status.devices",
    "DRASchedulerFilterTimeout": "the scheduler stops searching a node for a claim after its filter timeout (10 s)",
    "DRAListTypeAttributes": "list-typed device attributes are kept and selectable",
    "DRANodeAllocatableResources": "DRA devices may count toward node allocatable resources",
    "DRAWorkloadResourceClaims": "workload-level ResourceClaims are accepted",
}

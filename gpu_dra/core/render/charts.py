"""Values for NVIDIA's DRA driver chart and, during migration, NVIDIA's device plugin chart, derived from the
stack (node groups, driver location, config), never hand-typed per stack; and where each plugin's pods would land.

Sources: the chart values files (kubernetes-sigs/dra-driver-nvidia-gpu@v0.4.1 and NVIDIA/k8s-dra-driver-gpu@v25.12.0,
deployments/helm/<chart>/values.yaml; vendored in tests/data/chart-values/ by tools/vendor_chart_values.py), the
chart's templates/validation.yaml; the device plugin's from NVIDIA/k8s-device-plugin@v0.20.0
deployments/helm/nvidia-device-plugin/values.yaml.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from gpu_dra.core.config.models import (
    AllocationMode,
    DriverSource,
    KarpenterNodePool,
    NodeGroup,
    NodePool,
    StackConfig,
)
from gpu_dra.core.data import helm_merge, mapping
from gpu_dra.core.dra.scheduling import schedules_on
from gpu_dra.core.facts.labels import (
    ALLOCATION_LABEL,
    DEVICE_PLUGIN_SOURCE_LABEL,
    DRA_NODE_LABEL,
    GPU_TAINT_KEY,
    SYSTEM_NODE_LABEL,
)
from gpu_dra.core.facts.nvidia import DEVICE_PLUGIN_CHART_DEFAULTS, DEVICE_PLUGIN_CHART_VERSION, DRA_CHART_DEFAULTS
from gpu_dra.core.facts.nvidia_driver import ChartName
from gpu_dra.core.facts.target import Platform
from gpu_dra.core.render.nodes import device_plugin_source

# nvidiaDriverRoot per driver source (the value's comment in each chart's values.yaml; docs/sources.md#chart-values).
# On Bottlerocket `/` is UNVERIFIED: neither NVIDIA's nor AWS's docs state the DRA driver's root there. Bottlerocket
# says its driver is "in the root filesystem" (bottlerocket-os/bottlerocket-core-kit PR #459), but keeps the libraries
# under /<arch>-bottlerocket-linux-gnu/sys-root/usr/lib/nvidia/tesla and points its own device plugin's
# containerDriverRoot at that sysroot (core-kit PR #919), so whether the kubelet plugin's CDI specs resolve them from
# `/` is untested here. Bottlerocket's own host DRA service stays off on gpu-dra's nodes (tests/test_driver_05.py).
DRIVER_ROOTS = {DriverSource.host: "/", DriverSource.gpu_operator: "/run/nvidia/driver"}

DEVICE_PLUGIN_CHART = "nvidia-device-plugin"
DEVICE_PLUGIN_REPOSITORY = "https://nvidia.github.io/k8s-device-plugin"
# Pinned: the newest release (NVIDIA/k8s-device-plugin@v0.20.0, 2026-08-19). Against 0.18.2 its values add only the
# opt-in devicePlugin/gfd/mps.enableHostNetwork and drop nfd.enableNodeFeatureApi (the NFD subchart, off by default),
# and its DaemonSets keep their placement (gpu_dra.core.render.chart_templates.device_plugin_objects).
DEVICE_PLUGIN_VERSION = DEVICE_PLUGIN_CHART_VERSION


def gpu_nodes(config: StackConfig) -> list[NodeGroup | NodePool | KarpenterNodePool]:
    """The stack's GPU nodes: its EKS node groups and Karpenter NodePools, or an existing cluster's declared pools
    (the loader allows one or the other)."""
    return [*config.node_groups, *config.karpenter_node_pools, *config.node_pools]


def driver_root(config: StackConfig) -> str:
    """Where the DRA nodes' NVIDIA driver lives; one chart install serves them all (the loader checks)."""
    sources = {g.driver for g in gpu_nodes(config) if g.allocation_mode is AllocationMode.dra}
    return DRIVER_ROOTS[sources.pop() if len(sources) == 1 else DriverSource.host]


def _node_affinity(key: str, value: str) -> dict[str, Any]:
    """A required node affinity on one label; Helm replaces lists, so it replaces the chart's selector terms."""
    return {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
        {"matchExpressions": [{"key": key, "operator": "In", "values": [value]}]}]}}}


GPU_TOLERATION = {"key": GPU_TAINT_KEY, "operator": "Exists", "effect": "NoSchedule"}


def _tolerations(config: StackConfig, mode: AllocationMode) -> list[dict[str, str]]:
    """The GPU taint, plus every taint a user added to node groups of `mode`: a plugin must land on all of them."""
    tolerations = [GPU_TOLERATION]
    for group in gpu_nodes(config):
        if group.allocation_mode is mode:
            for taint in group.taints:
                toleration = {"key": taint.key, "operator": "Exists", "effect": taint.effect.value}
                if toleration not in tolerations:
                    tolerations.append(toleration)
    return tolerations


def dra_chart_values(config: StackConfig) -> dict[str, Any]:
    """Values for NVIDIA's DRA driver chart: gpu-dra's own, over the stack's draDriver.values (which may set none of
    them, and only keys of the pinned chart's values.yaml: the config model checks), its kubeletPlugin.tolerations
    added to gpu-dra's, since Helm would replace the list."""
    ours = derived_dra_chart_values(config)
    passed = config.dra_driver.values
    values = helm_merge(passed, ours)
    extra = mapping(passed.get("kubeletPlugin")).get("tolerations") or []
    tolerations = values["kubeletPlugin"]["tolerations"]
    tolerations += [t for t in extra if t not in tolerations]
    return values


def derived_dra_chart_values(config: StackConfig) -> dict[str, Any]:
    """The chart values gpu-dra derives from the stack (nvidia_driver.DERIVED_VALUES names them)."""
    driver = config.dra_driver
    multi_node = any(g.multi_node_nvlink for g in config.node_groups if g.allocation_mode is AllocationMode.dra)
    controller: dict[str, Any] = {"nodeSelector": dict([SYSTEM_NODE_LABEL])}
    if config.cluster.platform is Platform.existing:
        # An existing cluster has no gpu-dra system nodes, and the controller is a small CPU Deployment that needs
        # nothing of a node: it runs on any Linux node rather than asking users for one more label. The 0.4.x chart
        # only prefers a control-plane node; 25.x requires one, which managed clusters (EKS, GKE, AKS) do not expose.
        controller = {}
        if driver.chart is ChartName.nvidia_dra_driver_gpu:
            controller["affinity"] = _node_affinity("kubernetes.io/os", "linux")
    elif driver.chart is ChartName.nvidia_dra_driver_gpu:
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
            # DRA node groups only, by gpu-dra's own label: the chart's affinity also admits NFD-labelled GPU
            # nodes, and from Kubernetes 1.35 the AL2023 NVIDIA AMI labels every GPU node nvidia.com/gpu.present,
            # device-plugin nodes included (awslabs/amazon-eks-ami@v20260209 nodeadm/internal/kubelet/config.go).
            # An existing cluster's pools are selected the same way, by the label its users apply to each DRA pool
            # (docs/deploying.md, "Existing clusters"), not by the pools' own nodeSelectors: one key with one value
            # per node keeps the two plugins apart by construction (a node is `dra` or `device-plugin`, never both),
            # which arbitrary selectors cannot promise (a DRA pool's `gpu=h100` and a legacy pool's `team=ml` may
            # well select the same node), and shared_gpu_nodes judges pools and node groups alike.
            "nodeSelector": {ALLOCATION_LABEL: "dra"},
            "tolerations": _tolerations(config, AllocationMode.dra),
        },
    }
    if driver.feature_gates:
        values["featureGates"] = dict(sorted(driver.feature_gates.items()))
    return values


# The charts' own pod placement, which the values above are merged into (gpu_dra.core.facts.nvidia, from each chart's
# values.yaml at its tag): the DRA chart's kubelet plugin (dra-driver-nvidia-gpu 0.4.1; the 25.x line's affinity has
# fewer terms, all of them among these) and NVIDIA's device plugin.
_PLACEMENT = ("nodeSelector", "affinity", "tolerations")
DRA_PLUGIN_DEFAULTS: dict[str, Any] = {
    key: DRA_CHART_DEFAULTS["dra-driver-nvidia-gpu"]["kubeletPlugin"][key] for key in _PLACEMENT}
DEVICE_PLUGIN_DEFAULTS: dict[str, Any] = {key: DEVICE_PLUGIN_CHART_DEFAULTS[key] for key in _PLACEMENT}


# Labels the shared-node check assumes on every NVIDIA GPU node: NFD's (installed with the GPU Operator), and from
# Kubernetes 1.35 the AL2023 NVIDIA AMI's nvidia.com/gpu.present on every GPU node, device-plugin nodes included
# (awslabs/amazon-eks-ami@v20260209 nodeadm/internal/kubelet/config.go).
NFD_GPU_LABELS = {"feature.node.kubernetes.io/pci-10de.present": "true", DRA_NODE_LABEL[0]: DRA_NODE_LABEL[1]}


@dataclass(frozen=True)
class NodeGroupView:
    name: str
    labels: dict[str, str]
    taints: list[dict[str, Any]]  # {key, value, effect} with Kubernetes effect names


def shared_gpu_nodes(groups: list[NodeGroupView], dra_plugin: dict[str, Any] | None,
                     device_plugin: dict[str, Any] | None) -> list[str]:
    """Node groups both NVIDIA's device plugin and the DRA kubelet plugin would run on (with NFD labels present).

    `dra_plugin` and `device_plugin` are each plugin's pod placement (nodeSelector, affinity, tolerations) as its
    chart renders it, the chart's defaults already merged in; None when that plugin is not installed.
    """
    if dra_plugin is None or device_plugin is None:
        return []
    shared = []
    for group in groups:
        labels = {**group.labels, **NFD_GPU_LABELS}
        if schedules_on(dra_plugin, labels, group.taints) and schedules_on(device_plugin, labels, group.taints):
            shared.append(group.name)
    return shared


def device_plugin_needed(config: StackConfig) -> bool:
    """NVIDIA's device plugin chart serves AL2023 device-plugin groups; Bottlerocket ones run their built-in plugin."""
    groups: list[NodeGroup | KarpenterNodePool] = [*config.node_groups, *config.karpenter_node_pools]
    return any(g.allocation_mode is AllocationMode.device_plugin and device_plugin_source(g) == "chart"
               for g in groups) or any(
        p.allocation_mode is AllocationMode.device_plugin for p in config.node_pools)


def device_plugin_values(config: StackConfig) -> dict[str, Any]:
    """NVIDIA's device plugin restricted to device-plugin node groups (its default affinity would take any GPU)."""
    sources = {g.driver for g in gpu_nodes(config) if g.allocation_mode is AllocationMode.device_plugin}
    root = DRIVER_ROOTS[sources.pop() if len(sources) == 1 else DriverSource.host]
    # An existing cluster's legacy pools carry the one label their users apply (gpu-dra.io/allocation=device-plugin);
    # the source label tells EKS's Bottlerocket groups (built-in plugin) from AL2023 ones, which pools do not need.
    selector = ({ALLOCATION_LABEL: "device-plugin"} if config.cluster.platform is Platform.existing
                else {ALLOCATION_LABEL: "device-plugin", DEVICE_PLUGIN_SOURCE_LABEL: "chart"})
    return {
        "nodeSelector": selector,
        "affinity": _node_affinity(ALLOCATION_LABEL, "device-plugin"),
        "tolerations": _tolerations(config, AllocationMode.device_plugin),
        "nvidiaDriverRoot": root,
    }


# Chart 0.4.x and 25.12.0+ give their gpu.nvidia.com class `extendedResourceName: nvidia.com/gpu` on resource.k8s.io/v1
# (kubernetes-sigs/dra-driver-nvidia-gpu@v0.4.1 deployments/helm/dra-driver-nvidia-gpu/templates/deviceclass-gpu.yaml).
# Where DRAExtendedResource is off (EKS 1.34 and 1.35) the API server drops the field, so every preview would show the
# class changing back, and the pack rightly calls the field unusable there: the program drops it from the chart's
# rendered DeviceClasses with a transform (components/driver.py) while the gate is off.
DEVICE_CLASS_TYPE = "kubernetes:resource.k8s.io/v1:DeviceClass"


def drops_extended_resource_name(config: StackConfig) -> bool:
    """Whether the chart's DeviceClasses lose `extendedResourceName` on this stack: the gate is off on its cluster."""
    return not config.target.enabled("DRAExtendedResource")


def without_extended_resource_name(resource_type: str, props: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """A rendered DeviceClass without `spec.extendedResourceName`; None when there is nothing to drop."""
    spec = props.get("spec")
    if resource_type != DEVICE_CLASS_TYPE or not isinstance(spec, Mapping) or "extendedResourceName" not in spec:
        return None
    return {**props, "spec": {k: v for k, v in spec.items() if k != "extendedResourceName"}}

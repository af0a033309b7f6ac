"""What a GPU node group looks like to Kubernetes: labels, taints, launch-template settings, GPU summary.

The DRA chart's kubelet plugin is admitted by the chart's affinity on nodes labeled `nvidia.com/gpu.present=true` (or
with NFD labels) and tolerates the `nvidia.com/gpu` NoSchedule taint (kubeletPlugin.affinity and .tolerations in
kubernetes-sigs/dra-driver-nvidia-gpu@v0.4.1:deployments/helm/dra-driver-nvidia-gpu/values.yaml;
docs/sources.md#chart-values); gpu-dra sets gpu.present on DRA groups for that affinity only. From Kubernetes 1.35 the
AL2023 NVIDIA AMI sets it on every NVIDIA node (awslabs/amazon-eks-ami@v20260209 nodeadm/internal/kubelet/config.go),
so which plugin runs where rests on gpu-dra's own `gpu-dra.io/allocation` label: `dra` or `device-plugin`.
"""

from __future__ import annotations

import base64
from dataclasses import dataclass
from typing import Any

from gpu_dra.core.config.models import (
    AllocationMode,
    AmiType,
    AutoModeNodePool,
    CapacityType,
    KarpenterNodePool,
    NodeGroup,
    StackConfig,
    Taint,
    TaintEffect,
)
from gpu_dra.core.facts.hardware import INSTANCE_TYPES
from gpu_dra.core.facts.labels import (
    ALLOCATION_LABEL,
    DEVICE_PLUGIN_NODE_LABEL,
    DEVICE_PLUGIN_SOURCE_LABEL,
    DRA_NODE_LABEL,
    GPU_TAINT_KEY,
    NODE_GROUP_LABEL,
)

EKS_TAINT_EFFECTS = {"NoSchedule": "NO_SCHEDULE", "NoExecute": "NO_EXECUTE", "PreferNoSchedule": "PREFER_NO_SCHEDULE"}

# Bottlerocket NVIDIA variants run NVIDIA's device plugin unless told not to (Bottlerocket >= 1.63.0, bottlerocket
# PR #4856; AWS device-management docs). EKS merges TOML user data of a launch template into its own bootstrap
# settings for Bottlerocket managed node groups (docs.aws.amazon.com/eks/latest/userguide/launch-templates.html).
BOTTLEROCKET_DEVICE_PLUGIN_OFF = "[settings.kubelet-device-plugins.nvidia]\nenabled = false\n"


def is_bottlerocket(ami_type: AmiType) -> bool:
    return ami_type.value.startswith("BOTTLEROCKET")


def node_labels(group: NodeGroup | KarpenterNodePool | AutoModeNodePool) -> dict[str, str]:
    """The labels gpu-dra puts on a node group's or a NodePool's nodes: which GPU plugin serves them."""
    labels = {**group.labels, NODE_GROUP_LABEL: group.name}
    if group.allocation_mode is AllocationMode.dra or isinstance(group, AutoModeNodePool):
        labels[DRA_NODE_LABEL[0]] = DRA_NODE_LABEL[1]
        labels[ALLOCATION_LABEL] = "dra"
    else:
        labels[ALLOCATION_LABEL] = DEVICE_PLUGIN_NODE_LABEL[1]
        labels[DEVICE_PLUGIN_SOURCE_LABEL] = device_plugin_source(group)
    return labels


def taint_object(taint: Taint) -> dict[str, str]:
    """A taint as a Node's spec.taints (and a NodePool's template) writes it: no value key when it has none."""
    return {"key": taint.key, **({"value": taint.value} if taint.value else {}), "effect": taint.effect.value}


def well_known_labels(instance_type: str) -> dict[str, str]:
    """The labels the kubelet sets on every node, beside the node group's own: its instance type, OS and CPU
    architecture (https://kubernetes.io/docs/reference/labels-annotations-taints/). Pods select them too."""
    itype = INSTANCE_TYPES.get(instance_type)
    arch = "arm64" if itype is not None and itype.cpu_arch == "arm64" else "amd64"
    return {"node.kubernetes.io/instance-type": instance_type, "kubernetes.io/os": "linux", "kubernetes.io/arch": arch}


def device_plugin_source(group: NodeGroup | KarpenterNodePool) -> str:
    bottlerocket = group.bottlerocket if isinstance(group, KarpenterNodePool) else is_bottlerocket(group.ami_type)
    return "bottlerocket" if bottlerocket else "chart"


def node_taints(group: NodeGroup | KarpenterNodePool | AutoModeNodePool) -> list[Taint]:
    """The group's taints, and on DRA nodes NVIDIA's GPU taint, which keeps pods that do not tolerate it off the GPU
    nodes (on Auto Mode, AWS's GPU NodePool examples set the same one:
    https://docs.aws.amazon.com/eks/latest/userguide/ml-node-pools.html)."""
    taints = list(group.taints)
    if group.allocation_mode is AllocationMode.dra and not any(t.key == GPU_TAINT_KEY for t in taints):
        taints.append(Taint.model_validate({"key": GPU_TAINT_KEY, "value": "true", "effect": TaintEffect.NoSchedule}))
    return taints


@dataclass(frozen=True)
class LaunchTemplateSettings:
    image_volume_device: str
    user_data_base64: str | None
    capacity_block: bool
    # A Capacity Block group's one instance type, which EKS reads from the launch template only: the template must set
    # `InstanceType` (https://docs.aws.amazon.com/eks/latest/userguide/capacity-blocks-mng.html, procedure step 1),
    # and once it does, the node group may name no instance types (https://docs.aws.amazon.com/eks/latest/userguide/
    # launch-templates.html, the note under "Launch template configuration basics"). None for other groups, whose
    # instance types stay on the node group.
    instance_type: str | None


def launch_template_settings(group: NodeGroup) -> LaunchTemplateSettings:
    bottlerocket = is_bottlerocket(group.ami_type)
    user_data = None
    if bottlerocket and group.allocation_mode is AllocationMode.dra:
        user_data = base64.b64encode(BOTTLEROCKET_DEVICE_PLUGIN_OFF.encode()).decode()
    capacity_block = group.capacity_type is CapacityType.CAPACITY_BLOCK
    # Bottlerocket keeps container images on its second (data) volume; AL2023 on the root volume.
    return LaunchTemplateSettings(image_volume_device="/dev/xvdb" if bottlerocket else "/dev/xvda",
                                  user_data_base64=user_data, capacity_block=capacity_block,
                                  instance_type=group.instance_types[0] if capacity_block else None)


def gpu_summary(config: StackConfig) -> dict[str, Any]:
    """Per GPU node group: instance types, GPUs per node and model, and GPUs at max size."""
    summary = {}
    for group in config.node_groups:
        itype = INSTANCE_TYPES[group.instance_types[0]]
        summary[group.name] = {
            "instanceTypes": list(group.instance_types),
            "gpusPerNode": itype.gpus,
            "model": itype.gpu.product_name,
            "maxGpus": itype.gpus * group.scaling.max,
            "allocationMode": group.allocation_mode.value,
            "summary": f"{group.instance_types[0]} x {itype.gpus} x {itype.gpu.product_name}",
        }
    return summary

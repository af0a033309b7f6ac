"""The node labels, taints and AWS tags gpu-dra sets and reads, each once with why it is what it is.

NVIDIA's: the label one of the DRA chart's kubelet-plugin affinity terms admits, and the taint the plugin tolerates
(kubeletPlugin.affinity and .tolerations in
kubernetes-sigs/dra-driver-nvidia-gpu@v0.4.1:deployments/helm/dra-driver-nvidia-gpu/values.yaml). gpu-dra sets the
label on DRA groups so that affinity admits them, but it says nothing about how a node allocates GPUs: from
Kubernetes 1.35 the AL2023 nodeadm puts it on every node with an NVIDIA PCI device, device-plugin nodes included
(awslabs/amazon-eks-ami@v20260209:nodeadm/internal/kubelet/config.go, PR #2607, still in v20260724). Which plugin
serves a node is gpu-dra's own label, gpu-dra.io/allocation (dra or device-plugin).
"""

from __future__ import annotations

DRA_NODE_LABEL = ("nvidia.com/gpu.present", "true")
GPU_TAINT_KEY = "nvidia.com/gpu"

GPU_DRA_LABEL_PREFIX = "gpu-dra.io/"  # gpu-dra's own: a node group's or pool's config may not set them
DEVICE_PLUGIN_NODE_LABEL = ("gpu-dra.io/allocation", "device-plugin")
ALLOCATION_LABEL = DEVICE_PLUGIN_NODE_LABEL[0]  # dra or device-plugin: which GPU plugin serves the node
NODE_GROUP_LABEL = "gpu-dra.io/node-group"  # also the instances' tag
# Which device plugin serves a device-plugin group: Bottlerocket's built-in one, or NVIDIA's chart (AL2023 ships none).
DEVICE_PLUGIN_SOURCE_LABEL = "gpu-dra.io/device-plugin"
SYSTEM_NODE_LABEL = ("gpu-dra.io/role", "system")

# Tags on the cluster: which stack and environment it serves (the policy pack reads the environment from it).
STACK_TAG = "gpu-dra.io/stack"
ENVIRONMENT_TAG = "gpu-dra.io/environment"

"""EKS Auto Mode as gpu-dra runs GPU NodePools on it, each fact with the page it was read on (December 2026), and
what AWS does not document, said as such.

Documented: Auto Mode "Includes the NVIDIA DRA driver and the EFA DRA driver (DRANET) in the node runtime, so there
is nothing for you to install or manage", "prevents a DRA driver and a device plugin from managing the same device
type on the same node", and "Requires Kubernetes version 1.36 or later"
(https://docs.aws.amazon.com/eks/latest/userguide/device-management.html, and
device-management-nvidia-dra-device-plugin.html). The pages link a section "Using DRA with EKS Auto Mode" whose text
gpu-dra has not been able to read; what it may say is in UNDOCUMENTED below until it is.
"""

from __future__ import annotations

from gpu_dra.core.facts.eks import AddonName

# DRA on Auto Mode's own driver: "Requires Kubernetes version 1.36 or later" (device-management.html).
MIN_KUBERNETES_VERSION = "1.36"

# The GPU instance families Auto Mode launches: the NVIDIA ones of "Accelerated Computing (P/G/Inf/Trn)" (g4ad's
# GPUs are AMD's; inf and trn are AWS's chips): https://docs.aws.amazon.com/eks/latest/userguide/
# automode-learn-instances.html, "Supported instance reference" (awsdocs/amazon-eks-user-guide@06faff14:
# latest/ug/automode/automode-learn-instances.adoc).
GPU_FAMILIES = ("p6-b200", "p6-b300", "p5", "p5e", "p5en", "p4d", "p4de", "p3dn", "g7e", "g6", "gr6", "g6e", "g5g",
                "g5", "g4dn")

# The NodeClass Auto Mode creates with its built-in NodePools, which gpu-dra's GPU NodePools use: "When you create a
# cluster without built-in node pools, the default NodeClass is not automatically provisioned"
# (https://docs.aws.amazon.com/eks/latest/userguide/create-node-pool.html). So gpu-dra keeps the built-in pools on:
# `system` (CriticalAddonsOnly taint) and `general-purpose` (amd64, on-demand, C/M/R families) run what is not a GPU
# pod (https://docs.aws.amazon.com/eks/latest/userguide/set-builtin-node-pools.html). A NodePool of gpu-dra's may not
# take their names.
NODE_CLASS_REF = {"group": "eks.amazonaws.com", "kind": "NodeClass", "name": "default"}
BUILT_IN_NODE_POOLS = ("general-purpose", "system")

# "EKS Auto Mode uses different labels than Karpenter. Labels related to EC2 managed instances start with
# eks.amazonaws.com" (create-node-pool.html, "EKS Auto Mode Supported Labels"): a NodePool's own labels stay out of
# that domain and Karpenter's, which Auto Mode sets.
RESERVED_LABEL_DOMAINS = ("eks.amazonaws.com", "karpenter.sh", "karpenter.k8s.aws")
# Every Auto Mode node carries it; AWS's own charts keep their DaemonSets off such nodes with `NotIn [auto]`
# (aws/eks-charts@c043cef4:stable/aws-dranet/templates/daemonset.yaml).
COMPUTE_TYPE_LABEL = ("eks.amazonaws.com/compute-type", "auto")
GPU_MANUFACTURER_LABEL = ("eks.amazonaws.com/instance-gpu-manufacturer", "nvidia")


def node_labels(instance_type: str, gpus: int) -> dict[str, str]:
    """Labels Auto Mode puts on a GPU node, those whose value the instance type alone gives (create-node-pool.html,
    "EKS Auto Mode Supported Labels"); instance-gpu-name and instance-gpu-memory are left out, their values per GPU
    model being listed nowhere gpu-dra has read."""
    return {COMPUTE_TYPE_LABEL[0]: COMPUTE_TYPE_LABEL[1], GPU_MANUFACTURER_LABEL[0]: GPU_MANUFACTURER_LABEL[1],
            "eks.amazonaws.com/instance-family": instance_type.split(".", 1)[0],
            "eks.amazonaws.com/instance-gpu-count": str(gpus)}

# The EKS add-ons an Auto Mode cluster still takes: of gpu-dra's four, CoreDNS alone lists "EKS Auto Mode" among its
# compatible compute types (https://docs.aws.amazon.com/eks/latest/userguide/workloads-add-ons-available-eks.html);
# the VPC CNI and kube-proxy are EC2 only, and "You do not need to install the EKS Pod Identity Agent on EKS Auto
# Mode Clusters. This capability is built into EKS Auto Mode" (pod-id-agent-setup.html).
ADDONS: tuple[AddonName, ...] = ("coredns",)

# What gpu-dra needs to judge a claim on Auto Mode and AWS does not document (December 2026). Explain, check and the
# docs name each where a verdict leans on it.
UNDOCUMENTED = {
    "driver": "which release of NVIDIA's DRA driver Auto Mode runs, and so which attributes and capacities its GPUs "
              "publish: gpu-dra judges them as the release draDriver.version names publishes them",
    "device-classes": "which DeviceClasses Auto Mode creates (the chart's gpu.nvidia.com and mig.nvidia.com are not "
                      "installed, since gpu-dra installs no chart there): templates name the stack's own classes",
    "choice": "how Auto Mode picks its DRA driver or its device plugin for a node",
    "provisioning": "what Auto Mode knows of a claim before it launches a node (Karpenter's own DRA metadata is "
                    "per release; Auto Mode's is not published): gpu-dra judges each allowed instance type on the "
                    "devices it would have",
}

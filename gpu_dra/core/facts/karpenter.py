"""Karpenter (aws/karpenter-provider-aws) as gpu-dra installs it for GPU NodePools, each fact with the release it
was read at. Karpenter 1.15.0 (2026-10-10) provisions nodes for pending ResourceClaims from per-instance-type
metadata of what the NVIDIA DRA driver publishes (alpha, "nvidia and efa driver dra support (#9550)"); 1.15.2
changes only that metadata (release notes, https://github.com/aws/karpenter-provider-aws/releases/tag/v1.15.2).
The metadata itself is facts/karpenter_dra.py, generated from the releases' sources.
"""

from __future__ import annotations

from gpu_dra.core.facts.karpenter_dra import SUPPORTED_VERSIONS

# Karpenter releases gpu-dra installs (the Helm chart's version, no "v": https://karpenter.sh/v1.15/upgrading/
# compatibility/): only those whose DRA metadata it has read, since that metadata decides which claims Karpenter
# ever gives a node. 1.15.2's (g7/g7e added, g6f/gr6f dropped, memory values updated) is in no snapshot read yet.
KARPENTER_VERSIONS = SUPPORTED_VERSIONS
DEFAULT_KARPENTER_VERSION = KARPENTER_VERSIONS[-1]

# The charts (the controller, and its CRDs as their own chart so that an upgrade updates them: "Helm does not manage
# the lifecycle of CRDs" shipped in a chart's crds/, aws/karpenter-provider-aws@v1.14.1:website/content/en/preview/
# upgrading/upgrade-guide.md, "CRD Upgrades").
CHART_REPOSITORY = "oci://public.ecr.aws/karpenter"
CONTROLLER_CHART = "karpenter"
CRD_CHART = "karpenter-crd"
# kube-system puts the controller in the API server's system-leader-election and kube-system-service-accounts
# FlowSchemas (getting-started, "Preventing APIServer Request Throttling", v1.15 docs).
NAMESPACE = "kube-system"
SERVICE_ACCOUNT = "karpenter"

NODE_POOL_API = "karpenter.sh/v1"
NODE_CLASS_API = "karpenter.k8s.aws/v1"
# The annotation that tells Karpenter how the DRA driver shares each GPU (the driver's consumableShares): absent or
# "disabled", an integer, "memory" or "unlimited" (karpenter.sh/docs/tasks/dra/, "Requesting a timesliced GPU").
CONSUMABLE_CAPACITY_ANNOTATION = "karpenter.k8s.aws/nvidia-consumable-capacity"
# Label domains a NodePool's template labels may not use, with the few keys they allow that gpu-dra never sets
# (aws/karpenter-provider-aws@v1.14.1:pkg/apis/crds/karpenter.sh_nodepools.yaml:224-231: 'label domain
# "karpenter.sh" is restricted', the same for karpenter.k8s.aws, and kubernetes.io/hostname).
RESERVED_LABEL_DOMAINS = ("karpenter.sh", "karpenter.k8s.aws")
RESERVED_LABELS = ("kubernetes.io/hostname",)


def reserved_label(key: str) -> str | None:
    """Why a NodePool may not carry the label `key` (the CRD's message), or None."""
    domain = key.split("/", 1)[0] if "/" in key else ""
    for reserved in RESERVED_LABEL_DOMAINS:
        if domain.endswith(reserved):
            return f'label domain "{reserved}" is restricted'
    return f'label "{key}" is restricted' if key in RESERVED_LABELS else None

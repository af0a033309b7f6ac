"""The EKS Auto Mode GPU NodePools of a stack (gpu-dra:autoMode), as Kubernetes objects: Karpenter's NodePool API on
Auto Mode's default NodeClass, as AWS's GPU NodePool examples write them
(https://docs.aws.amazon.com/eks/latest/userguide/ml-node-pools.html, "EKS Auto Mode"; create-node-pool.html)."""

from __future__ import annotations

from typing import Any

from gpu_dra.core.config.models import AutoModeNodePool
from gpu_dra.core.facts import auto_mode
from gpu_dra.core.render.karpenter import launched_node_pool


def node_pool(pool: AutoModeNodePool) -> dict[str, Any]:
    """The NodePool: the pool's instance types and capacity types on NVIDIA GPU instances of one architecture; at most
    max_nodes nodes; its consolidation; its nodes labelled and tainted as a DRA node group's."""
    key, value = auto_mode.GPU_MANUFACTURER_LABEL
    return launched_node_pool(pool, dict(auto_mode.NODE_CLASS_REF), [{"key": key, "operator": "In", "values": [value]}])

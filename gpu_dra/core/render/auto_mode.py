"""The EKS Auto Mode GPU NodePools of a stack (gpu-dra:autoMode), as Kubernetes objects: Karpenter's NodePool API on
Auto Mode's default NodeClass, as AWS's GPU NodePool examples write them
(https://docs.aws.amazon.com/eks/latest/userguide/ml-node-pools.html, "EKS Auto Mode"; create-node-pool.html)."""

from __future__ import annotations

from typing import Any

from gpu_dra.core.config.models import AutoModeNodePool
from gpu_dra.core.facts import auto_mode, karpenter
from gpu_dra.core.render.karpenter import NODE_POOL_KIND
from gpu_dra.core.render.nodes import node_labels, node_taints, taint_object, well_known_labels


def node_pool(pool: AutoModeNodePool) -> dict[str, Any]:
    """The NodePool: the pool's instance types and capacity types on NVIDIA GPU instances of one architecture; at most
    max_nodes nodes; its consolidation; its nodes labelled and tainted as a DRA node group's."""
    arch = well_known_labels(pool.instance_types[0])["kubernetes.io/arch"]  # one architecture per pool (config)
    return {
        "apiVersion": karpenter.NODE_POOL_API,
        "kind": NODE_POOL_KIND,
        "metadata": {"name": pool.name},
        "spec": {
            "template": {
                "metadata": {"labels": node_labels(pool)},
                "spec": {
                    "nodeClassRef": dict(auto_mode.NODE_CLASS_REF),
                    "requirements": [
                        {"key": "node.kubernetes.io/instance-type", "operator": "In",
                         "values": list(pool.instance_types)},
                        {"key": "karpenter.sh/capacity-type", "operator": "In", "values": list(pool.capacity_types)},
                        {"key": "kubernetes.io/arch", "operator": "In", "values": [arch]},
                        {"key": auto_mode.GPU_MANUFACTURER_LABEL[0], "operator": "In",
                         "values": [auto_mode.GPU_MANUFACTURER_LABEL[1]]},
                    ],
                    "taints": [taint_object(taint) for taint in node_taints(pool)],
                },
            },
            "limits": {"nodes": pool.max_nodes},
            "disruption": {"consolidationPolicy": pool.consolidation, "consolidateAfter": pool.consolidate_after},
        },
    }

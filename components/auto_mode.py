"""EKS Auto Mode's GPU NodePools of a stack (gpu-dra:autoMode). The cluster runs Auto Mode (components/cluster.py);
Auto Mode brings NVIDIA's DRA driver on its nodes, so nothing else is installed for them. Every document comes from
the core (gpu_dra.core.render.auto_mode); names start with the cluster's and carry the NodePool's, never a list
position."""

from __future__ import annotations

import pulumi

from components.objects import custom_resource
from gpu_dra.core.config.models import StackConfig
from gpu_dra.core.render import auto_mode as render


class AutoModeNodePools(pulumi.ComponentResource):
    """One Auto Mode NodePool per gpu-dra:autoMode.nodePools entry, on the default NodeClass."""

    def __init__(self, config: StackConfig, opts: pulumi.ResourceOptions):
        name = config.cluster.name
        super().__init__("gpu-dra:autoMode:AutoModeNodePools", name, None, opts)
        for pool in config.auto_mode_node_pools:
            custom_resource(f"{name}-{pool.name}", render.node_pool(pool), pulumi.ResourceOptions(parent=self))
        self.register_outputs({})

"""A stack's nodes, described once: its GPU node groups (or an existing cluster's pools) at max size and, on EKS,
the system group, each node with the labels and taints it carries. explain --stack, migrate and the pack's fleet
checks judge pods against these same Nodes, so NodeAffinity and TaintToleration (which the scheduler runs before
DynamicResources) give one verdict in every verb."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from gpu_dra.core.analysis.inventory import launched_pools, pool_spec
from gpu_dra.core.analysis.pods import ClusterNode
from gpu_dra.core.analysis.pools import Node
from gpu_dra.core.config.models import NodeGroup, NodePool, Stack
from gpu_dra.core.facts import auto_mode
from gpu_dra.core.facts.hardware import INSTANCE_TYPES
from gpu_dra.core.facts.labels import SYSTEM_NODE_LABEL
from gpu_dra.core.facts.target import Platform
from gpu_dra.core.render.nodes import node_labels, node_taints, taint_object, well_known_labels


@dataclass(frozen=True)
class GroupView:
    """A node group (or an existing cluster's pool) as placement sees it: every node at max size."""

    name: str
    mode: str  # "dra", "device-plugin" or "system"
    nodes: int
    gpus: int  # per node
    model: str
    instance_type: str
    labels: Mapping[str, str]
    taints: tuple[Mapping[str, str], ...]

    def node_names(self) -> list[str]:
        return [f"{self.name}-{n}" for n in range(self.nodes)]  # as inventory.synthesize names them

    @property
    def summary(self) -> str:
        return f"{self.nodes} x {self.instance_type}, {self.gpus} x {self.model} each"


def group_views(stack: Stack) -> list[GroupView]:
    """The stack's GPU node groups and Karpenter NodePools (or an existing cluster's pools) and, on EKS, the system
    group, with the labels and taints their nodes carry: gpu-dra's (render/nodes), EKS's node group label or
    Karpenter's NodePool label, and the well-known instance-type, os and arch labels."""
    config = stack.config
    views = []
    groups: list[NodeGroup | NodePool] = [*config.node_groups, *config.node_pools]
    for group in groups:
        if isinstance(group, NodeGroup):
            itype = INSTANCE_TYPES[group.instance_types[0]]
            labels = {**node_labels(group), "eks.amazonaws.com/nodegroup": f"{config.cluster.name}-{group.name}",
                      **well_known_labels(itype.name)}
            taints = tuple(map(taint_object, node_taints(group)))
            nodes, gpus, model, name = group.scaling.max, itype.gpus, itype.gpu.product_name, itype.name
        else:
            assert isinstance(group, NodePool)
            hardware = pool_spec(group).hardware()
            labels = dict(group.labels)
            taints = tuple(map(taint_object, group.taints))
            nodes, gpus = group.nodes, hardware.gpus if hardware else 0
            model = hardware.gpu.product_name if hardware else str(group.gpu_model)
            name = group.instance_type or f"{group.gpu_count} x {group.gpu_model}"
            labels |= {"kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64"}
        views.append(GroupView(group.name, group.allocation_mode.value, nodes, gpus, model, name, labels, taints))
    # each instance type at the node limit, as inventory.synthesize
    for pool, spec in zip(config.launched_node_pools, launched_pools(config), strict=True):
        taints = tuple(map(taint_object, node_taints(pool)))
        for itype in map(INSTANCE_TYPES.__getitem__, pool.instance_types):
            labels = {**node_labels(pool), "karpenter.sh/nodepool": pool.name, **well_known_labels(itype.name),
                      **(auto_mode.node_labels(itype.name, itype.gpus) if spec.auto_mode else {})}
            views.append(GroupView(spec.group(itype.name), pool.allocation_mode.value, pool.max_nodes,
                                   itype.gpus, itype.gpu.product_name, itype.name, labels, taints))
    if config.cluster.platform is Platform.eks and config.auto_mode is None:  # Auto Mode's built-in pools instead
        system = config.cluster.system_node_group
        views.append(GroupView("system", "system", system.scaling.max, 0, "", system.instance_types[0],
                               {SYSTEM_NODE_LABEL[0]: SYSTEM_NODE_LABEL[1], "kubernetes.io/os": "linux",
                                "node.kubernetes.io/instance-type": system.instance_types[0],
                                "kubernetes.io/arch": "arm64" if system.ami_type.endswith("ARM_64_STANDARD")
                                else "amd64"}, ()))
    return views


def cluster_nodes(views: Sequence[GroupView]) -> list[ClusterNode]:
    return [ClusterNode(Node(name, {**view.labels, "kubernetes.io/hostname": name}), view.taints)
            for view in views for name in view.node_names()]

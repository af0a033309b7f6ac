"""The whole stack as Pulumi resources: cluster access, then the DRA objects on that cluster when this up reaches
it."""

from __future__ import annotations

import pulumi

from components.auto_mode import AutoModeNodePools
from components.cluster import cluster_access
from components.dra import DeviceClasses, TeamResources
from components.driver import GpuDrivers
from components.karpenter import Karpenter
from components.kueue import Kueue
from gpu_dra.core.config.deploy_time import placeholders
from gpu_dra.core.config.models import Stack

# What a run from outside the VPC of a private-only endpoint leaves for the next one (deployFrom.network: outside).
IN_CLUSTER_LAYER_DEFERRED = ("not declared: this up runs outside the VPC (gpu-dra:cluster.deployFrom.network: "
                             "outside) and cannot reach the private endpoint. Set deployFrom.network: vpc and run the "
                             "next `pulumi up` inside the VPC: it installs the DRA driver, the DeviceClasses and the "
                             "teams' objects")


def build(stack: Stack) -> None:
    for finding in placeholders(stack):  # a real `pulumi up` stopped before this (__main__.py)
        pulumi.log.warn(f"{finding}; `pulumi up` refuses it")
    access, outputs = cluster_access(stack)
    for key, value in outputs.items():
        pulumi.export(key, value)
    if access.karpenter is not None:
        # Its AWS side belongs to the AWS layer; its charts and NodePools need the provider, as the drivers do.
        Karpenter(stack.config, access.karpenter, access.provider)
    if access.provider is None:
        pulumi.export("inClusterLayer", IN_CLUSTER_LAYER_DEFERRED)
        return
    on_cluster = pulumi.ResourceOptions(provider=access.provider)
    if stack.config.installs_driver_chart:
        GpuDrivers(stack.config, access.node_groups, on_cluster)
    else:  # Auto Mode runs NVIDIA's DRA driver on its nodes itself
        AutoModeNodePools(stack.config, on_cluster)
    DeviceClasses(stack, on_cluster)
    teams = {team.name: TeamResources(team, on_cluster, protect=stack.config.protects_team_namespaces)
             for team in stack.teams}
    if stack.config.kueue is not None:
        Kueue(stack, teams, on_cluster)
    pulumi.export("teams", {t.name: t.namespace_name for t in stack.teams})

"""The whole stack as Pulumi resources: cluster access, then the DRA objects on that cluster."""

from __future__ import annotations

import pulumi

from components.cluster import cluster_access
from components.dra import DeviceClasses, TeamResources
from components.driver import GpuDrivers
from gpu_dra.core.config.models import Stack


def build(stack: Stack) -> None:
    access, outputs = cluster_access(stack)
    on_cluster = pulumi.ResourceOptions(provider=access.provider)
    GpuDrivers(stack.config, access.node_groups, on_cluster)
    DeviceClasses(stack, on_cluster)
    for team in stack.teams:
        TeamResources(team, on_cluster)
    for key, value in outputs.items():
        pulumi.export(key, value)
    pulumi.export("teams", {t.name: t.namespace_name for t in stack.teams})

"""A stack: every `gpu-dra:*` key of its file, and the validated stack with the teams it hosts."""

from __future__ import annotations

from typing import Any

from pydantic import Field, field_validator

from gpu_dra.core.config.models.auto_mode import AutoMode, AutoModeNodePool
from gpu_dra.core.config.models.base import Model
from gpu_dra.core.config.models.choices import Environment
from gpu_dra.core.config.models.classes import DeviceClassConfig, LegacyMapping
from gpu_dra.core.config.models.cluster import Cluster
from gpu_dra.core.config.models.driver import DraDriver
from gpu_dra.core.config.models.fields import dns_label
from gpu_dra.core.config.models.karpenter import Karpenter, KarpenterNodePool
from gpu_dra.core.config.models.kueue import Kueue
from gpu_dra.core.config.models.nodes import NodeGroup, NodePool
from gpu_dra.core.config.models.team import Team, TeamHosting
from gpu_dra.core.facts.nvidia import release_level_of
from gpu_dra.core.facts.target import Target

CONFIG_NAMESPACE = "gpu-dra"


class StackConfig(Model):
    """Every `gpu-dra:*` key of a stack file."""

    environment: Environment = Field(description="dev, staging or prod; prod is hardened and protected")
    cluster: Cluster
    node_groups: list[NodeGroup] = Field(default_factory=list, description="GPU managed node groups (platform eks)")
    node_pools: list[NodePool] = Field(default_factory=list,
                                       description="An existing cluster's GPU nodes, by label (platform existing)")
    karpenter: Karpenter | None = Field(
        default=None, description="Karpenter, installed by the program, and its GPU NodePools (platform eks)")
    auto_mode: AutoMode | None = Field(
        default=None, description="EKS Auto Mode on the cluster (Kubernetes 1.36+) and its GPU NodePools; Auto Mode "
                                  "runs NVIDIA's DRA driver itself, so no driver chart is installed")
    dra_driver: DraDriver = Field(default=DraDriver(), description="NVIDIA's DRA driver chart")
    kueue: Kueue | None = Field(default=None, description="Kueue, installed by the program, with a queue per team "
                                                          "that declares one (docs/queues.md)")
    device_classes: list[DeviceClassConfig] = Field(default_factory=list, description="Platform DeviceClasses")
    legacy_mappings: list[LegacyMapping] = Field(
        default_factory=list, description="Serve unchanged extended-resource requests from a DeviceClass")
    teams: dict[str, TeamHosting | None] = Field(default_factory=dict,
                                                 description="Teams hosted; each has stacks/teams/<team>.yaml")
    kubeconfig: str | None = Field(default=None, description="Secret kubeconfig of an existing cluster")
    protect_team_namespaces: bool | None = Field(
        default=None,
        description="Protect the team namespaces, so that `pulumi up` refuses to delete or replace one (a team "
                    "dropped, a namespace renamed) until this is false. Default: true in prod. Either way a "
                    "namespace Pulumi deletes is kept in the cluster (retainOnDelete), with what runs in it")

    @field_validator("teams")
    @classmethod
    def _team_names(cls, values: dict[str, Any]) -> dict[str, Any]:
        for name in values:
            dns_label(name)
        return values

    @property
    def target(self) -> Target:
        """The cluster the stack's verdicts are for: its Kubernetes version, platform and declared gates, and the
        pinned driver release."""
        cluster = self.cluster
        return Target(cluster.kubernetes_version, cluster.platform, dict(cluster.feature_gates),
                      release_level_of(self.dra_driver.version))

    @property
    def karpenter_node_pools(self) -> list[KarpenterNodePool]:
        return list(self.karpenter.node_pools) if self.karpenter else []

    @property
    def auto_mode_node_pools(self) -> list[AutoModeNodePool]:
        return list(self.auto_mode.node_pools) if self.auto_mode else []

    @property
    def launched_node_pools(self) -> list[KarpenterNodePool | AutoModeNodePool]:
        """The GPU NodePools whose nodes are launched on demand: Karpenter's, then Auto Mode's."""
        return [*self.karpenter_node_pools, *self.auto_mode_node_pools]

    @property
    def installs_driver_chart(self) -> bool:
        """Whether gpu-dra installs NVIDIA's DRA driver chart: everywhere but on Auto Mode, which runs its own."""
        return self.auto_mode is None

    @property
    def protects_team_namespaces(self) -> bool:
        if self.protect_team_namespaces is not None:
            return self.protect_team_namespaces
        return self.environment is Environment.prod

    @property
    def protect(self) -> bool:
        if self.cluster.protect is not None:
            return self.cluster.protect
        return self.environment is Environment.prod


class PlatformKey(Model):
    """A key only the platform may set, written in a hosted team's file: the loader leaves it out, and the policy
    team-file-platform-keys reports it at `line`."""

    team: str
    file: str
    line: int | None
    key: str


class Stack(Model):
    """A validated stack: its config and the teams it hosts, overrides applied."""

    name: str
    config: StackConfig
    teams: list[Team]
    platform_keys: list[PlatformKey] = Field(default_factory=list)

"""Typed configuration: every `gpu-dra:*` stack key and the teams' own files, as pydantic v2 models.

Shape, types and single-object rules live here; rules that need the whole stack (a team's namespace clashing with
another's, a mapping naming an undeclared class) live in `gpu_dra.core.config.loader`. Unknown keys are always errors.
One module per part of the files: `base` (the strict base model, errors on fields), `choices` (the words keys allow),
`fields` (checked text: names, quantities, descriptions), `network`, `cluster`, `nodes` (system node group, GPU node
groups and pools), `karpenter` and `auto_mode` (NodePools launched on demand), `kueue` (Kueue and the teams'
queues), `driver`, `classes` (match shorthand, DeviceClasses, legacy mappings), `templates` (claim templates), `team`,
`stack`.
"""

from gpu_dra.core.config.models.auto_mode import AutoMode, AutoModeNodePool
from gpu_dra.core.config.models.base import STRICT
from gpu_dra.core.config.models.choices import (
    AllocationCount,
    AllocationMode,
    AmiType,
    CapacityType,
    DeviceType,
    DriverSource,
    Environment,
    SupportType,
    TaintEffect,
)
from gpu_dra.core.config.models.classes import DeviceClassConfig, Match
from gpu_dra.core.config.models.cluster import SUPPORTED_KUBERNETES_VERSIONS, AccessEntry, Cluster
from gpu_dra.core.config.models.driver import DraDriver
from gpu_dra.core.config.models.fields import DESCRIPTION_ANNOTATION
from gpu_dra.core.config.models.karpenter import Karpenter, KarpenterNodePool, LaunchedNodePool
from gpu_dra.core.config.models.kueue import Kueue, Queue
from gpu_dra.core.config.models.network import NewVpc
from gpu_dra.core.config.models.nodes import NodeGroup, NodePool, Scaling, Taint
from gpu_dra.core.config.models.stack import CONFIG_NAMESPACE, PlatformKey, Stack, StackConfig
from gpu_dra.core.config.models.team import ADMIN_ACCESS_LABEL, Quota, Team, TeamHosting
from gpu_dra.core.config.models.templates import (
    MAX_TEMPLATES_PER_STACK,
    ClaimTemplate,
    DeviceChoice,
    Request,
    Sharing,
)

__all__ = [
    "ADMIN_ACCESS_LABEL", "CONFIG_NAMESPACE", "DESCRIPTION_ANNOTATION", "MAX_TEMPLATES_PER_STACK", "STRICT",
    "SUPPORTED_KUBERNETES_VERSIONS", "AccessEntry", "AllocationCount", "AutoMode", "AutoModeNodePool",
    "AllocationMode", "AmiType", "CapacityType", "ClaimTemplate", "Cluster", "DeviceChoice", "DeviceClassConfig",
    "DeviceType", "DraDriver", "DriverSource", "Environment", "Karpenter", "KarpenterNodePool", "Kueue",
    "LaunchedNodePool", "Queue",
    "Match", "NewVpc", "NodeGroup", "NodePool", "PlatformKey", "Quota", "Request", "Scaling", "Sharing", "Stack",
    "StackConfig", "SupportType", "Taint", "TaintEffect", "Team", "TeamHosting",
]

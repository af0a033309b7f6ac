"""GPU capacity EKS Auto Mode launches on demand (platform eks, Kubernetes 1.36+): the cluster runs Auto Mode, and
gpu-dra declares its GPU NodePools. Auto Mode brings NVIDIA's DRA driver on its nodes, so such a stack installs no
driver chart and no device plugin (facts/auto_mode)."""

from __future__ import annotations

from pydantic import Field, field_validator, model_validator

from gpu_dra.core.config.models.base import Model, raise_field_errors
from gpu_dra.core.config.models.choices import AllocationMode
from gpu_dra.core.config.models.karpenter import LaunchedNodePool
from gpu_dra.core.facts import auto_mode


class AutoModeNodePool(LaunchedNodePool):
    """An Auto Mode NodePool of GPU instances, on Auto Mode's default NodeClass. Its GPUs are served by Auto Mode's
    DRA driver: there is no allocation mode to choose."""

    @staticmethod
    def reserved_label(key: str) -> str | None:
        domain = key.split("/", 1)[0] if "/" in key else ""
        for reserved in auto_mode.RESERVED_LABEL_DOMAINS:
            if domain.endswith(reserved):
                return f"labels of {reserved} are Auto Mode's own"
        return None

    @field_validator("instance_types")
    @classmethod
    def _auto_mode_families(cls, values: list[str]) -> list[str]:
        outside = [t for t in values if t.split(".", 1)[0] not in auto_mode.GPU_FAMILIES]
        if outside:
            raise ValueError(f"EKS Auto Mode launches no {', '.join(outside)}: its NVIDIA GPU families are "
                             f"{', '.join(auto_mode.GPU_FAMILIES)} (EKS user guide, automode-learn-instances)")
        return values

    @property
    def allocation_mode(self) -> AllocationMode:
        return AllocationMode.dra


class AutoMode(Model):
    """EKS Auto Mode on the stack's cluster, with its built-in NodePools for what is not a GPU pod, and the GPU
    NodePools gpu-dra declares."""

    node_pools: list[AutoModeNodePool] = Field(min_length=1, description="GPU NodePools")

    @model_validator(mode="after")
    def _not_built_in(self) -> AutoMode:
        raise_field_errors("AutoMode", [
            (f"nodePools.{i}.name", f"{pool.name!r} is an Auto Mode built-in NodePool's name "
                                     f"({', '.join(auto_mode.BUILT_IN_NODE_POOLS)}); name the GPU NodePool "
                                     "otherwise")
            for i, pool in enumerate(self.node_pools) if pool.name in auto_mode.BUILT_IN_NODE_POOLS])
        return self

"""GPU capacity Karpenter launches on demand: the release gpu-dra installs and the GPU NodePools it declares
(platform eks). Each NodePool's nodes carry the same gpu-dra labels as a node group's, so the DRA driver and NVIDIA's
device plugin are placed on them alike."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, field_validator, model_validator

from gpu_dra.core.config.models.base import Model, raise_field_errors
from gpu_dra.core.config.models.choices import AllocationMode, DriverSource
from gpu_dra.core.config.models.fields import DnsLabel, GpuInstanceType
from gpu_dra.core.config.models.nodes import Taint
from gpu_dra.core.dra import metadata
from gpu_dra.core.facts import karpenter
from gpu_dra.core.facts.hardware import INSTANCE_TYPES
from gpu_dra.core.facts.labels import GPU_DRA_LABEL_PREFIX

CapacityTypeName = Literal["on-demand", "spot", "reserved"]


class LaunchedNodePool(Model):
    """A NodePool of GPU instances whose nodes a provisioner launches on demand (Karpenter, or EKS Auto Mode's)."""

    name: DnsLabel = Field(description="Unique among the stack's node groups and NodePools")
    instance_types: list[GpuInstanceType] = Field(
        min_length=1, description="EC2 GPU types of one GPU model and architecture; the provisioner launches the "
                                  "cheapest that fits the pending pods")
    capacity_types: list[CapacityTypeName] = Field(
        default_factory=lambda: list[CapacityTypeName](["on-demand"]), min_length=1,
        description="on-demand, spot, reserved (capacity reservations and blocks); reserved is preferred, then "
                    "spot, then on-demand")
    max_nodes: int = Field(ge=1, le=1000, description="limits.nodes: no node is launched beyond it")
    consolidation: Literal["WhenEmpty", "WhenEmptyOrUnderutilized"] = Field(
        default="WhenEmpty", description="disruption.consolidationPolicy; WhenEmpty never moves a running GPU pod")
    consolidate_after: str = Field(default="10m", pattern=r"^(\d+(s|m|h))+$|^Never$",
                                   description="disruption.consolidateAfter, e.g. 30s, 10m, 1h or Never")
    labels: dict[str, str] = Field(
        default_factory=dict, description="Kubernetes labels on the nodes; not gpu-dra.io/ ones (gpu-dra's own), nor "
                                          "the provisioner's own domains")
    taints: list[Taint] = Field(default_factory=list, description="Taints on the nodes")

    @staticmethod
    def reserved_label(key: str) -> str | None:
        """Why the provisioner refuses the label `key` on a NodePool, or None."""
        reason = karpenter.reserved_label(key)
        return f"Karpenter refuses it ({reason})" if reason else None

    @field_validator("instance_types")
    @classmethod
    def _one_model(cls, values: list[str]) -> list[str]:
        types = [INSTANCE_TYPES[t] for t in values]
        if len({t.gpu.key for t in types}) > 1:
            raise ValueError(f"mixes GPU models {', '.join(sorted({t.gpu.key for t in types}))}; claims select by "
                             "model, so use one NodePool per model")
        if len({t.cpu_arch for t in types}) > 1:
            raise ValueError("mixes x86_64 and arm64 types; one EC2NodeClass (one AMI) serves the NodePool")
        return values

    @model_validator(mode="after")
    def _keys(self) -> LaunchedNodePool:
        found: list[tuple[str | tuple[str, ...], str]] = []
        for key, value in self.labels.items():
            if problem := metadata.qualified_name_problem(key) or metadata.label_value_problem(key, value):
                found.append((("labels", key), problem))
            elif key.startswith(GPU_DRA_LABEL_PREFIX):
                found.append((("labels", key), f"{key}: {GPU_DRA_LABEL_PREFIX} labels are gpu-dra's own (set from "
                                               "allocationMode and the NodePool's name); remove it"))
            elif reason := self.reserved_label(key):
                found.append((("labels", key), f"{key}: {reason}; use a label of your own domain"))
        for index, taint in enumerate(self.taints):
            if problem := metadata.qualified_name_problem(taint.key):
                found.append((f"taints.{index}.key", problem))
            if taint.value and (problem := metadata.label_value_problem(taint.key, taint.value)):
                found.append((f"taints.{index}.value", problem))
        raise_field_errors(type(self).__name__, found)
        return self


class KarpenterNodePool(LaunchedNodePool):
    """A Karpenter NodePool of GPU instances, with its own EC2NodeClass."""

    allocation_mode: AllocationMode = Field(
        default=AllocationMode.dra, description="dra, or device-plugin for legacy nodes kept during migration")
    ami_family: Literal["AL2023", "Bottlerocket"] = Field(
        default="AL2023", description="The EC2NodeClass's AMI alias family; its NVIDIA variant is chosen for GPU types")
    disk_size: int = Field(default=200, ge=100, le=16384,
                           description="Root (AL2023) or data (Bottlerocket) gp3 volume in GiB; GPU images are large")

    @property
    def driver(self) -> DriverSource:
        """Where the NVIDIA driver lives: on the host, as the AMI aliases' NVIDIA variants install it."""
        return DriverSource.host

    @property
    def bottlerocket(self) -> bool:
        return self.ami_family == "Bottlerocket"


class Karpenter(Model):
    """Karpenter, installed by the program, and the GPU NodePools it serves (platform eks)."""

    version: str = Field(
        default=karpenter.DEFAULT_KARPENTER_VERSION, json_schema_extra={"enum": list(karpenter.KARPENTER_VERSIONS)},
        description=f"The Karpenter release: {', '.join(karpenter.KARPENTER_VERSIONS)} (the ones whose DRA "
                    "instance metadata gpu-dra has read)")
    node_pools: list[KarpenterNodePool] = Field(min_length=1, description="GPU NodePools")

    @field_validator("version", mode="before")
    @classmethod
    def _known(cls, value: object) -> object:
        if value not in karpenter.KARPENTER_VERSIONS:
            raise ValueError(f"{value!r}: gpu-dra installs Karpenter {', '.join(karpenter.KARPENTER_VERSIONS)}, the "
                             "releases whose DRA instance metadata it has read (write it without a leading v)")
        return value

"""The words config keys allow, as enums: written as text in the files, and read by render, analysis and policy.
The words that name facts (the platform, the driver's chart line, a sharing strategy) are the facts' enums
(gpu_dra.core.facts.target, gpu_dra.core.facts.nvidia_driver), accepted as text by their fields' `strict=False`."""

from __future__ import annotations

from enum import StrEnum
from typing import Any, cast

from pydantic import GetCoreSchemaHandler
from pydantic_core import CoreSchema


class Choice(StrEnum):
    """A config key's allowed values; written as text, so accepted as text even in strict models (which would
    demand the enum member itself)."""

    @classmethod
    def __get_pydantic_core_schema__(cls, source: Any, handler: GetCoreSchemaHandler) -> CoreSchema:
        return cast(CoreSchema, {**handler(source), "strict": False})


class Environment(Choice):
    dev = "dev"
    staging = "staging"
    prod = "prod"


class AccessPolicy(Choice):
    cluster_admin = "cluster-admin"
    admin = "admin"
    edit = "edit"
    view = "view"


class SupportType(Choice):
    """EKS `upgradePolicy.supportType`: what happens when the cluster's version leaves standard support
    (https://docs.aws.amazon.com/eks/latest/APIReference/API_UpgradePolicyRequest.html)."""

    STANDARD = "STANDARD"
    EXTENDED = "EXTENDED"


class AmiType(Choice):
    AL2023_x86_64_NVIDIA = "AL2023_x86_64_NVIDIA"
    AL2023_ARM_64_NVIDIA = "AL2023_ARM_64_NVIDIA"
    BOTTLEROCKET_x86_64_NVIDIA = "BOTTLEROCKET_x86_64_NVIDIA"
    BOTTLEROCKET_ARM_64_NVIDIA = "BOTTLEROCKET_ARM_64_NVIDIA"

    @property
    def cpu_arch(self) -> str:
        return "arm64" if "ARM_64" in self.value else "x86_64"


class AllocationMode(Choice):
    dra = "dra"
    device_plugin = "device-plugin"


class CapacityType(Choice):
    ON_DEMAND = "ON_DEMAND"
    SPOT = "SPOT"
    CAPACITY_BLOCK = "CAPACITY_BLOCK"


class DriverSource(Choice):
    """Where the NVIDIA kernel driver lives: on the host (EKS NVIDIA AMIs) or in the GPU Operator's container."""

    host = "host"
    gpu_operator = "gpu-operator"


class TaintEffect(Choice):
    NoSchedule = "NoSchedule"
    NoExecute = "NoExecute"
    PreferNoSchedule = "PreferNoSchedule"


class DeviceType(Choice):
    gpu = "gpu"
    mig = "mig"


class AllocationCount(Choice):
    ExactCount = "ExactCount"
    All = "All"

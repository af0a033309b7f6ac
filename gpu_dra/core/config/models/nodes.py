"""Nodes: the system node group, GPU managed node groups (platform eks) and an existing cluster's GPU node pools
(platform existing), with their labels and taints checked as EKS and the API server would."""

from __future__ import annotations

import re

from pydantic import Field, field_validator, model_validator

from gpu_dra.core.config.models.base import Model, field_error, raise_field_errors
from gpu_dra.core.config.models.choices import AllocationMode, AmiType, CapacityType, DriverSource, TaintEffect
from gpu_dra.core.config.models.fields import DnsLabel, GpuInstanceType
from gpu_dra.core.dra import metadata
from gpu_dra.core.facts.eks import RESERVED_NODE_GROUP_KEY_PREFIXES, reserved_key_prefix
from gpu_dra.core.facts.hardware import EC2_SIZE, EC2_SIZE_EXAMPLES, GPU_MODELS, INSTANCE_TYPES
from gpu_dra.core.facts.labels import DEVICE_PLUGIN_NODE_LABEL, GPU_DRA_LABEL_PREFIX
from gpu_dra.core.findings import did_you_mean


class Scaling(Model):
    min: int = Field(ge=0)
    desired: int = Field(ge=0)
    max: int = Field(ge=1)

    @model_validator(mode="after")
    def _ordered(self) -> Scaling:
        if self.max < self.min:
            raise field_error("max", f"must be >= scaling.min ({self.min})")
        if not self.min <= self.desired <= self.max:
            raise field_error("desired", f"must be between scaling.min ({self.min}) and scaling.max ({self.max})")
        return self


# Graviton families carry a "g" after the generation (m7g, c7gn, t4g, r8g); the rest of EKS's CPU types are x86_64.
_GRAVITON = re.compile(r"^[a-z]+\d+g[a-z]*\.")


class SystemNodeGroup(Model):
    """The small CPU node group that runs controllers (coredns, the DRA driver's controller)."""

    instance_types: list[str] = Field(default_factory=lambda: ["m7i.large"], min_length=1,
                                      description="CPU instance types of one architecture")
    scaling: Scaling = Scaling.model_validate({"min": 2, "desired": 2, "max": 3})
    disk_size: int = Field(default=50, ge=20, le=16384)

    @field_validator("instance_types")
    @classmethod
    def _one_arch(cls, values: list[str]) -> list[str]:
        for value in values:
            family, dot, size = value.partition(".")
            if not dot or not re.fullmatch(r"[a-z][a-z0-9-]*", family) or not EC2_SIZE.fullmatch(size):
                hint = did_you_mean(value, [f"{family}.{example}" for example in EC2_SIZE_EXAMPLES]) if dot else ""
                raise ValueError(f"{value!r} is not an EC2 instance type such as m7i.large (family.size); {hint}"
                                 f"sizes: {', '.join(EC2_SIZE_EXAMPLES)}, ...")
        if len({bool(_GRAVITON.match(v)) for v in values}) > 1:
            raise ValueError("mixes Graviton (arm64) and x86_64 types; one AMI serves the group, so pick one")
        return values

    @property
    def ami_type(self) -> str:
        return "AL2023_ARM_64_STANDARD" if _GRAVITON.match(self.instance_types[0]) else "AL2023_x86_64_STANDARD"


class Taint(Model):
    key: str = Field(min_length=1)
    value: str | None = None
    effect: TaintEffect = TaintEffect.NoSchedule


def _node_group_key_problems(group: NodeGroup) -> list[tuple[str | tuple[str, ...], str]]:
    """Labels and taints EKS or the API server would refuse, each on its own key: a key or value that is no
    Kubernetes label key or value, a key with a prefix the EKS API reserves (its message, verbatim)."""
    found: list[tuple[str | tuple[str, ...], str]] = []
    for key, value in group.labels.items():
        if problem := metadata.qualified_name_problem(key) or metadata.label_value_problem(key, value):
            found.append((("labels", key), problem))
        elif prefix := reserved_key_prefix(key):
            found.append((("labels", key), f"{key}: EKS refuses it on a managed node group (\"Label cannot contain "
                                           f"reserved prefixes [{', '.join(RESERVED_NODE_GROUP_KEY_PREFIXES)}]\": "
                                           f"it contains {prefix}); use a label of your own domain"))
    for index, taint in enumerate(group.taints):
        if taint.value and (problem := metadata.label_value_problem(taint.key, taint.value)):
            found.append((f"taints.{index}.value", problem))
        if problem := metadata.qualified_name_problem(taint.key):
            found.append((f"taints.{index}.key", problem))
        elif prefix := reserved_key_prefix(taint.key):
            found.append((f"taints.{index}.key", f"{taint.key}: EKS refuses it on a managed node group (\"Taint "
                                                 "cannot contain reserved prefixes "
                                                 f"[{', '.join(RESERVED_NODE_GROUP_KEY_PREFIXES)}]\": it contains "
                                                 f"{prefix}); use a taint of your own domain"))
    return found


class NodeGroup(Model):
    """A GPU managed node group."""

    name: DnsLabel = Field(description="Unique in the stack; the EKS node group is <cluster>-<name>")
    instance_types: list[GpuInstanceType] = Field(min_length=1, description="EC2 GPU types of one GPU model")
    ami_type: AmiType = Field(default=AmiType.AL2023_x86_64_NVIDIA, description="An EKS NVIDIA AMI type")
    allocation_mode: AllocationMode = Field(
        default=AllocationMode.dra, description="dra, or device-plugin for legacy nodes kept during migration")
    scaling: Scaling = Field(description="Node counts. EKS keeps the group at desired: nothing gpu-dra "
                                         "installs scales it (no autoscaler); desired 0 keeps an expensive "
                                         "group at no nodes until you raise it")
    capacity_type: CapacityType = CapacityType.ON_DEMAND
    capacity_reservation_id: str | None = Field(default=None, pattern=r"^cr-[0-9a-f]+$")
    availability_zone: str | None = Field(default=None, description="Only this AZ's private subnet (newVpc stacks)")
    subnet_ids: list[str] = Field(default_factory=list, description="Only these subnets (existing-VPC stacks)")
    disk_size: int = Field(default=200, ge=100, le=16384,
                           description="Root volume (gp3) in GiB; GPU images need at least 100")
    driver: DriverSource = DriverSource.host
    multi_node_nvlink: bool = Field(default=False, description="Nodes join NVLink domains (ComputeDomains)")
    labels: dict[str, str] = Field(
        default_factory=dict, description="Kubernetes labels on the nodes; not gpu-dra.io/ ones (gpu-dra's own), nor "
                                          "keys containing a prefix EKS reserves: kubernetes.io/, k8s.io/, "
                                          "eks.amazonaws.com/")
    taints: list[Taint] = Field(default_factory=list, description="Taints on the nodes; not keys containing a "
                                                                  "prefix EKS reserves, as for labels")
    allow_replacement: bool = Field(
        default=False,
        description="Lift protect from this group for the `pulumi up` that replaces it (a change of instance types, "
                    "AMI or capacity type, subnets) or removes it: Pulumi refuses to replace or delete a protected "
                    "resource, and allows unprotecting and replacing in one update. Set it in the change that needs "
                    "it and remove it in the next one")

    @model_validator(mode="after")
    def _consistent(self) -> NodeGroup:
        found: list[tuple[str | tuple[str, ...], str]] = []
        types = [INSTANCE_TYPES[t] for t in self.instance_types]
        models = sorted({t.gpu.key for t in types})
        if len(models) > 1:
            found.append(("instanceTypes", f"mixes GPU models {', '.join(models)}; claims select by model, so use "
                                           "one node group per model"))
        for itype in types:
            if itype.cpu_arch != self.ami_type.cpu_arch:
                found.append(("amiType", f"{self.ami_type.value} is for {self.ami_type.cpu_arch} but {itype.name} "
                                         f"is {itype.cpu_arch}"))
                break
        if self.capacity_type is CapacityType.CAPACITY_BLOCK and len(self.instance_types) > 1:
            found.append(("instanceTypes", "a Capacity Block reserves one instance type, and EKS reads it from the "
                                           "launch template, which holds one: list exactly that type"))
        if (self.capacity_type is CapacityType.CAPACITY_BLOCK) != (self.capacity_reservation_id is not None):
            found.append(("capacityReservationId", "required with capacityType CAPACITY_BLOCK, and only then"))
        if self.availability_zone and self.subnet_ids:
            found.append(("subnetIds", "set availabilityZone (newVpc) or subnetIds (existing VPC), not both"))
        if (self.capacity_type is CapacityType.CAPACITY_BLOCK and not self.availability_zone
                and not self.subnet_ids):
            found.append(("subnetIds", "a capacity block lives in one AZ: set subnetIds (or availabilityZone with "
                                       "newVpc) to the block's zone, or instances will not launch"))
        if self.allocation_mode is AllocationMode.device_plugin and self.multi_node_nvlink:
            found.append(("multiNodeNvlink", "ComputeDomains need the DRA driver; use allocationMode dra"))
        # The plugins are kept apart by gpu-dra's labels alone, so a group must not forge them.
        for key in sorted(k for k in self.labels if k.startswith(GPU_DRA_LABEL_PREFIX)):
            found.append(("labels", f"{key}: {GPU_DRA_LABEL_PREFIX} labels are gpu-dra's own (set from allocationMode "
                                    "and the group's name, and they decide which GPU plugin serves the nodes); "
                                    "remove it"))
        found += _node_group_key_problems(self)
        raise_field_errors("NodeGroup", found)
        return self


class NodePool(Model):
    """GPU nodes an existing cluster already has, selected by their labels: gpu-dra creates no nodes there, so it
    learns what the nodes carry (for explain and the policy pack) and which GPU plugin serves them from here."""

    name: DnsLabel = Field(description="Unique in the stack")
    node_selector: dict[str, str] = Field(min_length=1, description="Labels the pool's nodes carry, e.g. "
                                                                    "{node.kubernetes.io/instance-type: p5.48xlarge}")
    instance_type: GpuInstanceType | None = Field(default=None, description="The nodes' type, from the GPU catalog; "
                                                                            "or set gpuModel and gpuCount")
    gpu_model: str | None = Field(default=None, description=f"One of {', '.join(GPU_MODELS)}")
    gpu_count: int | None = Field(default=None, ge=1, le=64, description="GPUs per node, with gpuModel")
    nodes: int = Field(ge=1, description="How many nodes the pool has (at most)")
    allocation_mode: AllocationMode = Field(
        default=AllocationMode.dra, description="dra, or device-plugin for legacy nodes kept during migration")
    driver: DriverSource = Field(
        default=DriverSource.host,
        description="host: the driver is installed on the nodes (nvidiaDriverRoot /); gpu-operator: the GPU "
                    "Operator's driver container (/run/nvidia/driver). On Bottlerocket nodes keep "
                    "settings.kubelet-dra-drivers.nvidia.enabled off (its default): gpu-dra's chart runs the DRA "
                    "kubelet plugin, and Bottlerocket's host service would be a second one")
    taints: list[Taint] = Field(default_factory=list, description="Taints the nodes carry (the plugin tolerates them)")

    @field_validator("node_selector")
    @classmethod
    def _selector(cls, values: dict[str, str]) -> dict[str, str]:
        for key, value in values.items():
            if key.startswith(GPU_DRA_LABEL_PREFIX):
                raise ValueError(f"{key}: {GPU_DRA_LABEL_PREFIX} labels are the ones you apply for gpu-dra (from "
                                 "allocationMode); select the pool by labels it already has")
            if problem := metadata.qualified_name_problem(key) or metadata.label_value_problem(key, value):
                raise ValueError(problem)
        return values

    @model_validator(mode="after")
    def _hardware(self) -> NodePool:
        found: list[tuple[str, str]] = []
        if (self.instance_type is None) == (self.gpu_model is None):
            found.append(("instanceType", "set exactly one of instanceType or gpuModel (with gpuCount)"))
        if self.gpu_model is not None and self.gpu_model not in GPU_MODELS:
            found.append(("gpuModel", f"unknown GPU model {self.gpu_model!r}; known: {', '.join(GPU_MODELS)}"))
        if (self.gpu_model is None) != (self.gpu_count is None):
            found.append(("gpuCount", "goes with gpuModel, and gpuModel with it"))
        raise_field_errors("NodePool", found)
        return self

    @property
    def labels(self) -> dict[str, str]:
        """The labels the pool's nodes carry once labelled as docs/deploying.md says (the selector plus gpu-dra's)."""
        return {**self.node_selector, DEVICE_PLUGIN_NODE_LABEL[0]: self.allocation_mode.value}

"""Typed configuration: every `gpu-dra:*` stack key and the teams' own files, as pydantic v2 models.

Shape, types and single-object rules live here; rules that need the whole stack (a team's namespace clashing with
another's, a mapping naming an undeclared class) live in `gpu_dra.core.config.loader`. Unknown keys are always errors.
"""

from __future__ import annotations

import difflib
import ipaddress
import re
from collections.abc import Sequence
from enum import StrEnum
from typing import Annotated, Any, Literal, cast

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    GetCoreSchemaHandler,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)
from pydantic.alias_generators import to_camel
from pydantic.json_schema import SkipJsonSchema
from pydantic_core import CoreSchema, InitErrorDetails, PydanticCustomError

from gpu_dra.core.dra import metadata
from gpu_dra.core.dra.quantity import QuantityError, parse_quantity
from gpu_dra.core.facts import eks, gates
from gpu_dra.core.facts.eks import (
    EXTENDED_PRICE_PER_HOUR,
    RESERVED_NODE_GROUP_KEY_PREFIXES,
    STANDARD_PRICE_PER_HOUR,
    reserved_key_prefix,
)
from gpu_dra.core.facts.gates import DEFAULT_KUBERNETES_VERSION
from gpu_dra.core.facts.hardware import GPU_MODELS, INSTANCE_TYPES
from gpu_dra.core.facts.labels import DEVICE_PLUGIN_NODE_LABEL, GPU_DRA_LABEL_PREFIX
from gpu_dra.core.facts.nvidia import CHART_VERSION_PATTERN, DEFAULT_CHART_VERSION, DRIVER_NAME

SUPPORTED_KUBERNETES_VERSIONS = ("1.34", "1.35", "1.36")
DESCRIPTION_ANNOTATION = "gpu-dra.io/description"  # where render puts a description
# Claim templates a team file and a stack may hold: far above what a team writes by hand, and low enough that every
# check of a stack (each template explained on the fleet, each one a resource of the program) ends within a minute
# (docs/benchmarks.md). A team file with 6,000 made `gpu-dra check` run for minutes.
MAX_TEMPLATES_PER_TEAM = 100
MAX_TEMPLATES_PER_STACK = 500

# resource.k8s.io FullyQualifiedName: a DNS subdomain of at most 63 characters, a slash, and a C identifier of at most
# 32 (k8s.io/api resource/v1 types.go: QualifiedName, FullyQualifiedName).
_QUALIFIED_NAME = re.compile(r"(?=[^/]{1,63}/)[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*"
                             r"/[A-Za-z_][A-Za-z0-9_]{0,31}")


def field_error(field: str | tuple[str, ...], message: str) -> PydanticCustomError:
    """An error on one field of a model, raised from a model validator; the loader appends `field` (a dotted path
    below the model, list indexes as numbers: requests.0.adminAccess; or the keys themselves, for keys that hold
    dots, such as a label's) to the path."""
    return PydanticCustomError("gpu_dra_field", "{message}", {"field": field, "message": message})


def raise_field_errors(model: str, found: Sequence[tuple[str | tuple[str, ...], str]]) -> None:
    """Raise every (field, message) a model validator found at once, so one run reports them all."""
    if found:
        raise ValidationError.from_exception_data(model, [
            InitErrorDetails(type=field_error(field, message), loc=(), input=None) for field, message in found])


def _dns_label(value: str) -> str:
    if problem := metadata.dns_label_problem(value):
        raise ValueError(problem)
    return value


def _dns_subdomain(value: str) -> str:
    if problem := metadata.dns_subdomain_problem(value):
        raise ValueError(problem)
    return value


def _quantity(value: str) -> str:
    try:
        parse_quantity(value)
    except QuantityError as exc:
        raise ValueError(str(exc)) from None
    return str(value)


def _qualified_name(value: str) -> str:
    if not _QUALIFIED_NAME.fullmatch(value):
        raise ValueError(f"{value!r} must be a domain and a name separated by a slash, "
                         "e.g. resource.kubernetes.io/pcieRoot or gpu.nvidia.com/productName")
    return value


def _description(value: str) -> str:
    """Descriptions become the `gpu-dra.io/description` annotation of what they describe: within the API server's
    annotation limit."""
    if problems := metadata.annotation_problems({DESCRIPTION_ANNOTATION: value}):
        raise ValueError(problems[0][1])
    return value


def _gpu_instance_type(value: str) -> str:
    if value not in INSTANCE_TYPES:
        families: dict[str, list[str]] = {}
        for name in INSTANCE_TYPES:
            family, size = name.split(".", 1)
            families.setdefault(family, []).append(size)
        known = "; ".join(f"{family}.{{{','.join(sizes)}}}" for family, sizes in sorted(families.items()))
        raise ValueError(f"unknown GPU instance type {value!r}; known: {known}")
    return value


def _repository_path(value: str) -> str:
    """A path inside the repository, relative to its root: the policy pack reads it wherever the repository is."""
    parts = value.replace("\\", "/").split("/")
    if not value or value.startswith(("/", "~")) or ".." in parts or ":" in parts[0]:
        raise ValueError(f"{value!r} must be a path inside the repository, relative to its root (e.g. "
                         "workloads/ops/gpu-burn.yaml), without '..'")
    return value


GpuInstanceType = Annotated[str, AfterValidator(_gpu_instance_type)]
RepositoryPath = Annotated[str, AfterValidator(_repository_path)]
DnsLabel = Annotated[str, AfterValidator(_dns_label)]
DnsSubdomain = Annotated[str, AfterValidator(_dns_subdomain)]
Quantity = Annotated[str, AfterValidator(_quantity)]
QualifiedName = Annotated[str, AfterValidator(_qualified_name)]
Description = Annotated[str, AfterValidator(_description)]


# Strict: YAML's `true` (or `yes`) is no count, a number is no name, bytes (`!!binary`) are no text. Numbers
# stay numbers (the stack file is read by PyYAML, the engine's objects by the JSON parser: 150 arrives as an int).
STRICT = ConfigDict(strict=True)


class Model(BaseModel):
    """Base of every config model: camelCase keys as written in YAML, unknown keys rejected, immutable, strict."""

    model_config = ConfigDict(extra="forbid", alias_generator=to_camel, validate_by_alias=True,
                              validate_by_name=False, serialize_by_alias=True, frozen=True, **STRICT)


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


# --------------------------------------------------------------------------------------------- cluster


class NewVpc(Model):
    """A VPC created for the cluster, with private subnets for nodes in each listed zone."""

    cidr: str = "10.0.0.0/16"
    availability_zones: list[str] = Field(min_length=2, max_length=7,
                                          description="Two to seven AZs of the region, e.g. [us-west-2a, us-west-2b]")

    @field_validator("availability_zones")
    @classmethod
    def _unique_zones(cls, values: list[str]) -> list[str]:
        repeated = sorted({z for z in values if values.count(z) > 1})
        if repeated:
            raise ValueError(f"each zone once; repeated: {', '.join(repeated)}")
        return values

    @field_validator("cidr")
    @classmethod
    def _cidr(cls, value: str) -> str:
        try:
            network = ipaddress.IPv4Network(value)
        except ValueError:
            raise ValueError(f"{value!r} is not an IPv4 CIDR block such as 10.0.0.0/16") from None
        if not 16 <= network.prefixlen <= 20:
            raise ValueError(f"{value} must be a /16 to /20 so each AZ gets room for GPU nodes' pods")
        return value


class Networking(Model):
    """Either `newVpc`, or the subnets of an existing VPC (`vpcId` and `privateSubnetIds`)."""

    new_vpc: NewVpc | None = None
    vpc_id: str | None = None
    private_subnet_ids: list[str] = Field(default_factory=list)
    public_subnet_ids: list[str] = Field(default_factory=list)

    @model_validator(mode="after")
    def _one_source(self) -> Networking:
        if self.new_vpc and self.vpc_id:
            raise field_error("vpcId", "set either newVpc or vpcId with its subnets, not both")
        if not self.new_vpc and not self.vpc_id:
            raise field_error("newVpc", "required: set newVpc (a VPC is created) or vpcId and privateSubnetIds")
        if self.vpc_id and len(self.private_subnet_ids) < 2:
            raise field_error("privateSubnetIds", "list at least two private subnets (in two AZs) for the nodes")
        if self.new_vpc and (self.private_subnet_ids or self.public_subnet_ids):
            raise field_error("privateSubnetIds", "subnet ids belong to an existing VPC (vpcId), not to newVpc")
        return self


class Endpoint(Model):
    """Who reaches the Kubernetes API: always privately; publicly only from the listed CIDRs."""

    private_access: bool = True
    public_access: bool = False
    public_access_cidrs: list[str] = Field(default_factory=list)

    @field_validator("public_access_cidrs")
    @classmethod
    def _cidrs(cls, values: list[str]) -> list[str]:
        for value in values:
            try:
                ipaddress.ip_network(value)
            except ValueError:
                raise ValueError(f"{value!r} is not a CIDR block: an address and a prefix length, such as your "
                                 "VPN's egress address with /32") from None
        return values

    @model_validator(mode="after")
    def _consistent(self) -> Endpoint:
        if not self.private_access and not self.public_access:
            raise field_error("privateAccess", "the API endpoint must be reachable: enable privateAccess")
        if self.public_access and not self.public_access_cidrs:
            raise field_error("publicAccessCidrs",
                              "publicAccess needs the CIDRs allowed to reach it (EKS would open it to 0.0.0.0/0)")
        if self.public_access_cidrs and not self.public_access:
            raise field_error("publicAccessCidrs", "only meaningful with publicAccess: true")
        return self


class AccessPolicy(Choice):
    cluster_admin = "cluster-admin"
    admin = "admin"
    edit = "edit"
    view = "view"


class AccessEntry(Model):
    """An IAM principal given access through an EKS access entry (API authentication mode)."""

    name: DnsLabel
    principal_arn: str = Field(pattern=r"^arn:aws[a-z-]*:iam::\d{12}:(role|user)/.+$",
                               description="IAM role or user ARN")
    policy: AccessPolicy = AccessPolicy.view
    namespaces: list[DnsLabel] = Field(default_factory=list,
                                       description="Limit the policy to these namespaces; empty = cluster-wide")

    @model_validator(mode="after")
    def _scope(self) -> AccessEntry:
        if self.policy is AccessPolicy.cluster_admin and self.namespaces:
            raise field_error("namespaces", "cluster-admin is cluster-wide; use admin or edit for namespaces")
        return self


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
            if not re.fullmatch(r"[a-z][a-z0-9-]*\.[a-z0-9]+", value):
                raise ValueError(f"{value!r} is not an EC2 instance type such as m7i.large")
        if len({bool(_GRAVITON.match(v)) for v in values}) > 1:
            raise ValueError("mixes Graviton (arm64) and x86_64 types; one AMI serves the group, so pick one")
        return values

    @property
    def ami_type(self) -> str:
        return "AL2023_ARM_64_STANDARD" if _GRAVITON.match(self.instance_types[0]) else "AL2023_x86_64_STANDARD"


class KubeconfigSource(Model):
    """Where an existing cluster's kubeconfig comes from: a file, or the secret `gpu-dra:kubeconfig`."""

    path: str | None = None
    context: str | None = None


class Platform(Choice):
    eks = "eks"
    existing = "existing"


# Why each EKS-only cluster key means nothing on an existing cluster.
_EKS_ONLY = {
    "upgrade_policy": "only for platform eks; an existing cluster's support is its provider's",
    "access_entries": "only for platform eks",
    "endpoint": "only for platform eks; an existing cluster's API endpoint is its provider's, reached through "
                "kubeconfig",
    "system_node_group": "only for platform eks; gpu-dra creates no nodes on an existing cluster, and the DRA driver's "
                         "controller runs on any of its Linux nodes",
}


class SupportType(Choice):
    """EKS `upgradePolicy.supportType`: what happens when the cluster's version leaves standard support
    (https://docs.aws.amazon.com/eks/latest/APIReference/API_UpgradePolicyRequest.html)."""

    STANDARD = "STANDARD"
    EXTENDED = "EXTENDED"


def _kubernetes_version(text: str) -> str:
    if re.fullmatch(r"1\.\d+\.\d+", text):
        raise ValueError(f"{text} is a patch version; give the minor version (\"{text.rsplit('.', 1)[0]}\"): the "
                         "patch level is the platform's (EKS picks it)")
    match = re.fullmatch(r"1\.(\d+)", text)
    if not match:
        raise ValueError(f"{text!r} is not a Kubernetes minor version such as \"1.34\"")
    if int(match.group(1)) < 34:
        raise ValueError(f"{text} is too old: DRA's resource.k8s.io/v1 API is GA from 1.34; "
                         f"use one of {', '.join(SUPPORTED_KUBERNETES_VERSIONS)}")
    if text not in SUPPORTED_KUBERNETES_VERSIONS:
        raise ValueError(f"{text} is not supported yet; use one of {', '.join(SUPPORTED_KUBERNETES_VERSIONS)}")
    return text


def _kubernetes_gate(name: str, info: ValidationInfo) -> str:
    if name not in gates.GATES:
        guess = difflib.get_close_matches(name, gates.GATES, n=1)
        hint = f"; did you mean {guess[0]!r}?" if guess else ";"
        raise ValueError(f"unknown DRA feature gate{hint} gpu-dra reads only the DRA gates, so list only those (other "
                         f"gates change nothing it checks): {', '.join(gates.GATES)}")
    data = info.data or {}  # None when the field is validated on its own
    version = data.get("kubernetes_version")
    if data.get("platform") is Platform.existing and version and gates.state(name, version) is None:
        since = next(v for v in gates.VERSIONS if gates.state(name, v))
        raise ValueError(f"{name} does not exist in Kubernetes {version} (it arrives in {since}), and components "
                         "refuse to start with an unknown gate; remove it")
    return name


class Cluster(Model):
    """The cluster: created on EKS, or an existing one reached through a kubeconfig."""

    # Field order matters: the per-field platform checks below read `platform` and `kubernetesVersion` from
    # info.data, which holds the fields declared (and validated) before the one being checked.
    name: DnsLabel = Field(description="The EKS cluster name (or a label for an existing cluster)")
    platform: Platform = Field(default=Platform.eks, description="eks (created here) or existing")
    kubernetes_version: Annotated[str, AfterValidator(_kubernetes_version)] = DEFAULT_KUBERNETES_VERSION
    # EKS and pulumi-eks default to EXTENDED, which bills a version left behind without anyone deciding to pay.
    upgrade_policy: SupportType = Field(
        default=SupportType.STANDARD,
        description="EKS upgradePolicy.supportType. STANDARD: at the end of standard support EKS upgrades the control "
                    "plane to the next version itself (raise kubernetesVersion first, or the stack names an older "
                    "version than the cluster runs). EXTENDED: the version keeps up to 12 more months of extended "
                    f"support, billed at ${EXTENDED_PRICE_PER_HOUR} instead of ${STANDARD_PRICE_PER_HOUR} per "
                    "cluster-hour from the day standard support ends")
    region: str | None = Field(default=None, pattern=r"^[a-z]{2}(-gov)?-[a-z]+-\d$", validate_default=True)
    networking: Networking | None = Field(default=None, validate_default=True)
    endpoint: Endpoint = Endpoint()
    access_entries: list[AccessEntry] = Field(default_factory=list)
    system_node_group: SystemNodeGroup = SystemNodeGroup()
    kubeconfig: KubeconfigSource | None = None
    feature_gates: dict[Annotated[str, AfterValidator(_kubernetes_gate)], bool] = Field(
        default_factory=dict, description="Existing clusters only: the gates the cluster runs with",
        json_schema_extra={"propertyNames": {"enum": list(gates.GATES)}})
    protect: bool | None = Field(default=None, description="Protect cluster, key and GPU node groups; default: prod")

    @field_validator("kubernetes_version", mode="before")
    @classmethod
    def _version_as_text(cls, value: Any) -> Any:
        """`kubernetesVersion: 1.34` unquoted in YAML reads as a number: the only case where quoting helps."""
        if isinstance(value, float):
            text = repr(value)
            if re.fullmatch(r"1\.\d", text):
                raise ValueError(f"{value} is ambiguous as a number (1.40 reads as 1.4); quote it: \"1.NN\"")
            if not re.fullmatch(r"1\.\d+", text):
                raise ValueError(f"{value} is not a Kubernetes minor version such as \"1.34\" (quote it in YAML)")
            return text
        if isinstance(value, int) and not isinstance(value, bool):
            raise ValueError(f"{value} is not a Kubernetes minor version such as \"1.34\" (quote it in YAML)")
        return value

    # One validator per field rather than one for the model: pydantic reports every field's error in one run,
    # while a model validator runs only once all fields are valid.
    @field_validator("region")
    @classmethod
    def _region(cls, value: str | None, info: ValidationInfo) -> str | None:
        platform = info.data.get("platform")
        if platform is Platform.eks and not value:
            raise ValueError("required for platform eks, e.g. us-west-2")
        if platform is Platform.existing and value is not None:
            raise ValueError("only for platform eks; an existing cluster's network is its own")
        return value

    @field_validator("networking")
    @classmethod
    def _networking(cls, value: Networking | None, info: ValidationInfo) -> Networking | None:
        platform, region = info.data.get("platform"), info.data.get("region")
        if platform is Platform.eks and value is None:
            raise ValueError("required for platform eks: newVpc, or vpcId and privateSubnetIds")
        if platform is Platform.existing and value is not None:
            raise ValueError("only for platform eks; an existing cluster's network is its own")
        if value is not None and value.new_vpc and region:
            outside = [z for z in value.new_vpc.availability_zones if not re.fullmatch(rf"{re.escape(region)}[a-z]", z)]
            if outside:
                raise field_error("newVpc.availabilityZones", f"{', '.join(map(repr, outside))} "
                                                              f"{'is' if len(outside) == 1 else 'are'} not a zone "
                                                              f"of {region} (e.g. {region}a)")
        return value

    @field_validator("upgrade_policy", "access_entries", "endpoint", "system_node_group")
    @classmethod
    def _eks_only(cls, value: Any, info: ValidationInfo) -> Any:
        """Keys only an EKS cluster reads, refused one by one on an existing cluster (an empty list is no setting)."""
        if info.data.get("platform") is Platform.existing and value != []:
            raise ValueError(_EKS_ONLY[str(info.field_name)])
        return value

    @model_validator(mode="after")
    def _within_standard_support(self) -> Cluster:
        """With upgradePolicy STANDARD, EKS upgrades a control plane whose version has left standard support to the
        next one itself: the stack would name an older version than the cluster runs, and EKS does not downgrade.
        Judged by today's date."""
        window = eks.SUPPORT_CALENDAR.get(self.kubernetes_version)
        if (self.platform is not Platform.eks or self.upgrade_policy is not SupportType.STANDARD or window is None
                or eks.today() < window.standard_ends):
            return self
        following = f"1.{int(self.kubernetes_version.split('.')[1]) + 1}"
        raise field_error("kubernetesVersion", (
            f"{self.kubernetes_version} left EKS standard support on {window.standard_ends}, and with upgradePolicy "
            f"STANDARD EKS upgrades the control plane to {following} itself: this stack would then name an older "
            f"version than the cluster runs, which EKS cannot go back to. Raise kubernetesVersion to {following}, "
            f"or set upgradePolicy: EXTENDED to stay on {self.kubernetes_version} until {window.extended_ends}, billed "
            f"${eks.EXTENDED_PRICE_PER_HOUR} instead of ${eks.STANDARD_PRICE_PER_HOUR} per cluster-hour, which the "
            "cluster cannot leave but by upgrading"))

    @field_validator("kubeconfig")
    @classmethod
    def _kubeconfig(cls, value: KubeconfigSource | None, info: ValidationInfo) -> KubeconfigSource | None:
        if value is not None and info.data.get("platform") is Platform.eks:
            raise ValueError("only for platform existing; an EKS cluster's kubeconfig is derived")
        return value

    @field_validator("feature_gates")
    @classmethod
    def _feature_gates(cls, value: dict[str, bool], info: ValidationInfo) -> dict[str, bool]:
        if value and info.data.get("platform") is Platform.eks:
            raise ValueError("EKS runs no alpha feature gates and lets no one set them; gates are the upstream "
                             "defaults of kubernetesVersion")
        return value


# --------------------------------------------------------------------------------------------- node groups


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
    driver: DriverSource = DriverSource.host
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


# --------------------------------------------------------------------------------------------- DRA driver


class ChartName(Choice):
    dra_driver_nvidia_gpu = "dra-driver-nvidia-gpu"
    nvidia_dra_driver_gpu = "nvidia-dra-driver-gpu"


class DraDriver(Model):
    """NVIDIA's DRA driver chart; the version is always pinned."""

    chart: ChartName = ChartName.dra_driver_nvidia_gpu
    version: str = Field(default=DEFAULT_CHART_VERSION, pattern=CHART_VERSION_PATTERN,
                         description="An exact chart version, never a range")
    repository: str | None = Field(default=None, pattern=r"^(oci|https)://",
                                   description="Default: the chart's official registry")
    namespace: DnsLabel = "nvidia-dra-driver"
    log_verbosity: int = Field(default=4, ge=0, le=7)
    feature_gates: dict[str, bool] = Field(default_factory=dict)

    @field_validator("namespace")
    @classmethod
    def _not_default(cls, value: str) -> str:
        if value == "default":
            raise ValueError("the chart refuses the default namespace; use a dedicated one such as nvidia-dra-driver")
        return value


# --------------------------------------------------------------------------------------------- selectors


class DeviceType(Choice):
    gpu = "gpu"
    mig = "mig"


class Match(Model):
    """Selector shorthand, compiled to CEL: say what you need without knowing how the driver publishes it."""

    products: list[str] | None = Field(default=None, min_length=1,
                                       description="Substrings of productName, e.g. [A100, H100]")
    min_memory: Quantity | None = Field(default=None, description="At least this much GPU memory, e.g. 20Gi")
    architectures: list[str] | None = Field(default=None, min_length=1, description="e.g. [Hopper, Ampere]")
    min_compute_capability: str | None = Field(default=None, pattern=r"^\d+\.\d+(\.\d+)?$")
    min_driver_version: str | None = Field(default=None, pattern=r"^\d+(\.\d+){0,2}$")
    device_type: DeviceType | None = Field(default=None, description="gpu (a full GPU) or mig (a MIG slice)")
    mig_profiles: list[str] | None = Field(default=None, min_length=1, description="e.g. [1g.10gb]")

    @model_validator(mode="after")
    def _consistent(self) -> Match:
        if self.mig_profiles and self.device_type is DeviceType.gpu:
            raise field_error("migProfiles", "MIG profiles select MIG devices; drop deviceType: gpu")
        if not self.model_dump(exclude_none=True):
            raise field_error("products", "an empty match selects everything; name at least one condition")
        return self


class OpaqueConfig(Model):
    driver: DnsSubdomain = DRIVER_NAME
    parameters: dict[str, Any]


class DeviceClassConfig(Model):
    """A platform DeviceClass."""

    name: DnsSubdomain
    description: Description | None = None
    match: Match | None = None
    selectors: list[str] = Field(default_factory=list, max_length=32, description="Raw CEL expressions")
    config: list[OpaqueConfig] = Field(default_factory=list, max_length=32)

    @model_validator(mode="after")
    def _selects(self) -> DeviceClassConfig:
        if self.match is None and not self.selectors:
            raise field_error("match", "a class needs match or selectors, else it selects every device of every driver")
        return self


class LegacyMapping(Model):
    """Serve unchanged `nvidia.com/...: N` pod requests from a DeviceClass (DeviceClass.spec.extendedResourceName)."""

    extended_resource_name: str = Field(pattern=r"^[a-z0-9.-]+/[A-Za-z0-9._-]+$",
                                        description="e.g. nvidia.com/gpu or nvidia.com/mig-1g.10gb")
    device_class: DnsSubdomain


# --------------------------------------------------------------------------------------------- teams


class AllocationCount(Choice):
    ExactCount = "ExactCount"
    All = "All"


class Toleration(Model):
    key: str | None = None
    operator: Literal["Exists", "Equal"] = "Equal"
    value: str | None = None
    effect: Literal["NoSchedule", "NoExecute"] | None = None


class DeviceChoice(Model):
    """What one request (or one alternative of firstAvailable) asks for."""

    device_class: DnsSubdomain
    match: Match | None = None
    selectors: list[str] = Field(default_factory=list, max_length=32)
    allocation_mode: AllocationCount = AllocationCount.ExactCount
    count: int | None = Field(default=None, ge=1)
    tolerations: list[Toleration] = Field(default_factory=list, max_length=16)
    capacity: dict[str, Quantity] = Field(default_factory=dict,
                                          description="Consumable capacity requests, e.g. {memory: 10Gi} (1.36+)")

    @model_validator(mode="after")
    def _count(self) -> DeviceChoice:
        if self.allocation_mode is AllocationCount.All and self.count is not None:
            raise field_error("count", "must not be set when allocationMode is All")
        return self


class Alternative(DeviceChoice):
    name: DnsLabel


class Request(DeviceChoice):
    """A request: one device choice (`deviceClass`, ...) or ordered alternatives (`firstAvailable`)."""

    name: DnsLabel
    device_class: DnsSubdomain | None = None  # type: ignore[assignment]
    first_available: list[Alternative] | None = Field(default=None, min_length=1, max_length=8)
    admin_access: bool = False

    @model_validator(mode="after")
    def _one_form(self) -> Request:
        if (self.device_class is None) == (self.first_available is None):
            raise field_error("deviceClass", "set exactly one of deviceClass (one kind of device) or "
                                             "firstAvailable (ordered alternatives)")
        if self.first_available is not None:
            extra = [k for k in ("match", "selectors", "allocation_mode", "count", "tolerations", "capacity")
                     if k in self.model_fields_set]
            if extra:
                raise field_error(to_camel(extra[0]), "belongs inside each firstAvailable alternative")
            names = [a.name for a in self.first_available]
            if len(names) != len(set(names)):
                raise field_error("firstAvailable", "alternative names must be unique")
            if self.admin_access:
                raise field_error("adminAccess", "not allowed with firstAvailable (Kubernetes has no such field)")
        return self


class Constraint(Model):
    requests: list[str] = Field(default_factory=list, description="Request names; empty = all requests")
    match_attribute: QualifiedName | None = None
    distinct_attribute: QualifiedName | None = None

    @model_validator(mode="after")
    def _one(self) -> Constraint:
        if (self.match_attribute is None) == (self.distinct_attribute is None):
            raise field_error("matchAttribute", "set exactly one of matchAttribute or distinctAttribute")
        return self


class SharingStrategy(Choice):
    TimeSlicing = "TimeSlicing"
    MPS = "MPS"


class Sharing(Model):
    """GPU sharing through the NVIDIA driver's opaque GpuConfig."""

    strategy: SharingStrategy
    requests: list[str] = Field(default_factory=list, description="Requests it applies to; empty = all")
    interval: Literal["Default", "Short", "Medium", "Long"] | None = None
    active_thread_percentage: int | None = Field(default=None, ge=0, le=100)
    pinned_memory_limit: Quantity | None = None

    @model_validator(mode="after")
    def _fields_fit(self) -> Sharing:
        if self.strategy is SharingStrategy.TimeSlicing:
            for key in ("active_thread_percentage", "pinned_memory_limit"):
                if getattr(self, key) is not None:
                    raise field_error(to_camel(key), "is an MPS setting; strategy is TimeSlicing")
        elif self.interval is not None:
            raise field_error("interval", "is a TimeSlicing setting; strategy is MPS")
        return self


class ClaimTemplate(Model):
    """A ResourceClaimTemplate: pods reference it, each pod gets its own claim."""

    name: DnsSubdomain
    description: Description | None = None
    requests: list[Request] = Field(min_length=1, max_length=32)
    constraints: list[Constraint] = Field(default_factory=list, max_length=32)
    sharing: Sharing | None = None

    @model_validator(mode="after")
    def _references(self) -> ClaimTemplate:
        names = [r.name for r in self.requests]
        if len(names) != len(set(names)):
            raise field_error("requests", "request names must be unique within a template")
        valid = set(names) | {f"{r.name}/{a.name}" for r in self.requests for a in r.first_available or []}
        for where, refs in [("constraints", c.requests) for c in self.constraints] + (
                [("sharing", self.sharing.requests)] if self.sharing else []):
            for ref in refs:
                if ref not in valid:
                    raise field_error(where, f"{ref!r} is not a request of this template (have: {', '.join(names)})")
        return self


class Quota(Model):
    """Caps on a team's namespace: claims in total and devices per class."""

    claims: int | None = Field(default=None, ge=0, description="count/resourceclaims.resource.k8s.io")
    devices: dict[str, int] = Field(default_factory=dict,
                                    description="<class>.deviceclass.resource.k8s.io/devices per class")

    @field_validator("devices")
    @classmethod
    def _devices(cls, values: dict[str, int]) -> dict[str, int]:
        for name, count in values.items():
            _dns_subdomain(name)
            if count < 0:
                raise ValueError(f"{name}: must be >= 0")
        return values


ADMIN_ACCESS_LABEL = "resource.kubernetes.io/admin-access"


class Namespace(Model):
    name: DnsLabel | None = Field(default=None, description="Default: the team's name")
    labels: dict[str, str] = Field(default_factory=dict)
    annotations: dict[str, str] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _as_the_api_server(self) -> Namespace:
        """Every label and annotation the API server refuses, each on its own key (the annotations' total size on
        `annotations`)."""
        found: list[tuple[str | tuple[str, ...], str]] = [
            (("labels", key), problem) for key, problem in metadata.label_problems(self.labels)]
        found += [(("annotations", key) if key else "annotations", problem)
                  for key, problem in metadata.annotation_problems(self.annotations)]
        raise_field_errors("Namespace", found)
        return self


class Team(Model):
    """A team's own file, `stacks/teams/<team>.yaml`: its namespace, quota and claim templates."""

    name: DnsLabel
    description: Description | None = None
    # Granted by the stack (gpu-dra:teams.<team>.admin), never by the team's file: see TeamHosting.admin.
    admin: SkipJsonSchema[bool] = False
    namespace: Namespace = Namespace()
    quota: Quota = Quota()
    claim_templates: list[ClaimTemplate] = Field(
        default_factory=list, max_length=MAX_TEMPLATES_PER_TEAM,
        description=f"At most {MAX_TEMPLATES_PER_TEAM}: each is a Kubernetes object every check explains on the fleet")
    workloads: list[RepositoryPath] = Field(
        default_factory=list,
        description="The team's GPU workload manifests (files or folders in the repository): the policy rule "
                    "legacy-workloads-placed fails a stack change that leaves one needing the device plugin with "
                    "nowhere to run; `gpu-dra migrate --stack S` reads them when given no FILE")

    @property
    def namespace_name(self) -> str:
        return self.namespace.name or self.name

    @model_validator(mode="after")
    def _consistent(self) -> Team:
        found: list[tuple[str, str]] = []
        names = [t.name for t in self.claim_templates]
        dupes = sorted({n for n in names if names.count(n) > 1})
        if dupes:
            found.append(("claimTemplates", f"template names must be unique; repeated: {', '.join(dupes)}"))
        raise_field_errors("Team", found)
        return self


class TeamHosting(Model):
    """How a stack hosts a team: per-stack overrides of the team's own file."""

    quota: Quota | None = None
    admin: bool = Field(
        default=False,
        description="Grants the team DRA admin access here: its namespace gets resource.kubernetes.io/admin-access="
                    "\"true\" and its templates may use adminAccess. Only the platform's stack file decides this; "
                    "a team file that sets admin fails the policy team-file-platform-keys")


# --------------------------------------------------------------------------------------------- the stack

CONFIG_NAMESPACE = "gpu-dra"


class StackConfig(Model):
    """Every `gpu-dra:*` key of a stack file."""

    environment: Environment = Field(description="dev, staging or prod; prod is hardened and protected")
    cluster: Cluster
    node_groups: list[NodeGroup] = Field(default_factory=list, description="GPU managed node groups (platform eks)")
    node_pools: list[NodePool] = Field(default_factory=list,
                                       description="An existing cluster's GPU nodes, by label (platform existing)")
    dra_driver: DraDriver = Field(default=DraDriver(), description="NVIDIA's DRA driver chart")
    device_classes: list[DeviceClassConfig] = Field(default_factory=list, description="Platform DeviceClasses")
    legacy_mappings: list[LegacyMapping] = Field(
        default_factory=list, description="Serve unchanged extended-resource requests from a DeviceClass")
    teams: dict[str, TeamHosting | None] = Field(default_factory=dict,
                                                 description="Teams hosted; each has stacks/teams/<team>.yaml")
    kubeconfig: str | None = Field(default=None, description="Secret kubeconfig of an existing cluster")

    @field_validator("teams")
    @classmethod
    def _team_names(cls, values: dict[str, Any]) -> dict[str, Any]:
        for name in values:
            _dns_label(name)
        return values

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

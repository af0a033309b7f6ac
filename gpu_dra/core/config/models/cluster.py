"""The cluster: its platform and Kubernetes version, EKS's settings (support policy, access, system nodes) or an
existing cluster's kubeconfig and feature gates."""

from __future__ import annotations

import difflib
import ipaddress
import re
from typing import Annotated, Any

from pydantic import AfterValidator, Field, ValidationInfo, field_validator, model_validator

from gpu_dra.core.config.models.base import Model, field_error
from gpu_dra.core.config.models.choices import AccessPolicy, Choice, SupportType
from gpu_dra.core.config.models.fields import DnsLabel
from gpu_dra.core.config.models.network import Endpoint, Networking
from gpu_dra.core.config.models.nodes import SystemNodeGroup
from gpu_dra.core.facts import eks, gates
from gpu_dra.core.facts.eks import EXTENDED_PRICE_PER_HOUR, STANDARD_PRICE_PER_HOUR
from gpu_dra.core.facts.gates import DEFAULT_KUBERNETES_VERSION
from gpu_dra.core.facts.target import Platform

SUPPORTED_KUBERNETES_VERSIONS = gates.STACK_VERSIONS
# An EKS add-on version as DescribeAddonVersions names it
AddonVersion = Annotated[str, Field(pattern=r"^v\d+\.\d+\.\d+-eksbuild\.\d+$")]


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


class KubeconfigSource(Model):
    """Where an existing cluster's kubeconfig comes from: a file, or the secret `gpu-dra:kubeconfig`."""

    path: str | None = None
    context: str | None = None


class DeployerNetwork(Choice):
    vpc = "vpc"
    outside = "outside"


class DeployFrom(Model):
    """Where `pulumi up` runs, which decides what it may declare when the API endpoint is private only.

    The Kubernetes provider reaches the cluster through that endpoint alone, and a run that cannot reach it fails
    every Kubernetes object and chart (docs/deploying.md, "The first `pulumi up`")."""

    network: DeployerNetwork = Field(
        description="vpc: inside the cluster's VPC or a network connected to it (a self-hosted runner, a bastion, a "
                    "VPN); every up declares the whole stack, and the control plane admits `cidrs` on port 443. "
                    "outside: no route to the endpoint (a laptop, a GitHub-hosted runner); the up declares the AWS "
                    "layer only (VPC, cluster, node groups, add-ons) and no Kubernetes object: the first up of a "
                    "stack whose VPC it creates")
    cidrs: list[str] = Field(
        default_factory=list,
        description="vpc only: the private CIDRs `pulumi up` and kubectl run from, admitted to the API endpoint on "
                    "port 443 (EKS's cluster security group admits only the control plane and the nodes); default: "
                    "newVpc's cidr, required with an existing VPC")

    @field_validator("cidrs")
    @classmethod
    def _cidrs(cls, values: list[str]) -> list[str]:
        for value in values:
            try:
                network = ipaddress.ip_network(value)
            except ValueError:
                raise ValueError(f"{value!r} is not a CIDR block, such as your runner subnet's 10.40.0.0/24") from None
            if network.prefixlen == 0:
                raise ValueError(f"{value} admits every address the VPC routes; list the networks `pulumi up` and "
                                 "kubectl run from")
        return values

    @model_validator(mode="after")
    def _cidrs_only_inside(self) -> DeployFrom:
        if self.network is DeployerNetwork.outside and self.cidrs:
            raise field_error("cidrs", "only with network: vpc; a run from outside the VPC reaches no private "
                                       "endpoint, so it declares no Kubernetes object")
        return self


# Why each EKS-only cluster key means nothing on an existing cluster.
_EKS_ONLY = {
    "upgrade_policy": "only for platform eks; an existing cluster's support is its provider's",
    "access_entries": "only for platform eks",
    "endpoint": "only for platform eks; an existing cluster's API endpoint is its provider's, reached through "
                "kubeconfig",
    "deploy_from": "only for platform eks; an existing cluster is reached through its kubeconfig",
    "system_node_group": "only for platform eks; gpu-dra creates no nodes on an existing cluster, and the DRA driver's "
                         "controller runs on any of its Linux nodes",
    "addon_versions": "only for platform eks; an existing cluster's add-ons are its operator's",
}


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
        why = gates.stack_version_note(text) if text in gates.VERSIONS else \
            f"gpu-dra knows no newer release; stacks run {', '.join(SUPPORTED_KUBERNETES_VERSIONS)}"
        raise ValueError(f"{text} is not supported yet: {why}")
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
    platform: Platform = Field(default=Platform.eks, strict=False, description="eks (created here) or existing")
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
    deploy_from: DeployFrom | None = Field(
        default=None, description="Where `pulumi up` runs; required when the endpoint is private only")
    access_entries: list[AccessEntry] = Field(default_factory=list)
    system_node_group: SystemNodeGroup = SystemNodeGroup()
    kubeconfig: KubeconfigSource | None = None
    feature_gates: dict[Annotated[str, AfterValidator(_kubernetes_gate)], bool] = Field(
        default_factory=dict, description="Existing clusters only: the gates the cluster runs with",
        json_schema_extra={"propertyNames": {"enum": list(gates.GATES)}})
    protect: bool | None = Field(default=None, description="Protect cluster, key and GPU node groups; default: prod")
    addon_versions: dict[eks.AddonName, AddonVersion] = Field(
        default_factory=dict,
        description="Pin an EKS add-on (vpc-cni, kube-proxy, coredns, eks-pod-identity-agent) to a version such as "
                    "v1.20.4-eksbuild.2; unpinned, each takes EKS's default version for kubernetesVersion, so raising "
                    "kubernetesVersion updates it after the control plane")

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

    @field_validator("upgrade_policy", "access_entries", "endpoint", "deploy_from", "system_node_group",
                     "addon_versions")
    @classmethod
    def _eks_only(cls, value: Any, info: ValidationInfo) -> Any:
        """Keys only an EKS cluster reads, refused one by one on an existing cluster (an empty list is no setting)."""
        if info.data.get("platform") is Platform.existing and value not in ([], {}, None):
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

    @property
    def deploys_in_cluster_layer(self) -> bool:
        """Whether `pulumi up` declares the Kubernetes provider and what runs on the cluster: not from outside the
        VPC of a private-only endpoint (deployFrom.network: outside)."""
        return self.deploy_from is None or self.deploy_from.network is DeployerNetwork.vpc

    @property
    def deployer_cidrs(self) -> tuple[str, ...]:
        """The private CIDRs the control plane admits on 443 for `pulumi up` inside the VPC: deployFrom.cidrs, else a
        new VPC's own block."""
        if self.deploy_from is None or self.deploy_from.network is not DeployerNetwork.vpc:
            return ()
        if self.deploy_from.cidrs:
            return tuple(self.deploy_from.cidrs)
        new_vpc = self.networking.new_vpc if self.networking else None
        return (new_vpc.cidr,) if new_vpc else ()

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

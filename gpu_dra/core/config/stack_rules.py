"""The stack file's cross-key rules: each a small function reading what it needs of the stack, run in order.

A rule yields (key, path under the key, message) for each mistake, where the key is a `gpu-dra:` key without its
namespace; the loader turns them into Findings on the key's line. A rule runs on a stack file with errors too, when
the keys it reads are valid on their own (`StackParts.has`), so fixing a stack takes one run, not one per error.
"""

from __future__ import annotations

import functools
import ipaddress
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple, TypeVar

from pydantic import BaseModel, TypeAdapter, ValidationError

from gpu_dra.core.config import driver_rules
from gpu_dra.core.config.models import (
    STRICT,
    AllocationMode,
    Cluster,
    DeviceClassConfig,
    Environment,
    StackConfig,
    TeamHosting,
)
from gpu_dra.core.config.models.cluster import DeployerNetwork
from gpu_dra.core.dra.metadata import is_dns_label
from gpu_dra.core.facts import auto_mode, nvidia
from gpu_dra.core.facts.target import Platform
from gpu_dra.core.yamlsource import Loc

# Address blocks reserved for documentation: they look real in an allow-list, but no client ever has such an address,
# so an endpoint open only to them admits nobody.
DOCUMENTATION_RANGES = {ipaddress.ip_network(block): rfc for block, rfc in (
    ("192.0.2.0/24", "RFC 5737"), ("198.51.100.0/24", "RFC 5737"), ("203.0.113.0/24", "RFC 5737"),
    ("2001:db8::/32", "RFC 3849"))}

ModelT = TypeVar("ModelT", bound=BaseModel)


@functools.cache
def _field_adapter(model: type[BaseModel], name: str) -> TypeAdapter[Any]:
    """One field validated as strictly as in its model (a model type carries its own config)."""
    annotation = model.model_fields[name].rebuild_annotation()
    own_config = isinstance(annotation, type) and issubclass(annotation, BaseModel)
    return TypeAdapter(annotation, config=None if own_config else STRICT)


def _partial(model: type[ModelT], raw: Any) -> tuple[ModelT, frozenset[str]]:
    """`model` built from the fields of `raw` that are valid on their own (defaults for absent ones) without its
    cross-field checks, and the names of those fields: what rules may read when `raw` as a whole is invalid."""
    values: dict[str, Any] = {}
    raw = raw if isinstance(raw, Mapping) else {}
    for name, field in model.model_fields.items():
        key = field.alias or name
        if key not in raw:
            if not field.is_required():
                values[name] = field.get_default(call_default_factory=True)
            continue
        try:
            values[name] = _field_adapter(model, name).validate_python(raw[key])
        except ValidationError:
            continue
    return model.model_construct(**values), frozenset(values)


@dataclass(frozen=True)
class StackParts:
    """What cross-key rules may read: the stack as validated or, when the file has errors, built from the keys that
    are valid on their own (`known` names them by field: node_groups, ..., cluster.platform, ...), so each rule runs
    when the keys it reads are valid."""

    config: StackConfig
    known: frozenset[str]
    teams: dict[str, TeamHosting | None]
    kubeconfig_secret: bool  # `gpu-dra:kubeconfig` is set (a secret, never read offline)
    raw: Mapping[str, Any]  # the stack's gpu-dra: keys as written: which ones a rule refuses were set at all

    @classmethod
    def of(cls, config: StackConfig | None, ours: Mapping[str, Any]) -> StackParts:
        every_cluster_field = {f"cluster.{name}" for name in Cluster.model_fields}
        secret = bool(ours.get("kubeconfig"))
        if config is not None:
            return cls(config, frozenset({*StackConfig.model_fields, *every_cluster_field}), dict(config.teams),
                       secret, ours)
        partial, known = _partial(StackConfig, ours)
        if "cluster" in known:
            known |= every_cluster_field
        else:
            cluster, cluster_known = _partial(Cluster, ours.get("cluster"))
            partial = partial.model_copy(update={"cluster": cluster})
            known |= {f"cluster.{name}" for name in cluster_known}
        return cls(partial, known, _readable_teams(ours.get("teams")), secret, ours)

    def has(self, *names: str) -> bool:
        return all(name in self.known for name in names)

    def written(self, key: str) -> list[str]:
        """The keys written under `gpu-dra:<key>`, a mapping."""
        value = self.raw.get(key)
        return [str(k) for k in value] if isinstance(value, Mapping) else []


def _readable_teams(raw: Any) -> dict[str, TeamHosting | None]:
    """The teams an invalid `gpu-dra:teams` still names: entries whose name is a DNS label (their own mistakes are
    reported by the stack's validation; a broken override counts as none, so the team file is still checked)."""
    if not isinstance(raw, dict):
        return {}
    teams: dict[str, TeamHosting | None] = {}
    for name, hosting in raw.items():
        if isinstance(name, str) and is_dns_label(name):
            try:
                teams[name] = TeamHosting.model_validate(hosting) if hosting is not None else None
            except ValidationError:
                teams[name] = None
    return teams


class KeyProblem(NamedTuple):
    """A mistake at `gpu-dra:<key>` plus `loc` under it."""

    key: str
    loc: Loc
    message: str


Problems = Iterator[KeyProblem]


def _unique_names(key: str, items: Sequence[Any]) -> Problems:
    seen: dict[str, int] = {}
    for i, item in enumerate(items):
        if item.name in seen:
            yield KeyProblem(key, (i, "name"), f"{item.name!r} is already used by {key}[{seen[item.name]}]")
        seen.setdefault(item.name, i)


def _one_driver(key: str, items: Sequence[Any], what: str) -> Problems:
    if len({item.driver for item in items if item.allocation_mode is AllocationMode.dra}) > 1:
        yield KeyProblem(key, (), f"DRA {what} disagree on `driver` (host vs gpu-operator); one DRA driver install "
                                  "serves them all with one nvidiaDriverRoot, so use one per stack")


def each_node_group(parts: StackParts) -> Problems:
    """Each group's name and zone, against the cluster's."""
    if not parts.has("node_groups"):
        return
    cluster = parts.config.cluster
    for i, group in enumerate(parts.config.node_groups):
        if group.name == "system":
            yield KeyProblem("nodeGroups", (i, "name"), "'system' is the CPU node group's name; pick another")
        # EKS allows 63 characters; the name prefix gets a 26-character unique suffix so groups can be replaced.
        if parts.has("cluster.name") and len(f"{cluster.name}-{group.name}-") > 37:
            yield KeyProblem("nodeGroups", (i, "name"), f"the EKS node group name prefix {cluster.name}-{group.name}- "
                                                        "exceeds 37 characters; shorten the group or cluster name")
        networking = cluster.networking if parts.has("cluster.networking") else None
        if parts.has("cluster.networking") and group.availability_zone and (
                networking is None or networking.new_vpc is None
                or group.availability_zone not in networking.new_vpc.availability_zones):
            yield KeyProblem("nodeGroups", (i, "availabilityZone"), "must be one of cluster.networking.newVpc's "
                                                                    "availabilityZones (with an existing VPC, use "
                                                                    "subnetIds)")


def node_group_names_unique(parts: StackParts) -> Problems:
    if parts.has("node_groups"):
        yield from _unique_names("nodeGroups", parts.config.node_groups)


def node_groups_one_driver(parts: StackParts) -> Problems:
    if parts.has("node_groups"):
        yield from _one_driver("nodeGroups", parts.config.node_groups, "node groups")


def driver_values_fit_node_groups(parts: StackParts) -> Problems:
    """Chart values a stack derives from its node groups, where they cannot work on EKS's nodes."""
    if not parts.has("node_groups"):
        return
    for rule in driver_rules.DRIVER_RULES:
        for key, loc, message in rule(parts.config):
            yield KeyProblem(key, loc, message)


def node_groups_fit_platform(parts: StackParts) -> Problems:
    """EKS nodes are gpu-dra's node groups and Karpenter NodePools; an existing cluster's are not gpu-dra's to
    create."""
    if not parts.has("node_groups", "karpenter", "auto_mode", "cluster.platform"):
        return
    platform = parts.config.cluster.platform
    if platform is Platform.eks and not parts.config.node_groups and not parts.config.launched_node_pools:
        yield KeyProblem("nodeGroups", (), "an EKS stack needs GPU nodes: at least one GPU node group, or "
                                           "gpu-dra:karpenter.nodePools, or gpu-dra:autoMode.nodePools")
    if platform is Platform.existing and parts.config.node_groups:
        yield KeyProblem("nodeGroups", (), "only for platform eks: gpu-dra creates no nodes on an existing cluster; "
                                           "declare its GPU nodes as gpu-dra:nodePools (nodeSelector, instanceType, "
                                           "nodes)")


def karpenter_fits_platform(parts: StackParts) -> Problems:
    if (parts.has("karpenter", "cluster.platform") and parts.config.karpenter
            and parts.config.cluster.platform is not Platform.eks):
        yield KeyProblem("karpenter", (), "only for platform eks: gpu-dra installs Karpenter on the EKS cluster it "
                                          "creates; an existing cluster's Karpenter nodes are gpu-dra:nodePools")


def karpenter_has_two_system_nodes(parts: StackParts) -> Problems:
    """Karpenter's controller runs two replicas that never share a node (the chart's podAntiAffinity on
    kubernetes.io/hostname: aws/karpenter-provider-aws@v1.14.1:charts/karpenter/values.yaml), on the system nodes."""
    if not parts.has("karpenter", "cluster.system_node_group") or not parts.config.karpenter:
        return
    if (desired := parts.config.cluster.system_node_group.scaling.desired) < 2:
        yield KeyProblem("cluster", ("systemNodeGroup", "scaling", "desired"),
                         f"{desired} system node, and Karpenter's controller runs two replicas that never share a "
                         "node, on the system nodes: keep at least 2 (min and desired)")


def auto_mode_fits_cluster(parts: StackParts) -> Problems:
    """Auto Mode is an EKS cluster's, and runs its DRA driver from Kubernetes 1.36 (facts/auto_mode)."""
    if not parts.has("auto_mode", "cluster.platform", "cluster.kubernetes_version") or not parts.config.auto_mode:
        return
    cluster = parts.config.cluster
    if cluster.platform is not Platform.eks:
        yield KeyProblem("autoMode", (), "only for platform eks: Auto Mode is a setting of the EKS cluster gpu-dra "
                                         "creates; an existing cluster's Auto Mode nodes are gpu-dra:nodePools")
    elif _minor(cluster.kubernetes_version) < _minor(auto_mode.MIN_KUBERNETES_VERSION):
        yield KeyProblem("autoMode", (), f"EKS Auto Mode runs its NVIDIA DRA driver from Kubernetes "
                                         f"{auto_mode.MIN_KUBERNETES_VERSION} (EKS user guide, device-management); "
                                         f"this cluster runs {cluster.kubernetes_version}: raise kubernetesVersion "
                                         f"to {auto_mode.MIN_KUBERNETES_VERSION}, or serve its GPUs from node groups "
                                         "or Karpenter")


def _minor(version: str) -> int:
    return int(version.split(".")[1])


def auto_mode_alone(parts: StackParts) -> Problems:
    """On Auto Mode the GPUs come from its NodePools only: gpu-dra installs no DRA driver chart there, and a node
    group or Karpenter NodePool beside them would need one kept off Auto Mode's nodes."""
    if not parts.has("auto_mode") or not parts.config.auto_mode:
        return
    why = ("an Auto Mode stack serves GPUs from gpu-dra:autoMode.nodePools only: Auto Mode runs its own DRA driver, "
           "so gpu-dra installs no driver chart or device plugin, and nodes of {what} would have neither. Serve "
           "them from another stack, or drop autoMode")
    if parts.has("node_groups") and parts.config.node_groups:
        yield KeyProblem("nodeGroups", (), why.format(what="node groups"))
    if parts.has("karpenter") and parts.config.karpenter:
        yield KeyProblem("karpenter", (), why.format(what="Karpenter's NodePools"))
    if "systemNodeGroup" in parts.written("cluster"):
        yield KeyProblem("cluster", ("systemNodeGroup",), "Auto Mode's built-in system and general-purpose NodePools "
                                                          "run what is not a GPU pod; gpu-dra creates no system node "
                                                          "group on Auto Mode: remove systemNodeGroup")
    if parts.has("cluster.addon_versions"):
        for addon in parts.config.cluster.addon_versions:
            if addon not in auto_mode.ADDONS:
                yield KeyProblem("cluster", ("addonVersions", addon),
                                 f"Auto Mode runs {addon} itself, so gpu-dra declares no {addon} add-on on it; "
                                 "remove the pin")
    for key in parts.written("draDriver"):
        if key != "version":
            yield KeyProblem("draDriver", (key,), "Auto Mode runs its own NVIDIA DRA driver, so gpu-dra installs no "
                                                  "chart to configure; draDriver.version names the release whose "
                                                  "published attributes gpu-dra assumes of Auto Mode's driver (AWS "
                                                  "does not say which it runs)")


def gpu_node_names_unique(parts: StackParts) -> Problems:
    """A node group and a NodePool of one name would share the gpu-dra.io/node-group label their nodes carry."""
    if not parts.has("node_groups", "karpenter"):
        return
    groups = {group.name: i for i, group in enumerate(parts.config.node_groups)}
    for i, pool in enumerate(parts.config.karpenter_node_pools):
        if pool.name in groups or pool.name == "system":
            used = f"nodeGroups[{groups[pool.name]}]" if pool.name in groups else "the CPU node group"
            yield KeyProblem("karpenter", ("nodePools", i, "name"), f"{pool.name!r} is already used by {used}; "
                                                                    "node groups and NodePools share one namespace "
                                                                    "of names (their nodes' gpu-dra.io/node-group)")
    yield from (KeyProblem("karpenter", ("nodePools", *problem.loc), problem.message)
                for problem in _unique_names("nodePools", parts.config.karpenter_node_pools))
    if parts.has("auto_mode"):
        yield from (KeyProblem("autoMode", ("nodePools", *problem.loc), problem.message)
                    for problem in _unique_names("nodePools", parts.config.auto_mode_node_pools))


def node_pools_fit_platform(parts: StackParts) -> Problems:
    if (parts.has("node_pools", "cluster.platform") and parts.config.node_pools
            and parts.config.cluster.platform is Platform.eks):
        yield KeyProblem("nodePools", (), "only for platform existing: on EKS gpu-dra creates the GPU nodes, "
                                          "declared as gpu-dra:nodeGroups")


def node_pool_names_unique(parts: StackParts) -> Problems:
    if parts.has("node_pools"):
        yield from _unique_names("nodePools", parts.config.node_pools)


def node_pools_one_driver(parts: StackParts) -> Problems:
    if parts.has("node_pools"):
        yield from _one_driver("nodePools", parts.config.node_pools, "node pools")


def _classes(parts: StackParts) -> list[DeviceClassConfig]:
    return parts.config.device_classes if parts.has("device_classes") else []


def device_class_names(parts: StackParts) -> Problems:
    """A class name once, and none the chart installs."""
    first: dict[str, int] = {}
    for i, device_class in enumerate(_classes(parts)):
        if nvidia.is_chart_device_class(device_class.name):
            yield KeyProblem("deviceClasses", (i, "name"), f"{device_class.name!r} is installed by NVIDIA's DRA "
                                                           "driver chart; pick another name (e.g. gpu-h100) and "
                                                           "select from it")
        elif device_class.name in first:
            yield KeyProblem("deviceClasses", (i, "name"), f"{device_class.name!r} is already defined at "
                                                           f"deviceClasses[{first[device_class.name]}]")
        first.setdefault(device_class.name, i)


def legacy_mappings(parts: StackParts) -> Problems:
    """Each mapping names a declared class, and maps a resource name and a class once."""
    classes = {device_class.name for device_class in _classes(parts)}
    mapped_names: dict[str, int] = {}
    mapped_classes: dict[str, int] = {}
    for i, mapping in enumerate(parts.config.legacy_mappings if parts.has("legacy_mappings") else []):
        if parts.has("device_classes") and mapping.device_class not in classes:
            declared = ", ".join(sorted(classes)) or "none"
            yield KeyProblem("legacyMappings", (i, "deviceClass"), f"{mapping.device_class!r} is not declared in "
                                                                   f"gpu-dra:deviceClasses (declared: {declared})")
        if mapping.extended_resource_name in mapped_names:
            yield KeyProblem("legacyMappings", (i, "extendedResourceName"),
                             f"{mapping.extended_resource_name} is already mapped by "
                             f"legacyMappings[{mapped_names[mapping.extended_resource_name]}]")
        if mapping.device_class in mapped_classes:
            yield KeyProblem("legacyMappings", (i, "deviceClass"),
                             f"a class carries one extendedResourceName; {mapping.device_class} is already mapped by "
                             f"legacyMappings[{mapped_classes[mapping.device_class]}]")
        mapped_names.setdefault(mapping.extended_resource_name, i)
        mapped_classes.setdefault(mapping.device_class, i)


def access_entries(parts: StackParts) -> Problems:
    """The program keys access entries by name, and EKS allows one access entry per IAM principal ("An IAM
    principal can't be included in more than one access entry": docs.aws.amazon.com/eks/latest/userguide/
    creating-access-entries.html)."""
    entry_names: dict[str, int] = {}
    principals: dict[str, int] = {}
    for i, entry in enumerate(parts.config.cluster.access_entries if parts.has("cluster.access_entries") else []):
        if entry.name in entry_names:
            yield KeyProblem("cluster", ("accessEntries", i, "name"),
                             f"{entry.name!r} is already used by accessEntries[{entry_names[entry.name]}]; give each "
                             "entry its own name")
        if entry.principal_arn in principals:
            yield KeyProblem("cluster", ("accessEntries", i, "principalArn"),
                             f"{entry.principal_arn} already has accessEntries[{principals[entry.principal_arn]}], "
                             "and EKS allows one access entry per IAM principal; keep one entry for it")
        entry_names.setdefault(entry.name, i)
        principals.setdefault(entry.principal_arn, i)


def _documentation_range(cidr: str) -> str | None:
    """How `cidr` sits in a range reserved for documentation ("is 203.0.113.0/24 ... (RFC 5737)"), or None."""
    network = ipaddress.ip_network(cidr)
    reserved = next((r for r in DOCUMENTATION_RANGES if network[0] in r and network[-1] in r), None)
    if reserved is None:
        return None
    where = "is" if network == reserved else f"is inside {reserved},"
    return f"{cidr} {where} an address range reserved for documentation ({DOCUMENTATION_RANGES[reserved]})"


def endpoint_admits_someone(parts: StackParts) -> Problems:
    """An allow-list of documentation ranges only admits nobody."""
    cidrs = parts.config.cluster.endpoint.public_access_cidrs if parts.has("cluster.endpoint") else []
    for i, cidr in enumerate(cidrs):
        reserved = _documentation_range(cidr)
        if reserved:
            yield KeyProblem("cluster", ("endpoint", "publicAccessCidrs", i),
                             f"{reserved}: it admits nobody. Set the egress CIDRs of the networks you run kubectl "
                             "and `pulumi up` from (your office or VPN), or publicAccess: false to keep the endpoint "
                             "private")


_FIRST_UP = "docs/deploying.md, \"The first `pulumi up`\""


def deployer_reaches_endpoint(parts: StackParts) -> Problems:
    """`pulumi up` must reach the API endpoint of the cluster it creates. pulumi-kubernetes talks to the cluster only
    through it: at Configure, a cluster it cannot read is marked unreachable, and outside a preview it then refuses
    every Create and Update and the charts' Construct (pulumi/pulumi-kubernetes@v4.32.0:provider/pkg/provider/
    provider.go:987-1000, 1704-1707, 2337-2340; provider_construct.go:71-73), so once the cluster exists every
    Kubernetes object and both charts fail; no provider option helps (skipUpdateUnreachable skips only Check and
    Read: provider.go:1172-1183, 1928-1937). A private-only endpoint is reached from inside the VPC or a connected
    network alone, and only from addresses the control plane's security groups admit on 443 (EKS user guide,
    clusters/cluster-endpoint.adoc, "Accessing a private only API server"); EKS's cluster security group, the
    only one the program gives the cluster (skipDefaultSecurityGroups), admits its own members alone: the control
    plane and the managed nodes (EKS user guide, sec-group-reqs.html).
    So a private-only endpoint needs `deployFrom`: a VPC this stack creates has nothing inside it on the first up."""
    if not parts.has("cluster.platform", "cluster.endpoint", "cluster.networking", "cluster.deploy_from"):
        return
    cluster = parts.config.cluster
    if cluster.platform is not Platform.eks or cluster.networking is None:
        return
    deploy_from, new_vpc = cluster.deploy_from, cluster.networking.new_vpc is not None
    if deploy_from is None and not cluster.endpoint.public_access:
        public = ("or reach it from outside: publicAccess: true with publicAccessCidrs: [the egress CIDR you run "
                  "`pulumi up` from] (not a documentation range)")
        if new_vpc:
            yield KeyProblem("cluster", ("endpoint",), (
                "the API endpoint is private only and this stack creates its VPC, so nothing runs inside that VPC "
                "during the first `pulumi up`: once the cluster exists, pulumi-kubernetes finds it unreachable and "
                "the DRA driver, the DeviceClasses and every team's objects fail. Say where `pulumi up` runs with "
                "gpu-dra:cluster.deployFrom: `deployFrom: {network: outside}` for the first up (it creates the AWS "
                "layer only: VPC, cluster, node groups, add-ons), then `deployFrom: {network: vpc}` for every later "
                "up, run inside the VPC (the control plane then admits the VPC's CIDR on port 443); "
                f"{public}. {_FIRST_UP} walks both"))
        else:
            yield KeyProblem("cluster", ("endpoint",), (
                "the API endpoint is private only: `pulumi up` reaches it from inside the VPC (or a network "
                "connected to it) alone, and the cluster security group admits only the control plane and the nodes, "
                "so the first up would fail the DRA driver, the DeviceClasses and every team's objects once the "
                "cluster exists. Say where `pulumi up` runs with gpu-dra:cluster.deployFrom: `deployFrom: "
                "{network: vpc, cidrs: [<the private CIDRs of your runner, bastion or VPN>]}` (admitted on port "
                f"443), or `deployFrom: {{network: outside}}` to create the AWS layer only; {public}. See {_FIRST_UP}"))
        return
    if deploy_from is None or deploy_from.network is not DeployerNetwork.vpc:
        return
    if not new_vpc and not deploy_from.cidrs:
        yield KeyProblem("cluster", ("deployFrom",), (
            "with an existing VPC, list deployFrom.cidrs: the private CIDRs `pulumi up` and kubectl run from (your "
            "runner's subnet, your VPN's range), which the control plane admits on port 443; gpu-dra cannot read "
            "the VPC's CIDR offline"))
    for i, cidr in enumerate(deploy_from.cidrs):
        reserved = _documentation_range(cidr)
        if reserved:
            yield KeyProblem("cluster", ("deployFrom", "cidrs", i),
                             f"{reserved}: no runner has such an address. List the private CIDRs `pulumi up` runs "
                             "from (your runner's subnet, your VPN's range)")


def prod_endpoint_not_open(parts: StackParts) -> Problems:
    if not (parts.has("environment", "cluster.endpoint") and parts.config.environment is Environment.prod):
        return
    for i, cidr in enumerate(parts.config.cluster.endpoint.public_access_cidrs):
        if cidr in ("0.0.0.0/0", "::/0"):
            yield KeyProblem("cluster", ("endpoint", "publicAccessCidrs", i),
                             "prod's API endpoint is never open to the world; list your office or VPN CIDRs, or set "
                             "publicAccess: false")


def kubeconfig_fits_platform(parts: StackParts) -> Problems:
    """An existing cluster is reached through a kubeconfig; an EKS cluster's is derived."""
    if not parts.has("cluster.platform", "cluster.kubeconfig"):
        return
    cluster = parts.config.cluster
    if cluster.platform is Platform.existing:
        if not (cluster.kubeconfig and cluster.kubeconfig.path) and not parts.kubeconfig_secret:
            yield KeyProblem("cluster", ("kubeconfig",), "an existing cluster needs kubeconfig.path, or the secret "
                                                         "`pulumi config set --secret gpu-dra:kubeconfig < "
                                                         "kubeconfig`")
    elif parts.kubeconfig_secret:
        yield KeyProblem("kubeconfig", (), "only for platform existing; an EKS cluster's kubeconfig is derived")


# In the order their findings are reported.
STACK_RULES: tuple[Callable[[StackParts], Problems], ...] = (
    each_node_group, node_group_names_unique, node_groups_one_driver, node_groups_fit_platform,
    driver_values_fit_node_groups, karpenter_fits_platform, karpenter_has_two_system_nodes, auto_mode_fits_cluster,
    auto_mode_alone, gpu_node_names_unique,
    node_pools_fit_platform,
    node_pool_names_unique, node_pools_one_driver,
    device_class_names, legacy_mappings, access_entries,
    endpoint_admits_someone, prod_endpoint_not_open, deployer_reaches_endpoint, kubeconfig_fits_platform,
)

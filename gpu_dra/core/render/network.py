"""Network decisions of an EKS stack: a new VPC's subnets and NAT gateways, which subnets each part uses, and the
scope of each access entry. Pure, so the cluster component only declares what the plan says.

A new VPC is cut into eight equal blocks (prefix + 3): zone i's private subnet, where nodes and pods live, is block
i; the last block is cut into eight again (prefix + 6) for the zones' small public subnets, which hold only NAT
gateways and load balancers. The config allows seven zones and a /16 to /20 VPC, so private subnets never reach the
last block and public ones stay at /26 or larger (AWS's smallest subnet is a /28).
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from enum import StrEnum

from gpu_dra.core.config.models import AccessEntry, Environment, NewVpc, NodeGroup, StackConfig

PRIVATE_SPLIT = 3  # eight private-sized blocks
PUBLIC_SPLIT = 6  # the last block in eight public subnets


class Tier(StrEnum):
    public = "public"
    private = "private"


@dataclass(frozen=True)
class Subnet:
    """A subnet the new VPC gets: one tier in one zone."""

    zone: str
    tier: Tier
    cidr: str


@dataclass(frozen=True)
class Zone:
    name: str
    public: Subnet
    private: Subnet
    nat: bool  # a NAT gateway in this zone's public subnet
    egress_zone: str  # the zone whose NAT gateway the private subnet's default route goes through


@dataclass(frozen=True)
class VpcPlan:
    cidr: str
    zones: tuple[Zone, ...]


# A subnet planned here, or an existing VPC's subnet by its id.
SubnetRef = Subnet | str


@dataclass(frozen=True)
class NetworkPlan:
    """Where the cluster lives: a new VPC (`new_vpc`) or an existing one (`vpc_id`), and the subnets it uses."""

    new_vpc: VpcPlan | None
    vpc_id: str | None
    private_subnets: tuple[SubnetRef, ...]  # the cluster's and the system node group's
    public_subnets: tuple[SubnetRef, ...]  # for internet-facing load balancers; none in an existing VPC without any

    def node_group_subnets(self, group: NodeGroup) -> tuple[SubnetRef, ...]:
        """The group's own subnets (existing VPC) or its one zone's (new VPC), else every private subnet.

        One zone matters for capacity blocks: their instances launch only in the block's zone.
        """
        if group.subnet_ids:
            return tuple(group.subnet_ids)
        if group.availability_zone:
            zones = {z.name: z for z in self.new_vpc.zones} if self.new_vpc else {}
            if group.availability_zone not in zones:
                raise ValueError(f"node group {group.name}: availabilityZone {group.availability_zone} is not a zone "
                                 "of cluster.networking.newVpc")
            return (zones[group.availability_zone].private,)
        return self.private_subnets


def plan_vpc(config: NewVpc, environment: Environment) -> VpcPlan:
    """Subnets per zone, and NAT gateways: one per zone in prod (an AZ outage cuts no other zone off the internet),
    one in the first zone elsewhere (each costs per hour)."""
    network = ipaddress.IPv4Network(config.cidr)
    blocks = list(network.subnets(new_prefix=network.prefixlen + PRIVATE_SPLIT))
    public_blocks = list(blocks[-1].subnets(new_prefix=network.prefixlen + PUBLIC_SPLIT))
    per_zone_nat = environment is Environment.prod
    first = config.availability_zones[0]
    return VpcPlan(config.cidr, tuple(
        Zone(zone, Subnet(zone, Tier.public, str(public_blocks[i])), Subnet(zone, Tier.private, str(blocks[i])),
             nat=per_zone_nat or zone == first, egress_zone=zone if per_zone_nat else first)
        for i, zone in enumerate(config.availability_zones)))


def plan_network(config: StackConfig) -> NetworkPlan:
    """The network of an EKS stack (platform eks: the config model requires its networking)."""
    networking = config.cluster.networking
    if networking is None:
        raise ValueError(f"cluster {config.cluster.name}: platform {config.cluster.platform.value} has no networking "
                         "to plan")
    if networking.new_vpc:
        vpc = plan_vpc(networking.new_vpc, config.environment)
        return NetworkPlan(vpc, None, tuple(z.private for z in vpc.zones), tuple(z.public for z in vpc.zones))
    return NetworkPlan(None, networking.vpc_id, tuple(networking.private_subnet_ids),
                       tuple(networking.public_subnet_ids))


@dataclass(frozen=True)
class AccessScope:
    type: str  # EKS's access scope type: cluster or namespace
    namespaces: tuple[str, ...] = ()


def access_scope(entry: AccessEntry) -> AccessScope:
    """An entry's policy applies to its namespaces if it lists any, else to the whole cluster."""
    if entry.namespaces:
        return AccessScope("namespace", tuple(entry.namespaces))
    return AccessScope("cluster")

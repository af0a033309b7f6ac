"""Network planning: subnet CIDRs per zone, NAT gateways, the subnets each part of the cluster uses, access scopes."""

from __future__ import annotations

import ipaddress
import itertools
from typing import Any

import pytest
from pydantic import ValidationError

from gpu_dra.core.config.loader import load_stack
from gpu_dra.core.config.models import AccessEntry, Environment, NewVpc, NodeGroup, StackConfig
from gpu_dra.core.findings import ConfigError
from gpu_dra.core.render.network import AccessScope, Subnet, Tier, access_scope, plan_network, plan_vpc

from .conftest import Project

ZONES = [f"us-west-2{letter}" for letter in "abcdefgh"]


def new_vpc(cidr: str, zones: int) -> NewVpc:
    return NewVpc.model_validate({"cidr": cidr, "availabilityZones": ZONES[:zones]})


def stack_config(networking: dict[str, Any], environment: str = "dev", **cluster: Any) -> StackConfig:
    return StackConfig.model_validate({"environment": environment, "cluster": {
        "name": "lab", "region": "us-west-2", "networking": networking, **cluster}})


@pytest.mark.parametrize("cidr,zones,private,public", [
    ("10.40.0.0/16", 2, ["10.40.0.0/19", "10.40.32.0/19"], ["10.40.224.0/22", "10.40.228.0/22"]),
    ("10.41.0.0/16", 3, ["10.41.0.0/19", "10.41.32.0/19", "10.41.64.0/19"],
     ["10.41.224.0/22", "10.41.228.0/22", "10.41.232.0/22"]),
    ("172.16.0.0/18", 4, ["172.16.0.0/21", "172.16.8.0/21", "172.16.16.0/21", "172.16.24.0/21"],
     ["172.16.56.0/24", "172.16.57.0/24", "172.16.58.0/24", "172.16.59.0/24"]),
    ("10.0.0.0/20", 7, [f"10.0.{2 * i}.0/23" for i in range(7)],
     ["10.0.14.0/26", "10.0.14.64/26", "10.0.14.128/26", "10.0.14.192/26", "10.0.15.0/26", "10.0.15.64/26",
      "10.0.15.128/26"]),
])
def test_subnet_cidrs_per_zone(cidr: str, zones: int, private: list[str], public: list[str]) -> None:
    """Zone i keeps its CIDRs whatever zones follow it: adding a zone never renumbers existing subnets."""
    plan = plan_vpc(new_vpc(cidr, zones), Environment.dev)
    assert plan.cidr == cidr
    assert [z.name for z in plan.zones] == ZONES[:zones]
    in_order = ZONES[:zones]
    assert [z.private for z in plan.zones] == [
        Subnet(z, Tier.private, c) for z, c in zip(in_order, private, strict=True)]
    assert [z.public for z in plan.zones] == [Subnet(z, Tier.public, c) for z, c in zip(in_order, public, strict=True)]


def _accepted(cidr: str, zones: int) -> NewVpc | None:
    try:
        return new_vpc(cidr, zones)
    except ValidationError:
        return None


@pytest.mark.parametrize("prefix", range(8, 29))
def test_every_vpc_the_config_accepts_holds_its_subnets(prefix: int) -> None:
    """The config's bounds (VPC size, zone count) are what the arithmetic needs: inside the VPC, no two subnets
    overlapping, none smaller than AWS's /28. Widening the config without the plan fails here."""
    for zones in range(1, len(ZONES) + 1):
        config = _accepted(f"10.0.0.0/{prefix}", zones)
        if config is None:
            continue
        plan = plan_vpc(config, Environment.prod)
        vpc = ipaddress.IPv4Network(plan.cidr)
        subnets = [ipaddress.IPv4Network(s.cidr) for z in plan.zones for s in (z.public, z.private)]
        assert len(subnets) == 2 * zones
        assert all(s.subnet_of(vpc) and s.prefixlen <= 28 for s in subnets), (prefix, zones)
        assert not any(a.overlaps(b) for a, b in itertools.combinations(subnets, 2)), (prefix, zones)


@pytest.mark.parametrize("cidr,zones,message", [
    ("10.0.0.0/28", 2, "10.0.0.0/28 must be a /16 to /20"),
    ("10.0.0.0/21", 2, "10.0.0.0/21 must be a /16 to /20"),
    ("10.0.0.0/15", 2, "10.0.0.0/15 must be a /16 to /20"),
    ("10.0.0.0/16", 8, "at most 7 items"),
    ("10.0.0.0/16", 1, "at least 2 items"),
    ("10.0.0.1/16", 2, "is not an IPv4 CIDR block"),
])
def test_vpcs_that_cannot_hold_the_subnets_are_config_errors(cidr: str, zones: int, message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        new_vpc(cidr, zones)


def test_a_vpc_too_small_is_reported_at_its_line(project: Project) -> None:
    project.edit_stack("dev", lambda c: c["gpu-dra:cluster"]["networking"]["newVpc"].update(cidr="10.40.0.0/28"))
    line = next(n for n, text in enumerate((project.root / "stacks/Pulumi.dev.yaml").read_text().splitlines(), 1)
                if "10.40.0.0/28" in text)
    with pytest.raises(ConfigError) as error:
        load_stack(project.root, "dev")
    assert str(error.value) == (f"stacks/Pulumi.dev.yaml:{line}: gpu-dra:cluster.networking.newVpc.cidr: "
                                "10.40.0.0/28 must be a /16 to /20 so each AZ gets room for GPU nodes' pods")


@pytest.mark.parametrize("environment,zones,nat,egress", [
    (Environment.prod, 3, ["us-west-2a", "us-west-2b", "us-west-2c"], ["us-west-2a", "us-west-2b", "us-west-2c"]),
    (Environment.prod, 2, ["us-west-2a", "us-west-2b"], ["us-west-2a", "us-west-2b"]),
    (Environment.staging, 3, ["us-west-2a"], ["us-west-2a"] * 3),
    (Environment.dev, 2, ["us-west-2a"], ["us-west-2a"] * 2),
])
def test_nat_gateway_per_zone_in_prod_one_elsewhere(environment: Environment, zones: int, nat: list[str],
                                                     egress: list[str]) -> None:
    plan = plan_vpc(new_vpc("10.0.0.0/16", zones), environment)
    assert [z.name for z in plan.zones if z.nat] == nat
    assert [z.egress_zone for z in plan.zones] == egress


def test_new_vpc_cluster_uses_every_zone() -> None:
    config = stack_config({"newVpc": {"cidr": "10.40.0.0/16", "availabilityZones": ZONES[:3]}})
    plan = plan_network(config)
    assert plan.new_vpc is not None and plan.vpc_id is None
    assert plan.private_subnets == tuple(z.private for z in plan.new_vpc.zones)
    assert plan.public_subnets == tuple(z.public for z in plan.new_vpc.zones)


@pytest.mark.parametrize("public", [["subnet-p1", "subnet-p2"], []])
def test_existing_vpc_uses_its_subnets_as_given(public: list[str]) -> None:
    config = stack_config({"vpcId": "vpc-1", "privateSubnetIds": ["subnet-a", "subnet-b"],
                           "publicSubnetIds": public})
    plan = plan_network(config)
    assert plan.new_vpc is None and plan.vpc_id == "vpc-1"
    assert plan.private_subnets == ("subnet-a", "subnet-b")
    assert plan.public_subnets == tuple(public)


def test_existing_cluster_has_no_network_to_plan() -> None:
    config = StackConfig.model_validate({"environment": "dev", "cluster": {"name": "lab", "platform": "existing"}})
    with pytest.raises(ValueError, match="platform existing has no networking"):
        plan_network(config)


def group(**fields: Any) -> NodeGroup:
    return NodeGroup.model_validate({"name": "l4", "instanceTypes": ["g6.xlarge"],
                                     "scaling": {"min": 0, "desired": 0, "max": 2}, **fields})


NEW_VPC = {"newVpc": {"cidr": "10.40.0.0/16", "availabilityZones": ZONES[:3]}}
EXISTING_VPC = {"vpcId": "vpc-1", "privateSubnetIds": ["subnet-a", "subnet-b", "subnet-c"]}


@pytest.mark.parametrize("networking,fields,expected", [
    (NEW_VPC, {}, [Subnet("us-west-2a", Tier.private, "10.40.0.0/19"), Subnet("us-west-2b", Tier.private,
                   "10.40.32.0/19"), Subnet("us-west-2c", Tier.private, "10.40.64.0/19")]),
    (NEW_VPC, {"availabilityZone": "us-west-2b"}, [Subnet("us-west-2b", Tier.private, "10.40.32.0/19")]),
    (EXISTING_VPC, {}, ["subnet-a", "subnet-b", "subnet-c"]),
    (EXISTING_VPC, {"subnetIds": ["subnet-b"]}, ["subnet-b"]),
])
def test_node_group_subnets(networking: dict[str, Any], fields: dict[str, Any], expected: list[Any]) -> None:
    """Every private subnet unless the group names its own zone (new VPC) or subnets (existing VPC)."""
    assert list(plan_network(stack_config(networking)).node_group_subnets(group(**fields))) == expected


@pytest.mark.parametrize("networking", [NEW_VPC, EXISTING_VPC])
def test_node_group_zone_outside_the_new_vpc_is_refused(networking: dict[str, Any]) -> None:
    plan = plan_network(stack_config(networking))
    with pytest.raises(ValueError, match="node group l4: availabilityZone us-west-2d is not a zone of"):
        plan.node_group_subnets(group(availabilityZone="us-west-2d"))


@pytest.mark.parametrize("entry,scope", [
    ({"policy": "edit", "namespaces": ["ml-training", "inference"]},
     AccessScope("namespace", ("ml-training", "inference"))),
    ({"policy": "view"}, AccessScope("cluster")),
    ({"policy": "cluster-admin"}, AccessScope("cluster")),
])
def test_access_scope(entry: dict[str, Any], scope: AccessScope) -> None:
    arn = "arn:aws:iam::111122223333:role/people"
    assert access_scope(AccessEntry.model_validate({"name": "people", "principalArn": arn, **entry})) == scope

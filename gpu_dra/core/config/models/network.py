"""The cluster's network: a new VPC or an existing one's subnets, and who reaches the Kubernetes API endpoint."""

from __future__ import annotations

import ipaddress

from pydantic import Field, field_validator, model_validator

from gpu_dra.core.config.models.base import Model, field_error


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

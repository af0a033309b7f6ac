"""The first `pulumi up` of a new stack, past its preview: the Kubernetes objects and charts that fail because the
Kubernetes provider, configured once the new cluster exists, cannot reach its API endpoint.

The first preview shows nothing of it: the new cluster's kubeconfig is unknown there, so the engine never configures
the provider (model.py). In the `up`, the cluster is created first and the provider is configured with its
kubeconfig. A Configure that cannot read the API server marks the cluster unreachable instead of failing
(pulumi/pulumi-kubernetes@v4.32.0:provider/pkg/provider/provider.go:987-1000), and outside a preview every Create then
fails (provider.go:1704-1707), and so does each chart's Construct (provider_construct.go:71-73), hours' worth of AWS
resources already created. No provider option avoids it: skipUpdateUnreachable only skips Check and Read
(provider.go:1172-1183, 1928-1937).

Whether a run reaches the endpoint is a fact of the network, never seen offline. The model takes the deployer to be
where the stack says it is (an address `publicAccessCidrs` or an ingress rule of the control plane admits) and is sure
of two things: nothing runs inside a VPC the same `up` creates, and a private-only endpoint admits no one the control
plane's security groups do not (EKS user guide, clusters/cluster-endpoint.adoc, "Accessing a private only API
server"); pulumi-eks's admit only its nodes (pulumi/pulumi-eks@v4.3.0:nodejs/eks/nodes/securitygroup.ts:188-199).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from gpu_dra.core.facts.pulumi_types import CHART, CLUSTER, SECURITY_GROUP_RULE, is_kubernetes_object
from gpu_dra.core.policy.engine.model import EngineModel
from gpu_dra.core.policy.engine.wire import Registered

_UNREACHABLE = "configured Kubernetes cluster is unreachable"  # the provider's error (provider.go:1707)
_VPC = "aws:ec2/vpc:Vpc"


@dataclass(frozen=True)
class FirstUpFailure:
    """A resource the first `up` fails to create, with the provider's error and why the endpoint is out of reach."""

    type: str
    name: str
    urn: str  # the engine's
    error: str


def first_up_failures(registered: Sequence[Registered]) -> list[FirstUpFailure]:
    """Each Kubernetes object and chart of the mock run that the stack's first `pulumi up` fails to create; none when
    the run declares no EKS cluster (an existing cluster is reached through the user's kubeconfig) or the endpoint is
    in reach."""
    model = EngineModel(registered, first_preview=True)
    clusters = [r for r in model.registered if r.type == CLUSTER]
    if len(clusters) != 1:
        return []
    why = _out_of_reach(model, clusters[0])
    if why is None:
        return []
    error = f"{_UNREACHABLE}: {why}"
    return [FirstUpFailure(r.type, r.name, model.urns.of(r.urn), error) for r in model.registered
            if is_kubernetes_object(r.type) or r.type == CHART]


def _out_of_reach(model: EngineModel, cluster: Registered) -> str | None:
    """Why a deployer cannot reach the new cluster's endpoint during the first `up`, or None when it may."""
    inputs = cluster.inputs
    if inputs.get("endpointPublicAccess", True):
        # Public: pulumi-eks passes no CIDRs when none are given, and EKS then admits 0.0.0.0/0 (eks_cluster.py).
        return None
    vpc = model.by_id.get(str(inputs.get("vpcId", "")))
    if vpc is not None and vpc.type == _VPC:
        return ("the API endpoint is private only and the VPC is created by this same up, so nothing runs inside "
                "it (gpu-dra:cluster.deployFrom.network: outside declares the AWS layer only for this up)")
    if not any(_admits_https(r) for r in model.registered if r.type == SECURITY_GROUP_RULE
               and r.parent == cluster.parent):
        return ("the API endpoint is private only and the control plane's security groups admit only the nodes "
                "on port 443 (gpu-dra:cluster.deployFrom.cidrs admits the deployer's network)")
    return None


def _admits_https(rule: Registered) -> bool:
    """An ingress rule admitting addresses on port 443 over TCP (protocol -1: every port of every protocol)."""
    inputs: Mapping[str, Any] = rule.inputs
    if inputs.get("type") != "ingress" or not (inputs.get("cidrBlocks") or inputs.get("ipv6CidrBlocks")):
        return False
    if inputs.get("protocol") in ("-1", "all"):
        return True
    low, high = inputs.get("fromPort"), inputs.get("toPort")
    return (inputs.get("protocol") in ("tcp", "6") and isinstance(low, int | float) and isinstance(high, int | float)
            and low <= 443 <= high)

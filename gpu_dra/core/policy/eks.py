"""Rules on the AWS resources EKS runs on, read where AWS gets them: the `aws:eks/cluster:Cluster` and
`aws:eks/nodeGroup:NodeGroup` that pulumi-eks registers (pulumi/pulumi-eks@7bf0c1b1 nodejs/eks/cluster/cluster.ts:
687-761, nodejs/eks/nodes/nodegroup.ts:2090-2117), and the program's launch templates."""

from __future__ import annotations

from collections.abc import Mapping

from gpu_dra.core.data import UNKNOWN
from gpu_dra.core.facts.eks import EXTENDED_PRICE_PER_HOUR, STANDARD_PRICE_PER_HOUR, SUPPORT_CALENDAR
from gpu_dra.core.facts.labels import NODE_GROUP_LABEL
from gpu_dra.core.facts.pulumi_types import EKS_CLUSTER, LAUNCH_TEMPLATE, NODE_GROUP
from gpu_dra.core.findings import Finding
from gpu_dra.core.policy.resources import (
    Context,
    Resource,
    environment_of,
    error,
    minor,
    not_judged,
)

_PROTECT_IT = "set the resource option protect"
_PROTECT_GROUP = ("set the resource option protect; to replace or remove the group, set its allowReplacement for "
                  "that change instead (stacks' nodeGroups[].allowReplacement)")


def _endpoint(resource: Resource) -> list[Finding]:
    """Public access defaults to on and to 0.0.0.0/0 when not given (EKS API VpcConfigRequest:
    https://docs.aws.amazon.com/eks/latest/APIReference/API_VpcConfigRequest.html)."""
    vpc = resource.props.get("vpcConfig")
    if vpc is UNKNOWN or not isinstance(vpc, Mapping):
        return [not_judged("eks-hardening", resource, "endpoint access", ["vpcConfig"])] if vpc is UNKNOWN else []
    public, cidrs = vpc.get("endpointPublicAccess", True), vpc.get("publicAccessCidrs")
    if public is UNKNOWN or (public and cidrs is UNKNOWN):
        return [not_judged("eks-hardening", resource, "endpoint access",
                           [f"vpcConfig.{k}" for k in ("endpointPublicAccess", "publicAccessCidrs")
                            if vpc.get(k) is UNKNOWN])]
    if public and (not cidrs or "0.0.0.0/0" in cidrs):
        return [error("eks-hardening", "the API endpoint is open to the world (0.0.0.0/0)", resource,
                      "vpcConfig.endpointPublicAccess", "make it private, or limit publicAccessCidrs")]
    return []


def eks_hardening(resource: Resource, context: Context) -> list[Finding]:
    if environment_of(context, resource) != "prod":
        return []
    props = resource.props
    if resource.type == EKS_CLUSTER:
        out = _endpoint(resource)
        # pulumi-eks sets encryptionConfig only when given a key ARN, as one value built from it (cluster.ts:586-606):
        # unknown while the key is new, so unknown means set.
        if not props.get("encryptionConfig"):
            out.append(error("eks-hardening", "secrets envelope encryption with a KMS key is off", resource,
                             "encryptionConfig"))
        if not resource.protect:
            out.append(error("eks-hardening", "the cluster is not protected against deletion", resource,
                             fix=_PROTECT_IT))
        return out
    if resource.type == LAUNCH_TEMPLATE:
        options = props.get("metadataOptions")
        tokens = options.get("httpTokens") if isinstance(options, Mapping) else options
        if tokens is UNKNOWN:
            return [not_judged("eks-hardening", resource, "IMDSv2", ["metadataOptions.httpTokens"])]
        if tokens != "required":
            return [error("eks-hardening", f"launch template {resource.name} allows IMDSv1", resource,
                          "metadataOptions.httpTokens", "require IMDSv2 (httpTokens: required)")]
        return []
    if resource.type == NODE_GROUP:
        labels = props.get("labels")
        if labels is UNKNOWN:
            return [not_judged("eks-hardening", resource, "whether it is a GPU group", ["labels"])]
        if (isinstance(labels, Mapping) and NODE_GROUP_LABEL in labels and not resource.protect
                and labels[NODE_GROUP_LABEL] not in context.replaceable_node_groups):
            return [error("eks-hardening", f"GPU node group {labels[NODE_GROUP_LABEL]} is not protected against "
                          "deletion", resource, fix=_PROTECT_GROUP)]
    return []


def kubernetes_version_supported(resource: Resource, context: Context) -> list[Finding]:
    """From 90 days before the end of standard support, when extended support and its billing begin."""
    if resource.type != EKS_CLUSTER:
        return []
    written = resource.props.get("version")
    if written is UNKNOWN:
        return [not_judged("kubernetes-version-supported", resource, "the cluster's version", ["version"])]
    version = minor(written) if written else context.target.kubernetes_version
    window = SUPPORT_CALENDAR.get(version)
    if window is None:
        return []
    end, days = window.standard_ends, (window.standard_ends - context.today).days
    if days > 90:
        return []
    if context.today > window.extended_ends:
        # "Automatic updates can happen at any time after the end of extended support date" (calendar page, FAQ).
        message = (f"EKS support for Kubernetes {version} ended on {window.extended_ends}, extended support "
                   "included: EKS may upgrade the control plane at any time")
    elif days < 0:
        message = (f"EKS standard support for Kubernetes {version} ended on {end}: the cluster is in extended "
                   f"support, billed ${EXTENDED_PRICE_PER_HOUR} instead of ${STANDARD_PRICE_PER_HOUR} per "
                   "cluster-hour, which it cannot leave but by upgrading")
    else:
        when = f"today ({end})" if days == 0 else f"on {end}, in {days} day{'' if days == 1 else 's'}"
        message = f"EKS standard support for Kubernetes {version} ends {when}"
    return [error("kubernetes-version-supported", message, resource, "version", "plan the upgrade")]

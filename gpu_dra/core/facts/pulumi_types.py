"""Pulumi type tokens of the resources gpu-dra's program registers and of the children the remote components'
providers register for it, each once: the permissions table (render/permissions) and the engine's view of a stack
(policy/engine) name them alike.

Tokens as the providers' SDKs register them: pulumi/pulumi-eks@7bf0c1b1 (eks:index:*), pulumi/pulumi-aws (aws:*; the
Karpenter ones read from the installed 7.51.1's @pulumi.type_token), pulumi/pulumi-kubernetes@94977969d
(kubernetes:*), pulumi/pulumi@1b5949891b (pulumi:*).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

# pulumi-eks's components.
CLUSTER = "eks:index:Cluster"
MANAGED_NODE_GROUP = "eks:index:ManagedNodeGroup"
VPC_CNI_ADDON = "eks:index:VpcCniAddon"
# pulumi-kubernetes's Helm chart component.
CHART = "kubernetes:helm.sh/v4:Chart"
# Remote components: registered by their provider inside Construct, not by the program.
REMOTE_COMPONENTS = (CLUSTER, MANAGED_NODE_GROUP, CHART)

# Providers and the root stack.
K8S_PROVIDER = "pulumi:providers:kubernetes"
AWS_PROVIDER = "pulumi:providers:aws"
ROOT_STACK = "pulumi:pulumi:Stack"

# pulumi-aws resources (and one invoke).
EKS_CLUSTER = "aws:eks/cluster:Cluster"
NODE_GROUP = "aws:eks/nodeGroup:NodeGroup"
LAUNCH_TEMPLATE = "aws:ec2/launchTemplate:LaunchTemplate"
ROLE = "aws:iam/role:Role"
ROLE_POLICY_ATTACHMENT = "aws:iam/rolePolicyAttachment:RolePolicyAttachment"
SECURITY_GROUP = "aws:ec2/securityGroup:SecurityGroup"
SECURITY_GROUP_RULE = "aws:ec2/securityGroupRule:SecurityGroupRule"
ACCESS_ENTRY = "aws:eks/accessEntry:AccessEntry"
ACCESS_POLICY_ASSOCIATION = "aws:eks/accessPolicyAssociation:AccessPolicyAssociation"
ADDON = "aws:eks/addon:Addon"
ADDON_VERSION = "aws:eks/getAddonVersion:getAddonVersion"  # an invoke: read only
# Karpenter's AWS side (components/karpenter.py).
IAM_POLICY = "aws:iam/policy:Policy"
POD_IDENTITY_ASSOCIATION = "aws:eks/podIdentityAssociation:PodIdentityAssociation"
SQS_QUEUE = "aws:sqs/queue:Queue"
SQS_QUEUE_POLICY = "aws:sqs/queuePolicy:QueuePolicy"
EVENT_RULE = "aws:cloudwatch/eventRule:EventRule"
EVENT_TARGET = "aws:cloudwatch/eventTarget:EventTarget"
# Karpenter's custom resources, as k8s.apiextensions.CustomResource registers them (kubernetes_type below).
KARPENTER_NODE_CLASS = "kubernetes:karpenter.k8s.aws/v1:EC2NodeClass"
KARPENTER_NODE_POOL = "kubernetes:karpenter.sh/v1:NodePool"


def kubernetes_type(api_version: str, kind: str) -> str:
    """The SDK token of a Kubernetes kind: core kinds under `core/` (pulumi-kubernetes@94977969d provider/pkg/gen/
    _go-templates/yaml/v2/kinds.tmpl; unknown kinds become kubernetes:<apiVersion>:<Kind> the same way)."""
    return f"kubernetes:{api_version if '/' in api_version else 'core/' + api_version}:{kind}"


def is_kubernetes_object(type_: str) -> bool:
    """A Kubernetes object's token, not one of pulumi-kubernetes's components (Helm charts, YAML files)."""
    return type_.startswith("kubernetes:") and not type_.startswith(("kubernetes:helm.sh/", "kubernetes:yaml/"))


def default_security_groups(inputs: Mapping[str, Any]) -> bool:
    """Whether pulumi-eks's Cluster, given these inputs, creates its own cluster and node security groups (with their
    rules): unless skipDefaultSecurityGroups, which defaults to auto mode (pulumi/pulumi-eks@7bf0c1b1:nodejs/eks/
    cluster/cluster.ts:548, 2120)."""
    skip = inputs.get("skipDefaultSecurityGroups")
    auto_mode = inputs.get("autoMode")
    return not (skip if skip is not None else isinstance(auto_mode, Mapping) and auto_mode.get("enabled"))

"""The IAM permissions a deploy needs, derived from the resource types a stack declares.

`gpu-dra permissions` runs the program under mocks and hands over what it registered; the remote components of
pulumi-eks are one registration there, so `declared_types` adds the children their provider registers in
Construct (pulumi/pulumi-eks@7bf0c1b1 nodejs/eks/cluster/cluster.ts:529-583 role and security groups, 687-761 the
cluster, 1028-1058 access entries, 1091-1112 the vpc-cni add-on; nodes/securitygroup.ts:113-200;
nodes/nodegroup.ts:2092-2120 the node group; the same reading as gpu_dra.core.policy.engine).

Two tables, each row citing the page its actions are defined on:

- LIFECYCLE: per resource type (or invoke), what the Pulumi AWS provider calls to create, read, update and delete
  it: the provider's CRUD calls as the Terraform AWS provider makes them, named as the Service Authorization
  Reference names the actions. Not traced call by call against the provider's source, and not tested against AWS.
- AT_CREATION: what EKS does with the caller's own permissions when it creates a cluster or a node group: pass the
  roles, create its service-linked roles, grant itself the secrets key, look at the subnets and the node role. The
  least certain rows are the cluster's ec2 Describe calls and the Pod Identity association's iam:PassRole:
  list_eks.html is where each operation's dependent actions are listed, but neither was confirmed there.

Every statement has `Resource: "*"`: scoping to a stack's names (its cluster, roles, key) is the user's to do.
Pure: types and inputs in, a policy document out.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from gpu_dra.core.facts.pulumi_types import (
    ACCESS_ENTRY,
    ACCESS_POLICY_ASSOCIATION,
    ADDON,
    ADDON_VERSION,
    CLUSTER,
    EKS_CLUSTER,
    EVENT_RULE,
    EVENT_TARGET,
    IAM_POLICY,
    MANAGED_NODE_GROUP,
    NODE_GROUP,
    POD_IDENTITY_ASSOCIATION,
    ROLE,
    ROLE_POLICY_ATTACHMENT,
    SECURITY_GROUP,
    SECURITY_GROUP_RULE,
    SQS_QUEUE,
    SQS_QUEUE_POLICY,
    default_security_groups,
)

_SAR = "https://docs.aws.amazon.com/service-authorization/latest/reference/"
EC2_ACTIONS = _SAR + "list_amazonec2.html"
EKS_ACTIONS = _SAR + "list_amazonelastickubernetesservice.html"
IAM_ACTIONS = _SAR + "list_awsidentityandaccessmanagementiam.html"
KMS_ACTIONS = _SAR + "list_awskeymanagementservice.html"
SQS_ACTIONS = _SAR + "list_amazonsqs.html"
EVENTBRIDGE_ACTIONS = _SAR + "list_amazoneventbridge.html"
# The EKS API operations and the IAM actions each authorizes, dependent actions included.
EKS_OPERATIONS = _SAR + "list_eks.html"
_GUIDE = "https://docs.aws.amazon.com/eks/latest/userguide/"
EKS_CLUSTER_SLR = _GUIDE + "using-service-linked-roles-eks.html"
EKS_NODEGROUP_SLR = _GUIDE + "using-service-linked-roles-eks-nodegroups.html"
EKS_SECRETS_KEY = _GUIDE + "enable-kms.html"
# "Tagging Amazon EC2 instances": a launch template's instance tags are applied as EKS launches the nodes, and the
# principal creating the node group then needs ec2:RunInstances and ec2:CreateTags (as any launch that tags:
# https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/supported-iam-actions-tagging.html).
EKS_LAUNCH_TEMPLATE_TAGS = _GUIDE + "launch-templates.html"
# The policies AWS Step Functions writes for its EKS integration: what a caller of CreateCluster and CreateNodegroup
# needs besides the eks: action (iam:PassRole to eks.amazonaws.com; for a node group also ec2:DescribeSubnets,
# iam:GetRole and iam:ListAttachedRolePolicies on the node role).
EKS_CALLER = "https://docs.aws.amazon.com/step-functions/latest/dg/eks-iam.html"

POLICY_VERSION = "2012-10-17"


@dataclass(frozen=True)
class Lifecycle:
    """The actions the Pulumi AWS provider calls to create, read, update and delete one resource type."""

    type: str
    create: tuple[str, ...]
    read: tuple[str, ...]
    update: tuple[str, ...]
    delete: tuple[str, ...]
    source: str

    @property
    def actions(self) -> tuple[str, ...]:
        return tuple(sorted({*self.create, *self.read, *self.update, *self.delete}))


@dataclass(frozen=True)
class OnBehalf:
    """Actions an AWS service checks against the caller when the caller creates one of `type`; `condition`
    (operator, key, value) narrows the statement they land in without naming a stack's resources."""

    type: str
    why: str
    actions: tuple[str, ...]
    source: str
    condition: tuple[str, str, str] | None = None


_TAGS = ("ec2:CreateTags", "ec2:DeleteTags")
_EKS_TAGS = ("eks:TagResource", "eks:UntagResource")

LIFECYCLE: dict[str, Lifecycle] = {row.type: row for row in (
    Lifecycle("aws:ec2/vpc:Vpc",
              create=("ec2:CreateVpc", "ec2:ModifyVpcAttribute", "ec2:CreateTags"),
              # the VPC's attributes, and its default network ACL, route table and security group
              read=("ec2:DescribeVpcs", "ec2:DescribeVpcAttribute", "ec2:DescribeNetworkAcls",
                    "ec2:DescribeRouteTables", "ec2:DescribeSecurityGroups"),
              update=("ec2:ModifyVpcAttribute", *_TAGS), delete=("ec2:DeleteVpc",), source=EC2_ACTIONS),
    Lifecycle("aws:ec2/internetGateway:InternetGateway",
              create=("ec2:CreateInternetGateway", "ec2:AttachInternetGateway", "ec2:CreateTags"),
              read=("ec2:DescribeInternetGateways",), update=_TAGS,
              delete=("ec2:DetachInternetGateway", "ec2:DeleteInternetGateway"), source=EC2_ACTIONS),
    Lifecycle("aws:ec2/subnet:Subnet",
              create=("ec2:CreateSubnet", "ec2:ModifySubnetAttribute", "ec2:CreateTags"),
              read=("ec2:DescribeSubnets", "ec2:DescribeNetworkInterfaces"),
              update=("ec2:ModifySubnetAttribute", *_TAGS), delete=("ec2:DeleteSubnet",), source=EC2_ACTIONS),
    Lifecycle("aws:ec2/routeTable:RouteTable",
              create=("ec2:CreateRouteTable", "ec2:CreateRoute", "ec2:CreateTags"), read=("ec2:DescribeRouteTables",),
              update=("ec2:CreateRoute", "ec2:ReplaceRoute", "ec2:DeleteRoute", *_TAGS),
              delete=("ec2:DeleteRouteTable",), source=EC2_ACTIONS),
    Lifecycle("aws:ec2/routeTableAssociation:RouteTableAssociation",
              create=("ec2:AssociateRouteTable",), read=("ec2:DescribeRouteTables",),
              update=("ec2:ReplaceRouteTableAssociation",), delete=("ec2:DisassociateRouteTable",),
              source=EC2_ACTIONS),
    Lifecycle("aws:ec2/eip:Eip",
              create=("ec2:AllocateAddress", "ec2:CreateTags"),
              read=("ec2:DescribeAddresses", "ec2:DescribeAddressesAttribute"), update=_TAGS,
              delete=("ec2:DisassociateAddress", "ec2:ReleaseAddress"), source=EC2_ACTIONS),
    Lifecycle("aws:ec2/natGateway:NatGateway",
              create=("ec2:CreateNatGateway", "ec2:CreateTags"), read=("ec2:DescribeNatGateways",), update=_TAGS,
              delete=("ec2:DeleteNatGateway",), source=EC2_ACTIONS),
    Lifecycle(SECURITY_GROUP,
              # the provider revokes the default allow-all egress rule of a new group
              create=("ec2:CreateSecurityGroup", "ec2:RevokeSecurityGroupEgress", "ec2:CreateTags"),
              read=("ec2:DescribeSecurityGroups", "ec2:DescribeNetworkInterfaces"), update=_TAGS,
              # pulumi-eks sets revokeRulesOnDelete
              delete=("ec2:RevokeSecurityGroupIngress", "ec2:RevokeSecurityGroupEgress", "ec2:DeleteSecurityGroup"),
              source=EC2_ACTIONS),
    Lifecycle(SECURITY_GROUP_RULE,
              create=("ec2:AuthorizeSecurityGroupIngress", "ec2:AuthorizeSecurityGroupEgress"),
              read=("ec2:DescribeSecurityGroups", "ec2:DescribeSecurityGroupRules"),
              update=("ec2:UpdateSecurityGroupRuleDescriptionsIngress",
                      "ec2:UpdateSecurityGroupRuleDescriptionsEgress"),
              delete=("ec2:RevokeSecurityGroupIngress", "ec2:RevokeSecurityGroupEgress"), source=EC2_ACTIONS),
    Lifecycle("aws:ec2/launchTemplate:LaunchTemplate",
              create=("ec2:CreateLaunchTemplate", "ec2:CreateTags"),
              read=("ec2:DescribeLaunchTemplates", "ec2:DescribeLaunchTemplateVersions"),
              update=("ec2:CreateLaunchTemplateVersion", "ec2:ModifyLaunchTemplate", *_TAGS),
              delete=("ec2:DeleteLaunchTemplate",), source=EC2_ACTIONS),
    Lifecycle(ROLE,
              create=("iam:CreateRole", "iam:TagRole"),
              read=("iam:GetRole", "iam:ListRolePolicies", "iam:ListAttachedRolePolicies"),
              update=("iam:UpdateRole", "iam:UpdateRoleDescription", "iam:UpdateAssumeRolePolicy", "iam:TagRole",
                      "iam:UntagRole"),
              # a role leaves the instance profiles EKS made for its node groups before it is deleted
              delete=("iam:ListInstanceProfilesForRole", "iam:RemoveRoleFromInstanceProfile", "iam:DeleteRole"),
              source=IAM_ACTIONS),
    Lifecycle(ROLE_POLICY_ATTACHMENT,
              create=("iam:AttachRolePolicy",), read=("iam:ListAttachedRolePolicies",), update=(),
              delete=("iam:DetachRolePolicy",), source=IAM_ACTIONS),
    Lifecycle("aws:kms/key:Key",
              # CreateKey's dependent actions: kms:PutKeyPolicy, kms:TagResource
              create=("kms:CreateKey", "kms:PutKeyPolicy", "kms:TagResource", "kms:EnableKeyRotation"),
              read=("kms:DescribeKey", "kms:GetKeyPolicy", "kms:GetKeyRotationStatus", "kms:ListResourceTags"),
              update=("kms:UpdateKeyDescription", "kms:PutKeyPolicy", "kms:EnableKeyRotation",
                      "kms:DisableKeyRotation", "kms:EnableKey", "kms:DisableKey", "kms:TagResource",
                      "kms:UntagResource"),
              delete=("kms:ScheduleKeyDeletion",), source=KMS_ACTIONS),
    Lifecycle(EKS_CLUSTER,
              create=("eks:CreateCluster", "eks:TagResource"), read=("eks:DescribeCluster",),
              update=("eks:UpdateClusterConfig", "eks:UpdateClusterVersion", "eks:AssociateEncryptionConfig",
                      "eks:DescribeUpdate", *_EKS_TAGS),
              delete=("eks:DeleteCluster",), source=EKS_ACTIONS),
    Lifecycle(NODE_GROUP,
              create=("eks:CreateNodegroup", "eks:TagResource"), read=("eks:DescribeNodegroup",),
              update=("eks:UpdateNodegroupConfig", "eks:UpdateNodegroupVersion", "eks:DescribeUpdate", *_EKS_TAGS),
              delete=("eks:DeleteNodegroup",), source=EKS_ACTIONS),
    Lifecycle(ADDON,
              create=("eks:CreateAddon", "eks:TagResource"), read=("eks:DescribeAddon",),
              update=("eks:UpdateAddon", "eks:DescribeUpdate", *_EKS_TAGS), delete=("eks:DeleteAddon",),
              source=EKS_ACTIONS),
    Lifecycle(ADDON_VERSION, create=(), read=("eks:DescribeAddonVersions",), update=(), delete=(),
              source=EKS_ACTIONS),
    Lifecycle(ACCESS_ENTRY,
              create=("eks:CreateAccessEntry", "eks:TagResource"), read=("eks:DescribeAccessEntry",),
              update=("eks:UpdateAccessEntry", *_EKS_TAGS), delete=("eks:DeleteAccessEntry",), source=EKS_ACTIONS),
    Lifecycle(ACCESS_POLICY_ASSOCIATION,
              create=("eks:AssociateAccessPolicy",), read=("eks:ListAssociatedAccessPolicies",), update=(),
              delete=("eks:DisassociateAccessPolicy",), source=EKS_ACTIONS),
    # Karpenter's AWS side (components/karpenter.py).
    Lifecycle(IAM_POLICY,
              create=("iam:CreatePolicy", "iam:TagPolicy"),
              read=("iam:GetPolicy", "iam:GetPolicyVersion", "iam:ListPolicyTags"),
              # a document change is a new default version; IAM keeps five, so the oldest goes first
              update=("iam:CreatePolicyVersion", "iam:ListPolicyVersions", "iam:DeletePolicyVersion", "iam:TagPolicy",
                      "iam:UntagPolicy"),
              # a policy's other versions are deleted before it
              delete=("iam:ListPolicyVersions", "iam:DeletePolicyVersion", "iam:DeletePolicy"), source=IAM_ACTIONS),
    Lifecycle(POD_IDENTITY_ASSOCIATION,
              create=("eks:CreatePodIdentityAssociation", "eks:TagResource"),
              read=("eks:DescribePodIdentityAssociation",),
              update=("eks:UpdatePodIdentityAssociation", *_EKS_TAGS), delete=("eks:DeletePodIdentityAssociation",),
              source=EKS_ACTIONS),
    Lifecycle(SQS_QUEUE,
              create=("sqs:CreateQueue", "sqs:TagQueue"),
              read=("sqs:GetQueueAttributes", "sqs:GetQueueUrl", "sqs:ListQueueTags"),
              update=("sqs:SetQueueAttributes", "sqs:TagQueue", "sqs:UntagQueue"), delete=("sqs:DeleteQueue",),
              source=SQS_ACTIONS),
    Lifecycle(SQS_QUEUE_POLICY,
              # the queue policy is the queue's Policy attribute
              create=("sqs:SetQueueAttributes",), read=("sqs:GetQueueAttributes",),
              update=("sqs:SetQueueAttributes",), delete=("sqs:SetQueueAttributes",), source=SQS_ACTIONS),
    Lifecycle(EVENT_RULE,
              create=("events:PutRule", "events:TagResource"),
              read=("events:DescribeRule", "events:ListTagsForResource"),
              update=("events:PutRule", "events:TagResource", "events:UntagResource"), delete=("events:DeleteRule",),
              source=EVENTBRIDGE_ACTIONS),
    Lifecycle(EVENT_TARGET,
              create=("events:PutTargets",), read=("events:ListTargetsByRule",), update=("events:PutTargets",),
              delete=("events:RemoveTargets",), source=EVENTBRIDGE_ACTIONS),
)}

_TO_EKS = ("StringEquals", "iam:PassedToService", "eks.amazonaws.com")

AT_CREATION: tuple[OnBehalf, ...] = (
    OnBehalf(EKS_CLUSTER, "pass the cluster role to EKS", ("iam:PassRole",), EKS_CALLER, _TO_EKS),
    OnBehalf(EKS_CLUSTER, "EKS grants itself the secrets key for envelope encryption",
             ("kms:CreateGrant", "kms:DescribeKey"), EKS_SECRETS_KEY),
    OnBehalf(EKS_CLUSTER, "EKS creates its service-linked role AWSServiceRoleForAmazonEKS on the first cluster",
             ("iam:CreateServiceLinkedRole",), EKS_CLUSTER_SLR, ("StringEquals", "iam:AWSServiceName",
                                                                  "eks.amazonaws.com")),
    OnBehalf(EKS_CLUSTER, "EKS checks the subnets and security groups it is given",
             ("ec2:DescribeSubnets", "ec2:DescribeSecurityGroups", "ec2:DescribeVpcs"), EKS_OPERATIONS),
    OnBehalf(NODE_GROUP, "pass the node role to EKS", ("iam:PassRole",), EKS_CALLER, _TO_EKS),
    OnBehalf(NODE_GROUP, "EKS creates its service-linked role AWSServiceRoleForAmazonEKSNodegroup on the first "
             "node group", ("iam:CreateServiceLinkedRole",), EKS_NODEGROUP_SLR,
             ("StringEquals", "iam:AWSServiceName", "eks-nodegroup.amazonaws.com")),
    OnBehalf(NODE_GROUP, "EKS reads the node role and its policies, and the subnets",
             ("iam:GetRole", "iam:ListAttachedRolePolicies", "ec2:DescribeSubnets"), EKS_CALLER),
    OnBehalf(NODE_GROUP, "EKS launches the nodes from the group's launch template, whose instance tags are applied "
             "at launch (every GPU group's: gpu-dra.io/node-group)", ("ec2:RunInstances", "ec2:CreateTags"),
             EKS_LAUNCH_TEMPLATE_TAGS),
    # UNVERIFIED: that CreatePodIdentityAssociation checks iam:PassRole on the associated role, and with this
    # iam:PassedToService value (the principal of Pod Identity's trust policy). Inferred, not read on list_eks.html.
    OnBehalf(POD_IDENTITY_ASSOCIATION, "pass Karpenter's controller role to EKS Pod Identity", ("iam:PassRole",),
             EKS_OPERATIONS, ("StringEquals", "iam:PassedToService", "pods.eks.amazonaws.com")),
)


def component_children(type_: str, inputs: Mapping[str, Any]) -> list[str]:
    """The AWS types a pulumi-eks component's Construct registers (and invokes), for the options the program
    sets: its own service role and, unless skipped, its security groups; never a default node group or an OIDC
    provider (components/cluster.py sets skipDefaultNodeGroup and createOidcProvider=False)."""
    if type_ == MANAGED_NODE_GROUP:
        return [NODE_GROUP]
    if type_ != CLUSTER:
        return []
    children = [ROLE, ROLE_POLICY_ATTACHMENT, EKS_CLUSTER]
    if default_security_groups(inputs):
        children += [SECURITY_GROUP, SECURITY_GROUP_RULE]
    entries = inputs.get("accessEntries") or {}
    if entries:
        children.append(ACCESS_ENTRY)
    if any(isinstance(e, Mapping) and e.get("accessPolicies") for e in entries.values()):
        children.append(ACCESS_POLICY_ASSOCIATION)
    if not inputs.get("useDefaultVpcCni"):  # cluster.ts:1091-1112: pulumi-eks's own VpcCniAddon
        children += [ADDON, ADDON_VERSION]
    return children


def declared_types(registered: Iterable[tuple[str, Mapping[str, Any]]]) -> set[str]:
    """The AWS resource types (and invokes) behind a program run's (type, inputs) registrations."""
    found: set[str] = set()
    for type_, inputs in registered:
        if type_.startswith("aws:"):
            found.add(type_)
        found.update(component_children(type_, inputs))
    return found


def unmapped(types: Iterable[str]) -> list[str]:
    """Declared AWS types the table does not know: a policy without them would fail the deploy half-way."""
    return sorted(t for t in types if t not in LIFECYCLE)


def rows(types: Iterable[str]) -> tuple[list[Lifecycle], list[OnBehalf]]:
    wanted = set(types)
    return ([LIFECYCLE[t] for t in sorted(wanted) if t in LIFECYCLE],
            [row for row in AT_CREATION if row.type in wanted])


def _sid(service: str, condition_key: str | None) -> str:
    """Statement ids take letters and digits only: `Eks`, `IamPassedToService`."""
    suffix = "".join(c for c in (condition_key or "").split(":")[-1] if c.isalnum())
    return service.capitalize() + suffix


def policy_document(types: Iterable[str]) -> dict[str, Any]:
    """An identity-based policy for the deploying identity: one statement per service, and one per condition an
    action carries (iam:PassRole only to EKS, iam:CreateServiceLinkedRole only for EKS's roles)."""
    lifecycle, on_behalf = rows(types)
    groups: dict[tuple[str, str | None, str | None], tuple[set[str], set[str]]] = {}
    for action in (a for row in lifecycle for a in row.actions):
        groups.setdefault((action.split(":")[0], None, None), (set(), set()))[0].add(action)
    for row in on_behalf:
        operator, key, value = row.condition or (None, None, None)
        for action in row.actions:
            actions, values = groups.setdefault((action.split(":")[0], operator, key), (set(), set()))
            actions.add(action)
            if value is not None:
                values.add(value)
    statements = []
    for (service, operator, key), (actions, values) in groups.items():
        statement: dict[str, Any] = {"Sid": _sid(service, key), "Effect": "Allow", "Action": sorted(actions),
                                     "Resource": "*"}
        if operator is not None and key is not None:
            statement["Condition"] = {operator: {key: sorted(values)}}
        statements.append(statement)
    return {"Version": POLICY_VERSION, "Statement": sorted(statements, key=lambda s: s["Sid"])}

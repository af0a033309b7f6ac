"""The deploy's IAM policy (`gpu-dra permissions`, gpu_dra.core.render.permissions): derived from every stack's
resources, with what EKS checks against the caller at creation, committed as deploy/iam-policy.json and kept
current. Derived from the program and the cited pages; nothing here was run against AWS."""

from __future__ import annotations

import json
import re

import pytest

from gpu_dra.core.render import permissions
from gpu_dra.core.render.permissions import AT_CREATION, LIFECYCLE, component_children, declared_types

from .conftest import ROOT, STACKS, Project
from .test_cli import gpu_dra

POLICY = ROOT / "deploy" / "iam-policy.json"


def _statements(document: dict) -> dict[str, dict]:
    return {s["Sid"]: s for s in document["Statement"]}


def test_the_committed_policy_is_current() -> None:
    result = gpu_dra("permissions", "--all-stacks")
    assert result.returncode == 0, result.stderr
    assert POLICY.read_text() == result.stdout, "run `gpu-dra permissions --all-stacks > deploy/iam-policy.json`"
    assert 'Resource "*"' in result.stderr and "not tested against AWS" in result.stderr


def test_the_policy_is_one_statement_per_service_and_condition() -> None:
    document = json.loads(POLICY.read_text())
    assert document["Version"] == "2012-10-17"
    actions = [a for s in document["Statement"] for a in s["Action"]]
    assert len(actions) == len(set(actions))  # no action in two statements
    for statement in document["Statement"]:
        assert re.fullmatch(r"[A-Za-z0-9]+", statement["Sid"])
        assert (statement["Effect"], statement["Resource"]) == ("Allow", "*")
        assert statement["Action"] == sorted(statement["Action"])
        service = statement["Sid"].removesuffix("AWSServiceName").removesuffix("PassedToService").lower()
        assert {a.split(":")[0] for a in statement["Action"]} == {service}
    # Events and Sqs: Karpenter's interruption queue and rules (staging)
    assert set(_statements(document)) == {"Ec2", "Eks", "Events", "Iam", "IamAWSServiceName", "IamPassedToService",
                                          "Kms", "Sqs"}


def test_what_eks_needs_from_the_caller_at_creation_is_in_it() -> None:
    """The issue's missing actions: the secrets key's grant and description, and EKS's service-linked roles; the
    roles passed to EKS only."""
    statements = _statements(json.loads(POLICY.read_text()))
    assert {"kms:CreateGrant", "kms:DescribeKey", "kms:CreateKey"} <= set(statements["Kms"]["Action"])
    assert statements["IamAWSServiceName"]["Action"] == ["iam:CreateServiceLinkedRole"]
    assert statements["IamAWSServiceName"]["Condition"] == {"StringEquals": {"iam:AWSServiceName": [
        "eks-nodegroup.amazonaws.com", "eks.amazonaws.com"]}}
    assert statements["IamPassedToService"] == {
        "Sid": "IamPassedToService", "Effect": "Allow", "Action": ["iam:PassRole"], "Resource": "*",
        # pods.eks.amazonaws.com: the Karpenter controller's role, handed to EKS Pod Identity (staging)
        "Condition": {"StringEquals": {"iam:PassedToService": ["eks.amazonaws.com", "pods.eks.amazonaws.com"]}}}
    assert {"ec2:DescribeSubnets", "ec2:DescribeVpcs", "ec2:DescribeSecurityGroups"} <= set(statements["Ec2"]["Action"])


@pytest.mark.parametrize("stack", STACKS)
def test_every_aws_type_a_stack_declares_has_its_actions(stack: str) -> None:
    from gpu_dra.cli.offline import run_program
    from gpu_dra.core.config.loader import build_stack, stack_values

    values, located = stack_values(ROOT, stack)
    run = run_program(ROOT, stack, values, build_stack(ROOT, stack, values, located))
    types = declared_types((r.type, r.inputs) for r in run.resources) | set(run.invokes)
    assert permissions.unmapped(types) == []
    # the program's own resources and invokes, and the children pulumi-eks registers for them
    assert {"aws:kms/key:Key", "aws:iam/role:Role", "aws:ec2/launchTemplate:LaunchTemplate", "aws:eks/addon:Addon",
            "aws:eks/getAddonVersion:getAddonVersion", "aws:eks/cluster:Cluster", "aws:eks/nodeGroup:NodeGroup",
            "aws:eks/accessEntry:AccessEntry"} <= types


@pytest.mark.parametrize("stack", STACKS)
def test_a_node_group_launched_with_instance_tags_may_run_and_tag_instances(stack: str) -> None:
    """Every GPU group's launch template tags its instances; EKS then checks ec2:RunInstances and ec2:CreateTags
    against whoever creates the node group (EKS user guide, launch-templates: Tagging Amazon EC2 instances). The
    committed policy lacked ec2:RunInstances, so the first node group would fail to create."""
    from gpu_dra.cli.offline import run_program
    from gpu_dra.core.config.loader import build_stack, stack_values

    values, located = stack_values(ROOT, stack)
    run = run_program(ROOT, stack, values, build_stack(ROOT, stack, values, located))
    tagging = [r.name for r in run.resources if r.type == "aws:ec2/launchTemplate:LaunchTemplate"
               and any(t.get("resourceType") == "instance" and t.get("tags")
                       for t in r.inputs.get("tagSpecifications") or [])]
    assert tagging, "the stack's GPU groups tag their instances"
    allowed = {a for statement in json.loads(POLICY.read_text())["Statement"] if "Condition" not in statement
               for a in statement["Action"]}
    assert {"ec2:RunInstances", "ec2:CreateTags"} <= allowed


def test_each_row_cites_the_page_defining_its_actions() -> None:
    pages = {"ec2": permissions.EC2_ACTIONS, "eks": permissions.EKS_ACTIONS, "iam": permissions.IAM_ACTIONS,
             "kms": permissions.KMS_ACTIONS, "sqs": permissions.SQS_ACTIONS,
             "events": permissions.EVENTBRIDGE_ACTIONS}
    for row in LIFECYCLE.values():
        assert row.actions, row.type
        assert {pages[a.split(":")[0]] for a in row.actions} == {row.source}, row.type
    for behalf in AT_CREATION:
        assert behalf.type in LIFECYCLE and behalf.actions
        assert behalf.source.startswith(("https://docs.aws.amazon.com/service-authorization/latest/reference/",
                                         "https://docs.aws.amazon.com/eks/latest/userguide/",
                                         "https://docs.aws.amazon.com/step-functions/latest/dg/")), behalf.source


def test_pulumi_eks_children_follow_the_components_inputs() -> None:
    cluster = {"accessEntries": {"admins": {"principalArn": "arn:aws:iam::111122223333:role/a",
                                            "accessPolicies": {"view": {}}}}, "useDefaultVpcCni": True}
    children = component_children(permissions.CLUSTER, cluster)
    assert permissions.ACCESS_POLICY_ASSOCIATION in children and permissions.ADDON not in children
    bare = component_children(permissions.CLUSTER, {})
    assert permissions.ACCESS_ENTRY not in bare
    assert {permissions.ADDON, permissions.ADDON_VERSION} <= set(bare)  # pulumi-eks's own vpc-cni add-on
    groups = {permissions.SECURITY_GROUP, permissions.SECURITY_GROUP_RULE}
    assert groups <= set(bare) and not groups & set(component_children(permissions.CLUSTER, {
        "skipDefaultSecurityGroups": True}))
    assert component_children(permissions.MANAGED_NODE_GROUP, {}) == [permissions.NODE_GROUP]
    assert declared_types([("kubernetes:core/v1:Namespace", {}), ("pulumi:providers:kubernetes", {})]) == set()
    assert permissions.policy_document(set()) == {"Version": "2012-10-17", "Statement": []}
    assert permissions.unmapped({"aws:s3/bucket:Bucket", "aws:kms/key:Key"}) == ["aws:s3/bucket:Bucket"]


def test_the_text_names_each_type_its_stacks_and_where_to_scope() -> None:
    result = gpu_dra("permissions", "--stack", "prod", "--format", "text")
    assert result.returncode == 0, result.stderr
    assert "aws:eks/cluster:Cluster  (prod)  " + permissions.EKS_ACTIONS in result.stdout
    assert "  iam:PassRole  when StringEquals iam:PassedToService eks.amazonaws.com" in result.stdout
    assert "kms:CreateGrant kms:DescribeKey" in result.stdout
    assert "  prod: cluster gpu-prod in us-east-1" in result.stdout and "not tested against AWS" in result.stdout


def test_every_broken_stack_is_reported(project: Project) -> None:
    project.edit_stack("dev", lambda config: config["gpu-dra:cluster"].update(regoin="x"))
    project.edit_stack("prod", lambda config: config["gpu-dra:cluster"].update(nmae="x"))
    result = gpu_dra("--project-dir", str(project.root), "permissions", "--all-stacks")
    assert result.returncode == 2 and result.stdout == ""
    assert "stacks/Pulumi.dev.yaml" in result.stderr and "regoin" in result.stderr
    assert "stacks/Pulumi.prod.yaml" in result.stderr and "nmae" in result.stderr


def test_the_readme_points_to_the_policy_instead_of_a_hand_list() -> None:
    readme = (ROOT / "README.md").read_text()
    section = readme.split("## Deploying for real", 1)[1].split("\n## ", 1)[0]
    assert "deploy/iam-policy.json" in section and "docs/deploying.md" in section
    assert "not tested against AWS" in section
    assert "kms:PutKeyPolicy" not in section  # the old hand-written list

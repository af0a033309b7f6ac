"""Karpenter for a stack's GPU NodePools (gpu-dra:karpenter), as its getting-started guide installs it on EKS.

On AWS: a node role, a controller role that EKS Pod Identity gives to kube-system/karpenter, the controller's
policies, and the interruption queue with the EventBridge rules that feed it. On the cluster: the karpenter-crd chart,
then the karpenter chart without its CRDs, then per NodePool its EC2NodeClass and the NodePool. The node role is
created with the cluster (components/cluster.py), which gives it an EC2_LINUX access entry so that the nodes can join.
Every document and value comes from the core (gpu_dra.core.render.karpenter); this module only declares resources.
Names start with the cluster's name, and per NodePool they carry the NodePool's name, never a list position.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import pulumi
import pulumi_aws as aws
import pulumi_kubernetes as k8s

from components.objects import custom_resource
from gpu_dra.core.config.models import StackConfig
from gpu_dra.core.facts import karpenter as facts
from gpu_dra.core.facts import karpenter_iam
from gpu_dra.core.render import karpenter as render

# The key of the node role's entry in pulumi-eks's accessEntries. Upper case, so no stack's accessEntries[].name (a DNS
# label) can take it.
NODE_ACCESS_ENTRY = "KarpenterNodeRole"


@dataclass(frozen=True)
class KarpenterCluster:
    """What Karpenter needs of the EKS cluster components/cluster.py declares."""

    name: str
    region: str
    aws_provider: aws.Provider
    cluster: pulumi.Resource  # what a resource that names the cluster by a plain string waits for
    node_role: aws.iam.Role
    subnet_ids: list[pulumi.Input[str]]  # the private subnets
    security_group_id: pulumi.Output[str]  # EKS's cluster security group
    system_node_group: pulumi.Resource  # where the controller's pods run
    pod_identity_agent: pulumi.Resource  # the add-on that hands the controller its role's credentials


def node_role(cluster_name: str, opts: pulumi.ResourceOptions) -> aws.iam.Role:
    """The role Karpenter's nodes run as, with the template's four AWS managed policies. Karpenter makes the instance
    profile itself from the EC2NodeClass's `role` (concepts/nodeclasses.md, v1.15), so none is declared here."""
    role = aws.iam.Role(f"{cluster_name}-karpenter-node",
                        assume_role_policy=json.dumps(render.node_role_trust_policy()), opts=opts)
    for name in render.node_role_policy_names():
        aws.iam.RolePolicyAttachment(f"{cluster_name}-karpenter-node-{name}", role=role.name,
                                     policy_arn=_managed_policy_arn(role.arn, name), opts=opts)
    return role


def _managed_policy_arn(role_arn: pulumi.Output[str], name: str) -> pulumi.Output[str]:
    """The AWS managed policy `name` in the role's partition."""
    return role_arn.apply(lambda arn: render.node_role_policy_arn(name, render.arn_account(arn)[0]))


class Karpenter(pulumi.ComponentResource):
    """Karpenter's AWS side always, and its charts, EC2NodeClasses and NodePools when this up reaches the cluster
    (`provider`)."""

    def __init__(self, config: StackConfig, cluster: KarpenterCluster, provider: k8s.Provider | None):
        if config.karpenter is None:
            raise ValueError("the stack declares no gpu-dra:karpenter")
        super().__init__("gpu-dra:karpenter:Karpenter", cluster.name, None, None)
        name = cluster.name
        on_aws = pulumi.ResourceOptions(parent=self, provider=cluster.aws_provider)

        queue = aws.sqs.Queue(f"{name}-karpenter-interruption", name=render.interruption_queue_name(name),
                              message_retention_seconds=karpenter_iam.INTERRUPTION_QUEUE_RETENTION_SECONDS,
                              sqs_managed_sse_enabled=karpenter_iam.INTERRUPTION_QUEUE_SQS_MANAGED_SSE, opts=on_aws)
        queue_policy = aws.sqs.QueuePolicy(
            f"{name}-karpenter-interruption", queue_url=queue.url,
            policy=queue.arn.apply(lambda arn: json.dumps(render.interruption_queue_policy(arn))), opts=on_aws)
        for rule_name, pattern in render.interruption_rules().items():
            rule = aws.cloudwatch.EventRule(f"{name}-karpenter-{rule_name}", event_pattern=json.dumps(pattern),
                                            description=f"Karpenter interruption events for {name}", opts=on_aws)
            aws.cloudwatch.EventTarget(f"{name}-karpenter-{rule_name}", rule=rule.name, arn=queue.arn,
                                       target_id=karpenter_iam.INTERRUPTION_TARGET_ID, opts=on_aws)

        controller_role = aws.iam.Role(f"{name}-karpenter-controller",
                                       assume_role_policy=json.dumps(render.controller_trust_policy()), opts=on_aws)
        documents = pulumi.Output.all(cluster.node_role.arn, queue.arn).apply(
            lambda arns: render.controller_policies(name, cluster.region, arns[0], arns[1]))
        attachments: list[pulumi.Resource] = []
        for policy_name in render.controller_policy_names():
            policy = aws.iam.Policy(f"{name}-karpenter-controller-{policy_name}",
                                    policy=_document(documents, policy_name),
                                    description=f"Karpenter controller ({policy_name}) for EKS cluster {name}",
                                    opts=on_aws)
            attachments.append(aws.iam.RolePolicyAttachment(f"{name}-karpenter-controller-{policy_name}",
                                                            role=controller_role.name, policy_arn=policy.arn,
                                                            opts=on_aws))
        identity = aws.eks.PodIdentityAssociation(
            f"{name}-karpenter", cluster_name=name, namespace=facts.NAMESPACE, service_account=facts.SERVICE_ACCOUNT,
            role_arn=controller_role.arn,
            opts=pulumi.ResourceOptions.merge(on_aws, pulumi.ResourceOptions(depends_on=[cluster.cluster])))

        if provider is not None:
            self._on_cluster(config, config.karpenter.version, cluster, provider, [
                identity, *attachments, queue_policy, cluster.system_node_group, cluster.pod_identity_agent])
        self.register_outputs({"interruptionQueue": queue.name})

    def _on_cluster(self, config: StackConfig, version: str, cluster: KarpenterCluster, provider: k8s.Provider,
                    controller_needs: list[pulumi.Resource]) -> None:
        """The charts, then per NodePool its EC2NodeClass and the NodePool. The controller starts once it can get
        credentials, read its queue and land on the system node group. The NodePools are deleted before the charts,
        and the charts before the IAM the controller needs, so it can still terminate the nodes it launched."""
        name = cluster.name
        on_cluster = pulumi.ResourceOptions(parent=self, provider=provider)
        # "we recommend using the independent karpenter-crd chart to manage CRDs": Helm installs a chart's crds/
        # only once and never upgrades them (website/content/en/preview/upgrading/upgrade-guide.md, "CRD Upgrades",
        # aws/karpenter-provider-aws@v1.14.1).
        crds = k8s.helm.v4.Chart(f"{name}-karpenter-crd", chart=render.chart_reference(facts.CRD_CHART),
                                 version=version, namespace=facts.NAMESPACE, name=facts.CRD_CHART, opts=on_cluster)
        controller = k8s.helm.v4.Chart(
            f"{name}-karpenter", chart=render.chart_reference(facts.CONTROLLER_CHART), version=version,
            namespace=facts.NAMESPACE, name=facts.CONTROLLER_CHART, skip_crds=True,
            values=render.controller_chart_values(config),
            opts=pulumi.ResourceOptions.merge(on_cluster, pulumi.ResourceOptions(
                depends_on=[crds, *controller_needs])))
        after_charts = pulumi.ResourceOptions.merge(on_cluster, pulumi.ResourceOptions(depends_on=[crds, controller]))
        for pool in config.karpenter_node_pools:
            node_class = custom_resource(f"{name}-{pool.name}", render.ec2_node_class(
                pool, cluster.node_role.name, cluster.subnet_ids, [cluster.security_group_id]), after_charts)
            custom_resource(f"{name}-{pool.name}", render.node_pool(pool), pulumi.ResourceOptions.merge(
                after_charts, pulumi.ResourceOptions(depends_on=[node_class])))


def _document(documents: pulumi.Output[dict[str, Any]], key: str) -> pulumi.Output[str]:
    return documents.apply(lambda docs: json.dumps(docs[key]))


"""What a stack's Karpenter becomes, as plain data: the controller chart's values, one EC2NodeClass and one NodePool per
`gpu-dra:karpenter.nodePools` entry, the interruption EventBridge rules and the controller's IAM policies.

The AWS documents come from Karpenter's getting-started CloudFormation template (gpu_dra.core.facts.karpenter_iam,
vendored at v1.14.1; 1.15 adds only a permission for a gate gpu-dra leaves off). Their ${...} placeholders are
substituted here, and a placeholder left over is an error. Ids and ARNs that AWS only knows once it creates the
resources come in as parameters: the program passes its Outputs, the tests plain strings. A NodePool's nodes carry
the labels and taints gpu-dra puts on a node group's (render.nodes), so NVIDIA's DRA driver and device plugin charts
land on them by the same selectors.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from gpu_dra.core.config.models import AllocationMode, AutoModeNodePool, KarpenterNodePool, StackConfig
from gpu_dra.core.facts import karpenter
from gpu_dra.core.facts import karpenter_iam as template
from gpu_dra.core.facts.labels import SYSTEM_NODE_LABEL
from gpu_dra.core.render.nodes import (
    BOTTLEROCKET_DEVICE_PLUGIN_OFF,
    node_labels,
    node_taints,
    taint_object,
    well_known_labels,
)

NODE_CLASS_KIND = "EC2NodeClass"
NODE_POOL_KIND = "NodePool"

# The URL suffix of the aws and aws-us-gov partitions, which the node role's trust policy needs before the role (and
# so its ARN, which names the partition) exists. gpu-dra's own node role trusts ec2.amazonaws.com too
# (components/cluster.py). China's partition uses amazonaws.com.cn (CloudFormation's AWS::URLSuffix,
# https://docs.aws.amazon.com/AWSCloudFormation/latest/UserGuide/pseudo-parameter-reference.html; not read in full
# here, UNVERIFIED), and the rest of the stack is not written for that partition either.
URL_SUFFIX = "amazonaws.com"

# The controller's pods run on the system node group, never on a node Karpenter manages: "without it, Karpenter can
# eventually consolidate the node hosting its own controller and the cluster gets stuck mid-disruption"
# (aws/karpenter-provider-aws website/content/en/preview/getting-started/adding-karpenter-to-existing-eks/_index.md,
# "Install Karpenter via Helm"). Resources are the guides' install's (requests = limits = cpu 1, memory 1Gi:
# aws/karpenter-provider-aws@v1.14.1 website/content/en/docs/getting-started/getting-started-with-karpenter/scripts/
# step08-apply-helm-chart.sh; the same in the existing-cluster guide's step23-helm-install.sh at 771048fa).
CONTROLLER_RESOURCES = {"requests": {"cpu": "1", "memory": "1Gi"}, "limits": {"cpu": "1", "memory": "1Gi"}}

# How the DRA driver shares each GPU, for Karpenter to model it the same way (karpenter.sh/docs/tasks/dra/, "Requesting
# a timesliced GPU"). "disabled" means each GPU serves one claim. That is the only mode the driver releases gpu-dra
# pins support: none of their values.yaml files has `consumableShares` (tests/data/chart-values/), so
# draDriver.values cannot set it.
CONSUMABLE_CAPACITY = "disabled"

# Bottlerocket's root (OS) volume, at Karpenter's default size: the blockDeviceMappings given here replace
# Karpenter's defaults, which are a 4Gi root /dev/xvda and a data /dev/xvdb (aws/karpenter-provider-aws@v1.14.1,
# pkg/providers/amifamily/bottlerocket.go DefaultBlockDeviceMappings).
BOTTLEROCKET_ROOT_VOLUME = "4Gi"


def substitute(value: Any, values: Mapping[str, str]) -> Any:
    """`value` (a document of the template) with each placeholder, a key of `values`, replaced in every string. A
    placeholder left over is an error: upstream added one that gpu-dra does not fill."""
    if isinstance(value, str):
        for placeholder, text in values.items():
            value = value.replace(placeholder, text)
        if left := re.findall(r"\$\{[^}]*\}", value):
            raise ValueError(f"{value!r}: no value for {', '.join(left)}")
        return value
    if isinstance(value, dict):
        return {substitute(key, values): substitute(item, values) for key, item in value.items()}
    if isinstance(value, list):
        return [substitute(item, values) for item in value]
    return value


def arn_account(arn: str) -> tuple[str, str]:
    """The partition and account ID of an IAM ARN (arn:<partition>:iam::<account>:role/<name>), so the policies name
    them without a lookup."""
    parts = arn.split(":")
    if len(parts) < 6 or parts[0] != "arn" or parts[2] != "iam":
        raise ValueError(f"{arn!r} is not an IAM ARN")
    return parts[1], parts[4]


def logical_name(logical_id: str) -> str:
    """A template logical ID as a resource name: NodeLifecyclePolicy -> node-lifecycle, ScheduledChangeRule ->
    scheduled-change. It is stable for as long as upstream keeps the ID."""
    words = re.findall(r"[A-Z]+(?![a-z])|[A-Z][a-z0-9]*", re.sub(r"(Policy|Rule)$", "", logical_id))
    return "-".join(word.lower() for word in words)


# ------------------------------------------------------------------------------------------------------ AWS side
def node_role_trust_policy() -> dict[str, Any]:
    """The trust policy of the role Karpenter's nodes run as (ec2.<URL suffix> assumes it)."""
    return dict(substitute(template.NODE_ROLE_TRUST_POLICY, {template.URL_SUFFIX: URL_SUFFIX}))


def node_role_policy_names() -> list[str]:
    """The AWS managed policies the node role gets, by name (the end of their ARNs)."""
    return [arn.rsplit("/", 1)[1] for arn in template.NODE_ROLE_MANAGED_POLICY_ARNS]


def node_role_policy_arn(name: str, partition: str) -> str:
    """The ARN of one of the node role's managed policies in `partition`."""
    (arn,) = [arn for arn in template.NODE_ROLE_MANAGED_POLICY_ARNS if arn.endswith(f"/{name}")]
    return str(substitute(arn, {template.PARTITION: partition}))


def controller_trust_policy() -> dict[str, Any]:
    """EKS Pod Identity's trust policy: the Pod Identity agent assumes the role for the pods of the associated service
    account (https://docs.aws.amazon.com/eks/latest/userguide/pod-id-role.html). The getting-started cluster
    associates kube-system/karpenter the same way (eksctl podIdentityAssociations, aws/karpenter-provider-aws@v1.14.1,
    website/content/en/docs/getting-started/getting-started-with-karpenter/scripts/step02-create-cluster.sh)."""
    return {"Version": "2012-10-17", "Statement": [{
        "Sid": "AllowEksAuthToAssumeRoleForPodIdentity", "Effect": "Allow",
        "Principal": {"Service": "pods.eks.amazonaws.com"}, "Action": ["sts:AssumeRole", "sts:TagSession"]}]}


def controller_policy_names() -> list[str]:
    """The controller's policies as resource names, in the template's order."""
    return [logical_name(logical_id) for logical_id in template.CONTROLLER_POLICIES]


def controller_policies(cluster_name: str, region: str, node_role_arn: str, queue_arn: str) -> dict[str, Any]:
    """The controller's policies by resource name, for this cluster, region, node role and interruption queue. The
    partition and account are the node role's. ZonalShiftPolicy is among them as the guide attaches it, although
    only settings.enableZonalShift (off here) uses it."""
    partition, account_id = arn_account(node_role_arn)
    values = {template.PARTITION: partition, template.REGION: region, template.ACCOUNT_ID: account_id,
              template.CLUSTER_NAME: cluster_name, template.NODE_ROLE_ARN: node_role_arn,
              template.QUEUE_ARN: queue_arn}
    return {logical_name(logical_id): substitute(document, values)
            for logical_id, document in template.CONTROLLER_POLICIES.items()}


def interruption_queue_name(cluster_name: str) -> str:
    """The SQS queue Karpenter reads interruption events from: named after the cluster, as in the template."""
    return str(substitute(template.INTERRUPTION_QUEUE_NAME, {template.CLUSTER_NAME: cluster_name}))


def interruption_queue_policy(queue_arn: str) -> dict[str, Any]:
    """EventBridge (and SQS) may send to the queue; nobody may use it without TLS."""
    return dict(substitute(template.INTERRUPTION_QUEUE_POLICY, {template.QUEUE_ARN: queue_arn}))


def interruption_rules() -> dict[str, dict[str, Any]]:
    """Per rule (by resource name), the event pattern whose events EventBridge sends to the queue: AWS Health events,
    Spot interruption warnings, rebalance recommendations, instance state changes, and capacity reservation
    interruption warnings."""
    return {logical_name(logical_id): dict(substitute(pattern, {}))
            for logical_id, pattern in template.INTERRUPTION_RULES.items()}


# ---------------------------------------------------------------------------------------------------- cluster side
def chart_reference(chart: str) -> str:
    return f"{karpenter.CHART_REPOSITORY}/{chart}"


def uses_dra(config: StackConfig) -> bool:
    return any(pool.allocation_mode is AllocationMode.dra for pool in config.karpenter_node_pools)


def controller_chart_values(config: StackConfig) -> dict[str, Any]:
    """The karpenter chart's values. Only NVIDIA's DRA driver runs on gpu-dra's nodes, so DRA support is the
    draNVIDIAGPU gate alone. settings.enableDRA "assumes both drivers run on your DRA nodes. If a driver isn't running,
    Karpenter launches nodes for its claims that can never serve them", and it fails the render together with any
    gate or settings.ignoreDRARequests (karpenter.sh/docs/tasks/dra/; the chart's `karpenter.dra` helper,
    charts/karpenter/templates/_helpers.tpl). The gate stays off without a DRA NodePool: no Karpenter node would run
    the driver. The service account is named explicitly, because the Pod Identity association names it. Left unset,
    the chart derives its name from the release."""
    name = config.cluster.name
    settings: dict[str, Any] = {"clusterName": name, "interruptionQueue": interruption_queue_name(name)}
    if uses_dra(config):
        settings["awsFeatureGates"] = {"draNVIDIAGPU": True}
    return {
        "settings": settings,
        "serviceAccount": {"name": karpenter.SERVICE_ACCOUNT},
        # Helm merges maps, so the chart's kubernetes.io/os: linux stays beside this.
        "nodeSelector": dict([SYSTEM_NODE_LABEL]),
        "controller": {"resources": CONTROLLER_RESOURCES},
    }


def _volume(device: str, size: str) -> dict[str, Any]:
    return {"deviceName": device, "ebs": {"volumeSize": size, "volumeType": "gp3", "encrypted": True,
                                          "deleteOnTermination": True}}


def ec2_node_class(pool: KarpenterNodePool, role: Any, subnet_ids: Sequence[Any],
                   security_group_ids: Sequence[Any]) -> dict[str, Any]:
    """The EC2NodeClass of one NodePool, named after it. `role` is the node role's name; `subnet_ids` are the private
    subnets and `security_group_ids` EKS's cluster security group. Each is a string, or the program's Output of one.

    The AMI alias is `latest`. Karpenter's docs warn against that in production: "a new AMI release will cause
    Karpenter to drift all out-of-date nodes" (concepts/nodeclasses.md, amiSelectorTerms, v1.14.1 and v1.15). A pinned
    version is an AMI release tag that must exist for the cluster's Kubernetes minor and for the NVIDIA variant, and
    the stack has no key to name it. A version hard-coded here would have to follow every Kubernetes upgrade.
    Karpenter picks the NVIDIA variant of either alias for GPU instance types (pkg/providers/amifamily/al2023.go and
    bottlerocket.go, v1.14.1).
    """
    family = "bottlerocket" if pool.bottlerocket else "al2023"
    volumes = ([_volume("/dev/xvda", BOTTLEROCKET_ROOT_VOLUME), _volume("/dev/xvdb", f"{pool.disk_size}Gi")]
               if pool.bottlerocket else [_volume("/dev/xvda", f"{pool.disk_size}Gi")])
    spec: dict[str, Any] = {
        "role": role,
        "amiSelectorTerms": [{"alias": f"{family}@latest"}],
        "subnetSelectorTerms": [{"id": subnet} for subnet in subnet_ids],
        "securityGroupSelectorTerms": [{"id": group} for group in security_group_ids],
        "blockDeviceMappings": volumes,
        # The CRD's defaults, written out: IMDSv2 only, and no hop beyond the node, so pods cannot read the node
        # role's credentials (pkg/apis/crds/karpenter.k8s.aws_ec2nodeclasses.yaml, metadataOptions, v1.14.1).
        "metadataOptions": {"httpEndpoint": "enabled", "httpProtocolIPv6": "disabled", "httpPutResponseHopLimit": 1,
                            "httpTokens": "required"},
    }
    metadata: dict[str, Any] = {"name": pool.name}
    if pool.allocation_mode is AllocationMode.dra:
        metadata["annotations"] = {karpenter.CONSUMABLE_CAPACITY_ANNOTATION: CONSUMABLE_CAPACITY}
        if pool.bottlerocket:
            # Karpenter keeps the [settings.*] tables of Bottlerocket user data other than kubernetes and
            # bootstrap-commands, which it sets itself (pkg/providers/amifamily/bootstrap/bottlerocketsettings.go
            # UnmarshalTOML and MarshalTOML, v1.14.1).
            spec["userData"] = BOTTLEROCKET_DEVICE_PLUGIN_OFF
    return {"apiVersion": karpenter.NODE_CLASS_API, "kind": NODE_CLASS_KIND, "metadata": metadata, "spec": spec}


def node_pool(pool: KarpenterNodePool) -> dict[str, Any]:
    """The NodePool: the pool's instance types, capacity types and architecture on its own EC2NodeClass; at most
    max_nodes nodes; its consolidation; its nodes labelled and tainted as a node group's."""
    return launched_node_pool(pool, {"group": karpenter.NODE_CLASS_API.split("/")[0], "kind": NODE_CLASS_KIND,
                                     "name": pool.name}, [])


def launched_node_pool(pool: KarpenterNodePool | AutoModeNodePool, node_class: dict[str, str],
                       requirements: list[dict[str, Any]]) -> dict[str, Any]:
    """A karpenter.sh/v1 NodePool of `pool` on `node_class`, with `requirements` beside its instance types, capacity
    types and architecture: Karpenter's and EKS Auto Mode's NodePools alike."""
    taints = [taint_object(taint) for taint in node_taints(pool)]
    arch = well_known_labels(pool.instance_types[0])["kubernetes.io/arch"]  # one architecture per pool (config)
    return {
        "apiVersion": karpenter.NODE_POOL_API,
        "kind": NODE_POOL_KIND,
        "metadata": {"name": pool.name},
        "spec": {
            "template": {
                "metadata": {"labels": node_labels(pool)},
                "spec": {
                    "nodeClassRef": node_class,
                    "requirements": [
                        {"key": "node.kubernetes.io/instance-type", "operator": "In",
                         "values": list(pool.instance_types)},
                        {"key": "karpenter.sh/capacity-type", "operator": "In", "values": list(pool.capacity_types)},
                        {"key": "kubernetes.io/arch", "operator": "In", "values": [arch]},
                        *requirements,
                    ],
                    "taints": taints,
                },
            },
            "limits": {"nodes": pool.max_nodes},
            "disruption": {"consolidationPolicy": pool.consolidation, "consolidateAfter": pool.consolidate_after},
        },
    }

"""pulumi-eks's ManagedNodeGroup component as the engine sees it: no inputs, the outputs pulumi-eks registers, and
its one `aws:eks/nodeGroup:NodeGroup` child (pulumi/pulumi-eks@7bf0c1b1 nodejs/eks/nodes/nodegroup.ts)."""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from gpu_dra.core.data import mapping
from gpu_dra.core.facts.pulumi_types import NODE_GROUP
from gpu_dra.core.policy.engine.eks_cluster import cluster_subnets
from gpu_dra.core.policy.engine.model import EngineModel, contains, digest, uuid
from gpu_dra.core.policy.engine.urns import child_urn
from gpu_dra.core.policy.engine.wire import ENGINE_UNKNOWN, EngineResource, Registered

# Arguments that make pulumi-eks build its own launch template (nodegroup.ts:2128-2138, 2180-2185), and the
# custom-user-data ones among them that drop amiType and version (2068-2072).
_CUSTOM_USER_DATA = ("kubeletExtraArgs", "bootstrapExtraArgs", "bottlerocketSettings", "nodeadmExtraOptions")
_CUSTOM_LAUNCH_TEMPLATE = (*_CUSTOM_USER_DATA, "enableIMDSv2", "userData", "amiId", "enableEfaSupport")
# The args the aws NodeGroup constructor keeps from pulumi-eks's spread of the component's args, each only when
# given. A Capacity Block group names no instanceTypes (its launch template carries the type), so its NodeGroup
# has none in inputs or in state: EKS reports instanceTypes null for a group deployed with a launch template
# (https://docs.aws.amazon.com/eks/latest/APIReference/API_Nodegroup.html, instanceTypes). That the API still
# reports the types a node group named itself, as the model keeps them for the other groups, is not verified.
_NODE_GROUP_ARGS = ("amiType", "capacityType", "diskSize", "forceUpdateVersion", "instanceTypes", "labels",
                    "nodeGroupName", "nodeGroupNamePrefix", "nodeRepairConfig", "releaseVersion", "remoteAccess",
                    "taints", "updateConfig", "version", "tags")


def _node_group(model: EngineModel, r: Registered) -> tuple[dict[str, Any], dict[str, Any], str | None]:
    """The NodeGroup's inputs after Check, its outputs, and its ID."""
    inputs = model.rewrite(r.inputs)
    cluster = model.cluster_of(r)
    cluster_name = inputs.get("clusterName") or (model.cluster_name(cluster) if cluster else "")
    region = model.region(r)
    args = {k: copy.deepcopy(inputs[k]) for k in _NODE_GROUP_ARGS if inputs.get(k) is not None}
    # nodegroup.ts:1886-1891: the cluster's version only when neither a version nor a launch template is given.
    if "version" not in args and not inputs.get("launchTemplate") and cluster:
        cluster_version = cluster.inputs.get("version")
        if cluster_version is not None:
            args["version"] = cluster_version
    custom_template = any(inputs.get(k) is not None for k in _CUSTOM_LAUNCH_TEMPLATE)
    if custom_template:
        args.pop("diskSize", None)  # nodegroup.ts:2060, it moves into pulumi-eks's launch template
    if any(inputs.get(k) is not None for k in (*_CUSTOM_USER_DATA, "userData", "amiId")):
        for key in ("version", "releaseVersion", "amiType"):
            args.pop(key, None)
    # nodegroup.ts:1915-1920: nodeRoleArn as given, else the nodeRole's ARN (the mock run hands the role over as
    # its ID).
    role_arn: Any = inputs.get("nodeRoleArn")
    if role_arn is None and r.inputs.get("nodeRole") is not None:
        role = model.by_id.get(str(r.inputs["nodeRole"]))
        fallback = model.arn("iam", "", f"role/{r.inputs['nodeRole']}")
        role_arn = model.known(role.outputs.get("arn", fallback) if role else fallback)
    scaling = mapping(inputs.get("scalingConfig"))
    template: Any = inputs.get("launchTemplate")
    if custom_template:  # pulumi-eks's own LaunchTemplate, not modelled beyond its reference
        template = {"id": model.known(f"lt-{digest(r.urn)[:17]}"), "version": model.known("1")}
    elif isinstance(template, Mapping) and model.first and contains(r.inputs.get("launchTemplate"), model.computed):
        # the new template's id and latestVersion
        template = {**template, "id": ENGINE_UNKNOWN, "version": ENGINE_UNKNOWN}
    args.update(
        clusterName=cluster_name,  # nodegroup.ts:2097
        nodeRoleArn=role_arn,
        # nodegroup.ts:2098-2108: always present, pulumi-eks's defaults 2/1/2.
        scalingConfig={"desiredSize": scaling.get("desiredSize", 2), "minSize": scaling.get("minSize", 1),
                       "maxSize": scaling.get("maxSize", 2)},
        # nodegroup.ts:1957-1972 (the component's subnetIds, else the cluster's); an Output over the list, so
        # wholly unknown when any subnet is new.
        subnetIds=model.unknown_if_new(list(r.inputs["subnetIds"])) if r.inputs.get("subnetIds") is not None
        else model.unknown_if_new(cluster_subnets(cluster.inputs) if cluster else []),
    )
    if template is not None:
        args["launchTemplate"] = template
    if region:
        args["region"] = region
    args["tagsAll"] = model.tags_all(args.get("tags"))
    args = {k: args[k] for k in sorted(args)}

    h = digest(model.urns.of(r.urn))
    # A name from the prefix, as terraform's id.PrefixedUniqueId makes it: a 26-character timestamp and counter
    # (hashicorp/terraform-plugin-sdk@7a74af25 helper/id/id.go:27, 37-47); invented from the URN here.
    prefix = args.get("nodeGroupNamePrefix")
    node_group_name = args.get("nodeGroupName") or (f"{prefix}202601010000000000{h[:8]}" if prefix
                                                    else f"{r.name}-{h[:7]}")
    # The ID of aws_eks_node_group is "<cluster>:<node group>" (hashicorp/terraform-provider-aws@152868a8
    # internal/service/eks/id.go:68-75 NodeGroupCreateResourceID).
    node_group_id = f"{cluster_name}:{node_group_name}"
    outputs = copy.deepcopy(args)
    outputs.update(
        arn=model.known(model.arn("eks", region, f"nodegroup/{cluster_name}/{node_group_name}/{uuid(r.urn)}")),
        id=model.known(node_group_id),
        nodeGroupName=model.known(node_group_name),
        status=model.known("ACTIVE"),
        resources=model.known([{"autoscalingGroups": [{"name": f"eks-{node_group_name}-{uuid(r.urn)}"}],
                                "remoteAccessSecurityGroupId": ""}]),
    )
    if isinstance(template, Mapping):
        outputs["launchTemplate"] = {**template, "name": _launch_template_name(model, template)}
    return args, outputs, None if model.first else node_group_id


def _launch_template_name(model: EngineModel, template: Mapping[str, Any]) -> Any:
    if model.first:
        return ENGINE_UNKNOWN
    source = model.by_id.get(str(template.get("id")))
    return source.outputs.get("name", source.name) if source else template.get("name", "")


def node_group_outputs(model: EngineModel, r: Registered) -> dict[str, Any]:
    """ManagedNodeGroup's registered outputs (pulumi/pulumi-eks@7bf0c1b1 nodejs/eks/nodes/nodegroup.ts:1856-1859):
    the NodeGroup as its ID, and the placement group's name, "" without EFA."""
    _, _, node_group_id = _node_group(model, r)
    return {"nodeGroup": node_group_id if node_group_id is not None else ENGINE_UNKNOWN, "placementGroupName": ""}


def node_group_child(model: EngineModel, r: Registered) -> EngineResource:
    """The one `aws:eks/nodeGroup:NodeGroup`, named like the component (nodegroup.ts:2092-2120)."""
    args, outputs, _ = _node_group(model, r)
    parent = model.urns.of(r.urn)
    return EngineResource(NODE_GROUP, r.name, child_urn(parent, NODE_GROUP, r.name), parent, r.protect, args, outputs)

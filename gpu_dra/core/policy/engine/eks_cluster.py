"""pulumi-eks's Cluster component as the engine sees it: no inputs, the outputs pulumi-eks registers, and the
children the pack reads (the `aws:eks/cluster:Cluster`, the VPC CNI add-on), read at pulumi/pulumi-eks@7bf0c1b1
nodejs/eks/cluster/cluster.ts (v4.3.0 + 9 commits; the installed pulumi_eks is 4.4.0, for which no tag was available:
its generated SDK has the same outputs)."""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping
from typing import Any

from gpu_dra.core.data import mapping
from gpu_dra.core.facts.pulumi_types import ADDON, EKS_CLUSTER, VPC_CNI_ADDON, default_security_groups
from gpu_dra.core.policy.engine.model import EngineModel, digest, uuid
from gpu_dra.core.policy.engine.urns import child_urn
from gpu_dra.core.policy.engine.wire import EngineResource, Registered


def _cluster_facts(model: EngineModel, r: Registered) -> dict[str, Any]:
    """Values of the eks Cluster that its children and outputs share, invented deterministically from names."""
    name = model.cluster_name(r)
    region = model.region(r)
    h = digest(model.urns.of(r.urn))
    return {
        "name": name, "region": region,
        "endpoint": f"https://{h[:32].upper()}.gr7.{region or 'us-east-1'}.eks.amazonaws.com",
        "oidc": f"https://oidc.eks.{region or 'us-east-1'}.amazonaws.com/id/{h[32:64].upper()}",
        "clusterSg": f"sg-{h[:17]}", "nodeSg": f"sg-{h[17:34]}", "eksSg": f"sg-{h[34:51]}",
        "ingressRuleId": f"sgr-{h[8:25]}", "ingressRule": f"sgrule-{int(h[:8], 16)}",
        "roleName": f"{r.name}-eksRole-role-{h[51:58]}",
    }


def cluster_subnets(inputs: Mapping[str, Any]) -> list[Any]:
    """`subnetIds`, else public followed by private (pulumi/pulumi-eks@7bf0c1b1 nodejs/eks/cluster/cluster.ts:
    503-511). Without any, pulumi-eks looks up the default VPC's subnets (488-498): not modelled, []."""
    if inputs.get("subnetIds") is not None:
        return list(inputs["subnetIds"])
    return [*(inputs.get("publicSubnetIds") or []), *(inputs.get("privateSubnetIds") or [])]


def cluster_children(model: EngineModel, r: Registered) -> list[EngineResource]:
    """The children pulumi-eks's Cluster registers that the pack reads: the `aws:eks/cluster:Cluster`, and the
    VPC CNI add-on. Not modelled: the ServiceRole and its role and attachment, the cluster and node security
    groups and their rules, the `<name>-eks-k8s` Kubernetes provider, access entries and their policy
    associations (cluster.ts:529-583, 914-921, 1028-1058)."""
    engine_urn = model.urns.of(r.urn)
    children = [_aws_eks_cluster(model, r, engine_urn)]
    if vpc_cni_enabled(r):
        children += _vpc_cni(model, r, engine_urn)
    return children


def vpc_cni_enabled(r: Registered) -> bool:
    """cluster.ts:1091-1093: the add-on is created unless useDefaultVpcCni is set, defaulting to "not auto mode"
    (the program sets it: its own `aws.eks.Addon` is the one vpc-cni)."""
    if r.inputs.get("useDefaultVpcCni") is not None:
        return not r.inputs["useDefaultVpcCni"]
    return not mapping(r.inputs.get("autoMode")).get("enabled")


def _aws_eks_cluster(model: EngineModel, r: Registered, parent: str) -> EngineResource:
    """pulumi-eks's `aws.eks.Cluster("<name>-eksCluster", ...)` (cluster.ts:687-761) after pulumi-aws's Check."""
    inputs, facts = model.rewrite(r.inputs), _cluster_facts(model, r)
    auto_mode = bool(mapping(inputs.get("autoMode")).get("enabled"))
    vpc: dict[str, Any] = {}
    # cluster.ts:551-570: pulumi-eks's own cluster security group unless one is given or defaults are skipped.
    if inputs.get("clusterSecurityGroup"):
        vpc["securityGroupIds"] = [inputs["clusterSecurityGroup"]]
    elif default_security_groups(inputs):
        vpc["securityGroupIds"] = [model.known(facts["clusterSg"])]
    vpc["subnetIds"] = model.unknown_if_new(cluster_subnets(r.inputs))
    for key in ("endpointPrivateAccess", "endpointPublicAccess", "publicAccessCidrs"):  # cluster.ts:701-722
        if inputs.get(key) is not None:
            vpc[key] = inputs[key]
    # cluster.ts:724-731, the component's resource name, not the cluster name.
    tags = {"Name": f"{r.name}-eksCluster", **mapping(inputs.get("clusterTags")), **mapping(inputs.get("tags"))}
    args: dict[str, Any] = {
        "name": facts["name"],
        "roleArn": model.known(model.arn("iam", "", f"role/{facts['roleName']}")),
        # cluster.ts:698-700
        "bootstrapSelfManagedAddons": False if auto_mode else inputs.get("bootstrapSelfManagedAddons", True),
        "vpcConfig": vpc,
        "tags": tags,
    }
    for key in ("version", "enabledClusterLogTypes", "upgradePolicy", "deletionProtection"):
        if inputs.get(key) is not None:
            args[key] = inputs[key]
    key_arn = r.inputs.get("encryptionConfigKeyArn")
    if key_arn:
        # cluster.ts:586-606 (the branch at 593): an apply over the key ARN, so wholly unknown while the key is new.
        args["encryptionConfig"] = model.unknown_if_new(
            {"provider": {"keyArn": key_arn}, "resources": ["secrets"]})
    if inputs.get("authenticationMode"):  # cluster.ts:733-741
        args["accessConfig"] = {"authenticationMode": inputs["authenticationMode"],
                                "bootstrapClusterCreatorAdminPermissions": True}
    if facts["region"]:
        args["region"] = facts["region"]
    args["tagsAll"] = model.tags_all(tags)

    outputs = copy.deepcopy(args)
    region = facts["region"]
    outputs.update(
        # The ID of aws_eks_cluster is its name (hashicorp/terraform-provider-aws@e33a89d0 internal/service/eks/
        # cluster.go resourceClusterCreate, d.SetId(cluster name)); the rest is invented in the API's shapes.
        arn=model.known(model.arn("eks", region, f"cluster/{facts['name']}")),
        id=model.known(facts["name"]),
        endpoint=model.known(facts["endpoint"]),
        status=model.known("ACTIVE"),
        platformVersion=model.known("eks.5"),
        certificateAuthority=model.known({"data": "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCg=="}),
        identities=model.known([{"oidcs": [{"issuer": facts["oidc"]}]}]),
    )
    out_vpc = outputs["vpcConfig"]
    out_vpc["clusterSecurityGroupId"] = model.known(facts["eksSg"])
    out_vpc["vpcId"] = model.known(inputs.get("vpcId", ""))
    if "publicAccessCidrs" not in out_vpc:
        # AWS's default: "The default value is 0.0.0.0/0" (https://docs.aws.amazon.com/eks/latest/APIReference/
        # API_VpcConfigRequest.html, publicAccessCidrs; the excerpt read was cut just before the value). That the
        # API reports it with public access disabled too is not verified.
        out_vpc["publicAccessCidrs"] = model.known(["0.0.0.0/0"])
    name = f"{r.name}-eksCluster"
    # protect and the provider are inherited from the component (pulumi/pulumi@1b5949891b pkg/resource/deploy/
    # source_eval.go:2004-2010 inheritFromParent).
    return EngineResource(EKS_CLUSTER, name, child_urn(parent, EKS_CLUSTER, name), parent, r.protect, args, outputs)


def _vpc_cni(model: EngineModel, r: Registered, parent: str) -> list[EngineResource]:
    """`VpcCniAddon("<name>-vpc-cni")` and its `aws.eks.Addon` of the same name (pulumi/pulumi-eks@7bf0c1b1
    nodejs/eks/addons/cni-addon.ts:250-321; created at cluster.ts:1094-1112)."""
    inputs, facts = model.rewrite(r.inputs), _cluster_facts(model, r)
    options = mapping(inputs.get("vpcCniOptions"))
    name = f"{r.name}-vpc-cni"
    component_urn = child_urn(parent, VPC_CNI_ADDON, name)
    args: dict[str, Any] = {
        "addonName": "vpc-cni",
        # The newest vpc-cni for the cluster's version (aws.eks.getAddonVersion, mostRecent: cni-addon.ts:273-281):
        # known in a preview (the version is a plain input), but its value is invented here.
        "addonVersion": options.get("addonVersion", "v1.20.0-eksbuild.1"),
        "clusterName": facts["name"],
        "preserve": True,
        "resolveConflictsOnCreate": options.get("resolveConflictsOnCreate", "OVERWRITE"),
        "resolveConflictsOnUpdate": options.get("resolveConflictsOnUpdate", "OVERWRITE"),
        # configurationValues (a JSON string of the CNI's environment, cni-addon.ts:290-295) is not modelled.
    }
    if options.get("serviceAccountRoleArn"):
        args["serviceAccountRoleArn"] = options["serviceAccountRoleArn"]
    if inputs.get("tags"):
        args["tags"] = dict(inputs["tags"])
    if facts["region"]:
        args["region"] = facts["region"]
    args["tagsAll"] = model.tags_all(args.get("tags"))
    # The ID of aws_eks_addon is "<cluster>:<addon>" (hashicorp/terraform-provider-aws@152868a8 internal/service/
    # eks/id.go:11-18 AddonCreateResourceID).
    addon_id = f"{facts['name']}:vpc-cni"
    addon_outputs = {**copy.deepcopy(args), "id": model.known(addon_id), "arn": model.known(model.arn(
        "eks", facts["region"], f"addon/{facts['name']}/vpc-cni/{uuid(name)}"))}
    return [
        # A Node.js component inside the provider sends no props (pulumi/pulumi@v3.173.0 sdk/nodejs/resource.ts:
        # 1219-1231, the version pulumi-eks bundles: nodejs/eks/yarn.lock:1794-1796); registerOutputs({addon})
        # at cni-addon.ts:320 stores the custom resource's reference, which reaches a policy as its ID.
        EngineResource(VPC_CNI_ADDON, name, component_urn, parent, r.protect, {},
                       {"addon": model.known(addon_id)}),
        EngineResource(ADDON, name, child_urn(component_urn, ADDON, name), component_urn, r.protect, args,
                       addon_outputs),
    ]


def cluster_outputs(model: EngineModel, r: Registered) -> dict[str, Any]:
    """The 19 outputs pulumi-eks registers (cluster.ts:2301-2321, values from 2183-2212), minus defaultNodeGroup,
    which is undefined (so omitted) with skipDefaultNodeGroup; a default node group is not modelled. Without its own
    security groups (skipDefaultSecurityGroups) their outputs are undefined too, and both security group IDs are
    EKS's cluster security group (2196-2198). Resource outputs arrive as the resource's ID (custom) or URN
    (component). In a first preview the values computed by creates are unknown; `core` is one object lifted over
    them, so wholly unknown."""
    inputs, facts = model.rewrite(r.inputs), _cluster_facts(model, r)
    kubeconfig = _kubeconfig(facts)
    oidc_provider_arn = ""
    if inputs.get("createOidcProvider"):
        oidc_provider_arn = model.known(model.arn("iam", "", f"oidc-provider/{facts['oidc'][8:]}"))
    own_groups = default_security_groups(inputs)
    core: dict[str, Any] = {  # cluster.ts:1266-1290; undefined members omitted
        "vpcId": inputs.get("vpcId", ""),
        "subnetIds": cluster_subnets(inputs),
        "cluster": facts["name"],
        "endpoint": facts["endpoint"],
        "nodeGroupOptions": {k: inputs[k] for k in ("nodeAssociatePublicIpAddress", "version") if k in inputs},
        "kubeconfig": kubeconfig,
        "provider": uuid(f"provider:{r.urn}"),
        "instanceRoles": [],
        "storageClasses": {},
        "clusterIamRole": facts["roleName"],
        "autoModeNodeRoleName": "",
    }
    if own_groups:  # cluster.ts:2146-2147 adds the node group's to the options
        core["clusterSecurityGroup"] = facts["clusterSg"]
        core["nodeGroupOptions"].update(nodeSecurityGroup=facts["nodeSg"], clusterIngressRule=facts["ingressRule"])
    for key in ("privateSubnetIds", "publicSubnetIds", "tags", "nodeSecurityGroupTags"):
        if inputs.get(key) is not None:
            core[key] = inputs[key]
    if vpc_cni_enabled(r):  # the VpcCniAddon component, by URN
        core["vpcCni"] = child_urn(model.urns.of(r.urn), VPC_CNI_ADDON, f"{r.name}-vpc-cni")
    if inputs.get("encryptionConfigKeyArn"):
        core["encryptionConfig"] = {"provider": {"keyArn": inputs["encryptionConfigKeyArn"]},
                                    "resources": ["secrets"]}
    if inputs.get("accessEntries"):
        core["accessEntries"] = list(mapping(inputs["accessEntries"]).values())
    groups: dict[str, Any] = {  # cluster.ts:2194-2199
        "clusterIngressRuleId": model.known(facts["ingressRuleId"]) if own_groups else "",
        "clusterSecurityGroupId": model.known(facts["clusterSg" if own_groups else "eksSg"]),
        "nodeSecurityGroupId": model.known(facts["nodeSg" if own_groups else "eksSg"]),
    }
    if own_groups:
        groups.update(clusterSecurityGroup=model.known(facts["clusterSg"]),
                      eksClusterIngressRule=model.known(facts["ingressRule"]),
                      nodeSecurityGroup=model.known(facts["nodeSg"]))
    return {
        **groups,
        "autoModeNodeRoleName": "",
        "core": model.known(core),
        "defaultNodeGroupAsgName": "",
        "eksCluster": model.known(facts["name"]),  # the aws:eks/cluster:Cluster's ID: its name
        "fargateProfileId": "",
        "fargateProfileStatus": "",
        "instanceRoles": [],  # no instance role is created with skipDefaultNodeGroup and none given
        "kubeconfig": model.known(kubeconfig),
        "kubeconfigJson": model.known(json.dumps(kubeconfig)),
        "oidcIssuer": model.known(facts["oidc"].removeprefix("https://")),
        "oidcProviderArn": oidc_provider_arn,
        "oidcProviderUrl": model.known(facts["oidc"]),
    }


def _kubeconfig(facts: Mapping[str, Any]) -> dict[str, Any]:
    """pulumi-eks's kubeconfig for `aws eks get-token` (cluster.ts:203-280 generateKubeconfig)."""
    return {
        "apiVersion": "v1",
        "clusters": [{"cluster": {"server": facts["endpoint"],
                                  "certificate-authority-data": "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCg=="},
                      "name": "kubernetes"}],
        "contexts": [{"context": {"cluster": "kubernetes", "user": "aws"}, "name": "aws"}],
        "current-context": "aws",
        "kind": "Config",
        "users": [{"name": "aws", "user": {"exec": {
            "apiVersion": "client.authentication.k8s.io/v1beta1", "command": "aws",
            "args": ["--region", facts["region"] or "", "eks", "get-token", "--cluster-name", facts["name"],
                     "--output", "json"],
            "env": [{"name": "KUBERNETES_EXEC_INFO",
                     "value": '{"apiVersion": "client.authentication.k8s.io/v1beta1"}'}]}}}],
    }

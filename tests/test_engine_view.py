"""The engine's view of the real mock runs (gpu_dra.core.policy.engine): remote components as their providers
register them, their children, and the first preview of a new stack."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from functools import cache
from typing import Any

import pytest
import yaml

from gpu_dra.cli import offline
from gpu_dra.core.config.loader import load_stack, stack_values
from gpu_dra.core.data import helm_merge
from gpu_dra.core.facts import pulumi_types
from gpu_dra.core.facts.nvidia import CHART_CLASS_SELECTORS, DRA_CHART_DEFAULTS
from gpu_dra.core.policy.engine import ENGINE_UNKNOWN, EngineResource, Registered, engine_view
from gpu_dra.core.render import charts

from .conftest import ROOT, STACKS

CHART_VALUES = ROOT / "tests" / "data" / "chart-values"
# pulumi-eks's registered outputs (cluster.ts:2301-2321) that are defined for the program's options: not
# defaultNodeGroup (skipDefaultNodeGroup), nor clusterSecurityGroup, eksClusterIngressRule and nodeSecurityGroup
# (skipDefaultSecurityGroups).
EKS_OUTPUT_KEYS = {
    "autoModeNodeRoleName", "clusterIngressRuleId", "clusterSecurityGroupId", "core", "defaultNodeGroupAsgName",
    "eksCluster", "fargateProfileId", "fargateProfileStatus", "instanceRoles", "kubeconfig", "kubeconfigJson",
    "nodeSecurityGroupId", "oidcIssuer", "oidcProviderArn", "oidcProviderUrl"}


@cache
def registered(stack: str) -> tuple[Registered, ...]:
    """The stack's mock run as the shell hands it over: custom resources with the mock's outputs."""
    values, _ = stack_values(ROOT, stack)
    run = offline.run_program(ROOT, stack, values)
    return tuple(Registered(r.type, r.name, r.urn, r.parent, r.protect, r.inputs, r.outputs if r.custom else {})
                 for r in run.resources)


@cache
def view(stack: str, first_preview: bool = False) -> tuple[EngineResource, ...]:
    return tuple(engine_view(registered(stack), first_preview))


def one(resources: Any, type_: str, name: str | None = None) -> Any:
    found = [r for r in resources if r.type == type_ and (name is None or r.name == name)]
    assert len(found) == 1, f"{type_} {name}: {[r.name for r in found]}"
    return found[0]


def children(resources: Any, parent: EngineResource) -> list[EngineResource]:
    return [r for r in resources if r.parent == parent.urn]


def with_inputs(stack: str, type_: str, change: Callable[[dict[str, Any]], None],
                name: str | None = None) -> list[Registered]:
    """The stack's registrations with one resource's inputs changed."""
    out = []
    for r in registered(stack):
        if r.type == type_ and (name is None or r.name == name):
            inputs = yaml.safe_load(yaml.safe_dump(dict(r.inputs)))  # a deep copy of plain data
            change(inputs)
            r = dataclasses.replace(r, inputs=inputs)
        out.append(r)
    return out


def pod_spec(daemon_set: EngineResource) -> Mapping[str, Any]:
    return daemon_set.inputs["spec"]["template"]["spec"]  # type: ignore[no-any-return]


def vendored(chart: str, version: str) -> dict[str, Any]:
    name = {"dra-driver-nvidia-gpu": f"dra-driver-nvidia-gpu-{version}.values.yaml",
            "nvidia-dra-driver-gpu": f"nvidia-dra-driver-gpu-{version}.values.yaml"}[chart]
    return yaml.safe_load((CHART_VALUES / name).read_text())  # type: ignore[no-any-return]


# ----------------------------------------------------------------------------------------------- eks:index:Cluster
def test_prod_cluster_has_one_eks_cluster_child_with_the_key_and_endpoint_access() -> None:
    resources = view("prod")
    component = one(resources, "eks:index:Cluster")
    child = one(children(resources, component), "aws:eks/cluster:Cluster")
    assert child.name == "gpu-prod-eksCluster"
    key = one(registered("prod"), "aws:kms/key:Key")
    component_inputs = one(registered("prod"), "eks:index:Cluster").inputs
    assert component_inputs["encryptionConfigKeyArn"] == key.outputs["arn"]
    assert child.inputs["encryptionConfig"] == {"provider": {"keyArn": key.outputs["arn"]}, "resources": ["secrets"]}
    endpoint = load_stack(ROOT, "prod").config.cluster.endpoint
    vpc = child.inputs["vpcConfig"]
    assert (vpc["endpointPrivateAccess"], vpc["endpointPublicAccess"]) == (endpoint.private_access,
                                                                           endpoint.public_access)
    assert "publicAccessCidrs" not in vpc  # passed only when given
    assert child.outputs["vpcConfig"]["publicAccessCidrs"] == ["0.0.0.0/0"]  # AWS's default
    assert child.inputs["name"] == child.outputs["id"] == "gpu-prod"
    assert child.inputs["tags"]["Name"] == "gpu-prod-eksCluster"
    assert child.inputs["region"] == "us-east-1" and child.inputs["tagsAll"] == child.inputs["tags"]


def test_public_access_cidrs_are_passed_when_given() -> None:
    cidrs = ["198.18.0.0/24"]  # not a documentation range, which the loader refuses
    registrations = with_inputs("dev", "eks:index:Cluster",
                                lambda inputs: inputs.update(endpointPublicAccess=True, publicAccessCidrs=cidrs))
    child = one(engine_view(registrations), "aws:eks/cluster:Cluster")
    assert child.inputs["vpcConfig"]["publicAccessCidrs"] == cidrs
    assert child.outputs["vpcConfig"]["publicAccessCidrs"] == cidrs


@pytest.mark.parametrize("stack", STACKS)
def test_remote_components_have_no_inputs_and_their_registered_outputs(stack: str) -> None:
    resources = view(stack)
    remote = [r for r in resources if r.type in pulumi_types.REMOTE_COMPONENTS]
    assert {r.type for r in remote} >= {"eks:index:Cluster", "eks:index:ManagedNodeGroup",
                                        "kubernetes:helm.sh/v4:Chart"}
    assert all(r.inputs == {} for r in remote)
    cluster = one(resources, "eks:index:Cluster")
    assert set(cluster.outputs) == EKS_OUTPUT_KEYS
    assert cluster.outputs["eksCluster"] == one(registered(stack), "eks:index:Cluster").inputs["name"]
    assert cluster.outputs["kubeconfig"]["users"][0]["user"]["exec"]["command"] == "aws"
    for group in (r for r in resources if r.type == "eks:index:ManagedNodeGroup"):
        node_group = one(children(resources, group), "aws:eks/nodeGroup:NodeGroup")
        assert group.outputs == {"nodeGroup": node_group.outputs["id"], "placementGroupName": ""}
    assert all(r.outputs == {} for r in resources if r.type == "kubernetes:helm.sh/v4:Chart")


@pytest.mark.parametrize("stack", STACKS)
def test_the_engine_sees_one_vpc_cni_addon_the_programs(stack: str) -> None:
    """The program sets useDefaultVpcCni, so pulumi-eks registers no VpcCniAddon beside the program's add-on."""
    resources = view(stack)
    assert not [r for r in resources if r.type == pulumi_types.VPC_CNI_ADDON]
    assert "vpcCni" not in one(resources, "eks:index:Cluster").outputs["core"]
    addon = one([r for r in resources if r.type == "aws:eks/addon:Addon" and r.inputs["addonName"] == "vpc-cni"],
                "aws:eks/addon:Addon")
    assert addon.parent == one(resources, "gpu-dra:cluster:EksCluster").urn


def test_vpc_cni_addon_is_registered_unless_use_default_vpc_cni() -> None:
    def default(inputs: dict[str, Any]) -> None:
        del inputs["useDefaultVpcCni"]

    resources = engine_view(with_inputs("prod", "eks:index:Cluster", default))
    cluster = one(resources, "eks:index:Cluster")
    addon_component = one(children(resources, cluster), "eks:index:VpcCniAddon")
    addon = one(children(resources, addon_component), "aws:eks/addon:Addon")
    assert addon.name == addon_component.name == "gpu-prod-vpc-cni"
    assert addon.inputs["addonName"] == "vpc-cni" and addon.inputs["clusterName"] == "gpu-prod"
    assert addon_component.outputs == {"addon": "gpu-prod:vpc-cni"} == {"addon": addon.outputs["id"]}
    assert cluster.outputs["core"]["vpcCni"] == addon_component.urn


# ---------------------------------------------------------------------------------------- eks:index:ManagedNodeGroup
def test_node_group_child_inputs_follow_pulumi_eks() -> None:
    resources, regs = view("prod"), registered("prod")
    role_arn = one(regs, "aws:iam/role:Role", "gpu-prod-node").outputs["arn"]
    for group in (r for r in regs if r.type == "eks:index:ManagedNodeGroup"):
        child = one(children(resources, one(resources, group.type, group.name)), "aws:eks/nodeGroup:NodeGroup")
        assert child.name == group.name
        for key in ("labels", "taints", "instanceTypes", "amiType", "subnetIds", "nodeGroupNamePrefix"):
            assert child.inputs.get(key) == group.inputs.get(key), key
        assert child.inputs["scalingConfig"] == group.inputs["scalingConfig"]
        assert child.inputs["clusterName"] == "gpu-prod"
        assert child.inputs["nodeRoleArn"] == role_arn
        assert child.inputs["tagsAll"] == {} and child.inputs["region"] == "us-east-1"
        name = child.outputs["nodeGroupName"]
        assert name.startswith(group.inputs["nodeGroupNamePrefix"])
        assert len(name) - len(group.inputs["nodeGroupNamePrefix"]) == 26
        assert child.outputs["id"] == f"gpu-prod:{name}" and child.outputs["status"] == "ACTIVE"
        assert child.inputs.get("launchTemplate") == group.inputs.get("launchTemplate")
    # A Capacity Block group's type is in its launch template: none on the NodeGroup, in inputs or in state.
    h100 = one(resources, "aws:eks/nodeGroup:NodeGroup", "gpu-prod-h100")
    assert "instanceTypes" not in h100.inputs and "instanceTypes" not in h100.outputs
    assert one(resources, "aws:ec2/launchTemplate:LaunchTemplate", "gpu-prod-h100").outputs["instanceType"] == \
        "p5.48xlarge"
    assert "ignoreScalingChanges" not in h100.inputs  # a resource option on the NodeGroup, not an input
    # No version and no launch template: the cluster's version; the disk size stays.
    system = one(resources, "aws:eks/nodeGroup:NodeGroup", "gpu-prod-system")
    assert system.inputs["version"] == "1.35" and system.inputs["diskSize"] == 100
    assert "launchTemplate" not in system.inputs


def test_node_group_scaling_defaults_to_pulumi_eks_values() -> None:
    def no_scaling(inputs: dict[str, Any]) -> None:
        del inputs["scalingConfig"]

    changed = engine_view(with_inputs("prod", "eks:index:ManagedNodeGroup", no_scaling, "gpu-prod-system"))
    child = one(changed, "aws:eks/nodeGroup:NodeGroup", "gpu-prod-system")
    assert child.inputs["scalingConfig"] == {"desiredSize": 2, "minSize": 1, "maxSize": 2}


def test_children_inherit_protect_from_their_component() -> None:
    resources = view("prod")
    by_urn = {r.urn: r for r in resources}
    inherited = [(r.protect, by_urn[r.parent].protect) for r in resources
                 if r.parent in by_urn and by_urn[r.parent].type in pulumi_types.REMOTE_COMPONENTS]
    assert all(child == parent for child, parent in inherited)
    assert {child for child, _ in inherited} == {True, False}  # protected GPU groups, an unprotected system group


# ------------------------------------------------------------------------------------------------ helm.sh/v4:Chart
@pytest.mark.parametrize("stack", STACKS)
def test_kubelet_plugin_carries_the_placement_of_the_stack_values(stack: str) -> None:
    resources = view(stack)
    chart = one(resources, "kubernetes:helm.sh/v4:Chart", "nvidia-dra-driver")
    values = one(registered(stack), chart.type, chart.name).inputs["values"]
    plugin = one(children(resources, chart), "kubernetes:apps/v1:DaemonSet")
    assert plugin.name == "nvidia-dra-driver:nvidia-dra-driver/dra-driver-nvidia-gpu-kubelet-plugin"
    assert plugin.inputs["metadata"]["namespace"] == "nvidia-dra-driver"
    spec = pod_spec(plugin)
    assert spec["nodeSelector"] == values["kubeletPlugin"]["nodeSelector"]
    assert spec["tolerations"] == values["kubeletPlugin"]["tolerations"]
    # Not set by the stack: the chart's own, as its values.yaml has it.
    assert spec["affinity"] == vendored("dra-driver-nvidia-gpu", "0.4.1")["kubeletPlugin"]["affinity"]
    assert spec == {**spec, **{k: v for k, v in helm_merge(charts.DRA_PLUGIN_DEFAULTS, values["kubeletPlugin"]).items()
                               if k in ("nodeSelector", "affinity", "tolerations")}}
    # Outputs: the object plus what the API server adds.
    meta = plugin.outputs["metadata"]
    assert {"uid", "resourceVersion", "creationTimestamp"} <= set(meta) and meta["generation"] == 1
    assert plugin.outputs["spec"] == plugin.inputs["spec"]


@pytest.mark.parametrize("stack", STACKS)
def test_dra_chart_installs_its_device_classes(stack: str) -> None:
    resources = view(stack)
    chart = one(resources, "kubernetes:helm.sh/v4:Chart", "nvidia-dra-driver")
    classes = {r.inputs["metadata"]["name"]: r for r in children(resources, chart)
               if r.type == "kubernetes:resource.k8s.io/v1:DeviceClass"}
    # computeDomains is off in every stack: only the GPU classes.
    assert set(classes) == {"gpu.nvidia.com", "mig.nvidia.com", "vfio.gpu.nvidia.com"}
    gpu = classes["gpu.nvidia.com"]
    assert gpu.name == "nvidia-dra-driver:gpu.nvidia.com"  # cluster-scoped: no namespace in the name
    assert [s["cel"]["expression"] for s in gpu.inputs["spec"]["selectors"]] == CHART_CLASS_SELECTORS["gpu.nvidia.com"]
    assert gpu.inputs["spec"]["extendedResourceName"] == "nvidia.com/gpu"
    assert "extendedResourceName" not in classes["mig.nvidia.com"].inputs["spec"]
    assert not [r for r in children(resources, chart) if r.type == "kubernetes:apps/v1:Deployment"]


def test_compute_domains_bring_the_controller_and_their_classes() -> None:
    def enable(inputs: dict[str, Any]) -> None:
        inputs["values"]["resources"]["computeDomains"]["enabled"] = True

    resources = engine_view(with_inputs("prod", "kubernetes:helm.sh/v4:Chart", enable, "nvidia-dra-driver"))
    chart = one(resources, "kubernetes:helm.sh/v4:Chart", "nvidia-dra-driver")
    controller = one(children(resources, chart), "kubernetes:apps/v1:Deployment")
    assert controller.name == "nvidia-dra-driver:nvidia-dra-driver/dra-driver-nvidia-gpu-controller"
    spec = pod_spec(controller)
    assert spec["nodeSelector"] == {"gpu-dra.io/role": "system"}  # from the values
    assert spec["tolerations"] == vendored("dra-driver-nvidia-gpu", "0.4.1")["controller"]["tolerations"]
    names = {r.inputs["metadata"]["name"] for r in children(resources, chart)
             if r.type == "kubernetes:resource.k8s.io/v1:DeviceClass"}
    assert {"compute-domain-daemon.nvidia.com", "compute-domain-default-channel.nvidia.com"} <= names


@pytest.mark.parametrize(("version", "current"), [("25.12.0", True), ("25.8.0", False)])
def test_ngc_chart_line_names_and_versions(version: str, current: bool) -> None:
    def ngc(inputs: dict[str, Any]) -> None:
        inputs["chart"], inputs["version"] = "oci://nvcr.io/nvidia/k8s/nvidia-dra-driver-gpu", version

    resources = engine_view(with_inputs("prod", "kubernetes:helm.sh/v4:Chart", ngc, "nvidia-dra-driver"))
    chart = one(resources, "kubernetes:helm.sh/v4:Chart", "nvidia-dra-driver")
    plugin = one(children(resources, chart), "kubernetes:apps/v1:DaemonSet")
    assert plugin.inputs["metadata"]["name"] == "nvidia-dra-driver-gpu-kubelet-plugin"
    assert pod_spec(plugin)["affinity"] == vendored("nvidia-dra-driver-gpu", "25.12.0")["kubeletPlugin"]["affinity"]
    classes = {r.inputs["metadata"]["name"]: r.inputs for r in children(resources, chart)
               if r.type.endswith(":DeviceClass")}
    assert ("vfio.gpu.nvidia.com" in classes) is current
    assert ("extendedResourceName" in classes["gpu.nvidia.com"]["spec"]) is current


def test_empty_placement_is_left_out_as_the_templates_with_blocks_do() -> None:
    def chart_defaults_only(inputs: dict[str, Any]) -> None:
        inputs["chart"], inputs["version"] = "oci://nvcr.io/nvidia/k8s/nvidia-dra-driver-gpu", "25.12.0"
        del inputs["values"]["kubeletPlugin"]  # 25.12.0's own: empty nodeSelector and tolerations

    resources = engine_view(with_inputs("prod", "kubernetes:helm.sh/v4:Chart", chart_defaults_only,
                                        "nvidia-dra-driver"))
    plugin = one(children(resources, one(resources, "kubernetes:helm.sh/v4:Chart", "nvidia-dra-driver")),
                 "kubernetes:apps/v1:DaemonSet")
    assert set(pod_spec(plugin)) == {"priorityClassName", "serviceAccountName", "affinity"}


def test_device_plugin_daemon_set_carries_its_placement() -> None:
    resources = view("prod")
    chart = one(resources, "kubernetes:helm.sh/v4:Chart", "nvidia-device-plugin")
    values = one(registered("prod"), chart.type, chart.name).inputs["values"]
    plugin = one(children(resources, chart), "kubernetes:apps/v1:DaemonSet",
                 "nvidia-device-plugin:nvidia-dra-driver/nvidia-device-plugin")
    expected = helm_merge(charts.DEVICE_PLUGIN_DEFAULTS, values)
    spec = pod_spec(plugin)
    for key in ("nodeSelector", "affinity", "tolerations"):
        assert spec[key] == expected[key] == values[key], key
    # The MPS control daemon's DaemonSet, rendered with it (NVIDIA/k8s-device-plugin@v0.18.2 templates/
    # daemonset-mps-control-daemon.yml:14-22, 206-219): only on nodes labelled mps.capable, else placed alike.
    mps = pod_spec(one(children(resources, chart), "kubernetes:apps/v1:DaemonSet",
                       "nvidia-device-plugin:nvidia-dra-driver/nvidia-device-plugin-mps-control-daemon"))
    assert mps["nodeSelector"] == {"nvidia.com/mps.capable": "true", **values["nodeSelector"]}
    assert (mps["affinity"], mps["tolerations"]) == (spec["affinity"], spec["tolerations"])


def test_chart_defaults_match_the_charts_values_files() -> None:
    for chart, version in (("dra-driver-nvidia-gpu", "0.4.1"), ("nvidia-dra-driver-gpu", "25.12.0")):
        mine, theirs = DRA_CHART_DEFAULTS[chart], vendored(chart, version)
        for section in ("controller", "kubeletPlugin", "serviceAccount"):
            for key, value in mine[section].items():
                assert theirs[section][key] == value, (chart, section, key)
        for key in ("nameOverride", "fullnameOverride", "namespaceOverride", "resourceApiVersion", "resources"):
            assert theirs[key] == mine[key], (chart, key)


# -------------------------------------------------------------------------------------------------------- URNs
@pytest.mark.parametrize("first_preview", [False, True])
@pytest.mark.parametrize("stack", STACKS)
def test_every_urn_is_the_engines(stack: str, first_preview: bool) -> None:
    resources = view(stack, first_preview)
    by_urn = {r.urn: r for r in resources}
    assert len(by_urn) == len(resources)
    for r in resources:
        head, project, chain, name = r.urn.split("::")
        assert (head, project, name) == (f"urn:pulumi:{stack}", "gpu-dra", r.name)
        assert chain.split("$")[-1] == r.type and not chain.startswith("pulumi:pulumi:Stack")
        if r.parent in by_urn:
            assert chain == f"{by_urn[r.parent].urn.split('::')[2]}${r.type}", r.urn
        else:
            assert r.parent == f"urn:pulumi:{stack}::gpu-dra::pulumi:pulumi:Stack::gpu-dra-{stack}"
            assert chain == r.type
    modelled = [r for r in resources if r.parent in by_urn and by_urn[r.parent].type in
                pulumi_types.REMOTE_COMPONENTS]
    assert {r.type for r in modelled} >= {"aws:eks/cluster:Cluster", "aws:eks/nodeGroup:NodeGroup"}


# ------------------------------------------------------------------------------------------------ first preview
def test_first_preview_leaves_computed_values_unknown_and_the_rest_known() -> None:
    resources, regs = view("prod", True), registered("prod")
    template = one(resources, "aws:ec2/launchTemplate:LaunchTemplate", "gpu-prod-l40s")
    assert template.outputs["latestVersion"] == template.outputs["defaultVersion"] == ENGINE_UNKNOWN
    assert template.outputs["id"] == template.outputs["arn"] == ENGINE_UNKNOWN
    assert template.outputs["metadataOptions"]["httpTokens"] == template.inputs["metadataOptions"]["httpTokens"] \
        == "required"
    group = one(regs, "eks:index:ManagedNodeGroup", "gpu-prod-l40s")
    node_group = one(resources, "aws:eks/nodeGroup:NodeGroup", "gpu-prod-l40s")
    assert node_group.inputs["launchTemplate"] == {"id": ENGINE_UNKNOWN, "version": ENGINE_UNKNOWN}
    assert node_group.inputs["nodeRoleArn"] == node_group.outputs["nodeGroupName"] == ENGINE_UNKNOWN
    for key in ("labels", "taints", "scalingConfig", "instanceTypes", "subnetIds"):  # prod's subnets exist
        assert node_group.inputs[key] == group.inputs[key], key
    assert one(resources, "eks:index:ManagedNodeGroup", "gpu-prod-l40s").outputs["nodeGroup"] == ENGINE_UNKNOWN

    cluster = one(resources, "aws:eks/cluster:Cluster")
    assert cluster.inputs["encryptionConfig"] == ENGINE_UNKNOWN  # the whole object, while the key is new
    assert cluster.inputs["roleArn"] == ENGINE_UNKNOWN
    assert "securityGroupIds" not in cluster.inputs["vpcConfig"]  # EKS's own cluster security group alone
    assert cluster.inputs["vpcConfig"]["endpointPublicAccess"] is False
    assert cluster.inputs["vpcConfig"]["subnetIds"] == one(regs, "eks:index:Cluster").inputs["privateSubnetIds"]
    assert cluster.outputs["vpcConfig"]["publicAccessCidrs"] == ENGINE_UNKNOWN
    eks = one(resources, "eks:index:Cluster").outputs
    assert eks["eksCluster"] == eks["core"] == eks["kubeconfig"] == ENGINE_UNKNOWN and eks["fargateProfileId"] == ""
    assert one(resources, "pulumi:providers:kubernetes").inputs["kubeconfig"] == ENGINE_UNKNOWN


def test_first_preview_of_a_new_vpc_leaves_its_subnets_unknown() -> None:
    resources = view("dev", True)
    assert one(resources, "aws:eks/cluster:Cluster").inputs["vpcConfig"]["subnetIds"] == ENGINE_UNKNOWN
    assert one(resources, "aws:eks/nodeGroup:NodeGroup", "gpu-dev-l4").inputs["subnetIds"] == ENGINE_UNKNOWN
    assert one(resources, "aws:ec2/subnet:Subnet", "gpu-dev-private-us-west-2a").inputs["vpcId"] == ENGINE_UNKNOWN
    assert one(view("dev"), "aws:eks/cluster:Cluster").inputs["vpcConfig"]["subnetIds"] != ENGINE_UNKNOWN


@pytest.mark.parametrize("stack", STACKS)
def test_first_preview_of_a_new_cluster_has_no_kubernetes_state(stack: str) -> None:
    resources = view(stack, True)
    objects = [r for r in resources if pulumi_types.is_kubernetes_object(r.type)]
    assert objects and all(r.outputs == {} for r in objects)
    raw = {r.urn: r.inputs for r in registered(stack)}
    # the program's inputs, no Check; an EC2NodeClass names the subnets and EKS's security group, ids a create makes
    assert all(r.inputs == raw[r.urn] for r in objects if r.type != pulumi_types.KARPENTER_NODE_CLASS)
    for node_class in (r for r in objects if r.type == pulumi_types.KARPENTER_NODE_CLASS):
        spec = node_class.inputs["spec"]
        assert {term["id"] for term in spec["subnetSelectorTerms"] + spec["securityGroupSelectorTerms"]} == {
            ENGINE_UNKNOWN}
    for chart in (r for r in resources if r.type == "kubernetes:helm.sh/v4:Chart"):
        assert children(resources, chart) == [] and chart.outputs == {}
    assert all(r.outputs for r in view(stack) if pulumi_types.is_kubernetes_object(r.type))


def test_first_preview_against_an_existing_cluster_renders_and_dry_runs() -> None:
    """Without an EKS cluster in the stack the Kubernetes provider is configured: the chart's children exist and a
    create's preview returns the server's dry run (no status, no resourceVersion)."""
    eks = {r.urn for r in registered("prod") if r.type.startswith("eks:")}
    existing = [r for r in registered("prod") if r.urn not in eks and r.parent not in eks]
    resources = engine_view(existing, first_preview=True)
    chart = one(resources, "kubernetes:helm.sh/v4:Chart", "nvidia-dra-driver")
    plugin = one(children(resources, chart), "kubernetes:apps/v1:DaemonSet")
    assert "uid" in plugin.outputs["metadata"] and "resourceVersion" not in plugin.outputs["metadata"]
    quota = one(resources, "kubernetes:core/v1:ResourceQuota", "inference-quota")
    assert quota.outputs["spec"] == quota.inputs["spec"] and "status" not in quota.outputs
    assert "status" in one(view("prod"), "kubernetes:core/v1:ResourceQuota", "inference-quota").outputs

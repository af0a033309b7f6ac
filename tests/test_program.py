"""The whole `__main__.py` under Pulumi mocks, per stack: the inputs users rely on, and stable resource names."""

from __future__ import annotations

import json
from functools import cache
from typing import Any

import pytest

from gpu_dra.cli.offline import ProgramRun, Registration, run_program
from gpu_dra.core.loader import load_stack, stack_values

from .conftest import ROOT, STACKS, Project


@cache
def program(stack: str) -> ProgramRun:
    values, _ = stack_values(ROOT, stack)
    return run_program(ROOT, stack, values)


def one(run: ProgramRun, type_: str, name: str) -> Registration:
    matches = [r for r in run.resources if r.type == type_ and r.name == name]
    assert len(matches) == 1, f"{type_} {name}: {[r.name for r in run.by_type(type_)]}"
    return matches[0]


@pytest.mark.parametrize("stack", STACKS)
def test_cluster_inputs(stack: str) -> None:
    run = program(stack)
    cluster = run.by_type("eks:index:Cluster")[0].inputs
    expected_version = {"dev": "1.34", "staging": "1.36", "prod": "1.35"}[stack]
    assert cluster["version"] == expected_version
    assert cluster["authenticationMode"] == "API"
    assert cluster["skipDefaultNodeGroup"] is True
    assert "scheduler" in cluster["enabledClusterLogTypes"]
    assert cluster["encryptionConfigKeyArn"].startswith("arn:aws:kms:")
    assert cluster["accessEntries"]["platform-admins"]["accessPolicies"]["cluster-admin"]["policyArn"].endswith(
        "AmazonEKSClusterAdminPolicy")
    assert cluster["accessEntries"]["ci-preview"]["accessPolicies"]["view"]["accessScope"] == {"type": "cluster"}
    assert "0.0.0.0/0" not in cluster.get("publicAccessCidrs", [])


def test_prod_endpoint_private_and_resources_protected() -> None:
    run = program("prod")
    cluster = run.by_type("eks:index:Cluster")[0]
    assert cluster.inputs["endpointPublicAccess"] is False
    assert cluster.protect
    assert one(run, "aws:kms/key:Key", "gpu-prod-secrets").protect
    gpu_groups = [r for r in run.by_type("eks:index:ManagedNodeGroup") if not r.name.endswith("-system")]
    assert gpu_groups and all(r.protect for r in gpu_groups)
    assert not any(r.protect for r in program("dev").resources)


def test_namespace_scoped_access_entry() -> None:
    entry = program("dev").by_type("eks:index:Cluster")[0].inputs["accessEntries"]["ml-developers"]
    scope = entry["accessPolicies"]["edit"]["accessScope"]
    assert scope == {"type": "namespace", "namespaces": ["ml-training", "inference", "research"]}


@pytest.mark.parametrize("stack", STACKS)
def test_gpu_node_groups(stack: str) -> None:
    run = program(stack)
    for group in run.by_type("eks:index:ManagedNodeGroup"):
        inputs = group.inputs
        if group.name.endswith("-system"):
            assert inputs["amiType"] == "AL2023_x86_64_STANDARD"  # every repo stack's system types are x86_64
            continue
        template = one(run, "aws:ec2/launchTemplate:LaunchTemplate", group.name).inputs
        assert template["metadataOptions"]["httpTokens"] == "required"
        assert inputs["version"] == load_stack(ROOT, stack).config.cluster.kubernetes_version
        assert inputs["nodeGroupNamePrefix"] == f"{group.name}-"
        volume = template["blockDeviceMappings"][0]
        assert volume["ebs"]["volumeType"] == "gp3" and volume["ebs"]["volumeSize"] >= 100
        assert inputs["amiType"].endswith("NVIDIA")
        labels, taints = inputs["labels"], inputs.get("taints", [])
        if labels.get("gpu-dra.io/allocation") == "dra":
            assert labels["nvidia.com/gpu.present"] == "true"
            assert {"key": "nvidia.com/gpu", "value": "true", "effect": "NO_SCHEDULE"} in taints
        else:
            assert labels["gpu-dra.io/allocation"] == "device-plugin"
            assert "nvidia.com/gpu.present" not in labels
            assert not any(t["key"] == "nvidia.com/gpu" for t in taints)


def test_bottlerocket_dra_group_turns_the_builtin_device_plugin_off() -> None:
    import base64

    run = program("staging")
    group = one(run, "eks:index:ManagedNodeGroup", "gpu-staging-h100").inputs
    assert group["amiType"] == "BOTTLEROCKET_x86_64_NVIDIA"
    template = one(run, "aws:ec2/launchTemplate:LaunchTemplate", "gpu-staging-h100").inputs
    user_data = base64.b64decode(template["userData"]).decode()
    assert "[settings.kubelet-device-plugins.nvidia]\nenabled = false" in user_data
    assert template["blockDeviceMappings"][0]["deviceName"] == "/dev/xvdb"  # Bottlerocket's data volume


def test_capacity_block_group_uses_its_reservation() -> None:
    group = one(program("prod"), "eks:index:ManagedNodeGroup", "gpu-prod-h100").inputs
    assert group["subnetIds"] == ["subnet-0aa1bb2cc3dd4ee51"]  # the block's AZ only
    template = one(program("prod"), "aws:ec2/launchTemplate:LaunchTemplate", "gpu-prod-h100").inputs
    assert template["instanceMarketOptions"] == {"marketType": "capacity-block"}
    assert template["capacityReservationSpecification"]["capacityReservationTarget"] == {
        "capacityReservationId": "cr-0123456789abcdef0"}


def test_new_vpc_spans_the_configured_zones() -> None:
    run = program("staging")
    private = [r for r in run.by_type("aws:ec2/subnet:Subnet") if "-private-" in r.name]
    assert sorted(r.inputs["availabilityZone"] for r in private) == ["us-west-2a", "us-west-2b", "us-west-2c"]
    assert len(run.by_type("aws:ec2/natGateway:NatGateway")) == 1  # one NAT outside prod


def test_every_kubernetes_resource_uses_the_cluster_provider() -> None:
    run = program("dev")
    kubernetes = [r for r in run.resources if r.type.startswith("kubernetes:")]
    assert kubernetes
    # Under mocks the provider reference is recorded on the registration request; components pass it down.
    assert all(r.parent for r in kubernetes)


def test_resource_claim_template_uses_v1_shape() -> None:
    run = program("dev")
    template = one(run, "kubernetes:resource.k8s.io/v1:ResourceClaimTemplate", "inference.gpu-20gb-any").inputs
    request = template["spec"]["spec"]["devices"]["requests"][0]
    assert set(request) == {"name", "exactly"}
    assert request["exactly"]["deviceClassName"] == "gpu.nvidia.com"
    assert request["exactly"]["selectors"][0]["cel"]["expression"] == (
        "device.driver == 'gpu.nvidia.com' && "
        "device.capacity['gpu.nvidia.com'].memory.compareTo(quantity('20Gi')) >= 0 && "
        "device.attributes['gpu.nvidia.com'].productName.matches('A100|H100|H200')")


def test_quota_names_follow_kubernetes() -> None:
    quota = one(program("prod"), "kubernetes:core/v1:ResourceQuota", "training-quota").inputs
    assert quota["spec"]["hard"] == {
        "count/resourceclaims.resource.k8s.io": "16",
        "gpu-a100.deviceclass.resource.k8s.io/devices": "8",
        "gpu-h100.deviceclass.resource.k8s.io/devices": "16",
        "gpu.nvidia.com.deviceclass.resource.k8s.io/devices": "8",
    }


def test_admin_team_namespace_is_labelled() -> None:
    run = program("prod")
    ops = one(run, "kubernetes:core/v1:Namespace", "ops-namespace").inputs
    assert ops["metadata"]["labels"]["resource.kubernetes.io/admin-access"] == "true"
    training = one(run, "kubernetes:core/v1:Namespace", "training-namespace").inputs
    assert "resource.kubernetes.io/admin-access" not in training["metadata"]["labels"]


def test_legacy_mapping_sets_extended_resource_name() -> None:
    mig = one(program("staging"), "kubernetes:resource.k8s.io/v1:DeviceClass", "deviceclass-mig-1g.10gb").inputs
    assert mig["spec"]["extendedResourceName"] == "nvidia.com/mig-1g.10gb"


def test_stack_outputs() -> None:
    outputs = program("prod").outputs
    assert outputs["clusterName"] == "gpu-prod"
    assert outputs["gpuNodeGroups"]["h100"]["summary"] == "p5.48xlarge x 8 x NVIDIA H100 80GB HBM3"
    assert outputs["teams"] == {"training": "ml-training", "inference": "inference", "ops": "gpu-ops"}


def _urns(project: Project, stack: str) -> set[str]:
    values, _ = stack_values(project.root, stack)
    return {r.urn for r in run_program(project.root, stack, values).resources}


def test_adding_and_reordering_renames_nothing(project: Project) -> None:
    before = _urns(project, "prod")

    def reorder_and_add(config: dict[str, Any]) -> None:
        config["gpu-dra:deviceClasses"].reverse()
        config["gpu-dra:deviceClasses"].insert(1, {"name": "gpu-h200", "match": {"products": ["H200"]}})
        config["gpu-dra:nodeGroups"].reverse()
        config["gpu-dra:teams"] = dict(reversed(list(config["gpu-dra:teams"].items())))
        config["gpu-dra:cluster"]["accessEntries"].reverse()

    project.edit_stack("prod", reorder_and_add)
    project.edit("stacks/teams/training.yaml", lambda team: team["claimTemplates"].reverse())
    after = _urns(project, "prod")
    assert before <= after
    assert after - before == {
        "urn:pulumi:prod::gpu-dra::gpu-dra:dra:DeviceClasses$kubernetes:resource.k8s.io/v1:DeviceClass"
        "::deviceclass-gpu-h200"}


def test_removing_a_team_touches_only_that_team(project: Project) -> None:
    before = _urns(project, "prod")
    project.edit_stack("prod", lambda config: config["gpu-dra:teams"].pop("inference"))
    after = _urns(project, "prod")
    assert after <= before
    removed = before - after
    names = {urn.rsplit("::", 1)[-1] for urn in removed}
    assert names and all(n == "inference" or n.startswith(("inference-", "inference.")) for n in names), names


def test_preview_json_is_identical_across_runs() -> None:
    values, _ = stack_values(ROOT, "dev")

    def snapshot() -> str:
        run = run_program(ROOT, "dev", values)
        return json.dumps([(r.type, r.name, r.parent, r.protect, r.inputs) for r in run.resources], sort_keys=True)

    first = snapshot()
    assert all(snapshot() == first for _ in range(19))


def test_existing_cluster_creates_no_aws_resources(project: Project) -> None:
    def to_existing(config: dict[str, Any]) -> None:
        config["gpu-dra:cluster"] = {"name": "lab", "platform": "existing", "kubernetesVersion": "1.34",
                                     "kubeconfig": {"path": "~/.kube/lab.yaml", "context": "lab-admin"},
                                     "featureGates": {"DRAConsumableCapacity": True}}
        config["gpu-dra:nodeGroups"] = []
    project.edit_stack("dev", to_existing)
    values, _ = stack_values(project.root, "dev")
    run = run_program(project.root, "dev", values)
    assert not [r for r in run.resources if r.type.startswith(("aws:", "eks:", "pulumi:providers:aws"))]
    provider = one(run, "pulumi:providers:kubernetes", "cluster").inputs
    assert provider["kubeconfig"] == "~/.kube/lab.yaml" and provider["context"] == "lab-admin"
    assert run.by_type("kubernetes:resource.k8s.io/v1:ResourceClaimTemplate")
    assert run.outputs["clusterName"] == "lab"


def test_eks_addons_are_managed() -> None:
    run = program("dev")
    addons = {r.inputs["addonName"]: r.inputs for r in run.by_type("aws:eks/addon:Addon")}
    assert set(addons) == {"vpc-cni", "kube-proxy", "coredns", "eks-pod-identity-agent"}
    assert all(a["clusterName"] == "gpu-dev" for a in addons.values())
    cluster = run.by_type("eks:index:Cluster")[0].inputs
    assert cluster["corednsAddonOptions"] == {"enabled": False}  # no second, self-managed coredns

"""The whole `__main__.py` under Pulumi mocks, per stack: the inputs users rely on, and stable resource names."""

from __future__ import annotations

import inspect
import json
from functools import cache
from typing import Any

import pulumi
import pytest

import components.cluster
import components.dra
import components.driver
import components.karpenter
import components.kueue
from gpu_dra.cli.offline import SECRET, ProgramRun, Registration, run_program
from gpu_dra.core.config.loader import load_stack, stack_values
from gpu_dra.core.render import network

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
    expected_version = {"dev": "1.35", "staging": "1.36", "prod": "1.35"}[stack]
    assert cluster["version"] == expected_version
    assert cluster["authenticationMode"] == "API"
    assert cluster["skipDefaultNodeGroup"] is True
    assert "scheduler" in cluster["enabledClusterLogTypes"]
    assert cluster["encryptionConfigKeyArn"].startswith("arn:aws:kms:")
    assert cluster["accessEntries"]["platform-admins"]["accessPolicies"]["cluster-admin"]["policyArn"].endswith(
        "AmazonEKSClusterAdminPolicy")
    assert cluster["accessEntries"]["ci-preview"]["accessPolicies"]["view"]["accessScope"] == {"type": "cluster"}
    assert "0.0.0.0/0" not in cluster.get("publicAccessCidrs", [])


def test_prod_endpoint_is_private() -> None:
    assert program("prod").by_type("eks:index:Cluster")[0].inputs["endpointPublicAccess"] is False


@pytest.mark.parametrize("stack", STACKS)
def test_protected_resources(stack: str) -> None:
    """No `pulumi up` or `destroy` deletes or replaces a protected resource until it is unprotected: prod keeps its
    cluster, the key its secrets are encrypted with and its GPU node groups that way; other stacks stay disposable."""
    loaded = load_stack(ROOT, stack)
    config = loaded.config
    assert config.protect is config.protects_team_namespaces is (stack == "prod")
    name = config.cluster.name
    expected = {("eks:index:Cluster", name), ("aws:kms/key:Key", f"{name}-secrets"),
                *(("eks:index:ManagedNodeGroup", f"{name}-{group.name}") for group in config.node_groups),
                *(("kubernetes:core/v1:Namespace", f"{team.name}-namespace") for team in loaded.teams)}
    protected = {(r.type, r.name) for r in program(stack).resources if r.protect}
    assert protected == (expected if config.protect else set())


@pytest.mark.parametrize("stack", STACKS)
def test_team_namespaces_outlive_a_deletion(stack: str) -> None:
    """A team dropped or its namespace renamed deletes the Namespace, and Kubernetes everything in it: Pulumi leaves
    every team namespace in the cluster instead (retainOnDelete), and only those (a quota or template deleted is
    deleted)."""
    retained = {(r.type, r.name) for r in program(stack).resources if r.retain_on_delete}
    assert retained == {("kubernetes:core/v1:Namespace", f"{team.name}-namespace")
                        for team in load_stack(ROOT, stack).teams}


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


def test_new_vpc_spans_the_configured_zones() -> None:
    run = program("staging")
    private = [r for r in run.by_type("aws:ec2/subnet:Subnet") if "-private-" in r.name]
    assert sorted(r.inputs["availabilityZone"] for r in private) == ["us-west-2a", "us-west-2b", "us-west-2c"]
    assert len(run.by_type("aws:ec2/natGateway:NatGateway")) == 1  # one NAT outside prod


def test_vpc_and_cluster_follow_the_network_plan(project: Project) -> None:
    """Each planned subnet is declared with its CIDR and used by id where the plan says: the cluster in every zone,
    a zone-pinned group in its zone only, each private route through its egress zone's NAT gateway."""
    def prod_with_a_pinned_group(config: dict[str, Any]) -> None:
        config["gpu-dra:environment"] = "prod"
        next(g for g in config["gpu-dra:nodeGroups"] if g["name"] == "h100")["availabilityZone"] = "us-west-2b"
    project.edit_stack("staging", prod_with_a_pinned_group)
    stack = load_stack(project.root, "staging")
    plan = network.plan_network(stack.config)
    assert plan.new_vpc is not None
    values, _ = stack_values(project.root, "staging")
    run = run_program(project.root, "staging", values)
    name = stack.config.cluster.name

    def subnet(ref: network.SubnetRef) -> str:
        assert isinstance(ref, network.Subnet)
        return f"{name}-{ref.tier}-{ref.zone}"

    planned = [s for z in plan.new_vpc.zones for s in (z.public, z.private)]
    assert {r.name: r.inputs["cidrBlock"] for r in run.by_type("aws:ec2/subnet:Subnet")} == {
        subnet(s): s.cidr for s in planned}
    routes = {r.name: r.inputs["routes"] for r in run.by_type("aws:ec2/routeTable:RouteTable")}
    assert {z.name: routes[f"{name}-private-{z.name}"][0]["natGatewayId"] for z in plan.new_vpc.zones} == {
        z.name: f"{name}-nat-{z.egress_zone}-id" for z in plan.new_vpc.zones}
    cluster = one(run, "eks:index:Cluster", name).inputs
    assert cluster["privateSubnetIds"] == [f"{subnet(s)}-id" for s in plan.private_subnets]
    assert cluster["publicSubnetIds"] == [f"{subnet(s)}-id" for s in plan.public_subnets]
    assert one(run, "eks:index:ManagedNodeGroup", f"{name}-h100").inputs["subnetIds"] == [
        f"{name}-private-us-west-2b-id"]


@pytest.mark.parametrize("stack", STACKS)
def test_every_kubernetes_resource_uses_the_stacks_cluster_provider(stack: str) -> None:
    """Without it a resource goes to the ambient kubeconfig's cluster, whichever that is."""
    run = program(stack)
    [provider] = run.by_type("pulumi:providers:kubernetes")
    cluster = one(run, "gpu-dra:cluster:EksCluster", load_stack(ROOT, stack).config.cluster.name)
    [eks] = run.by_type("eks:index:Cluster")
    assert provider.parent == cluster.urn and eks.urn in provider.dependencies  # the cluster's own kubeconfig
    kubernetes = [r for r in run.resources if r.type.startswith("kubernetes:")]
    assert {"kubernetes:helm.sh/v4:Chart", "kubernetes:core/v1:Namespace", "kubernetes:resource.k8s.io/v1:DeviceClass",
            "kubernetes:resource.k8s.io/v1:ResourceClaimTemplate"} <= {r.type for r in kubernetes}
    # The reference the engine resolves: the provider's URN and ID.
    assert [r.urn for r in kubernetes if r.provider != f"{provider.urn}::{provider.id}"] == []


@pytest.mark.parametrize("stack", STACKS)
def test_claim_templates_are_replaced_when_their_spec_changes(stack: str) -> None:
    """Kubernetes refuses any update to a template's spec, so a change must replace it; the template keeps its name,
    so the old one is deleted first (the new one could not be created beside it). Pods keep their claims."""
    templates = program(stack).by_type("kubernetes:resource.k8s.io/v1:ResourceClaimTemplate")
    assert templates
    assert [r.name for r in templates if not ({"spec", "*"} & set(r.replace_on_changes))] == []
    assert [r.name for r in templates if not r.delete_before_replace] == []


@pytest.mark.parametrize("stack", STACKS)
def test_teams_keep_the_urns_they_were_deployed_with(stack: str) -> None:
    """TeamResources registered as gpu-dra:dra:Team until its type named the class; the alias matches that state,
    and the engine aliases each child through it, so nothing of a deployed team is replaced."""
    teams = program(stack).by_type("gpu-dra:dra:TeamResources")
    assert sorted(t.name for t in teams) == sorted(t.name for t in load_stack(ROOT, stack).teams)
    for team in teams:
        assert team.aliases == (f"urn:pulumi:{stack}::gpu-dra::pulumi:pulumi:Stack$gpu-dra:dra:Team::{team.name}",)


def test_component_types_name_their_class() -> None:
    """The naming rule `gpu-dra:<module>:<Class>`, so a URN says which code declared it."""
    classes = {f"gpu-dra:{module.__name__.rsplit('.', 1)[-1]}:{cls.__name__}"
               for module in (components.cluster, components.dra, components.driver, components.karpenter,
                              components.kueue)
               for cls in vars(module).values()
               if inspect.isclass(cls) and issubclass(cls, pulumi.ComponentResource)
               and cls.__module__ == module.__name__}
    assert {r.type for r in program("staging").resources if r.type.startswith("gpu-dra:")} == classes


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


def test_legacy_mapping_sets_extended_resource_name(project: Project) -> None:
    project.edit_stack("staging", lambda c: c.update({"gpu-dra:legacyMappings": [
        {"extendedResourceName": "nvidia.com/a100", "deviceClass": "gpu-a100"}]}))
    values, _ = stack_values(project.root, "staging")
    run = run_program(project.root, "staging", values)
    a100 = one(run, "kubernetes:resource.k8s.io/v1:DeviceClass", "deviceclass-gpu-a100").inputs
    assert a100["spec"]["extendedResourceName"] == "nvidia.com/a100"


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


@pytest.mark.parametrize("stack", STACKS)
def test_the_cluster_provider_is_identified_by_the_cluster_name(stack: str) -> None:
    """So a kubeconfig that changes or is unknown in a preview updates the provider rather than replacing it, and
    with it every Kubernetes object of the stack."""
    [provider] = program(stack).by_type("pulumi:providers:kubernetes")
    assert provider.inputs["clusterIdentifier"] == load_stack(ROOT, stack).config.cluster.name


def test_an_eks_clusters_kubeconfig_is_secret_wherever_it_flows() -> None:
    run = program("dev")
    [provider] = run.by_type("pulumi:providers:kubernetes")
    assert provider.inputs["kubeconfig"] == SECRET and provider.additional_secret_outputs == ("kubeconfig",)
    assert run.outputs["kubeconfig"] == SECRET


def _existing_with_kubeconfig(project: Project, kubeconfig: Any) -> dict[str, Any]:
    def to_existing(config: dict[str, Any]) -> None:
        config["gpu-dra:cluster"] = {"name": "lab", "platform": "existing", "kubernetesVersion": "1.34"}
        config["gpu-dra:nodeGroups"] = []
        config["gpu-dra:kubeconfig"] = kubeconfig
    project.edit_stack("dev", to_existing)
    values, _ = stack_values(project.root, "dev")
    return values


def test_a_plaintext_kubeconfig_is_redacted_and_warned_about(project: Project,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    values = _existing_with_kubeconfig(project, "users: [{name: u, user: {token: s3cr3t-t0ken}}]\n")
    run = run_program(project.root, "dev", values, load_stack(project.root, "dev"))
    provider = one(run, "pulumi:providers:kubernetes", "cluster")
    assert provider.inputs["kubeconfig"] == SECRET and provider.additional_secret_outputs == ("kubeconfig",)
    recorded = json.dumps([(r.inputs, r.name) for r in run.resources]) + json.dumps(run.outputs)
    assert "s3cr3t-t0ken" not in recorded
    warning = capsys.readouterr().err
    assert "stacks/Pulumi.dev.yaml: gpu-dra:kubeconfig is stored in plain text" in warning
    assert "pulumi config set --secret gpu-dra:kubeconfig" in warning and "s3cr3t-t0ken" not in warning


def test_an_encrypted_kubeconfig_is_not_warned_about(project: Project, capsys: pytest.CaptureFixture[str]) -> None:
    values = _existing_with_kubeconfig(project, {"secure": "v1:AAABAJ0x+ciphertext"})
    run = run_program(project.root, "dev", values, load_stack(project.root, "dev"))
    assert one(run, "pulumi:providers:kubernetes", "cluster").inputs["kubeconfig"] == SECRET
    assert "plain text" not in capsys.readouterr().err


def test_eks_addons_are_managed() -> None:
    run = program("dev")
    addons = {r.inputs["addonName"]: r.inputs for r in run.by_type("aws:eks/addon:Addon")}
    assert set(addons) == {"vpc-cni", "kube-proxy", "coredns", "eks-pod-identity-agent"}
    assert all(a["clusterName"] == "gpu-dev" for a in addons.values())
    cluster = run.by_type("eks:index:Cluster")[0].inputs
    assert cluster["corednsAddonOptions"] == {"enabled": False}  # no second, self-managed coredns


def _addon_versions(run: ProgramRun) -> dict[str, str]:
    return {r.inputs["addonName"]: r.inputs["addonVersion"] for r in run.by_type("aws:eks/addon:Addon")}


def test_eks_addons_follow_the_kubernetes_version(project: Project) -> None:
    """EKS updates no add-on with the cluster: each add-on is set to EKS's default version for the stack's
    kubernetesVersion (aws.eks.getAddonVersion, whose answer the mocks spell out), so raising it updates them; a
    pinned version is taken as written."""
    values, _ = stack_values(project.root, "dev")
    run = run_program(project.root, "dev", values)
    assert _addon_versions(run) == {addon: f"(EKS's default {addon} for Kubernetes 1.35, looked up by pulumi up)"
                                    for addon in ("vpc-cni", "kube-proxy", "coredns", "eks-pod-identity-agent")}
    assert run.invokes == ["aws:eks/getAddonVersion:getAddonVersion"]

    def upgrade_and_pin(config: dict[str, Any]) -> None:
        config["gpu-dra:cluster"].update(kubernetesVersion="1.36", addonVersions={"coredns": "v1.12.4-eksbuild.1"})
    project.edit_stack("dev", upgrade_and_pin)
    values, _ = stack_values(project.root, "dev")
    versions = _addon_versions(run_program(project.root, "dev", values))
    assert versions.pop("coredns") == "v1.12.4-eksbuild.1"
    assert versions == {addon: f"(EKS's default {addon} for Kubernetes 1.36, looked up by pulumi up)"
                        for addon in ("vpc-cni", "kube-proxy", "eks-pod-identity-agent")}


def test_the_cluster_uses_eks_security_group_alone() -> None:
    """pulumi-eks's own cluster and node security groups serve only self-managed nodes; managed node groups use EKS's
    cluster security group, which is where the deployer's rule goes (pulumi-eks reports it as clusterSecurityGroupId
    once its own are skipped)."""
    for stack in STACKS:
        assert program(stack).by_type("eks:index:Cluster")[0].inputs["skipDefaultSecurityGroups"] is True


def test_documentation_accounts_are_warned_about_in_a_preview_and_refused_by_pulumi_up(
        project: Project, capsys: pytest.CaptureFixture[str]) -> None:
    """The repository's stacks carry AWS's documentation accounts as placeholders: a preview says which entries to
    replace; `pulumi up` stops before registering anything, where CreateAccessEntry would fail after the cluster is
    created."""
    values, _ = stack_values(project.root, "dev")
    run_program(project.root, "dev", values)
    warned = [line for line in capsys.readouterr().err.splitlines() if "example account" in line]
    assert len(warned) == 3 and all(
        f"stacks/Pulumi.dev.yaml: gpu-dra:cluster.accessEntries[{i}].principalArn: " in line
        and line.endswith("`pulumi up` refuses it") for i, line in enumerate(warned))

    with pytest.raises(SystemExit) as stopped:
        run_program(project.root, "dev", values, deploy=True)
    refused = capsys.readouterr().err
    assert stopped.value.code == 2 and "Traceback" not in refused
    assert refused.count("an example account of AWS's documentation") == 3

    def own_account(config: dict[str, Any]) -> None:
        for entry in config["gpu-dra:cluster"]["accessEntries"]:
            entry["principalArn"] = entry["principalArn"].replace("111122223333", "210987654321")
    project.edit_stack("dev", own_account)
    values, _ = stack_values(project.root, "dev")
    deployed = run_program(project.root, "dev", values, deploy=True)
    assert deployed.by_type("aws:eks/addon:Addon") and "example account" not in capsys.readouterr().err


def test_a_pulumi_cli_older_than_the_first_preview_needs_is_refused(monkeypatch: pytest.MonkeyPatch,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    """Before 3.130.0 the engine refuses the unknown provider every Kubernetes object has in a first preview: the
    program asks the engine for its version first and says what to do (no engine to ask under gpu-dra's mocks)."""
    asked: list[str] = []

    def engine_answer(version_range: str) -> None:
        asked.append(version_range)
        raise Exception("Pulumi CLI version 3.120.0 does not satisfy the version range \">=3.130.0\"")

    monkeypatch.setattr(pulumi, "require_pulumi_version", engine_answer)
    values, _ = stack_values(ROOT, "dev")
    run_program(ROOT, "dev", values)  # gpu-dra's own preview: no engine, not asked
    assert asked == []
    with pytest.raises(SystemExit) as stopped:
        run_program(ROOT, "dev", values, deploy=True)
    assert stopped.value.code == 2 and asked == [">=3.130.0"]
    assert "gpu-dra needs the Pulumi CLI 3.130.0 or later (Pulumi CLI version 3.120.0 does not satisfy" in (
        capsys.readouterr().err)


@pytest.mark.parametrize("stack", STACKS)
def test_the_cluster_has_one_vpc_cni_addon(stack: str) -> None:
    """pulumi-eks adds its own vpc-cni add-on unless useDefaultVpcCni is set (or, unset, under auto mode:
    pulumi/pulumi-eks@7bf0c1b1:nodejs/eks/cluster/cluster.ts:1091-1092); two fail at the second CreateAddon."""
    run = program(stack)
    cluster = one(run, "eks:index:Cluster", load_stack(ROOT, stack).config.cluster.name).inputs
    use_default = cluster.get("useDefaultVpcCni")
    pulumi_eks_addon = (not use_default if use_default is not None
                        else not (cluster.get("autoMode") or {}).get("enabled"))
    ours = [r for r in run.by_type("aws:eks/addon:Addon") if r.inputs["addonName"] == "vpc-cni"]
    assert (len(ours), pulumi_eks_addon) == (1, False)
    assert "vpcCniOptions" not in cluster  # pulumi-eks's options would configure an add-on it does not create


def test_a_stack_validated_by_the_cli_is_not_validated_again(monkeypatch: pytest.MonkeyPatch) -> None:
    """`gpu-dra preview` hands the program the stack it loaded; only `pulumi up` (no stack given) loads it there."""
    import gpu_dra.core.config.loader

    values, _ = stack_values(ROOT, "dev")
    stack = load_stack(ROOT, "dev")

    def second_validation(*args: Any) -> Any:
        raise AssertionError("the program validated the stack again")

    monkeypatch.setattr(gpu_dra.core.config.loader, "load_stack_from_engine", second_validation)
    run = run_program(ROOT, "dev", values, stack)
    assert any(r.type == "kubernetes:resource.k8s.io/v1:ResourceClaimTemplate" for r in run.resources)
    with pytest.raises(AssertionError, match="validated the stack again"):
        run_program(ROOT, "dev", values)


def test_the_documented_stack_outputs_are_the_exported_ones() -> None:
    """docs/deploying.md's table of stack outputs, for StackReference users: every output a repository stack exports
    is in it, and it names none that no stack exports (inClusterLayer aside: an up from outside the VPC's)."""
    text = (ROOT / "docs" / "deploying.md").read_text().split("## Stack outputs", 1)[1].split("\n## ", 1)[0]
    documented = {line.split("`")[1] for line in text.splitlines() if line.startswith("| `")}
    exported = set().union(*(set(program(stack).outputs) for stack in ("dev", "staging", "prod", "automode")))
    assert exported == documented - {"inClusterLayer"}

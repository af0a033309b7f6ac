"""Karpenter installed by the program (gpu-dra:karpenter), under Pulumi mocks: the charts and their values, each
NodePool and its EC2NodeClass, the node role's access entry, the interruption queue and rules, the controller's IAM,
what waits for what, stable names; nothing at all without the key. Also the vendored template and its tool
(tools/vendor_karpenter_iam.py). Nothing here ran against AWS or a cluster."""

from __future__ import annotations

import base64
import json
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from gpu_dra.cli import offline
from gpu_dra.cli.offline import ProgramRun, Registration, run_program
from gpu_dra.core.config.loader import load_stack, stack_values
from gpu_dra.core.data import helm_merge
from gpu_dra.core.dra.scheduling import schedules_on
from gpu_dra.core.facts import karpenter_iam, pulumi_types
from gpu_dra.core.policy.engine.model import mock_cluster_security_group
from gpu_dra.core.render import charts, names, nodes, permissions
from gpu_dra.core.render import karpenter as render

from .conftest import ROOT, Project, load_tool

CLUSTER = "gpu-staging"  # stacks/Pulumi.staging.yaml
SECURITY_GROUP = mock_cluster_security_group("gpu-staging")  # what the mocks answer for EKS's cluster group
POOLS = [
    {"name": "l40s-burst", "instanceTypes": ["g6e.xlarge", "g6e.2xlarge"], "maxNodes": 4,
     "capacityTypes": ["spot", "on-demand"], "labels": {"example.com/team": "ml"},
     "taints": [{"key": "example.com/burst", "effect": "NoSchedule"}]},
    {"name": "h100-br", "instanceTypes": ["p5.48xlarge"], "maxNodes": 1, "amiFamily": "Bottlerocket",
     "diskSize": 500, "consolidation": "WhenEmptyOrUnderutilized", "consolidateAfter": "1h"},
    {"name": "legacy", "instanceTypes": ["g6.xlarge"], "maxNodes": 2, "allocationMode": "device-plugin"},
]
KARPENTER_TYPES = {pulumi_types.IAM_POLICY, pulumi_types.POD_IDENTITY_ASSOCIATION, pulumi_types.SQS_QUEUE,
                   pulumi_types.SQS_QUEUE_POLICY, pulumi_types.EVENT_RULE, pulumi_types.EVENT_TARGET,
                   pulumi_types.KARPENTER_NODE_CLASS, pulumi_types.KARPENTER_NODE_POOL}


def _copy_project(root: Path) -> Project:
    """The project's stacks and program in `root`, as the `project` fixture copies them."""
    for folder in ("stacks", "workloads"):
        shutil.copytree(ROOT / folder, root / folder)
    for file in ("Pulumi.yaml", "__main__.py"):
        shutil.copy(ROOT / file, root / file)
    return Project(root)


def _with_karpenter(project: Project, pools: list[dict[str, Any]] | None = None, **cluster: Any) -> None:
    def change(config: dict[str, Any]) -> None:
        config["gpu-dra:karpenter"] = {"nodePools": pools or POOLS}
        config["gpu-dra:cluster"].update(cluster)
    project.edit_stack("staging", change)


def _run(project: Project) -> ProgramRun:
    """The staging program under mocks (which answer EKS's cluster security group: SECURITY_GROUP)."""
    values, _ = stack_values(project.root, "staging")
    return run_program(project.root, "staging", values)


@pytest.fixture(scope="module")
def karpenter(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Project, ProgramRun]]:
    project = _copy_project(tmp_path_factory.mktemp("karpenter"))
    _with_karpenter(project)
    yield project, _run(project)


def _one(run: ProgramRun, type_: str, name: str) -> Registration:
    (found,) = [r for r in run.resources if r.type == type_ and r.name == name]
    return found


def _karpenter_resources(run: ProgramRun) -> list[Registration]:
    return [r for r in run.resources if r.type in KARPENTER_TYPES or "karpenter" in r.name.lower()
            or r.type.startswith("gpu-dra:karpenter")]


# -------------------------------------------------------------------------------------------------------- charts
def test_the_charts_are_the_pinned_release_crds_first(karpenter: tuple[Project, ProgramRun]) -> None:
    project, run = karpenter
    version = load_stack(project.root, "staging").config.karpenter.version  # type: ignore[union-attr]
    crds = _one(run, pulumi_types.CHART, f"{CLUSTER}-karpenter-crd").inputs
    controller = _one(run, pulumi_types.CHART, f"{CLUSTER}-karpenter")
    assert crds["chart"] == "oci://public.ecr.aws/karpenter/karpenter-crd" and crds["version"] == version == "1.15.0"
    assert controller.inputs["chart"] == "oci://public.ecr.aws/karpenter/karpenter"
    assert controller.inputs["version"] == version and controller.inputs["skipCrds"] is True
    assert crds["namespace"] == controller.inputs["namespace"] == "kube-system"
    assert (crds["name"], controller.inputs["name"]) == ("karpenter-crd", "karpenter")
    assert _one(run, pulumi_types.CHART, f"{CLUSTER}-karpenter-crd").urn in controller.dependencies


def test_the_controller_values_turn_on_the_nvidia_gate_alone(karpenter: tuple[Project, ProgramRun]) -> None:
    values = _one(karpenter[1], pulumi_types.CHART, f"{CLUSTER}-karpenter").inputs["values"]
    queue = _one(karpenter[1], pulumi_types.SQS_QUEUE, f"{CLUSTER}-karpenter-interruption").inputs
    assert values["settings"] == {"clusterName": CLUSTER, "interruptionQueue": queue["name"],
                                  "awsFeatureGates": {"draNVIDIAGPU": True}}
    assert queue["name"] == CLUSTER  # the template's QueueName: the cluster's name
    assert values["serviceAccount"] == {"name": "karpenter"}
    assert values["nodeSelector"] == {"gpu-dra.io/role": "system"}
    assert values["controller"]["resources"]["limits"] == {"cpu": "1", "memory": "1Gi"}


def test_without_a_dra_node_pool_the_gate_stays_off(tmp_path: Path) -> None:
    project = _copy_project(tmp_path)
    _with_karpenter(project, [POOLS[2]])
    config = load_stack(project.root, "staging").config
    assert render.controller_chart_values(config)["settings"] == {"clusterName": CLUSTER,
                                                                  "interruptionQueue": CLUSTER}


# -------------------------------------------------------------------------------------------------- node pools
@pytest.mark.parametrize("pool", [p["name"] for p in POOLS])
def test_each_node_pool_is_what_its_entry_says(karpenter: tuple[Project, ProgramRun], pool: str) -> None:
    project, run = karpenter
    entry = next(p for p in load_stack(project.root, "staging").config.karpenter_node_pools if p.name == pool)
    registered = _one(run, pulumi_types.KARPENTER_NODE_POOL, f"{CLUSTER}-{pool}").inputs
    assert registered["metadata"] == {"name": pool}
    template = registered["spec"]["template"]
    assert template["spec"]["nodeClassRef"] == {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": pool}
    assert template["spec"]["requirements"] == [
        {"key": "node.kubernetes.io/instance-type", "operator": "In", "values": list(entry.instance_types)},
        {"key": "karpenter.sh/capacity-type", "operator": "In", "values": list(entry.capacity_types)},
        {"key": "kubernetes.io/arch", "operator": "In", "values": ["amd64"]}]
    # The labels and taints a node group's nodes get: the charts place the plugins by them.
    assert template["metadata"]["labels"] == nodes.node_labels(entry)
    assert template["spec"]["taints"] == [{"key": t.key, **({"value": t.value} if t.value else {}),
                                           "effect": t.effect.value} for t in nodes.node_taints(entry)]
    assert registered["spec"]["limits"] == {"nodes": entry.max_nodes}
    assert registered["spec"]["disruption"] == {"consolidationPolicy": entry.consolidation,
                                                "consolidateAfter": entry.consolidate_after}


def test_a_dra_pool_is_labelled_and_tainted_for_the_dra_driver(karpenter: tuple[Project, ProgramRun]) -> None:
    template = _one(karpenter[1], pulumi_types.KARPENTER_NODE_POOL, f"{CLUSTER}-l40s-burst").inputs["spec"]["template"]
    assert template["metadata"]["labels"] == {"example.com/team": "ml", "gpu-dra.io/node-group": "l40s-burst",
                                              "nvidia.com/gpu.present": "true", "gpu-dra.io/allocation": "dra"}
    assert template["spec"]["taints"] == [{"key": "example.com/burst", "effect": "NoSchedule"},
                                          {"key": "nvidia.com/gpu", "value": "true", "effect": "NoSchedule"}]


def test_the_dra_plugin_lands_on_dra_pools_and_the_device_plugin_on_the_legacy_one(
        karpenter: tuple[Project, ProgramRun]) -> None:
    """The placement each chart is registered with (over its defaults), against each NodePool's nodes: their labels,
    the kubelet's and the AMI's (gpu.present on every NVIDIA node from 1.35) included, and their taints."""
    run = karpenter[1]
    dra_values = _one(run, pulumi_types.CHART, names.DRA_DRIVER_CHART).inputs["values"]
    device_values = _one(run, pulumi_types.CHART, names.DEVICE_PLUGIN_CHART).inputs["values"]
    dra_plugin = helm_merge(charts.DRA_PLUGIN_DEFAULTS, dra_values["kubeletPlugin"])
    device_plugin = helm_merge(charts.DEVICE_PLUGIN_DEFAULTS, device_values)
    placed = {}
    for pool in run.by_type(pulumi_types.KARPENTER_NODE_POOL):
        template = pool.inputs["spec"]["template"]
        itype = template["spec"]["requirements"][0]["values"][0]
        labels = {**nodes.well_known_labels(itype), **template["metadata"]["labels"], **charts.NFD_GPU_LABELS}
        taints = template["spec"]["taints"]
        placed[pool.inputs["metadata"]["name"]] = (schedules_on(dra_plugin, labels, taints),
                                                   schedules_on(device_plugin, labels, taints))
    assert placed == {"l40s-burst": (True, False), "h100-br": (True, False), "legacy": (False, True)}


# ----------------------------------------------------------------------------------------------- EC2NodeClasses
def test_each_node_class_names_the_node_role_the_private_subnets_and_the_cluster_group(
        karpenter: tuple[Project, ProgramRun]) -> None:
    run = karpenter[1]
    role = _one(run, pulumi_types.ROLE, f"{CLUSTER}-karpenter-node")
    subnets = sorted(r.id for r in run.by_type("aws:ec2/subnet:Subnet") if "-private-" in r.name)
    assert len(subnets) == 3
    for pool in POOLS:
        node_class = _one(run, pulumi_types.KARPENTER_NODE_CLASS, f"{CLUSTER}-{pool['name']}")
        spec = node_class.inputs["spec"]
        assert spec["role"] == role.outputs["name"]
        assert sorted(term["id"] for term in spec["subnetSelectorTerms"]) == subnets
        assert spec["securityGroupSelectorTerms"] == [{"id": SECURITY_GROUP}]
        assert spec["metadataOptions"]["httpTokens"] == "required"
        assert role.urn in node_class.dependencies


def test_dra_node_classes_say_how_the_driver_shares_gpus(karpenter: tuple[Project, ProgramRun]) -> None:
    run = karpenter[1]
    annotations = {r.inputs["metadata"]["name"]: r.inputs["metadata"].get("annotations")
                   for r in run.by_type(pulumi_types.KARPENTER_NODE_CLASS)}
    sharing = {"karpenter.k8s.aws/nvidia-consumable-capacity": "disabled"}
    assert annotations == {"l40s-burst": sharing, "h100-br": sharing, "legacy": None}


def test_amis_and_volumes_follow_the_ami_family(karpenter: tuple[Project, ProgramRun]) -> None:
    run = karpenter[1]
    al2023 = _one(run, pulumi_types.KARPENTER_NODE_CLASS, f"{CLUSTER}-l40s-burst").inputs["spec"]
    bottlerocket = _one(run, pulumi_types.KARPENTER_NODE_CLASS, f"{CLUSTER}-h100-br").inputs["spec"]
    assert al2023["amiSelectorTerms"] == [{"alias": "al2023@latest"}]
    assert [(v["deviceName"], v["ebs"]["volumeSize"]) for v in al2023["blockDeviceMappings"]] == [
        ("/dev/xvda", "200Gi")]
    assert "userData" not in al2023
    assert bottlerocket["amiSelectorTerms"] == [{"alias": "bottlerocket@latest"}]
    assert [(v["deviceName"], v["ebs"]["volumeSize"]) for v in bottlerocket["blockDeviceMappings"]] == [
        ("/dev/xvda", "4Gi"), ("/dev/xvdb", "500Gi")]
    # Bottlerocket's own device plugin off on DRA nodes, as a DRA node group's launch template turns it off.
    assert bottlerocket["userData"] == nodes.BOTTLEROCKET_DEVICE_PLUGIN_OFF
    group_template = _one(run, "aws:ec2/launchTemplate:LaunchTemplate", f"{CLUSTER}-h100").inputs
    assert base64.b64decode(group_template["userData"]).decode() == bottlerocket["userData"]


def test_a_bottlerocket_device_plugin_pool_keeps_its_builtin_plugin(tmp_path: Path) -> None:
    project = _copy_project(tmp_path)
    _with_karpenter(project, [{**POOLS[2], "amiFamily": "Bottlerocket"}])
    (pool,) = load_stack(project.root, "staging").config.karpenter_node_pools
    node_class = render.ec2_node_class(pool, "role", ["subnet-1"], ["sg-1"])
    assert "userData" not in node_class["spec"] and "annotations" not in node_class["metadata"]
    assert render.node_pool(pool)["spec"]["template"]["metadata"]["labels"]["gpu-dra.io/device-plugin"] == \
        "bottlerocket"


# ------------------------------------------------------------------------------------------------------- AWS side
def test_the_node_role_joins_the_cluster_through_an_ec2_linux_access_entry(
        karpenter: tuple[Project, ProgramRun]) -> None:
    run = karpenter[1]
    role = _one(run, pulumi_types.ROLE, f"{CLUSTER}-karpenter-node")
    cluster = _one(run, pulumi_types.CLUSTER, CLUSTER)
    entries = cluster.inputs["accessEntries"]
    assert entries["KarpenterNodeRole"] == {"principalArn": role.outputs["arn"], "type": "EC2_LINUX"}
    assert {"platform-admins", "ci-preview"} <= set(entries)  # the stack's own entries stay
    assert role.urn in cluster.dependencies
    trust = json.loads(role.inputs["assumeRolePolicy"])
    assert trust["Statement"] == [{"Effect": "Allow", "Principal": {"Service": "ec2.amazonaws.com"},
                                   "Action": ["sts:AssumeRole"]}]
    attached = {r.inputs["policyArn"] for r in run.by_type(pulumi_types.ROLE_POLICY_ATTACHMENT)
                if r.name.startswith(f"{CLUSTER}-karpenter-node-")}
    assert attached == {f"arn:aws:iam::aws:policy/{name}" for name in (
        "AmazonEKS_CNI_Policy", "AmazonEKSWorkerNodePolicy", "AmazonEC2ContainerRegistryPullOnly",
        "AmazonSSMManagedInstanceCore")}


def test_the_interruption_queue_and_its_five_rules(karpenter: tuple[Project, ProgramRun]) -> None:
    run = karpenter[1]
    queue = _one(run, pulumi_types.SQS_QUEUE, f"{CLUSTER}-karpenter-interruption")
    assert queue.inputs["messageRetentionSeconds"] == 300 and queue.inputs["sqsManagedSseEnabled"] is True
    policy = json.loads(_one(run, pulumi_types.SQS_QUEUE_POLICY, f"{CLUSTER}-karpenter-interruption").inputs["policy"])
    assert {s["Resource"] for s in policy["Statement"]} == {queue.outputs["arn"]}
    assert policy["Statement"][0]["Principal"] == {"Service": ["events.amazonaws.com", "sqs.amazonaws.com"]}
    patterns = {r.name.removeprefix(f"{CLUSTER}-karpenter-"): json.loads(r.inputs["eventPattern"])
                for r in run.by_type(pulumi_types.EVENT_RULE)}
    assert patterns == {
        "scheduled-change": {"source": ["aws.health"], "detail-type": ["AWS Health Event"]},
        "spot-interruption": {"source": ["aws.ec2"], "detail-type": ["EC2 Spot Instance Interruption Warning"]},
        "rebalance": {"source": ["aws.ec2"], "detail-type": ["EC2 Instance Rebalance Recommendation"]},
        "instance-state-change": {"source": ["aws.ec2"], "detail-type": ["EC2 Instance State-change Notification"]},
        "capacity-reservation-interruption": {
            "source": ["aws.ec2"], "detail-type": ["EC2 Capacity Reservation Instance Interruption Warning"]}}
    targets = run.by_type(pulumi_types.EVENT_TARGET)
    assert len(targets) == 5
    assert {(t.inputs["arn"], t.inputs["targetId"]) for t in targets} == {
        (queue.outputs["arn"], "KarpenterInterruptionQueueTarget")}


def test_the_controller_role_is_for_pod_identity_with_the_six_policies(karpenter: tuple[Project, ProgramRun]) -> None:
    run = karpenter[1]
    role = _one(run, pulumi_types.ROLE, f"{CLUSTER}-karpenter-controller")
    assert json.loads(role.inputs["assumeRolePolicy"])["Statement"] == [{
        "Sid": "AllowEksAuthToAssumeRoleForPodIdentity", "Effect": "Allow",
        "Principal": {"Service": "pods.eks.amazonaws.com"}, "Action": ["sts:AssumeRole", "sts:TagSession"]}]
    association = _one(run, pulumi_types.POD_IDENTITY_ASSOCIATION, f"{CLUSTER}-karpenter")
    assert {k: association.inputs[k] for k in ("clusterName", "namespace", "serviceAccount", "roleArn")} == {
        "clusterName": CLUSTER, "namespace": "kube-system", "serviceAccount": "karpenter",
        "roleArn": role.outputs["arn"]}
    assert _one(run, pulumi_types.CLUSTER, CLUSTER).urn in association.dependencies
    policies = {r.name.removeprefix(f"{CLUSTER}-karpenter-controller-"): r
                for r in run.by_type(pulumi_types.IAM_POLICY)}
    assert set(policies) == {"node-lifecycle", "iam-integration", "eks-integration", "interruption", "zonal-shift",
                             "resource-discovery"}
    attached = {r.inputs["policyArn"] for r in run.by_type(pulumi_types.ROLE_POLICY_ATTACHMENT)
                if r.inputs["role"] == role.outputs["name"]}
    assert attached == {p.outputs["arn"] for p in policies.values()}


def test_the_controller_policies_are_the_templates_for_this_cluster(karpenter: tuple[Project, ProgramRun]) -> None:
    run = karpenter[1]
    documents = {r.name.removeprefix(f"{CLUSTER}-karpenter-controller-"): json.loads(r.inputs["policy"])
                 for r in run.by_type(pulumi_types.IAM_POLICY)}
    text = json.dumps(documents)
    assert "${" not in text and "us-west-2" in text and f"kubernetes.io/cluster/{CLUSTER}" in text
    statements = {s["Sid"]: s for d in documents.values() for s in d["Statement"]}
    node_role = _one(run, pulumi_types.ROLE, f"{CLUSTER}-karpenter-node").outputs["arn"]
    assert statements["AllowPassingInstanceRole"]["Resource"] == node_role
    queue = _one(run, pulumi_types.SQS_QUEUE, f"{CLUSTER}-karpenter-interruption").outputs["arn"]
    assert statements["AllowInterruptionQueueActions"]["Resource"] == queue
    assert statements["AllowAPIServerEndpointDiscovery"]["Resource"] == \
        f"arn:aws:eks:us-west-2:{offline.MOCK_ACCOUNT}:cluster/{CLUSTER}"
    # 1.15 adds ec2:RebootInstances for the RebootForRepair gate, which gpu-dra leaves off.
    assert statements["AllowScopedDeletion"]["Action"] == ["ec2:TerminateInstances", "ec2:DeleteLaunchTemplate"]


def test_every_karpenter_aws_type_has_its_deploy_permissions(karpenter: tuple[Project, ProgramRun]) -> None:
    run = karpenter[1]
    types = permissions.declared_types((r.type, r.inputs) for r in run.resources) | set(run.invokes)
    assert KARPENTER_TYPES - {pulumi_types.KARPENTER_NODE_CLASS, pulumi_types.KARPENTER_NODE_POOL} <= types
    assert permissions.unmapped(types) == []


# ------------------------------------------------------------------------------------------- order and identity
def test_the_controller_waits_for_its_identity_policies_queue_and_nodes(karpenter: tuple[Project, ProgramRun]) -> None:
    run = karpenter[1]
    by_name = {(r.type, r.name): r.urn for r in run.resources}
    controller = _one(run, pulumi_types.CHART, f"{CLUSTER}-karpenter")
    needs = {by_name[(pulumi_types.POD_IDENTITY_ASSOCIATION, f"{CLUSTER}-karpenter")],
             by_name[(pulumi_types.SQS_QUEUE_POLICY, f"{CLUSTER}-karpenter-interruption")],
             by_name[(pulumi_types.MANAGED_NODE_GROUP, f"{CLUSTER}-system")],
             by_name[(pulumi_types.ADDON, f"{CLUSTER}-eks-pod-identity-agent")],
             *(r.urn for r in run.by_type(pulumi_types.ROLE_POLICY_ATTACHMENT)
               if r.name in {f"{CLUSTER}-karpenter-controller-{p}" for p in render.controller_policy_names()})}
    assert len(needs) == 10 and needs <= set(controller.dependencies)
    for pool in POOLS:
        node_class = _one(run, pulumi_types.KARPENTER_NODE_CLASS, f"{CLUSTER}-{pool['name']}")
        node_pool = _one(run, pulumi_types.KARPENTER_NODE_POOL, f"{CLUSTER}-{pool['name']}")
        assert controller.urn in node_class.dependencies and controller.urn in node_pool.dependencies
        assert node_class.urn in node_pool.dependencies


def test_names_are_stable_and_start_with_the_cluster(karpenter: tuple[Project, ProgramRun]) -> None:
    run = karpenter[1]
    found = {(r.type, r.name) for r in _karpenter_resources(run)}
    rules = ("scheduled-change", "spot-interruption", "rebalance", "instance-state-change",
             "capacity-reservation-interruption")
    policies = ("node-lifecycle", "iam-integration", "eks-integration", "interruption", "zonal-shift",
                "resource-discovery")
    node_policies = ("AmazonEKS_CNI_Policy", "AmazonEKSWorkerNodePolicy", "AmazonEC2ContainerRegistryPullOnly",
                     "AmazonSSMManagedInstanceCore")
    assert found == {
        ("gpu-dra:karpenter:Karpenter", CLUSTER),
        (pulumi_types.ROLE, f"{CLUSTER}-karpenter-node"), (pulumi_types.ROLE, f"{CLUSTER}-karpenter-controller"),
        *((pulumi_types.ROLE_POLICY_ATTACHMENT, f"{CLUSTER}-karpenter-node-{p}") for p in node_policies),
        *((t, f"{CLUSTER}-karpenter-controller-{p}") for p in policies
          for t in (pulumi_types.IAM_POLICY, pulumi_types.ROLE_POLICY_ATTACHMENT)),
        (pulumi_types.POD_IDENTITY_ASSOCIATION, f"{CLUSTER}-karpenter"),
        (pulumi_types.SQS_QUEUE, f"{CLUSTER}-karpenter-interruption"),
        (pulumi_types.SQS_QUEUE_POLICY, f"{CLUSTER}-karpenter-interruption"),
        *((t, f"{CLUSTER}-karpenter-{r}") for r in rules for t in (pulumi_types.EVENT_RULE, pulumi_types.EVENT_TARGET)),
        (pulumi_types.CHART, f"{CLUSTER}-karpenter-crd"), (pulumi_types.CHART, f"{CLUSTER}-karpenter"),
        *((t, f"{CLUSTER}-{p['name']}") for p in POOLS
          for t in (pulumi_types.KARPENTER_NODE_CLASS, pulumi_types.KARPENTER_NODE_POOL)),
    }
    # The node role and its attachments live with the cluster (its access entry needs the role first); the rest under
    # the Karpenter component, so renaming neither moves the other.
    component = _one(run, "gpu-dra:karpenter:Karpenter", CLUSTER).urn
    cluster = next(r.parent for r in run.resources if r.type == pulumi_types.CLUSTER)
    assert {r.name for r in _karpenter_resources(run) if r.parent == cluster} == {
        f"{CLUSTER}-karpenter-node", *(f"{CLUSTER}-karpenter-node-{p}" for p in node_policies)}
    assert all(r.parent in (cluster, component) for r in _karpenter_resources(run) if r.urn != component)


def test_a_node_pool_added_first_renames_nothing(karpenter: tuple[Project, ProgramRun], tmp_path: Path) -> None:
    project = _copy_project(tmp_path)
    _with_karpenter(project, [{"name": "extra", "instanceTypes": ["g6.xlarge"], "maxNodes": 1}, *reversed(POOLS)])
    before = {r.urn for r in _karpenter_resources(karpenter[1])}
    after = {r.urn for r in _karpenter_resources(_run(project))}
    assert before < after
    assert {urn.rsplit("::", 1)[-1] for urn in after - before} == {f"{CLUSTER}-extra"}


# ---------------------------------------------------------------------------------------------- without, outside
def test_without_the_key_nothing_of_karpenter_is_declared(tmp_path: Path) -> None:
    project = _copy_project(tmp_path)
    project.edit_stack("staging", lambda config: config.pop("gpu-dra:karpenter"))
    run = _run(project)
    assert _karpenter_resources(run) == []
    assert "KarpenterNodeRole" not in _one(run, pulumi_types.CLUSTER, CLUSTER).inputs["accessEntries"]


def test_an_up_outside_the_vpc_declares_the_aws_side_only(tmp_path: Path) -> None:
    project = _copy_project(tmp_path)
    _with_karpenter(project, deployFrom={"network": "outside"})
    run = _run(project)
    declared = {r.type for r in _karpenter_resources(run)}
    assert {pulumi_types.SQS_QUEUE, pulumi_types.IAM_POLICY, pulumi_types.POD_IDENTITY_ASSOCIATION} <= declared
    assert not declared & {pulumi_types.CHART, pulumi_types.KARPENTER_NODE_CLASS, pulumi_types.KARPENTER_NODE_POOL}


# ------------------------------------------------------------------------------------------- the vendored template
tool = load_tool("vendor_karpenter_iam")


def test_the_tool_regenerates_the_committed_module_from_the_committed_template(tmp_path: Path) -> None:
    out = tmp_path / "karpenter_iam.py"
    tool.main(["--out", str(out)])
    assert out.read_text() == (ROOT / "gpu_dra" / "core" / "facts" / "karpenter_iam.py").read_text()


@pytest.mark.skipif(not tool.MIRROR.exists(), reason="no fetched mirror of aws/karpenter-provider-aws here")
def test_the_committed_template_is_the_tags_file() -> None:
    def git(*args: str) -> bytes:
        return subprocess.run(["git", "--git-dir", str(tool.MIRROR), *args], check=True,
                              capture_output=True).stdout

    assert git("rev-parse", f"{tool.TAG}^{{commit}}").decode().strip() == tool.COMMIT
    assert git("show", f"{tool.TAG}:{tool.PATH}") == tool.VENDORED.read_bytes()


def test_the_module_names_its_source_and_what_1_15_changes() -> None:
    header = (karpenter_iam.__doc__ or "").replace("\n", " ")
    for fact in (tool.REPOSITORY, tool.TAG, tool.COMMIT, tool.PATH, tool.LICENCE, "ec2:RebootInstances",
                 "RebootForRepair", "d77d1a3a5a44d7ce9c041bcc51da1e567de3f2ec"):
        assert fact in header
    assert (karpenter_iam.REPOSITORY, karpenter_iam.TAG, karpenter_iam.COMMIT) == (tool.REPOSITORY, tool.TAG,
                                                                                   tool.COMMIT)


@pytest.mark.parametrize("change, problem", [
    (lambda t: t.replace("${AWS::Region}::image/*", "${AWS::StackName}::image/*"), "unknown ['AWS::StackName']"),
    (lambda t: t.replace("Type: AWS::SQS::QueuePolicy", "Type: AWS::SNS::Topic"), "unknown resource types"),
    (lambda t: t.replace("      SqsManagedSseEnabled: true", "      SqsManagedSseEnabled: true\n      DelaySeconds: 5"),
     "unknown properties ['DelaySeconds']"),
])
def test_the_tool_stops_at_a_template_it_does_not_know(change: Any, problem: str) -> None:
    text = tool.VENDORED.read_text()
    assert change(text) != text
    with pytest.raises(ValueError, match=problem.replace("[", r"\[").replace("]", r"\]")):
        tool.parse(change(text))


def test_a_placeholder_left_unfilled_is_an_error() -> None:
    with pytest.raises(ValueError, match=r"no value for \$\{AWS::AccountId\}"):
        render.substitute({"Resource": "arn:${AWS::Partition}:iam::${AWS::AccountId}:x"}, {"${AWS::Partition}": "aws"})
    assert render.arn_account("arn:aws-us-gov:iam::210987654321:role/x") == ("aws-us-gov", "210987654321")

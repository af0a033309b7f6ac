"""EKS Auto Mode serving a stack's GPUs (issue 29, section 3): the repository's example stack previews with Auto Mode
on the cluster, its GPU NodePools on the default NodeClass and no driver chart or device plugin; each mistake Auto
Mode makes of a stack file is refused on its line; explain and check judge a template on the NodePools' instance
types and name what AWS does not document."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from gpu_dra.cli.offline import ProgramRun, Registration, run_program
from gpu_dra.core.analysis.explain import Explainer
from gpu_dra.core.analysis.features import features_for
from gpu_dra.core.analysis.provisioning import LaunchedPool, ProvisioningJudge
from gpu_dra.core.config.loader import stack_values
from gpu_dra.core.config.models import AutoModeNodePool
from gpu_dra.core.facts import auto_mode, pulumi_types
from gpu_dra.core.facts.nvidia import DEFAULT_LEVEL
from gpu_dra.core.facts.target import Target

from .conftest import Project
from .test_cli import gpu_dra
from .test_config import _problems
from .test_karpenter_install import _copy_project
from .test_provisioning import _claim, _exactly

STACK = "automode"
CLUSTER = "gpu-auto"
L4 = "device.attributes['gpu.nvidia.com'].productName.contains('L4')"


@pytest.fixture(scope="module")
def program(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ProgramRun]:
    root = _copy_project(tmp_path_factory.mktemp("automode")).root
    values, _ = stack_values(root, STACK)
    yield run_program(root, STACK, values)


def _of_type(run: ProgramRun, type_: str) -> list[Registration]:
    return [r for r in run.resources if r.type == type_]


# ----------------------------------------------------------------------------------------------------- the program
def test_the_cluster_runs_auto_mode_with_its_built_in_node_pools(program: ProgramRun) -> None:
    (cluster,) = _of_type(program, pulumi_types.CLUSTER)
    # pulumi-eks fills computeConfig with both built-in NodePools and its own node role when only `enabled` is given
    # (pulumi/pulumi-eks@7bf0c1b1:nodejs/eks/cluster/cluster.ts:649-661): the default NodeClass exists then.
    assert cluster.inputs["autoMode"] == {"enabled": True, "createNodeRole": True}  # the SDK default, written
    assert cluster.inputs["authenticationMode"] == "API"  # pulumi-eks refuses Auto Mode without access entries


def test_no_driver_chart_no_device_plugin_no_node_group(program: ProgramRun) -> None:
    types = {r.type for r in program.resources}
    assert pulumi_types.CHART not in types
    assert not {pulumi_types.MANAGED_NODE_GROUP, pulumi_types.ROLE} & types  # Auto Mode's nodes, pulumi-eks's role
    assert not any("karpenter.k8s.aws" in t for t in types)  # no EC2NodeClass: Auto Mode's default NodeClass


def test_only_the_add_ons_auto_mode_does_not_run_itself(program: ProgramRun) -> None:
    addons = sorted(r.inputs["addonName"] for r in _of_type(program, pulumi_types.ADDON))
    assert addons == ["coredns"]


def test_each_gpu_node_pool_is_on_the_default_node_class(program: ProgramRun) -> None:
    pools = {r.name: r.inputs for r in _of_type(program, pulumi_types.KARPENTER_NODE_POOL)}
    assert sorted(pools) == [f"{CLUSTER}-l4", f"{CLUSTER}-l40s"]
    l4 = pools[f"{CLUSTER}-l4"]["spec"]
    template = l4["template"]["spec"]
    assert template["nodeClassRef"] == {"group": "eks.amazonaws.com", "kind": "NodeClass", "name": "default"}
    assert {"key": "node.kubernetes.io/instance-type", "operator": "In", "values": ["g6.xlarge", "g6.2xlarge"]} \
        in template["requirements"]
    assert {"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["spot", "on-demand"]} \
        in template["requirements"]
    assert {"key": "eks.amazonaws.com/instance-gpu-manufacturer", "operator": "In", "values": ["nvidia"]} \
        in template["requirements"]
    # the taint AWS's Auto Mode GPU NodePool examples set, and the labels a DRA node group's nodes carry
    assert template["taints"] == [{"key": "nvidia.com/gpu", "value": "true", "effect": "NoSchedule"}]
    labels = l4["template"]["metadata"]["labels"]
    assert labels["gpu-dra.io/allocation"] == "dra" and labels["gpu-dra.io/node-group"] == "l4"
    assert l4["limits"] == {"nodes": 4}


def test_the_teams_objects_and_classes_are_still_declared(program: ProgramRun) -> None:
    classes = {r.name for r in _of_type(program, "kubernetes:resource.k8s.io/v1:DeviceClass")}
    templates = {r.name for r in _of_type(program, "kubernetes:resource.k8s.io/v1:ResourceClaimTemplate")}
    assert classes == {"deviceclass-gpu-l4", "deviceclass-gpu-l40s"}
    assert templates == {"serving.l4", "serving.l40s-two"}


# ---------------------------------------------------------------------------------------------- stack file mistakes
def _auto_mode_pool(**changes: Any) -> dict[str, Any]:
    return {"name": "l4", "instanceTypes": ["g6.xlarge"], "maxNodes": 2, **changes}


MISTAKES = [
    ("below-1.36", lambda c: c["gpu-dra:cluster"].update(kubernetesVersion="1.35"),
     "gpu-dra:autoMode: EKS Auto Mode runs its NVIDIA DRA driver from Kubernetes 1.36"),
    ("beside-node-groups", lambda c: c.update({"gpu-dra:nodeGroups": [
        {"name": "a", "instanceTypes": ["g6.xlarge"], "scaling": {"min": 0, "desired": 0, "max": 1}}]}),
     "gpu-dra:nodeGroups: an Auto Mode stack serves GPUs from gpu-dra:autoMode.nodePools only"),
    ("beside-karpenter", lambda c: c.update({"gpu-dra:karpenter": {"nodePools": [_auto_mode_pool(name="k")]}}),
     "gpu-dra:karpenter: an Auto Mode stack serves GPUs from gpu-dra:autoMode.nodePools only"),
    ("system-node-group", lambda c: c["gpu-dra:cluster"].update(systemNodeGroup={"instanceTypes": ["t3.large"]}),
     "gpu-dra:cluster.systemNodeGroup: Auto Mode's built-in system and general-purpose NodePools"),
    ("kube-proxy-pinned", lambda c: c["gpu-dra:cluster"].update(addonVersions={"kube-proxy": "v1.36.0-eksbuild.1"}),
     "gpu-dra:cluster.addonVersions.kube-proxy: Auto Mode runs kube-proxy itself"),
    ("driver-gates", lambda c: c["gpu-dra:draDriver"].update(featureGates={"TimeSlicingSettings": True}),
     "gpu-dra:draDriver.featureGates: Auto Mode runs its own NVIDIA DRA driver, so gpu-dra installs no chart"),
    ("built-in-name", lambda c: c["gpu-dra:autoMode"]["nodePools"].append(_auto_mode_pool(name="system")),
     "gpu-dra:autoMode.nodePools[2].name: 'system' is an Auto Mode built-in NodePool's name"),
    ("own-domain-label", lambda c: c["gpu-dra:autoMode"]["nodePools"].append(
        _auto_mode_pool(name="x", labels={"eks.amazonaws.com/instance-family": "g6"})),
     "gpu-dra:autoMode.nodePools[2].labels['eks.amazonaws.com/instance-family']: eks.amazonaws.com/instance-family: "
     "labels of eks.amazonaws.com are Auto Mode's own"),
    ("duplicate-pool", lambda c: c["gpu-dra:autoMode"]["nodePools"].append(_auto_mode_pool()),
     "gpu-dra:autoMode.nodePools[2].name: 'l4' is already used by nodePools[0]"),
    ("existing-cluster", lambda c: c["gpu-dra:cluster"].update(platform="existing"),
     "gpu-dra:autoMode: only for platform eks"),
]


@pytest.mark.parametrize(("change", "expected"), [m[1:] for m in MISTAKES], ids=[m[0] for m in MISTAKES])
def test_each_auto_mode_mistake_is_refused_on_its_line(project: Project, change: Any, expected: str) -> None:
    project.edit_stack(STACK, change)
    assert any(expected in problem for problem in _problems(project, STACK)), _problems(project, STACK)


def test_a_family_auto_mode_does_not_launch_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every NVIDIA family of gpu-dra's catalog is one Auto Mode launches today; a type added to the catalog that is
    not (as g6 is not, here) is refused with the families it has."""
    from gpu_dra.core.facts.hardware import INSTANCE_TYPES

    assert {t.split(".")[0] for t in INSTANCE_TYPES} <= set(auto_mode.GPU_FAMILIES)
    monkeypatch.setattr(auto_mode, "GPU_FAMILIES", tuple(f for f in auto_mode.GPU_FAMILIES if f != "g6"))
    with pytest.raises(ValueError, match=r"EKS Auto Mode launches no g6.xlarge: its NVIDIA GPU families are p6-b200"):
        AutoModeNodePool.model_validate(_auto_mode_pool())


def test_a_chart_class_is_unknown_on_auto_mode(project: Project) -> None:
    project.edit("stacks/teams/serving.yaml", lambda team: team["claimTemplates"][0]["requests"][0].update(
        deviceClass="gpu.nvidia.com"))
    assert any("claimTemplates[0].requests[0].deviceClass: class 'gpu.nvidia.com' is neither declared by this "
               "stack's gpu-dra:deviceClasses nor known to be created by Auto Mode" in p
               for p in _problems(project, STACK))


# -------------------------------------------------------------------------------------------------------- verdicts
def _judge(*requests: dict[str, Any]) -> Any:
    explainer = Explainer({"gpu-l4": [L4]}, features=features_for(Target("1.36")))
    return ProvisioningJudge(explainer, DEFAULT_LEVEL).judge(_claim(*requests), [
        LaunchedPool("l4", ("g6.xlarge", "g6.12xlarge"), True, "", 2)])


def test_auto_mode_judges_each_type_on_the_devices_it_would_have() -> None:
    assert _judge(_exactly("gpu", "gpu-l4", 4)).types == {"l4": ["g6.12xlarge"]}
    never = _judge(_exactly("gpu", "gpu-l4", 8))
    assert not never.provisionable
    assert never.reasons["l4"] == ("g6.xlarge: request gpu needs 8 device(s), but at most 1 match on one node "
                                   "(g6.xlarge-0); g6.12xlarge: request gpu needs 8 device(s), but at most 4 match "
                                   "on one node (g6.12xlarge-0)")


def test_karpenters_pre_launch_refusals_are_not_assumed_of_auto_mode() -> None:
    """AWS does not say Auto Mode shares them: a driverVersion selector is judged on the devices."""
    selector = "device.attributes['gpu.nvidia.com'].driverVersion.isGreaterThan(semver('1.0.0'))"
    assert _judge(_exactly("gpu", "gpu-l4", 1, selector)).provisionable


def test_explain_names_auto_mode_and_what_it_assumes() -> None:
    done = gpu_dra("explain", "--stack", STACK)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith(f"Devices from stack {STACK}'s EKS Auto Mode NodePools at their node limits")
    assert "  EKS Auto Mode: provisionable on l4: g6.xlarge, g6.2xlarge" in lines
    for what in auto_mode.UNDOCUMENTED.values():
        assert f"note: EKS Auto Mode does not document {what}" in lines


def test_check_reports_a_template_no_auto_mode_type_serves(project: Project) -> None:
    project.edit("stacks/teams/serving.yaml", lambda team: team["claimTemplates"].append(
        {"name": "eight-l4", "requests": [{"name": "gpu", "deviceClass": "gpu-l4", "count": 8}]}))
    done = gpu_dra("check", "--stack", STACK, cwd=project.root)
    assert done.returncode == 0, done.stdout + done.stderr  # advisory in dev; mandatory in prod
    assert "claim template serving/eight-l4 cannot be allocated on any GPU node of this stack (its NodePools' " \
           "instance types at their node limits, so EKS Auto Mode would never launch a node for it)" in done.stdout
    assert done.stdout.count("[advisory]") == 1  # the other templates: nothing


def test_check_is_clean_on_the_example() -> None:
    done = gpu_dra("check", "--stack", STACK)
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"stack {STACK}: 0 mandatory, 0 advisory violation(s)" in done.stdout


def test_no_verb_assumes_the_charts_classes_on_auto_mode(tmp_path: Path) -> None:
    """No chart runs there: migrate finds no chart mapping for nvidia.com/gpu, and explain and migrate judge a claim
    of gpu.nvidia.com as the scheduler would, with no such class, as the stack file's validation refuses it."""
    migrated = gpu_dra("migrate", "--stack", STACK, "examples/migrate/deployment-web.yaml")
    assert "DeviceClass gpu.nvidia.com (the DRA driver chart)" not in migrated.stdout
    assert "no DeviceClass maps nvidia.com/gpu" in migrated.stdout
    assert "NOT allocatable: request gpu: device class gpu.nvidia.com does not exist" in migrated.stdout
    claim = tmp_path / "claim.yaml"
    claim.write_text(yaml.safe_dump({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
                                     "metadata": {"name": "any-gpu", "namespace": "serving"},
                                     "spec": {"devices": {"requests": [
                                         {"name": "gpu", "exactly": {"deviceClassName": "gpu.nvidia.com"}}]}}}))
    explained = gpu_dra("explain", "--stack", STACK, str(claim), "--claim", "serving/any-gpu")
    assert explained.returncode == 1
    assert "device class gpu.nvidia.com does not exist" in explained.stdout
    assert "judged as NVIDIA's chart defines it" not in explained.stdout

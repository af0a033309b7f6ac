"""The policy pack: the repo's stacks pass; each bad stack fails with its rule id; rules understand the resource
types of a real preview too. Policies run as the engine runs them: StackValidationPolicy.validate(args, report)."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from pulumi_policy import StackValidationArgs

from gpu_dra.cli.check import _policy_resources, check_stack, pack_config
from gpu_dra.cli.offline import ProgramRun, Registration, run_program
from gpu_dra.core import policy
from gpu_dra.core.loader import load_stack, stack_values
from gpu_dra.policypack import policies

from .conftest import ROOT, STACKS, Project
from .test_cli import gpu_dra

TODAY = {"today": "2026-11-29"}


def run_rules(run: ProgramRun, environment: str, config: dict[str, Any] | None = None) -> dict[str, list[str]]:
    """Violations per rule id, from the pack's own policy objects."""
    resources = _policy_resources(run)
    found: dict[str, list[str]] = {}
    for pack_policy in policies(environment):
        messages: list[str] = []
        pack_policy.validate(StackValidationArgs(resources, {**TODAY, "environment": environment, **(config or {})}),
                             lambda message, urn=None, sink=messages: sink.append(message))
        if messages:
            found[pack_policy.name] = messages
    return found


def program(root: Path, stack: str) -> ProgramRun:
    values, _ = stack_values(root, stack)
    return run_program(root, stack, values)


@pytest.mark.parametrize("stack", STACKS)
def test_repo_stacks_have_no_mandatory_violations(stack: str) -> None:
    found = check_stack(ROOT, stack, {"kubernetes-version-supported": TODAY})
    assert [f.violation for f in found if f.violation.enforcement == policy.MANDATORY] == []


def test_prod_passes_every_rule() -> None:
    assert run_rules(program(ROOT, "prod"), "prod") == {}


def _edit_template(selector_or_fields: dict[str, Any]):
    def change(team: dict[str, Any]) -> None:
        team["claimTemplates"][0]["requests"][0].update(selector_or_fields)
    return change


def test_seed_template_selector_fails_dra_cel_compiles(project: Project) -> None:
    project.edit("stacks/teams/inference.yaml", _edit_template({"match": None, "selectors": [
        'device.attributes["gpu.nvidia.com"].memory.quantity >= quantity("20Gi")']}))
    found = run_rules(program(project.root, "dev"), "dev")
    assert any("found no matching overload for '_>=_'" in m for m in found["dra-cel-compiles"])
    assert any("capacity-as-attribute" in m for m in found["dra-cel-lint"])


def test_extended_resource_name_on_eks_1_34_fails_dra_feature_gates(project: Project) -> None:
    project.edit_stack("dev", lambda c: c.update({"gpu-dra:legacyMappings": [
        {"extendedResourceName": "nvidia.com/gpu-l4", "deviceClass": "gpu-l4"}]}))
    found = run_rules(program(project.root, "dev"), "dev")
    assert any("extendedResourceName needs DRAExtendedResource, alpha" in m for m in found["dra-feature-gates"])


def test_consumable_capacity_on_1_34_fails_dra_feature_gates(project: Project) -> None:
    project.edit("stacks/teams/inference.yaml", _edit_template({"capacity": {"memory": "10Gi"}}))
    found = run_rules(program(project.root, "dev"), "dev")
    assert any("capacity requests needs DRAConsumableCapacity" in m for m in found["dra-feature-gates"])


def test_consumable_capacity_is_fine_on_1_36(project: Project) -> None:
    project.edit("stacks/teams/inference.yaml", _edit_template({"capacity": {"memory": "10Gi"}}))
    assert "dra-feature-gates" not in run_rules(program(project.root, "staging"), "staging")


def _with(run: ProgramRun, change) -> ProgramRun:
    resources = [copy.deepcopy(r) for r in run.resources]
    return ProgramRun(run.stack, [r for r in (change(r) for r in resources) if r is not None], run.outputs)


def test_device_plugin_and_dra_on_one_node_group_fails() -> None:
    """gpu-dra's own values keep the plugins apart, so break them as a hand-edited device plugin install would."""
    def default_device_plugin(r: Registration) -> Registration:
        if r.type == "kubernetes:helm.sh/v4:Chart" and r.name == "nvidia-device-plugin":
            r.inputs["values"] = {"nvidiaDriverRoot": "/"}
        return r
    found = run_rules(_with(program(ROOT, "prod"), default_device_plugin), "prod")
    shared = found["no-device-plugin-on-dra-nodes"]
    assert [m.split(":")[0] for m in shared] == ["node group h100", "node group l40s"]
    assert "each advertises every GPU, so pods would silently share them" in shared[0]


def test_missing_class_fails_dra_device_class_exists() -> None:
    run = _with(program(ROOT, "prod"),
                lambda r: None if r.type.endswith(":DeviceClass") and r.name == "deviceclass-gpu-l40s" else r)
    found = run_rules(run, "prod")
    assert any("device class 'gpu-l40s' is neither declared" in m for m in found["dra-device-class-exists"])


def test_prod_without_quota_fails_team_quota_required(project: Project) -> None:
    project.edit("stacks/teams/inference.yaml", lambda team: team.update({"quota": {}}))
    project.edit_stack("prod", lambda c: c["gpu-dra:teams"].update({"inference": {}}))
    found = check_stack(project.root, "prod", {"kubernetes-version-supported": TODAY})
    quota = [f for f in found if f.violation.policy == "team-quota-required"]
    assert quota and all(f.violation.enforcement == policy.MANDATORY for f in quota)
    assert quota[0].file == "stacks/teams/inference.yaml"


def test_two_classes_mapping_one_extended_resource(project: Project) -> None:
    project.edit_stack("staging", lambda c: c.update({"gpu-dra:legacyMappings": [
        {"extendedResourceName": "nvidia.com/gpu", "deviceClass": "gpu-l40s"}]}))
    found = run_rules(program(project.root, "staging"), "staging")
    assert any("nvidia.com/gpu is also DeviceClass gpu.nvidia.com (installed by the chart)'s" in m
               for m in found["extended-resource-unique"])


def test_time_slicing_without_its_driver_gate() -> None:
    """Config validation refuses this stack, so the policy sees it only in resources (e.g. a real preview)."""
    sharing = {"opaque": {"driver": "gpu.nvidia.com", "parameters": {
        "apiVersion": "resource.nvidia.com/v1beta1", "kind": "GpuConfig", "sharing": {"strategy": "TimeSlicing"}}}}

    def add_sharing(r: Registration) -> Registration:
        if r.name == "inference.l40s":
            r.inputs["spec"]["spec"]["devices"]["config"] = [sharing]
        return r
    found = run_rules(_with(program(ROOT, "prod"), add_sharing), "prod")
    assert found["nvidia-driver-gates"] == [
        "ResourceClaimTemplate inference/l40s uses TimeSlicing sharing, which the driver rejects unless "
        "TimeSlicingSettings: true"]


def test_alpha_driver_gate_in_production() -> None:
    def enable_gate(r: Registration) -> Registration:
        if r.type == "kubernetes:helm.sh/v4:Chart" and r.name == "nvidia-dra-driver":
            r.inputs["values"]["featureGates"] = {"TimeSlicingSettings": True}
        return r
    found = run_rules(_with(program(ROOT, "prod"), enable_gate), "prod")
    assert found["no-alpha-in-production"] == ["NVIDIA driver gate TimeSlicingSettings is alpha: not in production"]


def test_unprotected_gpu_group_in_prod_fails_eks_hardening() -> None:
    def unprotect(r: Registration) -> Registration:
        if r.name == "gpu-prod-h100" and r.type == "eks:index:ManagedNodeGroup":
            return Registration(r.type, r.name, r.urn, r.parent, r.custom, False, r.inputs, r.dependencies)
        return r
    found = run_rules(_with(program(ROOT, "prod"), unprotect), "prod")
    assert found["eks-hardening"] == ["GPU node group h100 is not protected against deletion (protect)"]


@pytest.mark.parametrize("today,expected", [
    ("2026-09-01", None),
    ("2026-11-29", "ends on 2026-12-02, in 3 days; plan the upgrade"),
    ("2026-12-01", "ends on 2026-12-02, in 1 day; plan the upgrade"),
    ("2026-12-02", "ends today (2026-12-02); plan the upgrade"),
    ("2026-12-03", "ended on 2026-12-02 (extended support costs more); plan the upgrade"),
])
def test_kubernetes_version_support_window(today: str, expected: str | None) -> None:
    found = run_rules(program(ROOT, "dev"), "dev", {"today": today})
    assert found.get("kubernetes-version-supported") == (
        [f"EKS standard support for Kubernetes 1.34 {expected}"] if expected else None)


def test_unsatisfiable_template_is_advisory_outside_prod() -> None:
    found = check_stack(ROOT, "dev", {"kubernetes-version-supported": TODAY})
    satisfiable = [f for f in found if f.violation.policy == "dra-claim-satisfiable"]
    assert {f.violation.enforcement for f in satisfiable} == {policy.ADVISORY}
    assert any("ml-training/h100-x8" in f.violation.message for f in satisfiable)


def test_unsatisfiable_template_advisory_names_a_command_that_runs() -> None:
    found = check_stack(ROOT, "dev", {"kubernetes-version-supported": TODAY})
    message = next(f.violation.message for f in found if f.violation.policy == "dra-claim-satisfiable"
                   and "ml-training/h100-x8" in f.violation.message)
    command = message.split("`")[1]
    assert command == "gpu-dra explain --stack dev --claim ml-training/h100-x8"
    result = gpu_dra(*command.split()[1:])
    assert result.returncode == 1, result.stderr  # runs, and says the template is not allocatable
    assert "claim ml-training/h100-x8: NOT allocatable" in result.stdout


# ------------------------------------------------------------------------------------ real-preview resource types


def _registration(type_: str, name: str, inputs: dict[str, Any], protect: bool = False) -> Registration:
    return Registration(type_, name, f"urn:pulumi:prod::gpu-dra::{type_}::{name}", "", True, protect, inputs)


def test_rules_read_real_preview_types() -> None:
    run = ProgramRun("prod", [
        _registration("aws:eks/cluster:Cluster", "gpu-prod", {
            "version": "1.35", "tags": {"gpu-dra.io/environment": "prod"},
            "vpcConfig": {"endpointPublicAccess": True, "publicAccessCidrs": ["0.0.0.0/0"]}}),
        _registration("aws:eks/nodeGroup:NodeGroup", "gpu-prod-mixed", {
            "instanceTypes": ["g5.xlarge"], "scalingConfig": {"maxSize": 2.0},
            "labels": {"gpu-dra.io/node-group": "mixed", "nvidia.com/gpu.present": "true"},
            "taints": [{"key": "nvidia.com/gpu", "value": "true", "effect": "NO_SCHEDULE"}]}, protect=True),
        _registration("kubernetes:apps/v1:DaemonSet", "dra-kubelet-plugin", {
            "metadata": {"name": "nvidia-dra-driver-kubelet-plugin"},
            "spec": {"template": {"spec": {"nodeSelector": {"nvidia.com/gpu.present": "true"},
                                           "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists"}]}}}}),
        _registration("kubernetes:apps/v1:DaemonSet", "nvidia-device-plugin", {
            "metadata": {"name": "nvidia-device-plugin-daemonset"},
            "spec": {"template": {"spec": {"tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists"}]}}}}),
    ], {})
    found = run_rules(run, "prod")
    assert found["no-device-plugin-on-dra-nodes"][0].startswith("node group mixed: both NVIDIA's device plugin")
    assert "the API endpoint is open to the world (0.0.0.0/0)" in found["eks-hardening"]
    assert "secrets envelope encryption with a KMS key is off" in found["eks-hardening"]


def test_context_comes_from_resources_before_config() -> None:
    resources = [policy.Resource("eks:index:Cluster", "c", "urn:c", {"version": "1.36",
                                                                      "tags": {"gpu-dra.io/environment": "prod"}})]
    context = policy.context_from(resources, {"kubernetesVersion": "1.34", "environment": "dev"})
    assert (context.kubernetes_version, context.environment) == ("1.36", "prod")
    assert policy.context_from([], {"kubernetesVersion": "1.35", "platform": "existing"}).platform == "existing"


def test_enforcement_defaults_and_overrides() -> None:
    lint = policy.RULES_BY_NAME["dra-cel-lint"]
    compiles = policy.RULES_BY_NAME["dra-cel-compiles"]
    assert policy.enforcement(compiles, "dev", {}) == policy.MANDATORY
    assert policy.enforcement(lint, "dev", {}) == policy.ADVISORY
    assert policy.enforcement(lint, "prod", {}) == policy.MANDATORY
    assert policy.enforcement(lint, "prod", {"dra-cel-lint": {"enforcementLevel": "advisory"}}) == policy.ADVISORY
    assert policy.enforcement(lint, "prod", {"dra-cel-lint": "disabled"}) == "disabled"
    assert policy.enforcement(lint, "dev", {"all": "mandatory"}) == policy.MANDATORY


@pytest.mark.parametrize("stack", STACKS)
def test_committed_pack_configs_are_current(stack: str) -> None:
    committed = json.loads((ROOT / "policies" / f"config.{stack}.json").read_text())
    assert committed == pack_config(load_stack(ROOT, stack)), "run `make pack-config`"


def test_check_cli_json_and_sarif() -> None:
    result = gpu_dra("check", "--stack", "dev", "--format", "json")
    assert result.returncode == 0, result.stderr
    document = json.loads(result.stdout)
    assert document["stacks"][0]["stack"] == "dev"
    assert {"policy", "enforcement", "resource", "message"} <= set(document["stacks"][0]["violations"][0])
    sarif = json.loads(gpu_dra("check", "--stack", "dev", "--format", "sarif").stdout)
    assert sarif["version"] == "2.1.0"
    location = sarif["runs"][0]["results"][0]["locations"][0]["physicalLocation"]
    assert location["artifactLocation"]["uri"].startswith("stacks/") and location["region"]["startLine"] >= 1


def test_check_cli_exits_1_on_mandatory(project: Project) -> None:
    project.edit("stacks/teams/inference.yaml", _edit_template({"match": None, "selectors": ["1 == 1 &&"]}))
    result = gpu_dra("--project-dir", str(project.root), "check", "--stack", "dev")
    assert result.returncode == 1
    assert "[mandatory] dra-cel-compiles  stacks/teams/inference.yaml:" in result.stdout


@pytest.mark.parametrize("gates,violations", [({}, 1), ({"DRAExtendedResource": True}, 0)])
def test_existing_clusters_feature_gates_decide_dra_feature_gates(project: Project, gates: dict[str, bool],
                                                                   violations: int) -> None:
    """`gpu-dra check` reads an existing cluster's declared gates: extendedResourceName on 1.34 passes only where
    the cluster runs DRAExtendedResource."""
    def existing(config: dict[str, Any]) -> None:
        config["gpu-dra:cluster"] = {"name": "lab", "platform": "existing", "kubernetesVersion": "1.34",
                                     "kubeconfig": {"path": "~/.kube/config"}, "featureGates": gates}
        config["gpu-dra:legacyMappings"] = [{"extendedResourceName": "nvidia.com/gpu-l4", "deviceClass": "gpu-l4"}]
    project.edit_stack("dev", existing)
    found = [f for f in check_stack(project.root, "dev") if f.violation.policy == "dra-feature-gates"]
    assert len(found) == violations, found
    assert all("extendedResourceName needs DRAExtendedResource" in f.violation.message for f in found)

"""The policy pack. Each rule on a happy-path stack's resources (tests/policy_builders.py) with one field changed:
that rule, and only that rule, reports it, on the resource it names. Then the repo's own stacks, run as the engine
runs them (StackValidationPolicy.validate(args, report)), pass; and rules read the resource types of a real preview.

Rules return messages, and the stack rules a URN: tests assert the rule id, the number of violations and the URN,
never words parsed out of a message.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, NamedTuple

import pytest
from pulumi_policy import StackValidationArgs

from gpu_dra.cli.check import _policy_resources, check_stack, pack_config
from gpu_dra.cli.offline import ProgramRun, Registration, run_program
from gpu_dra.core import policy
from gpu_dra.core.config.loader import load_stack, stack_values
from gpu_dra.core.policy import Resource
from gpu_dra.core.render.manifests import ADMIN_ACCESS_LABEL
from gpu_dra.policypack import policies

from .conftest import ROOT, STACKS, Project, named
from .policy_builders import (
    CLUSTER,
    DAEMON_SET,
    DELETE,
    L40S_SELECTOR,
    NODE_GROUP,
    Hit,
    find,
    happy_resources,
    mutate,
    remove,
    resource,
    run_rules,
    violations,
)
from .test_cli import gpu_dra

TODAY = {"today": "2026-11-29"}

TEMPLATE = "ResourceClaimTemplate/inference.l40s"
REQUEST = ("spec", "spec", "devices", "requests", "[gpu]", "exactly")
CLASS = "DeviceClass/deviceclass-gpu-l40s"
DRA_CHART = "Chart/nvidia-dra-driver"
PLUGIN_CHART = "Chart/nvidia-device-plugin"
STACK = ""  # a violation reported on the stack, not on a resource


def selectors(*expressions: str) -> list[dict[str, Any]]:
    return [{"cel": {"expression": e}} for e in expressions]


def time_slicing() -> list[dict[str, Any]]:
    return [{"opaque": {"driver": "gpu.nvidia.com", "parameters": {
        "apiVersion": "resource.nvidia.com/v1beta1", "kind": "GpuConfig", "sharing": {"strategy": "TimeSlicing"}}}}]


Change = Callable[[list[Resource]], list[Resource]]


class Case(NamedTuple):
    rule: str
    change: Change
    reported_on: str  # `Kind/name` of the resource the violation names, or STACK
    environment: str = "prod"
    kubernetes_version: str = "1.34"
    config: dict[str, Any] | None = None


def case(id_: str, rule: str, change: Change, reported_on: str, **context: Any) -> Any:
    return pytest.param(Case(rule, change, reported_on, **context), id=f"{rule}: {id_}")


CASES = [
    case("an unbounded-cost quantity equality in a class", "dra-cel-compiles", lambda r: mutate(
        r, CLASS, ("spec", "selectors"),
        selectors(L40S_SELECTOR + " && device.capacity['gpu.nvidia.com'].memory == quantity('46068Mi')")), CLASS),
    case("a class selector without a driver check", "dra-cel-lint", lambda r: mutate(
        r, CLASS, ("spec", "selectors"),
        selectors("device.attributes['gpu.nvidia.com'].productName.matches('L40S')")), CLASS),
    case("an unguarded pcieRoot lookup in a request", "dra-cel-lint", lambda r: mutate(
        r, TEMPLATE, (*REQUEST, "selectors"),
        selectors("device.attributes['resource.kubernetes.io'].pcieRoot != ''")), TEMPLATE),
    case("more GPUs than a node of the group has", "dra-claim-satisfiable", lambda r: mutate(
        r, TEMPLATE, (*REQUEST, "count"), 5.0), TEMPLATE),
    case("the L40S group turned into L4s", "dra-claim-satisfiable", lambda r: mutate(
        r, "ManagedNodeGroup/gpu-prod-l40s", ("instanceTypes",), ["g6.xlarge"]), TEMPLATE),
    case("a version compared with a string", "dra-selector-safe-on-fleet", lambda r: mutate(
        r, CLASS, ("spec", "selectors"),
        selectors(L40S_SELECTOR + " && device.attributes['gpu.nvidia.com'].driverVersion >= '570'")), TEMPLATE),
    case("a capacity request on 1.34", "dra-feature-gates", lambda r: mutate(
        r, TEMPLATE, (*REQUEST, "capacity"), {"requests": {"memory": "10Gi"}}), TEMPLATE, environment="dev"),
    case("an extended resource name on 1.34", "dra-feature-gates", lambda r: mutate(
        r, CLASS, ("spec", "extendedResourceName"), "nvidia.com/gpu-l40s"), CLASS, environment="dev"),
    case("an alpha driver gate", "no-alpha-in-production", lambda r: mutate(
        r, DRA_CHART, ("values", "featureGates"), {"TimeSlicingSettings": True}), STACK),
    case("time-slicing without its driver gate", "nvidia-driver-gates", lambda r: mutate(
        r, TEMPLATE, ("spec", "spec", "devices", "config"), time_slicing()), STACK),
    case("an unknown driver gate", "nvidia-driver-gates", lambda r: mutate(
        r, DRA_CHART, ("values", "featureGates"), {"NoSuchGate": True}), STACK),
    case("the chart's own nvidia.com/gpu mapping taken", "extended-resource-unique", lambda r: mutate(
        r, CLASS, ("spec", "extendedResourceName"), "nvidia.com/gpu"), CLASS, kubernetes_version="1.36"),
    case("the device plugin on its chart defaults", "no-device-plugin-on-dra-nodes", lambda r: mutate(
        r, PLUGIN_CHART, ("values",), {"nvidiaDriverRoot": "/"}), "ManagedNodeGroup/gpu-prod-l40s"),
    case("the kubelet plugin on its chart defaults", "no-device-plugin-on-dra-nodes", lambda r: mutate(
        r, DRA_CHART, ("values", "kubeletPlugin", "nodeSelector"), DELETE), "ManagedNodeGroup/gpu-prod-legacy-a10g"),
    case("no chart version", "dra-driver-chart-pinned", lambda r: mutate(r, DRA_CHART, ("version",), DELETE),
         DRA_CHART),
    case("gpuResourcesEnabledOverride off", "dra-driver-chart-pinned", lambda r: mutate(
        r, DRA_CHART, ("values", "gpuResourcesEnabledOverride"), False), DRA_CHART),
    case("a driver root neither the AMI's nor the GPU Operator's", "dra-driver-chart-pinned", lambda r: mutate(
        r, DRA_CHART, ("values", "nvidiaDriverRoot"), "/usr/local/nvidia"), DRA_CHART),
    case("the admin namespace unlabelled", "admin-access-restricted", lambda r: mutate(
        r, "Namespace/ops-namespace", ("metadata", "labels", ADMIN_ACCESS_LABEL), DELETE),
         "ResourceClaimTemplate/ops.all-gpus-monitoring"),
    case("adminAccess in a team namespace", "admin-access-restricted", lambda r: mutate(
        r, TEMPLATE, (*REQUEST, "adminAccess"), True), TEMPLATE),
    case("no quota", "team-quota-required", lambda r: remove(r, "ResourceQuota/inference-quota"), TEMPLATE),
    case("no claims quota", "team-quota-required", lambda r: mutate(
        r, "ResourceQuota/inference-quota", ("spec", "hard", "count/resourceclaims.resource.k8s.io"), DELETE),
         TEMPLATE),
    case("the template's class uncapped", "team-quota-required", lambda r: mutate(
        r, "ResourceQuota/inference-quota", ("spec", "hard", "gpu-l40s.deviceclass.resource.k8s.io/devices"),
        DELETE), TEMPLATE),
    case("an unprotected cluster", "eks-hardening", lambda r: mutate(r, "Cluster/gpu-prod", protect=False),
         "Cluster/gpu-prod"),
    case("a public endpoint without CIDRs", "eks-hardening", lambda r: mutate(
        r, "Cluster/gpu-prod", ("endpointPublicAccess",), True), "Cluster/gpu-prod"),
    case("no secrets encryption", "eks-hardening", lambda r: mutate(
        r, "Cluster/gpu-prod", ("encryptionConfigKeyArn",), DELETE), "Cluster/gpu-prod"),
    case("IMDSv1 allowed", "eks-hardening", lambda r: mutate(
        r, "LaunchTemplate/gpu-prod-l40s", ("metadataOptions", "httpTokens"), "optional"),
         "LaunchTemplate/gpu-prod-l40s"),
    case("an unprotected DRA group", "eks-hardening", lambda r: mutate(
        r, "ManagedNodeGroup/gpu-prod-l40s", protect=False), "ManagedNodeGroup/gpu-prod-l40s"),
    case("an unprotected device-plugin group", "eks-hardening", lambda r: mutate(
        r, "ManagedNodeGroup/gpu-prod-legacy-a10g", protect=False), "ManagedNodeGroup/gpu-prod-legacy-a10g"),
    case("3 days before the end of support", "kubernetes-version-supported", lambda r: r, "Cluster/gpu-prod",
         config={"today": "2026-11-29"}),
    case("after the end of support", "kubernetes-version-supported", lambda r: r, "Cluster/gpu-prod",
         config={"today": "2026-12-03"}),
]


def urn(resources: Sequence[Resource], target: str) -> str:
    return find(resources, target).urn if target else ""


@pytest.mark.parametrize("environment", ["dev", "staging", "prod"])
@pytest.mark.parametrize("kubernetes_version", ["1.34", "1.35", "1.36"])
def test_happy_stack_passes_every_rule(environment: str, kubernetes_version: str) -> None:
    """The baseline every case changes: a failure below is the change's doing."""
    assert run_rules(happy_resources(environment, kubernetes_version)) == {}


@pytest.mark.parametrize("case", CASES)
def test_one_change_fails_one_rule(case: Case) -> None:
    resources = case.change(happy_resources(case.environment, case.kubernetes_version))
    found = run_rules(resources, case.config)
    assert set(found) == {case.rule}, found
    assert [hit.urn for hit in found[case.rule]] == [urn(resources, case.reported_on)]


def test_every_rule_has_a_failing_case() -> None:
    """A new rule needs a case. dra-device-class-exists cannot fail alone (a missing class also makes the claim
    unsatisfiable): test_a_missing_class_fails_dra_device_class_exists covers it."""
    assert {c.values[0].rule for c in CASES} | {"dra-device-class-exists"} == set(policy.RULES_BY_NAME)


def test_an_alpha_field_in_production_fails_two_rules() -> None:
    """Off on EKS (dra-feature-gates) and alpha in production (no-alpha-in-production): two facts, two rules."""
    resources = mutate(happy_resources("prod"), TEMPLATE, (*REQUEST, "capacity"), {"requests": {"memory": "10Gi"}})
    found = run_rules(resources)
    assert set(found) == {"dra-feature-gates", "no-alpha-in-production"}
    assert [hit.urn for hit in found["dra-feature-gates"] + found["no-alpha-in-production"]] == \
        [urn(resources, TEMPLATE)] * 2


def test_a_missing_class_fails_dra_device_class_exists() -> None:
    """The claim is then also unsatisfiable, and dra-claim-satisfiable says so too (see the xfail below)."""
    resources = remove(happy_resources(), CLASS)
    found = run_rules(resources)
    assert set(found) == {"dra-device-class-exists", "dra-claim-satisfiable"}
    assert [hit.urn for hit in found["dra-device-class-exists"]] == [urn(resources, TEMPLATE)]


@pytest.mark.xfail(strict=True, reason="dra-claim-satisfiable repeats what dra-device-class-exists and "
                                       "dra-cel-compiles report (it skips only CEL runtime errors, which "
                                       "dra-selector-safe-on-fleet reports)")
@pytest.mark.parametrize("rule,change", [
    ("dra-device-class-exists", lambda r: remove(r, CLASS)),
    ("dra-cel-compiles", lambda r: mutate(r, TEMPLATE, (*REQUEST, "selectors"), selectors("device.driver =="))),
])
def test_one_mistake_is_reported_once(rule: str, change: Change) -> None:
    assert set(violations(change(happy_resources()))) == {rule}


@pytest.mark.xfail(strict=True, raises=ValueError,
                   reason="an unpinned chart version crashes dra-cel-lint, dra-claim-satisfiable, "
                          "dra-selector-safe-on-fleet and nvidia-driver-gates (Context.driver_level and "
                          "driver.gate_conflicts parse it) instead of failing dra-driver-chart-pinned")
@pytest.mark.parametrize("version", ["latest", "0.4", ">=0.4.0"])
def test_an_unpinned_chart_version_fails_dra_driver_chart_pinned(version: str) -> None:
    assert set(violations(mutate(happy_resources(), DRA_CHART, ("version",), version))) == \
        {"dra-driver-chart-pinned"}


@pytest.mark.xfail(strict=True, reason="dra-cel-lint lints a request's selectors as if every device type reached "
                                       "them unless the class is one of the chart's: a stack class admitting only "
                                       "GPUs (type == 'gpu') still gets 'missing on vfio devices'")
def test_a_request_may_read_gpu_attributes_its_class_guarantees() -> None:
    resources = mutate(happy_resources(), TEMPLATE, (*REQUEST, "selectors"), selectors(
        "device.capacity['gpu.nvidia.com'].memory.compareTo(quantity('40Gi')) >= 0"))
    assert run_rules(resources) == {}


def _cuda_major_affinity(operator: str, value: str) -> dict[str, Any]:
    return {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
        {"matchExpressions": [{"key": "gpu-dra.io/cuda-major", "operator": operator, "values": [value]}]}]}}}


@pytest.mark.parametrize("operator,value,shared", [("Gt", "11", True), ("Gt", "12", False), ("Lt", "13", True),
                                                   ("Lt", "12", False)])
def test_a_plugin_with_gt_or_lt_affinity_is_placed_not_fatal(operator: str, value: str, shared: bool) -> None:
    """Gt/Lt are valid node affinity operators (integer comparison): the overlap check places the plugin by them."""
    resources = mutate(happy_resources(), "ManagedNodeGroup/gpu-prod-l40s", ("labels", "gpu-dra.io/cuda-major"), "12")
    resources = mutate(resources, PLUGIN_CHART, ("values",), {"nvidiaDriverRoot": "/",
                                                             "affinity": _cuda_major_affinity(operator, value)})
    found = run_rules(resources)
    assert set(found) == ({"no-device-plugin-on-dra-nodes"} if shared else set())
    if shared:
        assert [hit.urn for hit in found["no-device-plugin-on-dra-nodes"]] == \
            [urn(resources, "ManagedNodeGroup/gpu-prod-l40s")]


# ------------------------------------------------------------------------------------ real-preview resource types


def test_rules_read_real_preview_types() -> None:
    """pulumi-eks components are remote: a real preview shows aws:eks resources and chart-rendered DaemonSets."""
    resources = [
        resource("aws:eks/cluster:Cluster", "gpu-prod", {
            "version": "1.35", "tags": {"gpu-dra.io/environment": "prod"},
            "vpcConfig": {"endpointPublicAccess": True, "publicAccessCidrs": ["0.0.0.0/0"]}}),
        resource("aws:eks/nodeGroup:NodeGroup", "gpu-prod-mixed", {
            "instanceTypes": ["g5.xlarge"], "scalingConfig": {"maxSize": 2.0},
            "labels": {"gpu-dra.io/node-group": "mixed", "nvidia.com/gpu.present": "true"},
            "taints": [{"key": "nvidia.com/gpu", "value": "true", "effect": "NO_SCHEDULE"}]}, protect=True),
        resource(DAEMON_SET, "dra-kubelet-plugin", {
            "metadata": {"name": "nvidia-dra-driver-kubelet-plugin"},
            "spec": {"template": {"spec": {"nodeSelector": {"nvidia.com/gpu.present": "true"},
                                           "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists"}]}}}}),
        resource(DAEMON_SET, "nvidia-device-plugin", {
            "metadata": {"name": "nvidia-device-plugin-daemonset"},
            "spec": {"template": {"spec": {"tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists"}]}}}}),
    ]
    found = run_rules(resources)
    cluster, group = (urn(resources, target) for target in ("Cluster/gpu-prod", "NodeGroup/gpu-prod-mixed"))
    assert set(found) == {"no-device-plugin-on-dra-nodes", "eks-hardening"}
    assert [hit.urn for hit in found["no-device-plugin-on-dra-nodes"]] == [group]
    # the open endpoint, no encryption, no protect: three findings, all on the cluster
    assert [hit.urn for hit in found["eks-hardening"]] == [cluster] * 3
    assert policy.context_from(resources, {}).kubernetes_version == "1.35"


def test_context_comes_from_resources_before_config() -> None:
    resources = [resource(CLUSTER, "c", {"version": "1.36", "tags": {"gpu-dra.io/environment": "prod"}})]
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


# ------------------------------------------------------------------------------------ the repo's stacks, whole


def pack_hits(run: ProgramRun, environment: str, config: dict[str, Any] | None = None) -> dict[str, list[Hit]]:
    """Violations per rule id, from the pack's own policy objects, each with the URN it was reported on."""
    resources = _policy_resources(run)
    found: dict[str, list[Hit]] = {}
    for pack_policy in policies(environment):
        hits: list[Hit] = []
        pack_policy.validate(StackValidationArgs(resources, {**TODAY, "environment": environment, **(config or {})}),
                             lambda message, urn=None, sink=hits: sink.append(Hit(urn or "", message)))
        if hits:
            found[pack_policy.name] = hits
    return found


def pack_rules(run: ProgramRun, environment: str, config: dict[str, Any] | None = None) -> dict[str, list[str]]:
    """Violation messages per rule id."""
    return {rule: [hit.message for hit in hits] for rule, hits in pack_hits(run, environment, config).items()}


def program(root: Path, stack: str) -> ProgramRun:
    values, _ = stack_values(root, stack)
    return run_program(root, stack, values)


def registered(run: ProgramRun, type_: str, name: str) -> str:
    """The URN of the program's resource of that type and name."""
    found, = (r.urn for r in run.resources if r.type == type_ and r.name == name)
    return found


def _with(run: ProgramRun, change: Callable[[Registration], Registration | None]) -> ProgramRun:
    resources = [dataclasses.replace(r, inputs=json.loads(json.dumps(r.inputs))) for r in run.resources]
    return ProgramRun(run.stack, [r for r in (change(r) for r in resources) if r is not None], run.outputs)


@pytest.mark.parametrize("stack", STACKS)
def test_repo_stacks_have_no_mandatory_violations(stack: str) -> None:
    found = check_stack(ROOT, stack, {"kubernetes-version-supported": TODAY})
    assert [f.violation for f in found if f.violation.enforcement == policy.MANDATORY] == []


def test_prod_passes_every_rule() -> None:
    assert pack_rules(program(ROOT, "prod"), "prod") == {}


def _edit_template(selector_or_fields: dict[str, Any]) -> Callable[[dict[str, Any]], None]:
    """Change request `gpu` of the inference team's template gpu-20gb-any."""
    def change(team: dict[str, Any]) -> None:
        named(named(team["claimTemplates"], "gpu-20gb-any")["requests"], "gpu").update(selector_or_fields)
    return change


def test_seed_template_selector_fails_dra_cel_compiles(project: Project) -> None:
    project.edit("stacks/teams/inference.yaml", _edit_template({"match": None, "selectors": [
        'device.attributes["gpu.nvidia.com"].memory.quantity >= quantity("20Gi")']}))
    found = pack_rules(program(project.root, "dev"), "dev")
    assert any("found no matching overload for '_>=_'" in m for m in found["dra-cel-compiles"])
    assert any("capacity-as-attribute" in m for m in found["dra-cel-lint"])


def test_extended_resource_name_on_eks_1_34_fails_dra_feature_gates(project: Project) -> None:
    project.edit_stack("dev", lambda c: c.update({"gpu-dra:legacyMappings": [
        {"extendedResourceName": "nvidia.com/gpu-l4", "deviceClass": "gpu-l4"}]}))
    found = pack_rules(program(project.root, "dev"), "dev")
    assert any("extendedResourceName needs DRAExtendedResource, alpha" in m for m in found["dra-feature-gates"])


def test_consumable_capacity_on_1_34_fails_dra_feature_gates(project: Project) -> None:
    project.edit("stacks/teams/inference.yaml", _edit_template({"capacity": {"memory": "10Gi"}}))
    found = pack_rules(program(project.root, "dev"), "dev")
    assert any("capacity requests needs DRAConsumableCapacity" in m for m in found["dra-feature-gates"])


def test_consumable_capacity_is_fine_on_1_36(project: Project) -> None:
    project.edit("stacks/teams/inference.yaml", _edit_template({"capacity": {"memory": "10Gi"}}))
    assert "dra-feature-gates" not in pack_rules(program(project.root, "staging"), "staging")


def test_device_plugin_and_dra_on_one_node_group_fails() -> None:
    """gpu-dra's own values keep the plugins apart, so break them as a hand-edited device plugin install would:
    every DRA group of prod then runs both plugins."""
    def default_device_plugin(r: Registration) -> Registration:
        if r.type == "kubernetes:helm.sh/v4:Chart" and r.name == "nvidia-device-plugin":
            r.inputs["values"] = {"nvidiaDriverRoot": "/"}
        return r
    run = _with(program(ROOT, "prod"), default_device_plugin)
    found = pack_hits(run, "prod")
    assert sorted(hit.urn for hit in found["no-device-plugin-on-dra-nodes"]) == sorted(
        registered(run, NODE_GROUP, name) for name in ("gpu-prod-h100", "gpu-prod-l40s"))


def test_missing_class_fails_dra_device_class_exists() -> None:
    run = _with(program(ROOT, "prod"),
                lambda r: None if r.type.endswith(":DeviceClass") and r.name == "deviceclass-gpu-l40s" else r)
    found = pack_rules(run, "prod")
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
    found = pack_rules(program(project.root, "staging"), "staging")
    assert any("nvidia.com/gpu is also DeviceClass gpu.nvidia.com (installed by the chart)'s" in m
               for m in found["extended-resource-unique"])


def test_time_slicing_without_its_driver_gate() -> None:
    """Config validation refuses this stack, so the policy sees it only in resources (e.g. a real preview)."""
    def add_sharing(r: Registration) -> Registration:
        if r.name == "inference.l40s":
            r.inputs["spec"]["spec"]["devices"]["config"] = time_slicing()
        return r
    found = pack_rules(_with(program(ROOT, "prod"), add_sharing), "prod")
    assert found["nvidia-driver-gates"] == [
        "ResourceClaimTemplate inference/l40s uses TimeSlicing sharing, which the driver rejects unless "
        "TimeSlicingSettings: true"]


def test_alpha_driver_gate_in_production() -> None:
    def enable_gate(r: Registration) -> Registration:
        if r.type == "kubernetes:helm.sh/v4:Chart" and r.name == "nvidia-dra-driver":
            r.inputs["values"]["featureGates"] = {"TimeSlicingSettings": True}
        return r
    found = pack_rules(_with(program(ROOT, "prod"), enable_gate), "prod")
    assert found["no-alpha-in-production"] == ["NVIDIA driver gate TimeSlicingSettings is alpha: not in production"]


def test_unprotected_gpu_group_in_prod_fails_eks_hardening() -> None:
    def unprotect(r: Registration) -> Registration:
        if r.name == "gpu-prod-h100" and r.type == NODE_GROUP:
            return dataclasses.replace(r, protect=False)
        return r
    found = pack_rules(_with(program(ROOT, "prod"), unprotect), "prod")
    assert found["eks-hardening"] == ["GPU node group h100 is not protected against deletion (protect)"]


@pytest.mark.parametrize("today,expected", [
    ("2026-09-01", None),
    ("2026-11-29", "ends on 2026-12-02, in 3 days; plan the upgrade"),
    ("2026-12-01", "ends on 2026-12-02, in 1 day; plan the upgrade"),
    ("2026-12-02", "ends today (2026-12-02); plan the upgrade"),
    ("2026-12-03", "ended on 2026-12-02 (extended support costs more); plan the upgrade"),
])
def test_kubernetes_version_support_window(today: str, expected: str | None) -> None:
    found = pack_rules(program(ROOT, "dev"), "dev", {"today": today})
    assert found.get("kubernetes-version-supported") == (
        [f"EKS standard support for Kubernetes 1.34 {expected}"] if expected else None)


def _h100_x8(stack: str) -> str:
    return registered(program(ROOT, stack), "kubernetes:resource.k8s.io/v1:ResourceClaimTemplate", "training.h100-x8")


def test_unsatisfiable_template_is_advisory_outside_prod() -> None:
    found = check_stack(ROOT, "dev", {"kubernetes-version-supported": TODAY})
    satisfiable = [f for f in found if f.violation.policy == "dra-claim-satisfiable"]
    assert {f.violation.enforcement for f in satisfiable} == {policy.ADVISORY}
    assert _h100_x8("dev") in {f.violation.resource for f in satisfiable}


def test_unsatisfiable_template_advisory_names_a_command_that_runs() -> None:
    """The command in the message is what users copy: it must run and explain the same template."""
    found = check_stack(ROOT, "dev", {"kubernetes-version-supported": TODAY})
    message, = (f.violation.message for f in found if f.violation.policy == "dra-claim-satisfiable"
                and f.violation.resource == _h100_x8("dev"))
    command = message.split("`")[1]
    assert command == "gpu-dra explain --stack dev --claim ml-training/h100-x8"
    result = gpu_dra(*command.split()[1:])
    assert result.returncode == 1, result.stderr  # runs, and says the template is not allocatable
    assert "claim ml-training/h100-x8: NOT allocatable" in result.stdout


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


@pytest.mark.parametrize("gates,count", [({}, 1), ({"DRAExtendedResource": True}, 0)])
def test_existing_clusters_feature_gates_decide_dra_feature_gates(project: Project, gates: dict[str, bool],
                                                                   count: int) -> None:
    """`gpu-dra check` reads an existing cluster's declared gates: extendedResourceName on 1.34 passes only where
    the cluster runs DRAExtendedResource."""
    def existing(config: dict[str, Any]) -> None:
        config["gpu-dra:cluster"] = {"name": "lab", "platform": "existing", "kubernetesVersion": "1.34",
                                     "kubeconfig": {"path": "~/.kube/config"}, "featureGates": gates}
        config["gpu-dra:legacyMappings"] = [{"extendedResourceName": "nvidia.com/gpu-l4", "deviceClass": "gpu-l4"}]
    project.edit_stack("dev", existing)
    found = [f for f in check_stack(project.root, "dev") if f.violation.policy == "dra-feature-gates"]
    assert len(found) == count, found
    assert all("extendedResourceName needs DRAExtendedResource" in f.violation.message for f in found)

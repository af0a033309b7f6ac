"""The policy pack, run as the Pulumi engine runs it: registrations become the engine's requests (remote
components with no inputs, their children, outputs; gpu_dra.core.facts.policy.engine) and pulumi-policy's analyzer
service answers them. Each rule on a happy-path stack (tests/policy_builders.py) with one field changed: that rule,
and only that rule, reports it, on the resource the engine holds and at the props path it names. Then the repo's own
stacks pass.

Rules return Findings: tests assert their rule, object (URN) and path, never words parsed out of a message.
"""

from __future__ import annotations

import dataclasses
import json
import os
import random
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, NamedTuple

import pytest
from pulumi.runtime.proto import analyzer_pb2

from gpu_dra.cli import check
from gpu_dra.cli.check import StackFinding, as_sarif, check_stack, pack_config
from gpu_dra.cli.offline import ProgramRun, Registration, run_program
from gpu_dra.core import policy
from gpu_dra.core.analysis.explain import Explainer
from gpu_dra.core.checks.manifest_lint import lint_object, objects_in
from gpu_dra.core.config.loader import build_stack, load_stack, stack_values
from gpu_dra.core.data import UNKNOWN
from gpu_dra.core.facts.target import Target
from gpu_dra.core.findings import ERROR, NOT_JUDGED, Finding
from gpu_dra.core.policy import selectors as selector_rules
from gpu_dra.core.policy.engine import Registered
from gpu_dra.core.render.manifests import ADMIN_ACCESS_LABEL
from gpu_dra.core.yamlsource import parse_documents
from gpu_dra.policypack import policies, violation_message

from .conftest import ROOT, STACKS, Project, named
from .policy_builders import (
    DELETE,
    L40S_SELECTOR,
    LEGACY_WORKLOAD,
    MIG_SELECTOR,
    add,
    analyze,
    device_class,
    engine,
    find,
    happy_resources,
    mutate,
    pack_config_of,
    remove,
    resource,
    run_rules,
)
from .test_cli import gpu_dra

TODAY = {"today": "2026-11-29"}
TODAY_CONFIG = {"kubernetes-version-supported": TODAY}

TEMPLATE = "ResourceClaimTemplate/inference.l40s"
REQUEST = ("spec", "spec", "devices", "requests", "[gpu]", "exactly")
REQUEST_AT = "spec.spec.devices.requests[0].exactly"  # REQUEST as a Finding's path writes it
SELECTOR_AT = "selectors[0].cel.expression"
CLASS = "DeviceClass/deviceclass-gpu-l40s"
DRA_CHART = "Chart/nvidia-dra-driver"
PLUGIN_CHART = "Chart/nvidia-device-plugin"
EKS_CLUSTER = "Cluster/gpu-prod-eksCluster"  # the aws:eks/cluster:Cluster pulumi-eks registers for Cluster/gpu-prod
L40S_GROUP = "ManagedNodeGroup/gpu-prod-l40s"
LEGACY_GROUP = "ManagedNodeGroup/gpu-prod-legacy-a10g"
OPS_TEMPLATE = "ResourceClaimTemplate/ops.all-gpus-monitoring"
MIG_CLASS = "DeviceClass/deviceclass-mig-1g.10gb"


def selectors(*expressions: str) -> list[dict[str, Any]]:
    return [{"cel": {"expression": e}} for e in expressions]


def time_slicing() -> list[dict[str, Any]]:
    return [{"opaque": {"driver": "gpu.nvidia.com", "parameters": {
        "apiVersion": "resource.nvidia.com/v1beta1", "kind": "GpuConfig", "sharing": {"strategy": "TimeSlicing"}}}}]


Change = Callable[[list[Registered]], list[Registered]]


class Case(NamedTuple):
    rule: str
    change: Change
    reported_on: str  # `Kind/name` of the resource the finding names
    path: str  # where in its props ("" where no prop is at fault)
    environment: str = "prod"
    kubernetes_version: str = "1.34"
    config: dict[str, Any] | None = None


def case(id_: str, rule: str, change: Change, reported_on: str, path: str, **context: Any) -> Any:
    return pytest.param(Case(rule, change, reported_on, path, **context), id=f"{rule}: {id_}")


CASES = [
    case("an unbounded-cost quantity inequality in a class", "dra-cel-compiles", lambda r: mutate(
        r, CLASS, ("spec", "selectors"),
        selectors(L40S_SELECTOR + " && device.capacity['gpu.nvidia.com'].memory != quantity('1Gi')")), CLASS,
         f"spec.{SELECTOR_AT}"),
    case("a request selector that does not parse, reported once", "dra-cel-compiles", lambda r: mutate(
        r, TEMPLATE, (*REQUEST, "selectors"), selectors("device.driver ==")), TEMPLATE, f"{REQUEST_AT}.{SELECTOR_AT}"),
    case("a class selector without a driver check", "dra-cel-lint", lambda r: mutate(
        r, CLASS, ("spec", "selectors"),
        selectors("device.attributes['gpu.nvidia.com'].productName.matches('L40S')")), CLASS, f"spec.{SELECTOR_AT}"),
    case("an unguarded pcieRoot lookup in a request", "dra-cel-lint", lambda r: mutate(
        r, TEMPLATE, (*REQUEST, "selectors"),
        selectors("device.attributes['resource.kubernetes.io'].pcieRoot != ''")), TEMPLATE,
         f"{REQUEST_AT}.{SELECTOR_AT}"),
    case("the template's class removed, reported once", "dra-device-class-exists", lambda r: remove(r, CLASS),
         TEMPLATE, f"{REQUEST_AT}.deviceClassName"),
    case("more GPUs than a node of the group has (within the quota)", "dra-claim-satisfiable", lambda r: mutate(
        r, TEMPLATE, (*REQUEST, "count"), 2.0), TEMPLATE, ""),
    case("the L40S group turned into L4s", "dra-claim-satisfiable", lambda r: mutate(
        r, L40S_GROUP, ("instanceTypes",), ["g6.xlarge"]), TEMPLATE, ""),
    case("the L40S group served by Karpenter, the template selecting on the driver's version",
         "dra-claim-provisionable", lambda r: mutate(
             remove(r, L40S_GROUP), TEMPLATE, (*REQUEST, "selectors"),
             selectors("device.attributes['gpu.nvidia.com'].driverVersion.compareTo(semver('550.0.0')) >= 0")),
         TEMPLATE, "",
         config={"karpenter": {"version": "1.15.0", "nodePools": [
             {"name": "l40s", "instanceTypes": ["g6e.12xlarge"], "maxNodes": 1, "dra": True}]}}),
    case("a MIG class no node group serves", "dra-mig-class-servable", lambda r: add(
        r, device_class("mig-1g.10gb", MIG_SELECTOR)), MIG_CLASS, f"spec.{SELECTOR_AT}"),
    case("a version compared with a string", "dra-selector-safe-on-fleet", lambda r: mutate(
        r, CLASS, ("spec", "selectors"),
        selectors(L40S_SELECTOR + " && device.attributes['gpu.nvidia.com'].driverVersion >= '570'")), TEMPLATE, ""),
    case("a capacity request on 1.34", "dra-feature-gates", lambda r: mutate(
        r, TEMPLATE, (*REQUEST, "capacity"), {"requests": {"memory": "10Gi"}}), TEMPLATE, f"{REQUEST_AT}.capacity",
         environment="dev"),
    case("an extended resource name on 1.34", "dra-feature-gates", lambda r: mutate(
        r, CLASS, ("spec", "extendedResourceName"), "nvidia.com/gpu-l40s"), CLASS, "spec.extendedResourceName",
         environment="dev"),
    case("an alpha driver gate", "no-alpha-in-production", lambda r: mutate(
        r, DRA_CHART, ("values", "featureGates"), {"TimeSlicingSettings": True}), DRA_CHART,
         "values.featureGates.TimeSlicingSettings"),
    case("time-slicing without its driver gate", "nvidia-driver-gates", lambda r: mutate(
        r, TEMPLATE, ("spec", "spec", "devices", "config"), time_slicing()), TEMPLATE,
         "spec.spec.devices.config[0].opaque.parameters.sharing.strategy"),
    case("an unknown driver gate", "nvidia-driver-gates", lambda r: mutate(
        r, DRA_CHART, ("values", "featureGates"), {"NoSuchGate": True}), DRA_CHART, "values.featureGates.NoSuchGate"),
    case("a release of NVIDIA's line older than gpu-dra supports", "nvidia-driver-gates", lambda r: mutate(mutate(
        r, DRA_CHART, ("chart",), "oci://nvcr.io/nvidia/k8s/nvidia-dra-driver-gpu"), DRA_CHART, ("version",),
        "25.8.0"), DRA_CHART, "version"),
    case("the chart's own nvidia.com/gpu mapping taken", "extended-resource-unique", lambda r: mutate(
        r, CLASS, ("spec", "extendedResourceName"), "nvidia.com/gpu"), CLASS, "spec.extendedResourceName",
         kubernetes_version="1.36"),
    case("the device plugin on its chart defaults", "no-device-plugin-on-dra-nodes", lambda r: mutate(
        r, PLUGIN_CHART, ("values",), {"nvidiaDriverRoot": "/"}), "NodeGroup/gpu-prod-l40s", ""),
    case("the kubelet plugin on its chart defaults", "no-device-plugin-on-dra-nodes", lambda r: mutate(
        r, DRA_CHART, ("values", "kubeletPlugin", "nodeSelector"), DELETE), "NodeGroup/gpu-prod-legacy-a10g", ""),
    case("no chart version", "dra-driver-chart-pinned", lambda r: mutate(r, DRA_CHART, ("version",), DELETE),
         DRA_CHART, "version"),
    case("gpuResourcesEnabledOverride off", "dra-driver-chart-pinned", lambda r: mutate(
        r, DRA_CHART, ("values", "gpuResourcesEnabledOverride"), False), DRA_CHART,
         "values.gpuResourcesEnabledOverride"),
    case("a driver root neither the AMI's nor the GPU Operator's", "dra-driver-chart-pinned", lambda r: mutate(
        r, DRA_CHART, ("values", "nvidiaDriverRoot"), "/usr/local/nvidia"), DRA_CHART, "values.nvidiaDriverRoot"),
    case("the admin namespace unlabelled", "admin-access-restricted", lambda r: mutate(
        r, "Namespace/ops-namespace", ("metadata", "labels", ADMIN_ACCESS_LABEL), DELETE),
         "ResourceClaimTemplate/ops.all-gpus-monitoring", "spec.spec.devices.requests[0].exactly.adminAccess"),
    case("adminAccess in a team namespace", "admin-access-restricted", lambda r: mutate(
        r, TEMPLATE, (*REQUEST, "adminAccess"), True), TEMPLATE, f"{REQUEST_AT}.adminAccess"),
    case("adminAccess in a team namespace, in dev too", "admin-access-restricted", lambda r: mutate(
        r, TEMPLATE, (*REQUEST, "adminAccess"), True), TEMPLATE, f"{REQUEST_AT}.adminAccess", environment="dev"),
    case("a namespace labelled for admin access the stack does not grant", "admin-access-restricted",
         lambda r: mutate(r, "Namespace/inference-namespace", ("metadata", "labels", ADMIN_ACCESS_LABEL), "true"),
         "Namespace/inference-namespace", f"metadata.labels['{ADMIN_ACCESS_LABEL}']"),
    case("a team's namespace renamed since the base of the change", "team-namespace-kept",
         lambda r: mutate(r, "Namespace/inference-namespace", ("metadata", "name"), "serving"),
         "Namespace/inference-namespace", "metadata.name"),
    case("a team file that sets admin", "team-file-platform-keys", lambda r: r, "", "", environment="dev",
         config={"platformKeys": [{"team": "inference", "teamFile": "stacks/teams/inference.yaml", "line": 4.0,
                                   "key": "admin"}]}),
    case("a queued team's template changed under its name", "kueue-template-replaced", lambda r: r, "", "",
         config={"replacedTemplates": [{"team": "inference", "template": "l40s", "line": 20.0,
                                        "teamFile": "stacks/teams/inference.yaml"}]}),
    case("a queued template whose devices are on a capacity block's group, at 0 outside its window",
         "kueue-devices-exist", lambda r: mutate(mutate(r, L40S_GROUP, ("scalingConfig", "desiredSize"), 0.0),
                                                 L40S_GROUP, ("capacityType",), "CAPACITY_BLOCK"), TEMPLATE, "",
         config={"queuedTemplates": ["inference/l40s"]}),
    case("a named workload Kueue would never admit from its team's queue", "kueue-workloads-admissible",
         lambda r: r, "", "", config={"queuedWorkloads": [{
             "workload": "Job inference/wide", "team": "inference", "queue": "gpu", "file": "workloads/jobs.yaml",
             "line": 28.0, "problems": ["charged 9 gpu-l40s device(s) for its 9 pod(s) admitted together"]}]}),
    case("the classes Kueue maps change since the base", "kueue-mappings-changed", lambda r: r, "", "",
         config={"mappingChange": {"added": ["gpu-a100"], "removed": []}}),
    case("an upgrade since the base that strands a template", "upgrade-safe", lambda r: r, "", "",
         config={"upgradeFindings": [{"change": "Kubernetes 1.35 -> 1.36 since main", "rule": "upgrade-verdict",
                                      "severity": "error", "message": "NOT allocatable at 1.36",
                                      "file": "stacks/teams/inference.yaml", "line": 12.0}]}),
    case("an upgrade since the base that makes a mapping effective", "upgrade-reported", lambda r: r, "", "",
         config={"upgradeFindings": [{"change": "Kubernetes 1.35 -> 1.36 since main", "rule": "upgrade-mapping",
                                      "severity": "warning", "message": "gpu.nvidia.com starts serving nvidia.com/gpu",
                                      "file": "stacks/Pulumi.prod.yaml", "line": 9.0}]}),
    case("no quota", "team-quota-required", lambda r: remove(r, "ResourceQuota/inference-quota"), TEMPLATE,
         "metadata.namespace"),
    case("no claims quota", "team-quota-required", lambda r: mutate(
        r, "ResourceQuota/inference-quota", ("spec", "hard", "count/resourceclaims.resource.k8s.io"), DELETE),
         "ResourceQuota/inference-quota", "spec.hard['count/resourceclaims.resource.k8s.io']"),
    case("the template's class uncapped", "team-quota-required", lambda r: mutate(
        r, "ResourceQuota/inference-quota", ("spec", "hard", "gpu-l40s.deviceclass.resource.k8s.io/devices"),
        DELETE), TEMPLATE, f"{REQUEST_AT}.deviceClassName"),
    case("a quota below one claim's count", "team-quota-required", lambda r: mutate(
        r, "ResourceQuota/inference-quota", ("spec", "hard", "gpu-l40s.deviceclass.resource.k8s.io/devices"), "0"),
         TEMPLATE, f"{REQUEST_AT}.count"),
    case("an All claim, charged 32, above its quota", "team-quota-required", lambda r: mutate(
        r, "ResourceQuota/ops-quota", ("spec", "hard", "gpu.nvidia.com.deviceclass.resource.k8s.io/devices"), "8"),
         OPS_TEMPLATE, "spec.spec.devices.requests[0].exactly.allocationMode"),
    case("a DRA group at desired size 0", "dra-group-has-capacity", lambda r: mutate(
        r, L40S_GROUP, ("scalingConfig", "desiredSize"), 0.0), "NodeGroup/gpu-prod-l40s", "scalingConfig.desiredSize"),
    case("a device-plugin group shrunk below what a named workload needs", "legacy-workloads-placed", lambda r: mutate(
        r, LEGACY_GROUP, ("scalingConfig", "maxSize"), 1.0), "NodeGroup/gpu-prod-legacy-a10g", "scalingConfig.maxSize",
         config={"legacyWorkloads": [{**LEGACY_WORKLOAD, "pods": 2.0}]}),
    case("an unprotected cluster", "eks-hardening", lambda r: mutate(r, "Cluster/gpu-prod", protect=False),
         EKS_CLUSTER, ""),
    case("a public endpoint without CIDRs", "eks-hardening", lambda r: mutate(
        r, "Cluster/gpu-prod", ("endpointPublicAccess",), True), EKS_CLUSTER, "vpcConfig.endpointPublicAccess"),
    case("no secrets encryption", "eks-hardening", lambda r: mutate(
        r, "Cluster/gpu-prod", ("encryptionConfigKeyArn",), DELETE), EKS_CLUSTER, "encryptionConfig"),
    case("IMDSv1 allowed", "eks-hardening", lambda r: mutate(
        r, "LaunchTemplate/gpu-prod-l40s", ("metadataOptions", "httpTokens"), "optional"),
         "LaunchTemplate/gpu-prod-l40s", "metadataOptions.httpTokens"),
    case("an unprotected DRA group", "eks-hardening", lambda r: mutate(
        r, "ManagedNodeGroup/gpu-prod-l40s", protect=False), "NodeGroup/gpu-prod-l40s", ""),
    case("an unprotected device-plugin group", "eks-hardening", lambda r: mutate(
        r, "ManagedNodeGroup/gpu-prod-legacy-a10g", protect=False), "NodeGroup/gpu-prod-legacy-a10g", ""),
    case("3 days before the end of support", "kubernetes-version-supported", lambda r: r, EKS_CLUSTER,
         "version", config={"today": "2026-11-29"}),
    case("after the end of support", "kubernetes-version-supported", lambda r: r, EKS_CLUSTER, "version",
         config={"today": "2026-12-03"}),
]


def urn(resources: Sequence[Registered], target: str) -> str:
    """The URN the engine gives `target`: a registration, or a child a remote component registers."""
    return str(find(engine(resources), target).urn)


def placed(found: Sequence[Finding]) -> list[tuple[str, str, str]]:
    """(rule, object, path) of each finding: what the tests assert."""
    return [(f.rule, f.object, f.path) for f in found]


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
    on = urn(resources, case.reported_on) if case.reported_on else ""  # "": a team file's key, no resource
    assert placed(found[case.rule]) == [(case.rule, on, case.path)]
    assert {f.severity for f in found[case.rule]} == {ERROR}  # enforcement, not severity, decides what blocks


@pytest.mark.parametrize(("tagged", "judged"), [("prod", True), ("dev", False), (None, True)],
                         ids=["a prod cluster", "a dev cluster", "no environment tag"])
def test_a_pack_run_without_its_config_fails_closed(tagged: str | None, judged: bool) -> None:
    """`pulumi preview --policy-pack` without `--policy-pack-config`: the environment is the cluster's own tag, else
    prod, and the static levels are prod's; it used to default to dev, so a prod cluster open to the world passed."""
    resources = mutate(happy_resources("prod"), "Cluster/gpu-prod", ("endpointPublicAccess",), True)
    tags = {"gpu-dra.io/stack": "lab", **({"gpu-dra.io/environment": tagged} if tagged else {})}
    resources = mutate(resources, "Cluster/gpu-prod", ("tags",), tags)
    analysis = check.analyze(engine(resources), {}, os.environ.get("GPU_DRA_ENVIRONMENT", "prod"))
    found = [f for f in analysis.findings if f.rule == "eks-hardening"]
    assert bool(found) == judged, found
    levels = {d.policyName: d.enforcementLevel for d in analysis.diagnostics if d.policyName == "eks-hardening"}
    assert levels == ({"eks-hardening": analyzer_pb2.MANDATORY} if judged else {})
    assert [p.enforcement_level for p in policies()] == [p.enforcement_level for p in policies("prod")]


def test_every_rule_has_a_failing_case() -> None:
    assert {c.values[0].rule for c in CASES} == set(policy.RULES_BY_NAME)


def test_an_alpha_field_in_production_fails_two_rules() -> None:
    """Off on EKS (dra-feature-gates) and alpha in production (no-alpha-in-production): two facts, two rules."""
    resources = mutate(happy_resources("prod"), TEMPLATE, (*REQUEST, "capacity"), {"requests": {"memory": "10Gi"}})
    found = run_rules(resources)
    assert set(found) == {"dra-feature-gates", "no-alpha-in-production"}
    assert placed(found["dra-feature-gates"] + found["no-alpha-in-production"]) == [
        (rule, urn(resources, TEMPLATE), f"{REQUEST_AT}.capacity")
        for rule in ("dra-feature-gates", "no-alpha-in-production")]


@pytest.mark.parametrize(("field", "value"), [(("spec", "extendedResourceName"), "nvidia.com/gpu-l40s"),
                                              ((*REQUEST, "capacity"), {"requests": {"memory": "10Gi"}})],
                         ids=["extendedResourceName on a class", "capacity in a template's request"])
def test_a_field_whose_gate_is_off_is_worded_as_lint_words_it(field: tuple[str, ...], value: Any) -> None:
    """One judgement of a gate that is off, two places it is shown: the pack names where its cluster's gates are
    declared (the pack config), lint its own flag; the rest of the message is the same."""
    target_name = CLASS if field[0] == "spec" and field[1] == "extendedResourceName" else TEMPLATE
    resources = mutate(happy_resources("dev"), target_name, field, value)
    found = run_rules(resources)["dra-feature-gates"]
    obj = find(resources, target_name)
    manifest = {"apiVersion": "resource.k8s.io/v1", "kind": obj.type.rsplit(":", 1)[1], **obj.inputs}
    linted = [f.message for document in objects_in("x.yaml", parse_documents(json.dumps(manifest), "x.yaml"))
              for f in lint_object(document, Target("1.34")) if f.rule == "feature-gate"]
    assert [f.message for f in found] == linted and len(linted) == 1
    assert "; EKS runs only the upstream defaults (no alpha gates), so the API server " in linted[0]


def test_a_namespaces_uncapped_claims_are_reported_once_on_its_quota() -> None:
    """Claims are capped per namespace: two templates there, one finding, on the quota."""
    resources = mutate(happy_resources(), "ResourceQuota/inference-quota",
                       ("spec", "hard", "count/resourceclaims.resource.k8s.io"), DELETE)
    second = find(resources, TEMPLATE)
    resources.append(resource(second.type, "inference.l40s-b", {
        **second.inputs, "metadata": {**second.inputs["metadata"], "name": "l40s-b"}}))
    assert placed(run_rules(resources)["team-quota-required"]) == [
        ("team-quota-required", urn(resources, "ResourceQuota/inference-quota"),
         "spec.hard['count/resourceclaims.resource.k8s.io']")]


def _first_available(*alternatives: tuple[str, str, float]) -> list[dict[str, Any]]:
    """One request `gpu` whose alternatives are (name, class, count)."""
    return [{"name": "gpu", "firstAvailable": [
        {"name": name, "deviceClassName": klass, "allocationMode": "ExactCount", "count": count}
        for name, klass, count in alternatives]}]


def _capped(resources: list[Registered], klass: str, devices: str) -> list[Registered]:
    return mutate(resources, "ResourceQuota/inference-quota",
                  ("spec", "hard", f"{klass}.deviceclass.resource.k8s.io/devices"), devices)


def test_first_available_is_charged_its_largest_alternative_of_every_class() -> None:
    """Quota admission charges a firstAvailable request, for each class it names, its largest alternative of that
    class, all classes at once: an L40S first and three of any GPU else is charged 1 gpu-l40s and 3 gpu.nvidia.com,
    though only one alternative is ever allocated."""
    requests = ("spec", "spec", "devices", "requests")
    resources = _capped(happy_resources(), "gpu.nvidia.com", "2")
    resources = mutate(resources, TEMPLATE, requests, _first_available(
        ("l40s", "gpu-l40s", 1.0), ("any-small", "gpu.nvidia.com", 2.0), ("any", "gpu.nvidia.com", 3.0)))
    assert placed(run_rules(resources)["team-quota-required"]) == [
        ("team-quota-required", urn(resources, TEMPLATE), "spec.spec.devices.requests[0].firstAvailable[2].count")]
    resources = _capped(resources, "gpu.nvidia.com", "3")
    assert run_rules(resources) == {}
    # The first alternative's class is charged too: a quota of 0 there refuses the claim whatever the fallback.
    assert placed(run_rules(_capped(resources, "gpu-l40s", "0"))["team-quota-required"]) == [
        ("team-quota-required", urn(resources, TEMPLATE), "spec.spec.devices.requests[0].firstAvailable[0].count")]


def test_a_claims_requests_of_one_class_add_up() -> None:
    """Two requests of one L40S each, under a quota of 1: charged 2, reported once, where the count is written."""
    requests = ("spec", "spec", "devices", "requests")
    one = {"deviceClassName": "gpu-l40s", "allocationMode": "ExactCount"}
    resources = mutate(_capped(happy_resources(), "gpu-l40s", "1"), TEMPLATE, requests,
                       [{"name": "a", "exactly": {**one, "count": 1.0}}, {"name": "b", "exactly": one}])
    assert placed(run_rules(resources)["team-quota-required"]) == [
        ("team-quota-required", urn(resources, TEMPLATE), "spec.spec.devices.requests[0].exactly.count")]


def test_a_quota_exactly_one_claims_worth_passes() -> None:
    """ops' All claim is charged 32 (the happy path's quota): 31 refuses it, 32 does not."""
    path = ("spec", "hard", "gpu.nvidia.com.deviceclass.resource.k8s.io/devices")
    assert run_rules(mutate(happy_resources(), "ResourceQuota/ops-quota", path, "32")) == {}
    assert set(run_rules(mutate(happy_resources(), "ResourceQuota/ops-quota", path, "31"))) == {"team-quota-required"}


@pytest.mark.parametrize("environment", ["dev", "prod"])
def test_a_capacity_block_group_may_stay_at_zero(environment: str) -> None:
    """EKS scales a capacity block's group itself within the block's window, so desired 0 is no violation there."""
    resources = mutate(happy_resources(environment), L40S_GROUP, ("scalingConfig", "desiredSize"), 0.0)
    resources = mutate(resources, L40S_GROUP, ("capacityType",), "CAPACITY_BLOCK")
    assert "dra-group-has-capacity" not in run_rules(resources)


def test_a_device_plugin_group_at_zero_is_not_a_dra_group() -> None:
    resources = mutate(happy_resources(), "ManagedNodeGroup/gpu-prod-legacy-a10g", ("scalingConfig", "desiredSize"),
                       0.0)
    assert "dra-group-has-capacity" not in run_rules(resources)


def test_a_dra_group_at_zero_is_advisory_outside_prod() -> None:
    resources = mutate(happy_resources("staging"), L40S_GROUP, ("scalingConfig", "desiredSize"), 0.0)
    found = analyze(resources)
    assert {f.rule for f in found.findings} == {"dra-group-has-capacity"}
    assert policy.enforcement(policy.RULES_BY_NAME["dra-group-has-capacity"], "staging", {}) == policy.ADVISORY
    assert policy.enforcement(policy.RULES_BY_NAME["dra-group-has-capacity"], "prod", {}) == policy.MANDATORY


def test_an_unknown_desired_size_is_not_judged() -> None:
    group = find(engine(happy_resources()), "NodeGroup/gpu-prod-l40s")
    props = {**group.inputs, "scalingConfig": {**group.inputs["scalingConfig"], "desiredSize": UNKNOWN}}
    found = policy.RULES_BY_NAME["dra-group-has-capacity"].check(
        policy.Resource(group.type, group.name, group.urn, props), policy.Context())
    assert [(f.severity, f.object) for f in found] == [(NOT_JUDGED, group.urn)]


@pytest.mark.parametrize("selector", [
    "device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'mig'",
    "device.driver == 'gpu.nvidia.com' && device.capacity['gpu.nvidia.com'].multiprocessors.compareTo("
    "quantity('14')) >= 0",
    "device.driver == 'gpu.nvidia.com' && 'mig' == device.attributes['gpu.nvidia.com'].type",
])
def test_what_marks_a_class_as_mig(selector: str) -> None:
    """Its type compared with 'mig', or what only MIG devices publish (profile, parentUUID, multiprocessors...)."""
    resources = add(happy_resources("dev"), device_class("mig-any", selector))
    assert placed(run_rules(resources).get("dra-mig-class-servable", [])) == [
        ("dra-mig-class-servable", urn(resources, "DeviceClass/deviceclass-mig-any"), f"spec.{SELECTOR_AT}")]


def test_a_class_admitting_whole_gpus_or_mig_is_served() -> None:
    """The fleet has whole GPUs: a class that takes a MIG slice or a whole L40S matches some of its devices."""
    either = ("device.driver == 'gpu.nvidia.com' && (device.attributes['gpu.nvidia.com'].type == 'mig' || "
              "device.attributes['gpu.nvidia.com'].productName.matches('L40S'))")
    assert "dra-mig-class-servable" not in run_rules(add(happy_resources("dev"), device_class("l40s-or-mig", either)))


def test_dynamic_mig_silences_the_mig_rule() -> None:
    """With DynamicMIG (alpha) and DRAPartitionableDevices (on from 1.36) the driver creates MIG devices the
    synthesized fleet does not model: the rule does not guess."""
    resources = add(happy_resources("dev", "1.36"), device_class("mig-1g.10gb", MIG_SELECTOR))
    assert "dra-mig-class-servable" in run_rules(resources)
    dynamic = mutate(resources, DRA_CHART, ("values", "featureGates"), {"DynamicMIG": True})
    assert "dra-mig-class-servable" not in run_rules(dynamic)


def test_a_mig_class_is_reported_only_once_its_state_is_known() -> None:
    """A first preview: the DeviceClasses' state is unknown, so the rule says once it could not judge them."""
    resources = add(happy_resources(), device_class("mig-1g.10gb", MIG_SELECTOR))
    found = run_rules(resources, first_preview=True)["dra-mig-class-servable"]
    assert [f.severity for f in found] == [NOT_JUDGED]


@pytest.mark.parametrize("version", ["latest", "0.4", ">=0.4.0"])
def test_an_unpinned_chart_version_fails_dra_driver_chart_pinned(version: str) -> None:
    """Only the pin rule: the others judge the chart as the default release, or (driver gates) not at all."""
    resources = mutate(happy_resources(), DRA_CHART, ("version",), version)
    assert {rule: placed(found) for rule, found in run_rules(resources).items()} == {
        "dra-driver-chart-pinned": [("dra-driver-chart-pinned", urn(resources, DRA_CHART), "version")]}


def test_an_unpinned_chart_is_still_linted_and_allocated() -> None:
    """The fallback judges rather than skips: an unpinned chart's stack still has its selectors linted and its claims
    allocated, as on the default release."""
    resources = mutate(happy_resources(), DRA_CHART, ("version",), "latest")
    resources = mutate(resources, TEMPLATE, (*REQUEST, "count"), 2.0)
    resources = mutate(resources, TEMPLATE, (*REQUEST, "selectors"),
                       selectors("device.attributes['resource.kubernetes.io'].pcieRoot != ''"))
    assert set(run_rules(resources)) == {"dra-driver-chart-pinned", "dra-cel-lint", "dra-claim-satisfiable"}


def test_an_unknown_driver_gate_is_named_and_not_listed_among_the_releases() -> None:
    resources = mutate(happy_resources(), DRA_CHART, ("values", "featureGates"), {"NoSuchGate": True})
    unknown, = run_rules(resources)["nvidia-driver-gates"]
    assert unknown.message == (
        "unknown driver gate NoSuchGate; gates of dra-driver-nvidia-gpu 0.4.1: ComputeDomainCliques, "
        "CrashOnNVLinkFabricErrors, DeviceMetadata, DynamicMIG, IMEXDaemonsWithDNSNames, MPSSupport, "
        "NVMLDeviceHealthCheck, PassthroughSupport, TimeSlicingSettings")


@pytest.mark.parametrize("class_selector,lints", [(L40S_SELECTOR, False),
                                                  (L40S_SELECTOR.removesuffix(" && device.attributes"
                                                                              "['gpu.nvidia.com'].type == 'gpu'"),
                                                   True)])
def test_a_request_may_read_gpu_attributes_its_class_guarantees(class_selector: str, lints: bool) -> None:
    """Memory capacity is missing on vfio devices: a request behind a class admitting only GPUs may read it
    unguarded, one behind a class admitting every type may not."""
    resources = mutate(happy_resources(), CLASS, ("spec", "selectors"), selectors(class_selector))
    resources = mutate(resources, TEMPLATE, (*REQUEST, "selectors"), selectors(
        "device.capacity['gpu.nvidia.com'].memory.compareTo(quantity('40Gi')) >= 0"))
    assert {rule: placed(found) for rule, found in run_rules(resources).items()} == ({"dra-cel-lint": [
        ("dra-cel-lint", urn(resources, TEMPLATE), f"{REQUEST_AT}.{SELECTOR_AT}")]} if lints else {})


def test_a_class_selectors_own_lint_is_reported_on_the_class_only() -> None:
    """A request is linted behind its class's selectors, less what they say alone: the class's mistake once."""
    resources = mutate(happy_resources(), CLASS, ("spec", "selectors"),
                       selectors(L40S_SELECTOR.replace("matches('L40S')", "matches('Z9000')")))
    resources = mutate(resources, TEMPLATE, (*REQUEST, "selectors"), selectors(
        "device.capacity['gpu.nvidia.com'].memory.compareTo(quantity('40Gi')) >= 0"))
    assert placed(run_rules(resources)["dra-cel-lint"]) == [("dra-cel-lint", urn(resources, CLASS),
                                                             f"spec.{SELECTOR_AT}")]


def test_a_request_behind_a_class_selector_that_does_not_lex_is_still_linted() -> None:
    """dra-cel-compiles reports the class; the request's own lookup is linted as if the class admitted anything."""
    resources = mutate(happy_resources(), CLASS, ("spec", "selectors"), selectors("device.driver == §"))
    resources = mutate(resources, TEMPLATE, (*REQUEST, "selectors"), selectors(
        "device.capacity['gpu.nvidia.com'].memory.compareTo(quantity('40Gi')) >= 0"))
    assert placed(run_rules(resources)["dra-cel-lint"]) == [("dra-cel-lint", urn(resources, TEMPLATE),
                                                             f"{REQUEST_AT}.{SELECTOR_AT}")]


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
    assert {rule: placed(found) for rule, found in run_rules(resources).items()} == ({"no-device-plugin-on-dra-nodes": [
        ("no-device-plugin-on-dra-nodes", urn(resources, "NodeGroup/gpu-prod-l40s"), "")]} if shared else {})


def test_every_order_of_the_stack_finds_the_device_plugin_on_dra_nodes() -> None:
    """The device plugin chart renders two DaemonSets named device-plugin (the MPS control daemon's runs only on
    nodes labelled nvidia.com/mps.capable), and AnalyzeStack sends resources in no set order (the engine ranges over
    a map): the rule judged whichever came first, and missed the overlap in half of the orders."""
    resources = mutate(happy_resources(), PLUGIN_CHART, ("values",), {"nvidiaDriverRoot": "/"})
    sent = engine(resources)
    config = pack_config_of(resources)
    names = {str(r.inputs.get("metadata", {}).get("name")) for r in sent if r.type.endswith(":DaemonSet")}
    assert {"nvidia-device-plugin", "nvidia-device-plugin-mps-control-daemon"} <= names, names
    expected = [("no-device-plugin-on-dra-nodes", urn(resources, "NodeGroup/gpu-prod-l40s"), "")]
    for seed in range(12):
        shuffled = random.Random(seed).sample(sent, len(sent))
        found = [f for f in check.analyze(shuffled, config, "prod").findings
                 if f.rule == "no-device-plugin-on-dra-nodes"]
        assert placed(found) == expected, seed


# ------------------------------------------------------------------------------------ the pack config


def test_context_comes_from_the_pack_config() -> None:
    """No resource the engine sends carries the chart's version and gates or the Kubernetes version a DeviceClass is
    judged by: the pack config does."""
    context = policy.context_from({"kubernetesVersion": "1.36", "platform": "existing", "environment": "prod",
                                   "chartVersion": "25.12.0", "chart": "nvidia-dra-driver-gpu",
                                   "driverGates": {"MPSSupport": True}, "deviceClasses": {"gpu-a": ["true"]}})
    assert (context.target.kubernetes_version, context.target.platform, context.environment) == (
        "1.36", "existing", "prod")
    assert (context.chart_version, context.driver_gates, context.device_classes) == (
        "25.12.0", {"MPSSupport": True}, {"gpu-a": ["true"]})
    assert policy.context_from({}).device_classes is None  # then dra-device-class-exists does not guess


def test_without_device_classes_in_the_config_class_existence_is_not_judged() -> None:
    resources = happy_resources()
    config = {"deviceClasses": None}
    found = run_rules(resources, config)
    assert {f.severity for f in found["dra-device-class-exists"]} == {"not-judged"}


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


def program(root: Path, stack: str) -> ProgramRun:
    values, located = stack_values(root, stack)
    return run_program(root, stack, values, build_stack(root, stack, values, located))


def pack_findings(run: ProgramRun, environment: str, config: dict[str, Any] | None = None,
                  root: Path = ROOT) -> dict[str, list[Finding]]:
    """Findings per rule id, as the pack's policies answer the engine's requests for the program's resources."""
    configured = pack_config(load_stack(root, run.stack))
    for section in configured.values():
        section.update({**TODAY, "environment": environment, **(config or {})})
    found: dict[str, list[Finding]] = {}
    for finding in check.analyze(check.engine_resources(run), configured, environment).findings:
        found.setdefault(finding.rule, []).append(finding)
    return found


def registered(run: ProgramRun, type_: str, name: str) -> str:
    """The URN the engine gives the program's resource (or a remote component's child) of that type and name."""
    found, = (r.urn for r in check.engine_resources(run) if r.type == type_ and r.name == name)
    return found


def _with(run: ProgramRun, change: Callable[[Registration], Registration | None]) -> ProgramRun:
    resources = [dataclasses.replace(r, inputs=json.loads(json.dumps(r.inputs))) for r in run.resources]
    return ProgramRun(run.stack, [r for r in (change(r) for r in resources) if r is not None], run.outputs)


TEMPLATE_TYPE = "kubernetes:resource.k8s.io/v1:ResourceClaimTemplate"
NODE_GROUP_TYPE = "aws:eks/nodeGroup:NodeGroup"
CHART_TYPE = "kubernetes:helm.sh/v4:Chart"
GPU_20GB_ANY = ("inference.gpu-20gb-any", "spec.spec.devices.requests[0].exactly")  # the template _edit_template edits


@pytest.mark.parametrize("stack", STACKS)
def test_repo_stacks_have_no_mandatory_violations(stack: str) -> None:
    found = check_stack(ROOT, stack, {"kubernetes-version-supported": TODAY})
    assert [v for v in found if v.enforcement == policy.MANDATORY] == []


def test_prod_passes_every_rule() -> None:
    assert pack_findings(program(ROOT, "prod"), "prod") == {}


def _edit_template(selector_or_fields: dict[str, Any]) -> Callable[[dict[str, Any]], None]:
    """Change request `gpu` of the inference team's template gpu-20gb-any."""
    def change(team: dict[str, Any]) -> None:
        named(named(team["claimTemplates"], "gpu-20gb-any")["requests"], "gpu").update(selector_or_fields)
    return change


def test_seed_template_selector_fails_dra_cel_compiles_and_dra_cel_lint(project: Project) -> None:
    project.edit("stacks/teams/inference.yaml", _edit_template({"match": None, "selectors": [
        'device.attributes["gpu.nvidia.com"].memory.quantity >= quantity("20Gi")']}))
    run = program(project.root, "dev")
    found = pack_findings(run, "dev")
    template, request = registered(run, TEMPLATE_TYPE, GPU_20GB_ANY[0]), GPU_20GB_ANY[1]
    for rule in ("dra-cel-compiles", "dra-cel-lint"):
        assert placed(found[rule]) == [(rule, template, f"{request}.{SELECTOR_AT}")]


def test_extended_resource_name_on_eks_1_34_fails_dra_feature_gates(project: Project) -> None:
    project.edit_stack("dev", lambda c: c.update({"gpu-dra:legacyMappings": [
        {"extendedResourceName": "nvidia.com/gpu-l4", "deviceClass": "gpu-l4"}]}))
    run = program(project.root, "dev")
    assert placed(pack_findings(run, "dev")["dra-feature-gates"]) == [
        ("dra-feature-gates", registered(run, "kubernetes:resource.k8s.io/v1:DeviceClass", "deviceclass-gpu-l4"),
         "spec.extendedResourceName")]


def test_consumable_capacity_on_1_34_fails_dra_feature_gates(project: Project) -> None:
    project.edit("stacks/teams/inference.yaml", _edit_template({"capacity": {"memory": "10Gi"}}))
    run = program(project.root, "dev")
    assert placed(pack_findings(run, "dev")["dra-feature-gates"]) == [
        ("dra-feature-gates", registered(run, TEMPLATE_TYPE, GPU_20GB_ANY[0]), f"{GPU_20GB_ANY[1]}.capacity")]


def test_consumable_capacity_is_fine_on_1_36(project: Project) -> None:
    project.edit("stacks/teams/inference.yaml", _edit_template({"capacity": {"memory": "10Gi"}}))
    assert "dra-feature-gates" not in pack_findings(program(project.root, "staging"), "staging")


def test_device_plugin_and_dra_on_one_node_group_fails() -> None:
    """gpu-dra's own values keep the plugins apart, so break them as a hand-edited device plugin install would:
    every DRA group of prod then runs both plugins."""
    def default_device_plugin(r: Registration) -> Registration:
        if r.type == CHART_TYPE and r.name == "nvidia-device-plugin":
            r.inputs["values"] = {"nvidiaDriverRoot": "/"}
        return r
    run = _with(program(ROOT, "prod"), default_device_plugin)
    found = pack_findings(run, "prod")
    assert sorted(f.object for f in found["no-device-plugin-on-dra-nodes"]) == sorted(
        registered(run, NODE_GROUP_TYPE, name) for name in ("gpu-prod-h100", "gpu-prod-l40s"))


def test_missing_class_fails_dra_device_class_exists() -> None:
    """Config validation refuses a template naming an undeclared class, so the pack sees it only where the stack
    changed without its pack config (a class dropped from the stack)."""
    run = _with(program(ROOT, "prod"),
                lambda r: None if r.type.endswith(":DeviceClass") and r.name == "deviceclass-gpu-l40s" else r)
    classes = pack_config(load_stack(ROOT, "prod"))["dra-device-class-exists"]["deviceClasses"]
    found = pack_findings(run, "prod", {"deviceClasses": {k: v for k, v in classes.items() if k != "gpu-l40s"}})
    assert placed(found["dra-device-class-exists"]) == [
        ("dra-device-class-exists", registered(run, TEMPLATE_TYPE, "inference.l40s"),
         "spec.spec.devices.requests[0].exactly.deviceClassName")]


def test_prod_without_quota_fails_team_quota_required(project: Project) -> None:
    project.edit("stacks/teams/inference.yaml", lambda team: team.update({"quota": {}}))
    project.edit_stack("prod", lambda c: c["gpu-dra:teams"].update({"inference": {}}))
    found = check_stack(project.root, "prod", {"kubernetes-version-supported": TODAY})
    quota = [v for v in found if v.finding.rule == "team-quota-required"]
    assert quota and {v.enforcement for v in quota} == {policy.MANDATORY}
    assert {(v.finding.file, v.finding.path) for v in quota} == {("stacks/teams/inference.yaml", "metadata.namespace")}


def test_a_prod_quota_below_one_claim_fails_team_quota_required(project: Project) -> None:
    """The issue's case: prod's training override at gpu-h100: 4 while h100-x8 asks for 8. Quota admission would
    refuse every such claim; the pack says so on the request's count line, mandatory in prod."""
    project.edit_stack("prod", lambda c: c["gpu-dra:teams"]["training"]["quota"]["devices"].update({"gpu-h100": 4}))
    found = [v for v in check_stack(project.root, "prod", {"kubernetes-version-supported": TODAY})
             if v.finding.rule == "team-quota-required"]
    assert [(v.enforcement, v.finding.file, v.finding.path) for v in found] == [
        (policy.MANDATORY, "stacks/teams/training.yaml", "spec.spec.devices.requests[0].exactly.count")]
    lines = (project.root / found[0].finding.file).read_text().splitlines()
    assert lines[(found[0].finding.line or 0) - 1].strip() == "count: 8"  # of h100-x8's request


@pytest.mark.parametrize("stack,enforcement", [("staging", policy.ADVISORY), ("prod", policy.MANDATORY)])
def test_a_mig_class_no_group_serves_fails_dra_mig_class_servable(project: Project, stack: str,
                                                                   enforcement: str) -> None:
    """Staging's old MIG class and mapping, put back: no node group publishes MIG devices."""
    def mig(config: dict[str, Any]) -> None:
        config["gpu-dra:deviceClasses"].append({"name": "mig-1g.10gb", "match": {"migProfiles": ["1g.10gb"]}})
    project.edit_stack(stack, mig)
    found = [v for v in check_stack(project.root, stack, {"kubernetes-version-supported": TODAY})
             if v.finding.rule == "dra-mig-class-servable"]
    assert [(v.enforcement, v.finding.file, v.finding.path) for v in found] == [
        (enforcement, f"stacks/Pulumi.{stack}.yaml", f"spec.{SELECTOR_AT}")]


def test_the_repos_dra_groups_at_zero_are_reported_and_prods_capacity_block_is_not() -> None:
    found = {stack: sorted(v.finding.object.rsplit("::", 1)[-1] for v in check_stack(ROOT, stack, TODAY_CONFIG)
                           if v.finding.rule == "dra-group-has-capacity") for stack in ("staging", "prod")}
    assert found == {"staging": ["gpu-staging-h100"], "prod": []}  # staging's A100s come from Karpenter


def test_two_classes_mapping_one_extended_resource(project: Project) -> None:
    project.edit_stack("staging", lambda c: c.update({"gpu-dra:legacyMappings": [
        {"extendedResourceName": "nvidia.com/gpu", "deviceClass": "gpu-l40s"}]}))
    run = program(project.root, "staging")
    assert placed(pack_findings(run, "staging")["extended-resource-unique"]) == [
        ("extended-resource-unique", registered(run, "kubernetes:resource.k8s.io/v1:DeviceClass",
                                                "deviceclass-gpu-l40s"), "spec.extendedResourceName")]


def test_time_slicing_without_its_driver_gate() -> None:
    """Config validation refuses this stack, so the policy sees it only in resources (e.g. a real preview)."""
    def add_sharing(r: Registration) -> Registration:
        if r.name == "inference.l40s":
            r.inputs["spec"]["spec"]["devices"]["config"] = time_slicing()
        return r
    run = _with(program(ROOT, "prod"), add_sharing)
    assert placed(pack_findings(run, "prod")["nvidia-driver-gates"]) == [
        ("nvidia-driver-gates", registered(run, TEMPLATE_TYPE, "inference.l40s"),
         "spec.spec.devices.config[0].opaque.parameters.sharing.strategy")]


def _driver_gates(project: Project, gates: dict[str, bool]) -> None:
    """The chart's gates as the stack sets them: the pack reads them from its config, since the Chart component carries
    none in the engine."""
    project.edit_stack("prod", lambda c: c["gpu-dra:draDriver"].update({"featureGates": gates}))


def test_alpha_driver_gate_in_production(project: Project) -> None:
    _driver_gates(project, {"TimeSlicingSettings": True})
    found = [v.finding for v in check_stack(project.root, "prod", {"kubernetes-version-supported": TODAY})]
    chart = registered(program(project.root, "prod"), CHART_TYPE, "nvidia-dra-driver")
    assert placed([f for f in found if f.rule == "no-alpha-in-production"]) == [
        ("no-alpha-in-production", chart, "values.featureGates.TimeSlicingSettings")]


def test_unprotected_gpu_group_in_prod_fails_eks_hardening() -> None:
    def unprotect(r: Registration) -> Registration:
        if r.name == "gpu-prod-h100" and r.type == "eks:index:ManagedNodeGroup":
            return dataclasses.replace(r, protect=False)
        return r
    run = _with(program(ROOT, "prod"), unprotect)
    assert placed(pack_findings(run, "prod")["eks-hardening"]) == [
        ("eks-hardening", registered(run, NODE_GROUP_TYPE, "gpu-prod-h100"), "")]


@pytest.mark.parametrize("today,expected", [
    ("2026-12-01", None),
    ("2027-03-24", "ends on 2027-03-27, in 3 days"),
    ("2027-03-26", "ends on 2027-03-27, in 1 day"),
    ("2027-03-27", "ends today (2027-03-27)"),
    ("2027-03-28", "ended on 2027-03-27: the cluster is in extended support, billed $0.60 instead of $0.10 per "
                   "cluster-hour, which it cannot leave but by upgrading"),
])
def test_kubernetes_version_support_window(today: str, expected: str | None) -> None:
    found = pack_findings(program(ROOT, "dev"), "dev", {"today": today})
    assert [f.message for f in found.get("kubernetes-version-supported", [])] == (
        [f"EKS standard support for Kubernetes 1.35 {expected}"] if expected else [])


def test_the_pack_reports_path_message_and_fix_on_the_resource() -> None:
    """What `pulumi preview` shows beside the resource: the rule's description, then the path, the message and the
    fix, on the resource's URN (the analyzer's diagnostic)."""
    resources = mutate(happy_resources(), "Cluster/gpu-prod", protect=False)
    analysis = analyze(resources)
    finding, = analysis.findings
    diagnostic, = analysis.diagnostics
    assert finding.fix and (diagnostic.policyName, diagnostic.urn, diagnostic.message) == (
        "eks-hardening", finding.object, f"{policy.RULES_BY_NAME['eks-hardening'].description}\n"
                                         f"{finding.message}. Fix: {finding.fix}")
    resources = mutate(happy_resources(), TEMPLATE, (*REQUEST, "selectors"), selectors("device.driver =="))
    diagnostic, = analyze(resources).diagnostics
    assert diagnostic.message.split("\n", 1)[1].startswith(f"{REQUEST_AT}.{SELECTOR_AT}: ")


def _h100_x8(stack: str) -> str:
    return registered(program(ROOT, stack), TEMPLATE_TYPE, "training.h100-x8")


def test_unsatisfiable_template_is_advisory_outside_prod() -> None:
    found = check_stack(ROOT, "dev", {"kubernetes-version-supported": TODAY})
    satisfiable = [v for v in found if v.finding.rule == "dra-claim-satisfiable"]
    assert {v.enforcement for v in satisfiable} == {policy.ADVISORY}
    assert _h100_x8("dev") in {v.finding.object for v in satisfiable}


def test_unsatisfiable_template_advisory_names_a_command_that_runs() -> None:
    """The command in the fix is what users copy: it must run and explain the same template."""
    found = check_stack(ROOT, "dev", {"kubernetes-version-supported": TODAY})
    fix, = (v.finding.fix for v in found if v.finding.rule == "dra-claim-satisfiable"
            and v.finding.object == _h100_x8("dev"))
    command = (fix or "").split("`")[1]
    assert command == "gpu-dra explain --stack dev --claim ml-training/h100-x8"
    result = gpu_dra(*command.split()[1:])
    assert result.returncode == 1, result.stderr  # runs, and says the template is not allocatable
    assert "claim ml-training/h100-x8: NOT allocatable" in result.stdout


@pytest.mark.parametrize("stack", STACKS)
def test_committed_pack_configs_are_current(stack: str) -> None:
    committed = json.loads((ROOT / "policies" / f"config.{stack}.json").read_text())
    assert committed == pack_config(load_stack(ROOT, stack), ROOT), "run `make pack-config`"


def test_check_cli_json_and_sarif() -> None:
    result = gpu_dra("check", "--stack", "dev", "--format", "json")
    assert result.returncode == 0, result.stderr
    document = json.loads(result.stdout)
    assert document["stacks"][0]["stack"] == "dev"
    assert {"policy", "check", "enforcement", "resource", "path", "message", "fix", "file", "line"} == set(
        document["stacks"][0]["violations"][0])
    sarif = json.loads(gpu_dra("check", "--stack", "dev", "--format", "sarif").stdout)
    assert sarif["version"] == "2.1.0"
    location = sarif["runs"][0]["results"][0]["locations"][0]["physicalLocation"]
    assert location["artifactLocation"]["uri"].startswith("stacks/") and location["region"]["startLine"] >= 1


def test_sarif_results_come_from_the_finding_and_its_enforcement() -> None:
    finding = Finding("dra-cel-lint", ERROR, "memory is missing on vfio devices", "guard it",
                      file="stacks/teams/inference.yaml", line=12, object="urn:pulumi:dev::gpu-dra::t::n",
                      path="spec.selectors[0].cel.expression", check="unguarded-lookup")
    results = as_sarif([StackFinding("dev", policy.MANDATORY, finding), StackFinding("dev", policy.ADVISORY, finding)],
                       "0")["runs"][0]["results"]
    assert [(r["ruleId"], r["level"]) for r in results] == [("dra-cel-lint", "error"), ("dra-cel-lint", "warning")]
    assert results[0]["message"]["text"] == ("[dev] spec.selectors[0].cel.expression: [unguarded-lookup] memory is "
                                             "missing on vfio devices. Fix: guard it")
    assert results[0]["locations"] == [{"physicalLocation": {"artifactLocation": {"uri": "stacks/teams/inference.yaml"},
                                                             "region": {"startLine": 12}}}]
    assert results[0]["properties"] == {"stack": "dev", "resource": "urn:pulumi:dev::gpu-dra::t::n",
                                        "check": "unguarded-lookup"}


@pytest.mark.parametrize("expression,check", [
    ("device.attributes['resource.kubernetes.io'].pcieRoot != ''", "unguarded-lookup"),
    ("[1, 2].isSorted()", "cel-unsupported"),
])
def test_dra_cel_lint_names_the_check_it_ran_in_a_field(expression: str, check: str) -> None:
    """The inner check's id is the finding's `check`, not part of its message; the pack's text shows it."""
    resources = mutate(happy_resources(), TEMPLATE, (*REQUEST, "selectors"), selectors(expression))
    finding, = run_rules(resources)["dra-cel-lint"]
    assert (finding.rule, finding.check, finding.path) == ("dra-cel-lint", check, f"{REQUEST_AT}.{SELECTOR_AT}")
    assert not finding.message.startswith("[") and f"[{check}] {finding.message}" in str(finding)
    shown = f"{finding.path}: [{check}] {finding.message}"
    assert violation_message(finding) == (f"{shown.rstrip('.')}. Fix: {finding.fix}" if finding.fix else shown)


def test_the_fleet_is_explained_once_for_both_rules_that_read_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """dra-claim-satisfiable and dra-selector-safe-on-fleet share one explanation of the synthesized fleet."""
    explained: list[str] = []
    original = Explainer.explain

    def counted(self: Explainer, claim: Any, *args: Any, **kwargs: Any) -> Any:
        explained.append(claim.name)
        return original(self, claim, *args, **kwargs)
    monkeypatch.setattr(Explainer, "explain", counted)
    selector_rules._fleet_reports.cache_clear()
    analyze(happy_resources())  # the engine hands each stack policy its own copy of the resources
    assert sorted(explained) == ["gpu-ops/all-gpus-monitoring", "inference/l40s"]


def test_check_cli_exits_1_on_mandatory(project: Project) -> None:
    project.edit("stacks/teams/inference.yaml", _edit_template({"match": None, "selectors": ["1 == 1 &&"]}))
    result = gpu_dra("--project-dir", str(project.root), "check", "--stack", "dev")
    assert result.returncode == 1
    assert "[mandatory] dra-cel-compiles  stacks/teams/inference.yaml:" in result.stdout


def test_check_places_a_driver_gate_finding_on_its_stack_line(project: Project) -> None:
    """A chart finding at values.featureGates.<gate> points at that gate under draDriver in the stack file."""
    project.edit_stack("prod", lambda c: c["gpu-dra:draDriver"].update({"featureGates": {"TimeSlicingSettings": True}}))
    found = check_stack(project.root, "prod", {"kubernetes-version-supported": TODAY})
    alpha, = (v.finding for v in found if v.finding.rule == "no-alpha-in-production")
    lines = (project.root / alpha.file).read_text().splitlines()
    assert alpha.file == "stacks/Pulumi.prod.yaml"
    assert lines[(alpha.line or 0) - 1].strip() == "TimeSlicingSettings: true"


@pytest.mark.parametrize("gates,count", [({}, 1), ({"DRAExtendedResource": True}, 0)])
def test_existing_clusters_feature_gates_decide_dra_feature_gates(project: Project, gates: dict[str, bool],
                                                                   count: int) -> None:
    """`gpu-dra check` reads an existing cluster's declared gates: extendedResourceName on 1.34 passes only where
    the cluster runs DRAExtendedResource."""
    def existing(config: dict[str, Any]) -> None:
        config["gpu-dra:cluster"] = {"name": "lab", "platform": "existing", "kubernetesVersion": "1.34",
                                     "kubeconfig": {"path": "~/.kube/config"}, "featureGates": gates}
        config["gpu-dra:legacyMappings"] = [{"extendedResourceName": "nvidia.com/gpu-l4", "deviceClass": "gpu-l4"}]
        config.pop("gpu-dra:nodeGroups")  # refused on an existing cluster
    project.edit_stack("dev", existing)
    found = [v.finding for v in check_stack(project.root, "dev") if v.finding.rule == "dra-feature-gates"]
    assert [f.path for f in found] == ["spec.extendedResourceName"] * count, found


@pytest.mark.parametrize("version", ["1.34", "1.35", "1.36"])
def test_dra_claim_satisfiable_judges_with_the_stacks_own_scheduler(version: str,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """The rule explains the templates with the allocator and gates of the stack's Kubernetes version, as
    `gpu-dra explain --stack` does (it ran the default version's for every stack)."""
    from gpu_dra.core.analysis.features import features_for
    from gpu_dra.core.policy import selectors as rules

    used = []

    class Recording(Explainer):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            used.append(self.features)

    monkeypatch.setattr(rules, "Explainer", Recording)
    rules._fleet_reports.cache_clear()
    run_rules(happy_resources(kubernetes_version=version), {"environment": "dev"})
    assert used and all(features == features_for(Target(version)) for features in used), used


def test_a_gpu_group_being_replaced_in_prod_is_unprotected_for_that_change(project: Project) -> None:
    """allowReplacement lifts protect from that group alone, and eks-hardening accepts it there: the engine refuses to
    replace a resource protected before and after an update, so a protected group's replacement would fail the up."""
    project.edit_stack("prod", lambda c: named(c["gpu-dra:nodeGroups"], "h100").update(allowReplacement=True))
    run = program(project.root, "prod")
    protected = {r.name: r.protect for r in run.by_type("eks:index:ManagedNodeGroup") if r.name != "gpu-prod-system"}
    assert protected.pop("gpu-prod-h100") is False and protected and all(protected.values())
    found = [v.finding for v in check_stack(project.root, "prod", TODAY_CONFIG)]
    assert [f for f in found if f.rule == "eks-hardening"] == []

    # the same unprotected group judged with the repository's prod config, which does not allow its replacement
    assert placed(pack_findings(run, "prod")["eks-hardening"]) == [
        ("eks-hardening", registered(run, NODE_GROUP_TYPE, "gpu-prod-h100"), "")]


def test_the_device_plugin_on_a_dra_nodepools_nodes_is_caught_on_the_nodepool() -> None:
    """A Karpenter NodePool's nodes carry its template's labels and taints (as the engine shows the NodePool): the
    device plugin at its chart's defaults would land on a DRA NodePool's nodes beside the DRA kubelet plugin."""
    from gpu_dra.core.config.models import KarpenterNodePool
    from gpu_dra.core.facts.pulumi_types import KARPENTER_NODE_POOL
    from gpu_dra.core.render import karpenter

    pool = KarpenterNodePool.model_validate({"name": "l40s", "instanceTypes": ["g6e.12xlarge"], "maxNodes": 2})
    served_by_karpenter = add(remove(happy_resources(), L40S_GROUP),
                              resource(KARPENTER_NODE_POOL, "gpu-prod-l40s", karpenter.node_pool(pool)))
    assert "no-device-plugin-on-dra-nodes" not in run_rules(served_by_karpenter)
    wide = mutate(served_by_karpenter, PLUGIN_CHART, ("values",), {"nvidiaDriverRoot": "/"})
    [finding] = run_rules(wide)["no-device-plugin-on-dra-nodes"]
    assert finding.object == urn(wide, "NodePool/gpu-prod-l40s")
    assert finding.message.startswith("Karpenter NodePool l40s: both NVIDIA's device plugin and the DRA kubelet plugin")

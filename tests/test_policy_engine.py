"""The pack in the engine's shape, driven through pulumi-policy's own analyzer service (`_PolicyAnalyzerServicer`, the
gRPC service the Pulumi CLI talks to): GetAnalyzerInfo, Configure, Analyze (inputs), AnalyzeStack (outputs), with
unknown values as a preview sends them. The engine shapes come from gpu_dra.core.policy.engine (cited there).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

import pytest
from google.protobuf import empty_pb2

from gpu_dra.cli import check
from gpu_dra.cli.offline import run_program
from gpu_dra.core import policy
from gpu_dra.core.config.loader import build_stack, stack_values
from gpu_dra.core.data import UNKNOWN
from gpu_dra.core.findings import NOT_JUDGED
from gpu_dra.core.policy.engine import ENGINE_UNKNOWN, EngineResource
from gpu_dra.policypack import _Props

from .conftest import ROOT, STACKS
from .policy_builders import DELETE, analyze, engine, find, happy_resources, mutate, pack_config_of, run_rules
from .test_policies import CASES, REQUEST, TEMPLATE, Case, placed, selectors, urn

TODAY = {"today": "2026-09-01"}
CANT_RUN = "can't run policy"


def _prod(first_preview: bool = False) -> tuple[list[EngineResource], dict[str, Any]]:
    values, located = stack_values(ROOT, "prod")
    stack = build_stack(ROOT, "prod", values, located)
    config = check.pack_config(stack)
    for section in config.values():
        section.update(TODAY)
    return check.engine_resources(run_program(ROOT, "prod", values, stack), first_preview), config


def _with_unknown(resources: list[EngineResource], type_: str, inputs: Mapping[str, Any] | None = None,
                  outputs: Mapping[str, Any] | None = None) -> list[EngineResource]:
    """The resources with some values of every resource of `type_` unknown, as a preview sends them."""
    return [dataclasses.replace(r, inputs={**r.inputs, **(inputs or {})}, outputs={**r.outputs, **(outputs or {})})
            if r.type == type_ else r for r in resources]


def test_analyzer_info_lists_every_rule_as_the_kind_of_policy_it_is() -> None:
    info = check.analyzer("prod").GetAnalyzerInfo(empty_pb2.Empty(), None)
    kinds = {p.name: p.policy_type for p in info.policies}
    assert info.name == "gpu-dra" and info.supportsConfig
    assert kinds == {rule.name: (2 if rule.stack else 1) for rule in policy.RULES}  # POLICY_TYPE_STACK, _RESOURCE
    assert {p.name for p in info.policies if p.enforcementLevel == 1} == {  # MANDATORY by default in prod
        rule.name for rule in policy.RULES if not rule.always_advisory}


def test_configure_sets_each_policys_level_and_facts() -> None:
    """The pack config as `--policy-pack-config` hands it over: dev's advisory lint becomes mandatory, and the
    Kubernetes version in the config decides a gated field."""
    resources = mutate(happy_resources("dev"), TEMPLATE, (*REQUEST, "capacity"), {"requests": {"memory": "10Gi"}})
    config = pack_config_of(resources)
    assert analyze(resources).diagnostics[0].enforcementLevel == 1  # dra-feature-gates: mandatory everywhere
    config["dra-feature-gates"]["kubernetesVersion"] = "1.36"
    analysis = check.analyze(engine(resources), config, "dev")
    assert [d.policyName for d in analysis.diagnostics] == []


@pytest.mark.parametrize("stack", STACKS)
def test_repo_stacks_in_the_engines_shape_have_no_mandatory_violation_and_nothing_unjudged(stack: str) -> None:
    values, located = stack_values(ROOT, stack)
    built = build_stack(ROOT, stack, values, located)
    config = check.pack_config(built)
    for section in config.values():
        section.update(TODAY)
    analysis = check.analyze(check.engine_resources(run_program(ROOT, stack, values, built)), config,
                             built.config.environment.value)
    assert [d for d in analysis.diagnostics if d.enforcementLevel == 1] == []
    assert [r.not_applicable for r in analysis.responses if r.not_applicable] == []
    assert not any(CANT_RUN in d.message for d in analysis.diagnostics)


def test_prod_after_up_raises_no_violation_at_all() -> None:
    """Steady state: outputs are the live objects (uid, resourceVersion, status) and the eks components' outputs
    carry none of their configuration; the rules read the children, so nothing is falsely reported."""
    resources, config = _prod()
    assert any(r.type == "aws:eks/cluster:Cluster" for r in resources)
    assert "encryptionConfigKeyArn" not in next(r for r in resources if r.type == "eks:index:Cluster").outputs
    assert check.analyze(resources, config, "prod").findings == []


def test_the_check_reports_what_the_analyzer_answers() -> None:
    """`gpu-dra check` collects the rules' findings while the analyzer answers; both say the same, violation for
    violation, on the same URN."""
    resources = mutate(happy_resources(), "Cluster/gpu-prod", ("endpointPublicAccess",), True)
    resources = mutate(resources, TEMPLATE, (*REQUEST, "selectors"), selectors("device.driver =="))
    resources = mutate(resources, "Cluster/gpu-prod", protect=False)
    analysis = analyze(resources)
    violations = [f for f in analysis.findings if f.severity != NOT_JUDGED]
    assert len(violations) >= 3
    assert sorted((d.policyName, d.urn, d.message.split("\n", 1)[1]) for d in analysis.diagnostics) == sorted(
        (f.rule, f.object, check.violation_message(f)) for f in violations)


def test_an_unknown_value_no_rule_needs_silences_nothing() -> None:
    """The old pack copied every value of every resource and stopped at the first unknown: one unknown launch
    template ARN turned all 15 rules into "can't run". Now the rules read only what they need: the ARNs no rule
    reads change nothing; the template ids leave only the capacity-block group unjudged, whose instance type sits in
    its launch template (the group names none)."""
    resources, config = _prod()
    arns = _with_unknown(resources, "aws:ec2/launchTemplate:LaunchTemplate", {"arn": ENGINE_UNKNOWN},
                         {"arn": ENGINE_UNKNOWN})
    analysis = check.analyze(arns, config, "prod")
    assert not any(CANT_RUN in d.message for d in analysis.diagnostics) and analysis.findings == []
    ids = _with_unknown(arns, "aws:ec2/launchTemplate:LaunchTemplate",
                        outputs={"id": ENGINE_UNKNOWN, "latestVersion": ENGINE_UNKNOWN})
    template = {"id": ENGINE_UNKNOWN, "version": ENGINE_UNKNOWN}
    ids = _with_unknown(ids, "aws:eks/nodeGroup:NodeGroup", {"launchTemplate": template}, {"launchTemplate": template})
    analysis = check.analyze(ids, config, "prod")
    assert not any(CANT_RUN in d.message for d in analysis.diagnostics)
    assert {f.severity for f in analysis.findings} == {NOT_JUDGED}
    h100 = find(ids, "NodeGroup/gpu-prod-h100").urn
    assert {f.object for f in analysis.findings} == {h100}
    assert all("launchTemplate.id" in f.message for f in analysis.findings)


@pytest.mark.parametrize("case", CASES)
def test_every_case_is_still_caught_with_an_unknown_launch_template(case: Case) -> None:
    """Each bad-stack case, in a preview where the launch templates are being replaced (their ARN, id and version
    unknown): the same rule reports it on the same resource at the same path."""
    resources = case.change(happy_resources(case.environment, case.kubernetes_version))
    shaped = _with_unknown(engine(resources), "aws:ec2/launchTemplate:LaunchTemplate", {"arn": ENGINE_UNKNOWN},
                           {"arn": ENGINE_UNKNOWN, "id": ENGINE_UNKNOWN, "latestVersion": ENGINE_UNKNOWN})
    config = pack_config_of(resources, case.config)
    found = check.analyze(shaped, config, next(iter(config.values()))["environment"]).findings
    assert {f.rule for f in found} == {case.rule}
    on = urn(resources, case.reported_on) if case.reported_on else ""  # "": a team file's key, no resource
    assert placed(found) == [(case.rule, on, case.path)]


# The stack rules that read the Kubernetes objects, unknown in a first preview; legacy-workloads-placed reads only the
# node groups' declared labels, size and instance types, known then, and team-file-platform-keys, upgrade-safe,
# upgrade-reported and the kueue rules only the pack config. Less those, and dra-claim-provisionable, which
# judges only a stack with Karpenter NodePools (happy_resources has none).
STACK_RULES_OF_KUBERNETES_STATE = {rule.name for rule in policy.RULES if rule.stack} - {
    "legacy-workloads-placed", "team-file-platform-keys", "dra-claim-provisionable", "upgrade-safe",
    "upgrade-reported", "kueue-template-replaced", "kueue-mappings-changed", "kueue-devices-exist",
    "kueue-workloads-admissible"}


def test_a_first_preview_still_runs_every_resource_rule() -> None:
    """A new stack's first preview: ids, ARNs and the whole Kubernetes state are unknown. The resource rules judge
    the inputs they have (a bad selector, IMDSv1); the stack rules say once that they cannot judge yet."""
    resources = mutate(happy_resources(), TEMPLATE, (*REQUEST, "selectors"), selectors("device.driver =="))
    resources = mutate(resources, "LaunchTemplate/gpu-prod-l40s", ("metadataOptions", "httpTokens"), "optional")
    found = run_rules(resources, first_preview=True)
    violations = {(f.rule, f.path) for fs in found.values() for f in fs if f.severity != NOT_JUDGED}
    assert violations == {("dra-cel-compiles", "spec.spec.devices.requests[0].exactly.selectors[0].cel.expression"),
                          ("eks-hardening", "metadataOptions.httpTokens")}
    unjudged = {rule: [f for f in fs if f.severity == NOT_JUDGED] for rule, fs in found.items()}
    assert {rule for rule, fs in unjudged.items() if fs} == STACK_RULES_OF_KUBERNETES_STATE
    assert all(len(fs) <= 2 for fs in unjudged.values())  # said once (no-device-plugin: once per chart)


def test_a_first_preview_reports_what_was_not_judged_as_not_applicable() -> None:
    analysis = analyze(happy_resources(), first_preview=True)
    reasons = {n.policy_name: n.reason for r in analysis.responses for n in r.not_applicable}
    assert set(reasons) == STACK_RULES_OF_KUBERNETES_STATE
    assert "unknown until the cluster and its Kubernetes provider exist" in reasons["team-quota-required"]
    assert not any(CANT_RUN in d.message for d in analysis.diagnostics)


def test_an_unknown_encryption_config_counts_as_set() -> None:
    """pulumi-eks builds encryptionConfig from the key ARN only when one is given: unknown while prod's KMS key is
    new (its first preview)."""
    resources, config = _prod(first_preview=True)
    assert find(resources, "Cluster/gpu-prod-eksCluster").inputs["encryptionConfig"] == ENGINE_UNKNOWN
    found = check.analyze(resources, config, "prod").findings
    assert [f for f in found if f.rule == "eks-hardening"] == []
    without_key = mutate(happy_resources(), "Cluster/gpu-prod", ("encryptionConfigKeyArn",), DELETE)
    found = run_rules(without_key, first_preview=True)["eks-hardening"]
    assert [f.path for f in found if f.severity != NOT_JUDGED] == ["encryptionConfig"]


def test_an_unknown_endpoint_setting_is_not_judged_and_named() -> None:
    resources = _with_unknown(engine(happy_resources()), "aws:eks/cluster:Cluster", {"vpcConfig": ENGINE_UNKNOWN})
    found = check.analyze(resources, pack_config_of(happy_resources()), "prod")
    skipped, = found.findings
    assert (skipped.rule, skipped.severity) == ("eks-hardening", NOT_JUDGED)
    assert "vpcConfig unknown" in skipped.message
    reasons = [n.reason for r in found.responses for n in r.not_applicable]
    assert reasons == [f"gpu-prod-eksCluster: {skipped.message}"]


class _Unknowns(Mapping[str, Any]):
    """pulumi-policy's proxy in miniature: reading an unknown raises."""

    def __init__(self, data: dict[str, Any]):
        self.data = data

    def __getitem__(self, key: str) -> Any:
        from pulumi_policy.proxy import UnknownValueError

        if self.data[key] == ENGINE_UNKNOWN:
            raise UnknownValueError(ENGINE_UNKNOWN, [key])
        return self.data[key]

    def __iter__(self) -> Any:
        return iter(self.data)

    def __len__(self) -> int:
        return len(self.data)


def test_the_view_hands_over_unknowns_instead_of_raising() -> None:
    props = _Props(_Unknowns({"arn": ENGINE_UNKNOWN, "name": "lt"}))
    assert props["arn"] is UNKNOWN and props.get("name") == "lt" and "arn" in props
    assert dict(props) == {"arn": UNKNOWN, "name": "lt"}

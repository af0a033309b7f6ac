"""prod's H100 group runs on a Capacity Block: EKS wants the instance type in the launch template only, with the block's
market type and reservation (https://docs.aws.amazon.com/eks/latest/userguide/capacity-blocks-mng.html), and owns
the desired size around the block's window. The program says so, the engine model shows it, and the policy pack
still judges the H100 templates on H100 nodes."""

from __future__ import annotations

import dataclasses
from functools import cache
from typing import Any

from gpu_dra.cli import check
from gpu_dra.cli.offline import ProgramRun, Registration, run_program
from gpu_dra.core import policy
from gpu_dra.core.config.loader import build_stack, load_stack, stack_values
from gpu_dra.core.findings import NOT_JUDGED
from gpu_dra.core.policy import selectors
from gpu_dra.core.policy.engine import ENGINE_UNKNOWN, EngineResource
from gpu_dra.core.policy.resources import node_groups
from gpu_dra.core.render import nodes

from .conftest import ROOT

TODAY = {"kubernetes-version-supported": {"today": "2026-11-29"}}
GROUP = "gpu-prod-h100"
TEMPLATE_TYPE = "aws:ec2/launchTemplate:LaunchTemplate"
NODE_GROUP_TYPE = "aws:eks/nodeGroup:NodeGroup"


@cache
def program() -> ProgramRun:
    values, located = stack_values(ROOT, "prod")
    return run_program(ROOT, "prod", values, build_stack(ROOT, "prod", values, located))


def one(resources: Any, type_: str, name: str) -> Any:
    found = [r for r in resources if r.type == type_ and r.name == name]
    assert len(found) == 1, f"{type_} {name}: {[r.name for r in found]}"
    return found[0]


def stack_resources(view: list[EngineResource]) -> list[policy.Resource]:
    """The resources a stack policy reads: every resource's outputs (all known outside a first preview)."""
    return [policy.Resource(r.type, r.name, r.urn, r.outputs, r.protect, r.parent) for r in view]


def claim_context() -> policy.Context:
    """dra-claim-satisfiable's stack facts, as `gpu-dra check --pack-config` writes them."""
    return policy.context_from(check.pack_config(load_stack(ROOT, "prod"))["dra-claim-satisfiable"])


def test_the_launch_template_carries_the_instance_type_market_type_and_reservation() -> None:
    template = one(program().resources, TEMPLATE_TYPE, GROUP).inputs
    assert template["instanceType"] == "p5.48xlarge"
    assert template["instanceMarketOptions"] == {"marketType": "capacity-block"}
    assert template["capacityReservationSpecification"] == {
        "capacityReservationTarget": {"capacityReservationId": "cr-0123456789abcdef0"}}


def test_the_node_group_names_no_instance_types_and_leaves_the_desired_size_to_eks() -> None:
    run = program()
    group = one(run.resources, "eks:index:ManagedNodeGroup", GROUP).inputs
    assert "instanceTypes" not in group
    assert group["capacityType"] == "CAPACITY_BLOCK"
    assert group["subnetIds"] == ["subnet-0aa1bb2cc3dd4ee51"]  # the block's AZ only
    assert group["scalingConfig"]["desiredSize"] == 0
    assert group["ignoreScalingChanges"] is True  # pulumi-eks: ignoreChanges scalingConfig.desiredSize
    assert group["launchTemplate"]["id"] == one(run.resources, TEMPLATE_TYPE, GROUP).id


def test_other_groups_keep_their_instance_types_on_the_node_group() -> None:
    run = program()
    for name in ("gpu-prod-l40s", "gpu-prod-legacy-a10g"):
        assert one(run.resources, "eks:index:ManagedNodeGroup", name).inputs["instanceTypes"]
        assert "ignoreScalingChanges" not in one(run.resources, "eks:index:ManagedNodeGroup", name).inputs
        assert "instanceType" not in one(run.resources, TEMPLATE_TYPE, name).inputs


def test_only_a_capacity_block_template_gets_the_instance_type() -> None:
    config = load_stack(ROOT, "prod").config
    settings = {g.name: nodes.launch_template_settings(g) for g in config.node_groups}
    assert {name: s.instance_type for name, s in settings.items()} == {
        "h100": "p5.48xlarge", "l40s": None, "legacy-a10g": None}


def test_the_engine_sees_no_instance_types_on_the_node_group() -> None:
    view = check.engine_resources(program())
    node_group = one(view, NODE_GROUP_TYPE, GROUP)
    assert "instanceTypes" not in node_group.inputs and "instanceTypes" not in node_group.outputs
    assert node_group.inputs["scalingConfig"]["desiredSize"] == 0
    assert node_group.outputs["launchTemplate"]["id"] == one(view, TEMPLATE_TYPE, GROUP).outputs["id"]


def test_check_judges_the_h100_templates_on_the_h100_fleet() -> None:
    found = check.check_stack(ROOT, "prod", TODAY)
    assert [v.finding for v in found if v.finding.rule == "dra-claim-satisfiable"] == []
    resources = stack_resources(check.engine_resources(program()))
    groups, unknown = node_groups(resources)
    assert unknown == [] and {g.name: g.instance_types for g in groups}["h100"] == ["p5.48xlarge"]
    reports, skipped = selectors.explain_on_fleet("dra-claim-satisfiable", resources, claim_context())
    h100_x8 = next(report for claim, report, _ in reports if claim == "ml-training/h100-x8")
    assert skipped == [] and h100_x8.allocatable
    assert h100_x8.nodes and all(node.startswith("h100-") for node in h100_x8.nodes)


def test_without_the_templates_instance_type_the_h100_templates_fail() -> None:
    """The type comes from the launch template: drop it there and the H100 group has no devices."""
    def untyped(r: Registration) -> Registration:
        if r.type == TEMPLATE_TYPE and r.name == GROUP:
            return dataclasses.replace(r, inputs={k: v for k, v in r.inputs.items() if k != "instanceType"},
                                       outputs={k: v for k, v in r.outputs.items() if k != "instanceType"})
        return r
    run = program()
    view = check.engine_resources(ProgramRun(run.stack, [untyped(r) for r in run.resources], run.outputs))
    failing = {f.object for f in selectors.dra_claim_satisfiable(stack_resources(view), claim_context())}
    assert one(view, "kubernetes:resource.k8s.io/v1:ResourceClaimTemplate", "training.h100-x8").urn in failing


def test_a_first_preview_does_not_judge_the_group_while_its_template_is_new() -> None:
    """The node group refers to its template by the template's id, unknown until the template exists."""
    found = check.check_stack(ROOT, "prod", TODAY, first_preview=True)
    h100 = [v for v in found if v.finding.rule == "dra-claim-satisfiable" and v.finding.object.endswith(f"::{GROUP}")]
    assert [v.enforcement for v in h100] == [NOT_JUDGED]
    assert "launchTemplate.id" in h100[0].finding.message
    assert [v for v in found if v.enforcement == policy.MANDATORY] == []


def test_a_new_template_for_the_group_leaves_its_claims_unjudged_not_failed() -> None:
    """A preview that replaces the H100 launch template (an existing cluster, so the claims are known): the group's
    type is unknown, so a claim only it could serve is not judged rather than reported unsatisfiable."""
    def replaced(r: EngineResource) -> EngineResource:
        if r.type == TEMPLATE_TYPE and r.name == GROUP:
            return dataclasses.replace(r, outputs={**r.outputs, "id": ENGINE_UNKNOWN, "latestVersion": ENGINE_UNKNOWN})
        if r.type == NODE_GROUP_TYPE and r.name == GROUP:
            template = {"id": ENGINE_UNKNOWN, "version": ENGINE_UNKNOWN}
            return dataclasses.replace(r, outputs={**r.outputs, "launchTemplate": template})
        return r
    config = check.pack_config(load_stack(ROOT, "prod"))
    for section in config.values():
        section.update(TODAY["kubernetes-version-supported"])
    view = [replaced(r) for r in check.engine_resources(program())]
    found = [f for f in check.analyze(view, config, "prod").findings if f.rule == "dra-claim-satisfiable"]
    assert [(f.severity, f.object) for f in found] == [(NOT_JUDGED, one(view, NODE_GROUP_TYPE, GROUP).urn)]

"""`gpu-dra upgrade` (issue 30): a stack judged at its version and at the target, section by section, each on a stack
made for it from the repository's; the command's exits, JSON and SARIF."""

from __future__ import annotations

import dataclasses
import datetime
import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from gpu_dra.cli.inputs import read_inputs
from gpu_dra.core.analysis import migrate, upgrade
from gpu_dra.core.analysis.upgrade import judging, releases
from gpu_dra.core.config.loader import load_stack
from gpu_dra.core.facts import eks
from gpu_dra.core.facts.kubernetes_apis import SERVED_APIS, removed_between

from .conftest import ROOT, Project, load_tool
from .test_cli import gpu_dra
from .test_existing_cluster import _existing
from .test_team_namespaces import _committed

example = load_tool("docs_upgrade_example")

# A template asking for more memory than any GPU of the stacks has: 1.35 drops the capacity request
# (DRAConsumableCapacity is alpha, off on EKS) and gives it a whole GPU; 1.36 keeps the request, which no device meets.
OVERSIZED: dict[str, Any] = {"name": "big-share", "description": "200Gi of one GPU's memory",
             "requests": [{"name": "gpu", "deviceClass": "gpu.nvidia.com", "capacity": {"memory": "200Gi"}}]}


def _team(project: Project, templates: list[dict[str, Any]], stack: str = "dev") -> None:
    (project.root / "stacks" / "teams" / "edge.yaml").write_text(yaml.safe_dump(
        {"name": "edge", "description": "templates made for the upgrade tests",
         "quota": {"claims": 4, "devices": {"gpu.nvidia.com": 1}}, "claimTemplates": templates}))
    project.edit_stack(stack, lambda config: config["gpu-dra:teams"].update({"edge": {}}))


def _judge(project: Project, stack: str, what: str, target: str, **kwargs: Any) -> upgrade.UpgradeReport:
    return upgrade.judge(upgrade.load_pair(project.root, stack, what, target), **kwargs)


# ------------------------------------------------------------------------------------------------------ calendar
def test_the_calendar_is_judged_by_the_day_given(project: Project) -> None:
    march = _judge(project, "dev", "kubernetes", "1.36", today=datetime.date(2027, 3, 1))
    current, target = march.calendar
    assert (current.version, current.standard_ends, current.state) == (
        "1.35", "2027-03-27", "standard support, 26 day(s) left")
    assert target.price_per_hour == "0.10" and target.standard_ends == "2027-08-02"
    assert not [f for f in march.findings if f.rule == "upgrade-support"]
    june = _judge(project, "dev", "kubernetes", "1.36", today=datetime.date(2027, 6, 1))
    (soon,) = [f for f in june.findings if f.rule == "upgrade-support" and "target" in f.message]
    assert "in 62 day(s)" in soon.message and soon.file == "stacks/Pulumi.dev.yaml" and soon.line
    assert june.calendar[0].price_per_hour == "0.60"  # 1.35 is in extended support then, billed as such
    (left,) = [f for f in june.findings if f.rule == "upgrade-support" and "target" not in f.message]
    assert "left EKS standard support on 2027-03-27" in left.message


# ------------------------------------------------------------------------------------------------- gates, mappings
def test_gates_that_switch_name_the_mappings_that_become_effective(project: Project) -> None:
    project.edit_stack("dev", lambda config: config.update(
        {"gpu-dra:legacyMappings": [{"extendedResourceName": "example.com/l4", "deviceClass": "gpu-l4"}]}))
    report = _judge(project, "dev", "kubernetes", "1.36")
    switched = {s.gate: s for s in report.gates}
    assert set(switched) == {"DRAExtendedResource", "DRAConsumableCapacity", "DRAPartitionableDevices",
                             "DRADeviceTaints", "DRADeviceBindingConditions"}  # alpha in 1.35, beta and on in 1.36
    extended = switched["DRAExtendedResource"]
    assert (extended.before, extended.after, extended.turns_on) == ("alpha, off", "beta, on", True)
    assert any("DeviceClass gpu-l4 (gpu-dra:legacyMappings[0]) starts serving example.com/l4" in e
               for e in extended.effects)
    assert any("DeviceClass gpu.nvidia.com (the DRA driver chart) starts serving nvidia.com/gpu" in e
               for e in extended.effects)
    mapped = {f.object for f in report.findings if f.rule == "upgrade-mapping"}
    assert mapped == {"DeviceClass gpu-l4", "DeviceClass gpu.nvidia.com"}
    steps = [s.what for s in report.order]
    assert any("remove gpu-dra:legacyMappings[0]" in s for s in steps)
    assert steps.index(next(s for s in steps if "example.com/l4" in s)) < steps.index(
        next(s for s in steps if s.startswith("control plane to 1.36")))  # decided before the control plane


def test_no_gate_section_without_a_switch(project: Project) -> None:
    """1.34 -> 1.35 switches no DRA gate on EKS (DRADeviceTaintRules arrives alpha, off)."""
    project.edit_stack("dev", lambda config: config["gpu-dra:cluster"].update(
        {"kubernetesVersion": "1.34", "upgradePolicy": "EXTENDED"}))
    report = _judge(project, "dev", "kubernetes", "1.35")
    assert report.gates == [] and not [f for f in report.findings if f.rule == "upgrade-mapping"]


# ------------------------------------------------------------------------------------------ fields and verdicts
def test_a_template_that_loses_its_place_is_an_error_on_its_line(project: Project) -> None:
    _team(project, [OVERSIZED])
    report = _judge(project, "dev", "kubernetes", "1.36")
    (change,) = report.verdicts
    assert change.claim == "edge/big-share" and change.team == "edge"
    assert change.before.allocatable and not change.after.allocatable
    assert change.after.reason  # the 1.36 allocator's own words
    (verdict,) = [f for f in report.findings if f.rule == "upgrade-verdict"]
    assert (verdict.severity, verdict.file, verdict.line) == ("error", "stacks/teams/edge.yaml", 2)
    (field,) = [f for f in report.findings if f.rule == "upgrade-field"]
    assert field.object == "ResourceClaimTemplate edge/big-share" and "starts to act" in field.message
    assert (field.file, field.line) == ("stacks/teams/edge.yaml", 2)
    assert report.breaks
    assert report.unchanged == sum(len(t.claim_templates) for t in load_stack(project.root, "dev").teams) - 1


def test_a_template_the_target_serves_alike_is_no_finding(project: Project) -> None:
    _team(project, [{**OVERSIZED, "requests": [{**OVERSIZED["requests"][0], "capacity": {"memory": "10Gi"}}]}])
    report = _judge(project, "dev", "kubernetes", "1.36")
    assert report.verdicts == [] and not report.breaks
    assert {(f.rule, f.severity) for f in report.findings} == {("upgrade-field", "warning"),
                                                               ("upgrade-mapping", "warning")}


# ---------------------------------------------------------------------------------------------------- workloads
def test_a_legacy_workload_served_by_the_mapping_at_the_target(project: Project) -> None:
    """prod's ops team runs gpu-diag on the device-plugin group legacy-a10g; at 1.36 the chart's gpu.nvidia.com
    serves nvidia.com/gpu, which migrate places there first, as on a 1.36 stack today."""
    stack = load_stack(project.root, "prod")
    sources = read_inputs([str(project.root / p) for t in stack.teams for p in t.workloads])
    workloads, claims = migrate.read_workloads(sources, "1.35")
    report = _judge(project, "prod", "kubernetes", "1.36", workloads=workloads, claims=claims)
    (move,) = report.workloads
    assert move.workload == "CronJob gpu-ops/gpu-diag"
    assert move.before.startswith("device plugin on legacy-a10g")
    assert move.after.startswith("DRA through nvidia.com/gpu -> DeviceClass gpu.nvidia.com")
    assert not move.stranded and not move.placed
    (found,) = [f for f in report.findings if f.rule == "upgrade-workload"]
    assert found.severity == "warning" and found.line == 5 and found.file.endswith("gpu-diag.yaml")


def test_workloads_that_gain_a_place_and_one_that_stays_without() -> None:
    result = gpu_dra("upgrade", "--stack", "dev", "--to", "1.36", "--format", "json", "examples/migrate/")
    assert result.returncode == 0, result.stderr
    (report,) = json.loads(result.stdout)["upgrades"]
    moved = {m["workload"]: m for m in report["workloads"]}
    assert moved["Deployment inference/web"]["placed"]
    assert "Job ml-training/pretrain-16" not in moved  # nowhere at both versions (16 GPUs on one node), for
    assert report["workloads_judged"] == 8  # another reason only: not a move


# ------------------------------------------------------------------------------------------------------------ APIs
def test_api_versions_the_target_stops_serving() -> None:
    assert removed_between("resource.k8s.io/v1beta1", "1.37", "1.38") == SERVED_APIS["resource.k8s.io/v1beta1"]
    assert removed_between("resource.k8s.io/v1beta1", "1.35", "1.36") is None
    assert removed_between("resource.k8s.io/v1beta2", "1.37", "1.38") is None  # until 1.39
    assert removed_between("resource.k8s.io/v1", "1.36", "1.38") is None


def test_api_uses_name_the_manifests_given(project: Project) -> None:
    stack = load_stack(project.root, "dev")
    later = stack.model_copy(update={"config": stack.config.model_copy(update={
        "cluster": stack.config.cluster.model_copy(update={"kubernetes_version": "1.38"})})})
    old = {"apiVersion": "resource.k8s.io/v1beta1", "kind": "DeviceClass", "metadata": {"name": "old"}}
    new = {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "new"}}
    uses = judging.api_uses(stack, later, [(old, "classes.yaml"), (new, "classes.yaml")])
    assert [(u.name, u.where, u.removed_in, u.replacement) for u in uses] == [
        ("old", "classes.yaml", "1.38", "resource.k8s.io/v1")]  # gpu-dra's own objects are v1: none of them


def test_a_v1beta1_manifest_is_no_finding_before_its_removal(tmp_path: Path) -> None:
    manifest = tmp_path / "class.yaml"
    manifest.write_text(yaml.safe_dump({"apiVersion": "resource.k8s.io/v1beta1", "kind": "DeviceClass",
                                        "metadata": {"name": "old"}, "spec": {}}))
    result = gpu_dra("upgrade", "--stack", "dev", "--to", "1.36", "--format", "json", str(manifest))
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["upgrades"][0]["apis"] == []


# ------------------------------------------------------------------------------------------ driver and Karpenter
def test_a_chart_line_change_says_what_the_release_changes(project: Project) -> None:
    project.edit_stack("dev", lambda config: config["gpu-dra:draDriver"].update(
        {"chart": "nvidia-dra-driver-gpu", "version": "25.12.0"}))
    report = _judge(project, "dev", "driver", "dra-driver-nvidia-gpu@0.4.1")
    assert report.change.current == "nvidia-dra-driver-gpu@25.12.0"
    assert "driver gate DeviceMetadata arrives (alpha, off by default)" in report.driver
    assert "value controller.replicas is new" in report.driver
    assert report.order[0].what.startswith("set gpu-dra:draDriver.chart: dra-driver-nvidia-gpu and version: 0.4.1")
    assert report.calendar == [] and report.gates == []


def test_a_release_with_nothing_modelled_says_so(project: Project) -> None:
    project.edit_stack("dev", lambda config: config["gpu-dra:draDriver"].update({"version": "0.4.0"}))
    report = _judge(project, "dev", "driver", "0.4.1")
    assert report.driver == ["no gate, value, DeviceClass or published attribute gpu-dra models differs between "
                             "dra-driver-nvidia-gpu 0.4.0 and dra-driver-nvidia-gpu 0.4.1"]


def test_karpenter_types_gained_and_lost_per_node_pool() -> None:
    said = releases.karpenter_type_changes([("gpu", ["g6f.xlarge", "g7.xlarge", "g6.xlarge"])],
                                           {"g6f.xlarge": (), "g6.xlarge": ()}, {"g7.xlarge": (), "g6.xlarge": ()},
                                           ("1.15.0", "1.15.2"))
    assert said == ["NodePool gpu: Karpenter 1.15.2 has no DRA metadata for g6f.xlarge (Karpenter 1.15.0 had): no "
                    "node of these types is launched for a claim",
                    "NodePool gpu: Karpenter 1.15.2 gains DRA metadata for g7.xlarge"]


def test_a_target_the_stack_file_refuses_is_an_error_on_its_key(project: Project,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """A target past standard support with upgradePolicy STANDARD is refused by the loader (EKS would upgrade it
    itself): as it will be of 1.36 after 2027-08-02, made so today by moving its calendar row."""
    row = eks.SUPPORT_CALENDAR["1.36"]
    monkeypatch.setitem(eks.SUPPORT_CALENDAR, "1.36", dataclasses.replace(
        row, standard_ends=datetime.date(2026, 1, 1), extended_ends=datetime.date(2027, 1, 1)))
    report = _judge(project, "dev", "kubernetes", "1.36")
    (refused,) = [f for f in report.findings if f.rule == "upgrade-refused"]
    line = next(n for n, text in enumerate((project.root / "stacks" / "Pulumi.dev.yaml").read_text().splitlines(), 1)
                if "kubernetesVersion:" in text)
    assert (refused.severity, refused.file, refused.line) == ("error", "stacks/Pulumi.dev.yaml", line)
    assert "1.36 left EKS standard support on 2026-01-01" in refused.message
    assert report.breaks and report.verdicts == [] and report.order[0].what.startswith("make the stack valid")


# ------------------------------------------------------------------------------------------------ the command
@pytest.mark.parametrize(("args", "words"), [
    (["--stack", "dev", "--to", "1.34"], "EKS cannot downgrade a control plane"),
    (["--stack", "dev", "--to", "1.35"], "the stack already runs 1.35"),
    (["--stack", "dev", "--karpenter-to", "1.15.0"], "runs no Karpenter"),
    (["--stack", "dev", "--to", "136"], "is not a Kubernetes minor version such as"),
    (["--stack", "dev", "--to", "2.0"], "is not a Kubernetes minor version such as"),
    (["--stack", "dev", "--to", "1.36.0"], "is not a Kubernetes minor version such as"),
    (["--stack", "dev", "--to", "1.37"], "Kubernetes 1.37 is not a version gpu-dra stacks support"),
    (["--stack", "staging", "--karpenter-to", "1.15.2"], "whose DRA metadata gpu-dra has not read"),
    (["--stack", "dev", "--driver-to", "0.5.0"], "a release gpu-dra has not read yet"),
    (["--stack", "dev", "--driver-to", "garbage"], "is not a release such as"),
    (["--stack", "dev", "--driver-to", "nvidia-dra-driver-gpu@garbage"], "is not a release such as"),
    (["--stack", "dev", "--driver-to", "nvidia-dra-driver-gpu@25.12.0"], "older driver release than 0.4.1"),
    (["--stack", "dev", "--driver-to", "other-chart@1.0.0"], "no chart line gpu-dra knows"),
])
def test_what_cannot_be_judged_exits_2(args: list[str], words: str) -> None:
    result = gpu_dra("upgrade", *args)
    assert result.returncode == 2 and words in result.stderr, result.stderr


def test_every_stack_to_its_next_minor() -> None:
    result = gpu_dra("upgrade", "--all-stacks", "--to", "next", "--format", "json")
    assert result.returncode == 0, result.stderr
    document = json.loads(result.stdout)
    reports = {r["stack"]: r for r in document["upgrades"]}
    assert set(reports) == {"dev", "prod"}
    assert reports["dev"]["change"]["target"] == "1.36" and not reports["dev"]["breaks"]
    assert document["skipped"] == [  # 1.37: no EKS release gpu-dra supports yet
        "stack automode already runs 1.36, the newest Kubernetes version gpu-dra stacks support",
        "stack staging already runs 1.36, the newest Kubernetes version gpu-dra stacks support"]


def test_sarif_points_at_the_files_and_lines(project: Project) -> None:
    _team(project, [OVERSIZED])
    result = gpu_dra("upgrade", "--stack", "dev", "--to", "1.36", "--format", "sarif", cwd=project.root)
    assert result.returncode == 1, result.stderr
    results = json.loads(result.stdout)["runs"][0]["results"]
    (verdict,) = [r for r in results if r["ruleId"] == "upgrade-verdict"]
    location = verdict["locations"][0]["physicalLocation"]
    assert location == {"artifactLocation": {"uri": "stacks/teams/edge.yaml"}, "region": {"startLine": 2}}
    assert verdict["level"] == "error"


# ------------------------------------------------------------------------------- the pack, on a pull request
def _check(project: Project, stack: str) -> tuple[int, list[dict[str, Any]]]:
    result = gpu_dra("check", "--stack", stack, "--format", "json", "--base", "main", cwd=project.root)
    assert result.returncode in (0, 1), result.stderr
    (report,) = json.loads(result.stdout)["stacks"]
    return result.returncode, [v for v in report["violations"] if v["policy"].startswith("upgrade-")]


def _to_136(config: dict[str, Any]) -> None:
    config["gpu-dra:cluster"]["kubernetesVersion"] = "1.36"


def test_a_pull_request_raising_the_version_is_reported_as_the_upgrade_it_is(project: Project) -> None:
    _committed(project)
    project.edit_stack("prod", _to_136)
    code, found = _check(project, "prod")
    assert code == 0  # nothing breaks: the report is advisory
    assert {v["policy"] for v in found} == {"upgrade-reported"}
    assert all(v["enforcement"] == "advisory" for v in found)
    messages = " ".join(v["message"] for v in found)
    assert "Kubernetes 1.35 -> 1.36 since main" in messages
    assert "DeviceClass gpu.nvidia.com (the DRA driver chart) starts serving nvidia.com/gpu" in messages
    assert "CronJob gpu-ops/gpu-diag is served another way" in messages


def test_an_upgrade_that_strands_a_template_in_prod_is_mandatory(project: Project) -> None:
    _team(project, [OVERSIZED], stack="prod")
    _committed(project)
    project.edit_stack("prod", _to_136)
    code, found = _check(project, "prod")
    (safe,) = [v for v in found if v["policy"] == "upgrade-safe"]
    assert safe["enforcement"] == "mandatory" and code == 1
    assert (safe["file"], safe["line"]) == ("stacks/teams/edge.yaml", 2)
    assert "[upgrade-verdict]" in safe["message"] and "NOT allocatable" in safe["message"]


def test_no_version_change_no_upgrade_finding(project: Project) -> None:
    _committed(project)
    project.edit("stacks/teams/inference.yaml", lambda team: team.update(description="changed"))
    assert _check(project, "prod")[1] == []


def test_the_worked_example_in_the_docs_is_the_commands_output() -> None:
    """docs/upgrading.md shows `gpu-dra upgrade --stack dev --to 1.36 examples/migrate/` as it printed on the day the
    page states (`make docs` writes it: tools/docs_upgrade_example.py)."""
    text = (ROOT / "docs" / "upgrading.md").read_text()
    command = f"$ gpu-dra {' '.join(example.COMMAND)}\n"
    shown = text[text.index(command) + len(command):]
    shown = shown[:shown.index("```\n")]
    assert f"output of {example.DAY}" in text
    result = gpu_dra(*example.COMMAND, "--today", example.DAY)
    assert result.returncode == 0, result.stderr
    assert result.stdout == shown


def test_newest_and_next_leave_stacks_already_there_with_a_word() -> None:
    result = gpu_dra("upgrade", "--all-stacks", "--driver-to", "newest", "--format", "json")
    assert result.returncode == 0, result.stderr
    document = json.loads(result.stdout)
    assert document["upgrades"] == []
    assert "stack automode installs no DRA driver chart (EKS Auto Mode runs NVIDIA's driver itself)" in \
        document["skipped"]
    assert ("stack prod already runs 0.4.1, the newest dra-driver-nvidia-gpu release gpu-dra has read (0.5.0 "
            "exists, unread)") in document["skipped"]
    one = gpu_dra("upgrade", "--stack", "automode", "--driver-to", "0.4.1")
    assert one.returncode == 2 and "installs no DRA driver chart" in one.stderr


def test_the_auto_mode_stack_on_a_pull_request_has_no_driver_upgrade(project: Project) -> None:
    _committed(project)
    project.edit_stack("automode", lambda config: config["gpu-dra:cluster"].update(name="gpu-auto-2"))
    assert _check(project, "automode")[1] == []


def test_an_existing_cluster_upgrades_its_providers_way_with_its_declared_gates(project: Project) -> None:
    project.edit_stack("dev", _existing)
    report = _judge(project, "dev", "kubernetes", "1.36")
    assert report.calendar == [] and any("support calendar is its provider's" in n for n in report.notes)
    assert any(s.what.startswith("the cluster to 1.36, its provider's way") for s in report.order)
    assert not any(s.what.startswith("control plane to") or s.what.startswith("add-ons") for s in report.order)
    assert "DRAExtendedResource" in {g.gate for g in report.gates}

    def declared(config: dict[str, Any]) -> None:  # the cluster runs the gate on at 1.35 already
        config["gpu-dra:cluster"]["featureGates"] = {"DRAExtendedResource": True}
    project.edit_stack("dev", declared)
    report = _judge(project, "dev", "kubernetes", "1.36")
    assert "DRAExtendedResource" not in {g.gate for g in report.gates}
    assert not [f for f in report.findings if f.rule == "upgrade-mapping"]


def test_device_taints_name_the_drivers_health_taints_and_who_tolerates_them(project: Project) -> None:
    """0.4.x taints unhealthy GPUs when its health check is on; 1.36 starts honouring device taints."""
    tolerant = {"name": "diagnostics", "description": "runs on a GPU whatever its health",
                "requests": [{"name": "gpu", "deviceClass": "gpu-l4",
                              "tolerations": [{"key": "gpu.nvidia.com/xid", "operator": "Exists"}]}]}
    _team(project, [tolerant])
    (off,) = next(g for g in _judge(project, "dev", "kubernetes", "1.36").gates if g.gate == "DRADeviceTaints").effects
    assert "(NVMLDeviceHealthCheck) is off on this stack" in off
    project.edit_stack("dev", lambda config: config["gpu-dra:draDriver"]["featureGates"].update(
        {"NVMLDeviceHealthCheck": True}))
    report = _judge(project, "dev", "kubernetes", "1.36")
    (on,) = next(g for g in report.gates if g.gate == "DRADeviceTaints").effects
    assert "tainted gpu.nvidia.com/xid, gpu.nvidia.com/gpu-lost (NoSchedule)" in on
    assert on.endswith("but those of the templates that tolerate it: edge/diagnostics")


# ------------------------------------------------------------------------------- one model behind every verb
def test_the_places_at_the_target_are_migrates_on_the_stack_after_the_change(project: Project) -> None:
    report = _judge(project, "prod", "kubernetes", "1.36", **_team_workloads(project, "prod"))
    project.edit_stack("prod", _to_136)
    result = gpu_dra("migrate", "--stack", "prod", "--format", "json", cwd=project.root)
    assert result.returncode == 0, result.stderr
    (placed,) = json.loads(result.stdout)["workloads"]
    (move,) = report.workloads
    mapping = placed["placement"]["mapping"]
    assert (mapping["device_class"], mapping["pods"], placed["placement"]["device_plugin"]) == ("gpu.nvidia.com", 1, [])
    assert move.after == "DRA through nvidia.com/gpu -> DeviceClass gpu.nvidia.com (1 pod(s))"


def test_each_verdict_is_explains_on_a_stack_with_karpenter(project: Project) -> None:
    """staging serves A100s from a Karpenter NodePool: a template Karpenter would never launch a node for is no
    usable template to upgrade either, as explain --stack says."""
    never = {"name": "two-distinct", "description": "two A100s with distinct UUIDs",
             "requests": [{"name": "gpus", "deviceClass": "gpu-a100", "count": 2}],
             "constraints": [{"distinctAttribute": "gpu.nvidia.com/uuid"}]}
    _team(project, [never], stack="staging")
    stack = load_stack(project.root, "staging")
    ours = judging.verdicts(stack)
    result = gpu_dra("explain", "--stack", "staging", "--format", "json", cwd=project.root)
    theirs = {c["claim"]: c for c in json.loads(result.stdout)["claims"]}
    assert set(ours) == set(theirs)
    for claim, (_, verdict) in ours.items():
        assert verdict.usable == (theirs[claim]["allocatable"] and not theirs[claim].get("never_provisioned")), claim
        assert verdict.provisioning == theirs[claim].get("provisioning", ""), claim
    assert ours["edge/two-distinct"][1].allocatable and not ours["edge/two-distinct"][1].usable


def _team_workloads(project: Project, name: str) -> dict[str, Any]:
    stack = load_stack(project.root, name)
    sources = read_inputs([str(project.root / p) for t in stack.teams for p in t.workloads])
    workloads, claims = migrate.read_workloads(sources, stack.config.cluster.kubernetes_version)
    return {"workloads": workloads, "claims": claims}


def test_a_pull_request_lowering_the_version_is_refused_in_prod(project: Project) -> None:
    _committed(project)
    project.edit_stack("prod", lambda config: config["gpu-dra:cluster"].update(
        {"kubernetesVersion": "1.34", "upgradePolicy": "EXTENDED"}))
    code, found = _check(project, "prod")
    (safe,) = [v for v in found if v["policy"] == "upgrade-safe"]
    assert code == 1 and safe["enforcement"] == "mandatory"
    assert "lowers kubernetesVersion from 1.35 to 1.34: EKS cannot downgrade a control plane" in safe["message"]
    assert safe["file"] == "stacks/Pulumi.prod.yaml" and safe["line"]


def test_a_pull_request_switching_the_chart_line_judges_the_base_on_its_own_line(project: Project) -> None:
    """The base names the 25.x line; the change drops `chart:` for the default line's 0.4.1."""
    project.edit_stack("dev", lambda config: config["gpu-dra:draDriver"].update(
        {"chart": "nvidia-dra-driver-gpu", "version": "25.12.0"}))
    _committed(project)
    project.edit_stack("dev", lambda config: config["gpu-dra:draDriver"].pop("chart"))
    project.edit_stack("dev", lambda config: config["gpu-dra:draDriver"].update(version="0.4.1"))
    _, found = _check(project, "dev")
    (driver,) = [v for v in found if "[upgrade-driver]" in v["message"]]
    assert driver["policy"] == "upgrade-reported"
    assert driver["message"].startswith("the DRA driver chart nvidia-dra-driver-gpu@25.12.0 -> "
                                        "dra-driver-nvidia-gpu@0.4.1 since main: [upgrade-driver] ")
    assert "driver gate DeviceMetadata arrives" in driver["message"]


# ------------------------------------------------------------------------------------- after the second review
def test_a_pull_request_skipping_a_minor_is_mandatory_in_prod(project: Project) -> None:
    project.edit_stack("prod", lambda config: config["gpu-dra:cluster"].update(
        {"kubernetesVersion": "1.34", "upgradePolicy": "EXTENDED"}))
    _committed(project)
    project.edit_stack("prod", _to_136)
    code, found = _check(project, "prod")
    (safe,) = [v for v in found if v["policy"] == "upgrade-safe"]
    assert code == 1 and "EKS upgrades a control plane one minor version at a time, so raise it to 1.35" in \
        safe["message"]


def test_a_pull_request_moving_the_driver_back_is_said_not_judged(project: Project) -> None:
    _committed(project)
    project.edit_stack("dev", lambda config: config["gpu-dra:draDriver"].update(version="0.4.0"))
    code, found = _check(project, "dev")
    (back,) = found
    assert back["policy"] == "upgrade-reported" and code == 0
    assert "moves the DRA driver to an older release (0.4.1 -> 0.4.0): not judged" in back["message"]


def test_an_invalid_workload_with_a_version_change_is_the_config_error_it_is(project: Project) -> None:
    _committed(project)
    project.edit("workloads/ops/gpu-diag.yaml", lambda job: job["spec"]["jobTemplate"]["spec"]["template"]["spec"][
        "containers"][0]["resources"]["limits"].update({"nvidia.com/gpu": "abc"}))
    project.edit_stack("prod", _to_136)
    result = gpu_dra("check", "--stack", "prod", "--base", "main", cwd=project.root)
    assert result.returncode == 2 and "internal error" not in result.stderr, result.stderr
    assert "gpu-diag.yaml" in result.stderr


def test_a_device_class_field_points_at_its_legacy_mapping(project: Project) -> None:
    project.edit_stack("dev", lambda config: config.update(
        {"gpu-dra:legacyMappings": [{"extendedResourceName": "example.com/l4", "deviceClass": "gpu-l4"}]}))
    report = _judge(project, "dev", "kubernetes", "1.36")
    (field,) = [f for f in report.findings if f.rule == "upgrade-field"]
    text = (project.root / "stacks" / "Pulumi.dev.yaml").read_text().splitlines()
    assert field.object == "DeviceClass gpu-l4" and "extendedResourceName" in text[field.line - 1] + text[field.line]


@pytest.mark.parametrize(("stack", "args", "words"), [
    ("chart-25", ["--driver-to", "0.4.1"], "(0.4.1 is a release of dra-driver-nvidia-gpu: set chart: "),
    ("existing", ["--to", "1.34"], "a cluster is not downgraded"),
])
def test_bad_targets_are_worded_for_the_stack(project: Project, stack: str, args: list[str], words: str) -> None:
    if stack == "chart-25":
        project.edit_stack("dev", lambda config: config["gpu-dra:draDriver"].update(
            {"chart": "nvidia-dra-driver-gpu", "version": "25.12.0"}))
    else:
        project.edit_stack("dev", _existing)
    result = gpu_dra("upgrade", "--stack", "dev", *args, cwd=project.root)
    assert result.returncode == 2 and words in result.stderr, result.stderr


def test_every_stack_to_an_older_minor_judges_none() -> None:
    result = gpu_dra("upgrade", "--all-stacks", "--to", "1.35")
    assert result.returncode == 0, result.stderr
    assert "stack staging runs 1.36, newer than 1.35: nothing to judge" in result.stdout


def test_sarif_of_stdin_has_no_file_location() -> None:
    manifest = yaml.safe_dump({"apiVersion": "resource.k8s.io/v1beta1", "kind": "DeviceClass",
                               "metadata": {"name": "old"}, "spec": {}})
    result = gpu_dra("upgrade", "--stack", "prod", "--to", "1.36", "--format", "sarif", "-", input=manifest)
    results = json.loads(result.stdout)["runs"][0]["results"]
    assert results and all("<stdin>" not in json.dumps(r["locations"]) for r in results)

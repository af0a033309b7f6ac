"""Kueue for the teams' queues (issue 31): one team declaration gives both the hard quota and a Kueue queue; the
staging stack runs Kueue for inference; what would make Kueue refuse or never admit a team's claims is a config
error on its line. Kueue's own documented DRA example (tests/data/kueue/, v0.19.2) is the shape and the charge the
rendered objects are checked against."""

from __future__ import annotations

import json
import subprocess
from typing import Any

import pytest
import yaml

from gpu_dra.core.config.loader import load_stack
from gpu_dra.core.config.models import ClaimTemplate
from gpu_dra.core.config.queue_rules import mapped_classes, per_pod
from gpu_dra.core.facts import kueue
from gpu_dra.core.render import kueue as render

from .conftest import ROOT, Project
from .test_cli import gpu_dra
from .test_config import _problems, _problems_of
from .test_program import program
from .test_schema_valid import _kueue_validator
from .test_team_namespaces import _committed

SAMPLES = ROOT / "tests" / "data" / "kueue"


def _documents(name: str) -> list[dict[str, Any]]:
    return [d for d in yaml.safe_load_all((SAMPLES / name).read_text()) if d]


def _team_queue(project: Project, team: str, queue: dict[str, Any] | None, **extra: Any) -> None:
    def change(data: dict[str, Any]) -> None:
        if queue is None:
            data.pop("queue", None)
        else:
            data["queue"] = queue
        data.update(extra)
    project.edit(f"stacks/teams/{team}.yaml", change)


# ------------------------------------------------------------------------------------------- what staging renders
def test_staging_installs_kueue_and_queues_inference() -> None:
    run = program("staging")
    (chart,) = [r for r in run.resources if r.type == "kubernetes:helm.sh/v4:Chart" and r.name == "kueue"]
    assert chart.inputs["chart"] == "oci://registry.k8s.io/kueue/charts/kueue"
    assert (chart.inputs["version"], chart.inputs["namespace"]) == ("0.19.2", "kueue-system")
    config = yaml.safe_load(chart.inputs["values"]["managerConfig"]["controllerManagerConfigYaml"])
    assert config["resources"]["deviceClassMappings"] == [
        {"name": "gpu-l40s.deviceclass.resource.k8s.io/devices", "deviceClassNames": ["gpu-l40s"]},
        {"name": "gpu.nvidia.com.deviceclass.resource.k8s.io/devices", "deviceClassNames": ["gpu.nvidia.com"]}]
    assert "pod" in config["integrations"]["frameworks"]  # the string replaces the chart's default whole
    assert {k: v for k, v in config.items() if k != "resources"} == kueue.DEFAULT_CONFIG
    # Kueue's DRA gates on by name: without KueueDRAIntegration no device would be charged to any queue
    assert chart.inputs["values"]["controllerManager"]["featureGates"] == [
        {"name": "KueueDRAIntegration", "enabled": True},
        {"name": "KueueDRAIntegrationExtendedResource", "enabled": True},
        {"name": "KueueDRARejectWorkloadsWhenDRADisabled", "enabled": True}]
    kinds = {(r.inputs["kind"], r.inputs["metadata"].get("namespace"), r.inputs["metadata"]["name"])
             for r in run.resources if r.type.startswith("kubernetes:kueue.x-k8s.io/")}
    assert kinds == {("ResourceFlavor", None, "gpu-dra"), ("ClusterQueue", None, "inference"),
                     ("LocalQueue", "inference", "gpu"),  # training and ops declare no queue
                     ("WorkloadPriorityClass", None, "serving"), ("WorkloadPriorityClass", None, "batch")}
    # WorkloadPriorityClass keeps its value at the top of the object, not in a spec: all of it reaches the provider.
    priorities = {r.inputs["metadata"]["name"]: r.inputs["value"] for r in run.resources
                  if r.type == "kubernetes:kueue.x-k8s.io/v1beta2:WorkloadPriorityClass"}
    assert priorities == {"serving": 1000, "batch": 100}
    (queue,) = [r for r in run.resources if r.type == "kubernetes:kueue.x-k8s.io/v1beta2:ClusterQueue"]
    assert queue.inputs["spec"]["preemption"] == {"withinClusterQueue": "LowerPriority", "reclaimWithinCohort": "Any"}


@pytest.mark.parametrize("stack", ["dev", "prod", "automode"])
def test_no_kueue_where_the_stack_does_not_run_it(stack: str) -> None:
    """inference declares a queue in its own file; dev and prod host it without Kueue: the queue is not rendered."""
    assert not [r for r in program(stack).resources if "kueue" in r.type or r.name == "kueue"]


def test_the_queue_is_kueues_documented_shape_and_charge() -> None:
    """Kueue's DRA sample (sample-dra-queues.yaml): a flavor, a ClusterQueue covering the DRA name with its nominal
    quota in that flavor, a LocalQueue naming it; its job's pod (one claim of count 1 of the class) is charged 1."""
    flavor, sample_queue, sample_local = _documents("sample-dra-queues.yaml")
    for document in (flavor, sample_queue, sample_local):
        _kueue_validator(document["kind"]).validate(document)
    stack = load_stack(ROOT, "staging")
    (inference,) = [t for t in stack.teams if t.name == "inference"]
    ours = render.cluster_queue(stack, inference)
    (group,) = ours["spec"]["resourceGroups"]
    (sample_group,) = sample_queue["spec"]["resourceGroups"]
    assert set(group) == set(sample_group) == {"coveredResources", "flavors"}
    assert [r["name"] for r in group["flavors"][0]["resources"]] == group["coveredResources"]
    assert render.local_queue(inference)["spec"] == {"clusterQueue": "inference"}  # as user-queue names its queue
    template, job = _documents("sample-dra-rct-job.yaml")
    assert job["metadata"]["labels"] == {kueue.QUEUE_NAME_LABEL: "user-queue"}
    request = template["spec"]["spec"]["devices"]["requests"][0]
    same = ClaimTemplate.model_validate({"name": "single-gpu", "requests": [
        {"name": request["name"], "deviceClass": request["exactly"]["deviceClassName"]}]})
    assert per_pod(same) == {"gpu.example.com": 1}


def test_the_mappings_are_every_class_a_queue_rations() -> None:
    stack = load_stack(ROOT, "staging")
    assert mapped_classes(stack.config, stack.teams) == ["gpu-l40s", "gpu.nvidia.com"]
    assert not set(kueue.RESERVED_NAMES) & {m["name"] for m in render.configuration(stack)["resources"][
        "deviceClassMappings"]}


# ----------------------------------------------------------------------------------- what Kueue would refuse
def test_a_cluster_that_serves_no_dra_cannot_queue_devices(project: Project) -> None:
    """An existing cluster declaring DynamicResourceAllocation off: no claim exists to charge; one error, on
    gpu-dra:kueue's line, and none once the gate is on (its upstream default from 1.34)."""
    def existing(dra: bool) -> Any:
        def change(config: dict[str, Any]) -> None:
            for key in ("gpu-dra:nodeGroups", "gpu-dra:karpenter"):
                config.pop(key, None)  # refused on an existing cluster
            config["gpu-dra:cluster"] = {"name": "lab", "platform": "existing", "kubernetesVersion": "1.36",
                                         "kubeconfig": {"path": "~/.kube/config"},
                                         "featureGates": {"DynamicResourceAllocation": dra}}
        return change
    project.edit_stack("staging", existing(False))
    (found,) = [p for p in _problems_of(project, "staging") if "DynamicResourceAllocation" in p.message]
    assert (found.path, found.line) == ("gpu-dra:kueue", _line_of(project, "staging", "  gpu-dra:kueue:"))
    assert "serves no resource.k8s.io objects" in found.message
    project.edit_stack("staging", existing(True))
    assert load_stack(project.root, "staging").config.kueue is not None


def _line_of(project: Project, stack: str, text: str) -> int:
    lines = (project.root / "stacks" / f"Pulumi.{stack}.yaml").read_text().splitlines()
    return next(number for number, line in enumerate(lines, 1) if line.startswith(text))


def test_a_template_kueue_refuses_is_an_error_on_its_line(project: Project) -> None:
    """training's h100-else-two-a100 uses firstAvailable: Kueue 0.19.2 marks its workloads inadmissible."""
    _team_queue(project, "training", {"nominalQuota": {"gpu-h100": 8, "gpu-a100": 2}})
    problems = _problems_of(project, "staging")
    (refused,) = [p for p in problems if "which Kueue's DRA integration refuses" in p.message]
    assert refused.file == "stacks/teams/training.yaml" and refused.path.startswith("claimTemplates[")
    assert "firstAvailable" in refused.message and refused.line


def test_a_class_the_queue_lacks_and_a_pod_it_never_holds(project: Project) -> None:
    _team_queue(project, "inference", {"nominalQuota": {"gpu-l40s": 0}, "borrowingLimit": {"gpu-l40s": 0}})
    messages = [p for p in _problems(project, "staging") if "inference.yaml" in p]
    assert any("uses DeviceClass gpu.nvidia.com, which the team's queue has no nominalQuota of" in m
               for m in messages)
    assert any("is charged 1 gpu-l40s device(s), more than the queue can ever hold (0" in m for m in messages)


def test_borrowing_counts_what_the_cohort_lends(project: Project) -> None:
    """A queue with no quota of its own holds what its cohort lends: inference lends 4 of its 8 L40S, so a second
    team's pod of 1 L40S fits by borrowing; with inference lending none, it never does."""
    (project.root / "stacks" / "teams" / "batch.yaml").write_text(yaml.safe_dump({
        "name": "batch", "queue": {"nominalQuota": {"gpu-l40s": 0}},
        "claimTemplates": [{"name": "one", "requests": [{"name": "gpu", "deviceClass": "gpu-l40s"}]}]}))
    project.edit_stack("staging", lambda config: config["gpu-dra:teams"].update({"batch": {}}))
    load_stack(project.root, "staging")  # no problem: it borrows
    _team_queue(project, "inference", {"nominalQuota": {"gpu.nvidia.com": 4, "gpu-l40s": 8},
                                       "lendingLimit": {"gpu-l40s": 0}})
    assert any("batch.yaml" in p and "more than the queue can ever hold (0" in p
               for p in _problems(project, "staging"))


def test_a_hard_quota_below_the_queue_contradicts_it(project: Project) -> None:
    _team_queue(project, "inference", {"nominalQuota": {"gpu.nvidia.com": 4, "gpu-l40s": 20}})
    (found,) = [p for p in _problems_of(project, "staging") if "below what the queue can hold" in p.message]
    assert (found.file, found.path) == ("stacks/teams/inference.yaml", "quota.devices.gpu-l40s")
    assert "caps gpu-l40s at 16, below what the queue can hold (20" in found.message


def test_a_stack_s_quota_override_below_the_queue_is_on_the_stack_s_line(project: Project) -> None:
    """The stack hosting the team lowers its hard quota (gpu-dra:teams.inference.quota): the contradiction is the
    stack file's, on the override's line, not the team file's line that the override replaces."""
    project.edit_stack("staging", lambda config: config["gpu-dra:teams"].update(
        {"inference": {"quota": {"claims": 64, "devices": {"gpu.nvidia.com": 8, "gpu-l40s": 2}}}}))
    (found,) = [p for p in _problems_of(project, "staging") if "below what the queue can hold" in p.message]
    assert (found.file, found.path) == ("stacks/Pulumi.staging.yaml",
                                        "gpu-dra:teams.inference.quota.devices['gpu-l40s']")
    lines = (project.root / "stacks" / "Pulumi.staging.yaml").read_text().splitlines()
    assert "gpu-l40s: 2" in lines[(found.line or 0) - 1]


@pytest.mark.parametrize(("queue", "words"), [
    ({"nominalQuota": {"gpu-l40s": 2}, "lendingLimit": {"gpu-l40s": 3}},
     "queue.lendingLimit.gpu-l40s: must be less than or equal to the nominalQuota (2)"),
    ({"nominalQuota": {"gpu-l40s": 2}, "borrowingLimit": {"gpu-a100": 1}},
     "queue.borrowingLimit.gpu-a100: no nominalQuota for gpu-a100"),
    ({"nominalQuota": {}}, "queue.nominalQuota"),
])
def test_a_queue_kueue_would_refuse_is_named(project: Project, queue: dict[str, Any], words: str) -> None:
    _team_queue(project, "inference", queue)
    assert any(words in p for p in _problems(project, "staging")), _problems(project, "staging")


def test_a_stack_gives_a_team_its_own_queue_on_its_line(project: Project) -> None:
    project.edit_stack("staging", lambda config: config["gpu-dra:teams"].update(
        {"inference": {"queue": {"nominalQuota": {"gpu-l40s": 8}}}}))
    (found,) = [p for p in _problems_of(project, "staging") if "no nominalQuota of" in p.message]
    assert found.file == "stacks/teams/inference.yaml"  # the template that uses gpu.nvidia.com is the team's
    project.edit_stack("staging", lambda config: config["gpu-dra:teams"].update(
        {"inference": {"queue": {"nominalQuota": {"gpu-l40s": 8, "gpu.nvidia.com": 1}}}}))
    stack = load_stack(project.root, "staging")
    (inference,) = [t for t in stack.teams if t.name == "inference"]
    assert inference.queue is not None and inference.queue.nominal_quota == {"gpu-l40s": 8, "gpu.nvidia.com": 1}


def test_too_many_classes_for_kueues_mappings(project: Project) -> None:
    classes = [{"name": f"gpu-c{i}", "match": {"products": ["L40S"]}} for i in range(kueue.MAX_MAPPINGS + 1)]
    project.edit_stack("staging", lambda config: config["gpu-dra:deviceClasses"].extend(classes))
    _team_queue(project, "inference", {"nominalQuota": {"gpu.nvidia.com": 4, "gpu-l40s": 8,
                                                        **{c["name"]: 1 for c in classes}}})
    (found,) = [p for p in _problems_of(project, "staging") if "maps at most 16" in p.message]
    assert found.path == "gpu-dra:kueue" and found.line


# ------------------------------------------------------------------------------------------------ on a pull request
def _check(project: Project, stack: str) -> tuple[int, list[dict[str, Any]]]:
    result = gpu_dra("check", "--stack", stack, "--format", "json", "--base", "main", cwd=project.root)
    assert result.returncode in (0, 1), result.stderr
    (report,) = json.loads(result.stdout)["stacks"]
    return result.returncode, [v for v in report["violations"] if v["policy"] == "kueue-template-replaced"]


def _more_devices(team: dict[str, Any]) -> None:
    team["claimTemplates"][1]["requests"][0]["count"] = 2  # l40s: one L40S -> two


def test_a_queued_template_changed_under_its_name_is_flagged(project: Project) -> None:
    _committed(project)
    project.edit("stacks/teams/inference.yaml", _more_devices)
    _, found = _check(project, "staging")
    (replaced,) = found
    assert replaced["file"] == "stacks/teams/inference.yaml" and replaced["line"]
    assert "template l40s changes under the same name" in replaced["message"]
    assert "kubernetes-sigs/kueue#13842" in replaced["message"]


def test_the_same_change_where_the_team_does_not_queue_is_not(project: Project) -> None:
    """prod hosts inference without Kueue: its hard quota charges the claims as they are made."""
    _committed(project)
    project.edit("stacks/teams/inference.yaml", _more_devices)
    assert _check(project, "prod")[1] == []
    project.edit("stacks/teams/inference.yaml", lambda team: team["claimTemplates"][1].update(
        description="two L40S"))  # a description is no spec: renaming is not needed for it
    _committed_again(project)
    project.edit("stacks/teams/inference.yaml", lambda team: team["claimTemplates"][1].update(
        description="two L40S, for larger models"))
    assert _check(project, "staging")[1] == []


def _committed_again(project: Project) -> None:
    for args in (["add", "-A"], ["-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q", "-m", "next"]):
        subprocess.run(["git", "-C", str(project.root), *args], check=True, capture_output=True)


def _mappings_changed(project: Project, stack: str = "staging") -> list[dict[str, Any]]:
    result = gpu_dra("check", "--stack", stack, "--format", "json", "--base", "main", cwd=project.root)
    assert result.returncode in (0, 1), result.stderr
    (report,) = json.loads(result.stdout)["stacks"]
    return [v for v in report["violations"] if v["policy"] == "kueue-mappings-changed"]


def test_a_new_class_in_a_queue_says_what_the_restart_does(project: Project) -> None:
    _committed(project)
    _team_queue(project, "inference", {"nominalQuota": {"gpu.nvidia.com": 4, "gpu-l40s": 8, "gpu-a100": 2},
                                       "lendingLimit": {"gpu-l40s": 4}})
    (changed,) = _mappings_changed(project)
    assert changed["enforcement"] == "advisory"
    assert "Kueue's device class mappings change (maps gpu-a100 now)" in changed["message"]
    assert "kubernetes-sigs/kueue#13969" in changed["message"]
    assert (changed["file"], changed["line"]) == ("stacks/Pulumi.staging.yaml",
                                                  _line_of(project, "staging", "  gpu-dra:kueue:"))


def test_quota_that_keeps_the_classes_changes_no_mapping(project: Project) -> None:
    _committed(project)
    _team_queue(project, "inference", {"nominalQuota": {"gpu.nvidia.com": 2, "gpu-l40s": 8}})
    assert _mappings_changed(project) == []


def test_a_queue_for_a_class_the_stack_does_not_have(project: Project) -> None:
    _team_queue(project, "inference", {"nominalQuota": {"gpu.nvidia.com": 4, "gpu-l40s": 8, "gpu-typo": 1}})
    (found,) = [p for p in _problems_of(project, "staging") if "no DeviceClass gpu-typo" in p.message]
    assert found.path == "queue.nominalQuota.gpu-typo" and found.line


def test_a_hard_quota_below_what_borrowing_adds_contradicts_it(project: Project) -> None:
    """inference holds 8 L40S of its own and, without a borrowing limit, may borrow all a second team lends: 8 + 16
    above its hard 16."""
    (project.root / "stacks" / "teams" / "lender.yaml").write_text(yaml.safe_dump({
        "name": "lender", "queue": {"nominalQuota": {"gpu-l40s": 16}}}))
    project.edit_stack("staging", lambda config: config["gpu-dra:teams"].update({"lender": {}}))
    load_stack(project.root, "staging")  # inference's own borrowingLimit (8) keeps it at its hard quota
    _team_queue(project, "inference", {"nominalQuota": {"gpu.nvidia.com": 4, "gpu-l40s": 8}})
    (found,) = [p for p in _problems_of(project, "staging") if "below what the queue can hold" in p.message]
    assert "caps gpu-l40s at 16, below what the queue can hold (24" in found.message


def test_a_selector_change_is_no_replaced_template(project: Project) -> None:
    """Kueue charges a template's classes and counts: a selector change under the same name charges the same."""
    _committed(project)
    project.edit("stacks/teams/inference.yaml", lambda team: team["claimTemplates"][0]["requests"][0]["match"].update(
        {"minMemory": "40Gi"}))
    assert _check(project, "staging")[1] == []


def test_a_queued_template_whose_devices_are_not_running_is_said() -> None:
    """staging queues inference: gpu-20gb-any's A100 or H100 devices are on a Karpenter NodePool not launched and a
    node group at desired 0, so Kueue would hold its workloads for ever; l40s has no selector (and its group runs)."""
    result = gpu_dra("check", "--stack", "staging", "--format", "json")
    (report,) = json.loads(result.stdout)["stacks"]
    found = [v for v in report["violations"] if v["policy"] == "kueue-devices-exist"]
    assert [(v["enforcement"], v["file"]) for v in found] == [("advisory", "stacks/teams/inference.yaml")]
    assert "claim template inference/gpu-20gb-any is queued in Kueue" in found[0]["message"]


def test_a_preemption_kueue_does_not_have_is_refused_on_its_line(project: Project) -> None:
    _team_queue(project, "inference", {"nominalQuota": {"gpu.nvidia.com": 4, "gpu-l40s": 8},
                                       "preemption": {"withinClusterQueue": "Any"}})
    (found,) = [p for p in _problems_of(project, "staging") if p.path == "queue.preemption.withinClusterQueue"]
    assert "'Never', 'LowerPriority' or 'LowerOrNewerEqualPriority'" in found.message and found.line


def test_a_priority_beyond_int32_is_refused(project: Project) -> None:
    project.edit_stack("staging", lambda config: config["gpu-dra:kueue"]["priorities"].update(serving=2**31))
    (found,) = [p for p in _problems_of(project, "staging") if p.path == "gpu-dra:kueue.priorities.serving"]
    assert found.message == "must be <= 2147483647 (got 2147483648)" and found.line

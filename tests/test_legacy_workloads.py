"""legacy-workloads-placed: a stack change that leaves a workload a team names (`workloads:` in its file) with
nowhere to run on NVIDIA's device plugin fails the PR gate (mandatory in prod).

The repository's ops team names workloads/ops/gpu-diag.yaml, a CronJob asking for one `nvidia.com/gpu`; on prod
(1.35, the mapping dropped) it runs on the device-plugin group legacy-a10g (4 x g5.2xlarge, 1 GPU each); on staging
(1.36) the chart's gpu.nvidia.com mapping serves it, so it needs no device plugin there; dev does not host ops.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from gpu_dra.cli import check
from gpu_dra.core.config.loader import load_stack
from gpu_dra.core.findings import ConfigError
from gpu_dra.core.policy.legacy_workloads import NamedManifest, WorkloadsEntry, needing_device_plugin, read_named
from gpu_dra.core.policy.migration import legacy_workloads_placed
from gpu_dra.core.policy.resources import Context
from gpu_dra.core.yamlsource import parse_documents

from .conftest import ROOT, Project
from .test_cli import gpu_dra

DIAG = "CronJob gpu-ops/gpu-diag"
WEB = ROOT / "examples" / "migrate" / "deployment-web.yaml"  # 2 pods x 1 nvidia.com/gpu, namespace inference


def _violations(project: Project, stack: str = "prod") -> tuple[int, list[dict[str, Any]]]:
    result = gpu_dra("--project-dir", str(project.root), "check", "--stack", stack, "--format", "json")
    assert result.returncode in (0, 1), result.stderr
    (entry,) = json.loads(result.stdout)["stacks"]
    return result.returncode, [v for v in entry["violations"] if v["policy"] == "legacy-workloads-placed"]


def _without_legacy_group(config: dict[str, Any]) -> None:
    config["gpu-dra:nodeGroups"] = [g for g in config["gpu-dra:nodeGroups"] if g["name"] != "legacy-a10g"]


def test_the_repository_s_stacks_place_every_named_workload(project: Project) -> None:
    for stack in ("prod", "staging"):
        assert _violations(project, stack)[1] == []
    prod = check.pack_config(load_stack(ROOT, "prod"), ROOT)["legacy-workloads-placed"]["legacyWorkloads"]
    assert [(w["workload"], w["pods"], w["gpus"], w["file"]) for w in prod] == [
        (DIAG, 1, 1, "workloads/ops/gpu-diag.yaml")]
    staging = check.pack_config(load_stack(ROOT, "staging"), ROOT)["legacy-workloads-placed"]
    assert "legacyWorkloads" not in staging  # served by the effective gpu.nvidia.com mapping


def test_removing_the_last_device_plugin_group_strands_the_workload(project: Project) -> None:
    project.edit_stack("prod", _without_legacy_group)
    code, found = _violations(project)
    assert code == 1
    (violation,) = found
    assert violation["enforcement"] == "mandatory"
    assert violation["message"] == (f"{DIAG} (workloads/ops/gpu-diag.yaml, named by team ops): 1 of its 1 pod(s) "
                                    "asking for 1 nvidia.com/gpu each have nowhere to run: the stack has no "
                                    "device-plugin node group")
    team_file = (project.root / "stacks" / "teams" / "ops.yaml").read_text().splitlines()
    assert violation["file"] == "stacks/teams/ops.yaml"
    assert team_file[violation["line"] - 1].strip() == "- workloads/ops/gpu-diag.yaml"
    assert "gpu-dra migrate --stack prod workloads/ops/gpu-diag.yaml" in violation["fix"]
    shown = (ROOT / "docs" / "migration.md").read_text().split("$ gpu-dra check --stack prod\n", 1)[1]
    printed = gpu_dra("--project-dir", str(project.root), "check", "--stack", "prod").stdout
    assert printed == shown[:shown.index("```")]  # the docs' transcript of this change


def test_outside_prod_the_same_change_is_advisory(project: Project) -> None:
    project.edit_stack("prod", lambda config: config.__setitem__("gpu-dra:environment", "staging"))
    project.edit_stack("prod", _without_legacy_group)
    code, (violation,) = _violations(project)
    assert violation["enforcement"] == "advisory"


def test_a_group_too_small_for_every_named_workload_strands_the_later_ones(project: Project) -> None:
    """Inference names web (2 pods) before ops' diag in the stack's team order; legacy-a10g shrunk to 2 nodes is full
    after web."""
    (project.root / "examples" / "migrate").mkdir(parents=True)
    (project.root / "examples" / "migrate" / WEB.name).write_text(WEB.read_text())
    project.edit("stacks/teams/inference.yaml",
                 lambda team: team.__setitem__("workloads", [f"examples/migrate/{WEB.name}"]))
    assert _violations(project)[1] == []  # 3 of the 4 GPUs
    project.edit_stack("prod", lambda config: next(g for g in config["gpu-dra:nodeGroups"]
                                                   if g["name"] == "legacy-a10g")["scaling"].__setitem__("max", 2))
    code, (violation,) = _violations(project)
    assert violation["message"].startswith(f"{DIAG} (workloads/ops/gpu-diag.yaml, named by team ops): 1 of its 1 "
                                           "pod(s)")
    assert violation["message"].endswith("have nowhere to run: legacy-a10g is full (2 GPUs, 2 taken by the workloads "
                                         "named before it)")


def test_a_workload_its_nodes_do_not_admit_is_stranded_with_the_reason(project: Project) -> None:
    def select_dra_nodes(docs: dict[str, Any]) -> None:
        docs["spec"]["jobTemplate"]["spec"]["template"]["spec"]["nodeSelector"] = {"gpu-dra.io/allocation": "dra"}

    project.edit("workloads/ops/gpu-diag.yaml", select_dra_nodes)
    code, (violation,) = _violations(project)
    assert violation["message"].endswith("legacy-a10g: the pod's nodeSelector wants gpu-dra.io/allocation=dra; it "
                                         "has gpu-dra.io/allocation=device-plugin")


def test_a_team_naming_a_missing_manifest_is_a_config_error_on_its_line(project: Project) -> None:
    project.edit("stacks/teams/ops.yaml", lambda team: team.__setitem__("workloads", ["workloads/ops/gone.yaml"]))
    result = gpu_dra("--project-dir", str(project.root), "check", "--stack", "prod")
    assert result.returncode == 2
    assert ("stacks/teams/ops.yaml:" in result.stderr and "workloads.0: workloads/ops/gone.yaml: no such file or "
            "folder in the repository" in result.stderr)


def test_a_path_outside_the_repository_is_refused(project: Project) -> None:
    project.edit("stacks/teams/ops.yaml", lambda team: team.__setitem__("workloads", ["../other/diag.yaml"]))
    result = gpu_dra("--project-dir", str(project.root), "check", "--stack", "prod")
    assert result.returncode == 2
    assert "must be a path inside the repository, relative to its root" in result.stderr


def test_a_named_manifest_that_is_not_a_valid_workload_is_a_config_error(project: Project) -> None:
    (project.root / "workloads" / "ops" / "gpu-diag.yaml").write_text(yaml.safe_dump({
        "apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "x", "namespace": "gpu-ops"},
        "spec": {"template": {"spec": {"containers": [{"name": "c", "image": "i", "resources": {
            "requests": {"nvidia.com/gpu": 1}}}]}}}}))  # a request without its limit: the API server refuses it
    result = gpu_dra("--project-dir", str(project.root), "check", "--stack", "prod")
    assert result.returncode == 2, result.stdout
    assert "stacks/teams/ops.yaml:" in result.stderr and "workloads.0" in result.stderr
    assert "Traceback" not in result.stderr


def test_migrate_reads_the_team_named_workloads_when_given_no_file() -> None:
    result = gpu_dra("migrate", "--stack", "prod")
    assert result.returncode == 0, result.stderr
    assert "CronJob gpu-ops/gpu-diag (workloads/ops/gpu-diag.yaml:5)" in result.stdout
    assert "today: device plugin on legacy-a10g (1 pod(s), 1 GPU(s))" in result.stdout


def test_an_existing_cluster_s_device_plugin_pools_count() -> None:
    """No node group resources (platform existing): the declared pools with dra false are the device-plugin nodes."""
    workload = {"workload": DIAG, "team": "ops", "teamFile": "stacks/teams/ops.yaml", "line": 3,
                "file": "workloads/ops/gpu-diag.yaml", "pods": 2, "gpus": 4, "other": []}
    pool = {"name": "legacy-a100", "instanceType": "p4d.24xlarge", "gpuModel": "", "gpus": 0, "maxNodes": 1,
            "dra": False, "labels": {"gpu-dra.io/allocation": "device-plugin"}, "taints": []}
    assert legacy_workloads_placed([], Context(node_pools=[pool], workloads=[workload])) == []  # 2 x 4 of 8
    (found,) = legacy_workloads_placed([], Context(node_pools=[{**pool, "dra": True}], workloads=[workload]))
    assert found.message.endswith("the stack has no device-plugin node group")
    assert (found.file, found.line) == ("stacks/teams/ops.yaml", 3)


def test_no_named_workload_no_finding() -> None:
    assert legacy_workloads_placed([], Context()) == []


def test_the_pack_config_is_written_with_the_workloads(tmp_path: Path) -> None:
    result = gpu_dra("check", "--stack", "prod", "--pack-config")
    assert result.returncode == 0, result.stderr
    config = json.loads(result.stdout)
    assert [w["workload"] for w in config["legacy-workloads-placed"]["legacyWorkloads"]] == [DIAG]


def test_rule_and_migrate_see_the_same_nodes(project: Project) -> None:
    """A nodeSelector on a well-known label and a GPU taint on the device-plugin group: migrate places the workload
    there (the kubelet's labels; EKS's ExtendedResourceToleration admission tolerates nvidia.com/gpu), so the rule
    does too."""
    def select_linux(docs: dict[str, Any]) -> None:
        docs["spec"]["jobTemplate"]["spec"]["template"]["spec"]["nodeSelector"] = {"kubernetes.io/os": "linux"}

    def taint_legacy(config: dict[str, Any]) -> None:
        group = next(g for g in config["gpu-dra:nodeGroups"] if g["name"] == "legacy-a10g")
        group["taints"] = [{"key": "nvidia.com/gpu", "value": "true", "effect": "NoSchedule"}]

    project.edit("workloads/ops/gpu-diag.yaml", select_linux)
    project.edit_stack("prod", taint_legacy)
    migrated = gpu_dra("--project-dir", str(project.root), "migrate", "--stack", "prod")
    assert "today: device plugin on legacy-a10g" in migrated.stdout, migrated.stdout + migrated.stderr
    assert _violations(project)[1] == []


def test_a_manifest_named_twice_is_a_config_error_not_counted_twice(project: Project) -> None:
    project.edit("stacks/teams/ops.yaml", lambda team: team.__setitem__(
        "workloads", ["workloads/ops/gpu-diag.yaml", "workloads/ops"]))
    result = gpu_dra("--project-dir", str(project.root), "check", "--stack", "prod")
    assert result.returncode == 2, result.stdout
    lines = (project.root / "stacks" / "teams" / "ops.yaml").read_text().splitlines()
    first = lines.index("- workloads/ops/gpu-diag.yaml") + 1  # the entry naming it first
    assert (f"stacks/teams/ops.yaml:{first + 1}: workloads.1: workloads/ops/gpu-diag.yaml is named already by team "
            f"ops (stacks/teams/ops.yaml:{first}): name each manifest once") in result.stderr


def test_a_link_out_of_the_repository_is_refused(project: Project, tmp_path_factory: Any) -> None:
    outside = tmp_path_factory.mktemp("outside") / "diag.yaml"
    outside.write_text((project.root / "workloads" / "ops" / "gpu-diag.yaml").read_text())
    (project.root / "workloads" / "ops" / "gpu-diag.yaml").unlink()
    (project.root / "workloads" / "ops" / "gpu-diag.yaml").symlink_to(outside)
    result = gpu_dra("--project-dir", str(project.root), "check", "--stack", "prod")
    assert result.returncode == 2
    assert "workloads.0: workloads/ops/gpu-diag.yaml: leads outside the repository (a link?)" in result.stderr
    assert "Traceback" not in result.stderr


def test_the_core_judges_manifests_handed_to_it_as_data() -> None:
    """policy/legacy_workloads reads no file: the shell hands it each manifest's documents with the team file entry
    naming it, and a workload given by two manifests is refused on the second entry's line."""
    stack = load_stack(ROOT, "prod")
    text = (ROOT / "workloads" / "ops" / "gpu-diag.yaml").read_text()

    def named(index: int, line: int, path: str) -> NamedManifest:
        return NamedManifest(WorkloadsEntry("ops", "stacks/teams/ops.yaml", index, line), path, f"/elsewhere/{path}",
                             parse_documents(text, path))

    (found,) = needing_device_plugin(stack, read_named(stack, [named(0, 7, "diag.yaml")]))
    assert (found["workload"], found["team"], found["teamFile"], found["line"], found["file"], found["pods"],
            found["gpus"]) == (DIAG, "ops", "stacks/teams/ops.yaml", 7, "diag.yaml", 1, 1)
    with pytest.raises(ConfigError) as caught:
        read_named(stack, [named(0, 7, "diag.yaml"), named(1, 8, "copy.yaml")])
    (refused,) = caught.value.findings
    assert (refused.file, refused.line, refused.path, refused.message) == (
        "stacks/teams/ops.yaml", 8, "workloads.1", f"{DIAG} is in copy.yaml and in diag.yaml: give it once")

"""A team's namespace outlives a change to its file or to the stack (issue 28 item 8): `gpu-dra check --base REF`
compares the teams each stack hosts with those at REF, and the rule team-namespace-kept says, beside the change, what
a renamed namespace or a dropped team stops being managed (mandatory in prod). Run on a copy of the project in a git
repository, as CI runs it on a pull request against its base branch."""

from __future__ import annotations

import json
import subprocess
from typing import Any

import pytest

from .conftest import Project
from .test_cli import gpu_dra

RULE = "team-namespace-kept"


def _committed(project: Project) -> Project:
    def git(*args: str) -> None:
        subprocess.run(["git", "-C", str(project.root), *args], check=True, capture_output=True)

    git("init", "-q", "-b", "main")
    git("add", "-A")
    git("-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q", "-m", "base")
    return project


def _findings(project: Project, stack: str, *extra: str) -> list[dict[str, Any]]:
    result = gpu_dra("check", "--stack", stack, "--format", "json", *extra, cwd=project.root)
    assert result.returncode in (0, 1), result.stderr
    (report,) = json.loads(result.stdout)["stacks"]
    return [f for f in report["violations"] if f["policy"] == RULE]


def test_a_renamed_namespace_is_reported_with_what_it_stops_managing(project: Project) -> None:
    _committed(project)
    project.edit("stacks/teams/inference.yaml", lambda team: team["namespace"].update(name="serving"))
    (found,) = _findings(project, "prod", "--base", "main")
    assert found["enforcement"] == "mandatory", found
    assert "team inference's namespace inference would become serving" in found["message"]
    assert "ResourceClaimTemplate(s) (gpu-20gb-any, l40s" in found["message"]
    assert "protected here" in found["message"]  # prod protects team namespaces by default
    assert _findings(project, "prod") == []  # no base, nothing to compare: silent


def test_a_dropped_team_is_reported_and_only_advised_outside_prod(project: Project) -> None:
    _committed(project)
    project.edit_stack("staging", lambda config: config["gpu-dra:teams"].pop("inference"))
    (found,) = _findings(project, "staging", "--base", "main")
    assert found["enforcement"] == "advisory"
    assert "team inference is no longer hosted by this stack" in found["message"]
    assert "kept (retainOnDelete)" in found["message"]


def test_an_unchanged_project_and_a_new_team_say_nothing(project: Project) -> None:
    _committed(project)
    assert _findings(project, "prod", "--base", "main") == []


@pytest.mark.parametrize("ref", ["no-such-branch"])
def test_a_base_git_does_not_know_is_a_usage_error(project: Project, ref: str) -> None:
    _committed(project)
    result = gpu_dra("check", "--stack", "prod", "--base", ref, cwd=project.root)
    assert result.returncode == 2 and f"--base {ref}: git cannot read stacks/Pulumi.prod.yaml" in result.stderr
    assert "Traceback" not in result.stderr


def test_the_engine_run_gets_the_base_in_its_pack_config(project: Project) -> None:
    """The pack config the workflow writes for `pulumi preview` carries the base's namespaces, so the engine run
    judges the rule too."""
    _committed(project)
    result = gpu_dra("check", "--stack", "prod", "--pack-config", "--base", "main", cwd=project.root)
    section = json.loads(result.stdout)[RULE]
    assert section["protectTeamNamespaces"] is True
    assert {entry["team"]: entry["namespace"] for entry in section["namespacesBefore"]} == {
        "training": "ml-training", "inference": "inference", "ops": "gpu-ops"}


def test_a_team_file_no_stack_hosts_is_warned_about(project: Project) -> None:
    """A new team's file without its gpu-dra:teams entry: nothing renders or checks it, and check says so, of one
    stack or all (judged against every stack file: one stack's check is silent where another stack hosts it)."""
    (project.root / "stacks" / "teams" / "vision.yaml").write_text("name: vision\n")
    result = gpu_dra("check", "--all-stacks", cwd=project.root)
    assert result.returncode in (0, 1), result.stderr
    assert ("gpu-dra: warning: stacks/teams/vision.yaml: no stack hosts this team (gpu-dra:teams in "
            "stacks/Pulumi.<stack>.yaml), so nothing renders or checks it") in result.stderr.splitlines()
    assert "stacks/teams/vision.yaml: no stack hosts" in gpu_dra("check", "--stack", "dev", cwd=project.root).stderr
    project.edit_stack("prod", lambda config: config["gpu-dra:teams"].update({"vision": {}}))
    assert "no stack hosts" not in gpu_dra("check", "--stack", "dev", cwd=project.root).stderr

"""The PR gate against a team's own file: CODEOWNERS lets a team approve changes to stacks/teams/<team>.yaml, so
`gpu-dra check` is the only thing between that file and the cluster. Admin access and the namespace labels
Kubernetes reserves are the platform's to decide, in the stack file; a team file that sets one fails the check in
every environment, on the key's line, and has no effect on what is rendered."""

from __future__ import annotations

import json
from typing import Any

import pytest
import yaml

from .conftest import Project
from .test_cli import gpu_dra

ADMIN_LABEL = "resource.kubernetes.io/admin-access"
MONITOR = {"name": "all-gpus", "requests": [{"name": "gpus", "deviceClass": "gpu.nvidia.com", "allocationMode": "All",
                                             "adminAccess": True}]}


def _check(project: Project, stack: str) -> tuple[int, list[dict[str, Any]]]:
    """The exit code and the mandatory violations (dev has advisory ones of its own)."""
    result = gpu_dra("--project-dir", str(project.root), "check", "--stack", stack, "--format", "json")
    assert result.returncode in (0, 1), result.stderr
    (entry,) = json.loads(result.stdout)["stacks"]
    return result.returncode, [v for v in entry["violations"] if v["enforcement"] == "mandatory"]


def _line(project: Project, violation: dict[str, Any]) -> str:
    return (project.root / violation["file"]).read_text().splitlines()[violation["line"] - 1].strip()


def _namespaces(project: Project, stack: str, tmp: Any) -> dict[str, dict[str, str]]:
    out = tmp / f"render-{stack}"
    result = gpu_dra("--project-dir", str(project.root), "render", "--stack", stack, "--out", str(out))
    assert result.returncode == 0, result.stderr
    found = {}
    for path in out.rglob("*.yaml"):
        for doc in yaml.safe_load_all(path.read_text()):
            if isinstance(doc, dict) and doc.get("kind") == "Namespace":
                found[doc["metadata"]["name"]] = doc["metadata"].get("labels") or {}
    return found


def _grant_itself_admin(team: dict[str, Any]) -> None:
    team["admin"] = True
    team["claimTemplates"].append(MONITOR)


@pytest.mark.parametrize("stack", ["prod", "dev"])
def test_a_team_that_grants_itself_admin_access_fails_in_every_environment(project: Project, stack: str,
                                                                          tmp_path: Any) -> None:
    project.edit("stacks/teams/training.yaml", _grant_itself_admin)
    project.edit("stacks/teams/training.yaml", lambda team: team.update(quota={"claims": 32, "devices": {
        **team["quota"]["devices"], "gpu.nvidia.com": 64}}))  # enough quota: the grant alone must fail it
    code, found = _check(project, stack)
    assert code == 1
    by_rule = {(v["policy"], v["enforcement"]): v for v in found}
    assert set(by_rule) == {("team-file-platform-keys", "mandatory"), ("admin-access-restricted", "mandatory")}, found
    claim = by_rule["team-file-platform-keys", "mandatory"]
    assert claim["file"] == "stacks/teams/training.yaml" and _line(project, claim) == "admin: true"
    assert "admin access is granted by the platform in the stack file, gpu-dra:teams.training.admin" in \
        claim["message"]
    use = by_rule["admin-access-restricted", "mandatory"]
    assert use["message"] == ("request gpus uses adminAccess, but the stack grants no admin access in namespace "
                              "ml-training")
    assert use["file"] == "stacks/teams/training.yaml" and _line(project, use) == "adminAccess: true"
    # And it does nothing: the namespace is not labelled for admin access.
    assert ADMIN_LABEL not in _namespaces(project, stack, tmp_path)["ml-training"]


def test_the_stack_grants_admin_access_and_render_follows_it(project: Project, tmp_path: Any) -> None:
    assert _namespaces(project, "prod", tmp_path)["gpu-ops"][ADMIN_LABEL] == "true"  # gpu-dra:teams.ops.admin
    assert _check(project, "prod") == (0, [])
    project.edit_stack("prod", lambda config: config["gpu-dra:teams"].update(ops={}))
    code, found = _check(project, "prod")
    assert code == 1
    assert [(v["policy"], v["file"], _line(project, v)) for v in found] == [
        ("admin-access-restricted", "stacks/teams/ops.yaml", "adminAccess: true")]  # the key's own line
    assert ADMIN_LABEL not in _namespaces(project, "prod", tmp_path)["gpu-ops"]


@pytest.mark.parametrize("label", ["pod-security.kubernetes.io/enforce", ADMIN_LABEL, "gpu-dra.io/team"])
def test_a_reserved_namespace_label_in_a_team_file_fails_and_is_not_applied(project: Project, label: str,
                                                                           tmp_path: Any) -> None:
    project.edit("stacks/teams/training.yaml", lambda team: team["namespace"]["labels"].update({label: "true"}))
    code, found = _check(project, "dev")
    assert code == 1
    (violation,) = found
    assert (violation["policy"], violation["enforcement"]) == ("team-file-platform-keys", "mandatory")
    assert f"sets namespace.labels['{label}']" in violation["message"]
    assert _line(project, violation) == f"{label}: 'true'"
    assert _namespaces(project, "dev", tmp_path)["ml-training"].get(label) != "true"


def test_check_points_at_the_selector_as_lint_does(project: Project) -> None:
    """A finding on a rendered template's selector is on the team file's selector line (after a match:, which
    renders first, the second rendered selector is the first written)."""
    def selectors(team: dict[str, Any]) -> None:
        request = team["claimTemplates"][0]["requests"][0]
        request["selectors"] = ["device.attributes['gpu.nvidia.com'].memory > 5"]
    project.edit("stacks/teams/inference.yaml", selectors)
    result = gpu_dra("--project-dir", str(project.root), "check", "--stack", "dev", "--format", "json")
    (entry,) = json.loads(result.stdout)["stacks"]
    (lint,) = [v for v in entry["violations"] if v["check"] == "capacity-as-attribute"]
    assert _line(project, lint) == "- device.attributes['gpu.nvidia.com'].memory > 5"


def test_a_selector_raising_on_the_fleet_is_on_its_own_line_as_lint_puts_it(project: Project) -> None:
    """dra-selector-safe-on-fleet names "selector #1" of the rendered template (its match: renders as #0): check puts
    it on that selector's line of the team file, where dra-cel-lint puts its own finding on the same selector."""
    selector = "device.attributes['gpu.nvidia.com'].driverVersion >= '570'"

    def selectors(team: dict[str, Any]) -> None:
        team["claimTemplates"][0]["requests"][0]["selectors"] = [selector]
    project.edit("stacks/teams/inference.yaml", selectors)
    result = gpu_dra("--project-dir", str(project.root), "check", "--stack", "prod", "--format", "json")
    (entry,) = json.loads(result.stdout)["stacks"]
    (raised,) = [v for v in entry["violations"] if v["policy"] == "dra-selector-safe-on-fleet"]
    assert "selector #1" in raised["message"], raised
    assert _line(project, raised) == f"- {selector}"

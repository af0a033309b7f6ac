"""`gpu-dra team new|show` (issue 32, item 9): a new team from the docs alone, in one command that writes its file,
its stack entry and its CODEOWNERS line only once the stack loads with them; and a team's view of a stack."""

from __future__ import annotations

import json
import shutil

import pytest

from gpu_dra.core.config.loader import load_stack

from .conftest import ROOT, Project
from .test_cli import gpu_dra


def _team(project: Project, *args: str) -> tuple[int, str, str]:
    result = gpu_dra("--project-dir", str(project.root), "team", *args)
    return result.returncode, result.stdout, result.stderr


def _snapshot(project: Project) -> dict[str, bytes]:
    return {str(p.relative_to(project.root)): p.read_bytes() for p in project.root.rglob("*") if p.is_file()}


@pytest.fixture
def with_owners(project: Project) -> Project:
    shutil.copytree(ROOT / ".github", project.root / ".github")
    return project


def test_a_new_team_is_hosted_checked_and_owned(with_owners: Project) -> None:
    project = with_owners
    before = (project.root / "stacks" / "Pulumi.dev.yaml").read_text()
    code, out, err = _team(project, "new", "vision", "--stack", "dev", "--owner", "@example-org/vision")
    assert code == 0, err
    after = (project.root / "stacks" / "Pulumi.dev.yaml").read_text()
    # one line added to gpu-dra:teams, the rest (comments included) as it was
    assert after.splitlines() == before.splitlines() + ["    vision: {}"]
    stack = load_stack(project.root, "dev")
    (vision,) = [t for t in stack.teams if t.name == "vision"]
    assert [(t.name, t.requests[0].device_class) for t in vision.claim_templates] == [("l4-x1", "gpu-l4")]
    assert vision.quota.devices == {"gpu-l4": 2}
    assert (project.root / ".github" / "CODEOWNERS").read_text().splitlines()[-1] == \
        "/stacks/teams/vision.yaml       @example-org/vision @example-org/gpu-platform"  # as `*`, the platform
    check = gpu_dra("--project-dir", str(project.root), "check", "--stack", "dev", "--format", "json")
    (report,) = json.loads(check.stdout)["stacks"]
    assert not [v for v in report["violations"] if v["file"] == "stacks/teams/vision.yaml"]
    code, out, _ = _team(project, "show", "vision", "--stack", "dev")
    assert code == 0 and "  template l4-x1 (gpu-l4): served by l4" in out.splitlines()


@pytest.mark.parametrize("args, said", [
    (["new", "training", "--stack", "dev"], "stack dev hosts a team training already"),
    (["new", "ops", "--stack", "dev"], "stacks/teams/ops.yaml exists: gpu-dra writes no team file over yours; to host "
                                      "the team on stack dev, add `ops: {}` under gpu-dra:teams in "
                                      "stacks/Pulumi.dev.yaml"),
    (["new", "vision", "--stack", "dev", "--class", "gpu-l44"], "--class gpu-l44: no such DeviceClass on stack dev; "
                                                                "did you mean 'gpu-l4'?"),
    (["new", "Vision_1", "--stack", "dev"], "team name 'Vision_1': "),
    (["new", "vision", "--stack", "dev", "--namespace", "Bad_NS"], "namespace.name"),
    (["new", "vision", "--stack", "nope"], "no such stack file"),
    (["new", "vision", "--stack", "dev", "--owner", "@o/v"], "--owner: no .github/CODEOWNERS in the project"),
])
def test_a_new_team_that_cannot_be_added_writes_nothing(project: Project, args: list[str], said: str) -> None:
    before = _snapshot(project)
    code, _, err = _team(project, *args)
    assert code == 2 and said in err and "Traceback" not in err
    assert _snapshot(project) == before


def test_a_flow_style_teams_map_is_left_to_the_user(project: Project) -> None:
    path = project.root / "stacks" / "Pulumi.dev.yaml"
    path.write_text(path.read_text().replace("    training: {}\n    inference: {}\n    research: {}\n", "")
                    .replace("  gpu-dra:teams:\n", "  gpu-dra:teams: {training: {}, inference: {}, research: {}}\n"))
    before = _snapshot(project)
    code, _, err = _team(project, "new", "vision", "--stack", "dev")
    assert code == 2 and "gpu-dra:teams is written in flow style; add `vision: {}` to it yourself" in err
    assert _snapshot(project) == before


def test_show_names_what_serves_each_template_and_exits_1_for_one_nothing_serves(project: Project) -> None:
    code, out, _ = _team(project, "show", "training", "--stack", "dev", "--format", "json")
    view = json.loads(out)
    served = {t["template"]: (t["servedBy"], t["allocatable"]) for t in view["templates"]}
    assert served["h100-x8"] == ([], False)  # dev has no H100
    assert code == 1
    assert view["quota"]["devices"] == load_stack(ROOT, "dev").teams[0].quota.devices
    code, _, err = _team(project, "show", "trainin", "--stack", "dev")
    assert code == 2 and "did you mean 'training'?" in err

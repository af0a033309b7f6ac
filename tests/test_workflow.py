""".github/workflows/gpu-dra.yml, read as GitHub reads it and its check step run as the runner runs it: the SARIF
is uploaded whatever the check's exit, config errors are results on their lines, every stack is named, and the
engine preview runs only where the clusters can be reached."""

from __future__ import annotations

import json
import os
import re
import shutil
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml

from .conftest import ALL_STACKS, ROOT, STACKS, Project

WORKFLOW = ROOT / ".github" / "workflows" / "gpu-dra.yml"


def _jobs() -> dict[str, Any]:
    return yaml.safe_load(WORKFLOW.read_text())["jobs"]


def _step(job: str, *, id: str | None = None, uses: str | None = None) -> dict[str, Any]:
    found = [s for s in _jobs()[job]["steps"]
             if (id is not None and s.get("id") == id) or (uses is not None and s.get("uses", "").startswith(uses))]
    assert len(found) == 1, (job, id, uses)
    return found[0]


def _run_check_step(project: Path, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    """The check step's script under `bash -e`, as GitHub's default shell runs it, with `gpu-dra` on PATH as the
    Install step puts it there."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    shim = bin_dir / "gpu-dra"
    shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m gpu_dra.cli.main "$@"\n')
    shim.chmod(shim.stat().st_mode | stat.S_IXUSR)
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}", "PYTHONPATH": str(ROOT)}
    return subprocess.run(["bash", "-e", "-c", _step("offline-check", id="check")["run"]], cwd=project, env=env,
                          capture_output=True, text=True, timeout=300)


def _shims(tmp_path: Path) -> dict[str, str]:
    """`gpu-dra` on PATH and in .venv/bin of the project (as the workflow's steps call it), and the environment."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    shim = bin_dir / "gpu-dra"
    shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m gpu_dra.cli.main "$@"\n')
    shim.chmod(shim.stat().st_mode | stat.S_IXUSR)
    return {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}", "PYTHONPATH": str(ROOT)}


def _run_step(job: str, step_id: str, project: Path, tmp_path: Path,
              **env: str) -> subprocess.CompletedProcess[str]:
    """A step's script under `bash -e` in `project`, with .venv/bin/python and .venv/bin/gpu-dra as Install makes
    them, GITHUB_OUTPUT and GITHUB_STEP_SUMMARY files, and the step's own env with the values given."""
    venv = project / ".venv" / "bin"
    venv.mkdir(parents=True, exist_ok=True)
    environment = _shims(tmp_path)
    if not (venv / "python").exists():
        # A script, not a link: a link to a venv's python elsewhere would start it without that venv (Python finds
        # pyvenv.cfg beside the path it was started by) and its packages.
        (venv / "python").write_text(f'#!/bin/sh\nexec "{sys.executable}" "$@"\n')
        (venv / "python").chmod(0o755)
    if not (venv / "gpu-dra").exists():
        (venv / "gpu-dra").symlink_to(tmp_path / "bin" / "gpu-dra")
    step = _step(job, id=step_id)
    declared = {name: "" for name in step.get("env", {})}  # ${{ vars.X }} unset reads as ""
    environment |= {**declared, **env, "GITHUB_OUTPUT": str(tmp_path / "output"),
                    "GITHUB_STEP_SUMMARY": str(tmp_path / "summary")}
    return subprocess.run(["bash", "-e", "-c", step["run"]], cwd=project, env=environment, capture_output=True,
                          text=True, timeout=300)


def test_the_sarif_is_uploaded_whatever_the_check_exits() -> None:
    upload = _step("offline-check", uses="github/codeql-action/upload-sarif")
    assert upload["if"] == "always()"
    # v3 is deprecated in December 2026; on a private repository without Code Security the upload is refused, and
    # that must not turn the job red: the check step's exit decides
    assert upload["uses"].endswith("@v4") and upload["continue-on-error"] is True
    assert upload["with"]["sarif_file"] == "gpu-dra.sarif"
    steps = _jobs()["offline-check"]["steps"]
    assert steps.index(upload) > steps.index(_step("offline-check", id="check"))


def test_a_broken_stack_fails_the_step_with_its_error_in_the_sarif(project: Project, tmp_path: Path) -> None:
    project.edit_stack("prod", lambda config: config["gpu-dra:cluster"].update(nmae="x"))
    lines = (project.root / "stacks/Pulumi.prod.yaml").read_text().splitlines()
    line = next(n for n, text in enumerate(lines, 1) if "nmae" in text)
    result = _run_check_step(project.root, tmp_path)
    assert result.returncode == 2, result.stderr
    sarif = json.loads((project.root / "gpu-dra.sarif").read_text())
    [broken] = [r for r in sarif["runs"][0]["results"] if r["ruleId"] == "config" and "nmae" in r["message"]["text"]]
    assert broken["locations"] == [{"physicalLocation": {"artifactLocation": {"uri": "stacks/Pulumi.prod.yaml"},
                                                         "region": {"startLine": line}}}]
    assert broken["message"]["text"].startswith("[prod] gpu-dra:cluster.nmae: unknown key")
    assert broken["properties"] == {"stacks": ["prod"]}
    assert "config" in {rule["id"] for rule in sarif["runs"][0]["tool"]["driver"]["rules"]}
    assert f"stacks/Pulumi.prod.yaml:{line}: gpu-dra:cluster.nmae: unknown key" in result.stderr
    # The log names every stack: prod as not checked, each other one checked or not checked on its own account.
    reported = {text.split(":")[0].removeprefix("stack "): text for text in result.stdout.splitlines()
                if text.startswith("stack ")}
    assert sorted(reported) == sorted(ALL_STACKS)
    assert reported["prod"].startswith("stack prod: not checked: ")


def test_the_engine_preview_runs_only_on_a_runner_inside_the_vpc() -> None:
    jobs = _jobs()
    preview = jobs["preview"]
    assert preview["runs-on"] == ["self-hosted", "gpu-dra-vpc-${{ matrix.stack }}"]
    assert preview["strategy"]["matrix"]["stack"] == "${{ fromJSON(vars.GPU_DRA_VPC_PREVIEW_STACKS) }}"
    assert "vars.GPU_DRA_VPC_PREVIEW_STACKS != ''" in preview["if"]
    assert "github.event.pull_request.head.repo.full_name == github.repository" in preview["if"]  # no forks
    pulumi = _step("preview", uses="pulumi/actions")["with"]
    assert (pulumi["command"], pulumi["policyPacks"]) == ("preview", "build/policy-pack/")
    assert pulumi["policyPackConfigs"] == "build/config.${{ matrix.stack }}.json"  # written fresh (the stack step)
    assert any(s.get("run") == "make policy-pack" for s in preview["steps"])
    # Every other job runs on a GitHub-hosted runner and never calls Pulumi.
    for name, job in jobs.items():
        if name != "preview":
            assert job["runs-on"] == "ubuntu-latest", name
            assert not any("pulumi" in s.get("uses", "") or re.search(r"^\s*(pulumi|make policy-pack)\b",
                                                                       s.get("run", ""), re.MULTILINE)
                           for s in job["steps"]), name


def test_a_skipped_preview_says_why() -> None:
    skipped = _jobs()["preview-skipped"]
    assert "vars.GPU_DRA_VPC_PREVIEW_STACKS == ''" in skipped["if"]
    assert "head.repo.full_name != github.repository" in skipped["if"]
    script = skipped["steps"][0]["run"]
    assert script.count("::notice title=pulumi preview skipped::") == 2
    assert "private (prod's is)" in script and "publicAccessCidrs" in script


def test_the_report_is_in_the_job_summary_where_sarif_cannot_go(project: Project, tmp_path: Path) -> None:
    result = _run_step("offline-check", "check", project.root, tmp_path)
    assert result.returncode == 0, result.stderr
    summary = (tmp_path / "summary").read_text()
    assert summary.startswith("### gpu-dra check\n```\n") and all(f"stack {s}: " in summary for s in STACKS)


def test_a_pull_request_is_judged_against_its_base_branch(project: Project, tmp_path: Path) -> None:
    """On a pull request the check and the engine run's pack config compare with the base branch: prod's team
    namespace renamed is a mandatory violation in the job's report, and the pack config carries the base."""
    def git(*args: str) -> None:
        subprocess.run(["git", "-C", str(project.root), *args], check=True, capture_output=True)

    git("init", "-q", "-b", "main")
    git("add", "-A")
    git("-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q", "-m", "base")
    git("update-ref", "refs/remotes/origin/main", "HEAD")  # as actions/checkout with fetch-depth 0 leaves it
    project.edit("stacks/teams/inference.yaml", lambda team: team["namespace"].update(name="serving"))
    result = _run_step("offline-check", "check", project.root, tmp_path, BASE_REF="main")
    assert result.returncode == 1, result.stderr
    assert "[mandatory] team-namespace-kept" in (tmp_path / "summary").read_text()
    assert _run_step("offline-check", "check", project.root, tmp_path).returncode == 0  # a push: no base
    (tmp_path / "output").write_text("")
    assert _run_step("preview", "stack", project.root, tmp_path, STACK="prod", BASE_REF="main").returncode == 0
    before = json.loads((project.root / "build/config.prod.json").read_text())["team-namespace-kept"]
    assert {"team": "inference", "namespace": "inference"}.items() <= before["namespacesBefore"][1].items()


def test_a_stale_committed_pack_config_fails_the_offline_job(project: Project, tmp_path: Path) -> None:
    shutil.copytree(ROOT / "policies", project.root / "policies")
    assert _run_step("offline-check", "configs", project.root, tmp_path).returncode == 0  # as committed: current
    project.edit_stack("staging", lambda config: config.update({"gpu-dra:environment": "prod"}))
    result = _run_step("offline-check", "configs", project.root, tmp_path)
    assert result.returncode == 1
    assert ("::error::stale pack config(s): policies/config.staging.json; run 'make pack-config'"
            in result.stdout), result.stdout


def test_the_engine_run_reads_the_stacks_region_or_the_repositorys(project: Project, tmp_path: Path) -> None:
    """An EKS stack's region is its own; an existing cluster's stack may name none (it used to end the step with a
    KeyError), and then the repository variable AWS_REGION gives it, or the step says what to set."""
    def outputs(stack: str, **env: str) -> subprocess.CompletedProcess[str]:
        (tmp_path / "output").write_text("")
        return _run_step("preview", "stack", project.root, tmp_path, STACK=stack, **env)

    result = outputs("prod")
    assert result.returncode == 0, result.stderr
    region = yaml.safe_load((project.root / "stacks/Pulumi.prod.yaml").read_text())["config"]["gpu-dra:cluster"][
        "region"]
    assert (tmp_path / "output").read_text() == f"region={region}\n"
    assert (project.root / "build/config.prod.json").read_text() == (ROOT / "policies/config.prod.json").read_text()
    project.edit_stack("dev", lambda config: config.update({
        "gpu-dra:cluster": {"name": "lab", "platform": "existing", "kubernetesVersion": "1.34"},
        "gpu-dra:nodeGroups": [], "gpu-dra:kubeconfig": {"secure": "v1:c2VjcmV0"}}))  # as `pulumi config set --secret`
    refused = outputs("dev")
    assert refused.returncode == 1 and "::error file=stacks/Pulumi.dev.yaml::the stack names no " in refused.stdout
    assert outputs("dev", DEFAULT_REGION="eu-west-1").returncode == 0
    assert (tmp_path / "output").read_text() == "region=eu-west-1\n"

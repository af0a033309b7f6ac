"""`gpu-dra` run as a user runs it, on the repo's stacks and on broken copies: in this process for what it prints
and exits with, as a child process where the process itself is under test."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from .conftest import ROOT, STACKS, Project


def gpu_dra_process(*args: str, cwd: Path = ROOT, input: str | None = None) -> subprocess.CompletedProcess[str]:
    """`python -m gpu_dra.cli.main` as a child process: for what only a process shows (signals, exit handlers,
    deadlines, memory, its streams as the operating system gives them)."""
    return subprocess.run([sys.executable, "-m", "gpu_dra.cli.main", *args], cwd=cwd, capture_output=True,
                          text=True, timeout=120, env={**os.environ, "PYTHONPATH": str(ROOT)}, input=input)


def gpu_dra(*args: str, cwd: Path = ROOT, input: str | None = None) -> subprocess.CompletedProcess[str]:
    """The command in this process (`main.run`: its arguments, exit codes and what it prints), in `cwd`, with
    `input` on stdin: what `gpu_dra_process` returns, without a process's start (a second of Pulumi's imports for
    the verbs that run the program) per call."""
    from gpu_dra.cli import main

    stdout, stderr = io.StringIO(), io.StringIO()
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(cwd)
        patch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO((input or "").encode()), encoding="utf-8"))
        patch.setattr(sys, "stdout", stdout)
        patch.setattr(sys, "stderr", stderr)
        code = main.run(list(args))
    return subprocess.CompletedProcess(["gpu-dra", *args], code, stdout.getvalue(), stderr.getvalue())


def test_preview_prints_tree_counts_and_writes_manifests(tmp_path: Path) -> None:
    result = gpu_dra("preview", "--stack", "dev", "--out", str(tmp_path))
    assert result.returncode == 0, result.stderr
    assert "├─ gpu-dra:cluster:EksCluster  gpu-dev" in result.stdout
    assert "     7  kubernetes:resource.k8s.io/v1:ResourceClaimTemplate" in result.stdout
    manifest = yaml.safe_load((tmp_path / "inference" / "resourceclaimtemplate-gpu-20gb-any.yaml").read_text())
    assert manifest["apiVersion"] == "resource.k8s.io/v1"
    assert manifest["spec"]["spec"]["devices"]["requests"][0]["exactly"]["count"] == 1  # an int, as applied
    assert (tmp_path / "_cluster" / "deviceclass-gpu-l4.yaml").exists()


def test_preview_json_lists_every_resource_with_inputs(tmp_path: Path) -> None:
    result = gpu_dra("preview", "--stack", "prod", "--format", "json", "--out", str(tmp_path))
    assert result.returncode == 0, result.stderr
    document = json.loads(result.stdout)
    assert document["stack"] == "prod"
    resources = document["resources"]
    assert {"type", "name", "parent", "inputs"} <= set(resources[0])
    by_name = {(r["type"], r["name"]): r for r in resources}
    group = by_name[("eks:index:ManagedNodeGroup", "gpu-prod-h100")]
    # a capacity block: desired 0, EKS sizes it within the block's window (pulumi ignores scaling changes)
    assert group["inputs"]["scalingConfig"] == {"desiredSize": 0.0, "maxSize": 4.0, "minSize": 0.0}
    assert group["parent"].endswith("gpu-dra:cluster:EksCluster::gpu-prod")


def test_render_writes_only_manifests(tmp_path: Path) -> None:
    result = gpu_dra("render", "--stack", "staging", "--out", str(tmp_path / "out"))
    assert result.returncode == 0, result.stderr
    files = sorted(p.relative_to(tmp_path / "out").as_posix() for p in (tmp_path / "out").rglob("*.yaml"))
    assert "_cluster/deviceclass-gpu-h100.yaml" in files
    assert len(files) == len(result.stdout.splitlines())


def test_bad_config_exits_2_with_file_and_key_and_no_traceback(project: Project) -> None:
    def break_it(config: dict) -> None:
        config["gpu-dra:nodeGroups"][1]["scaling"] = {"min": 4, "desired": 4, "max": 2}
        config["gpu-dra:nodeGroups"][0]["scalng"] = {}
    project.edit_stack("prod", break_it)
    result = gpu_dra("--project-dir", str(project.root), "preview", "--stack", "prod")
    assert result.returncode == 2
    lines = (project.root / "stacks/Pulumi.prod.yaml").read_text().splitlines()
    misspelt = next(n for n, text in enumerate(lines, 1) if "scalng" in text)
    below_min = next(n for n, text in enumerate(lines, 1) if "max: 2" in text)
    assert (f"stacks/Pulumi.prod.yaml:{below_min}: gpu-dra:nodeGroups[1].scaling.max: must be >= scaling.min (4)"
            in result.stderr.splitlines())
    assert f"stacks/Pulumi.prod.yaml:{misspelt}: gpu-dra:nodeGroups[0].scalng: unknown key; did you mean 'scaling'?" \
        in result.stderr
    assert "Traceback" not in result.stderr and result.stdout == ""


def test_program_itself_rejects_bad_config_before_registering(project: Project) -> None:
    """Under `pulumi up` the program validates too: exit 2 and the same message, nothing registered."""
    from gpu_dra.core.config.loader import stack_values

    values, located = stack_values(project.root, "dev")
    values["gpu-dra:nodeGroups"][0]["diskSize"] = 10
    line = located.line(("config", "gpu-dra:nodeGroups", 0, "diskSize"))
    script = ("import json, sys; from pathlib import Path; from gpu_dra.cli.offline import run_program; "
              f"run = run_program(Path({str(project.root)!r}), 'dev', json.loads(sys.argv[1])); "
              "print(len(run.resources))")
    result = subprocess.run([sys.executable, "-c", script, json.dumps(values)], capture_output=True, text=True,
                            timeout=120, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert f"stacks/Pulumi.dev.yaml:{line}: gpu-dra:nodeGroups[0].diskSize: must be >= 100 (got 10)" in result.stderr
    assert result.returncode == 2
    assert result.stdout == ""  # the resource count is never printed: the run stopped first


def test_unknown_stack_is_a_usage_error() -> None:
    result = gpu_dra("preview", "--stack", "qa")
    assert result.returncode == 2
    assert "stacks/Pulumi.qa.yaml: no such stack file; stacks here: automode, dev, prod, staging" in result.stderr


def test_outside_a_project_is_a_usage_error(tmp_path: Path) -> None:
    result = gpu_dra("preview", cwd=tmp_path)
    assert result.returncode == 2
    assert "no gpu-dra project" in result.stderr


def test_a_renamed_project_is_named_with_what_to_do(project: Project) -> None:
    """Renaming the project in Pulumi.yaml made every verb say "run inside the project or pass --project-dir",
    which the user had done."""
    pulumi_yaml = project.root / "Pulumi.yaml"
    pulumi_yaml.write_text(pulumi_yaml.read_text().replace("name: gpu-dra", "name: my-gpus", 1))
    result = gpu_dra("check", "--stack", "dev", cwd=project.root / "stacks")
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr.startswith(f"gpu-dra: {pulumi_yaml} names the project 'my-gpus', and gpu-dra reads the "
                                    "project named gpu-dra"), result.stderr
    assert "Set `name: gpu-dra` there" in result.stderr


def test_schema_describes_stack_and_team_files() -> None:
    stack = json.loads(gpu_dra("schema", "stack").stdout)
    config = stack["properties"]["config"]
    assert "gpu-dra:nodeGroups" in config["properties"] and config["additionalProperties"] is False
    team = json.loads(gpu_dra("schema", "team").stdout)
    assert "claimTemplates" in team["properties"]


def test_committed_schemas_are_current() -> None:
    for kind in ("stack", "team"):
        committed = json.loads((ROOT / "schemas" / f"{kind}.schema.json").read_text())
        assert committed == json.loads(gpu_dra("schema", kind).stdout), f"run `make schemas` ({kind})"


def test_configuration_reference_is_current() -> None:
    from gpu_dra.core.config.docs import configuration_markdown

    committed = (ROOT / "docs" / "configuration.md").read_text()
    assert committed == configuration_markdown(ROOT) + "\n", "run `make docs`"
    # Each part's description is its docstring's first paragraph, whole (it was cut at the first line's end).
    for part in committed.split("\n## ")[1:]:
        description = part.split("\n\n")[1]
        assert description.startswith("|") or description.rstrip().endswith((".", ")")), part.split("\n")[0]


def test_check_all_stacks_reports_every_stacks_config_mistakes(project: Project) -> None:
    project.edit_stack("dev", lambda config: config["gpu-dra:cluster"].update(regoin="x"))
    project.edit_stack("prod", lambda config: config["gpu-dra:cluster"].update(nmae="x"))
    result = gpu_dra("--project-dir", str(project.root), "check", "--all-stacks")
    assert result.returncode == 2
    assert "stacks/Pulumi.dev.yaml" in result.stderr and "regoin" in result.stderr
    assert "stacks/Pulumi.prod.yaml" in result.stderr and "nmae" in result.stderr


def test_every_verb_has_help_with_examples_of_itself() -> None:
    from gpu_dra.cli.main import VERBS, build_parser, with_arguments

    verbs = build_parser()._subparsers._group_actions[0].choices  # type: ignore[union-attr]
    assert list(verbs) == list(VERBS)
    for name, parser in verbs.items():
        help_text = with_arguments(name, parser).format_help()
        assert "examples:" in help_text and f"gpu-dra {name}" in help_text.split("examples:")[1], name
        assert "exit codes: 0 " in help_text, name  # what a script can rely on (issue 32)


def test_check_reports_every_stack_then_exits_2_on_a_config_error(project: Project) -> None:
    """A broken stack no longer hides the others: each is in the report, the broken one with its errors."""
    project.edit_stack("prod", lambda config: config["gpu-dra:cluster"].update(nmae="x"))
    line = next(n for n, text in enumerate((project.root / "stacks/Pulumi.prod.yaml").read_text().splitlines(), 1)
                if "nmae" in text)
    result = gpu_dra("--project-dir", str(project.root), "check", "--all-stacks", "--format", "json")
    assert result.returncode == 2
    stacks = {entry["stack"]: entry for entry in json.loads(result.stdout)["stacks"]}
    assert sorted(stacks) == ["automode", "dev", "prod", "staging"]
    [error] = [e for e in stacks["prod"]["configErrors"] if e["path"] == "gpu-dra:cluster.nmae"]
    assert (error["file"], error["line"], error["policy"], error["enforcement"]) == (
        "stacks/Pulumi.prod.yaml", line, "config", "mandatory")
    assert set(error) == set(stacks["dev"]["violations"][0])  # one finding shape (issue 32)
    assert f"stacks/Pulumi.prod.yaml:{line}: gpu-dra:cluster.nmae: unknown key" in result.stderr
    text = gpu_dra("--project-dir", str(project.root), "check", "--all-stacks")
    assert text.returncode == 2
    assert "stack prod: not checked: " in text.stdout and "stack dev: " in text.stdout


def test_a_team_file_mistake_is_one_sarif_result_naming_each_stack_it_stops(project: Project) -> None:
    path = project.root / "stacks/teams/inference.yaml"
    path.write_text(path.read_text().replace("claims: 64", "claims: !!int abc", 1))
    line = next(n for n, text in enumerate(path.read_text().splitlines(), 1) if "!!int abc" in text)
    users = [s for s in sorted(STACKS) if "inference" in yaml.safe_load(
        (project.root / f"stacks/Pulumi.{s}.yaml").read_text())["config"]["gpu-dra:teams"]]
    result = gpu_dra("--project-dir", str(project.root), "check", "--all-stacks", "--format", "sarif")
    assert result.returncode == 2
    [found] = [r for r in json.loads(result.stdout)["runs"][0]["results"]
               if r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "stacks/teams/inference.yaml"]
    assert len(users) >= 2 and found["properties"] == {"stacks": users}
    assert (found["ruleId"], found["level"]) == ("config", "error")
    assert found["locations"][0]["physicalLocation"]["region"] == {"startLine": line}
    assert found["message"]["text"].startswith(f"[{', '.join(users)}] quota.claims: ")


@pytest.mark.parametrize("argv", [
    ("check", "--all-stacks", "--format", "sarif"),
    ("preview", "--stack", "prod", "--format", "json", "--out", "{tmp}"),
    ("lint", "examples/guide-gpu-20gb-any.yaml"),
    ("explain", "--stack", "dev", "--claim", "no-such-claim"),
    ("logs", "-"),
    ("schema", "nothing"),
    ("--version",),
], ids=lambda argv: argv[0])
def test_in_process_runs_equal_a_process(tmp_path: Path, argv: tuple[str, ...]) -> None:
    """What most tests read of a run in this process (`gpu_dra`) is what the command gives as a process: exit code,
    stdout and stderr, for findings, a program run, bad input, stdin and argparse's own exits."""
    args = [arg.replace("{tmp}", str(tmp_path / "out")) for arg in argv]
    log = (ROOT / "tests/data/scheduler-klog.log").read_text()
    in_process, process = gpu_dra(*args, input=log), gpu_dra_process(*args, input=log)
    assert (in_process.returncode, in_process.stdout, in_process.stderr) == (
        process.returncode, process.stdout, process.stderr)
    assert in_process.stdout or in_process.stderr  # each says something: the comparison compares something


def test_sarif_rules_default_to_their_level_in_prod() -> None:
    """Code scanning shows a rule's default level where a result has none: a rule mandatory in prod is an error
    (it said "warning" unless the rule was mandatory everywhere); an always-advisory rule stays a warning."""
    from gpu_dra.cli.check import as_sarif
    from gpu_dra.core import policy

    rules = as_sarif([], "0")["runs"][0]["tool"]["driver"]["rules"]
    levels = {r["id"]: r["defaultConfiguration"]["level"] for r in rules if r["id"] != "config"}
    assert levels["eks-hardening"] == "error" and levels["no-alpha-in-production"] == "error"
    assert {name for name, level in levels.items() if level == "warning"} == {
        rule.name for rule in policy.RULES if rule.always_advisory}


README_MISTAKES = (  # the README's example of a mistaken prod stack, made in the real files' text
    ("stacks/Pulumi.prod.yaml", "      scaling: {min: 0, desired: 0, max: 4}",
     "      scalng: {min: 0, desired: 0, max: 4}"),
    ("stacks/Pulumi.prod.yaml", "      scaling: {min: 2, desired: 3, max: 8}",
     "      scaling: {min: 4, desired: 4, max: 2}"),
    ("stacks/teams/inference.yaml", "  claims: 64", "  claims: -1"),
)


def test_the_readmes_config_error_example_is_a_real_run(project: Project) -> None:
    """README's `gpu-dra preview --stack prod` example is what that run prints for its three mistakes, line numbers
    included (they are the repository's files' lines)."""
    for file, before, after in README_MISTAKES:
        path = project.root / file
        assert path.read_text().count(before) == 1, before
        path.write_text(path.read_text().replace(before, after))
    result = gpu_dra("--project-dir", str(project.root), "preview", "--stack", "prod")
    assert result.returncode == 2
    readme = (ROOT / "README.md").read_text()
    shown = readme.split("$ gpu-dra preview --stack prod\n", 1)[1].split("```", 1)[0]
    assert [line for line in result.stderr.splitlines() if "accessEntries" not in line] == shown.splitlines()

"""`gpu-dra check` over an organisation's stacks (bench/organisation.py builds it): many stacks in one process judge
each stack as a process of its own would, `--jobs` reports as one process does, and the per-resource work the
analyzer and the mock run repeated for every policy and every resource is done once."""

from __future__ import annotations

import builtins
import io
import json
import traceback
from pathlib import Path
from typing import Any

import pytest
import yaml
from google.protobuf import json_format

from bench.organisation import organisation_project
from gpu_dra.cli import check
from gpu_dra.cli.offline import run_program
from gpu_dra.core import policy, yamlsource
from gpu_dra.core.config.loader import build_stack, stack_values
from gpu_dra.core.policy import resources as policy_resources

from .conftest import ROOT
from .test_cli import gpu_dra_process as gpu_dra  # a fresh process per run: the runs compare processes

BROKEN = "dev-99"  # a stack of the organisation hosting a team without a team file


@pytest.fixture(scope="module")
def organisation(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Three stacks (a dev, a staging and a prod copy) hosting the same six teams, and a broken fourth."""
    root = tmp_path_factory.mktemp("organisation")
    organisation_project(root, stacks=3, teams=6, hosts=3)
    stack = yaml.safe_load((root / "stacks" / "Pulumi.dev-00.yaml").read_text())
    stack["config"]["gpu-dra:teams"]["no-such-team"] = {}
    (root / "stacks" / f"Pulumi.{BROKEN}.yaml").write_text(yaml.safe_dump(stack, sort_keys=False))
    return root


def _entries(report: str) -> dict[str, Any]:
    return {entry["stack"]: entry for entry in json.loads(report)["stacks"]}


def test_stacks_checked_in_one_process_are_judged_as_each_alone(organisation: Path) -> None:
    """What one stack's check leaves behind (memoised selectors, schema verdicts, parsed team files, the pack's
    per-run caches) changes nothing for the next: the same findings, in the same order, as a process per stack."""
    together = gpu_dra("--project-dir", str(organisation), "check", "--all-stacks", "--format", "json")
    assert together.returncode == 2, together.stderr  # the broken stack
    entries = _entries(together.stdout)
    assert list(entries) == ["dev-00", BROKEN, "prod-02", "staging-01"]
    assert entries[BROKEN]["configErrors"] and not entries[BROKEN]["violations"]
    for name in ("dev-00", "prod-02", "staging-01"):
        alone = gpu_dra("--project-dir", str(organisation), "check", "--stack", name, "--format", "json")
        assert alone.returncode in (0, 1), alone.stderr
        assert _entries(alone.stdout)[name] == entries[name], name
    assert sum(len(e["violations"]) for e in entries.values()) > 5  # the teams' copies give findings everywhere


@pytest.mark.parametrize("format_", ["text", "sarif"])
def test_jobs_report_as_one_process_does(organisation: Path, format_: str) -> None:
    """Several processes check the stacks; the report, the config errors on stderr and the exit code are one
    process's, in stack order."""
    runs = [gpu_dra("--project-dir", str(organisation), "check", "--all-stacks", "--format", format_, "--jobs", jobs)
            for jobs in ("1", "2")]
    assert runs[0].returncode == 2 and "no-such-team" in runs[0].stderr
    assert (runs[1].returncode, runs[1].stdout, runs[1].stderr) == (runs[0].returncode, runs[0].stdout,
                                                                     runs[0].stderr)


def test_jobs_must_be_a_count_of_processes() -> None:
    result = gpu_dra("check", "--all-stacks", "--jobs", "0")
    assert result.returncode == 2 and "--jobs: 0 processes: give 1 to 64" in result.stderr, result.stderr


def _prod() -> tuple[list[Any], dict[str, Any]]:
    values, located = stack_values(ROOT, "prod")
    stack = build_stack(ROOT, "prod", values, located)
    return check.engine_resources(run_program(ROOT, "prod", values, stack)), check.pack_config(stack, ROOT)


def test_the_analyzer_reads_each_resource_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """pulumi-policy turns a resource's properties into a dict for each of the 19 policies; in `gpu-dra check` it is
    done once per resource's inputs and once per its outputs."""
    resources, config = _prod()
    expected = check.analyze(resources, config, "prod").findings
    calls = []
    real = json_format.MessageToDict

    def counted(*args: Any, **kwargs: Any) -> Any:
        calls.append(args[0])
        return real(*args, **kwargs)

    monkeypatch.setattr(json_format, "MessageToDict", counted)
    assert check.analyze(resources, config, "prod").findings == expected
    assert len(calls) <= 2 * len(resources) + len(policy.RULES), len(calls)  # and the Configure of each policy


def test_a_resource_is_typed_once_for_every_rule(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each rule gets the resource the engine sent; within one check its DeviceClass or claim is parsed once for
    the inputs and once for the outputs, not once per rule that reads it."""
    resources, config = _prod()
    expected = check.analyze(resources, config, "prod").findings
    parsed = []
    real = policy_resources.parse_object

    def counted(obj: Any) -> Any:
        parsed.append(obj)
        return real(obj)

    monkeypatch.setattr(policy_resources, "parse_object", counted)
    assert check.analyze(resources, config, "prod").findings == expected
    dra_objects = sum(1 for r in resources if r.type in policy_resources.RESOURCE_TYPES.values())
    assert 0 < len(parsed) <= 2 * dra_objects, (len(parsed), dra_objects)


def test_the_mock_run_walks_no_stack_trace(monkeypatch: pytest.MonkeyPatch) -> None:
    """The SDK walks the Python stack for each registration, for an engine to show where it was declared; the
    mock run sends none, and records the same registrations."""
    values, located = stack_values(ROOT, "prod")
    stack = build_stack(ROOT, "prod", values, located)
    walks = []
    real = traceback.extract_stack

    def counted(*args: Any, **kwargs: Any) -> Any:
        walks.append(args)
        return real(*args, **kwargs)

    monkeypatch.setattr(traceback, "extract_stack", counted)
    run = run_program(ROOT, "prod", values, stack)
    assert run.resources and not walks


def test_a_selector_refused_on_one_stack_is_refused_on_the_next(tmp_path: Path) -> None:
    """The compile verdict of a selector is kept for the stacks after it: a broken selector a team's template
    shares across stacks is reported on each of them."""
    root = tmp_path / "org"
    organisation_project(root, stacks=2, teams=2, hosts=2)
    team = root / "stacks" / "teams" / "training-000.yaml"
    data = yaml.safe_load(team.read_text())
    request = data["claimTemplates"][0]["requests"][0]
    request.pop("match", None)
    request["selectors"] = ["1 == 1 &&"]
    team.write_text(yaml.safe_dump(data, sort_keys=False))
    result = gpu_dra("--project-dir", str(root), "check", "--all-stacks", "--format", "json")
    refused = {entry["stack"]: [v for v in entry["violations"] if v["policy"] == "dra-cel-compiles"]
               for entry in json.loads(result.stdout)["stacks"]}
    assert set(refused) == {"dev-00", "staging-01"} and all(len(v) == 1 for v in refused.values()), refused


def test_a_check_run_reads_and_parses_each_project_file_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """The loader keeps the stack and team files it read (LoadedStack), and what follows it in a check (the named
    workloads' lines, each finding's line) reads them there: over stacks sharing team files, each is opened and
    parsed once in the run."""
    opened: list[str] = []
    parsed: list[str] = []
    real_open, real_parse = io.open, yamlsource.parse_documents

    def counted_open(file: Any, *args: Any, **kwargs: Any) -> Any:
        if isinstance(file, str | Path) and Path(file).parent.name in ("stacks", "teams"):
            opened.append(Path(file).name)
        return real_open(file, *args, **kwargs)

    def counted_parse(text: str, display: str, *args: Any, **kwargs: Any) -> Any:
        parsed.append(Path(display).name)
        return real_parse(text, display, *args, **kwargs)

    monkeypatch.setattr(io, "open", counted_open)
    monkeypatch.setattr(builtins, "open", counted_open)
    monkeypatch.setattr(yamlsource, "parse_documents", counted_parse)
    found, broken = check.check_stacks(ROOT, ["staging", "prod"])
    assert not broken and found
    project_files = {p.name for p in (ROOT / "stacks").rglob("*.yaml")}
    assert {"Pulumi.prod.yaml", "ops.yaml", "training.yaml"} < set(opened)  # ops names a workload; both host training
    assert sorted(opened) == sorted(set(opened)), opened  # each once
    assert sorted(name for name in parsed if name in project_files) == sorted(opened), parsed

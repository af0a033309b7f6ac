"""`gpu-dra migrate` on thousands of workloads: a workload's schema is validated once per shape (renamed copies, the
same app in many namespaces) with every error still the validator's own, and the stack's claim templates are parsed
once per plan, not once per workload."""

from __future__ import annotations

import copy
from typing import Any

import pytest
import yaml

from gpu_dra.cli import check
from gpu_dra.core.analysis import migrate
from gpu_dra.core.analysis.migrate import explaining, planner
from gpu_dra.core.analysis.migrate import workloads as reading
from gpu_dra.core.config.loader import load_stack
from gpu_dra.core.dra import k8s_schema
from gpu_dra.core.yamlsource import parse_documents

from .conftest import ROOT

WEB = yaml.safe_load((ROOT / "examples" / "migrate" / "deployment-web.yaml").read_text())


def _copies(count: int, change: Any = None) -> list[dict[str, Any]]:
    """`count` copies of the web Deployment, each with its own name and namespace; `change` edits the last."""
    out = []
    for index in range(count):
        obj = copy.deepcopy(WEB)
        obj["metadata"].update(name=f"web-{index}", namespace=f"team-{index}")
        out.append(obj)
    if change is not None:
        change(out[-1])
    return out


def _read(objects: list[dict[str, Any]], version: str = "1.35") -> list[migrate.Workload]:
    text = yaml.safe_dump_all(objects, sort_keys=False)
    return migrate.read_workloads([("copies.yaml", parse_documents(text, "copies.yaml"))], version)[0]


@pytest.fixture
def validations(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The versions k8s_schema.validate is called for, from now on, with no shape remembered from before."""
    monkeypatch.setattr(reading, "_VALID_SHAPES", set())
    calls: list[str] = []
    real = k8s_schema.validate

    def counted(data: dict[str, Any], version: str, strict: bool = False) -> str:
        calls.append(version)
        return real(data, version, strict)

    monkeypatch.setattr(k8s_schema, "validate", counted)
    return calls


def test_renamed_copies_are_validated_once_per_version(validations: list[str]) -> None:
    assert len(_read(_copies(50))) == 50
    assert validations == ["1.35"]
    _read(_copies(3), version="1.36")  # another version's schema: validated again
    assert validations == ["1.35", "1.36"]


@pytest.mark.parametrize(("change", "message"), [
    (lambda obj: obj["spec"].update(replica=3),
     "Deployment team-49/web-49: spec: Additional properties are not allowed ('replica' was unexpected) (the strict "
     "OpenAPI schema of Kubernetes 1.35)"),
    (lambda obj: obj["metadata"].update(name=123),
     "Deployment team-49/123: metadata.name: 123 is not of type 'string', 'null' (the strict OpenAPI schema"),
    (lambda obj: obj["metadata"].update(namespace=["a"]),
     "Deployment ['a']/web-49: metadata.namespace: ['a'] is not of type 'string', 'null' (the strict OpenAPI"),
], ids=["an unknown field", "a name that is not a string", "a namespace that is not a string"])
def test_a_copy_that_differs_is_validated_and_refused_with_the_validators_words(
        validations: list[str], change: Any, message: str) -> None:
    """After 49 valid copies, the 50th with a mistake is validated, not taken for its shape, and refused as the
    validator refuses it."""
    with pytest.raises(migrate.MigrateError) as refused:
        _read(_copies(50, change))
    assert message in str(refused.value)
    assert len(validations) == 2  # the first copy, and the one that differs


def test_the_stack_s_templates_are_parsed_once_per_plan(monkeypatch: pytest.MonkeyPatch) -> None:
    stack = load_stack(ROOT, "prod")
    workloads = _read(_copies(20))
    expected = [v.as_dict() for v in migrate.plan(stack, workloads).verdicts]
    parsed: list[Any] = []
    real = explaining.claims_from_objects

    def counted(objects: Any) -> Any:
        objects = list(objects)
        parsed.extend(objects)
        return real(objects)

    monkeypatch.setattr(explaining, "claims_from_objects", counted)
    assert [v.as_dict() for v in migrate.plan(stack, workloads).verdicts] == expected
    templates = sum(len(team.claim_templates) for team in stack.teams)
    # the stack's templates once, and for each rewrite the template it names
    assert len(parsed) <= templates + len(workloads), (len(parsed), templates)


def test_the_policy_pack_places_the_teams_workloads_without_rewriting_them(monkeypatch: pytest.MonkeyPatch) -> None:
    """legacy-workloads-placed reads where the pods run, which the rewrites do not change: `check` places the
    workloads the teams name without choosing templates or rewriting them."""
    stack = load_stack(ROOT, "prod")
    workloads = _read(_copies(6))
    placed = [(v.phase, v.placement.as_dict()) for v in migrate.plan(stack, workloads).verdicts]
    rewritten: list[Any] = []
    real = planner.rewrite

    def counted(*args: Any) -> Any:
        rewritten.append(args)
        return real(*args)

    monkeypatch.setattr(planner, "rewrite", counted)
    assert [(v.phase, v.placement.as_dict()) for v in migrate.plan(stack, workloads, rewrites=False).verdicts] == placed
    assert check.pack_config(stack, ROOT)["legacy-workloads-placed"]["legacyWorkloads"]  # ops names gpu-diag
    assert not rewritten

"""Two kinds of schema. The committed JSON Schemas (schemas/, what editors validate stack and team files with) accept
every stack and team file in the repo and reject unknown keys. And every Kubernetes object every stack declares
validates, in strict mode, against the OpenAPI schema of the stack's Kubernetes version (kubernetes-validate ships
1.34 to 1.37): what the API server would reject at apply is caught here."""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any

import jsonschema
import kubernetes_validate
import pytest
import yaml
from jsonschema import Draft202012Validator

from gpu_dra.cli.manifest_files import kubernetes_objects
from gpu_dra.core.config.loader import load_stack

from .conftest import ALL_STACKS, ROOT, named
from .test_program import program

SCHEMAS = ROOT / "schemas"
STACK_FILES = sorted((ROOT / "stacks").glob("Pulumi.*.yaml"))
TEAM_FILES = sorted((ROOT / "stacks" / "teams").glob("*.yaml"))


def validator(kind: str) -> Draft202012Validator:
    """The committed schema of `kind` (stack or team), itself checked against the 2020-12 meta-schema."""
    schema = json.loads((SCHEMAS / f"{kind}.schema.json").read_text())
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema)


def problems(kind: str, document: Any) -> list[str]:
    return [f"{'/'.join(map(str, error.absolute_path))}: {error.message}"
            for error in validator(kind).iter_errors(document)]


def load(path: Path) -> Any:
    return yaml.safe_load(path.read_text())


def test_every_stack_and_team_is_a_file_here() -> None:
    """The parametrized checks below cover the repo's stacks and every team file they can refer to."""
    assert [p.name for p in STACK_FILES] == sorted(f"Pulumi.{s}.yaml" for s in ALL_STACKS)
    teams = {team for stack in ALL_STACKS for team in load_stack(ROOT, stack).config.teams}
    assert teams and teams <= {p.stem for p in TEAM_FILES}


@pytest.mark.parametrize("path", STACK_FILES, ids=lambda p: p.name)
def test_stack_files_match_the_committed_schema(path: Path) -> None:
    assert problems("stack", load(path)) == []


@pytest.mark.parametrize("path", TEAM_FILES, ids=lambda p: p.name)
def test_team_files_match_the_committed_schema(path: Path) -> None:
    assert problems("team", load(path)) == []


@pytest.mark.parametrize("kind,file,path", [
    ("team", "inference.yaml", ("owner",)),
    ("team", "inference.yaml", ("quota", "gpus")),
    ("team", "inference.yaml", ("claimTemplates", "[l40s]", "requests", "[gpu]", "deviceClas")),
    ("stack", "Pulumi.dev.yaml", ("config", "gpu-dra:nodeGroup")),
    ("stack", "Pulumi.dev.yaml", ("config", "gpu-dra:nodeGroups", "[l4]", "instanceType")),
    ("stack", "Pulumi.dev.yaml", ("config", "gpu-dra:cluster", "endpoint", "public")),
])
def test_the_schemas_reject_an_unknown_key(kind: str, file: str, path: tuple[str, ...]) -> None:
    """A misspelt key is an error in the editor, as in `gpu-dra validate`, not silently ignored: the one error is on
    the mapping that got the key (`[name]`: the list entry of that name)."""
    document = load(ROOT / "stacks" / ("teams" if kind == "team" else "") / file)
    node = document
    for segment in path[:-1]:
        node = named(node, segment[1:-1]) if segment.startswith("[") else node[segment]
    node[path[-1]] = "x"
    errors = list(validator(kind).iter_errors(document))
    assert [(e.validator, e.instance) for e in errors] == [("additionalProperties", node)], [e.message for e in errors]


def test_the_stack_schema_leaves_other_packages_config_alone() -> None:
    """aws:, kubernetes: and pulumi: keys belong to other packages' schemas."""
    document = load(ROOT / "stacks" / "Pulumi.dev.yaml")
    document["config"].update({"aws:region": "us-west-2", "kubernetes:enableServerSideApply": True})
    assert problems("stack", document) == []


@pytest.mark.parametrize("key", ["GPU-DRA:environment", "gpudra:teams", "environment", "random:seed"])
def test_the_stack_schema_rejects_keys_nothing_reads(key: str) -> None:
    """As the loader does: a namespace that is neither gpu-dra: nor a provider's was silently ignored."""
    document = load(ROOT / "stacks" / "Pulumi.dev.yaml")
    document["config"][key] = "x"
    errors = list(validator("stack").iter_errors(document))
    assert [(e.validator, e.instance) for e in errors] == [("additionalProperties", document["config"])]


@pytest.mark.parametrize("stack", ALL_STACKS)
def test_rendered_objects_are_schema_valid(stack: str) -> None:
    version = load_stack(ROOT, stack).config.cluster.kubernetes_version
    objects = kubernetes_objects(program(stack))
    assert {o["kind"] for o in objects} >= {"DeviceClass", "Namespace", "ResourceQuota", "ResourceClaimTemplate"}
    for obj in objects:
        if obj["apiVersion"].startswith("karpenter."):
            continue  # Karpenter's kinds: no Kubernetes schema has them, and their 1.15 CRDs were not readable
        if obj["apiVersion"].startswith("kueue.x-k8s.io/"):
            _kueue_validator(obj["kind"]).validate(obj)
            continue
        kubernetes_validate.validate(obj, version, strict=True)


def _strict(schema: Any) -> Any:
    """The CRD schema as `kubectl apply --validate=strict` judges fields: no field it does not declare."""
    if isinstance(schema, dict):
        out = {k: _strict(v) for k, v in schema.items()}
        if "properties" in schema and not schema.get("x-kubernetes-preserve-unknown-fields"):
            out.setdefault("additionalProperties", False)
        return out
    return [_strict(v) for v in schema] if isinstance(schema, list) else schema


@functools.cache
def _kueue_validator(kind: str) -> jsonschema.Draft7Validator:
    """Kueue's own schema of the kind at the release gpu-dra installs (tests/data/kueue/, vendored by
    tools/vendor_kueue_crds.py)."""
    schema = json.loads((ROOT / "tests" / "data" / "kueue" / f"{kind.lower()}.v1beta2.schema.json").read_text())
    return jsonschema.Draft7Validator(_strict(schema))


def test_a_queue_field_kueue_does_not_have_is_caught() -> None:
    """The check can fail: v1beta1's `cohort` is `cohortName` in v1beta2, and a quota must be a quantity."""
    with pytest.raises(jsonschema.ValidationError):
        _kueue_validator("ClusterQueue").validate({"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ClusterQueue",
                                                   "metadata": {"name": "q"}, "spec": {"cohort": "gpu"}})
    with pytest.raises(jsonschema.ValidationError):
        _kueue_validator("LocalQueue").validate({"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "LocalQueue",
                                                 "metadata": {"name": "q"}, "spec": {"clusterQueue": 3}})


def test_validation_catches_the_guide_mistake() -> None:
    """The check can fail: request fields outside `exactly` are what the v1 schema rejects."""
    wrong = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
             "metadata": {"name": "gpu-20gb-any"},
             "spec": {"spec": {"devices": {"requests": [{"name": "gpu", "deviceClassName": "gpu.nvidia.com"}]}}}}
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(wrong, "1.34", strict=True)

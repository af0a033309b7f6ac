"""A macro over an attribute's value (`device.attributes["d"].ids.exists(i, ...)`): without DRAListTypeAttributes
(alpha from 1.36, so off on EKS at every version) attribute values are typed `any`, which cel-go refuses as a
comprehension's range; lint, explain and the policy pack say so alike, and accept it where the gate is on."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from .policy_builders import happy_resources, mutate, run_rules
from .test_cli import gpu_dra
from .test_policies import CLASS, L40S_SELECTOR, SELECTOR_AT, selectors

RANGE = 'device.attributes["example.com"].ids.exists(i, i == 1)'
BOUND = 'cel.bind(d, device.attributes["example.com"], d.ids.all(i, i > 0))'
REFUSED = "expression of type 'any' cannot be the range of a comprehension"


def _class(expression: str) -> dict[str, object]:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "ids"},
            "spec": {"selectors": [{"cel": {"expression": f'device.driver == "example.com" && {expression}'}}]}}


@pytest.mark.parametrize("expression", [RANGE, BOUND, 'device.attributes["example.com"]["ids"].map(i, i).size() > 0'])
@pytest.mark.parametrize("version", ["1.34", "1.35", "1.36", "1.37"])
def test_lint_refuses_a_macro_over_an_attribute_without_the_gate(tmp_path: Path, version: str,
                                                                 expression: str) -> None:
    path = tmp_path / "class.yaml"
    path.write_text(yaml.safe_dump(_class(expression)))
    result = gpu_dra("lint", str(path), "--kubernetes-version", version, "--format", "json")
    assert result.returncode == 1, result.stdout
    assert REFUSED in result.stdout and "example.com/ids" in result.stdout


def test_lint_accepts_it_where_the_cluster_runs_the_gate_and_macros_over_maps_always(tmp_path: Path) -> None:
    path = tmp_path / "class.yaml"
    path.write_text(yaml.safe_dump_all([_class(RANGE)]))
    gated = gpu_dra("lint", str(path), "--kubernetes-version", "1.36", "--platform", "existing",
                    "--feature-gates", "DRAListTypeAttributes=true")
    assert gated.returncode == 0, gated.stdout
    path.write_text(yaml.safe_dump(_class('device.attributes["example.com"].exists(k, k == "ids")')))
    assert gpu_dra("lint", str(path), "--kubernetes-version", "1.36").returncode == 0


def test_explain_aborts_the_claim_with_the_same_reason(tmp_path: Path) -> None:
    claim = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {"name": "c", "namespace": "ml"},
             "spec": {"devices": {"requests": [{"name": "r", "exactly": {"deviceClassName": "ids"}}]}}}
    device_slice = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": "s"},
                    "spec": {"driver": "example.com", "pool": {"name": "p", "generation": 1, "resourceSliceCount": 1},
                             "nodeName": "n1", "devices": [{"name": "d0"}]}}
    path = tmp_path / "cluster.yaml"
    path.write_text(yaml.safe_dump_all([_class(RANGE), claim, device_slice]))
    result = gpu_dra("explain", str(path), "--kubernetes-version", "1.36", "--format", "json")
    (report,) = json.loads(result.stdout)["claims"]
    assert not report["allocatable"] and REFUSED in report["reason"], report


def test_the_policy_pack_refuses_it_on_the_stack_version() -> None:
    resources = mutate(happy_resources(kubernetes_version="1.36"), CLASS, ("spec", "selectors"),
                       selectors(f"{L40S_SELECTOR} && {RANGE}"))
    found = run_rules(resources, {"environment": "dev"}).get("dra-cel-compiles", [])
    assert [f.path for f in found] == [f"spec.{SELECTOR_AT}"] and REFUSED in found[0].message, found

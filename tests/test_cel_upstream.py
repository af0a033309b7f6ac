"""Upstream's own table (k8s.io/dynamic-resource-allocation cel/compile_test.go TestCEL), case by case.

tests/data/cel_upstream_cases.yaml names its source commit. Skipped, with the reason printed: list-type attributes
(DRAListTypeAttributes, alpha in 1.36; not supported here yet). Where upstream asserts a cost, the estimate must
equal it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from gpu_dra.core.dra.cel import CompileError, compile_selector, device_view, evaluate

CASES = yaml.safe_load((Path(__file__).parent / "data" / "cel_upstream_cases.yaml").read_text())["cases"]
LIST_KINDS = {"bools", "ints", "strings", "versions"}


def _skip_reason(case: dict[str, Any]) -> str | None:
    features = case.get("features") or {}
    list_values = any(set(value) & LIST_KINDS for value in (case.get("attributes") or {}).values())
    if features.get("list_type_attributes") or list_values:
        return "list-type attributes (DRAListTypeAttributes) are not supported yet"
    return None


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_upstream_case(case: dict[str, Any]) -> None:
    reason = _skip_reason(case)
    if reason:
        pytest.skip(reason)
    features = case.get("features") or {}
    # StoredExpressions (the default) has every field; NewExpressions only what the gates enable.
    consumable = bool(features.get("consumable_capacity")) or features.get("env_type") != "NewExpressions"
    expect = case["expect"]
    try:
        # Upstream compiles as the scheduler does (stored expressions): no estimated-cost rejection.
        selector = compile_selector(case["expression"], consumable_capacity=consumable, check_cost=False)
    except CompileError as error:
        assert "compile_error" in expect, f"unexpected compile error: {error.message}"
        assert expect["compile_error"] in error.message
        return
    assert "compile_error" not in expect, f"expected compile error {expect['compile_error']!r}"
    if "cost" in expect:
        assert selector.estimated_cost == expect["cost"]
    device = device_view(case.get("driver", ""), case.get("attributes"), case.get("capacity"),
                         case.get("allow_multiple_allocations"))
    result = evaluate(selector, device)
    if "runtime_error" in expect:
        assert result.error is not None and expect["runtime_error"] in result.error, result
    else:
        assert result.error is None, result.error
        assert result.matches is expect["match"]

"""Where a DaemonSet's pods land, as the scheduler decides it: the plugin-overlap check is only as right as this.

Cases follow the scheduler's own code: component-helpers scheduling/corev1/nodeaffinity (terms ORed, an empty or
unparsable term matches nothing), apimachinery labels.Requirement.Matches, core/v1 Toleration.ToleratesTaint.
"""

from __future__ import annotations

from typing import Any

import pytest

from gpu_dra.core.dra.scheduling import schedules_on

NODE = {"gpu-dra.io/allocation": "dra", "nvidia.com/gpu.count": "8", "nvidia.com/cuda.driver.major": "580",
        "gpu-dra.io/node-group": "h100"}
NO_SCHEDULE = {"key": "nvidia.com/gpu", "value": "true", "effect": "NoSchedule"}


def affinity(*terms: list[dict[str, Any]]) -> dict[str, Any]:
    """A pod spec whose required node affinity has these terms (each a list of matchExpressions)."""
    return {"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": [{"matchExpressions": term} for term in terms]}}}}


def requirement(key: str, operator: str, *values: str) -> list[dict[str, Any]]:
    """A one-requirement term."""
    expression: dict[str, Any] = {"key": key, "operator": operator}
    if values:
        expression["values"] = list(values)
    return [expression]


@pytest.mark.parametrize("key,operator,values,lands", [
    ("gpu-dra.io/allocation", "In", ("device-plugin", "dra"), True),
    ("gpu-dra.io/allocation", "In", ("device-plugin",), False),
    ("no-such-label", "In", ("dra",), False),
    ("gpu-dra.io/allocation", "NotIn", ("device-plugin",), True),
    ("gpu-dra.io/allocation", "NotIn", ("dra",), False),
    ("no-such-label", "NotIn", ("dra",), True),  # a node without the label is "not in"
    ("gpu-dra.io/allocation", "Exists", (), True),
    ("no-such-label", "Exists", (), False),
    ("no-such-label", "DoesNotExist", (), True),
    ("gpu-dra.io/allocation", "DoesNotExist", (), False),
])
def test_set_operators(key: str, operator: str, values: tuple[str, ...], lands: bool) -> None:
    assert schedules_on(affinity(requirement(key, operator, *values)), NODE, []) is lands


@pytest.mark.parametrize("operator,value,lands", [
    ("Gt", "7", True), ("Gt", "8", False), ("Gt", "-1", True),
    ("Lt", "9", True), ("Lt", "8", False), ("Lt", "10", True),  # integers, not strings: "8" < "10" is false
])
def test_gt_and_lt_compare_label_values_as_integers(operator: str, value: str, lands: bool) -> None:
    """Gt/Lt are valid node affinity operators: a chart using them must not crash the overlap check."""
    assert schedules_on(affinity(requirement("nvidia.com/gpu.count", operator, value)), NODE, []) is lands


@pytest.mark.parametrize("key", ["gpu-dra.io/node-group", "no-such-label"])
def test_gt_and_lt_never_match_a_missing_or_non_integer_label(key: str) -> None:
    assert not schedules_on(affinity(requirement(key, "Gt", "0")), NODE, [])
    assert not schedules_on(affinity(requirement(key, "Lt", "1000")), NODE, [])


@pytest.mark.parametrize("values", [("eight",), ("1", "2"), ()])
def test_a_term_the_scheduler_cannot_parse_matches_nothing(values: tuple[str, ...]) -> None:
    """Gt/Lt need exactly one integer; the term is dropped (no match) while the other terms still count."""
    bad = requirement("nvidia.com/gpu.count", "Gt", *values)
    assert not schedules_on(affinity(bad), NODE, [])
    assert schedules_on(affinity(bad, requirement("gpu-dra.io/allocation", "Exists")), NODE, [])


def test_unknown_operator_matches_nothing_instead_of_raising() -> None:
    assert not schedules_on(affinity(requirement("gpu-dra.io/allocation", "Matches", "d.*")), NODE, [])


def test_requirements_of_a_term_are_anded_and_terms_ored() -> None:
    dra, plugin = requirement("gpu-dra.io/allocation", "In", "dra"), requirement("gpu-dra.io/allocation", "In", "x")
    assert not schedules_on(affinity(dra + plugin), NODE, [])
    assert schedules_on(affinity(plugin, dra), NODE, [])


def test_an_empty_term_matches_nothing() -> None:
    assert not schedules_on(affinity([]), NODE, [])


def test_node_selector_needs_every_label() -> None:
    assert schedules_on({"nodeSelector": {"gpu-dra.io/allocation": "dra"}}, NODE, [])
    assert not schedules_on({"nodeSelector": {"gpu-dra.io/allocation": "dra", "no-such-label": "x"}}, NODE, [])


@pytest.mark.parametrize("toleration,tolerated", [
    ({"key": "nvidia.com/gpu", "operator": "Equal", "value": "true", "effect": "NoSchedule"}, True),
    ({"key": "nvidia.com/gpu", "value": "true"}, True),  # operator defaults to Equal; no effect: every effect
    ({"key": "nvidia.com/gpu", "operator": "Equal", "value": "false"}, False),
    ({"key": "nvidia.com/gpu", "operator": "Equal"}, False),  # Equal with no value wants an empty value
    ({"key": "nvidia.com/gpu", "operator": "Exists"}, True),
    ({"key": "other", "operator": "Exists"}, False),
    ({"operator": "Exists"}, True),  # no key: every taint
    ({"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoExecute"}, False),
    ({"key": "nvidia.com/gpu", "operator": "Exists", "effect": ""}, True),
    ({"key": "nvidia.com/gpu", "operator": "Gt", "value": "0"}, False),  # alpha comparison operators: off
])
def test_tolerations(toleration: dict[str, str], tolerated: bool) -> None:
    assert schedules_on({"tolerations": [toleration]}, NODE, [NO_SCHEDULE]) is tolerated


@pytest.mark.parametrize("effect,blocks", [("NoSchedule", True), ("NoExecute", True), ("PreferNoSchedule", False)])
def test_only_hard_taints_keep_an_untolerating_pod_off(effect: str, blocks: bool) -> None:
    assert schedules_on({}, NODE, [{**NO_SCHEDULE, "effect": effect}]) is not blocks


def test_an_empty_taint_value_equals_a_missing_toleration_value() -> None:
    assert schedules_on({"tolerations": [{"key": "dedicated", "operator": "Equal", "effect": "NoSchedule"}]}, NODE,
                        [{"key": "dedicated", "value": "", "effect": "NoSchedule"}])

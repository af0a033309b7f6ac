"""The memory a text takes once parsed is estimated from the text before it is parsed (yamlsource.parsed_size), so
that a dump made to amplify is refused instead of filling the memory. The estimate must stay above what each
parser really allocates for the shapes that cost the most per character, measured here with tracemalloc (which
sees every Python object the parsers make; yaml-rs's own buffers are not counted, so the margin is larger)."""

from __future__ import annotations

import gc
import json
import tracemalloc
from collections.abc import Callable
from typing import Any

import pytest
import yaml_rs

from gpu_dra.core.findings import ConfigError
from gpu_dra.core.yamlsource import ParseBudget, _json_document, parse_documents, parsed_size

ITEMS = 20_000


def _with_lines(text: str) -> Any:
    return parse_documents(text, "t.yaml", budget=ParseBudget(1 << 40))


PARSERS: dict[str, Callable[[str], Any]] = {
    "json": json.loads,
    "json-unique": _json_document,
    "yaml": lambda text: yaml_rs.loads(text, parse_datetime=False),
    "lines": _with_lines,
}

SHAPES = {
    "json": {
        "empty objects": "[" + ",".join(["{}"] * ITEMS) + "]",
        "nested lists": "[" + ",".join(["[[[0]]]"] * ITEMS) + "]",
        "distinct JSON keys": "{" + ",".join(f'"{i:x}":0' for i in range(ITEMS)) + "}",
        "one-key objects": "[" + ",".join('{"a":""}' for _ in range(ITEMS)) + "]",
    },
    "yaml": {
        "empty flow items": "items:\n" + "- {}\n" * ITEMS,
        "scalar items": "items:\n" + "- a\n" * ITEMS,
        "one-key items": "items:\n" + "- a: b\n" * ITEMS,
        "flow one-key items": "items:\n" + "- {a: b}\n" * ITEMS,
        "nested items": "items:\n" + "- - - a\n" * ITEMS,
        "distinct YAML keys": "".join(f"k{i:x}: a\n" for i in range(ITEMS)),
        "documents": "---\na\n" * ITEMS,
        "flow collection": "x: [" + ",".join(["{}"] * ITEMS) + "]\n",
    },
}
CASES = [(parser, shape) for parser in PARSERS for shape in SHAPES["json" if parser.startswith("json") else "yaml"]]
# PyYAML with lines reads JSON as YAML too
CASES += [("lines", shape) for shape in SHAPES["json"]]


def _peak(parse: Callable[[str], Any], text: str) -> int:
    gc.collect()
    tracemalloc.start()
    try:
        data = parse(text)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    del data
    return peak


@pytest.mark.parametrize(("parser", "shape"), CASES, ids=[f"{p}-{s}" for p, s in CASES])
def test_the_estimate_is_above_what_the_parse_allocates(parser: str, shape: str) -> None:
    text = {**SHAPES["json"], **SHAPES["yaml"]}[shape]
    assert parsed_size(text, parser) >= _peak(PARSERS[parser], text)


def test_a_text_over_the_budget_is_refused_before_it_is_parsed_naming_the_file() -> None:
    text = "items:\n" + "- a: b\n" * ITEMS
    with pytest.raises(ConfigError) as error:
        parse_documents(text, "dump.yaml", lines=False, budget=ParseBudget(parsed_size(text, "yaml") - 1))
    assert "dump.yaml: would take about" in str(error.value)


def test_the_budget_is_spent_by_each_text_parsed() -> None:
    text = "items:\n" + "- a: b\n" * ITEMS
    budget = ParseBudget(2 * parsed_size(text, "yaml"))
    parse_documents(text, "one.yaml", lines=False, budget=budget)
    parse_documents(text, "two.yaml", lines=False, budget=budget)
    with pytest.raises(ConfigError, match="three.yaml: would take about .* left of the"):
        parse_documents(text, "three.yaml", lines=False, budget=budget)


def test_documents_kept_to_the_end_of_the_run_are_set_apart_from_the_collector() -> None:
    """The CLI keeps its inputs' documents to its end: frozen, no collection traverses their millions of objects
    again. Elsewhere (a test, a library caller) nothing is frozen."""
    text = "items:\n" + "- a: b\n" * 1000
    gc.unfreeze()
    parse_documents(text, "t.yaml", lines=False)
    assert gc.get_freeze_count() == 0
    try:
        documents = parse_documents(text, "t.yaml", lines=False, keep=True)
        assert gc.get_freeze_count() > 1000 and gc.isenabled()
        assert documents[0].data['items'][999] == {'a': 'b'}
    finally:
        gc.unfreeze()

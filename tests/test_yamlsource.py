"""Dumps read without lines (yaml-rs, JSON) give the same documents as files read with lines (PyYAML)."""

from __future__ import annotations

import pytest

from gpu_dra.core.yamlsource import parse_documents

from .test_explain import P5


@pytest.mark.parametrize("text", [
    "kind: List\nitems: []\n---\nhello\n",  # a List, then a scalar document
    "- a: 1\n- b: 2\n",  # one document that is a list
    "---\n- a: 1\n- b: 2\n",  # the same, with its own separator
    "a: 1\n---\nb: 2\n",
    "# comment\n---\na: 1\n---\nb: 2\n",
    "a: |\n  ---\n  x\n",  # a separator inside a block scalar is text
    "[1, 2]\n",
    P5.read_text() + "---\n- x\n",
])
def test_the_fast_path_reads_the_same_documents(text: str) -> None:
    fast = [d.data for d in parse_documents(text, "t.yaml", lines=False)]
    assert fast == [d.data for d in parse_documents(text, "t.yaml")]

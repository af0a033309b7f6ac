"""Dumps read without lines (yaml-rs, JSON) give the same documents as files read with lines (PyYAML), and both paths
refuse hostile or broken text (alias bombs, repeated keys, deep nesting, odd tags) naming the file and line."""

from __future__ import annotations

import subprocess
import sys

import pytest

from gpu_dra.core.findings import ConfigError, Finding
from gpu_dra.core.yamlsource import parse_documents

from .conftest import ROOT
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


BOTH_PATHS = pytest.mark.parametrize("lines", [True, False], ids=["lines", "dump"])


def refused(text: str, lines: bool) -> Finding:
    """The one finding a text is refused with; it names the file and the line."""
    with pytest.raises(ConfigError) as caught:
        parse_documents(text, "t.yaml", lines=lines)
    (finding,) = caught.value.findings
    assert finding.file == "t.yaml" and finding.line is not None, finding
    return finding


def bomb(levels: int) -> str:
    """A "billion laughs": each level a list of nine aliases of the level before, 9**levels strings in all."""
    out = ["laughs:", "  - &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
    out += [f"  - &a{i} [{', '.join([f'*a{i - 1}'] * 9)}]" for i in range(1, levels)]
    return "\n".join(out) + "\n"


@BOTH_PATHS
def test_an_alias_bomb_is_refused_at_the_alias_that_crosses_the_bound(lines: bool) -> None:
    """Eight levels made `preview` use 8.9 GB; six (531,441 strings) are enough to cross the bound."""
    finding = refused("name: research\n" + bomb(6), lines)
    assert finding.line == 7 and "aliases repeat more than 10,000 nodes" in finding.message, finding
    assert "alias *a3 here" in finding.message


@BOTH_PATHS
def test_aliases_within_the_bound_are_read(lines: bool) -> None:
    text = "small: &s {min: 0, desired: 1, max: 2}\ngroups:\n" + "".join("  - scaling: *s\n" for _ in range(50))
    (document,) = parse_documents(text, "t.yaml", lines=lines)
    assert document.data["groups"][49] == {"scaling": {"min": 0, "desired": 1, "max": 2}}
    assert len(parse_documents("name: x\n" + bomb(4), "t.yaml", lines=lines)[0].data["laughs"][3]) == 9


@BOTH_PATHS
@pytest.mark.parametrize("text", ["a: &a [1, *a]\n", "a: &a {b: *a}\n"])
def test_an_alias_inside_its_own_anchor_is_refused(text: str, lines: bool) -> None:
    """PyYAML builds a list that contains itself (endless walks); yaml-rs silently reads the alias as null."""
    assert "alias *a is inside the node &a it names" in refused(text, lines).message


@BOTH_PATHS
@pytest.mark.parametrize("text,line,path,key", [
    ("config:\n  gpu-dra:environment: dev\n  gpu-dra:teams: {}\n  gpu-dra:environment: prod\n", 4,
     "config.gpu-dra:environment", "'gpu-dra:environment'"),
    ('{"kind": "List",\n "kind": "ResourceSliceList"}', 2, "kind", "'kind'"),
    ("a:\n  1: x\n  0x1: y\n", 3, "a[1]", "1"),  # the same key as YAML reads it, however written
    ("- name: a\n  'name': b\n", 2, "[0].name", "'name'"),
])
def test_a_repeated_key_is_refused_naming_both_lines(text: str, line: int, path: str, key: str, lines: bool) -> None:
    """The last one would win silently: a second `gpu-dra:environment: prod` turned dev into prod."""
    finding = refused(text, lines)
    assert (finding.line, finding.path) == (line, path), finding
    assert finding.message.startswith(f"repeats the key {key} of line "), finding


def test_merge_keys_are_no_repeats() -> None:
    """`<<` merges a mapping in and the keys written next to it override its keys: that is no repeated key."""
    (document,) = parse_documents("base: &b {x: 1, y: 1}\nc:\n  <<: *b\n  y: 2\n", "t.yaml")
    assert document.data["c"] == {"x": 1, "y": 2}


@BOTH_PATHS
@pytest.mark.parametrize("text", [
    "a: " + "[" * 300 + "]" * 300 + "\n",  # within libyaml's 1,000 levels, beyond gpu-dra's 100 (and yaml-rs's 256)
    "- " * 150 + "x\n",
    "".join(" " * i + f"k{i}:\n" for i in range(150)) + " " * 150 + "x\n",
])
def test_deep_nesting_is_refused_at_its_line(text: str, lines: bool) -> None:
    """Nested about 1,000 deep, a team file made the loader fail with RecursionError (exit 3)."""
    assert "nests more than 100 levels deep here" in refused(text, lines).message


@BOTH_PATHS
def test_block_nesting_that_overflows_yaml_rs_is_read_by_the_checked_path(lines: bool) -> None:
    """yaml-rs recurses per level of block nesting: 20,000 levels in 40 kB crashed the process (SIGSEGV), so the
    check runs in a child process."""
    script = ("from gpu_dra.core.findings import ConfigError\n"
              "from gpu_dra.core.yamlsource import parse_documents\n"
              "try:\n"
              f"    parse_documents('- ' * 20_000 + 'x', 't.yaml', lines={lines})\n"
              "except ConfigError as error:\n"
              "    print(error)\n")
    child = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert child.returncode == 0, child
    assert child.stdout.startswith("t.yaml:1: not valid YAML: exceeded maximum nesting depth"), child


@BOTH_PATHS
@pytest.mark.parametrize("text,message", [
    ("a: !!int abc\n", "'abc' is not a valid !!int; drop the tag or fix the value"),
    ("a: !!float x\n", "'x' is not a valid !!float"),
    ("a: !!bool maybe\n", "'maybe' is not a valid !!bool"),
    ("a: !!binary aGVsbG8=\n", "!!binary values are not read"),
    ("a: !!set {x: null}\n", "!!set values are not read"),
    ("? [a, b]\n: c\n", "a key is a list or mapping; keys are text"),
    ('{"a": "\\ud800"}', "found invalid Unicode character escape code"),
])
def test_odd_values_are_refused_at_their_line(text: str, message: str, lines: bool) -> None:
    """`!!int abc` made Python's int() fail (exit 3); `!!binary` and `!!set` gave bytes and sets nothing reads."""
    assert message in refused(text, lines).message


@BOTH_PATHS
@pytest.mark.parametrize("text,line", [
    ("{[a: {}]}", 1),  # the fuzzer's: yaml-rs made the key a tuple holding a dict (TypeError, exit 3)
    ("items:\n- {a: 1, [b]}\n", 2),  # the others yaml-rs read as tuple and frozenset keys
    ("x: {[a]:b}\n", 1),
    ("{{a: b}}", 1),
    ("{ # c\n  [a]}", 2),
])
def test_a_flow_collection_as_a_key_is_refused_at_its_line(text: str, line: int, lines: bool) -> None:
    finding = refused(text, lines)
    assert (finding.line, finding.message) == (line, "a key is a list or mapping; keys are text")


@BOTH_PATHS
@pytest.mark.parametrize("text", ["a: 1" + "0" * 5000, "a: 0x" + "f" * 5000, "{\"a\": " + "9" * 5000 + "}"])
def test_a_number_of_thousands_of_digits_is_refused_at_its_line(text: str, lines: bool) -> None:
    """Read, it could not be printed (Python prints no int of more than 4,300 digits; 0x plus 5,000 digits has
    6,000), and yaml-rs takes seconds per million digits."""
    finding = refused(text, lines)
    assert finding.line == 1 and "characters, which nothing gpu-dra reads holds" in finding.message, finding


def test_json_in_a_dump_is_no_collection_key() -> None:
    """A kubectl annotation holds JSON (`[{...},{...}]`, `}}`), which looks like flow keys: the dump is read."""
    text = 'metadata:\n  annotations:\n    applied: |\n      {"a":[{"b":{}},{"c":[1]}]}\n'
    assert parse_documents(text, "t.yaml", lines=False)[0].data == parse_documents(text, "t.yaml")[0].data


@BOTH_PATHS
def test_timestamps_stay_the_text_written(lines: bool) -> None:
    """As yaml-rs and the Pulumi engine leave them; `2024-02-30` made PyYAML's date() fail (exit 3)."""
    (document,) = parse_documents("a: 2024-02-30\nb: 2024-01-01T10:00:00Z\nc: !!timestamp x\n", "t.yaml", lines=lines)
    assert document.data == {"a": "2024-02-30", "b": "2024-01-01T10:00:00Z", "c": "x"}


@BOTH_PATHS
def test_undecodable_bytes_read_from_stdin_are_refused(lines: bool) -> None:
    """stdin decodes with `surrogateescape`: a byte that is not UTF-8 arrives as a lone surrogate, which made the C
    parser's encoder fail (exit 3)."""
    text = b"kind: DeviceClass\nmetadata: {name: a\xff}\n".decode("utf-8", "surrogateescape")
    finding = refused(text, lines)
    assert (finding.line, finding.message) == (2, "is not UTF-8 text; save it as UTF-8")


def test_yaml_errors_say_what_they_were_reading() -> None:
    assert refused("a: &x 1\nb: &x 2\n", True).message == (
        "not valid YAML: second occurrence (found duplicate anchor; first occurrence at line 1)")

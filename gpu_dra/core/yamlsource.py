"""YAML and JSON text as data, with the line of every key and list item where findings need it.

One parse per text. Files findings point into (stack and team files, manifests for lint) go through libyaml by
PyYAML's C loader (`CSafeLoader`): the composed nodes carry the marks for lines and are constructed into data in
the same pass. Dumps nobody points into (`kubectl get resourceslices -o yaml` of a whole fleet) need no line
table: JSON goes to the C JSON parser, YAML to yaml-rs (Rust, YAML 1.2, which is what kubectl writes), about
8 times faster than PyYAML's C loader, whose constructor is Python. The garbage collector is paused while a text is
parsed: the parse allocates millions of objects that all stay alive, and collections during it only cost time.
"""

from __future__ import annotations

import gc
import json
import re
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import yaml
import yaml_rs

from gpu_dra.core.findings import ERROR, ConfigError, Finding

Loc = tuple[str | int, ...]


class Located:
    """A parsed YAML document plus the line of every key and list item, for messages and SARIF."""

    def __init__(self, data: Any, lines: dict[Loc, int]):
        self.data = data
        self.lines = lines

    def line(self, loc: Loc) -> int | None:
        while loc:
            if loc in self.lines:
                return self.lines[loc]
            loc = loc[:-1]
        return None


def format_path(loc: Loc) -> str:
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        elif "." in part or "/" in part:
            out += f"[{part!r}]" if out else part
        else:
            out += f".{part}" if out else part
    return out


@contextmanager
def _collector_paused() -> Iterator[None]:
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _collect_lines(node: yaml.Node, loc: Loc, lines: dict[Loc, int]) -> None:
    if isinstance(node, yaml.MappingNode):
        for key_node, value_node in node.value:
            key = (key_node.value,)
            lines[loc + key] = key_node.start_mark.line + 1
            _collect_lines(value_node, loc + key, lines)
    elif isinstance(node, yaml.SequenceNode):
        for index, item in enumerate(node.value):
            lines[loc + (index,)] = item.start_mark.line + 1
            _collect_lines(item, loc + (index,), lines)


def _unreadable(display: str, message: str, line: int | None = None) -> Finding:
    return Finding("yaml", ERROR, message, file=display, line=line)


def _yaml_error(error: yaml.YAMLError, display: str) -> ConfigError:
    mark = getattr(error, "problem_mark", None)
    line = mark.line + 1 if mark else None
    problem = getattr(error, "problem", None) or str(error)
    return ConfigError([_unreadable(display, f"not valid YAML: {problem}", line)])


def _looks_like_json(text: str) -> bool:
    return text.lstrip()[:1] in ("{", "[")


def _dump_documents(text: str, display: str) -> list[Located]:
    if _looks_like_json(text):
        try:
            return [Located(json.loads(text), {})]
        except ValueError:
            pass  # JSON is YAML: let the YAML parser say where it breaks
    try:
        data = yaml_rs.loads(text, parse_datetime=False)
    except yaml_rs.YAMLDecodeError as error:
        _with_lines(text, display)  # PyYAML's message names the line; raises where it also fails
        first = str(error).strip().splitlines()[0] if str(error).strip() else "cannot be parsed"
        raise ConfigError([_unreadable(display, f"not valid YAML: {first}")]) from None
    # yaml-rs returns one document as itself and several as a list of them: only a separator tells which.
    documents = data if isinstance(data, list) and _SEPARATOR.search(text, _first_content(text)) else [data]
    return [Located(document, {}) for document in documents]


# A document separator at the start of a line (inside a block scalar it would be indented).
_SEPARATOR = re.compile(r"^---(?:[ \t]|$)", re.MULTILINE)
_LEADING = re.compile(r"\A(?:[ \t]*(?:#[^\n]*)?\n|%[^\n]*\n)*---(?:[ \t][^\n]*)?(?:\n|\Z)")


def _first_content(text: str) -> int:
    """Where the first document's content starts: after comments, directives and its own `---`, if any."""
    leading = _LEADING.match(text)
    return leading.end() if leading else 0


def parse_documents(text: str, display: str, *, lines: bool = True) -> list[Located]:
    """Every document of a multi-document YAML (or JSON) text; a syntax error becomes a ConfigError.

    `lines=False` is for dumps nobody points into (no line table; JSON by the JSON parser, YAML by yaml-rs).
    """
    with _collector_paused():
        return _with_lines(text, display) if lines else _dump_documents(text, display)


def _with_lines(text: str, display: str) -> list[Located]:
    loader = yaml.CSafeLoader(text)
    documents = []
    try:
        while loader.check_node():
            node = loader.get_node()
            table: dict[Loc, int] = {}
            if node is not None:
                _collect_lines(node, (), table)
            documents.append(Located(loader.construct_document(node), table))
    except yaml.YAMLError as error:
        raise _yaml_error(error, display) from None
    finally:
        loader.dispose()
    return documents


def read_yaml(path: Path, display: str) -> Located:
    """Parse one YAML document; unreadable or malformed files become a ConfigError naming the file and line."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError([_unreadable(display, f"cannot read: {exc.strerror}")]) from None
    except UnicodeDecodeError:
        raise ConfigError([_unreadable(display, "is not UTF-8 text; save it as UTF-8")]) from None
    documents = parse_documents(text, display)
    if len(documents) > 1:
        raise ConfigError([_unreadable(display, "holds several YAML documents (---); keep one")])
    return documents[0] if documents else Located(None, {})

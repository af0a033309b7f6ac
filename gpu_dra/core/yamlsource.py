"""YAML and JSON text as data, with the line of every key and list item where findings need it.

One parse per text. Files findings point into (stack and team files, manifests for lint) go through libyaml by
PyYAML's C loader (`CSafeLoader`): the composed nodes carry the marks for lines and are constructed into data in
the same pass. Dumps nobody points into (`kubectl get resourceslices -o yaml` of a whole fleet) need no line
table: JSON goes to the C JSON parser, YAML to yaml-rs (Rust, YAML 1.2, which is what kubectl writes), about
8 times faster than PyYAML's C loader, whose constructor is Python. The garbage collector is paused while a text is
parsed: the parse allocates millions of objects that all stay alive, and collections during it only cost time.

Team files are untrusted input to the PR gate, so a text is refused (a ConfigError naming the file, line and key)
when it repeats a mapping key (the last one would win silently), has a key that is a list or mapping (read with
lines or without), nests deeper than MAX_DEPTH, or has aliases that repeat more than MAX_ALIAS_NODES nodes: a few
lines of nested aliases otherwise stand for billions of nodes.
"""

from __future__ import annotations

import gc
import json
import re
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TextIO

import yaml
import yaml_rs

from gpu_dra.core.findings import ERROR, ConfigError, Finding

Loc = tuple[Any, ...]

# Kubernetes objects and gpu-dra's files nest a few dozen levels at most; the deepest place any of it is read
# recursively (Pulumi serializing a class's opaque parameters) fails at about 300.
MAX_DEPTH = 100
# Nodes that aliases may repeat in one document: anchors for a few shared blocks fit many times over.
MAX_ALIAS_NODES = 10_000


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


# Keys shown as they are in a path (a Pulumi config key's namespace:name too); any other is quoted in brackets, so
# that a key holding a dot, a space, a bracket or a newline reads as one key (labels['example.com/team'],
# labels['team name']). A first key may hold dots and slashes.
_PLAIN_KEY = re.compile(r"[A-Za-z0-9_-]+(:[A-Za-z0-9_-]+)?")
_PLAIN_FIRST_KEY = re.compile(r"[A-Za-z0-9_./-]+(:[A-Za-z0-9_-]+)?")


def format_path(loc: Loc) -> str:
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        elif not isinstance(part, str):  # a YAML key that is not text: null, 1.5
            out += f"[{part!r}]"
        elif out:
            out += f".{part}" if _PLAIN_KEY.fullmatch(part) else f"[{part!r}]"
        else:
            out += part if _PLAIN_FIRST_KEY.fullmatch(part) else f"[{part!r}]"
    return out


@contextmanager
def collector_paused(keep: bool = False) -> Iterator[None]:
    """No collection while a text is parsed (or, for the CLI, a fleet's typed objects are built from it: each young
    collection traverses what was made since the last, and at 10,000 nodes those took 0.4 s). `keep`: what was made
    lives to the end of the run (the CLI's inputs) and holds no cycles, so it is then set apart (gc.freeze) where no
    collection traverses it again: the first collection after a fleet's parse took 0.4 s at 10,000 nodes, and each
    full one as long."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if keep:
            gc.freeze()
        if enabled:
            gc.enable()


def _unreadable(display: str, message: str, line: int | None = None) -> Finding:
    return Finding("yaml", ERROR, message, file=display, line=line)


def _refused(display: str, line: int, loc: Loc, message: str) -> ConfigError:
    return ConfigError([Finding("yaml", ERROR, message, file=display, line=line, path=format_path(loc))])


# ------------------------------------------------------------------------------------------- PyYAML, with lines

_TAG = "tag:yaml.org,2002:"


class _Loader(yaml.CSafeLoader):
    """PyYAML's C loader; timestamps stay the text written, as yaml-rs and the Pulumi engine leave them."""


def _as_text(loader: _Loader, node: yaml.ScalarNode) -> Any:
    return loader.construct_scalar(node)


_Loader.add_constructor(_TAG + "timestamp", _as_text)
# Types JSON has not: nothing gpu-dra reads takes bytes, sets or pairs.
_NOT_READ = {_TAG + name for name in ("binary", "set", "omap", "pairs")}
# Numbers and booleans, constructed while their path is known: PyYAML's constructor fails with a Python error on an
# explicit tag's malformed value (`!!int abc`).
_CONVERTED = {_TAG + name for name in ("int", "float", "bool")}
# Numbers gpu-dra reads fit an int64 (19 digits). One of thousands of digits is refused: Python prints no int of more
# than 4,300 digits (a message or report echoing it failed), and yaml-rs takes seconds per million digits.
MAX_NUMBER_CHARACTERS = 2000


def _value(loader: _Loader, node: yaml.Node, loc: Loc, display: str) -> None:
    """Refuse a node of a type gpu-dra does not read, or a number or boolean its constructor cannot convert (the
    node is constructed now, with its path at hand; construction later reuses it)."""
    tag = node.tag.replace(_TAG, "!!")
    if node.tag in _NOT_READ:
        raise _refused(display, node.start_mark.line + 1, loc, f"{tag} values are not read: write text, numbers, "
                                                                "true/false, lists and mappings")
    if node.tag == _TAG + "int" and len(node.value) > MAX_NUMBER_CHARACTERS:
        raise _refused(display, node.start_mark.line + 1, loc, f"a number of {len(node.value):,} characters, which "
                                                                "nothing gpu-dra reads holds; quote it if it is text")
    if node.tag in _CONVERTED:
        try:
            loader.construct_object(node)
        except (ValueError, IndexError, KeyError):
            raise _refused(display, node.start_mark.line + 1, loc, f"{node.value!r} is not a valid {tag}; drop the "
                                                                    "tag or fix the value") from None


def _check_aliases(text: str, display: str) -> None:
    """Refuse an alias inside the node it names (a cycle), and aliases that repeat more than MAX_ALIAS_NODES nodes
    in a document, at the alias that crosses the bound; counted on the parser's events, before any node is built."""
    sizes: dict[str, int] = {}  # anchor: nodes under it, once it is closed
    open_: list[list[Any]] = []  # [anchor, nodes so far] of each collection not closed yet
    repeated = 0

    def closed(anchor: str | None, size: int) -> None:
        if anchor is not None:
            sizes[anchor] = size
        if open_:
            open_[-1][1] += size

    for event in yaml.parse(text, Loader=yaml.CSafeLoader):
        anchor = getattr(event, "anchor", None)
        if isinstance(event, yaml.DocumentStartEvent):
            sizes, repeated = {}, 0
        elif isinstance(event, yaml.AliasEvent):
            line = event.start_mark.line + 1 if event.start_mark else None
            if any(name == anchor for name, _ in open_):
                raise ConfigError([_unreadable(display, f"alias *{anchor} is inside the node &{anchor} it names, "
                                                        "which would make it endless", line)])
            size = sizes.get(str(anchor), 1)
            repeated += size
            if repeated > MAX_ALIAS_NODES:
                raise ConfigError([_unreadable(display, f"aliases repeat more than {MAX_ALIAS_NODES:,} nodes in this "
                                                        f"document (alias *{anchor} here); write the values out "
                                                        "instead", line)])
            closed(None, size)
        elif anchor is not None and (anchor in sizes or any(name == anchor for name, _ in open_)):
            return  # a second anchor of that name: the composer reports it
        elif isinstance(event, yaml.CollectionStartEvent):
            open_.append([anchor, 1])
        elif isinstance(event, yaml.ScalarEvent):
            closed(anchor, 1)
        elif isinstance(event, yaml.CollectionEndEvent):
            closed(*open_.pop())


def _collect_lines(loader: _Loader, node: yaml.Node, loc: Loc, lines: dict[Loc, int], display: str) -> None:
    """Record the line of every key and item; refuse a repeated key, a key that is a list or mapping, and nesting
    deeper than MAX_DEPTH."""
    if len(loc) > MAX_DEPTH:
        under = next((i for i, part in enumerate(loc) if not isinstance(part, str)), len(loc))
        raise _refused(display, node.start_mark.line + 1, loc[:min(under, 3)],  # the keys it is under, in short
                       f"nests more than {MAX_DEPTH} levels deep here; gpu-dra reads nothing that deep")
    _value(loader, node, loc, display)
    if isinstance(node, yaml.MappingNode):
        first: dict[Any, int] = {}
        for key_node, value_node in node.value:
            line = key_node.start_mark.line + 1
            if not isinstance(key_node, yaml.ScalarNode):
                raise _refused(display, line, loc, "a key is a list or mapping; keys are text")
            _value(loader, key_node, loc, display)
            # `<<` merges another mapping in; its own value stays a node until construction
            plain = key_node.tag in (_TAG + "str", _TAG + "merge")
            key = key_node.value if plain else loader.construct_object(key_node)
            if key in first:
                raise _refused(display, line, loc + (key,), f"repeats the key {key!r} of line {first[key]}, "
                                                            "and the last one would win; keep one")
            first[key] = lines[loc + (key,)] = line
            _collect_lines(loader, value_node, loc + (key,), lines, display)
    elif isinstance(node, yaml.SequenceNode):
        for index, item in enumerate(node.value):
            lines[loc + (index,)] = item.start_mark.line + 1
            _collect_lines(loader, item, loc + (index,), lines, display)


def _with_lines(text: str, display: str, budget: ParseBudget) -> list[Located]:
    budget.check(text, "lines", display)
    loader = _Loader(text)
    documents = []
    try:
        if "*" in text:  # only a text with an alias can repeat nodes
            _check_aliases(text, display)
        while loader.check_node():
            node = loader.get_node()
            table: dict[Loc, int] = {}
            if node is not None:
                _collect_lines(loader, node, (), table, display)
            documents.append(Located(loader.construct_document(node), table))
    except yaml.YAMLError as error:
        raise _yaml_error(error, display) from None
    finally:
        loader.dispose()
    return documents


def _yaml_error(error: yaml.YAMLError, display: str) -> ConfigError:
    mark = getattr(error, "problem_mark", None)
    line = mark.line + 1 if mark else None
    problem = getattr(error, "problem", None) or str(error)
    context, context_mark = getattr(error, "context", None), getattr(error, "context_mark", None)
    if context and context_mark:  # "while scanning a quoted scalar", "found duplicate anchor; first occurrence"
        problem += f" ({context} at line {context_mark.line + 1})"
    return ConfigError([_unreadable(display, f"not valid YAML: {problem}", line)])


# ------------------------------------------------------------------------------------------- dumps, no lines

# yaml-rs reads what kubectl writes, fast. What kubectl never writes it reads differently from PyYAML's path or
# without bound: aliases (expanded without the cycle check and count), tags (`!!set` as a set), complex keys (as
# tuples) and deep block nesting (it recurses per level and overflows the stack at about 10,000). A text that has
# or seems to have any of these, or a number too long to read (MAX_NUMBER_CHARACTERS), is read by PyYAML's path
# instead, whose parser is not recursive. A flow mapping's key that is a collection (`{[a], b: c}`, `{a: 1, {b: c}}`)
# cannot be told from a flow sequence's items by a pattern, and JSON in annotations (`[{...},{...}]`) looks like one:
# yaml-rs reads such a text, and its data is searched for a key it made a tuple or frozenset of (_collection_key).
_ODD_CHARACTERS = "*!?]}\r\x85\u2028\u2029"  # without any of them (a plain dump), _ODD cannot match
_ODD = re.compile(r"[*!](?<![^\s\[{,:?\-\ufeff][*!])"  # an alias or a tag: `*` or `!` starting a token
                  r"|\?(?<![^\s\[{,\-\ufeff]\?)(?!\S)"  # an explicit key
                  r"|[\]}][ \t]*:(?!\S)"  # a flow collection as a key
                  rf"|[\r\x85\u2028\u2029][ \t?:-]{{{MAX_DEPTH}}}")  # a deep line after another line break
# A block collection is indented more than its parent, or written after `- `, `? ` or `: ` on its parent's line:
# nesting deeper than about twice MAX_DEPTH needs a line that starts with MAX_DEPTH of these characters.
_DEEP_LINE = re.compile(rf"[ \t?:-]{{{MAX_DEPTH}}}")
_DEEP_LINE_AFTER = re.compile(rf"\n[ \t?:-]{{{MAX_DEPTH}}}")


# Where a key may be a flow collection: one ends and is followed by what follows a key (`:`, or `,` or `}` when its
# value is null), maybe after a comment.
_MAYBE_COLLECTION_KEY = re.compile(r"[\]}]\s*+[:,}#]")


def _collection_key(data: Any) -> bool:
    """Whether a mapping in `data` has a key that yaml-rs made of a collection (a tuple or frozenset)."""
    pending = [data]
    while pending:
        value = pending.pop()
        if type(value) is dict:
            if any(type(key) is tuple or type(key) is frozenset for key in value):
                return True
            pending.extend(value.values())
        elif type(value) is list:
            pending.extend(value)
    return False


# Every run of letters and digits longer than MAX_NUMBER_CHARACTERS holds a whole block of _RUN of them at a multiple
# of _RUN: a few thousand slices checked at C speed find each possible long number.
_RUN = MAX_NUMBER_CHARACTERS // 2 + 1


def _long_run(text: str) -> bool:
    return any(text[start:start + _RUN].isalnum() for start in range(0, len(text), _RUN))


def _kubectl_like(text: str) -> bool:
    if _DEEP_LINE.match(text) or _DEEP_LINE_AFTER.search(text) or _long_run(text):
        return False
    return not (any(c in text for c in _ODD_CHARACTERS) and _ODD.search(text))


_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
_YAML_RS_LINE = re.compile(r"\bat line (\d+)")


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    mapping = dict(pairs)
    if len(mapping) != len(pairs):
        raise ValueError("a repeated key")
    return mapping


def _looks_like_json(text: str) -> bool:
    return text.lstrip()[:1] in ("{", "[")


def _json_document(text: str) -> Any:
    """The JSON value of `text`, or None when the YAML parsers should read it: it is not JSON, repeats a key, nests
    too deep for the JSON parser, or escapes a surrogate (JSON lets one stand alone; YAML parsers refuse it)."""
    try:
        data = json.loads(text, object_pairs_hook=_unique_keys)
    except (ValueError, RecursionError):
        return None
    return None if _SURROGATE_ESCAPE.search(text) else data


def _dump_documents(text: str, display: str, budget: ParseBudget) -> list[Located]:
    if _looks_like_json(text):
        budget.check(text, "json-unique", display)
        data = _json_document(text)
        if data is not None:
            return [Located(data, {})]
    if not _kubectl_like(text):
        return _with_lines(text, display, budget)
    budget.check(text, "yaml", display)
    try:
        data = yaml_rs.loads(text, parse_datetime=False)
    except yaml_rs.YAMLDecodeError as error:
        _with_lines(text, display, budget)  # PyYAML's message names the line; raises where it also fails
        message = str(error).strip()
        first = message.splitlines()[0] if message else "cannot be parsed"
        line = _YAML_RS_LINE.search(first)
        raise ConfigError([_unreadable(display, f"not valid YAML: {first}", int(line[1]) if line else None)]) from None
    except TypeError:  # `{[a: {}]}`: a collection key holding a mapping, unhashable as a tuple
        return _with_lines(text, display, budget)  # which refuses a collection key at its line
    if ("]" in text or "}" in text) and _MAYBE_COLLECTION_KEY.search(text) and _collection_key(data):
        del data
        return _with_lines(text, display, budget)
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


# ------------------------------------------------------------------------------------------- entry points


def _check_encodable(text: str, display: str) -> None:
    """Text read with `surrogateescape` (stdin) carries undecodable bytes as lone surrogates, which no parser
    takes."""
    if not text.isascii():
        try:
            text.encode("utf-8")
        except UnicodeEncodeError as error:
            line = text.count("\n", 0, error.start) + 1
            raise ConfigError([_unreadable(display, "is not UTF-8 text; save it as UTF-8", line)]) from None


def parse_documents(text: str, display: str, *, lines: bool = True, budget: ParseBudget | None = None,
                    keep: bool = False) -> list[Located]:
    """Every document of a multi-document YAML (or JSON) text; a syntax error becomes a ConfigError.

    `lines=False` is for dumps nobody points into (no line table; JSON by the JSON parser, YAML by yaml-rs).
    `budget`: what the run's inputs may take once parsed, spent by this one (default: PARSED_MEMORY for this text).
    `keep`: the documents are kept to the end of the process (collector_paused).
    """
    budget = budget or ParseBudget()
    _check_encodable(text, display)
    with collector_paused(keep):
        documents = _with_lines(text, display, budget) if lines else _dump_documents(text, display, budget)
    budget.spend()
    return documents


# ------------------------------------------------------------------------------------------- memory bound

# What the inputs of one run may take in memory once parsed, estimated from their text before each is parsed: a
# 5,000-node fleet's ResourceSlices as JSON (bench/generate.py: 90 MB, estimated at 495 MiB) or as kubectl's YAML (36
# MB, 441 MiB) fit, and with the process's own ~150 MB a run stays under 1 GB. The text's size alone does not bound
# it: 5 MB of `- a: b` lines take 290 MB through yaml-rs and 1.5 GB through PyYAML with lines.
PARSED_MEMORY = 768 << 20
# A stack or team file: a team at its 100 claim templates (~25 kB) is estimated at ~1 MiB with lines.
PROJECT_FILE_MEMORY = 64 << 20

_TOKENS = ("\n", ":", "- ", "-\n", "-\t", ",", "{", "[", '"', "\n---")
# Bytes per token, per parser, measured on CPython 3.11 (the parse's peak, `ru_maxrss`) for the shapes that cost the
# most per character: millions of `{}`, `[[[0]]]`, `""`, `"k": ""` with distinct keys, `- a: b`, `- - - a`, `- {}`,
# `---` documents and flow collections. Each value is a Python object (a dict 64 bytes and more, a str 50 and more,
# a list slot 8) and its mapping entry; with lines (PyYAML's composer) each is also a node with two marks, several
# times more; JSON read with repeated keys refused (`json-unique`, an object_pairs_hook) holds each mapping's pairs
# once more while it is built. The estimate is above the real size for each of those shapes (1.05 to 7 times it),
# and for the generated fleet's ResourceSlices (bench/generate.py, 1,000 nodes): 1.04 times it for kubectl's YAML
# through yaml-rs, 2 times for JSON (whose repeated keys the parser's memo makes cheap), 1.3 and 1.8 with lines.
#                         newline   :   `- ` `-\n` `-\t`  ,    {    [   "  document
_WEIGHTS = {"json": (0, 64, 0, 0, 0, 32, 88, 88, 25, 0),
            "json-unique": (0, 160, 0, 0, 0, 32, 88, 88, 25, 0),
            "yaml": (40, 240, 120, 120, 120, 150, 150, 150, 10, 300),
            "lines": (0, 1400, 800, 800, 800, 560, 850, 850, 0, 200)}


def parsed_size(text: str | bytes, parser: str) -> int:
    """About the most memory parsing `text` takes with `parser` ("json" for json.loads, "json-unique" for gpu-dra's
    JSON that refuses repeated keys, "yaml" for yaml-rs, "lines" for PyYAML with its line table), counted on the
    text in a few passes of str.count."""
    count: Any = text.count  # str.count or bytes.count, given the tokens of the same type
    tokens = [token.encode() for token in _TOKENS] if isinstance(text, bytes | bytearray) else _TOKENS
    return len(text) + sum(weight * int(count(token))
                           for token, weight in zip(tokens, _WEIGHTS[parser], strict=True) if weight)


class ParseBudget:
    """What the texts of one run may take in memory once parsed (`limit` bytes), spent as each text is parsed; a
    text whose estimate (parsed_size) exceeds what is left is refused before it is parsed."""

    def __init__(self, limit: int = PARSED_MEMORY, raise_hint: str = "", given: str = "the input of one run"):
        self.limit, self.left, self.raise_hint, self.given = limit, limit, raise_hint, given
        self.pending = 0

    def check(self, text: str, parser: str, display: str) -> None:
        self.pending = parsed_size(text, parser)
        if self.pending > self.left:
            room = (f"the {self.left >> 20:,} MiB left of the {self.limit >> 20:,} MiB" if self.left < self.limit
                    else f"the {self.limit >> 20:,} MiB")
            raise ConfigError([_unreadable(display, f"would take about {self.pending >> 20:,} MiB of memory once "
                                                    f"parsed (estimated from its text), more than {room} gpu-dra "
                                                    f"gives {self.given}; give a smaller file"
                                                    f"{self.raise_hint}")])

    def spend(self) -> None:
        self.left -= self.pending
        self.pending = 0


# Inputs longer than this are refused, not read whole: a 5,000-node fleet's `kubectl get resourceslices -o json` is
# about 90 MB, and an endless input (/dev/zero, `yes |`, a team file linked to a device) would fill the memory.
MAX_INPUT_CHARACTERS = 256 << 20
# A project file (stack, team, Pulumi.yaml) is a few kB; a team at its 100 claim templates ~100 kB. A team's pull
# request could otherwise make `gpu-dra check` parse hundreds of MB with lines (gigabytes in memory).
MAX_PROJECT_FILE_CHARACTERS = 4 << 20
_READ_CHARACTERS = 1 << 20


def read_text(stream: TextIO, display: str, limit: int = MAX_INPUT_CHARACTERS) -> str:
    """All the text of `stream`; a ConfigError naming `display` past `limit` characters."""
    pieces: list[str] = []
    size = 0
    while piece := stream.read(min(_READ_CHARACTERS, limit + 1)):
        size += len(piece)
        if size > limit:
            raise ConfigError([_unreadable(display, f"is longer than {limit >> 20} Mi characters, more than any "
                                                    "file of its kind gpu-dra reads (an endless stream or device?); "
                                                    "give the file itself, or split it")])
        pieces.append(piece)
    return "".join(pieces)


def read_yaml(path: Path, display: str) -> Located:
    """Parse one YAML document; unreadable or malformed files become a ConfigError naming the file and line."""
    try:
        with path.open(encoding="utf-8") as stream:
            text = read_text(stream, display, MAX_PROJECT_FILE_CHARACTERS)
    except OSError as exc:
        raise ConfigError([_unreadable(display, f"cannot read: {exc.strerror}")]) from None
    except UnicodeDecodeError:
        raise ConfigError([_unreadable(display, "is not UTF-8 text; save it as UTF-8")]) from None
    documents = parse_documents(text, display, budget=ParseBudget(PROJECT_FILE_MEMORY, given="a stack or team file"))
    if len(documents) > 1:
        raise ConfigError([_unreadable(display, "holds several YAML documents (---); keep one")])
    return documents[0] if documents else Located(None, {})

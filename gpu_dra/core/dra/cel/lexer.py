"""A small CEL tokenizer: enough to find what the C++ runtime does not expose (regex literals, attribute
lookups) and to rewrite `device.attributes[...]` lookups so that an unknown domain yields an empty map.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

_TOKEN = re.compile(r"""
    (?P<space>\s+|//[^\n]*)
  | (?P<string>[rR]?[bB]?(?:'''(?:\\.|[^\\])*?'''|\"\"\"(?:\\.|[^\\])*?\"\"\"|'(?:\\.|[^'\\\n])*'|"(?:\\.|[^"\\\n])*"))
  | (?P<number>\d+(?:\.\d+)?(?:[eE][+-]?\d+)?[uU]?|0[xX][0-9a-fA-F]+)
  | (?P<ident>[A-Za-z_][A-Za-z0-9_]*)
  | (?P<op>\.\?|\[\?|==|!=|<=|>=|&&|\|\||[-+*/%!<>?:.,\[\](){}])
""", re.VERBOSE)


@dataclass(frozen=True)
class Token:
    kind: str  # string, number, ident, op
    text: str
    start: int
    end: int

    @property
    def string_value(self) -> str | None:
        """The value of a string literal token, or None when it is not a plain string."""
        if self.kind != "string":
            return None
        text = self.text
        raw = text[:1] in "rR"
        body = text[1:] if raw else text
        if body[:1] in "bB":
            return None
        try:
            return body[1:-1] if raw and len(body) >= 2 and body[0] == body[-1] else str(ast.literal_eval(body))
        except (ValueError, SyntaxError):
            return None


def tokenize(expression: str) -> list[Token] | None:
    """Tokens of `expression`, or None when it does not lex (the compiler reports the error)."""
    tokens = []
    position = 0
    while position < len(expression):
        match = _TOKEN.match(expression, position)
        if not match:
            return None
        kind = match.lastgroup or ""
        if kind != "space":
            tokens.append(Token(kind, match.group(), match.start(), match.end()))
        position = match.end()
    return tokens


@dataclass(frozen=True)
class Lookup:
    """`device.<map>[<key>]` (map: attributes or capacity), with the attribute selected after it if any."""

    map: str
    domain: str | None  # None when the key is not a string literal
    name: str | None
    open_bracket: Token
    close_bracket: Token
    optional: bool


def _matching(tokens: list[Token], index: int) -> int | None:
    depth = 0
    pairs = {"[": "]", "[?": "]", "(": ")", "{": "}"}
    for position in range(index, len(tokens)):
        text = tokens[position].text
        if tokens[position].kind == "op" and text in pairs:
            depth += 1
        elif tokens[position].kind == "op" and text in ("]", ")", "}"):
            depth -= 1
            if depth == 0:
                return position
    return None


def device_lookups(tokens: list[Token]) -> list[Lookup]:
    lookups = []
    for i in range(len(tokens) - 3):
        head = (tokens[i].text, tokens[i + 1].text, tokens[i + 2].text, tokens[i + 3].text)
        if head[:2] == ("device", ".") and head[2] in ("attributes", "capacity") and head[3] in ("[", "[?"):
            if i > 0 and tokens[i - 1].text in (".", ".?"):
                continue  # `x.device.attributes`: not the variable
            close = _matching(tokens, i + 3)
            if close is None:
                continue
            inner = tokens[i + 4:close]
            domain = inner[0].string_value if len(inner) == 1 else None
            name = None
            if close + 2 < len(tokens) and tokens[close + 1].text in (".", ".?") and tokens[close + 2].kind == "ident":
                name = tokens[close + 2].text
            elif (close + 3 < len(tokens) and tokens[close + 1].text in ("[", "[?")
                  and tokens[close + 3].text == "]"):
                name = tokens[close + 2].string_value
            lookups.append(Lookup(tokens[i + 2].text, domain, name, tokens[i + 3], tokens[close],
                                  tokens[i + 3].text == "[?"))
    return lookups


def with_empty_domain_default(expression: str, tokens: list[Token]) -> str:
    """Rewrite `device.attributes[k]` to `device.attributes[?k].orValue({})` (likewise capacity): an unknown
    domain then reads as an empty map, as in Kubernetes, while `k in device.attributes` stays false."""
    edits: list[tuple[int, int, str]] = []
    for lookup in device_lookups(tokens):
        if lookup.optional:
            continue
        edits.append((lookup.open_bracket.start, lookup.open_bracket.end, "[?"))
        edits.append((lookup.close_bracket.end, lookup.close_bracket.end, ".orValue({})"))
    for start, end, text in sorted(edits, reverse=True):
        expression = expression[:start] + text + expression[end:]
    return expression


def regex_literals(tokens: list[Token]) -> list[str]:
    """Pattern literals passed to matches(), find() and findAll(), which Kubernetes validates at compile time."""
    patterns = []
    for i in range(1, len(tokens) - 2):
        if (tokens[i - 1].text == "." and tokens[i].text in ("matches", "find", "findAll")
                and tokens[i + 1].text == "("):
            value = tokens[i + 2].string_value
            if value is not None:
                patterns.append(value)
    return patterns

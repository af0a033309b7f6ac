"""The one regular-expression engine of DRA selectors: RE2, as in Kubernetes.

Kubernetes runs `matches`, `find` and `findAll` with Go's regexp (RE2 syntax, time linear in the input;
kubernetes/apiserver@v0.34.0:pkg/cel/library/regex.go); cel-cpp runs `matches` with RE2 itself. Python's `re`
backtracks (`^(([A-Za-z0-9 -]+)+)+Z$` runs for minutes) and differs in syntax (`\\pL`, `\\z`, `[[:alpha:]]` are RE2;
backreferences and lookaround are not), so everything here that runs a selector's pattern comes through this module.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

import re2


class RegexError(ValueError):
    """An invalid RE2 pattern, with RE2's reason (e.g. `invalid escape sequence: \\1`)."""


def _options() -> Any:
    options = re2.Options()
    options.log_errors = False  # RE2 logs every bad pattern to stderr; the caller reports it instead
    return options


_OPTIONS = _options()


def _compile(pattern: str) -> Any:
    try:
        return re2.compile(pattern, _OPTIONS)
    except re2.error as error:
        reason = error.args[0] if error.args else error
        raise RegexError(reason.decode() if isinstance(reason, bytes) else str(reason)) from None


_cached = lru_cache(maxsize=512)(_compile)
_CACHED_LENGTH = 10 * 1024  # CELSelectorExpressionMaxLength: longer patterns are computed, each compiled anew


def compile(pattern: str) -> Any:
    """The compiled pattern, or RegexError. Cached, since selectors run per device, up to the length a literal can
    have: a cache of computed patterns could grow without bound."""
    return _cached(pattern) if len(pattern) <= _CACHED_LENGTH else _compile(pattern)


def search(pattern: str, text: str) -> bool:
    """Whether the pattern matches anywhere in text (CEL `matches` is unanchored)."""
    return compile(pattern).search(text) is not None


def find(pattern: str, text: str) -> str:
    """The leftmost match, or '' (Go's Regexp.FindString)."""
    match = compile(pattern).search(text)
    return match.group(0) if match else ""


def find_all(pattern: str, text: str, limit: int = -1) -> list[str]:
    """Successive non-overlapping matches, at most `limit` unless it is negative (Go's Regexp.FindAllString).

    As in Go, an empty match right after the previous match is skipped: 'ab'.findAll('a*') is ['a', ''], where
    Python's finditer also yields the empty match at 1.
    """
    found: list[str] = []
    previous_end = -1
    for match in compile(pattern).finditer(text):
        if limit >= 0 and len(found) >= limit:
            break
        start, end = match.span()
        if not (start == end == previous_end):
            found.append(match.group(0))
        previous_end = end
    return found

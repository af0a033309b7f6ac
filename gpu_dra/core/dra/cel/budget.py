"""The runtime bounds of one selector evaluation: the scheduler's cost limit and a size bound.

The scheduler evaluates a DRA selector with cel-go's cost tracker and stops it once its actual cost passes
resource.CELSelectorExpressionMaxCost, 1,000,000 (kubernetes/dynamic-resource-allocation@v0.34.0:cel/compile.go
`cel.CostLimit(...)`), with "operation cancelled: actual cost limit exceeded"
(google/cel-go@v0.26.0:interpreter/runtimecost.go); the allocator then aborts the claim. cel-cpp has no such tracker,
so the calls whose cost grows with their operands (string and list building, traversals of built values; the rest
are O(1)) are charged here, at cel-go's and Kubernetes' per-call costs (k8s.io/apiserver pkg/cel/library/cost.go
CallCost), before they run: what is charged is a lower bound of the scheduler's actual cost, so "limit exceeded" here
is exceeded there too. `instrument` (gpu_dra.core.dra.cel.instrument) routes those calls through `guard`.

The size bound keeps the process small where Kubernetes charges little for much memory (`replace` costs its input,
not its output; list concatenation costs 1; cel-cpp's map() copies its list at every step): one evaluation may build
about 50 MB, five times the 10,000,000 characters concatenation can build within the cost limit (0.1 per character).
Past it the evaluation stops as at the cost limit, with the bound named in the message.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

MAX_COST = 1_000_000  # resource.CELSelectorExpressionMaxCost, also the runtime limit
STRING_TRAVERSAL = 0.1  # cel-go common.StringTraversalCostFactor
REGEX_LENGTH = 0.25  # cel-go common.RegexStringLengthCostFactor
MAX_BUILT = 50_000_000  # about 50 MB; concatenation builds at most MAX_COST / STRING_TRAVERSAL = 10,000,000 characters
ELEMENT = 32  # a list element counts as what a cel-cpp value takes (measured: 10^6 elements built, about 32 MB)
COST_EXCEEDED = "operation cancelled: actual cost limit exceeded"
SIZE_EXCEEDED = (f"{COST_EXCEEDED} (the selector builds more than {MAX_BUILT:,} characters, a list element counting "
                 f"{ELEMENT}: gpu-dra's size bound)")


class LimitExceeded(ValueError):
    """Raised in a CEL call; the Budget remembers it, since `||`, `&&` and macros may absorb the error value."""


@dataclass
class Budget:
    cost: int = 0
    built: int = 0
    exceeded: str | None = None
    pending: int = 0  # sizes a guard template is adding up, element by element, for the guard that follows

    def charge(self, cost: int, built: int = 0) -> None:
        """Add one call's cost and what it builds, before it runs; past either bound every later call fails too."""
        if self.exceeded is None:
            self.cost += cost
            self.built += built
            if self.cost > MAX_COST:
                self.exceeded = COST_EXCEEDED
            elif self.built > MAX_BUILT:
                self.exceeded = SIZE_EXCEEDED
        self.check()

    def check(self) -> bool:
        if self.exceeded is not None:
            raise LimitExceeded(self.exceeded)
        return True


_CURRENT: ContextVar[Budget | None] = ContextVar("gpu_dra_cel_budget", default=None)


@contextmanager
def evaluation() -> Iterator[Budget]:
    """The budget of one evaluation, charged by the calls it makes."""
    budget = Budget()
    token = _CURRENT.set(budget)
    try:
        yield budget
    finally:
        _CURRENT.reset(token)


def _budget() -> Budget:
    """The evaluation's budget; outside `evaluation`, a fresh one: each call is then bounded on its own."""
    return _CURRENT.get() or Budget()


def charge(cost: int, built: int = 0) -> None:
    _budget().charge(cost, built)


def traversal(size: int, factor: float = STRING_TRAVERSAL) -> int:
    """cel-go's `uint64(math.Ceil(float64(size) * factor))`."""
    return math.ceil(size * factor)


def regex_cost(text: int, pattern: int) -> int:
    """find, findAll and matches: (1 + |text|) * 0.1 times |pattern| * 0.25, each rounded up."""
    return traversal(1 + text) * traversal(pattern, REGEX_LENGTH)


# --------------------------------------------------------------------------------------------- calls in Python


def replace(text: str, old: str, new: str, limit: int = -1) -> str:
    """ext strings `replace` (Go's strings.Replace), its result size known before it is built."""
    count = text.count(old) if old else len(text) + 1
    if limit >= 0:
        count = min(count, limit)
    charge(math.ceil(len(text) * 2 * STRING_TRAVERSAL), len(text) + count * (len(new) - len(old)))
    return text.replace(old, new, limit)


# --------------------------------------------------------------------------------------------- guards

# Printed size of one value in format(): a scalar (a double is at most ~330 characters) or a string of n characters,
# quoted inside a list or map (at most 10 per character, `\U0010ffff`). The guard template adds these up.
FORMATTED_SCALAR, FORMATTED_PER_CHARACTER = 404, 10


def _join(items: int, separator: int, elements: int) -> tuple[int, int]:
    result = elements + separator * max(items - 1, 0)
    return math.ceil(result * 2 * STRING_TRAVERSAL), result


# op -> (cost, built) from the operands' sizes, receiver first (strings: characters, bytes: bytes, lists and maps:
# entries, other values 1), and for join and format what the template added up over their elements. Costs are
# Kubernetes' CallCost where it has one, else cel-go's.
GUARDS: dict[str, Any] = {
    "add_string": lambda a, b, _: (traversal(a + b), a + b),
    "add_list": lambda a, b, _: (1, ELEMENT * (a + b)),
    "join": lambda items, separator, elements: _join(items, separator, elements),
    "format": lambda text, _, arguments: (traversal(text), text + arguments),
    "quote": lambda text, _: (traversal(text), 2 * text + 2),
    "split": lambda text, *_: (math.ceil(text * 2 * STRING_TRAVERSAL), text + ELEMENT * (text + 1)),
    "copy": lambda text, *_: (traversal(text), text),  # lowerAscii, upperAscii, trim, substring, conversions
    "reverse": lambda text, _: (1, text),
    "compare": lambda a, b, _: (traversal(min(a, b)), 0),  # ==, !=, <, <=, >, >=
    "contains": lambda text, part, _: (traversal(text) * traversal(part), 0),
    "affix": lambda text, *_: (traversal(text), 0),  # startsWith, endsWith
    "matches": lambda text, pattern, _: (regex_cost(text, pattern), 0),
    "in_list": lambda _, items, __: (items, 0),
    "index_of": lambda text, *_: (int(text * STRING_TRAVERSAL), 0),  # Kubernetes' traversalCost truncates
    # cel-cpp's map() and filter() copy the list they build at every step: n items build n(n+1)/2 elements.
    "map": lambda items, _: (0, ELEMENT * items * (items + 1) // 2),
}


def guard(op: str, sizes: list[int]) -> bool:
    """Charge the call `op` will make on operands of these sizes; True, or LimitExceeded (the call is not made)."""
    budget = _budget()
    pending, budget.pending = budget.pending, 0
    cost, built = GUARDS[op](*sizes, pending)
    budget.charge(cost, built)
    return True


def ok() -> bool:
    """True while the evaluation is within bounds: guard templates ask first, so that once past them no operand is
    even sized again (size() of a string is a traversal)."""
    return _budget().check()


def add_size(size: int) -> bool:
    """Add one element's size for the guard that follows; True once the sum passes the size bound, which stops the
    template's `exists` (its guard then fails)."""
    budget = _budget()
    budget.pending += size
    return budget.pending > MAX_BUILT

"""What cel-go's static cost estimator computes with (google/cel-go@v0.26.0:checker/cost.go): cost and size ranges
saturating as its uint64 arithmetic does, the types it sees, the nodes it hands its estimators, and the two
estimator interfaces a library implements (sizes of what a path reaches, costs of its calls)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

UINT64_MAX = 2**64 - 1
STRING_TRAVERSAL = 0.1  # cel-go common.StringTraversalCostFactor
REGEX_LENGTH = 0.25  # cel-go common.RegexStringLengthCostFactor

def wrap(value: int) -> int:
    """Go's uint64 arithmetic where upstream does not saturate (it wraps)."""
    return value % (UINT64_MAX + 1)


def _times_factor(value: int, per_unit: float) -> int:
    """cel-go multiplyByCostFactor: the product rounded up, saturating at 2^64 - 1."""
    as_float = float(value)
    if as_float > 0 and per_unit > 0 and as_float > UINT64_MAX / per_unit:
        return UINT64_MAX
    product = math.ceil(as_float * per_unit)
    return UINT64_MAX if product >= 2**64 else product


@dataclass(frozen=True)
class Range:
    """cel-go's CostEstimate and SizeEstimate: [low, high], saturating at 2^64 - 1 as its uint64 arithmetic does."""

    low: int
    high: int

    def __add__(self, other: Range) -> Range:
        return Range(min(self.low + other.low, UINT64_MAX), min(self.high + other.high, UINT64_MAX))

    def times(self, other: Range) -> Range:
        return Range(min(self.low * other.low, UINT64_MAX), min(self.high * other.high, UINT64_MAX))

    def factor(self, per_unit: float) -> Range:
        return Range(_times_factor(self.low, per_unit), _times_factor(self.high, per_unit))

    def union(self, other: Range) -> Range:
        return Range(min(self.low, other.low), max(self.high, other.high))


def fixed(value: int) -> Range:
    return Range(value, value)


UNKNOWN = Range(0, UINT64_MAX)
ZERO = fixed(0)
EMPTY_UNION = Range(UINT64_MAX, 0)  # what a union over no ranges starts from


@dataclass(frozen=True)
class CelType:
    """A checked type as cel-go's estimator sees it: its kind (cel-go types.Kind, lower case), name and parameters."""

    kind: str
    name: str = ""
    parameters: tuple[CelType, ...] = ()


DYN = CelType("dyn")
OPTIONAL_DYN = CelType("opaque", "optional_type", (DYN,))
_PRIMITIVES = {1: "bool", 2: "int", 3: "uint", 4: "double", 5: "string", 6: "bytes"}
_WELL_KNOWN = {1: CelType("any", "google.protobuf.Any"), 2: CelType("timestamp"), 3: CelType("duration")}
_SCALARS = {"bool", "double", "duration", "int", "timestamp", "uint"}


def cel_type(proto: Any) -> CelType:
    """The estimator's view of a cel.expr.Type; a wrapper type has its primitive's kind, as in cel-go."""
    which = proto.WhichOneof("type_kind")
    if which in ("primitive", "wrapper"):
        return CelType(_PRIMITIVES.get(getattr(proto, which), "dyn"))
    if which == "well_known":
        return _WELL_KNOWN.get(proto.well_known, DYN)
    if which == "list_type":
        return CelType("list", "list", (cel_type(proto.list_type.elem_type),))
    if which == "map_type":
        return CelType("map", "map", (cel_type(proto.map_type.key_type), cel_type(proto.map_type.value_type)))
    if which == "message_type":
        return CelType("struct", proto.message_type)
    if which == "type_param":
        return CelType("type_param", proto.type_param)
    if which == "abstract_type":
        return CelType("opaque", proto.abstract_type.name,
                       tuple(cel_type(p) for p in proto.abstract_type.parameter_types))
    if which == "null":
        return CelType("null")
    if which == "type":
        return CelType("type")
    return DYN


def is_scalar(t: CelType) -> bool:
    """cel-go isScalar: values of a constant size at compile time (an optional of one too)."""
    if t.kind == "opaque" and t.name == "optional_type" and t.parameters:
        return is_scalar(t.parameters[0])
    return t.kind in _SCALARS


@dataclass(frozen=True)
class AstNode:
    """cel-go checker.AstNode: what a size or call estimator is told about an expression. `path` runs from a
    variable through field names, @keys, @values, @items and @indices; empty where there is none."""

    path: tuple[str, ...]
    type: CelType
    expr: Any  # a cel.expr.Expr, or None for a list's element
    computed_size: Range | None


class SizeEstimator:
    """cel-go's CostEstimator.EstimateSize: the size of what a node reads, when the expression does not say."""

    def estimate_size(self, node: AstNode) -> Range | None:
        return None

    def declared_type(self, path: tuple[str, ...]) -> CelType | None:
        """The type the API server declares at `path` where the checked AST has a less precise one."""
        return None


CallEstimate = tuple[Range, Range | None]  # the call's own cost and the size of its result


class CallEstimator:
    """cel-go's CostEstimator.EstimateCallCost: a library's cost of one overload, or None for cel-go's own."""

    def __init__(self, sizes: SizeEstimator):
        self.sizes = sizes

    def estimate_call_cost(self, function: str, overload: str, target: AstNode | None,
                           args: list[AstNode]) -> CallEstimate | None:
        return None

    def size_of(self, node: AstNode) -> Range:
        """Kubernetes' sizeEstimate: the computed size, else the size estimator's, else unknown."""
        if node.computed_size is not None:
            return node.computed_size
        return self.sizes.estimate_size(node) or UNKNOWN

    def element_node(self, container: AstNode) -> AstNode | None:
        """listElementNode: a node for the elements of a list (its path + @items where it has one)."""
        if not container.type.parameters:
            return None
        return AstNode((*container.path, "@items") if container.path else (), container.type.parameters[0], None,
                       None)

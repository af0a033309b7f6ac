"""Kubernetes' costs of its CEL library calls (kubernetes/apiserver@v0.35.7:pkg/cel/library/cost.go) and DRA's size
bounds of what a selector reads (kubernetes/dynamic-resource-allocation@v0.35.0:cel/compile.go: driver <= 63
characters; attribute and capacity maps <= 32 domains of <= 32 ids; domains <= 63 and ids <= 32 characters; attribute
values <= 64): the estimators cost.Coster is given for a DRA selector."""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cache

from gpu_dra.core.dra.cel.cost_model import (
    REGEX_LENGTH,
    STRING_TRAVERSAL,
    UINT64_MAX,
    ZERO,
    AstNode,
    CallEstimate,
    CallEstimator,
    CelType,
    Range,
    SizeEstimator,
    fixed,
    wrap,
)


def _replaced(text: Range, old: Range, new: Range) -> Range:
    """The size of `text.replace(old, new)` as Kubernetes estimates it (kubernetes/apiserver@v0.35.7:
    pkg/cel/library/cost.go, EstimateCallCost "replace"): at most, the shortest `old` replaced by the longest `new`
    as often as it fits (around every character when `old` may be empty); at least, the longest by the shortest."""
    if old.low == 0:
        count_high, kept_high = min(text.high + 1, UINT64_MAX), text.high
    elif new.high <= old.low:
        count_high, kept_high = 0, text.high
    else:
        count_high, kept_high = wrap(math.ceil(float(text.high) / float(old.low))), 0
    if old.high == 0:
        count_low, kept_low = min(text.low + 1, UINT64_MAX), text.low
    elif old.high <= new.low:
        count_low, kept_low = 0, text.low
    else:
        count_low, kept_low = wrap(math.ceil(float(text.low) / float(old.high))), 0
    return Range(count_low, count_high).times(new) + Range(kept_low, kept_high)


_O1_LIBRARY_FUNCTIONS = {"sign", "asInteger", "isInteger", "asApproximateFloat", "isGreaterThan", "isLessThan",
                         "compareTo", "add", "sub", "major", "minor", "patch"}
_CONSTANT_EQUALITY_TYPES = {"kubernetes.Quantity", "kubernetes.Semver"}


class KubernetesLibrary(CallEstimator):
    """kubernetes/apiserver@v0.35.7:pkg/cel/library/cost.go CostEstimator.EstimateCallCost, for the functions a DRA
    selector can call (it matches function names, whatever the overload). Its EstimateSize is the size estimator's."""

    def estimate_call_cost(self, function: str, overload: str, target: AstNode | None,
                           args: list[AstNode]) -> CallEstimate | None:
        if function in ("isSorted", "sum", "max", "min", "indexOf", "lastIndexOf") and target is not None:
            element = self.element_node(target)
            if element is None:  # a string: indexOf and lastIndexOf
                return self.size_of(target).factor(STRING_TRAVERSAL), None
            per_element = fixed(1)
            if element.type.kind in ("string", "bytes"):
                per_element = per_element + self.size_of(element).factor(STRING_TRAVERSAL)
            return self.size_of(target).times(per_element), None
        if function in ("lowerAscii", "upperAscii", "substring", "trim") and target is not None:
            size = self.size_of(target)
            return size.factor(STRING_TRAVERSAL), size
        if function == "replace" and target is not None and len(args) >= 2:
            size = self.size_of(target)
            return (size.factor(2 * STRING_TRAVERSAL),
                    _replaced(size, self.size_of(args[0]), self.size_of(args[1])))
        if function == "split" and target is not None:
            size = self.size_of(target)
            most = size.high
            limit = args[1].expr if len(args) > 1 else None
            if limit is not None and limit.WhichOneof("kind") == "const_expr" and \
                    limit.const_expr.WhichOneof("kind") == "int64_value":
                most = wrap(limit.const_expr.int64_value)  # uint64(i): a negative limit wraps
            return size.factor(2 * STRING_TRAVERSAL), Range(0, most)
        if function == "join" and target is not None:
            items = self.size_of(target)
            element = self.element_node(target)
            size = items.times(self.size_of(element)) if element is not None else ZERO
            if args:
                separators = Range(items.low - 1 if items.low > 0 else 0, items.high - 1 if items.high > 0 else 0)
                size = size + self.size_of(args[0]).times(separators)
            return size.factor(STRING_TRAVERSAL), size
        if function in ("find", "findAll") and target is not None and args:
            size = self.size_of(target)
            text_cost = (size + fixed(1)).factor(STRING_TRAVERSAL)
            return text_cost.times(self.size_of(args[0]).factor(REGEX_LENGTH)), Range(0, size.high)
        if function in ("quantity", "isQuantity", "semver", "isSemver") and args:
            return self.size_of(args[0]).factor(STRING_TRAVERSAL), None
        if function in _O1_LIBRARY_FUNCTIONS:
            return fixed(1), None
        if function == "_==_" and len(args) == 2:
            left, right = args[0].type, args[1].type
            if left.name == right.name and left.kind == "struct" and left.name in _CONSTANT_EQUALITY_TYPES:
                return fixed(1), None
            # A dyn the coster could not type as the API server does (Coster._declared_type), compared with a
            # Quantity or Semver, is taken as that type: this errs low (the API server charges such an equality 1
            # or more), never high.
            if {left.kind, right.kind} == {"struct", "dyn"} and (left.name or right.name) in _CONSTANT_EQUALITY_TYPES:
                return fixed(1), None
        return None


# Bounds of the DRA `device` variable (kubernetes/dynamic-resource-allocation@v0.35.0:cel/compile.go newCompiler and
# withMaxElements, with k8s.io/api/resource/v1 limits): a tree of declared types with their maximum sizes.


@dataclass(frozen=True)
class _Declared:
    max_elements: int
    type: CelType
    fields: tuple[tuple[str, _Declared], ...] = ()
    key: _Declared | None = None
    element: _Declared | None = None


_ATTRIBUTE = _Declared(64, CelType("any", "google.protobuf.Any"))  # DeviceAttributeMaxValueLength
_QUANTITY = _Declared(0, CelType("struct", "kubernetes.Quantity"))  # QuantityDeclType: no MaxElements


def _device_maps(value: _Declared) -> _Declared:
    """attributes and capacity: <= 32 domains (<= 63 characters) of <= 32 ids (<= 32 characters)."""
    domain, ident = _Declared(63, CelType("string")), _Declared(32, CelType("string"))
    inner = _Declared(32, CelType("map", "map", (CelType("string"), value.type)), key=ident, element=value)
    return _Declared(32, CelType("map", "map", (CelType("string"), inner.type)), key=domain, element=inner)


# The size estimator always reads the newest device type, with allowMultipleAllocations (compile.go: `deviceType:
# deviceTypeV134ConsumableCapacity`); without DRAConsumableCapacity the field does not type-check anyway.
_DEVICE = _Declared(0, CelType("struct", "kubernetes.DRADevice"), fields=(
    ("driver", _Declared(63, CelType("string"))),  # DriverNameMaxLength
    ("allowMultipleAllocations", _Declared(1, CelType("bool"))),
    ("attributes", _device_maps(_ATTRIBUTE)),
    ("capacity", _device_maps(_QUANTITY))))


@cache
def _bound(path: tuple[str, ...]) -> _Declared | None:
    """sizeEstimator.EstimateSize's walk: any id of an attribute map reaches an attribute value."""
    if not path or path[0] != "device":
        return None
    current = _DEVICE
    for name in path[1:]:
        if name in ("@items", "@values"):
            following = current.element
        elif name == "@keys":
            following = current.key
        else:
            following = dict(current.fields).get(name)
            if following is None and current.element is _ATTRIBUTE:
                following = _ATTRIBUTE
        if following is None:
            return None
        current = following
    return current


@cache
def _checker_type(path: tuple[str, ...]) -> CelType | None:
    """The checker's type at `path`: a field of a map is its value (the size walk knows only attribute ids)."""
    if not path or path[0] != "device":
        return None
    current = _DEVICE
    for name in path[1:]:
        if name in ("@items", "@values") or (current.element is not None and not name.startswith("@")):
            following = current.element
        elif name == "@keys":
            following = current.key
        else:
            following = dict(current.fields).get(name)
        if following is None:
            return None
        current = following
    return current.type


class DraSizes(SizeEstimator):
    """kubernetes/dynamic-resource-allocation@v0.35.0:cel/compile.go sizeEstimator.EstimateSize: the maximum size
    of what a path through `device` reaches."""

    def estimate_size(self, node: AstNode) -> Range | None:
        bound = _bound(node.path)
        return Range(0, bound.max_elements) if bound is not None else None

    def declared_type(self, path: tuple[str, ...]) -> CelType | None:
        return _checker_type(path)

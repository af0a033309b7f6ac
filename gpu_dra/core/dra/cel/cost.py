"""Estimated cost of a DRA selector, as the API server computes it before storing one (limit 1,000,000).

cel-go's static cost estimator (google/cel-go@v0.26.0:checker/cost.go, what Kubernetes 1.34 and 1.35 vendor), step
for step, with Kubernetes' library costs (kubernetes/apiserver@v0.35.7:pkg/cel/library/cost.go) and DRA's size
estimator (kubernetes/dynamic-resource-allocation@v0.35.0:cel/compile.go: driver <= 63 characters; attribute and
capacity maps <= 32 domains of <= 32 ids; domains <= 63 and ids <= 32 characters; attribute values <= 64). It reads
the checked AST cel-expr-python serializes (a cel.expr.CheckedExpr), decoded with message types built at run time.
tests/test_cel_cost_upstream.py checks it against the costs upstream's own test tables assert.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cache
from typing import Any

from google.protobuf import any_pb2, descriptor_pb2, descriptor_pool, message_factory

MAX_ESTIMATED_COST = 1_000_000  # resource.CELSelectorExpressionMaxCost
UINT64_MAX = 2**64 - 1
STRING_TRAVERSAL = 0.1
REGEX_LENGTH = 0.25
SELECT_AND_IDENT, LIST_CREATE, MAP_CREATE, STRUCT_CREATE = 1, 10, 30, 40

# --------------------------------------------------------------------------------------------- cel.expr messages

_F = descriptor_pb2.FieldDescriptorProto


def _checked_expr_class() -> Any:
    pool = descriptor_pool.DescriptorPool()
    for module in ("struct_pb2", "empty_pb2"):
        imported = __import__(f"google.protobuf.{module}", fromlist=["DESCRIPTOR"])
        proto = descriptor_pb2.FileDescriptorProto()
        imported.DESCRIPTOR.CopyToProto(proto)
        pool.Add(proto)
    file = descriptor_pb2.FileDescriptorProto(name="gpu_dra/cel_expr.proto", package="cel.expr", syntax="proto3",
                                              dependency=["google/protobuf/struct.proto",
                                                          "google/protobuf/empty.proto"])

    _add_expr(file)
    _add_type(file)
    _add_checked(file)
    pool.Add(file)
    return message_factory.GetMessageClass(pool.FindMessageTypeByName("cel.expr.CheckedExpr"))


_EXPR, _TYPE = ".cel.expr.Expr", ".cel.expr.Type"


def _add(message: Any, name: str, number: int, kind: int, type_name: str | None = None,
         repeated: bool = False, oneof: int | None = None) -> None:
    field = message.field.add(name=name, number=number, type=kind,
                              label=_F.LABEL_REPEATED if repeated else _F.LABEL_OPTIONAL)
    if type_name:
        field.type_name = type_name
    if oneof is not None:
        field.oneof_index = oneof


def _add_expr(file: Any) -> None:
    """cel/expr/syntax.proto: Constant and Expr."""
    add, expr_t = _add, _EXPR
    constant = file.message_type.add(name="Constant")
    constant.oneof_decl.add(name="kind")
    add(constant, "null_value", 1, _F.TYPE_ENUM, ".google.protobuf.NullValue", oneof=0)
    for number, (name, kind) in enumerate((("bool_value", _F.TYPE_BOOL), ("int64_value", _F.TYPE_INT64),
                                           ("uint64_value", _F.TYPE_UINT64), ("double_value", _F.TYPE_DOUBLE),
                                           ("string_value", _F.TYPE_STRING), ("bytes_value", _F.TYPE_BYTES)), 2):
        add(constant, name, number, kind, oneof=0)
    expr = file.message_type.add(name="Expr")
    expr.oneof_decl.add(name="kind")
    add(expr, "id", 2, _F.TYPE_INT64)
    for number, (name, type_name) in enumerate((
            ("const_expr", ".cel.expr.Constant"), ("ident_expr", ".cel.expr.Expr.Ident"),
            ("select_expr", ".cel.expr.Expr.Select"), ("call_expr", ".cel.expr.Expr.Call"),
            ("list_expr", ".cel.expr.Expr.CreateList"), ("struct_expr", ".cel.expr.Expr.CreateStruct"),
            ("comprehension_expr", ".cel.expr.Expr.Comprehension")), 3):
        add(expr, name, number, _F.TYPE_MESSAGE, type_name, oneof=0)
    ident = expr.nested_type.add(name="Ident")
    add(ident, "name", 1, _F.TYPE_STRING)
    select = expr.nested_type.add(name="Select")
    add(select, "operand", 1, _F.TYPE_MESSAGE, expr_t)
    add(select, "field", 2, _F.TYPE_STRING)
    add(select, "test_only", 3, _F.TYPE_BOOL)
    call = expr.nested_type.add(name="Call")
    add(call, "target", 1, _F.TYPE_MESSAGE, expr_t)
    add(call, "function", 2, _F.TYPE_STRING)
    add(call, "args", 3, _F.TYPE_MESSAGE, expr_t, repeated=True)
    create_list = expr.nested_type.add(name="CreateList")
    add(create_list, "elements", 1, _F.TYPE_MESSAGE, expr_t, repeated=True)
    create_struct = expr.nested_type.add(name="CreateStruct")
    add(create_struct, "message_name", 1, _F.TYPE_STRING)
    add(create_struct, "entries", 2, _F.TYPE_MESSAGE, ".cel.expr.Expr.CreateStruct.Entry", repeated=True)
    entry = create_struct.nested_type.add(name="Entry")
    entry.oneof_decl.add(name="key_kind")
    add(entry, "id", 1, _F.TYPE_INT64)
    add(entry, "field_key", 2, _F.TYPE_STRING, oneof=0)
    add(entry, "map_key", 3, _F.TYPE_MESSAGE, expr_t, oneof=0)
    add(entry, "value", 4, _F.TYPE_MESSAGE, expr_t)
    comprehension = expr.nested_type.add(name="Comprehension")
    for name, number in (("iter_var", 1), ("accu_var", 3), ("iter_var2", 8)):
        add(comprehension, name, number, _F.TYPE_STRING)
    for name, number in (("iter_range", 2), ("accu_init", 4), ("loop_condition", 5), ("loop_step", 6),
                         ("result", 7)):
        add(comprehension, name, number, _F.TYPE_MESSAGE, expr_t)


def _add_type(file: Any) -> None:
    """cel/expr/checked.proto: Type."""
    add, type_t = _add, _TYPE
    type_ = file.message_type.add(name="Type")
    type_.oneof_decl.add(name="type_kind")
    add(type_, "dyn", 1, _F.TYPE_MESSAGE, ".google.protobuf.Empty", oneof=0)
    add(type_, "null", 2, _F.TYPE_ENUM, ".google.protobuf.NullValue", oneof=0)
    for name, number in (("primitive", 3), ("wrapper", 4), ("well_known", 5)):
        add(type_, name, number, _F.TYPE_INT32, oneof=0)
    list_type = type_.nested_type.add(name="ListType")
    add(list_type, "elem_type", 1, _F.TYPE_MESSAGE, type_t)
    map_type = type_.nested_type.add(name="MapType")
    add(map_type, "key_type", 1, _F.TYPE_MESSAGE, type_t)
    add(map_type, "value_type", 2, _F.TYPE_MESSAGE, type_t)
    add(type_, "list_type", 6, _F.TYPE_MESSAGE, ".cel.expr.Type.ListType", oneof=0)
    add(type_, "map_type", 7, _F.TYPE_MESSAGE, ".cel.expr.Type.MapType", oneof=0)
    add(type_, "message_type", 9, _F.TYPE_STRING, oneof=0)
    add(type_, "type_param", 10, _F.TYPE_STRING, oneof=0)
    add(type_, "type", 11, _F.TYPE_MESSAGE, type_t, oneof=0)
    add(type_, "error", 12, _F.TYPE_MESSAGE, ".google.protobuf.Empty", oneof=0)
    abstract = type_.nested_type.add(name="AbstractType")
    add(abstract, "name", 1, _F.TYPE_STRING)
    add(abstract, "parameter_types", 2, _F.TYPE_MESSAGE, type_t, repeated=True)
    add(type_, "abstract_type", 14, _F.TYPE_MESSAGE, ".cel.expr.Type.AbstractType", oneof=0)


def _add_checked(file: Any) -> None:
    """cel/expr/checked.proto: Reference and CheckedExpr."""
    add, expr_t, type_t = _add, _EXPR, _TYPE
    reference = file.message_type.add(name="Reference")
    add(reference, "name", 1, _F.TYPE_STRING)
    add(reference, "overload_id", 3, _F.TYPE_STRING, repeated=True)
    checked = file.message_type.add(name="CheckedExpr")
    for name, number, value_type in (("reference_map", 2, ".cel.expr.Reference"), ("type_map", 3, type_t)):
        entry_type = checked.nested_type.add(name="".join(p.title() for p in name.split("_")) + "Entry")
        entry_type.options.map_entry = True
        add(entry_type, "key", 1, _F.TYPE_INT64)
        add(entry_type, "value", 2, _F.TYPE_MESSAGE, value_type)
        add(checked, name, number, _F.TYPE_MESSAGE, f".cel.expr.CheckedExpr.{entry_type.name}", repeated=True)
    add(checked, "expr", 4, _F.TYPE_MESSAGE, expr_t)


CheckedExpr = _checked_expr_class()


def decode(serialized: bytes) -> Any:
    wrapper = any_pb2.Any()
    wrapper.ParseFromString(serialized)
    checked = CheckedExpr()
    checked.ParseFromString(wrapper.value)
    return checked


# --------------------------------------------------------------------------------------------- estimates


def _wrap(value: int) -> int:
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
_EMPTY_UNION = Range(UINT64_MAX, 0)  # what a union over no ranges starts from


@dataclass(frozen=True)
class CelType:
    """A checked type as cel-go's estimator sees it: its kind (cel-go types.Kind, lower case), name and parameters."""

    kind: str
    name: str = ""
    parameters: tuple[CelType, ...] = ()


DYN = CelType("dyn")
_OPTIONAL_DYN = CelType("opaque", "optional_type", (DYN,))
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


def _is_scalar(t: CelType) -> bool:
    """cel-go isScalar: values of a constant size at compile time (an optional of one too)."""
    if t.kind == "opaque" and t.name == "optional_type" and t.parameters:
        return _is_scalar(t.parameters[0])
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


def _replaced(text: Range, old: Range, new: Range) -> Range:
    """The size of `text.replace(old, new)` as Kubernetes estimates it (kubernetes/apiserver@v0.35.7:
    pkg/cel/library/cost.go, EstimateCallCost "replace"): at most, the shortest `old` replaced by the longest `new`
    as often as it fits (around every character when `old` may be empty); at least, the longest by the shortest."""
    if old.low == 0:
        count_high, kept_high = min(text.high + 1, UINT64_MAX), text.high
    elif new.high <= old.low:
        count_high, kept_high = 0, text.high
    else:
        count_high, kept_high = _wrap(math.ceil(float(text.high) / float(old.low))), 0
    if old.high == 0:
        count_low, kept_low = min(text.low + 1, UINT64_MAX), text.low
    elif old.high <= new.low:
        count_low, kept_low = 0, text.low
    else:
        count_low, kept_low = _wrap(math.ceil(float(text.low) / float(old.high))), 0
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
                most = _wrap(limit.const_expr.int64_value)  # uint64(i): a negative limit wraps
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


# --------------------------------------------------------------------------------------------- cel-go's coster

_ACCUMULATORS = ("__result__", "@result")  # cel-go parser.AccumulatorName and HiddenAccumulatorName
_COMPARISONS = {"less_string", "greater_string", "less_equals_string", "greater_equals_string", "less_bytes",
                "greater_bytes", "less_equals_bytes", "greater_equals_bytes", "equals", "not_equals"}


@dataclass(frozen=True)
class _Entry:
    """entrySizeEstimate: a list's or map's index or key size and element size."""

    container: str  # "list" or "map"
    key: Range
    value: Range

    def union(self, other: _Entry | None) -> _Entry | None:
        if other is None:
            return None
        return _Entry(self.container, self.key.union(other.key), self.value.union(other.value))


@dataclass(frozen=True)
class _Local:
    path: tuple[str, ...]
    size: Range | None
    entry: _Entry | None
    type: CelType | None = None  # as the API server types it, where the checked AST says dyn


def _literal_size(expr: Any) -> Range | None:
    """computeExprSize: the size of a literal, list or map written in the expression."""
    kind = expr.WhichOneof("kind")
    if kind == "const_expr":
        which = expr.const_expr.WhichOneof("kind")
        if which == "string_value":
            return fixed(len(expr.const_expr.string_value))
        if which == "bytes_value":
            return fixed(len(expr.const_expr.bytes_value))
        return fixed(1) if which is not None else None
    if kind == "list_expr":
        return fixed(len(expr.list_expr.elements))
    if kind == "struct_expr" and not expr.struct_expr.message_name:
        return fixed(len(expr.struct_expr.entries))
    return None


class Coster:
    """cel-go@v0.26.0:checker/cost.go `coster`, step for step, over a cel.expr.CheckedExpr."""

    def __init__(self, checked: Any, sizes: SizeEstimator, calls: CallEstimator, presence_test_cost: int = 1):
        self.references = checked.reference_map
        self.types = checked.type_map
        self.sizes = sizes
        self.calls = calls
        self.presence_test_cost = fixed(presence_test_cost)
        self.paths: dict[int, tuple[str, ...]] = {}
        self.locals: dict[str, list[_Local]] = {}
        self.computed_sizes: dict[int, Range] = {}
        self.entry_sizes: dict[int, _Entry] = {}
        self.checked_types: dict[int, CelType] = {}
        self.declared_types: dict[int, CelType] = {}

    # ----------------------------------------------------------------------------------- what is known of a node

    def _type(self, expr: Any) -> CelType:
        if expr.id not in self.checked_types:
            proto = self.types.get(expr.id)
            self.checked_types[expr.id] = cel_type(proto) if proto is not None else DYN
        return self.checked_types[expr.id]

    def _local(self, expr: Any) -> _Local | None:
        if expr.WhichOneof("kind") != "ident_expr":
            return None
        stack = self.locals.get(expr.ident_expr.name)
        return stack[-1] if stack else None

    def _path(self, expr: Any) -> tuple[str, ...]:
        local = self._local(expr)
        return local.path if local is not None else self.paths.get(expr.id, ())

    def _size(self, expr: Any) -> Range | None:
        """computeSize: computed, written, estimated, scalar, or a local variable's."""
        if expr.id in self.computed_sizes:
            return self.computed_sizes[expr.id]
        written = _literal_size(expr)
        if written is not None:
            return written
        estimated = self.sizes.estimate_size(AstNode(self._path(expr), self._type(expr), expr, None))
        if estimated is not None:
            self.computed_sizes[expr.id] = estimated
            return estimated
        if _is_scalar(self._type(expr)):
            return fixed(1)
        local = self._local(expr)
        return local.size if local is not None else None

    def _size_or_unknown(self, expr: Any) -> Range:
        size = self._size(expr)
        return size if size is not None else UNKNOWN

    def _set_size(self, expr: Any, size: Range | None) -> None:
        if size is not None:
            self.computed_sizes[expr.id] = size

    def _entry(self, expr: Any) -> _Entry | None:
        if expr.id in self.entry_sizes:
            return self.entry_sizes[expr.id]
        local = self._local(expr)
        return local.entry if local is not None else None

    def _set_entry(self, expr: Any, entry: _Entry | None) -> None:
        if entry is not None:
            self.entry_sizes[expr.id] = entry

    def _node(self, expr: Any) -> AstNode:
        """newAstNode: paths rooted at an accumulator are not given to estimators."""
        path = self._path(expr)
        if path and path[0] in _ACCUMULATORS:
            path = ()
        return AstNode(path, self._declared_type(expr), expr, self._size(expr))

    def _declared_type(self, expr: Any) -> CelType:
        """The type cel-go's checker gives `expr` in the API server's environment. gpu-dra's checker types an
        attribute or capacity value as dyn (a proto map cannot hold a map); the API server declares them as
        google.protobuf.Any and kubernetes.Quantity, which Kubernetes' equality cost depends on. So a dyn is
        typed by its path through `device`, or by what it is taken from (optionals, conditionals, locals)."""
        if expr.id not in self.declared_types:
            self.declared_types[expr.id] = self._infer_type(expr)
        return self.declared_types[expr.id]

    def _infer_type(self, expr: Any) -> CelType:
        declared = self.sizes.declared_type(self._path(expr))
        if declared is not None:
            return declared
        checked = self._type(expr)
        if checked not in (DYN, _OPTIONAL_DYN):
            return checked
        kind = expr.WhichOneof("kind")
        if kind == "ident_expr":
            local = self._local(expr)
            return local.type if local is not None and local.type is not None else checked
        if kind == "comprehension_expr" and self._is_bind(expr):
            return self._declared_type(expr.comprehension_expr.result)
        if kind != "call_expr":
            return checked
        call = expr.call_expr
        operands = ([call.target] if call.HasField("target") else []) + list(call.args)
        if call.function == "_?_:_" and len(operands) == 3:
            first, second = self._declared_type(operands[1]), self._declared_type(operands[2])
            return first if first == second else checked
        if call.function in ("orValue", "value") and operands:
            optional = self._declared_type(operands[0])
            if optional.kind == "opaque" and optional.name == "optional_type" and optional.parameters:
                return optional.parameters[0]
        if call.function in ("_?._", "_[?_]", "_[_]") and len(operands) == 2:
            container = self._declared_type(operands[0])
            if container.kind == "opaque" and container.name == "optional_type" and container.parameters:
                container = container.parameters[0]
            element = container.parameters[-1] if container.kind in ("map", "list") and container.parameters else None
            if element is not None:
                return element if call.function == "_[_]" else CelType("opaque", "optional_type", (element,))
        return checked

    def _push(self, name: str, path: tuple[str, ...], size: Range | None, entry: _Entry | None = None,
              declared: CelType | None = None) -> None:
        self.locals.setdefault(name, []).append(_Local(path, size, entry, declared))

    def _pop(self, name: str) -> None:
        self.locals[name].pop()

    # ----------------------------------------------------------------------------------- cost

    def cost(self, expr: Any) -> Range:
        kind = expr.WhichOneof("kind")
        if kind == "const_expr":
            return ZERO
        if kind == "ident_expr":
            local = self._local(expr)
            self.paths[expr.id] = local.path if local is not None else (expr.ident_expr.name,)
            return fixed(SELECT_AND_IDENT)
        if kind == "select_expr":
            return self._select(expr)
        if kind == "call_expr":
            return self._call(expr)
        if kind == "list_expr":
            return self._list(expr)
        if kind == "struct_expr":
            return self._map(expr) if not expr.struct_expr.message_name else self._struct(expr)
        if kind == "comprehension_expr":
            return self._bind(expr) if self._is_bind(expr) else self._comprehension(expr)
        return ZERO

    def _select(self, expr: Any) -> Range:
        select = expr.select_expr
        if select.test_only:
            return self.presence_test_cost + self.cost(select.operand)
        total = self.cost(select.operand)
        if self._type(select.operand).kind in ("map", "struct", "type_param"):
            total = total + fixed(SELECT_AND_IDENT)
        self.paths[expr.id] = (*self._path(select.operand), select.field)
        return total

    def _call(self, expr: Any) -> Range:
        call = expr.call_expr
        if call.function == "dyn" and call.args:  # maybeUnwrapDynCall
            inner = call.args[0]
            total = fixed(1) + self.cost(inner)
            self._set_size(expr, self._size(inner))
            self._set_entry(expr, self._entry(inner))
            return total
        arg_costs, arg_nodes = [], []
        for arg in call.args:
            arg_costs.append(self.cost(arg))
            arg_nodes.append(self._node(arg))
        reference = self.references.get(expr.id)
        overloads = list(reference.overload_id) if reference is not None else []
        if not overloads:
            return ZERO
        total = ZERO
        target = None
        if call.HasField("target"):
            total = total + self.cost(call.target)
            target = self._node(call.target)
        function_cost, result_size = _EMPTY_UNION, None
        for overload in overloads:
            cost, size = self._function(expr, call.function, overload, target, arg_nodes, arg_costs)
            function_cost = function_cost.union(cost)
            if size is not None:
                result_size = size if result_size is None else result_size.union(size)
            if overload in ("index_list", "index_map") and call.args:
                entry = self._entry(call.args[0])
                result_size = entry.value if entry is not None else None
                self.paths[expr.id] = (*self._path(call.args[0]), "@items" if overload == "index_list" else "@values")
            if result_size is None:
                result_size = self._size(expr)
        self._set_size(expr, result_size)
        return total + function_cost

    def _function(self, expr: Any, function: str, overload: str, target: AstNode | None, args: list[AstNode],
                  arg_costs: list[Range]) -> CallEstimate:
        """functionCost: the library's estimate, else cel-go's for its O(n) and O(nm) functions, else 1; plus the
        arguments' costs."""
        arg_sum = ZERO
        for cost in arg_costs:
            arg_sum = arg_sum + cost
        library = self.calls.estimate_call_cost(function, overload, target, args)
        if library is not None:
            return library[0] + arg_sum, library[1]

        def size(node: AstNode) -> Range:
            return node.computed_size if node.computed_size is not None else UNKNOWN

        if overload == "string_format" and target is not None:
            return size(target).factor(STRING_TRAVERSAL) + arg_sum, None
        if overload in ("string_to_bytes", "bytes_to_string", "strings_quote") and len(args) == 1:
            text = size(args[0])
            result = {"string_to_bytes": Range(text.low, _wrap(text.high * 4)),
                      "bytes_to_string": Range(text.low // 4, text.high),
                      "strings_quote": Range(_wrap(text.low + 2), _wrap(text.high * 2 + 2))}[overload]
            return text.factor(STRING_TRAVERSAL) + arg_sum, result
        if overload in ("starts_with_string", "ends_with_string") and len(args) == 1:
            return size(args[0]).factor(STRING_TRAVERSAL) + arg_sum, None
        if overload == "in_list" and len(args) == 2:
            return size(args[1]).factor(1) + arg_sum, None
        if overload == "matches_string" and target is not None and len(args) == 1:
            text_cost = (size(target) + fixed(1)).factor(STRING_TRAVERSAL)
            return text_cost.times(size(args[0]).factor(REGEX_LENGTH)) + arg_sum, None
        if overload == "contains_string" and target is not None and len(args) == 1:
            return (size(target).factor(STRING_TRAVERSAL).times(size(args[0]).factor(STRING_TRAVERSAL)) + arg_sum,
                    None)
        if overload in ("logical_or", "logical_and"):
            return Range(arg_costs[0].low, (arg_costs[0] + arg_costs[1]).high), None
        if overload == "conditional":
            entry = self._entry(args[1].expr)
            self._set_entry(expr, entry.union(self._entry(args[2].expr)) if entry is not None else None)
            return arg_costs[0] + arg_costs[1].union(arg_costs[2]), size(args[1]).union(size(args[2]))
        if overload in ("add_string", "add_bytes", "add_list") and len(args) == 2:
            result = size(args[0]) + size(args[1])
            entry = self._entry(args[0].expr)
            self._set_entry(expr, entry.union(self._entry(args[1].expr)) if entry is not None else None)
            if overload == "add_list":
                return fixed(1) + arg_sum, result
            return result.factor(STRING_TRAVERSAL) + arg_sum, result
        if overload in _COMPARISONS and len(args) == 2:
            smallest = min(size(args[0]).high, size(args[1]).high)
            return Range(1 if smallest > 0 else 0, smallest).factor(STRING_TRAVERSAL) + arg_sum, None
        return fixed(1) + arg_sum, None

    def _list(self, expr: Any) -> Range:
        elements = expr.list_expr.elements
        total, items = ZERO, (_EMPTY_UNION if elements else ZERO)
        for element in elements:
            total = total + self.cost(element)
            items = items.union(self._size_or_unknown(element))
        self._set_entry(expr, _Entry("list", fixed(1), items))
        return total + fixed(LIST_CREATE)

    def _map(self, expr: Any) -> Range:
        entries = expr.struct_expr.entries
        total = ZERO
        keys, values = (_EMPTY_UNION, _EMPTY_UNION) if entries else (ZERO, ZERO)
        for entry in entries:
            total = total + self.cost(entry.map_key) + self.cost(entry.value)
            keys = keys.union(self._size_or_unknown(entry.map_key))
            values = values.union(self._size_or_unknown(entry.value))
        self._set_entry(expr, _Entry("map", keys, values))
        return total + fixed(MAP_CREATE)

    def _struct(self, expr: Any) -> Range:
        total = ZERO
        for entry in expr.struct_expr.entries:
            total = total + self.cost(entry.value)
        return total + fixed(STRUCT_CREATE)

    def _is_bind(self, expr: Any) -> bool:
        comp = expr.comprehension_expr
        condition = comp.loop_condition
        return (comp.iter_range.WhichOneof("kind") == "list_expr" and not comp.iter_range.list_expr.elements
                and condition.WhichOneof("kind") == "const_expr"
                and condition.const_expr.WhichOneof("kind") == "bool_value"
                and not condition.const_expr.bool_value and comp.accu_var != _ACCUMULATORS[0])

    def _bind(self, expr: Any) -> Range:
        comp = expr.comprehension_expr
        total = self.cost(comp.iter_range) + self.cost(comp.accu_init)  # binds keep the empty range's cost
        self._push_local(comp.accu_var, comp.accu_init)
        total = total + self.cost(comp.result)
        self._pop(comp.accu_var)
        self._set_size(expr, self._size(comp.result))
        self._set_entry(expr, self._entry(comp.result))
        return total

    def _push_local(self, name: str, value: Any) -> None:
        self._push(name, self._path(value), self._size(value), self._entry(value), self._declared_type(value))

    def _push_iteration(self, name: str, iter_range: Any, part: str) -> None:
        """pushIterSingle ("single"), pushIterKey ("key") and pushIterValue ("value")."""
        entry = self._entry(iter_range)
        container = entry.container if entry is not None else self._type(iter_range).kind
        if part == "value" or (part == "single" and container == "list"):
            size = entry.value if entry is not None else None
            step = "@items" if container == "list" else "@values"
        else:
            size = entry.key if entry is not None else None
            step = "@indices" if container == "list" and part == "key" else "@keys"
        declared = self._declared_type(iter_range)
        element = None
        if declared.kind == "list" and declared.parameters and step == "@items":
            element = declared.parameters[0]
        elif declared.kind == "map" and len(declared.parameters) == 2 and step in ("@keys", "@values"):
            element = declared.parameters[0 if step == "@keys" else 1]
        self._push(name, (*self._path(iter_range), step), size, declared=element)

    def _comprehension(self, expr: Any) -> Range:
        comp = expr.comprehension_expr
        total = self.cost(comp.iter_range) + self.cost(comp.accu_init)
        self._push_local(comp.accu_var, comp.accu_init)
        if comp.iter_var2:
            self._push_iteration(comp.iter_var, comp.iter_range, "key")
            self._push_iteration(comp.iter_var2, comp.iter_range, "value")
        else:
            self._push_iteration(comp.iter_var, comp.iter_range, "single")
        loop = self.cost(comp.loop_condition)
        step = self.cost(comp.loop_step)
        self._pop(comp.iter_var)
        if comp.iter_var2:
            self._pop(comp.iter_var2)
        total = total + self.cost(comp.result)
        self._pop(comp.accu_var)
        count = self._size_or_unknown(comp.iter_range)
        total = total + count.times(step + loop)
        initial = comp.accu_init.WhichOneof("kind")
        if initial == "const_expr":
            self._set_size(expr, self._size(comp.accu_init))
        elif initial == "list_expr" or (initial == "struct_expr" and not comp.accu_init.struct_expr.message_name):
            self._set_size(expr, count)
            self._set_entry(expr, self._entry(comp.loop_step))
        return total


def estimate_range(serialized_checked_expr: bytes, sizes: SizeEstimator, calls: CallEstimator,
                   presence_test_cost: int = 1) -> Range:
    """cel-go's checker.Cost of a checked expression, with the given estimators."""
    checked = decode(serialized_checked_expr)
    return Coster(checked, sizes, calls, presence_test_cost).cost(checked.expr)


def estimate(serialized_checked_expr: bytes) -> int:
    """The API server's estimated maximum cost of a checked DRA selector (cel-go's CostEstimate.Max): Kubernetes'
    library costs over DRA's size bounds, has() costing nothing (kubernetes/apiserver@v0.35.7:
    pkg/cel/environment/base.go `checker.PresenceTestHasCost(false)`)."""
    sizes = DraSizes()
    return estimate_range(serialized_checked_expr, sizes, KubernetesLibrary(sizes), presence_test_cost=0).high

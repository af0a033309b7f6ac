"""Estimated cost of a DRA selector, as the API server computes it before storing one (limit 1,000,000).

A re-implementation of cel-go's static cost estimator (checker/cost.go) with the Kubernetes library costs
(k8s.io/apiserver pkg/cel/library/cost.go) and the DRA size bounds of `device` (k8s.io/dynamic-resource-allocation
cel: driver <= 63 characters; attribute and capacity maps <= 32 domains of <= 32 ids; ids <= 32 and domains <= 63
characters; attribute strings <= 64). It reads the checked AST cel-expr-python serializes (a cel.expr.CheckedExpr),
decoded with message types built at run time. Checked against the costs upstream's own test table asserts.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
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

    def add(message: Any, name: str, number: int, kind: int, type_name: str | None = None,
            repeated: bool = False, oneof: int | None = None) -> None:
        field = message.field.add(name=name, number=number, type=kind,
                                  label=_F.LABEL_REPEATED if repeated else _F.LABEL_OPTIONAL)
        if type_name:
            field.type_name = type_name
        if oneof is not None:
            field.oneof_index = oneof

    expr_t, type_t = ".cel.expr.Expr", ".cel.expr.Type"
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
    add(type_, "abstract_type", 14, _F.TYPE_MESSAGE, ".google.protobuf.Empty", oneof=0)
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
    pool.Add(file)
    return message_factory.GetMessageClass(pool.FindMessageTypeByName("cel.expr.CheckedExpr"))


CheckedExpr = _checked_expr_class()


def decode(serialized: bytes) -> Any:
    wrapper = any_pb2.Any()
    wrapper.ParseFromString(serialized)
    checked = CheckedExpr()
    checked.ParseFromString(wrapper.value)
    return checked


# --------------------------------------------------------------------------------------------- estimates


@dataclass(frozen=True)
class Range:
    """A [low, high] estimate of a cost or a size, saturating at 2^64 - 1 as cel-go's uint64 arithmetic does."""

    low: int
    high: int

    def __add__(self, other: Range) -> Range:
        return Range(min(self.low + other.low, UINT64_MAX), min(self.high + other.high, UINT64_MAX))

    def times(self, other: Range) -> Range:
        return Range(min(self.low * other.low, UINT64_MAX), min(self.high * other.high, UINT64_MAX))

    def factor(self, per_unit: float) -> Range:
        return Range(_ceil(self.low * per_unit), _ceil(self.high * per_unit))

    def union(self, other: Range) -> Range:
        return Range(min(self.low, other.low), max(self.high, other.high))


def _ceil(value: float) -> int:
    return UINT64_MAX if value >= 2.0**64 else math.ceil(value)


def _replaced(text: Range, old: Range, new: Range) -> Range:
    """The size of `text.replace(old, new)` as Kubernetes estimates it (kubernetes/apiserver@v0.34.0:
    pkg/cel/library/cost.go, EstimateCallCost "replace"): at most, the shortest `old` replaced by the longest `new`
    as often as it fits (around every character when `old` may be empty); at least, the longest by the shortest."""
    if old.low == 0:
        count_high, kept_high = min(text.high + 1, UINT64_MAX), text.high
    elif new.high <= old.low:
        count_high, kept_high = 0, text.high
    else:
        count_high, kept_high = _ceil(float(text.high) / float(old.low)), 0
    if old.high == 0:
        count_low, kept_low = min(text.low + 1, UINT64_MAX), text.low
    elif old.high <= new.low:
        count_low, kept_low = 0, text.low
    else:
        count_low, kept_low = _ceil(float(text.low) / float(old.high)), 0
    return Range(count_low, count_high).times(new) + Range(kept_low, kept_high)


def fixed(value: int) -> Range:
    return Range(value, value)


UNKNOWN = Range(0, UINT64_MAX)
ZERO = fixed(0)

# Bounds of the DRA `device` variable by field path (cel-go paths: field names, @keys, @values, @items).
_MAP_BOUND = 32
_DEVICE_SIZES: dict[tuple[str, ...], Range] = {
    ("device", "driver"): Range(0, 63),
    ("device", "attributes"): Range(0, _MAP_BOUND),
    ("device", "capacity"): Range(0, _MAP_BOUND),
    ("device", "attributes", "@keys"): Range(0, 63),
    ("device", "capacity", "@keys"): Range(0, 63),
    ("device", "attributes", "@values"): Range(0, _MAP_BOUND),
    ("device", "capacity", "@values"): Range(0, _MAP_BOUND),
    ("device", "attributes", "@values", "@keys"): Range(0, 32),
    ("device", "capacity", "@values", "@keys"): Range(0, 32),
}
_ATTRIBUTE_STRING = Range(0, 64)


def _device_size(path: tuple[str, ...]) -> Range | None:
    if path in _DEVICE_SIZES:
        return _DEVICE_SIZES[path]
    # device.attributes[d].<id> (or [d]["id"]): an attribute value; strings are bounded at 64 characters.
    if len(path) == 4 and path[:3] == ("device", "attributes", "@values") and not path[3].startswith("@"):
        return _ATTRIBUTE_STRING
    if len(path) == 4 and path[:3] == ("device", "attributes", "@values") and path[3] == "@values":
        return _ATTRIBUTE_STRING
    return None


@dataclass
class _Local:
    path: tuple[str, ...] | None
    size: Range | None
    entry: tuple[Range, Range, str] | None  # (key size, value size, "list" or "map")


class _Coster:
    def __init__(self, checked: Any):
        self.references = checked.reference_map
        self.types = checked.type_map
        self.paths: dict[int, tuple[str, ...]] = {}
        self.sizes: dict[int, Range] = {}
        self.entries: dict[int, tuple[Range, Range, str]] = {}
        self.locals: dict[str, list[_Local]] = {}

    # ----------------------------------------------------------------------------------- helpers

    def _kind(self, expr: Any) -> str:
        t = self.types.get(expr.id)
        if t is None:
            return "dyn"
        which = t.WhichOneof("type_kind")
        if which == "message_type":
            return "struct"
        if which == "map_type":
            return "map"
        if which == "list_type":
            return "list"
        if which == "type_param":
            return "type_param"
        if which == "primitive":
            return {1: "bool", 2: "int", 3: "uint", 4: "double", 5: "string", 6: "bytes"}.get(t.primitive, "dyn")
        if which == "well_known":
            return {2: "timestamp", 3: "duration"}.get(t.well_known, "dyn")
        return "dyn" if which in (None, "dyn") else which

    def _peek(self, name: str) -> _Local | None:
        stack = self.locals.get(name)
        return stack[-1] if stack else None

    def _path(self, expr: Any) -> tuple[str, ...] | None:
        if expr.WhichOneof("kind") == "ident_expr":
            local = self._peek(expr.ident_expr.name)
            if local is not None:
                return local.path
        return self.paths.get(expr.id)

    def _size(self, expr: Any) -> Range | None:
        if expr.id in self.sizes:
            return self.sizes[expr.id]
        kind = expr.WhichOneof("kind")
        if kind == "const_expr":
            constant = expr.const_expr
            which = constant.WhichOneof("kind")
            if which == "string_value":
                return fixed(len(constant.string_value))
            if which == "bytes_value":
                return fixed(len(constant.bytes_value))
            return fixed(1) if which else None
        if kind == "list_expr":
            return fixed(len(expr.list_expr.elements))
        if kind == "struct_expr" and not expr.struct_expr.message_name:
            return fixed(len(expr.struct_expr.entries))
        path = self._path(expr)
        if path:
            size = _device_size(path)
            if size is not None:
                self.sizes[expr.id] = size
                return size
        if self._kind(expr) in ("bool", "double", "duration", "int", "timestamp", "uint"):
            return fixed(1)
        if kind == "ident_expr":
            local = self._peek(expr.ident_expr.name)
            if local is not None and local.size is not None:
                return local.size
        return None

    def _size_or_unknown(self, expr: Any) -> Range:
        return self._size(expr) or UNKNOWN

    def _entry(self, expr: Any) -> tuple[Range, Range, str] | None:
        if expr.id in self.entries:
            return self.entries[expr.id]
        if expr.WhichOneof("kind") == "ident_expr":
            local = self._peek(expr.ident_expr.name)
            if local is not None:
                return local.entry
        return None

    def _push(self, name: str, path: tuple[str, ...] | None, size: Range | None,
              entry: tuple[Range, Range, str] | None = None) -> None:
        self.locals.setdefault(name, []).append(_Local(path, size, entry))

    def _pop(self, name: str) -> None:
        self.locals[name].pop()

    # ----------------------------------------------------------------------------------- cost

    def cost(self, expr: Any) -> Range:
        kind = expr.WhichOneof("kind")
        if kind == "const_expr":
            return ZERO
        if kind == "ident_expr":
            local = self._peek(expr.ident_expr.name)
            self.paths[expr.id] = local.path if local is not None and local.path else (expr.ident_expr.name,)
            return fixed(SELECT_AND_IDENT)
        if kind == "select_expr":
            return self._select(expr)
        if kind == "call_expr":
            return self._call(expr)
        if kind == "list_expr":
            total, items = ZERO, (Range(UINT64_MAX, 0) if expr.list_expr.elements else ZERO)
            for element in expr.list_expr.elements:
                total = total + self.cost(element)
                items = items.union(self._size_or_unknown(element))
            self.entries[expr.id] = (fixed(1), items, "list")
            return total + fixed(LIST_CREATE)
        if kind == "struct_expr":
            return self._struct(expr)
        if kind == "comprehension_expr":
            return self._comprehension(expr)
        return ZERO

    def _select(self, expr: Any) -> Range:
        select = expr.select_expr
        if select.test_only:
            return fixed(SELECT_AND_IDENT) + self.cost(select.operand)
        total = self.cost(select.operand)
        if self._kind(select.operand) in ("map", "struct", "type_param"):
            total = total + fixed(SELECT_AND_IDENT)
        base = self._path(select.operand)
        if base:
            self.paths[expr.id] = (*base, select.field)
        return total

    def _struct(self, expr: Any) -> Range:
        struct = expr.struct_expr
        total = ZERO
        if struct.message_name:
            for entry in struct.entries:
                total = total + self.cost(entry.value)
            return total + fixed(STRUCT_CREATE)
        keys, values = (Range(UINT64_MAX, 0), Range(UINT64_MAX, 0)) if struct.entries else (ZERO, ZERO)
        for entry in struct.entries:
            total = total + self.cost(entry.map_key) + self.cost(entry.value)
            keys = keys.union(self._size_or_unknown(entry.map_key))
            values = values.union(self._size_or_unknown(entry.value))
        self.entries[expr.id] = (keys, values, "map")
        return total + fixed(MAP_CREATE)

    def _comprehension(self, expr: Any) -> Range:
        comp = expr.comprehension_expr
        is_bind = (comp.iter_range.WhichOneof("kind") == "list_expr" and not comp.iter_range.list_expr.elements
                   and comp.loop_condition.WhichOneof("kind") == "const_expr"
                   and comp.loop_condition.const_expr.WhichOneof("kind") == "bool_value"
                   and not comp.loop_condition.const_expr.bool_value and not comp.accu_var.startswith("@"))
        total = self.cost(comp.iter_range) + self.cost(comp.accu_init)
        self._push(comp.accu_var, self._path(comp.accu_init), self._size(comp.accu_init), self._entry(comp.accu_init))
        if is_bind:
            total = total + self.cost(comp.result)
            self._pop(comp.accu_var)
            if self._size(comp.result) is not None:
                self.sizes[expr.id] = self._size_or_unknown(comp.result)
            return total
        entry = self._entry(comp.iter_range)
        container = entry[2] if entry else self._kind(comp.iter_range)
        base = self._path(comp.iter_range)
        if comp.iter_var2:
            self._push(comp.iter_var, (*base, "@indices" if container == "list" else "@keys") if base else None,
                       entry[0] if entry else None)
            self._push(comp.iter_var2, (*base, "@items" if container == "list" else "@values") if base else None,
                       entry[1] if entry else None)
        else:
            size = (entry[1] if container == "list" else entry[0]) if entry else None
            self._push(comp.iter_var, (*base, "@items" if container == "list" else "@keys") if base else None, size)
        loop = self.cost(comp.loop_condition)
        step = self.cost(comp.loop_step)
        self._pop(comp.iter_var)
        if comp.iter_var2:
            self._pop(comp.iter_var2)
        total = total + self.cost(comp.result)
        self._pop(comp.accu_var)
        count = self._size_or_unknown(comp.iter_range)
        return total + count.times(step + loop)

    def _call(self, expr: Any) -> Range:
        call = expr.call_expr
        if call.function == "dyn" and call.args:
            inner = call.args[0]
            result = fixed(1) + self.cost(inner)
            if self._size(inner) is not None:
                self.sizes[expr.id] = self._size_or_unknown(inner)
            return result
        arg_costs = [self.cost(arg) for arg in call.args]
        reference = self.references.get(expr.id)
        overloads = list(reference.overload_id) if reference is not None else []
        if not overloads:
            return ZERO
        total = ZERO
        target = call.target if call.HasField("target") else None
        if target is not None:
            total = total + self.cost(target)
        function_cost = Range(UINT64_MAX, 0)
        for overload in overloads:
            function_cost = function_cost.union(self._function(expr, call.function, overload, target, list(call.args),
                                                               arg_costs))
            if overload in ("index_list", "index_map") and call.args:
                base = self._path(call.args[0])
                if base:
                    self.paths[expr.id] = (*base, "@items" if overload == "index_list" else "@values")
                entry = self._entry(call.args[0])
                if entry is not None:
                    self.sizes[expr.id] = entry[1]
        return total + function_cost

    def _function(self, expr: Any, function: str, overload: str, target: Any, args: list[Any],
                  arg_costs: list[Range]) -> Range:
        args_total = ZERO
        for cost in arg_costs:
            args_total = args_total + cost
        # Kubernetes' library costs (by function name), then cel-go's (by overload id), else 1.
        if function in ("sign", "asInteger", "isInteger", "asApproximateFloat", "isGreaterThan", "isLessThan",
                        "compareTo", "add", "sub"):
            return fixed(1) + args_total
        if target is not None:
            size = self._size_or_unknown(target)
            if function in ("lowerAscii", "upperAscii", "substring", "trim"):
                self.sizes[expr.id] = size
                return size.factor(STRING_TRAVERSAL) + args_total
            if function == "split":
                self.sizes[expr.id] = Range(0, size.high)
                return size.factor(2 * STRING_TRAVERSAL) + args_total
            if function == "replace" and len(args) >= 2:
                self.sizes[expr.id] = _replaced(size, self._size_or_unknown(args[0]), self._size_or_unknown(args[1]))
                return size.factor(2 * STRING_TRAVERSAL) + args_total
            if function in ("find", "findAll") and args:
                string_cost = (size + fixed(1)).factor(STRING_TRAVERSAL)
                regex_cost = self._size_or_unknown(args[0]).factor(REGEX_LENGTH)
                self.sizes[expr.id] = Range(0, size.high)
                return string_cost.times(regex_cost) + args_total
        if overload == "matches_string" and target is not None and args:
            string_cost = (self._size_or_unknown(target) + fixed(1)).factor(STRING_TRAVERSAL)
            regex_cost = self._size_or_unknown(args[0]).factor(REGEX_LENGTH)
            return string_cost.times(regex_cost) + args_total
        if overload == "contains_string" and target is not None and args:
            return (self._size_or_unknown(target).factor(STRING_TRAVERSAL)
                    .times(self._size_or_unknown(args[0]).factor(STRING_TRAVERSAL)) + args_total)
        if overload in ("starts_with_string", "ends_with_string") and args:
            return self._size_or_unknown(args[0]).factor(STRING_TRAVERSAL) + args_total
        if overload == "in_list" and len(args) == 2:
            return self._size_or_unknown(args[1]).factor(1) + args_total
        if overload in ("logical_and", "logical_or"):
            return Range(arg_costs[0].low, (arg_costs[0] + arg_costs[1]).high)
        if overload == "conditional":
            self.sizes[expr.id] = self._size_or_unknown(args[1]).union(self._size_or_unknown(args[2]))
            return arg_costs[0] + arg_costs[1].union(arg_costs[2])
        if overload in ("add_string", "add_bytes", "add_list") and len(args) == 2:
            size = self._size_or_unknown(args[0]) + self._size_or_unknown(args[1])
            self.sizes[expr.id] = size
            if overload == "add_list":
                return fixed(1) + args_total
            return size.factor(STRING_TRAVERSAL) + args_total
        if overload in ("less_string", "greater_string", "less_equals_string", "greater_equals_string",
                        "less_bytes", "greater_bytes", "less_equals_bytes", "greater_equals_bytes", "equals",
                        "not_equals") and len(args) == 2:
            smallest = min(self._size_or_unknown(args[0]).high, self._size_or_unknown(args[1]).high)
            return Range(1 if smallest > 0 else 0, smallest).factor(STRING_TRAVERSAL) + args_total
        return fixed(1) + args_total


def estimate(serialized_checked_expr: bytes) -> int:
    """The estimated maximum cost of a checked selector (cel-go's CostEstimate.Max)."""
    checked = decode(serialized_checked_expr)
    return _Coster(checked).cost(checked.expr).high

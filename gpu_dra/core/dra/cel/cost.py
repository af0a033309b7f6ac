"""Estimated cost of a DRA selector, as the API server computes it before storing one (limit 1,000,000).

cel-go's static cost estimator (google/cel-go@v0.26.0:checker/cost.go, what Kubernetes 1.34 and 1.35 vendor), step
for step, with Kubernetes' library costs (kubernetes/apiserver@v0.35.7:pkg/cel/library/cost.go) and DRA's size
estimator (kubernetes/dynamic-resource-allocation@v0.35.0:cel/compile.go: driver <= 63 characters; attribute and
capacity maps <= 32 domains of <= 32 ids; domains <= 63 and ids <= 32 characters; attribute values <= 64). It reads
the checked AST cel-expr-python serializes (a cel.expr.CheckedExpr), decoded with message types built at run time.
tests/test_cel_cost_upstream.py checks it against the costs upstream's own test tables assert.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from gpu_dra.core.dra.cel.checked_expr import decode
from gpu_dra.core.dra.cel.cost_model import (
    DYN,
    EMPTY_UNION,
    OPTIONAL_DYN,
    REGEX_LENGTH,
    STRING_TRAVERSAL,
    UNKNOWN,
    ZERO,
    AstNode,
    CallEstimate,
    CallEstimator,
    CelType,
    Range,
    SizeEstimator,
    cel_type,
    fixed,
    is_scalar,
    wrap,
)
from gpu_dra.core.dra.cel.kubernetes_cost import DraSizes, KubernetesLibrary

MAX_ESTIMATED_COST = 1_000_000  # resource.CELSelectorExpressionMaxCost
SELECT_AND_IDENT, LIST_CREATE, MAP_CREATE, STRUCT_CREATE = 1, 10, 30, 40

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
        if is_scalar(self._type(expr)):
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
        if checked not in (DYN, OPTIONAL_DYN):
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
        function_cost, result_size = EMPTY_UNION, None
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
            result = {"string_to_bytes": Range(text.low, wrap(text.high * 4)),
                      "bytes_to_string": Range(text.low // 4, text.high),
                      "strings_quote": Range(wrap(text.low + 2), wrap(text.high * 2 + 2))}[overload]
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
        total, items = ZERO, (EMPTY_UNION if elements else ZERO)
        for element in elements:
            total = total + self.cost(element)
            items = items.union(self._size_or_unknown(element))
        self._set_entry(expr, _Entry("list", fixed(1), items))
        return total + fixed(LIST_CREATE)

    def _map(self, expr: Any) -> Range:
        entries = expr.struct_expr.entries
        total = ZERO
        keys, values = (EMPTY_UNION, EMPTY_UNION) if entries else (ZERO, ZERO)
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

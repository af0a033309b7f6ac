"""Rewrite a compiled selector so the calls whose cost grows with their operands are charged before they run.

cel-cpp has no cost tracker, and a Python function can neither replace one of its built-ins nor look at a call's
operands, so the checked AST is rewritten before the program is planned. A guarded call `f(x, y)` becomes

    cel.bind(__t0, x, cel.bind(__t1, y, __gpu_dra_ok__()
        ? (__gpu_dra_guard__('op', [size(__t0), size(__t1)]) ? f(__t0, __t1) : __t0) : __t0))

(a template compiled once, spliced in with fresh ids): each operand is evaluated once, the guard sees only sizes
(ints, never copies of the values) and charges the call in gpu_dra.core.dra.cel.budget, raising instead of letting
it run past a bound; once past, `__gpu_dra_ok__` fails first, so nothing is sized again. `replace` runs in Python
instead, where its result size is known before it is built.

Calls that build values (`+` on strings, bytes and lists, join, format, strings.quote, split, replace) are always
guarded. Copies and traversals (lowerAscii, substring, conversions, ==, <, contains, startsWith, matches, in,
indexOf, ...) only where an operand may hold a built value: the others read literals and device fields, which the
API's length limits bound, and run unguarded at full speed.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import Any

from cel_expr_python import cel
from cel_expr_python.ext import ext_bindings
from google.protobuf import any_pb2

from gpu_dra.core.dra.cel import budget
from gpu_dra.core.dra.cel.checked_expr import decode

GUARD, OK, ADD_SIZE = "__gpu_dra_guard__", "__gpu_dra_ok__", "__gpu_dra_size__"
_REPLACE = "@gpu_dra.replace"
_UNBOUNDED = budget.MAX_BUILT + 1


def _size(value: str) -> str:
    return f"(type({value}) in [string, bytes, list, map] ? size({value}) : 1)"


def _printed(value: str) -> str:
    return f"{budget.FORMATTED_PER_CHARACTER} * {_size(value)} + {budget.FORMATTED_SCALAR}"


# What a template checks before the call, over its operands __t0, __t1, ... Sums over elements are added up in
# Python by `exists` (whose accumulator is a bool: map() would copy its list at every step), which stops early once
# the sum passes the bound.
_CONDITIONS = {
    "+": (f"(type(__t0) == list ? {GUARD}('add_list', [size(__t0), size(__t1)]) : "
          f"(type(__t0) in [string, bytes] ? {GUARD}('add_string', [size(__t0), size(__t1)]) : true))"),
    "join": f"(__t0.exists(__e, {ADD_SIZE}(size(__e))) || true) && {GUARD}('join', [size(__t0), {{separator}}])",
    # format's arguments, one level into lists and maps; a container nested deeper cannot be bounded
    "format": (f"(__t1.exists(__e, type(__e) == list ? __e.exists(__k, {ADD_SIZE}(type(__k) in [list, map] ? "
               f"{_UNBOUNDED} : {_printed('__k')})) : (type(__e) == map ? __e.exists(__k, {ADD_SIZE}("
               f"type(__e[__k]) in [list, map] ? {_UNBOUNDED} : {_printed('__k')} + {_printed('__e[__k]')})) : "
               f"{ADD_SIZE}({_printed('__e')}))) || true) && {GUARD}('format', [size(__t0), 0])"),
}


@dataclass(frozen=True)
class _Guarded:
    op: str  # a budget guard
    operands: int  # receiver first
    always: bool  # the call builds a value; otherwise guarded only on an operand that may hold one


def _table() -> dict[str, _Guarded]:
    table: dict[str, _Guarded] = {}

    def add(op: str, operands: int, always: bool, *overloads: str) -> None:
        table.update((overload, _Guarded(op, operands, always)) for overload in overloads)

    add("join", 1, True, "list_join")
    add("join", 2, True, "list_join_string")
    add("format", 2, True, "string_format")
    add("quote", 1, True, "strings_quote")
    add("split", 2, True, "string_split_string")
    add("split", 3, True, "string_split_string_int")
    add("copy", 1, False, "string_lower_ascii", "string_upper_ascii", "string_trim", "string_to_bytes",
        "bytes_to_string")
    add("copy", 2, False, "string_substring_int")
    add("copy", 3, False, "string_substring_int_int")
    add("reverse", 1, False, "string_reverse")
    add("compare", 2, False, "equals", "not_equals", *(f"{op}_{kind}" for op in (
        "less", "less_equals", "greater", "greater_equals") for kind in ("string", "bytes")))
    add("contains", 2, False, "contains_string")
    add("affix", 2, False, "starts_with_string", "ends_with_string")
    add("matches", 2, False, "matches", "matches_string")
    add("in_list", 2, False, "in_list")
    add("index_of", 2, False, "string_index_of_string", "string_last_index_of_string")
    add("index_of", 3, False, "string_index_of_string_int", "string_last_index_of_string_int")
    return table


GUARDED = _table()
_REPLACES = {"string_replace_string_string": "gpu_dra_replace", "string_replace_string_string_int":
             "gpu_dra_replace_int"}
_CONCATENATIONS = {"add_string", "add_bytes", "add_list"}
_SMALL_PRIMITIVES = {1, 2, 3, 4}  # bool, int, uint, double (cel.expr.Type.PrimitiveType)
_SMALL_WELL_KNOWN = {2, 3}  # timestamp, duration (cel.expr.Type.WellKnownType)


def function_decls() -> list[Any]:
    """The guard functions and the Python `replace`, for the evaluation environment."""
    t = cel.Type
    return [
        cel.FunctionDecl(GUARD, [cel.Overload("gpu_dra_guard", return_type=t.BOOL, parameters=[t.STRING, t.List(t.INT)],
                                              impl=budget.guard)]),
        cel.FunctionDecl(OK, [cel.Overload("gpu_dra_ok", return_type=t.BOOL, parameters=[], impl=budget.ok)]),
        cel.FunctionDecl(ADD_SIZE, [cel.Overload("gpu_dra_size", return_type=t.BOOL, parameters=[t.INT],
                                                 impl=budget.add_size)]),
        cel.FunctionDecl(_REPLACE, [
            cel.Overload("gpu_dra_replace", return_type=t.STRING, parameters=[t.STRING] * 3, is_member=True,
                         impl=budget.replace),
            cel.Overload("gpu_dra_replace_int", return_type=t.STRING, parameters=[t.STRING] * 3 + [t.INT],
                         is_member=True, impl=budget.replace)]),
    ]


@cache
def _template(op: str, operands: int) -> Any:
    """The checked guard template for `op` over `operands` operands; `map` guards a map() or filter() range."""
    if op in _CONDITIONS:
        condition = _CONDITIONS[op].replace("{separator}", "size(__t1)" if operands == 2 else "0")
    else:
        condition = f"{GUARD}('{op}', [{', '.join(_size(f'__t{i}') for i in range(operands))}])"
    call = "__t0" if op == "map" else "__call__"
    source = f"{OK}() ? ({condition} ? {call} : __t0) : __t0"
    for i in reversed(range(operands)):
        source = f"cel.bind(__t{i}, __x{i}, {source})"
    variables = {f"__x{i}": cel.Type.DYN for i in range(operands)} | {"__call__": cel.Type.DYN}
    env = cel.NewEnv(variables=variables, extensions=[ext_bindings.ExtBindings()], functions=function_decls())
    return decode(env.compile(source).serialize())


def _children(expr: Any) -> list[Any]:
    kind = expr.WhichOneof("kind")
    if kind == "select_expr":
        return [expr.select_expr.operand]
    if kind == "call_expr":
        call = expr.call_expr
        return ([call.target] if call.HasField("target") else []) + list(call.args)
    if kind == "list_expr":
        return list(expr.list_expr.elements)
    if kind == "struct_expr":
        return [part for entry in expr.struct_expr.entries
                for part in ((entry.map_key,) if entry.HasField("map_key") else ()) + (entry.value,)]
    if kind == "comprehension_expr":
        comp = expr.comprehension_expr
        return [comp.iter_range, comp.accu_init, comp.loop_condition, comp.loop_step, comp.result]
    return []


def _ids(expr: Any) -> list[int]:
    found = [expr.id]
    if expr.WhichOneof("kind") == "struct_expr":
        found += [entry.id for entry in expr.struct_expr.entries]
    for child in _children(expr):
        found += _ids(child)
    return found


class _Rewriter:
    def __init__(self, checked: Any):
        self.checked = checked
        self.next_id = max(_ids(checked.expr)) + 1
        self.changed = False

    def _fresh(self) -> int:
        self.next_id += 1
        return self.next_id - 1

    def _ident(self, name: str) -> Any:
        ident = type(self.checked.expr)()
        ident.id = self._fresh()
        ident.ident_expr.name = name
        self.checked.reference_map[ident.id].name = name
        return ident

    def _splice(self, template: Any, expr: Any, bindings: dict[str, Any]) -> None:
        """Copy the template's node into `expr` with fresh ids; placeholder identifiers become their bindings."""
        if expr.WhichOneof("kind") == "ident_expr" and expr.ident_expr.name in bindings:
            expr.CopyFrom(bindings[expr.ident_expr.name])
            return
        old, expr.id = expr.id, self._fresh()
        if old in template.reference_map:
            self.checked.reference_map[expr.id].CopyFrom(template.reference_map[old])
        if old in template.type_map:
            self.checked.type_map[expr.id].CopyFrom(template.type_map[old])
        for child in _children(expr):
            self._splice(template, child, bindings)

    def _guard(self, expr: Any, op: str) -> None:
        """Replace the call (or, for `map`, the range) `expr` by its guard template."""
        self.changed = True
        call = type(expr)()
        call.CopyFrom(expr)
        operands = [call] if op == "map" else _children(call)
        bindings = {"__call__": call}
        for i, operand in enumerate(operands):
            bindings[f"__x{i}"] = type(expr)()
            bindings[f"__x{i}"].CopyFrom(operand)
            operand.CopyFrom(self._ident(f"__t{i}"))
        template = _template(op, len(operands))
        expr.CopyFrom(template.expr)
        self._splice(template, expr, bindings)

    def _small_by_type(self, expr: Any) -> bool:
        t = self.checked.type_map.get(expr.id)
        if t is None:
            return False
        which = t.WhichOneof("type_kind")
        return ((which == "primitive" and t.primitive in _SMALL_PRIMITIVES)
                or (which == "well_known" and t.well_known in _SMALL_WELL_KNOWN))

    def visit(self, expr: Any, scope: dict[str, bool]) -> bool:
        """Rewrite the calls under `expr`; whether its value is small (cannot hold a value a guarded call built)."""
        kind = expr.WhichOneof("kind")
        if kind == "ident_expr":
            return scope.get(expr.ident_expr.name, True)  # `device` and other globals: bounded by the API
        if kind == "comprehension_expr":
            comp = expr.comprehension_expr
            items = self.visit(comp.iter_range, scope)
            if comp.accu_var == "@result" and comp.accu_init.WhichOneof("kind") == "list_expr":  # map(), filter()
                self._guard(comp.iter_range, "map")
            initial = self.visit(comp.accu_init, scope)
            inner = {**scope, comp.iter_var: items, comp.accu_var: initial}
            if comp.iter_var2:
                inner[comp.iter_var2] = items
            condition = self.visit(comp.loop_condition, inner)
            step = self.visit(comp.loop_step, inner)
            return condition and self.visit(comp.result, {**scope, comp.accu_var: initial and step})
        small = [self.visit(child, scope) for child in _children(expr)]
        if kind != "call_expr":
            return all(small)
        typed = self._small_by_type(expr)
        call = expr.call_expr
        reference = self.checked.reference_map.get(expr.id)
        overloads = list(reference.overload_id) if reference is not None else []
        accumulating = bool(call.args) and call.args[0].ident_expr.name == "@result"  # map() and filter()
        if call.function == "_+_" and not accumulating and _CONCATENATIONS & set(overloads):
            self._guard(expr, "+")
            return False
        if overloads and overloads[0] in _REPLACES:
            self.changed = True
            call.function = _REPLACE
            del reference.overload_id[:]
            reference.overload_id.append(_REPLACES[overloads[0]])
            return False
        guarded = next((GUARDED[overload] for overload in overloads if overload in GUARDED), None)
        if guarded is not None and guarded.operands == len(small) and (guarded.always or not all(small)):
            self._guard(expr, guarded.op)
        return typed or (all(small) and not (guarded and guarded.always))


def instrument(program: Any, env: Any) -> Any:
    """The program with its growing calls charged to the evaluation's budget, re-planned in `env`; the program
    itself when it has none (most selectors: they compare device fields with literals)."""
    serialized = program.serialize()
    checked = decode(serialized)
    rewriter = _Rewriter(checked)
    rewriter.visit(checked.expr, {})
    if not rewriter.changed:
        return program
    wrapper = any_pb2.Any()
    wrapper.ParseFromString(serialized)
    wrapper.value = checked.SerializeToString()
    return env.deserialize(wrapper.SerializeToString())

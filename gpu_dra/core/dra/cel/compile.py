"""Compile a DRA selector as the API server does when a DeviceClass or claim is written.

Limits and messages follow k8s.io/dynamic-resource-allocation/cel (compile.go) and the resource API validation:
at most 10 Ki characters, a bool (or dyn) result, regex literals valid. Two environments per (Kubernetes version,
DRAConsumableCapacity): one types `device` as kubernetes.DRADevice for checking, one evaluates it as a map.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from typing import Any

from cel_expr_python import cel
from cel_expr_python.ext import ext_bindings, ext_optional, ext_strings

from gpu_dra.core.dra.cel import cost, instrument, library, regex
from gpu_dra.core.dra.cel.checked_expr import decode
from gpu_dra.core.dra.cel.lexer import Token, regex_literals, tokenize, with_empty_domain_default

MAX_EXPRESSION_LENGTH = 10 * 1024  # resource.CELSelectorExpressionMaxLength


# Kubernetes base-environment libraries (kubernetes/apiserver@v0.34.0:pkg/cel/environment/base.go;
# docs/sources.md#cel-environment) this engine does not implement yet: lists, sets, IP, CIDR, URLs, ext.Lists and
# two-variable comprehensions.
UNIMPLEMENTED_NAMES = frozenset({
    "isSorted", "sum", "min", "max", "indexOf", "lastIndexOf", "sets", "lists", "ip", "isIP", "cidr", "isCIDR",
    "url", "isURL", "getScheme", "getHost", "getHostname", "getPort", "getEscapedPath", "getQuery", "family",
    "isCanonical", "isLoopback", "isGlobalUnicast", "isUnspecified", "isLinkLocalMulticast", "isLinkLocalUnicast",
    "containsIP", "containsCIDR", "prefixLength", "masked", "slice", "flatten", "distinct", "sort", "sortBy",
    "first", "last", "transformList", "transformMap", "transformMapEntry"})
_NUMERIC = ("int", "uint", "double")


def _unimplemented(expression: str, message: str) -> str | None:
    """What the expression uses that Kubernetes accepts but this engine lacks, or None."""
    undeclared = re.search(r"undeclared reference to '([\w.]+)'", message)
    if undeclared and undeclared.group(1) in UNIMPLEMENTED_NAMES:
        return f"the Kubernetes CEL function or library {undeclared.group(1)!r}"
    if re.search(r"\.(all|exists|existsOne|exists_one|transformList|transformMap)\(\s*\w+\s*,\s*\w+\s*,",
                 expression):
        return "two-variable comprehensions"
    compared = re.search(r"no matching overload for '_(?:<|<=|>|>=|==|!=)_' applied to '\((\w+), (\w+)\)'", message)
    if compared and {compared.group(1), compared.group(2)} <= set(_NUMERIC) and compared.group(1) != compared.group(2):
        return "comparisons across numeric types (CrossTypeNumericComparisons)"
    return None


class CompileError(Exception):
    """Why the API server would reject the expression; `kind` is syntax, type, result, length, regex or cost, or
    unsupported: the API server accepts it, but this engine cannot check it (message says what it lacks)."""

    def __init__(self, kind: str, message: str):
        self.kind = kind
        self.message = message
        super().__init__(message)


@dataclass(frozen=True)
class CompiledSelector:
    expression: str
    tokens: tuple[Token, ...]
    program: Any  # cel Expression over the evaluation env
    consumable_capacity: bool
    estimated_cost: int


def _extensions() -> list[Any]:
    # Strings v2, Bindings (cel.bind) and optionals are in the Kubernetes base environment
    # (kubernetes/apiserver@v0.34.0:pkg/cel/environment/base.go).
    return [ext_optional.ExtOptional(), ext_strings.ExtStrings(), ext_bindings.ExtBindings()]


@cache
def _checking_env(consumable_capacity: bool) -> Any:
    device_type = "kubernetes.DRADeviceConsumableCapacity" if consumable_capacity else "kubernetes.DRADevice"
    return cel.NewEnv(library.POOL, variables={"device": cel.Type(device_type)}, extensions=_extensions(),
                      functions=library.function_decls())


@cache
def _evaluation_env() -> Any:
    return cel.NewEnv(library.POOL, variables={"device": cel.Type.Map(cel.Type.STRING, cel.Type.DYN)},
                      extensions=_extensions(), functions=library.function_decls() + instrument.function_decls())


_ERROR_HEAD = re.compile(r"^(?:INVALID_ARGUMENT: )?ERROR: <input>:(\d+):(\d+): ")


def _clean(message: str) -> str:
    """The first diagnostic of cel-cpp's report, as `line:column: message` (the snippet lines are dropped)."""
    first = message.strip().splitlines()[0]
    match = _ERROR_HEAD.match(first)
    text = _ERROR_HEAD.sub("", first).removesuffix(" [INVALID_ARGUMENT]")
    return f"{match.group(1)}:{match.group(2)}: {text}" if match else text


def _attribute_ranged_over(expr: Any) -> str | None:
    """The attribute a macro (exists, all, exists_one, map, filter) iterates over, where one does: upstream types
    attribute values `any` without DRAListTypeAttributes, and cel-go's checker takes only a list, map or dyn as a
    comprehension's range (kubernetes/dynamic-resource-allocation@v0.36.2:cel/compile.go newCompiler, "use DynType
    instead of AnyType so that iterate functions can work"); cel-cpp here types them dyn, so it is checked apart.
    A domain's map bound to a name (cel.bind, itself a comprehension) is followed through the name."""
    pending: list[tuple[Any, dict[str, str]]] = [(expr, {})]
    while pending:
        node, bound = pending.pop()
        kind = node.WhichOneof("kind")
        if kind == "comprehension_expr":
            loop = node.comprehension_expr
            name = _attribute_read(loop.iter_range, bound)
            if name is not None:
                return name
            domain = _domain_map(loop.accu_init, bound)
            inner = {k: v for k, v in bound.items() if k not in (loop.iter_var, loop.iter_var2, loop.accu_var)}
            if domain is not None:
                inner[loop.accu_var] = domain
            pending += [(loop.iter_range, bound), (loop.accu_init, bound), (loop.loop_condition, inner),
                        (loop.loop_step, inner), (loop.result, inner)]
        elif kind == "select_expr":
            pending.append((node.select_expr.operand, bound))
        elif kind == "call_expr":
            call = node.call_expr
            pending += [(part, bound) for part in ([call.target] if call.HasField("target") else []) + list(call.args)]
        elif kind == "list_expr":
            pending += [(part, bound) for part in node.list_expr.elements]
        elif kind == "struct_expr":
            pending += [(part, bound) for entry in node.struct_expr.entries
                        for part in ((entry.map_key,) if entry.HasField("map_key") else ()) + (entry.value,)]
    return None


def _attribute_read(node: Any, bound: dict[str, str]) -> str | None:
    """`domain/name` where the node reads one attribute's value (`device.attributes[D].name` or `[D][name]`)."""
    if node.WhichOneof("kind") == "select_expr" and not node.select_expr.test_only:
        domain, name = _domain_map(node.select_expr.operand, bound), node.select_expr.field
    elif node.WhichOneof("kind") == "call_expr" and node.call_expr.function == "_[_]" and len(node.call_expr.args) == 2:
        key = node.call_expr.args[1]
        if key.WhichOneof("kind") != "const_expr" or key.const_expr.WhichOneof("kind") != "string_value":
            return None
        domain, name = _domain_map(node.call_expr.args[0], bound), key.const_expr.string_value
    else:
        return None
    return None if domain is None else f"{domain}/{name}"


def _domain_map(node: Any, bound: dict[str, str]) -> str | None:
    """The domain where the node is `device.attributes[domain]`, or a name bound to it."""
    if node.WhichOneof("kind") == "ident_expr":
        return bound.get(node.ident_expr.name)
    if node.WhichOneof("kind") != "call_expr" or node.call_expr.function != "_[_]" or len(node.call_expr.args) != 2:
        return None
    operand, key = node.call_expr.args
    if (operand.WhichOneof("kind") != "select_expr" or operand.select_expr.field != "attributes"
            or operand.select_expr.operand.WhichOneof("kind") != "ident_expr"
            or operand.select_expr.operand.ident_expr.name != "device"
            or key.WhichOneof("kind") != "const_expr" or key.const_expr.WhichOneof("kind") != "string_value"):
        return None
    return str(key.const_expr.string_value)


def check_selector(expression: str, consumable_capacity: bool = False, check_cost: bool = True,
                   list_type_attributes: bool = False) -> tuple[int, list[Token]]:
    """What the API server checks when an object is written (compile, type check, limits, regex literals): the
    estimated cost and the tokens, or CompileError with its reason. Lint and the policy pack need only this; the
    program that evaluates is compiled again in another environment (compile_selector).

    `check_cost` applies the API server's estimated-cost limit, which it checks for new or changed expressions only;
    selectors already stored in a cluster are evaluated whatever their estimate. `list_type_attributes`: the
    DRAListTypeAttributes gate (alpha from 1.36), without which attribute values are typed `any`.
    """
    if not expression.strip():
        raise CompileError("syntax", "expression is empty")
    if len(expression) > MAX_EXPRESSION_LENGTH:
        raise CompileError("length", f"must have at most {MAX_EXPRESSION_LENGTH} bytes (has {len(expression)})")
    try:
        checked = _checking_env(consumable_capacity).compile(expression)
    except RuntimeError as exc:
        message = _clean(str(exc))
        lacking = _unimplemented(expression, message)
        if lacking:
            raise CompileError("unsupported", f"uses {lacking}, which the API server accepts but gpu-dra's CEL "
                                              "engine does not implement yet; this selector is not checked") from None
        raise CompileError("syntax" if "Syntax error" in message else "type", message) from None
    serialized = checked.serialize()
    if not list_type_attributes:
        ranged = _attribute_ranged_over(decode(serialized).expr)
        if ranged is not None:
            raise CompileError("type", f"expression of type 'any' cannot be the range of a comprehension (must be "
                                       f"list, map, or dynamic): attribute {ranged} (its values are typed `any` "
                                       "unless the alpha gate DRAListTypeAttributes, from 1.36, types them as dyn)")
    estimated = cost.estimate(serialized)
    if check_cost and estimated > cost.MAX_ESTIMATED_COST:
        raise CompileError("cost", f"too complex, exceeds cost limit (estimated cost {estimated}, limit "
                                   f"{cost.MAX_ESTIMATED_COST})")
    result = checked.return_type()
    if result not in (cel.Type.BOOL, cel.Type.DYN):
        raise CompileError("result", f"must evaluate to bool or the unknown type, not {result.name().lower()}")
    tokens = tokenize(expression) or []
    for pattern in regex_literals(tokens):
        # What the API server's ValidateRegexLiterals (matches) and the find/findAll program options check.
        try:
            regex.compile(pattern)
        except regex.RegexError as problem:
            raise CompileError("regex", f"invalid regular expression {pattern!r}: {problem}") from None
    return estimated, tokens


def compile_selector(expression: str, consumable_capacity: bool = False, check_cost: bool = True,
                     list_type_attributes: bool = False) -> CompiledSelector:
    """check_selector, then the program that evaluates it on devices."""
    estimated, tokens = check_selector(expression, consumable_capacity, check_cost, list_type_attributes)
    # Rewritten so an unknown domain reads as an empty map; where `device` is rebound by a macro or cel.bind the
    # rewrite would change meaning, so the expression runs as written (unknown domains then raise).
    rebound = re.search(r"[(,]\s*device\s*,", expression) is not None
    try:
        program = _evaluation_env().compile(expression if rebound else with_empty_domain_default(expression, tokens))
    except RuntimeError:
        program = _evaluation_env().compile(expression)
    program = instrument.instrument(program, _evaluation_env())  # the runtime cost limit and size bound
    return CompiledSelector(expression, tuple(tokens), program, consumable_capacity, estimated)

"""The Kubernetes CEL libraries DRA selectors use: quantity (k8s.io/apiserver pkg/cel/library/quantity.go), semver
(semverlib.go) and the regex additions find/findAll (regex.go, run with RE2: gpu_dra.core.dra.cel.regex), as proto
message types built at run time.

Quantity and Semver are messages, so the C++ type checker rejects `quantity >= quantity` as cel-go does (no
overload); equality compares the canonical value, so `quantity('1Gi') == quantity('1024Mi')`.
"""

from __future__ import annotations

import re
from decimal import Decimal
from typing import Any

from cel_expr_python import cel
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

from gpu_dra.core.dra.cel import budget, regex
from gpu_dra.core.dra.quantity import QuantityError, parse_quantity

_FIELD = descriptor_pb2.FieldDescriptorProto


def _pool() -> descriptor_pool.DescriptorPool:
    pool = descriptor_pool.DescriptorPool()
    # google.protobuf.Struct backs the checking env's attribute and capacity maps (values are dyn).
    from google.protobuf import struct_pb2

    struct_file = descriptor_pb2.FileDescriptorProto()
    struct_pb2.DESCRIPTOR.CopyToProto(struct_file)
    pool.Add(struct_file)
    file = descriptor_pb2.FileDescriptorProto(name="gpu_dra/kubernetes_cel.proto", package="kubernetes",
                                              syntax="proto3", dependency=["google/protobuf/struct.proto"])
    quantity = file.message_type.add(name="Quantity")
    quantity.field.add(name="value", number=1, type=_FIELD.TYPE_STRING, label=_FIELD.LABEL_OPTIONAL)
    semver = file.message_type.add(name="Semver")
    for number, name in enumerate(("major", "minor", "patch"), start=1):
        semver.field.add(name=name, number=number, type=_FIELD.TYPE_INT64, label=_FIELD.LABEL_OPTIONAL)
    semver.field.add(name="pre", number=4, type=_FIELD.TYPE_STRING, label=_FIELD.LABEL_OPTIONAL)
    # The `device` variable as the type checker sees it (k8s: kubernetes.DRADevice); two shapes, with
    # allowMultipleAllocations only when DRAConsumableCapacity is enabled.
    for name, consumable in (("DRADevice", False), ("DRADeviceConsumableCapacity", True)):
        device = file.message_type.add(name=name)
        device.field.add(name="driver", number=1, type=_FIELD.TYPE_STRING, label=_FIELD.LABEL_OPTIONAL)
        for number, field in ((2, "attributes"), (3, "capacity")):
            entry = device.nested_type.add(name=f"{field.capitalize()}Entry")
            entry.options.map_entry = True
            entry.field.add(name="key", number=1, type=_FIELD.TYPE_STRING, label=_FIELD.LABEL_OPTIONAL)
            entry.field.add(name="value", number=2, type=_FIELD.TYPE_MESSAGE, label=_FIELD.LABEL_OPTIONAL,
                            type_name=".google.protobuf.Struct")
            device.field.add(name=field, number=number, type=_FIELD.TYPE_MESSAGE, label=_FIELD.LABEL_REPEATED,
                             type_name=f".kubernetes.{name}.{field.capitalize()}Entry")
        if consumable:
            device.field.add(name="allowMultipleAllocations", number=4, type=_FIELD.TYPE_BOOL,
                             label=_FIELD.LABEL_OPTIONAL)
    pool.Add(file)
    return pool


POOL = _pool()
QuantityMessage: Any = message_factory.GetMessageClass(POOL.FindMessageTypeByName("kubernetes.Quantity"))
SemverMessage: Any = message_factory.GetMessageClass(POOL.FindMessageTypeByName("kubernetes.Semver"))
QUANTITY = cel.Type("kubernetes.Quantity")
SEMVER = cel.Type("kubernetes.Semver")
INT64_MAX = 2**63 - 1


# --------------------------------------------------------------------------------------------- quantity


def _canonical(value: Decimal) -> str:
    text = format(value.normalize(), "f")
    return text if text != "-0" else "0"


def make_quantity(text: str) -> Any:
    return QuantityMessage(value=_canonical(parse_quantity(text)))


def _value(quantity: Any) -> Decimal:
    return Decimal(quantity.value)


def _quantity(text: str) -> Any:
    try:
        return make_quantity(text)
    except QuantityError as exc:
        raise ValueError(f"quantities must match the regular expression: {exc}") from None


def _is_quantity(text: str) -> bool:
    try:
        parse_quantity(text)
    except QuantityError:
        return False
    return True


def _compare(a: Decimal, b: Decimal) -> int:
    return (a > b) - (a < b)


def _as_integer(quantity: Any) -> int:
    value = _value(quantity)
    if value != value.to_integral_value() or abs(value) > INT64_MAX:
        raise ValueError("cannot convert value to integer")
    return int(value)


def _add(quantity: Any, other: Any) -> Any:
    delta = _value(other) if isinstance(other, QuantityMessage) else Decimal(other)
    return QuantityMessage(value=_canonical(_value(quantity) + delta))


def _sub(quantity: Any, other: Any) -> Any:
    delta = _value(other) if isinstance(other, QuantityMessage) else Decimal(other)
    return QuantityMessage(value=_canonical(_value(quantity) - delta))


# --------------------------------------------------------------------------------------------- semver

_SEMVER = re.compile(r"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)"
                     r"(?:-((?:0|[1-9]\d*|\d*[A-Za-z-][0-9A-Za-z-]*)(?:\.(?:0|[1-9]\d*|\d*[A-Za-z-][0-9A-Za-z-]*))*))?"
                     r"(?:\+([0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*))?$")


class SemverError(ValueError):
    pass


def _normalize(text: str) -> str:
    """semver(s, true): strip a leading v, add missing minor and patch, drop leading zeros (kubernetes/apiserver
    pkg/cel/library/semverlib.go)."""
    text = text.removeprefix("v")
    match = re.match(r"^([0-9.]+)(.*)$", text)
    if not match:
        return text
    core, rest = match.groups()
    parts = core.split(".")
    if len(parts) > 3 or "" in parts:
        return text
    return ".".join([str(int(p)) for p in parts] + ["0"] * (3 - len(parts))) + rest


def parse_semver(text: str, normalize: bool = False) -> Any:
    candidate = _normalize(text) if normalize else text
    match = _SEMVER.match(candidate)
    if not match:
        raise SemverError(f"{text!r} is not a semantic version")
    major, minor, patch, pre = match.group(1), match.group(2), match.group(3), match.group(4) or ""
    return SemverMessage(major=int(major), minor=int(minor), patch=int(patch), pre=pre)


def _semver(text: str, normalize: bool = False) -> Any:
    try:
        return parse_semver(text, normalize)
    except SemverError:
        raise ValueError("invalid semver format") from None


def _is_semver(text: str, normalize: bool = False) -> bool:
    try:
        parse_semver(text, normalize)
    except SemverError:
        return False
    return True


def _pre_key(pre: str) -> tuple[Any, ...]:
    if not pre:
        return (1,)  # a release ranks above its pre-releases
    return (0, *[(0, int(p), "") if p.isdigit() else (1, 0, p) for p in pre.split(".")])


def _semver_compare(a: Any, b: Any) -> int:
    left = (a.major, a.minor, a.patch, _pre_key(a.pre))
    right = (b.major, b.minor, b.patch, _pre_key(b.pre))
    return (left > right) - (left < right)


# --------------------------------------------------------------------------------------------- regex


def _compiled(pattern: str, text: str) -> None:
    """Charge the call (Kubernetes' find/findAll cost) and check the pattern, as the scheduler's regexp.Compile."""
    budget.charge(budget.regex_cost(len(text), len(pattern)))
    try:
        regex.compile(pattern)
    except regex.RegexError as error:
        raise ValueError(f"Illegal regex: {error}") from None


def _find(text: str, pattern: str) -> str:
    _compiled(pattern, text)
    return regex.find(pattern, text)


def _find_all(text: str, pattern: str, limit: int = -1) -> list[str]:
    _compiled(pattern, text)
    found = regex.find_all(pattern, text, limit)
    budget.charge(0, budget.ELEMENT * len(found) + sum(map(len, found)))
    return found


# --------------------------------------------------------------------------------------------- declarations

T = cel.Type
_OVERLOADS: list[tuple[str, str, Any, list[Any], bool, Any]] = [
    # (function, overload id, return type, parameters (receiver first for members), member?, implementation)
    ("quantity", "string_to_quantity", QUANTITY, [T.STRING], False, _quantity),
    ("isQuantity", "is_quantity_string", T.BOOL, [T.STRING], False, _is_quantity),
    ("sign", "quantity_sign", T.INT, [QUANTITY], False, lambda q: _compare(_value(q), Decimal(0))),
    ("isGreaterThan", "quantity_is_greater_than", T.BOOL, [QUANTITY, QUANTITY], True,
     lambda a, b: _value(a) > _value(b)),
    ("isLessThan", "quantity_is_less_than", T.BOOL, [QUANTITY, QUANTITY], True, lambda a, b: _value(a) < _value(b)),
    ("compareTo", "quantity_compare_to", T.INT, [QUANTITY, QUANTITY], True,
     lambda a, b: _compare(_value(a), _value(b))),
    ("asApproximateFloat", "quantity_get_float", T.DOUBLE, [QUANTITY], True, lambda q: float(_value(q))),
    ("asInteger", "quantity_get_int", T.INT, [QUANTITY], True, _as_integer),
    ("isInteger", "quantity_is_integer", T.BOOL, [QUANTITY], True,
     lambda q: _value(q) == _value(q).to_integral_value() and abs(_value(q)) <= INT64_MAX),
    ("add", "quantity_add", QUANTITY, [QUANTITY, QUANTITY], True, _add),
    ("add", "quantity_add_int", QUANTITY, [QUANTITY, T.INT], True, _add),
    ("sub", "quantity_sub", QUANTITY, [QUANTITY, QUANTITY], True, _sub),
    ("sub", "quantity_sub_int", QUANTITY, [QUANTITY, T.INT], True, _sub),
    ("semver", "string_to_semver", SEMVER, [T.STRING], False, _semver),
    ("semver", "string_bool_to_semver", SEMVER, [T.STRING, T.BOOL], False, _semver),
    ("isSemver", "is_semver_string", T.BOOL, [T.STRING], False, _is_semver),
    ("isSemver", "is_semver_string_bool", T.BOOL, [T.STRING, T.BOOL], False, _is_semver),
    ("major", "semver_major", T.INT, [SEMVER], True, lambda s: s.major),
    ("minor", "semver_minor", T.INT, [SEMVER], True, lambda s: s.minor),
    ("patch", "semver_patch", T.INT, [SEMVER], True, lambda s: s.patch),
    ("isGreaterThan", "semver_is_greater_than", T.BOOL, [SEMVER, SEMVER], True,
     lambda a, b: _semver_compare(a, b) > 0),
    ("isLessThan", "semver_is_less_than", T.BOOL, [SEMVER, SEMVER], True, lambda a, b: _semver_compare(a, b) < 0),
    ("compareTo", "semver_compare_to", T.INT, [SEMVER, SEMVER], True, _semver_compare),
    ("find", "string_find_n", T.STRING, [T.STRING, T.STRING], True, _find),
    ("findAll", "string_find_all", T.List(T.STRING), [T.STRING, T.STRING], True, _find_all),
    ("findAll", "string_find_all_n", T.List(T.STRING), [T.STRING, T.STRING, T.INT], True, _find_all),
]


def _runtime_kinds(params: list[Any]) -> tuple[str, ...]:
    """The C++ runtime registers overloads by value kind: every message type is one kind."""
    return tuple("message" if p in (QUANTITY, SEMVER) else p.name() for p in params)


def function_decls() -> list[Any]:
    """Typed overloads for the checker; one implementation per runtime signature, dispatching on message type
    (Quantity.compareTo and Semver.compareTo share the runtime signature (message, message))."""
    impls: dict[tuple[str, tuple[str, ...]], list[tuple[tuple[Any, ...], Any]]] = {}
    for name, _, _, params, _, impl in _OVERLOADS:
        receiver = QuantityMessage if params[0] == QUANTITY else SemverMessage if params[0] == SEMVER else object
        impls.setdefault((name, _runtime_kinds(params)), []).append(((receiver,), impl))

    def dispatcher(choices: list[tuple[tuple[Any, ...], Any]]) -> Any:
        if len(choices) == 1:
            return choices[0][1]

        def dispatch(*args: Any) -> Any:
            for (receiver,), impl in choices:
                if isinstance(args[0], receiver):
                    return impl(*args)
            raise ValueError("no matching overload")
        return dispatch

    registered: set[tuple[str, tuple[str, ...]]] = set()
    by_name: dict[str, list[Any]] = {}
    for name, overload_id, result, params, member, _ in _OVERLOADS:
        key = (name, _runtime_kinds(params))
        impl = None if key in registered else dispatcher(impls[key])
        registered.add(key)
        by_name.setdefault(name, []).append(
            cel.Overload(overload_id, return_type=result, parameters=params, is_member=member, impl=impl))
    return [cel.FunctionDecl(name, overloads) for name, overloads in by_name.items()]

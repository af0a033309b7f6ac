#!/usr/bin/env python3
"""Transcribe upstream's TestAllocator table (k8s.io/dynamic-resource-allocation
structured/internal/allocatortesting) into the YAML tests/test_allocator_upstream.py runs.

The table is Go: a map of cases built with ~60 helper functions. This tool tokenizes the small Go subset the table
uses (calls, method chains, composite literals, &x, unary *, + - * /, the inline `func() T {...}()` closures with
their few statement kinds) and evaluates it against Python ports of the helpers, which build the resource.k8s.io/v1
objects as JSON-shaped dicts with omitempty. Each helper's Go source, and the code that runs the table, is pinned by
its SHA-256: when upstream edits one, or the table uses a construct, identifier, field or statement this tool does
not know, it stops with an error instead of writing a table that silently differs from upstream's.

Development tool, not shipped: stdlib + PyYAML. Run `tools/transcribe_allocator_table.py --help`.
"""

from __future__ import annotations

import argparse
import copy
import hashlib
import json
import re
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

REPOSITORY = "kubernetes/dynamic-resource-allocation"
TABLE_PATH = "structured/internal/allocatortesting/allocator_testing.go"
LEXICOGRAPHICAL_PATH = "structured/internal/allocatortesting/lexicographical_testing.go"
API = "resource.k8s.io/v1"
SOURCE_TABLES = {TABLE_PATH: "TestAllocator", LEXICOGRAPHICAL_PATH: "TestLexicographicalAllocator"}


class TranscribeError(Exception):
    """Something in the Go source this tool does not model; the message says what and where."""


# --------------------------------------------------------------------------------------------------------------------
# Values. Go structs are dicts keyed by their JSON field names; a pointer is Ptr (emitted even when its target is a
# zero value, as encoding/json does); a resource.Quantity is Quantity (emitted as its string).


class Struct(dict[str, Any]):
    """A Go struct value; `go_type` is its literal type where the source names it (type switches read it)."""

    def __init__(self, go_type: str | None, fields: dict[str, Any] | None = None) -> None:
        super().__init__(fields or {})
        self.go_type = go_type
        self.capacity_from_counters = False  # wrapDevice's private flag

    def __deepcopy__(self, memo: dict[int, Any]) -> Struct:
        out = Struct(self.go_type, {k: copy.deepcopy(v, memo) for k, v in self.items()})
        out.capacity_from_counters = self.capacity_from_counters
        return out


@dataclass
class Ptr:
    value: Any


@dataclass(frozen=True)
class Quantity:
    text: str


@dataclass(frozen=True)
class DeviceID:
    driver: str
    pool: str
    device: str


@dataclass(frozen=True)
class SharedDeviceID:
    device: DeviceID
    share_id: str


@dataclass
class Matcher:
    """allocationResult(): a gomega matcher for one AllocationResult whose Config must be nil."""

    node_selector: Any
    results: list[Any]


@dataclass
class ErrorMatcher:
    substring: str


def deref(value: Any) -> Any:
    return value.value if isinstance(value, Ptr) else value


# Go field name -> JSON name, for every field the tables and helpers set or read. An unknown field is an error.
JSON_FIELDS = {
    "AdminAccess": "adminAccess", "AllNodes": "allNodes", "AllocationMode": "allocationMode",
    "Attributes": "attributes", "AllowMultipleAllocations": "allowMultipleAllocations",
    "BindingConditions": "bindingConditions",
    "BindingFailureConditions": "bindingFailureConditions", "BindsToNode": "bindsToNode", "BoolValue": "bool",
    "BoolValues": "boolValues", "CEL": "cel", "Capacity": "capacity", "Config": "config",
    "Constraints": "constraints", "ConsumedCapacity": "consumedCapacity", "ConsumesCounters": "consumesCounters",
    "Count": "count", "CounterSet": "counterSet", "Counters": "counters", "Device": "device",
    "DeviceClassName": "deviceClassName", "Devices": "devices", "DistinctAttribute": "distinctAttribute",
    "Driver": "driver", "Effect": "effect", "Exactly": "exactly", "Expression": "expression",
    "FirstAvailable": "firstAvailable", "Generation": "generation", "IntValue": "int", "IntValues": "intValues",
    "Key": "key", "MatchAttribute": "matchAttribute", "MatchExpressions": "matchExpressions",
    "MatchFields": "matchFields", "Name": "name", "NodeName": "nodeName", "NodeSelector": "nodeSelector",
    "NodeSelectorTerms": "nodeSelectorTerms", "Opaque": "opaque", "Operator": "operator", "Parameters": "parameters",
    "PerDeviceNodeSelection": "perDeviceNodeSelection", "Pool": "pool", "Request": "request",
    "Requests": "requests", "ResourceSliceCount": "resourceSliceCount", "Results": "results",
    "Selectors": "selectors", "ShareID": "shareID", "SharedCounters": "sharedCounters", "Source": "source",
    "Spec": "spec", "StringValue": "string", "StringValues": "stringValues", "Taints": "taints",
    "Tolerations": "tolerations", "Value": "value", "Values": "values", "VersionValue": "version",
    "VersionValues": "versionValues", "ObjectMeta": "metadata", "Labels": "labels",
}
INLINE_FIELDS = {"DeviceConfiguration"}  # `json:",inline"` embedded structs
OBJECT_META_FIELDS = {"Name", "Labels"}  # promoted from the embedded ObjectMeta of API objects
WRAPPER_TYPES = {"wrapDeviceRequest", "wrapDeviceSubRequest", "wrapResourceClaim", "wrapDevice", "wrapResourceSlice",
                 "wrapDeviceRequestAllocationResult", "wrapResourceSliceWithDevices",
                 "wrapResourceSliceWithCounterSets"}
FEATURE_TYPES = {"Features", "internal.Features"}

# Qualified constants the table uses, with their Go values.
QUALIFIED_CONSTANTS: dict[str, Any] = {
    "resourceapi.DeviceAllocationModeAll": "All", "resourceapi.DeviceAllocationModeExactCount": "ExactCount",
    "resourceapi.DeviceTaintEffectNoSchedule": "NoSchedule", "resourceapi.DeviceTaintEffectNoExecute": "NoExecute",
    "resourceapi.DeviceTaintEffectNone": "None", "resourceapi.DeviceTolerationOpExists": "Exists",
    "resourceapi.DeviceTolerationOpEqual": "Equal", "resourceapi.AllocationConfigSourceClass": "FromClass",
    "resourceapi.AllocationConfigSourceClaim": "FromClaim", "resourceapi.AllocationResultsMaxSize": 32,
    "v1.NodeSelectorOpIn": "In", "resource.BinarySI": "BinarySI", "resource.DecimalSI": "DecimalSI",
    "internal.Stable": "stable", "internal.Incubating": "incubating", "internal.Experimental": "experimental",
}
# Type conversions T(x) that leave the value as it is.
CONVERSIONS = {"int", "int64", "string", "resourceapi.DeviceAllocationMode", "resourceapi.FullyQualifiedName",
               "resourceapi.QualifiedName", "apitypes.UID", "resourceapi.DeviceTaintEffect"}


# --------------------------------------------------------------------------------------------------------------------
# Tokenizer with Go's automatic semicolons.

TOKEN = re.compile(r"""
    (?P<space>[ \t\r]+) | (?P<newline>\n) | (?P<comment>//[^\n]*|/\*.*?\*/)
  | (?P<raw>`[^`]*`) | (?P<string>"(?:\\.|[^"\\\n])*") | (?P<number>\d+)
  | (?P<ident>[A-Za-z_][A-Za-z0-9_]*)
  | (?P<op>\.\.\.|:=|\+=|-=|\+\+|--|&&|\|\||==|!=|<=|>=|[{}()\[\],:;.&*+\-/=<>!%])
""", re.VERBOSE | re.DOTALL)


@dataclass
class Token:
    kind: str  # ident, string, number, op, ;, eof
    text: str
    line: int


def tokenize(source: str, first_line: int) -> list[Token]:
    tokens: list[Token] = []
    line, pos = first_line, 0
    while pos < len(source):
        match = TOKEN.match(source, pos)
        if match is None:
            raise TranscribeError(f"line {line}: unknown character {source[pos]!r}")
        kind, text = match.lastgroup or "", match.group()
        pos = match.end()
        newlines = text.count("\n")
        if kind == "newline" or (kind == "comment" and newlines):
            last = tokens[-1] if tokens else None
            if last and (last.kind in ("ident", "string", "number") or last.text in (")", "]", "}", "++", "--")):
                tokens.append(Token(";", ";", line))
        elif kind == "raw":
            tokens.append(Token("string", text[1:-1], line))
        elif kind == "string":
            tokens.append(Token("string", json.loads(text), line))
        elif kind in ("number", "ident", "op"):
            tokens.append(Token(kind, text, line))
        line += newlines
    tokens.append(Token("eof", "", line))
    return tokens


# --------------------------------------------------------------------------------------------------------------------
# Parser: expressions and the closure statements. Nodes are tuples ("kind", line, ...).


class Parser:
    def __init__(self, tokens: list[Token], where: str) -> None:
        self.tokens, self.pos, self.where = tokens, 0, where

    @property
    def tok(self) -> Token:
        return self.tokens[self.pos]

    def fail(self, message: str) -> TranscribeError:
        return TranscribeError(f"{self.where}:{self.tok.line}: {message} (at {self.tok.text!r})")

    def accept(self, text: str) -> bool:
        if self.tok.text == text and self.tok.kind != "string":
            self.pos += 1
            return True
        return False

    def expect(self, text: str) -> Token:
        if not self.accept(text):
            raise self.fail(f"expected {text!r}")
        return self.tokens[self.pos - 1]

    def ident(self) -> str:
        if self.tok.kind != "ident":
            raise self.fail("expected an identifier")
        self.pos += 1
        return self.tokens[self.pos - 1].text

    def skip_semicolons(self) -> None:
        while self.accept(";"):
            pass

    # Types: T, pkg.T, *T, []T, map[K]V, func() T.
    def parse_type(self) -> str:
        if self.accept("*"):
            return "*" + self.parse_type()
        if self.accept("["):
            self.expect("]")
            return "[]" + self.parse_type()
        if self.tok.text == "map":
            self.pos += 1
            self.expect("[")
            key = self.parse_type()
            self.expect("]")
            return f"map[{key}]{self.parse_type()}"
        name = self.ident()
        if self.accept("."):
            name += "." + self.ident()
        return name

    def is_type_start(self) -> bool:
        return self.tok.text in ("[", "map") and self.tok.kind != "string"

    # Expressions.
    def expression(self) -> Any:
        return self.binary(0)

    PRECEDENCE = {"+": 1, "-": 1, "*": 2, "/": 2, "%": 2}

    def binary(self, min_precedence: int) -> Any:
        left = self.unary()
        while self.tok.kind == "op" and self.PRECEDENCE.get(self.tok.text, 0) > min_precedence:
            op, line = self.tok.text, self.tok.line
            self.pos += 1
            right = self.binary(self.PRECEDENCE[op])
            left = ("binary", line, op, left, right)
        return left

    def unary(self) -> Any:
        line = self.tok.line
        if self.accept("&"):
            return ("address", line, self.unary())
        if self.accept("*"):
            return ("deref", line, self.unary())
        if self.accept("-"):
            return ("negate", line, self.unary())
        return self.postfix(self.primary())

    def primary(self) -> Any:
        tok = self.tok
        if tok.kind == "string":
            self.pos += 1
            return ("literal", tok.line, tok.text)
        if tok.kind == "number":
            self.pos += 1
            return ("literal", tok.line, int(tok.text))
        if self.is_type_start():
            go_type = self.parse_type()
            if self.tok.text != "{":
                raise self.fail(f"a type {go_type} not followed by a composite literal")
            return self.composite(go_type, tok.line)
        if tok.text == "func":
            self.pos += 1
            self.expect("(")
            self.expect(")")
            self.parse_type()
            return ("closure", tok.line, self.block())
        if self.accept("("):
            inner = self.expression()
            self.expect(")")
            return inner
        name = self.ident()
        if name == "nil":
            return ("literal", tok.line, None)
        if name in ("true", "false"):
            return ("literal", tok.line, name == "true")
        return ("name", tok.line, name)

    def postfix(self, node: Any) -> Any:
        while True:
            line = self.tok.line
            if self.accept("."):
                node = ("field", line, node, self.ident())
            elif self.accept("("):
                args, spread = [], False
                while not self.accept(")"):
                    args.append(self.expression())
                    if self.accept("..."):
                        spread = True
                    if not self.accept(","):
                        self.expect(")")
                        break
                node = ("call", line, node, args, spread)
            elif self.accept("["):
                index = self.expression()
                self.expect("]")
                node = ("index", line, node, index)
            elif self.tok.text == "{" and self.names_a_type(node):
                node = self.composite(self.type_name(node), line)
            else:
                return node

    @staticmethod
    def type_name(node: Any) -> str:
        if node[0] == "name":
            return str(node[2])
        return f"{node[2][2]}.{node[3]}"

    @staticmethod
    def names_a_type(node: Any) -> bool:
        """A composite literal follows a (qualified) exported identifier: `Features{`, `resourceapi.Device{`."""
        if node[0] == "name":
            return str(node[2])[:1].isupper() or str(node[2]) in WRAPPER_TYPES
        return node[0] == "field" and node[2][0] == "name" and str(node[3])[:1].isupper()

    def composite(self, go_type: str | None, line: int) -> Any:
        """`T{...}`; elements are `key: value` or values; an element may itself be an untyped `{...}`."""
        self.expect("{")
        elements: list[tuple[Any, Any]] = []
        while not self.accept("}"):
            first = self.composite(None, self.tok.line) if self.tok.text == "{" else self.expression()
            if self.accept(":"):
                value = self.composite(None, self.tok.line) if self.tok.text == "{" else self.expression()
                elements.append((first, value))
            else:
                elements.append((None, first))
            if not self.accept(","):
                self.expect("}")
                break
        return ("composite", line, go_type, elements)

    def block(self) -> list[Any]:
        self.expect("{")
        statements = []
        self.skip_semicolons()
        while not self.accept("}"):
            statements.append(self.statement())
            if self.tok.text != "}":
                self.expect(";")
            self.skip_semicolons()
        return statements

    def statement(self) -> Any:
        """The statements the table's closures and TestAllocator's preamble use; anything else is an error."""
        line = self.tok.line
        if self.tok.text == "return":
            self.pos += 1
            return ("return", line, self.expression())
        if self.tok.text in ("if", "for", "switch", "var", "go", "defer", "select", "const", "type"):
            raise self.fail(f"a {self.tok.text!r} statement, which this tool does not interpret")
        target = self.expression()
        for op in (":=", "=", "+="):
            if self.accept(op):
                if op == ":=" and target[0] != "name":
                    raise self.fail(":= to something other than a name")
                return ("assign", line, op, target, self.expression())
        if self.accept("++"):
            return ("assign", line, "+=", target, ("literal", line, 1))
        if target[0] == "call":
            return ("expression", line, target)
        raise self.fail("an unknown statement")


# --------------------------------------------------------------------------------------------------------------------
# Go source splitting.


@dataclass
class GoFile:
    path: str
    text: str

    @property
    def lines(self) -> list[str]:
        return self.text.split("\n")

    def functions(self) -> Iterator[tuple[str, str, int]]:
        """Top-level funcs as (name, source, first line); methods are named `receiverType.method`."""
        lines = self.lines
        for number, line in enumerate(lines):
            match = re.match(r"func (?:\(\w+ (\w+)\) )?(\w+)", line)
            if not match:
                continue
            end = next(n for n in range(number, len(lines)) if lines[n] == "}")
            name = f"{match.group(1)}.{match.group(2)}" if match.group(1) else match.group(2)
            yield name, "\n".join(lines[number:end + 1]), number + 1

    def blocks(self, keyword: str) -> Iterator[tuple[str, int]]:
        """Top-level `const (...)` / `var (...)` blocks as (body, first line)."""
        lines = self.lines
        for number, line in enumerate(lines):
            if line == f"{keyword} (":
                end = lines.index(")", number)
                yield "\n".join(lines[number + 1:end]), number + 2

    def table(self, runner: str) -> tuple[str, int, str, int]:
        """The body of `runner` up to `testcases := map...{` (its locals) and the table literal after it."""
        lines = self.lines
        start = next(n for n, line in enumerate(lines) if line.startswith(f"func {runner}("))
        opening = next(n for n in range(start, len(lines)) if re.match(r"^\t\) \(Allocator, error\)\) \{$", lines[n]))
        table = next(n for n in range(opening, len(lines)) if lines[n].startswith("\ttestcases := map"))
        end = next(n for n in range(table, len(lines)) if lines[n] == "\t}")
        preamble = "\n".join(lines[opening + 1:table])
        literal = "\n".join(lines[table:end + 1])
        return preamble, opening + 2, literal[literal.index("map"):], table + 1

    def runner(self, runner: str) -> str:
        """The code that runs the table: the rest of `runner` after it, and RunTestAllocator where it calls that."""
        lines = self.lines
        start = next(n for n, line in enumerate(lines) if line.startswith(f"func {runner}("))
        table = next(n for n in range(start, len(lines)) if lines[n].startswith("\ttestcases := map"))
        end = next(n for n in range(table, len(lines)) if lines[n] == "\t}")
        return "\n".join(lines[end + 1:next(n for n in range(end, len(lines)) if lines[n] == "}") + 1])


# --------------------------------------------------------------------------------------------------------------------
# Helpers. Ports of the Go helpers; each registered with the SHA-256 (first 16 hex digits) of the Go source it was
# written against. Variants (v0.34 vs v0.35+) are separate functions.

Helper = Callable[..., Any]
HELPERS: dict[str, dict[str, Helper | None]] = {}


def helper(name: str, *digests: str) -> Callable[[Helper], Helper]:
    def register(function: Helper) -> Helper:
        for digest in digests:
            HELPERS.setdefault(name, {})[digest] = function
        return function
    return register


def pinned(name: str, *digests: str) -> None:
    """Go functions with no Python port of their own: used only by other helpers (whose ports embody them), or
    test machinery that the output's schema models (the matchers, the runner)."""
    for digest in digests:
        HELPERS.setdefault(name, {})[digest] = None


class Env:
    """Constants and package-level vars of the Go file, visible to helpers and the table."""

    def __init__(self) -> None:
        self.values: dict[str, Any] = {}

    def __getitem__(self, name: str) -> Any:
        return self.values[name]


ENV = Env()


def struct(go_type: str | None, **fields: Any) -> Struct:
    return Struct(go_type, {key: value for key, value in fields.items() if value is not None})


def go_format(template: str, *args: Any) -> str:
    """fmt.Sprintf for the verbs the helpers and table use: %s, %d, %v."""
    values = iter(args)

    def replace(match: re.Match[str]) -> str:
        if match.group() == "%%":
            return "%"
        value = deref(next(values))
        if isinstance(value, bool):
            return "true" if value else "false"
        if match.group() == "%d" and not isinstance(value, int):
            raise TranscribeError(f"fmt.Sprintf %d of {value!r}")
        if isinstance(value, Quantity):
            return value.text
        return str(value)
    out = re.sub(r"%[sdv%]", replace, template)
    if re.search(r"%[^sdv%]", template):
        raise TranscribeError(f"fmt.Sprintf verb this tool does not know in {template!r}")
    return out


def meta(name: str) -> Struct:
    return struct("metav1.ObjectMeta", name=name)


@helper("node", "a42037b6bb4f4080")
def node(name: str, region: str) -> Struct:
    return struct("*v1.Node", metadata=struct("metav1.ObjectMeta", name=name, labels={
        ENV["regionKey"]: region, ENV["planetKey"]: ENV["planetValueEarth"]}))


def cel_selector(expression: str) -> Struct:
    return struct("resourceapi.DeviceSelector", cel=Ptr(struct("resourceapi.CELDeviceSelector",
                                                                expression=expression)))


@helper("class", "d68d5c94bd2a875e")
def device_class(name: str, driver: str) -> Struct:
    return struct("*resourceapi.DeviceClass", metadata=meta(name),
                  spec=struct("resourceapi.DeviceClassSpec",
                              selectors=[cel_selector(go_format('device.driver == "%s"', driver))]))


@helper("classWithAllowMultipleAllocations", "3a436b416726fa7d")
def class_with_allow_multiple_allocations(name: str, driver: str, multialloc: bool) -> Struct:
    expression = go_format('device.driver == "%s" && device.allowMultipleAllocations == %v', driver, multialloc)
    return struct("*resourceapi.DeviceClass", metadata=meta(name),
                  spec=struct("resourceapi.DeviceClassSpec", selectors=[cel_selector(expression)]))


@helper("deviceConfiguration", "3b0e83427a99d9bd")
def device_configuration(driver: str, attribute: str) -> Struct:
    raw = go_format('{"%s":"%s"}', attribute, attribute + "Value")
    return struct("resourceapi.DeviceConfiguration", opaque=Ptr(struct(
        "resourceapi.OpaqueDeviceConfiguration", driver=driver, parameters=json.loads(raw))))


@helper("classWithConfig", "49d8fa8905c16bea")
def class_with_config(name: str, driver: str, attribute: str) -> Struct:
    out = device_class(name, driver)
    out["spec"]["config"] = [Struct("resourceapi.DeviceClassConfiguration", device_configuration(driver, attribute))]
    return out


@helper("claimWithRequests", "97d59e61a8f124e6")
def claim_with_requests(name: str, constraints: Any, *requests: Any) -> Struct:
    return struct("*resourceapi.ResourceClaim", metadata=meta(name), spec=struct(
        "resourceapi.ResourceClaimSpec", devices=struct(
            "resourceapi.DeviceClaim", requests=list(requests) or None, constraints=constraints)))


@helper("request", "68c360b881d9cb68")
def request(name: str, device_class_name: str, count: int, *selectors: Any) -> Struct:
    return struct("resourceapi.DeviceRequest", name=name, exactly=Ptr(struct(
        "resourceapi.ExactDeviceRequest", count=count, allocationMode="ExactCount",
        deviceClassName=device_class_name, selectors=list(selectors) or None)))


@helper("deviceRequest", "f1595f36a6045f2d")
def device_request(name: str, device_class_name: str, count: int) -> Struct:
    return request(name, device_class_name, count)


@helper("allDeviceRequest", "e526bfee22833cd9")
def all_device_request(name: str, device_class_name: str) -> Struct:
    return struct("resourceapi.DeviceRequest", name=name, exactly=Ptr(struct(
        "resourceapi.ExactDeviceRequest", allocationMode="All", deviceClassName=device_class_name)))


@helper("subRequest", "ef5f40124497b918")
def sub_request_v034(name: str, device_class_name: str, count: int, *selectors: Any) -> Struct:
    return struct("resourceapi.DeviceSubRequest", name=name, count=count, allocationMode="ExactCount",
                  deviceClassName=device_class_name, selectors=list(selectors) or None)


@helper("subRequest", "05e1ce3564078119")
def sub_request_v035(name: str, device_class_name: str, count: int, *fields: Any) -> Struct:
    out = struct("resourceapi.DeviceSubRequest", name=name, count=count, allocationMode="ExactCount",
                 deviceClassName=device_class_name)
    for value in fields:
        go_type = getattr(value, "go_type", None)
        if go_type == "resourceapi.DeviceSelector":
            out.setdefault("selectors", []).append(value)
        elif go_type == "resourceapi.DeviceToleration":
            out.setdefault("tolerations", []).append(value)
        else:
            raise TranscribeError(f"subRequest: unsupported field for DeviceSubRequest: {go_type} {value!r}")
    return out


def capacity_requests(quantity: Any) -> Ptr:
    requests = {} if quantity is None else {ENV["capacity0"]: deref(quantity)}
    return Ptr(struct("resourceapi.CapacityRequirements", requests=requests))


@helper("wrapDeviceRequest.withCapacityRequest", "eddb2338cfbf4e41")
def request_with_capacity_request(self: Struct, quantity: Any) -> Struct:
    out = copy.deepcopy(self)
    deref(out["exactly"])["capacity"] = capacity_requests(quantity)
    return out


@helper("wrapDeviceSubRequest.withCapacityRequest", "a54218c094c16b90")
def sub_request_with_capacity_request(self: Struct, quantity: Any) -> Struct:
    out = copy.deepcopy(self)
    out["capacity"] = capacity_requests(quantity)
    return out


@helper("wrapDeviceRequest.withSelectors", "23950a05d94d94c2")
def request_with_selectors(self: Struct, *selectors: Any) -> Struct:
    out = copy.deepcopy(self)
    deref(out["exactly"])["selectors"] = list(selectors) or None
    return out


@helper("wrapDeviceSubRequest.withAllocationMode", "d756f501bb1ba520")
def sub_request_with_allocation_mode(self: Struct, mode: str) -> Struct:
    out = copy.deepcopy(self)
    out["allocationMode"] = mode
    return out


@helper("requestWithPrioritizedList", "79d912b147feb6f2", "86185c4e2d01ebc4")
def request_with_prioritized_list(name: str, *sub_requests: Any) -> Struct:
    return struct("resourceapi.DeviceRequest", name=name, firstAvailable=list(sub_requests) or None)


@helper("claim", "55972326d798eacf")
def claim_v034(name: str, request_name: str, device_class_name: str, *constraints: Any) -> Struct:
    return claim_with_requests(name, list(constraints) or None, request(request_name, device_class_name, 1))


@helper("claimWithRequest", "c56f5dc1bc1d96ec")
def claim_with_request(name: str, request_name: str, device_class_name: str, *constraints: Any) -> Struct:
    return claim_v034(name, request_name, device_class_name, *constraints)


@helper("claim", "c372a97aa41592ef")
def claim_v035(name: str) -> Struct:
    return struct("*resourceapi.ResourceClaim", metadata=meta(name))


def claim_devices(claim: Struct) -> Struct:
    spec = claim.setdefault("spec", Struct("resourceapi.ResourceClaimSpec"))
    devices: Struct = spec.setdefault("devices", Struct("resourceapi.DeviceClaim"))
    return devices


@helper("wrapResourceClaim.withTolerations", "5eaf8d64f4f47258")
def claim_with_tolerations(self: Struct, *tolerations: Any) -> Struct:
    out = copy.deepcopy(self)
    for device_request in claim_devices(out).get("requests") or []:
        if "exactly" not in device_request:
            raise TranscribeError("withTolerations on a request without Exactly (a nil dereference in Go)")
        exactly = deref(device_request["exactly"])
        exactly["tolerations"] = [*(exactly.get("tolerations") or []), *tolerations] or None
    return out


@helper("wrapResourceClaim.withRequests", "916543302bb8f7cd")
def claim_with_requests_method(self: Struct, *requests: Any) -> Struct:
    out = copy.deepcopy(self)
    claim_devices(out)["requests"] = list(requests)
    return out


@helper("wrapResourceClaim.withConstraints", "5c5a1491385dcff9")
def claim_with_constraints(self: Struct, *constraints: Any) -> Struct:
    out = copy.deepcopy(self)
    claim_devices(out)["constraints"] = list(constraints) or None
    return out


@helper("wrapResourceClaim.withConfigs", "e6572a591da16cc9")
def claim_with_configs(self: Struct, configs: Any) -> Struct:
    out = copy.deepcopy(self)
    claim_devices(out)["config"] = configs
    return out


@helper("claimWithDeviceConfig", "d684ceab2d838d07", "1120973831b15c3e")
def claim_with_device_config(name: str, request_name: str, device_class_name: str, driver: str,
                             attribute: str) -> Struct:
    out = claim_v034(name, request_name, device_class_name)
    claim_devices(out)["config"] = [Struct("resourceapi.DeviceClaimConfiguration",
                                           device_configuration(driver, attribute))]
    return out


@helper("claimWithAll", "4c0b051682ac9d0a")
def claim_with_all(name: str, requests: Any, constraints: Any, configs: Any) -> Struct:
    out = claim_with_requests(name, constraints, *(requests or []))
    claim_devices(out)["config"] = configs
    return out


@helper("deviceClaimConfig", "8fc9d3aad53cd477")
def device_claim_config(requests: Any, device_config: Struct) -> Struct:
    return Struct("resourceapi.DeviceClaimConfiguration", {"requests": requests, **device_config})


@helper("device", "fefc36ba8f647f37")
def device(name: str, capacity: Any, attributes: Any) -> Struct:
    out = struct("resourceapi.Device", name=name, attributes=attributes)
    if isinstance(capacity, dict):
        out["capacity"] = to_device_capacity(capacity)
    elif isinstance(capacity, str):
        if capacity != ENV["fromCounters"]:
            raise TranscribeError(f"device: unexpected capacity value {capacity!r}")
        out.capacity_from_counters = True
    elif capacity is not None:
        raise TranscribeError(f"device: unexpected capacity type {capacity!r}")
    return out


def device_copy(self: Struct) -> Struct:
    """`wrapDevice{Device: *device}`: a copy that drops the private capacityFromCounters flag."""
    out = copy.deepcopy(self)
    out.capacity_from_counters = False
    return out


@helper("wrapDevice.withTaints", "5f7463dcfc9ef3a4")
def device_with_taints(self: Struct, *taints: Any) -> Struct:
    out = device_copy(self)
    out["taints"] = [*(out.get("taints") or []), *taints] or None
    return out


@helper("wrapDevice.withDeviceCounterConsumption", "d522fc58958c886e")
def device_with_counter_consumption(self: Struct, *consumption: Any) -> Struct:
    out = device_copy(self)
    out["consumesCounters"] = [*(out.get("consumesCounters") or []), *consumption] or None
    if self.capacity_from_counters:
        out["capacity"] = {name: struct("resourceapi.DeviceCapacity", value=counter["value"])
                           for consumed in out["consumesCounters"] or []
                           for name, counter in (consumed["counters"] or {}).items()}
    return out


def is_node_selector(value: Any) -> bool:
    return getattr(deref(value), "go_type", None) in ("v1.NodeSelector", "*v1.NodeSelector")


@helper("wrapDevice.withNodeSelection", "c72ce3888479f804")
def device_with_node_selection(self: Struct, node_selection: Any) -> Struct:
    out = device_copy(self)
    if is_node_selector(node_selection):
        out["nodeSelector"] = node_selection
    elif isinstance(node_selection, str):
        if node_selection == ENV["nodeSelectionAll"]:
            out["allNodes"] = Ptr(True)
        elif node_selection == ENV["nodeSelectionPerDevice"]:
            raise TranscribeError("nodeSelectionPerDevice is not supported for devices")
        else:
            out["nodeName"] = Ptr(node_selection)
    else:
        raise TranscribeError(f"withNodeSelection: unexpected nodeSelection {node_selection!r}")
    return out


@helper("wrapDevice.withBindingConditions", "23b6dfb4ce03af95")
def device_with_binding_conditions(self: Struct, conditions: Any, failure_conditions: Any) -> Struct:
    out = device_copy(self)
    out["bindingConditions"], out["bindingFailureConditions"] = conditions, failure_conditions
    return out


@helper("wrapDevice.withBindsToNode", "b8cc26db744ab303")
def device_with_binds_to_node(self: Struct, binds_to_node: bool) -> Struct:
    out = device_copy(self)
    out["bindsToNode"] = Ptr(binds_to_node)
    return out


@helper("wrapDevice.withAllowMultipleAllocations", "215609bb48950a5e")
def device_with_allow_multiple_allocations(self: Struct) -> Struct:
    out = device_copy(self)
    out["allowMultipleAllocations"] = Ptr(True)
    return out


@helper("wrapDevice.withCapacityRequestPolicyRange", "87e34ef1338b7cfe")
def device_with_capacity_request_policy_range(self: Struct, capacity: dict[str, Any]) -> Struct:
    out = device_copy(self)
    out.setdefault("capacity", {})
    two, four = ENV["two"], ENV["four"]
    for name, quantity in capacity.items():
        out["capacity"][name] = struct("resourceapi.DeviceCapacity", value=quantity, requestPolicy=Ptr(struct(
            "resourceapi.CapacityRequestPolicy", default=Ptr(two), validRange=Ptr(struct(
                "resourceapi.CapacityRequestPolicyRange", min=Ptr(two), step=Ptr(two), max=Ptr(four))))))
    return out


@helper("wrapDevice.withCapacityRequestPolicyValidValues", "ca64e8ddc5e0636e")
def device_with_capacity_request_policy_valid_values(self: Struct, default: Quantity, capacity: dict[str, Any],
                                                     additional: Any) -> Struct:
    out = device_copy(self)
    out.setdefault("capacity", {})
    for name, quantity in capacity.items():
        out["capacity"][name] = struct("resourceapi.DeviceCapacity", value=quantity, requestPolicy=Ptr(struct(
            "resourceapi.CapacityRequestPolicy", default=Ptr(default), validValues=[default, *(additional or [])])))
    return out


@helper("deviceCounterConsumption", "1bac6c4eb4a985d6")
def device_counter_consumption(counter_set: str, counters: dict[str, Any]) -> Struct:
    return struct("resourceapi.DeviceCounterConsumption", counterSet=counter_set, counters=to_counters(counters))


def resource_pool(name: str, count: int) -> Struct:
    return struct("resourceapi.ResourcePool", name=name, resourceSliceCount=count, generation=1)


def bare_slice(name: str, node_selection: Any, pool: Any, driver: str) -> Struct:
    if isinstance(pool, str):
        pool = resource_pool(pool, 1)
    elif getattr(pool, "go_type", None) != "resourceapi.ResourcePool":
        raise TranscribeError(f"slice: unexpected pool {pool!r}")
    spec = struct("resourceapi.ResourceSliceSpec", driver=driver, pool=copy.deepcopy(pool))
    if is_node_selector(node_selection):
        spec["nodeSelector"] = node_selection
    elif isinstance(node_selection, str):
        if node_selection == ENV["nodeSelectionAll"]:
            spec["allNodes"] = Ptr(True)
        elif node_selection == ENV["nodeSelectionPerDevice"]:
            spec["perDeviceNodeSelection"] = Ptr(True)
        else:
            spec["nodeName"] = Ptr(node_selection)
    else:
        raise TranscribeError(f"slice: unexpected nodeSelection {node_selection!r}")
    return struct("*resourceapi.ResourceSlice", metadata=meta(name), spec=spec)


def add_devices(out: Struct, devices: tuple[Any, ...]) -> Struct:
    if devices:
        out["spec"]["devices"] = [*(out["spec"].get("devices") or []), *(device_copy(d) for d in devices)]
    return out


@helper("slice", "195b4ac2f5e05f10")
def slice_v034(name: str, node_selection: Any, pool: str, driver: str, *devices: Any) -> Struct:
    if not isinstance(pool, str):
        raise TranscribeError(f"slice: pool must be a string at this tag, got {pool!r}")
    return add_devices(bare_slice(name, node_selection, pool, driver), devices)


@helper("slice", "7d1265a0db0be639")
def slice_v035(name: str, node_selection: Any, pool: Any, driver: str) -> Struct:
    return bare_slice(name, node_selection, pool, driver)


@helper("sliceWithDevices", "d7a3986b7faf7f3a")
def slice_with_devices(name: str, node_selection: Any, pool: Any, driver: str, *devices: Any) -> Struct:
    return add_devices(bare_slice(name, node_selection, pool, driver), devices)


@helper("sliceWithCounterSets", "4131f3ad02c8f239")
def slice_with_counter_sets(name: str, node_selection: Any, pool: Any, driver: str, *counter_sets: Any) -> Struct:
    out = bare_slice(name, node_selection, pool, driver)
    out["spec"]["sharedCounters"] = list(counter_sets) or None
    return out


@helper("wrapResourceSlice.withCounterSet", "649a7004509167f2")
def slice_with_counter_set(self: Struct, *counter_sets: Any) -> Struct:
    out = copy.deepcopy(self)
    out["spec"]["sharedCounters"] = [*(out["spec"].get("sharedCounters") or []), *counter_sets] or None
    return out


@helper("resourcePool", "ea8bb3e71e7dc247")
def resource_pool_helper(name: str, count: int) -> Struct:
    return resource_pool(name, count)


@helper("deviceAllocationResult", "6f2b870e597f366f", "62a50a1e60386431")
def device_allocation_result(request_name: str, driver: str, pool: str, device_name: str, admin_access: bool,
                             *tolerations: Any) -> Struct:
    return struct("resourceapi.DeviceRequestAllocationResult", request=request_name, driver=driver, pool=pool,
                  device=device_name, tolerations=list(tolerations) or None,
                  adminAccess=Ptr(True) if admin_access else None)


@helper("deviceRequestAllocationResult", "027121f69204b77e")
def device_request_allocation_result(request_name: str, driver: str, pool: str, device_name: str) -> Struct:
    return struct("resourceapi.DeviceRequestAllocationResult", request=request_name, driver=driver, pool=pool,
                  device=device_name)


@helper("wrapDeviceRequestAllocationResult.withConsumedCapacity", "8f6781ab51b963be")
def result_with_consumed_capacity(self: Struct, share_id: Any, consumed: Any) -> Struct:
    out = copy.deepcopy(self)
    out["shareID"], out["consumedCapacity"] = share_id, consumed
    return out


@helper("multipleDeviceAllocationResults", "4251f5cdb9e9221f")
def multiple_device_allocation_results(request_name: str, driver: str, pool: str, count: int,
                                       start: int) -> list[Any]:
    return [device_allocation_result(request_name, driver, pool, f"device-{i}", False)
            for i in range(start, start + count)]


@helper("nodeLabelSelector", "acf42463a687d9c9")
def node_label_selector(key: str, *values: str) -> Struct:
    requirement = struct("v1.NodeSelectorRequirement", key=key, operator="In", values=list(values) or None)
    return struct("*v1.NodeSelector", nodeSelectorTerms=[struct("v1.NodeSelectorTerm",
                                                                  matchExpressions=[requirement])])


@helper("localNodeSelector", "ab1f9aec73e24f1d")
def local_node_selector(node_name: str) -> Struct:
    requirement = struct("v1.NodeSelectorRequirement", key=ENV["fieldNameKey"], operator="In", values=[node_name])
    return struct("*v1.NodeSelector", nodeSelectorTerms=[struct("v1.NodeSelectorTerm", matchFields=[requirement])])


@helper("allocationResult", "f1b6677690838f25")
def allocation_result(selector: Any, *results: Any) -> Matcher:
    return Matcher(selector, list(results))


@helper("allocationResultWithConfig", "fe000c79a1338a62")
def allocation_result_with_config(selector: Any, driver: str, source: str, attribute: str, *results: Any) -> Struct:
    config = Struct("resourceapi.DeviceAllocationConfiguration",
                    {"source": source, **device_configuration(driver, attribute)})
    return struct("resourceapi.AllocationResult", devices=struct(
        "resourceapi.DeviceAllocationResult", results=list(results) or None, config=[config]), nodeSelector=selector)


@helper("allocationResultWithConfigs", "e09848dd87b2a704")
def allocation_result_with_configs(selector: Any, results: Any, configs: Any) -> Struct:
    return struct("resourceapi.AllocationResult", devices=struct(
        "resourceapi.DeviceAllocationResult", results=results, config=configs), nodeSelector=selector)


@helper("objects", "dd795266d8c23ffe")
def objects(*values: Any) -> list[Any]:
    return list(values)


@helper("unwrap", "3d6d70a89e5d811d")
def unwrap(*values: Any) -> list[Any]:
    return list(values)


@helper("unwrapResourceSlices", "0f3f09f63a889371")
def unwrap_resource_slices(*values: Any) -> list[Any]:
    return list(values)


@helper("sliceWithNoDevices", "d96d0fa6b2f90028", "8463fd75bf81e3ce")
def slice_with_no_devices(name: str, node_selection: Any, pool: Any, driver: str) -> Struct:
    return bare_slice(name, node_selection, pool, driver)


@helper("sliceWithOneDevice", "7efea45ca9349e25", "9c848b100c2c2bce")
def slice_with_one_device(name: str, node_selection: Any, pool: Any, driver: str) -> Struct:
    return add_devices(bare_slice(name, node_selection, pool, driver), (device(ENV["device1"], None, None),))


@helper("sliceWithMultipleDevices", "784b59e9e2975b85", "d70ba41cee2ff1d1")
def slice_with_multiple_devices(name: str, node_selection: Any, pool: Any, driver: str, count: int) -> Struct:
    devices = tuple(device(f"device-{i}", None, None) for i in range(count))
    return add_devices(bare_slice(name, node_selection, pool, driver), devices)


@helper("counterSet", "b6217b1a714edb21")
def counter_set(name: str, counters: dict[str, Any]) -> Struct:
    return struct("resourceapi.CounterSet", name=name, counters=to_counters(counters))


def to_device_capacity(capacity: dict[str, Any]) -> dict[str, Any]:
    return {name: struct("resourceapi.DeviceCapacity", value=quantity) for name, quantity in (capacity or {}).items()}


def to_counters(counters: dict[str, Any]) -> dict[str, Any]:
    return {name: struct("resourceapi.Counter", value=quantity) for name, quantity in (counters or {}).items()}


@helper("deviceRequestAllocationResultWithBindingConditions", "9c892b9762b62b72", "38fa757acfd78496")
def result_with_binding_conditions(request_name: str, driver: str, pool: str, device_name: str, conditions: Any,
                                   failure_conditions: Any, *tolerations: Any) -> Struct:
    return struct("resourceapi.DeviceRequestAllocationResult", request=request_name, driver=driver, pool=pool,
                  device=device_name, bindingConditions=conditions, bindingFailureConditions=failure_conditions,
                  tolerations=list(tolerations) or None)


@helper("MakeDeviceID", "026c9161578c0410")
def make_device_id(driver: str, pool: str, device_name: str) -> DeviceID:
    return DeviceID(driver, pool, device_name)


pinned("toDeviceCapacity", "c345cd6f57c371f5")
pinned("toCounters", "19a311b37cd7f6b2")
pinned("capacityRequests", "ff04623eb5d28e01")
pinned("wrapDeviceRequest.obj", "925e9ee527a85a92")
pinned("wrapDeviceSubRequest.obj", "13d8bbfc167af538")
pinned("wrapResourceClaim.obj", "6c34cb9f387806d4")
pinned("wrapDevice.obj", "eb9e2ab889315081")
pinned("wrapResourceSlice.obj", "fdf5b99fffca4fa1")
pinned("wrapDeviceRequestAllocationResult.obj", "b1337d9a5c6c018c")
pinned("matchNodeSelector", "78a11dd821c23913")
pinned("matchNodeSelectorTerms", "677bfd24cb38baa1")
pinned("matchNodeSelectorTerm", "ad6ecee8ff8dbf52")
pinned("matchNodeSelectorRequirements", "bcc91fbc28b0169f")
pinned("matchNodeSelectorRequirement", "65677cf652cc46b5")
pinned("wrapResourceSliceWithDevices.obj", "5e02eaab8c998590")
pinned("wrapResourceSliceWithCounterSets.obj", "ab6278a693823758")
pinned("requirements", "efc1b73bfbebe4ce")


# --------------------------------------------------------------------------------------------------------------------
# Evaluation.


class Scope:
    def __init__(self, parent: Scope | None = None) -> None:
        self.names: dict[str, Any] = {}
        self.parent = parent

    def lookup(self, name: str) -> Any:
        scope: Scope | None = self
        while scope is not None:
            if name in scope.names:
                return scope.names[name]
            scope = scope.parent
        raise KeyError(name)


@dataclass
class Method:
    receiver: Any
    name: str


@dataclass
class Evaluator:
    """Evaluates parsed Go. Go copies struct values on assignment; here values are shared, which gives the same
    result as long as a closure only changes objects a helper has just built (the helpers copy what they keep, as
    upstream's do with DeepCopy): true of every closure in v0.34.9 to v0.36.2."""

    where: str
    functions: dict[str, Helper]  # Go name (or receiverType.method) -> port, for this tag
    scope: Scope = field(default_factory=Scope)

    def fail(self, node: Any, message: str) -> TranscribeError:
        return TranscribeError(f"{self.where}:{node[1]}: {message}")

    def eval(self, node: Any, scope: Scope | None = None) -> Any:
        scope = scope or self.scope
        kind = node[0]
        if kind == "literal":
            return node[2]
        if kind == "name":
            name = node[2]
            try:
                return scope.lookup(name)
            except KeyError:
                pass
            if name in self.functions or name in BUILTINS or name in CONVERSIONS:
                return ("function", name)
            raise self.fail(node, f"unknown identifier {name}")
        if kind == "field":
            base = node[2]
            if base[0] == "name" and self.is_package(base[2], scope):
                qualified = f"{base[2]}.{node[3]}"
                if qualified in QUALIFIED_CONSTANTS:
                    return QUALIFIED_CONSTANTS[qualified]
                if qualified in BUILTINS or qualified in CONVERSIONS:
                    return ("function", qualified)
                raise self.fail(node, f"unknown qualified identifier {qualified}")
            value = self.eval(base, scope)
            if node[3][:1].islower() or node[3] == "DeepCopy":
                return Method(value, node[3])
            return self.get_field(node, value, node[3])
        if kind == "call":
            return self.call(node, scope)
        if kind == "composite":
            return self.composite(node, scope)
        if kind == "address":
            return Ptr(self.eval(node[2], scope))
        if kind == "deref":
            value = self.eval(node[2], scope)
            return value.value if isinstance(value, Ptr) else value
        if kind == "negate":
            return -self.eval(node[2], scope)
        if kind == "index":
            base, index = deref(self.eval(node[2], scope)), self.eval(node[3], scope)
            return base[index]
        if kind == "binary":
            return self.binary(node, self.eval(node[3], scope), self.eval(node[4], scope))
        if kind == "closure":
            raise self.fail(node, "a func literal that is not called at once")
        raise self.fail(node, f"an expression of kind {kind}")

    @staticmethod
    def is_package(name: str, scope: Scope) -> bool:
        try:
            scope.lookup(name)
            return False
        except KeyError:
            return name in ("resourceapi", "v1", "resource", "fmt", "ptr", "gomega", "sets", "internal", "slices",
                            "apitypes", "metav1")

    def binary(self, node: Any, left: Any, right: Any) -> Any:
        op = node[2]
        if op == "+" and isinstance(left, str) and isinstance(right, str):
            return left + right
        if not (type(left) is int and type(right) is int):
            raise self.fail(node, f"{op} on {left!r} and {right!r}")
        if op == "/":
            return int(left / right)  # Go truncates towards zero
        return {"+": left + right, "-": left - right, "*": left * right, "%": left % right}[op]

    def get_field(self, node: Any, value: Any, go_field: str) -> Any:
        target = deref(value)
        if not isinstance(target, dict):
            raise self.fail(node, f"field {go_field} of {target!r}")
        if go_field in OBJECT_META_FIELDS and "metadata" in target and "spec" in target:
            target = deref(target["metadata"])
        key = JSON_FIELDS.get(go_field)
        if key is None:
            raise self.fail(node, f"unknown field {go_field}")
        return target.get(key)

    def composite(self, node: Any, scope: Scope) -> Any:
        go_type, elements = node[2], node[3]
        if go_type and go_type.startswith("[]"):
            if any(key is not None for key, _ in elements):
                raise self.fail(node, "a keyed slice literal")
            return [self.element(value, go_type[2:], scope) for _, value in elements]
        if go_type and go_type.startswith("map[") or go_type in ("ConsumedCapacityCollection", "ConsumedCapacity"):
            value_type = go_type.split("]", 1)[1] if go_type.startswith("map[") else None
            return {self.eval(key, scope): self.element(value, value_type, scope) for key, value in elements}
        if go_type in WRAPPER_TYPES:  # `wrapX{value}`: a wrapper is its wrapped object here
            if len(elements) != 1 or elements[0][0] is not None:
                raise self.fail(node, f"a {go_type} literal other than {go_type}{{value}}")
            return self.eval(elements[0][1], scope)
        if go_type in FEATURE_TYPES:
            return Struct(go_type, {key[2]: self.eval(value, scope) for key, value in elements})
        out = Struct(go_type)
        for key, value in elements:
            if key is None or key[0] != "name":
                raise self.fail(node, f"an unkeyed struct literal of {go_type}")
            evaluated = self.element(value, None, scope)
            if key[2] in INLINE_FIELDS:
                out.update(evaluated)
            elif key[2] in JSON_FIELDS:
                out[JSON_FIELDS[key[2]]] = evaluated
            else:
                raise self.fail(node, f"unknown field {key[2]} in {go_type}")
        return out

    def element(self, value: Any, element_type: str | None, scope: Scope) -> Any:
        """A composite element; an untyped `{...}` takes the element type of its container."""
        if value[0] == "composite" and value[2] is None:
            if element_type is None:
                return self.composite(value, scope)
            return self.composite(("composite", value[1], element_type.lstrip("*"), value[3]), scope)
        return self.eval(value, scope)

    def call(self, node: Any, scope: Scope) -> Any:
        if node[2][0] == "closure":  # func() T { ... }()
            if node[3]:
                raise self.fail(node, "a func literal called with arguments")
            return self.run(node[2][2], Scope(scope))
        callee = self.eval(node[2], scope)
        args = [self.eval(arg, scope) for arg in node[3]]
        if node[4]:  # f(a, b...): the last argument is spread
            args = [*args[:-1], *(args[-1] or [])]
        if isinstance(callee, Method):
            if callee.name == "DeepCopy":
                return copy.deepcopy(callee.receiver)
            if callee.name == "obj":
                return callee.receiver
            for qualified, function in self.functions.items():
                if qualified.endswith("." + callee.name) and self.receiver_matches(qualified, callee.receiver):
                    try:
                        return function(callee.receiver, *args)
                    except (TypeError, AttributeError, KeyError, IndexError, ValueError) as error:
                        raise self.fail(node, f"{qualified}: arguments this tool's port does not take: "
                                              f"{error!r}") from error
            receiver_type = getattr(callee.receiver, "go_type", callee.receiver)
            raise self.fail(node, f"unknown method {callee.name} on {receiver_type}")
        if isinstance(callee, tuple) and callee[0] == "function":
            name = callee[1]
            if name in CONVERSIONS:
                (value,) = args
                return value
            try:
                return (BUILTINS.get(name) or self.functions[name])(*args)
            except (TypeError, AttributeError, KeyError, IndexError, ValueError) as error:
                raise self.fail(node, f"{name}: arguments this tool's port does not take: {error!r}") from error
        raise self.fail(node, f"a call of {callee!r}")

    @staticmethod
    def receiver_matches(qualified: str, receiver: Any) -> bool:
        receiver_type = qualified.split(".", 1)[0]
        go_type = getattr(deref(receiver), "go_type", "") or ""
        expected = {"wrapDeviceRequest": "resourceapi.DeviceRequest",
                    "wrapDeviceSubRequest": "resourceapi.DeviceSubRequest",
                    "wrapResourceClaim": "*resourceapi.ResourceClaim", "wrapDevice": "resourceapi.Device",
                    "wrapResourceSlice": "*resourceapi.ResourceSlice",
                    "wrapDeviceRequestAllocationResult": "resourceapi.DeviceRequestAllocationResult"}
        return expected.get(receiver_type) == go_type.replace("&", "")

    def run(self, statements: list[Any], scope: Scope) -> Any:
        for statement in statements:
            kind = statement[0]
            if kind == "return":
                return self.eval(statement[2], scope)
            if kind == "expression":
                self.eval(statement[2], scope)
            elif kind == "assign":
                op, target, value = statement[2], statement[3], self.eval(statement[4], scope)
                if op == ":=":
                    scope.names[target[2]] = value
                elif op == "=":
                    self.store(target, value, scope)
                else:
                    self.store(target, self.binary(("binary", statement[1], "+"), self.eval(target, scope), value),
                               scope)
        return None

    def store(self, target: Any, value: Any, scope: Scope) -> None:
        if target[0] == "name":
            frame: Scope | None = scope
            while frame is not None and target[2] not in frame.names:
                frame = frame.parent
            if frame is None:
                raise self.fail(target, f"assignment to unknown {target[2]}")
            frame.names[target[2]] = value
        elif target[0] == "field":
            container = deref(self.eval(target[2], scope))
            go_field = target[3]
            if go_field in OBJECT_META_FIELDS and "metadata" in container and "spec" in container:
                container = deref(container["metadata"])
            if go_field not in JSON_FIELDS:
                raise self.fail(target, f"unknown field {go_field}")
            container[JSON_FIELDS[go_field]] = value
        elif target[0] == "index":
            deref(self.eval(target[2], scope))[self.eval(target[3], scope)] = value
        else:
            raise self.fail(target, "an assignment to something other than a name, field or index")


def new_quantity(value: int, format_name: str) -> Ptr:
    if format_name not in ("BinarySI", "DecimalSI"):
        raise TranscribeError(f"resource.NewQuantity format {format_name}")
    return Ptr(Quantity(str(value)))


def must_parse(text: str) -> Quantity:
    if not re.fullmatch(r"\d+(\.\d+)?([KMGTPE]i?|[mkMGTPE])?", text):
        raise TranscribeError(f"resource.MustParse({text!r}): a form this tool does not check")
    return Quantity(text)


def error_substring(matcher: Any) -> ErrorMatcher:
    if not isinstance(matcher, ErrorMatcher):
        raise TranscribeError(f"gomega.MatchError of {matcher!r}; only ContainSubstring is known")
    return matcher


BUILTINS: dict[str, Callable[..., Any]] = {
    "ptr.To": Ptr, "new": Ptr, "fmt.Sprintf": go_format, "resource.MustParse": must_parse,
    "resource.NewQuantity": new_quantity, "sets.New": lambda *items: list(items),
    "slices.Concat": lambda *lists: [item for part in lists for item in (part or [])],
    "gomega.ContainSubstring": ErrorMatcher, "gomega.MatchError": error_substring,
    "internal.MakeSharedDeviceID": lambda device_id, uid: SharedDeviceID(device_id, deref(uid)),
}


# --------------------------------------------------------------------------------------------------------------------
# Output: v1 JSON with omitempty, and the case schema of tests/data/allocator_upstream_cases*.yaml.


# v1 fields without `omitempty`, written even when zero.
REQUIRED_JSON_FIELDS = {"deviceClassName", "generation", "resourceSliceCount"}


def plain(value: Any) -> Any:
    """JSON-shaped data: pointers kept even to zero values; zero non-pointer struct fields left out (omitempty);
    map entries always written."""
    if isinstance(value, Ptr):
        inner = plain(value.value)
        return {} if inner is None and isinstance(value.value, dict) else inner
    if isinstance(value, Quantity):
        return value.text
    if isinstance(value, dict) and not isinstance(value, Struct):  # a Go map: every entry is written
        return {key: plain(item) for key, item in value.items()}
    if isinstance(value, Struct):
        out = {}
        for key, item in value.items():
            if isinstance(item, Ptr) or key in REQUIRED_JSON_FIELDS and item is not None:
                out[key] = plain(item)
                continue
            if item is None or item is False or item == 0 and not isinstance(item, bool) or item in ("", [], {}):
                continue
            converted = plain(item)
            if converted not in ({}, [], None) or isinstance(item, Struct) and key in ("spec", "devices"):
                out[key] = converted
        return out
    if isinstance(value, list):
        return [plain(item) for item in value]
    if isinstance(value, (str, int, bool)) or value is None:
        return value
    raise TranscribeError(f"a value with no JSON form: {value!r}")


def api_object(kind: str, obj: Any) -> dict[str, Any]:
    body = plain(deref(obj))
    return {"apiVersion": API, "kind": kind, **body}


CASE_FIELDS = {"features", "claimsToAllocate", "allocatedDevices", "allocatedSharedDeviceIDs",
               "allocatedCapacityDevices", "classes", "slices", "node", "expectResults", "expectError",
               "expectNumAllocateOneInvocations", "expectNumAllocateOneInvocationsByChannel"}


def device_id(value: DeviceID) -> dict[str, str]:
    return {"driver": value.driver, "pool": value.pool, "device": value.device}


def result_entry(claim_name: str, expected: Any, fixed_share_id: str) -> tuple[dict[str, Any], bool]:
    """One expected AllocationResult; returns it and whether it carries config (which gpu-dra does not compare)."""
    if isinstance(expected, Matcher):
        selector, results, config = expected.node_selector, expected.results, None
    elif getattr(expected, "go_type", None) == "resourceapi.AllocationResult":
        devices = deref(expected.get("devices")) or {}
        selector, results, config = expected.get("nodeSelector"), devices.get("results") or [], devices.get("config")
    else:
        raise TranscribeError(f"an expected result of unknown shape: {expected!r}")
    devices_out = []
    for result in results:
        share_id = deref(result.get("shareID"))
        if share_id is not None and share_id != fixed_share_id:
            raise TranscribeError(f"a result share ID other than fixedShareID: {share_id!r}")
        entry = plain(Struct(result.go_type, {key: item for key, item in result.items() if key != "shareID"}))
        if share_id is not None:
            entry["shareID"] = True
        devices_out.append(entry)
    out: dict[str, Any] = {"claim": claim_name, "nodeSelector": plain(deref(selector)) if selector else None,
                           "devices": devices_out}
    if config:
        out["config"] = plain(config)
    return out, bool(config)


def transcribe_case(name: str, case: Struct, fixed_share_id: str, default_node: Any) -> dict[str, Any]:
    """One case in the output schema; `default_node`: the node upstream's runner uses where a case has none."""
    unknown = set(case) - CASE_FIELDS
    if unknown:
        raise TranscribeError(f"case {name}: fields this tool does not know: {sorted(unknown)}")
    out: dict[str, Any] = {"name": name}
    features = case.get("features")
    if features:
        out["features"] = {key: value for key, value in features.items()}
    claims = [deref(c) for c in case.get("claimsToAllocate") or []]
    if claims:
        out["claims"] = [api_object("ResourceClaim", c) for c in claims]
    if case.get("allocatedDevices"):
        out["allocatedDevices"] = [device_id(d) for d in case["allocatedDevices"]]
    if case.get("allocatedSharedDeviceIDs"):
        out["allocatedSharedDeviceIDs"] = [{**device_id(s.device), "shareID": s.share_id}
                                           for s in case["allocatedSharedDeviceIDs"]]
    if case.get("allocatedCapacityDevices"):
        out["allocatedCapacityDevices"] = [
            {**device_id(key), "consumedCapacity": {n: deref(q).text for n, q in consumed.items()}}
            for key, consumed in case["allocatedCapacityDevices"].items()]
    if case.get("classes"):
        out["classes"] = [api_object("DeviceClass", c) for c in case["classes"]]
    if case.get("slices"):
        out["slices"] = [api_object("ResourceSlice", s) for s in case["slices"]]
    node_value = case.get("node") or default_node
    if node_value is None:
        out["node"] = None
    else:
        node_meta = deref(node_value)["metadata"]
        out["node"] = {"name": node_meta["name"], "labels": dict(node_meta.get("labels") or {})}
    expect: dict[str, Any] = {}
    unchecked: list[str] = []
    if case.get("expectError") is not None:
        expect["error"] = case["expectError"].substring
    expected_results = case.get("expectResults") or []
    if expected_results:
        if len(expected_results) != len(claims):
            raise TranscribeError(f"case {name}: {len(expected_results)} results for {len(claims)} claims")
        results = [result_entry(deref(c)["metadata"]["name"], r, fixed_share_id)
                   for c, r in zip(claims, expected_results, strict=True)]
        expect["results"] = [entry for entry, _ in results]
        if any(has_config for _, has_config in results):
            unchecked.append("config")
    elif "error" not in expect:
        if claims:
            expect["allocatable"] = False
        else:
            expect["results"] = []
    if case.get("expectNumAllocateOneInvocations"):
        expect["allocateOneInvocations"] = case["expectNumAllocateOneInvocations"]
        unchecked.append("allocateOneInvocations")
    if case.get("expectNumAllocateOneInvocationsByChannel"):
        expect["allocateOneInvocationsByChannel"] = dict(case["expectNumAllocateOneInvocationsByChannel"])
        unchecked.append("allocateOneInvocationsByChannel")
    if unchecked:
        out["unchecked"] = unchecked
    out["expect"] = expect
    return out


# --------------------------------------------------------------------------------------------------------------------
# Driver.


def digest(source: str) -> str:
    return hashlib.sha256(source.encode()).hexdigest()[:16]


RUNNER_FUNCTIONS = {"TestAllocator", "RunTestAllocator", "TestLexicographicalAllocator", "init"}


def helper_ports(go_file: GoFile) -> dict[str, Helper]:
    """The Python port of every helper function in the file, chosen by the Go source's digest."""
    ports: dict[str, Helper] = {}
    for name, source, line in go_file.functions():
        if name in RUNNER_FUNCTIONS:
            continue
        known = HELPERS.get(name)
        found = digest(source)
        if known is None or found not in known:
            raise TranscribeError(
                f"{go_file.path}:{line}: helper {name} (sha256 {found}) is not one this tool has a port of: "
                f"read its Go source, port it (or confirm the port still matches) and register the digest")
        port = known[found]
        if port is not None:
            ports[name] = port
    return ports


def load_globals(go_file: GoFile, evaluator: Evaluator) -> None:
    for keyword in ("const", "var"):
        for body, line in go_file.blocks(keyword):
            for number, text in enumerate(body.split("\n")):
                text = text.split("//")[0].strip()
                if not text:
                    continue
                name, _, expression = text.partition("=")
                name = name.strip()
                if not re.fullmatch(r"\w+", name) or not expression:
                    raise TranscribeError(f"{go_file.path}:{line + number}: a {keyword} this tool does not read")
                parser = Parser(tokenize(expression, line + number), go_file.path)
                evaluator.scope.names[name] = evaluator.eval(parser.expression())
    ENV.values = evaluator.scope.names


def git_show(mirror: Path, tag: str, path: str) -> str:
    return subprocess.run(["git", "-C", str(mirror), "show", f"{tag}:{path}"], check=True, capture_output=True,
                          text=True).stdout


def git_commit(mirror: Path, tag: str) -> str:
    return subprocess.run(["git", "-C", str(mirror), "rev-parse", f"{tag}^{{commit}}"], check=True,
                          capture_output=True, text=True).stdout.strip()


# The code that runs a table (see GoFile.runner), by digest: whether it runs a case with no node on node-1
# (RunTestAllocator from v0.36: `if tc.node == nil { tc.node = node(node1, region1) }`). A runner not listed here
# may compare differently from what the output's schema says: read it and register it.
RUNNERS = {
    "834ea0eddff6c152": False,  # v0.34.9 TestAllocator
    "bd0d17d394c32e00": False,  # v0.35.6 TestAllocator
    "095476f33e9572d2": True,  # v0.36.2 TestAllocator: RunTestAllocator, then the interrupt subtests
    "471481f174147c8d": True,  # v0.36.2 TestLexicographicalAllocator: RunTestAllocator
}
RUN_TEST_ALLOCATOR = {"a88f5594efdc3bfe"}  # v0.36.2 RunTestAllocator


def nil_node_is_node1(go_files: list[GoFile], runner_names: list[str]) -> bool:
    """What the pinned runners do with a case that has no node; they must agree."""
    verdicts = set()
    for go_file, runner_name in zip(go_files, runner_names, strict=True):
        found = digest(go_file.runner(runner_name))
        if found not in RUNNERS:
            raise TranscribeError(f"{go_file.path}: the code that runs {runner_name}'s table (sha256 {found}) is not "
                                  f"one this tool knows: read it and register it in RUNNERS")
        verdicts.add(RUNNERS[found])
        for name, source, line in go_file.functions():
            if name == "RunTestAllocator" and digest(source) not in RUN_TEST_ALLOCATOR:
                raise TranscribeError(f"{go_file.path}:{line}: RunTestAllocator (sha256 {digest(source)}) is not one "
                                      f"this tool knows: read it and register it in RUN_TEST_ALLOCATOR")
    if len(verdicts) != 1:
        raise TranscribeError("the runners disagree on what a case without a node means")
    return verdicts.pop()


def read_table(go_file: GoFile, runner: str, evaluator: Evaluator) -> list[tuple[str, Struct]]:
    preamble, preamble_line, literal, literal_line = go_file.table(runner)
    parser = Parser(tokenize("{" + preamble + "\n}", preamble_line - 1), go_file.path)
    evaluator.run(parser.block(), evaluator.scope)
    parser = Parser(tokenize(literal, literal_line), go_file.path)
    table_type = parser.parse_type()
    if table_type not in ("map[string]AllocatorTestCase", "map[string]struct"):
        raise parser.fail(f"a table of type {table_type}")
    if table_type == "map[string]struct":
        parser.expect("{")  # the inline struct type: field declarations up to its closing brace
        depth = 1
        while depth:
            depth += {"{": 1, "}": -1}.get(parser.tok.text, 0)
            parser.pos += 1
    node = parser.composite(None, literal_line)
    cases = []
    for key, value in node[3]:
        name = evaluator.eval(key)
        fields: dict[str, Any] = {}
        for field_key, field_value in value[3]:
            if field_key[0] != "name" or field_key[2] not in CASE_FIELDS:
                raise TranscribeError(f"{go_file.path}:{field_key[1]}: case {name}: unknown field {field_key[2:]}")
            fields[field_key[2]] = evaluator.element(field_value, None, evaluator.scope)
        cases.append((name, Struct("AllocatorTestCase", fields)))
    return cases


def transcribe(mirror: Path, tag: str) -> tuple[list[dict[str, Any]], str, list[str]]:
    """The cases of the tag's TestAllocator table, then (from v0.36) TestLexicographicalAllocator's."""
    minor = int(tag.split(".")[1])
    commit = git_commit(mirror, tag)
    tables = [(TABLE_PATH, "TestAllocator")] + ([(LEXICOGRAPHICAL_PATH, "TestLexicographicalAllocator")]
                                                if minor >= 36 else [])
    go_files = [GoFile(path, git_show(mirror, tag, path)) for path, _ in tables]
    evaluator = Evaluator(TABLE_PATH, helper_ports(go_files[0]))
    load_globals(go_files[0], evaluator)
    fixed_share_id = evaluator.scope.lookup("fixedShareID")
    default_node = node(ENV["node1"], ENV["region1"]) if nil_node_is_node1(go_files, [r for _, r in tables]) else None
    globals_scope = evaluator.scope
    cases: list[dict[str, Any]] = []
    for go_file, (_, runner) in zip(go_files, tables, strict=True):
        table_evaluator = Evaluator(go_file.path, evaluator.functions, Scope(globals_scope))
        for name, case in read_table(go_file, runner, table_evaluator):
            entry = transcribe_case(name, case, fixed_share_id, default_node)
            if runner == "TestLexicographicalAllocator":
                entry = {"name": name, "table": "lexicographical", **{k: v for k, v in entry.items() if k != "name"}}
            cases.append(entry)
    names = [case["name"] for case in cases]
    duplicates = {n for n in names if names.count(n) > 1}
    if duplicates:
        raise TranscribeError(f"duplicate case names: {sorted(duplicates)}")
    return cases, commit, [path for path, _ in tables]


HEADER = """\
# Source: {repository}@{commit}
# (tag {tag}, Kubernetes 1.{minor}.{patch}):
{paths}
# Licence: Apache-2.0 (the upstream files' licence; see their headers).
#
# GENERATED; do not edit. Regenerate with:
#   .venv/bin/python tools/transcribe_allocator_table.py --mirror PATH --tag {tag} \\
#       --out {out}
# where PATH is a clone of https://github.com/{repository}.
#
# One entry per upstream case, with its exact upstream name, in the Go file's order ({count} cases{lex_count}).
# The tool evaluates the table against Python ports of the Go helpers (claim, claimWithRequests, request, subRequest,
# slice, sliceWithDevices, sliceWithCounterSets, device, withDeviceCounterConsumption, withTaints, ...), which build
# the resource.k8s.io/v1 objects the helpers build, with JSON omitempty semantics (a zero count or an empty list is
# left out). Helper constants: driver-a/driver-b, pool-1..4, node-1 (region-1) and node-2 (region-2), both labelled
# planet=earth; class-a selects `device.driver == "driver-a"`, class-b driver-b; every slice has pool generation 1
# and resourceSliceCount 1 unless the case changes it.
#
# FIELDS
# - features: upstream's `Features{{...}}` as written (a missing flag is false). Names: AdminAccess, PrioritizedList,
#   PartitionableDevices, DeviceTaints, ConsumableCapacity, DeviceBinding and DeviceStatus (1.34 only: two flags),
#   DeviceBindingAndStatus (1.35+: one flag for both), ListTypeAttributes (1.36+, alpha: list-valued attributes).
# - claims, classes, slices: the objects, in order. A slice may carry only `spec.sharedCounters` (1.35+:
#   sliceWithCounterSets), written like the counters on devices: `[{{name, counters: {{c: {{value: q}}}}}}]`. A device
#   attribute is `{{int|bool|string|version: v}}`, or (ListTypeAttributes) a list `{{intValues|boolValues|stringValues|
#   versionValues: [...]}}`, named after upstream's Go fields, as the v1 API has no list type yet.
# - allocatedDevices: upstream `allocatedDevices` (devices held by other claims). allocatedSharedDeviceIDs: upstream
#   `allocatedSharedDeviceIDs` (shares of devices held by other claims: device and shareID).
#   allocatedCapacityDevices: upstream `allocatedCapacityDevices` (capacity already consumed by shares of other
#   claims, summed per device).
# - node: name and labels; null where upstream passes no node (those cases have no slices).{node_rule}
# - expect.results: upstream `expectResults`, one per claim in claim order (upstream matches them in any order;
#   within a claim the devices are compared in any order, as upstream does). `claim` is the claim's name, added for
#   reading. nodeSelector: the result's AllocationResult.nodeSelector (terms, requirements and values in any order).
#   A device's `shareID: true` marks a share of a device allocated more than once (upstream replaces every share ID
#   by one fixed UID before comparing); `consumedCapacity` what the share consumes; `bindingConditions` and
#   `bindingFailureConditions` are copied from the device; `tolerations` (1.35+) are the request's tolerations, as
#   upstream writes them ({{key, operator, value, effect, tolerationSeconds}}, empty ones left out).
# - expect.allocatable: false where upstream expects no results and no error although there are claims (the claims
#   do not fit on this node). expect.results: [] where there are no claims.
# - expect.error: a substring of the expected error message (upstream `gomega.ContainSubstring`).
# - expect.allocateOneInvocations: upstream `expectNumAllocateOneInvocations` (search steps; not compared);
#   expect.allocateOneInvocationsByChannel: upstream `expectNumAllocateOneInvocationsByChannel` (per allocator
#   implementation; not compared).
# - unchecked: parts of upstream's expectation gpu-dra does not produce, listed so none is dropped silently: the
#   allocation's `config` (class and claim opaque parameters), the search step counts.
# - table: `lexicographical` on the cases of TestLexicographicalAllocator (lexicographical_testing.go, from 1.36; run
#   upstream only by the incubating and experimental implementations); absent on TestAllocator's.
# Which cases the runner skips, and why, is in tests/test_allocator_upstream.py (SKIPPED), not here.
#
# NOT TRANSCRIBED: the `interrupt` subtests after the table (context cancellation and timeouts of a running
# allocation), which have no counterpart in a synchronous Python call.
"""


class Dumper(yaml.SafeDumper):
    """Block style for the case list, flow style for small leaves, as the hand-made file did; no anchors."""

    def ignore_aliases(self, data: Any) -> bool:
        return True


def render(cases: list[dict[str, Any]], tag: str, commit: str, sources: list[str], out: str) -> str:
    minor, patch = (int(part) for part in tag.lstrip("v").split(".")[1:3])
    lex = [c for c in cases if c.get("table") == "lexicographical"]
    header = HEADER.format(
        repository=REPOSITORY, commit=commit, tag=tag, minor=minor, patch=patch,
        paths="\n".join(f"#   {path} ({SOURCE_TABLES[path]})" for path in sources),
        count=len(cases) - len(lex), lex_count=f" + {len(lex)} lexicographical" if lex else "", out=out,
        node_rule=("\n#   From 1.36 upstream's runner uses node-1 (region-1) when a case has no node; that node is"
                   "\n#   written out here, so no case has a null node." if minor >= 36 else ""))
    body = yaml.dump({"cases": cases}, Dumper=Dumper, sort_keys=False, width=120, default_flow_style=None,
                     allow_unicode=True)
    return header + body


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mirror", required=True, type=Path,
                        help=f"a git clone (bare is fine) of https://github.com/{REPOSITORY}")
    parser.add_argument("--tag", required=True, help="the tag to transcribe, e.g. v0.35.6")
    parser.add_argument("--out", required=True, type=Path, help="the YAML file to write")
    args = parser.parse_args(argv)
    if not re.fullmatch(r"v0\.\d+\.\d+", args.tag):
        parser.error(f"--tag {args.tag!r}: expected a release tag such as v0.35.6")
    try:
        cases, commit, sources = transcribe(args.mirror, args.tag)
    except subprocess.CalledProcessError as error:
        print(f"error: git failed: {' '.join(error.cmd)}: {error.stderr.strip()}", file=sys.stderr)
        return 2
    except TranscribeError as error:
        print(f"error: {args.tag}: {error}", file=sys.stderr)
        return 2
    try:
        args.out.write_text(render(cases, args.tag, commit, sources, f"tests/data/{args.out.name}"))
    except OSError as error:
        print(f"error: cannot write {args.out}: {error.strerror}", file=sys.stderr)
        return 2
    print(f"{args.out}: {len(cases)} cases from {REPOSITORY}@{commit} ({args.tag})")
    return 0


if __name__ == "__main__":
    sys.exit(main())

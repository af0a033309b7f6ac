"""Which devices and nodes satisfy each claim, and why not: what the scheduler decides but does not say.

Per request (and subrequest): the devices passing the class's and the request's selectors, the others grouped by
reason naming the selector and, where it can be told, the failing term. A CEL runtime error on any device aborts the
claim, as in the allocator. Then allocation is simulated per node (gpu_dra.core.analysis.allocator). Each distinct
(selector, device shape) is evaluated once, and each distinct node once, so large uniform fleets stay fast.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from gpu_dra.core.analysis.allocator import Allocation, Choice, allocate
from gpu_dra.core.analysis.inventory import ALL_NODES, Device, Inventory
from gpu_dra.core.dra.cel import CompileError, compile_selector, device_view, evaluate
from gpu_dra.core.dra.cel.compile import CompiledSelector
from gpu_dra.core.dra.cel.lexer import device_lookups, tokenize
from gpu_dra.core.dra.objects import Constraint, ResourceClaim, parse_claim, parse_device_class
from gpu_dra.core.facts import nvidia
from gpu_dra.core.findings import ERROR, Finding

EXAMPLES = 5  # devices shown per reason in JSON reports unless every device is asked for
# Rules of the errors that stop a claim before allocation is tried.
CEL_COMPILE, CEL_RUNTIME = "cel-compile", "cel-runtime-error"
INVALID_CLAIM, MISSING_CLASS = "invalid-claim", "device-class-missing"


@dataclass
class RequestReport:
    name: str
    matching: list[Device] = field(default_factory=list)
    rejected: dict[str, list[Device]] = field(default_factory=dict)  # reason -> devices


@dataclass
class ClaimReport:
    claim: str
    allocatable: bool = False
    nodes: list[str] = field(default_factory=list)
    requests: list[RequestReport] = field(default_factory=list)
    errors: list[Finding] = field(default_factory=list)  # what stops the claim before allocation is tried
    reason: str = ""
    solution: tuple[str, list[Allocation]] | None = None

    def as_dict(self, examples: int | None = EXAMPLES) -> dict[str, Any]:
        """The report as JSON data: per request the matching devices and each rejection reason with its count and
        the first `examples` devices (None: every device; a 1,000-node fleet has 800,000 such entries)."""
        def devices(items: list[Device]) -> dict[str, Any]:
            shown = items if examples is None else items[:examples]
            return {"count": len(items), "devices": [{"node": d.node, "driver": d.driver, "pool": d.pool,
                                                      "device": d.name} for d in shown]}

        return {
            "claim": self.claim, "allocatable": self.allocatable, "nodes": self.nodes,
            "errors": [{"rule": e.rule, "message": e.message} for e in self.errors],
            "reason": self.reason,
            "requests": [{
                "name": r.name,
                "matching": devices(r.matching),
                "rejected": [{"reason": reason, **devices(items)}
                             for reason, items in sorted(r.rejected.items(), key=lambda item: -len(item[1]))],
            } for r in self.requests],
            "solution": None if self.solution is None else {
                "node": self.solution[0],
                "devices": [{"request": a.request + (f"/{a.subrequest}" if a.subrequest else ""),
                             "devices": [d.name for d in a.devices]} for a in self.solution[1]]},
        }


class Explainer:
    """Caches compiled selectors and per-shape results across claims."""

    def __init__(self, classes: Mapping[str, list[str]], consumable_capacity: bool = True):
        """`consumable_capacity` defaults on: the scheduler compiles stored selectors with every field declared
        (StoredExpressions, kubernetes/dynamic-resource-allocation@v0.34.0:cel/cache.go;
        docs/sources.md#cel-environment); the API server decides what may be stored."""
        self.classes = {**nvidia.CHART_CLASS_SELECTORS, **classes}
        self.consumable_capacity = consumable_capacity
        self._compiled: dict[str, CompiledSelector | CompileError] = {}
        self._results: dict[tuple[str, Any], tuple[bool, Finding | None]] = {}
        self._specs: dict[tuple[str, ...], tuple[tuple[str, str, str | None], ...] | None] = {}
        self._fleets: dict[int, _Fleet] = {}

    # ------------------------------------------------------------------------------------------- evaluation

    def _compile(self, expression: str) -> CompiledSelector | CompileError:
        if expression not in self._compiled:
            try:
                # Stored selectors are evaluated whatever their estimated cost (the API server checks it on write).
                self._compiled[expression] = compile_selector(expression, self.consumable_capacity, check_cost=False)
            except CompileError as error:
                self._compiled[expression] = error
        return self._compiled[expression]

    def _evaluate(self, expression: str, device: Device) -> tuple[bool, Finding | None]:
        """(matches, the error that aborts allocation) for one selector on one device, once per distinct view."""
        key = (expression, self._device_key(device, self._spec([expression])))
        if key not in self._results:
            compiled = self._compile(expression)
            if isinstance(compiled, CompileError):
                self._results[key] = (False, Finding(CEL_COMPILE, ERROR, f"CEL compile error: {compiled.message}"))
            else:
                view = device_view(device.driver, device.attributes, device.capacity, device.allow_multiple_allocations)
                result = evaluate(compiled, view)
                error = Finding(CEL_RUNTIME, ERROR, f"CEL runtime error: {result.error}") if result.error else None
                self._results[key] = (result.matches, error)
        return self._results[key]

    def _spec(self, expressions: Iterable[str]) -> tuple[tuple[str, str, str | None], ...] | None:
        """The parts of a device these expressions can read, or None when they may read anything."""
        key = tuple(expressions)
        if key not in self._specs:
            self._specs[key] = _reads(key)
        return self._specs[key]

    def _device_key(self, device: Device, spec: tuple[tuple[str, str, str | None], ...] | None) -> Any:
        if spec is None:
            return device.shape
        # A device whose attributes do not convert (a bad version) errors whatever the selector reads.
        return (device.driver, device.allow_multiple_allocations, device.unreadable,
                tuple(_project(device, field) for field in spec))

    def _fleet(self, inventory: Inventory) -> _Fleet:
        fleet = self._fleets.get(id(inventory))
        if fleet is None:  # the fleet holds its inventory, so an id filed here is never reused
            fleet = self._fleets[id(inventory)] = _Fleet(inventory)
        return fleet

    def _groups(self, expressions: list[str], inventory: Inventory) -> list[list[Device]]:
        """The inventory's devices grouped by what these expressions can see: one evaluation per group."""
        spec = self._spec(expressions)
        fleet = self._fleet(inventory)
        if spec not in fleet.grouping:
            groups: dict[Any, list[Device]] = {}
            for device in inventory.devices:
                groups.setdefault(self._device_key(device, spec), []).append(device)
            fleet.grouping[spec] = list(groups.values())
        return fleet.grouping[spec]

    def _failing_term(self, expression: str, device: Device) -> str | None:
        """Describe the first top-level `&&` term that is false on the device, in the user's words."""
        for term in _top_level_terms(expression):
            matches, error = self._evaluate(term, device)
            if error is None and not matches:
                return _describe(term, device)
        return None

    def _judge(self, device: Device, class_name: str, selectors: list[str],
               claim: str) -> tuple[bool, str | None, Finding | None]:
        """(passes, rejection reason, fatal error) for class then request selectors, as the allocator orders them."""
        stages = [(f"class {class_name}", self.classes[class_name]), (f"claim {claim}", selectors)]
        for owner, expressions in stages:
            for index, expression in enumerate(expressions):
                matches, error = self._evaluate(expression, device)
                if error is not None:
                    return False, None, error.at(message=f"{owner}: selector #{index}: {error.message}",
                                                 object=claim, path=f"{owner} selector #{index}")
                if not matches:
                    term = self._failing_term(expression, device)
                    prefix = f"class {class_name}: " if owner.startswith("class") else ""
                    return False, f"{prefix}selector #{index}: {term or 'false'}", None
        return True, None, None

    # ------------------------------------------------------------------------------------------- claims

    def explain(self, claim: ResourceClaim, inventory: Inventory,
                in_use: Mapping[Any, str] | None = None) -> ClaimReport:
        report = ClaimReport(claim.name)
        if claim.problem:
            report.errors.append(Finding(INVALID_CLAIM, ERROR, claim.problem, object=claim.name))
            report.reason = claim.problem
            return report
        in_use = {key: owner for key, owner in (in_use or {}).items() if owner != claim.name}  # its own: not busy
        choices_by_request: list[tuple[str, list[tuple[Choice, Any]]]] = []
        for request in claim.requests:
            choices = []
            for spec in request.choices:
                label = f"{request.name}/{spec.subrequest}" if spec.subrequest else request.name
                request_report = RequestReport(label)
                report.requests.append(request_report)
                class_name = spec.device_class
                if class_name not in self.classes:
                    report.errors.append(Finding(MISSING_CLASS, ERROR, f"request {label}: device class {class_name} "
                                                                       "does not exist", object=claim.name))
                    continue
                selectors = list(spec.selectors)
                expressions = [*self.classes[class_name], *selectors]
                passing = []
                for index, group in enumerate(self._groups(expressions, inventory)):
                    passes, reason, fatal = self._judge(group[0], class_name, selectors, claim.name)
                    if fatal:
                        if fatal not in report.errors:
                            report.errors.append(fatal)
                        request_report.rejected.setdefault(f"aborts the claim: {fatal.message}", []).extend(group)
                    elif passes:
                        request_report.matching.extend(group)
                        passing.append(index)
                    else:
                        request_report.rejected.setdefault(reason or "no match", []).extend(group)
                choice = Choice(spec.subrequest, spec.allocation_mode, spec.count, (), spec.admin_access)
                choices.append((choice, (self._spec(expressions), tuple(passing))))
            choices_by_request.append((request.name, choices))
        if report.errors:
            first = report.errors[0]
            report.reason = first.message + (" (a CEL runtime error on any device aborts the whole claim)"
                                             if first.rule == CEL_RUNTIME else "")
            return report
        constraints = list(claim.constraints)
        self._simulate(report, choices_by_request, constraints, inventory, in_use)
        if not report.allocatable and constraints and all(r.matching for r in report.requests):
            unconstrained = ClaimReport(claim.name)
            self._simulate(unconstrained, choices_by_request, [], inventory, in_use)
            if unconstrained.allocatable:
                report.reason = _constraint_reason(constraints, report.requests, unconstrained.nodes[0])
        return report

    def _simulate(self, report: ClaimReport, choices_by_request: list[tuple[str, list[tuple[Choice, Any]]]],
                  constraints: list[Constraint], inventory: Inventory, in_use: Mapping[Any, str]) -> None:
        """Allocate on every node; nodes whose candidates look alike to the allocator are decided once."""
        fleet = self._fleet(inventory)
        attributes = tuple(c.match_attribute or c.distinct_attribute or "" for c in constraints)
        busy = frozenset(in_use)
        per_choice = [[(choice, fleet.candidates(matching), fleet.looks(matching, attributes, busy, in_use))
                       for choice, matching in choices] for _, choices in choices_by_request]

        def on(node: str) -> list[tuple[str, list[Choice]]]:
            return [(name, [Choice(c.subrequest, c.mode, c.count, candidates.get(node, ()), c.admin_access)
                            for c, candidates, _ in indexed])
                    for (name, _), indexed in zip(choices_by_request, per_choice, strict=True)]

        outcomes: dict[Any, bool] = {}
        for node in fleet.nodes:
            signature = tuple(tuple(looks.get(node, ()) for _, _, looks in indexed) for indexed in per_choice)
            allocatable = outcomes.get(signature)
            if allocatable is None:
                allocatable = outcomes[signature] = allocate(on(node), constraints, in_use) is not None
            if allocatable:
                report.nodes.append(node)
                if report.solution is None:
                    report.solution = (node, allocate(on(node), constraints, in_use) or [])
        report.allocatable = bool(report.nodes)
        if not report.allocatable:
            report.reason = _unallocatable_reason(report)


class _Fleet:
    """Per-inventory indexes, shared by every claim explained against it: the node list, device groups per
    selector view, and per set of matching groups the candidates of each node and what allocation sees of them."""

    def __init__(self, inventory: Inventory):
        self.inventory = inventory  # held, so the id() this is filed under cannot be reused while it lives
        self.nodes = inventory.nodes()
        self.grouping: dict[Any, list[list[Device]]] = {}
        self._candidates: dict[Any, dict[str, tuple[Device, ...]]] = {}
        self._looks: dict[Any, dict[str, tuple[Any, ...]]] = {}

    def candidates(self, matching: tuple[Any, tuple[int, ...]]) -> dict[str, tuple[Device, ...]]:
        """node -> the matching devices it can use: its own and those reachable from every node."""
        found = self._candidates.get(matching)
        if found is None:
            spec, passing = matching
            groups = self.grouping[spec]
            by_node: dict[str, list[Device]] = defaultdict(list)
            for index in passing:
                for device in groups[index]:
                    by_node[device.node].append(device)
            everywhere = tuple(by_node.pop(ALL_NODES, ()))
            found = self._candidates[matching] = {node: (*devices, *everywhere) for node, devices in by_node.items()}
            if everywhere:
                found.update({node: everywhere for node in self.nodes if node not in found})
        return found

    def looks(self, matching: tuple[Any, tuple[int, ...]], attributes: tuple[str, ...], busy: frozenset[Any],
              in_use: Mapping[Any, str]) -> dict[str, tuple[Any, ...]]:
        """node -> per candidate (in use elsewhere, the constrained attributes): all allocation depends on."""
        key = (matching, attributes, busy)
        found = self._looks.get(key)
        if found is None:
            found = self._looks[key] = {
                node: tuple((bool(in_use.get((d.driver, d.pool, d.name))), *(d.typed_attribute(a) for a in attributes))
                            for d in devices)
                for node, devices in self.candidates(matching).items()}
        return found


def _constraint_reason(constraints: list[Constraint], requests: list[RequestReport], node: str) -> str:
    """Enough devices match, but not together: show the constrained values on a node that has the devices."""
    parts = []
    for constraint in constraints:
        attribute = constraint.match_attribute or constraint.distinct_attribute or ""
        values: dict[str, int] = {}
        for request in requests:
            for device in request.matching:
                if device.node == node:
                    value = str(device.attribute(attribute))
                    values[value] = values.get(value, 0) + 1
        kind = "matchAttribute" if constraint.match_attribute else "distinctAttribute"
        seen = ", ".join(f"{v} x{n}" if n > 1 else v for v, n in sorted(values.items()))
        parts.append(f"{kind} {attribute}: on {node} the matching devices carry {seen}")
    return ("enough devices match, but no node has a set that satisfies the constraints; " + "; ".join(parts))


def _unallocatable_reason(report: ClaimReport) -> str:
    for request in report.requests:
        if not request.matching:
            top = max(request.rejected.items(), key=lambda item: len(item[1]), default=None)
            why = f"; most common: {top[0]} ({len(top[1])} devices)" if top else ""
            return f"request {request.name}: no device matches{why}"
    return ("cannot allocate all claims: no single node has enough matching, free devices that also satisfy the "
            "claim's constraints")


# --------------------------------------------------------------------------------------------- projections


def _reads(expressions: tuple[str, ...]) -> tuple[tuple[str, str, str | None], ...] | None:
    """(map, domain, name or None for the whole domain) for every device lookup; None when an expression reads
    device.attributes or device.capacity other than through a literal domain (then everything may matter)."""
    fields: set[tuple[str, str, str | None]] = set()
    for expression in expressions:
        tokens = tokenize(expression)
        if tokens is None:
            return None
        lookups = device_lookups(tokens)
        uses = sum(1 for i in range(len(tokens) - 2) if tokens[i].text == "device" and tokens[i + 1].text == "."
                   and tokens[i + 2].text in ("attributes", "capacity"))
        if uses != len(lookups) or any(lookup.domain is None for lookup in lookups):
            return None
        fields.update((lookup.map, lookup.domain or "", lookup.name) for lookup in lookups)
    return tuple(sorted(fields, key=lambda f: (f[0], f[1], f[2] or "")))


_ABSENT = object()


def _project(device: Device, field: tuple[str, str, str | None]) -> Any:
    map_name, domain, name = field
    source: Mapping[str, Any] = device.attributes if map_name == "attributes" else device.capacity
    if name is None:  # the whole domain
        return tuple(sorted((k, repr(v)) for k, v in source.items()
                            if k.rpartition("/")[0] == domain or (domain == device.driver and "/" not in k)))
    keys = (name, f"{domain}/{name}") if domain == device.driver else (f"{domain}/{name}",)
    for key in keys:
        if key in source:
            return repr(source[key])
    return _ABSENT


# --------------------------------------------------------------------------------------------- failing terms


def _top_level_terms(expression: str) -> list[str]:
    tokens = tokenize(expression)
    if not tokens:
        return [expression]
    terms, depth, start = [], 0, 0
    for token in tokens:
        if token.text in ("(", "[", "[?", "{"):
            depth += 1
        elif token.text in (")", "]", "}"):
            depth -= 1
        elif token.text in ("||", "?"):
            if depth == 0:
                return [expression]  # not a conjunction: judge it whole
        elif token.text == "&&" and depth == 0:
            terms.append(expression[start:token.start].strip())
            start = token.end
    terms.append(expression[start:].strip())
    return terms


_LOOKUP = r"device\.attributes\[\s*['\"]([^'\"]+)['\"]\s*\]\.(\w+)"
_CAPACITY = r"device\.capacity\[\s*['\"]([^'\"]+)['\"]\s*\]\.(\w+)"


def _value(device: Device, match: re.Match[str]) -> Any:
    return device.attribute(f"{match.group(1)}/{match.group(2)}")


def _describe(term: str, device: Device) -> str:
    if m := re.fullmatch(_LOOKUP + r"\.matches\(\s*['\"](.*)['\"]\s*\)", term, re.S):
        pattern = m.group(3).encode().decode("unicode_escape")  # as written in CEL: 'L4\\b' is the regex L4\b
        return f'{m.group(2)} "{_value(device, m)}" does not match "{pattern}"'
    if m := re.fullmatch(_LOOKUP + r"\s*==\s*['\"](.*)['\"]", term, re.S):
        return f'{m.group(2)} is "{_value(device, m)}", not "{m.group(3)}"'
    if m := re.fullmatch(_LOOKUP + r"\s+in\s+\[(.*)\]", term, re.S):
        return f'{m.group(2)} "{_value(device, m)}" is not one of [{m.group(3)}]'
    if m := re.fullmatch(_CAPACITY + r"\.compareTo\(\s*quantity\(\s*['\"]([^'\"]+)['\"]\s*\)\s*\)\s*>=\s*0", term):
        have = device.capacity.get(m.group(2)) or device.capacity.get(f"{m.group(1)}/{m.group(2)}")
        return f"{m.group(2)} {have} is less than {m.group(3)}"
    if m := re.fullmatch(_LOOKUP + r"\.compareTo\(\s*semver\(\s*['\"]([^'\"]+)['\"].*\)\s*>=\s*0", term):
        return f"{m.group(2)} {_value(device, m)} is below {m.group(3)}"
    if re.fullmatch(r"device\.driver\s*==\s*['\"]([^'\"]+)['\"]", term):
        return f"driver is {device.driver}"
    return f"`{term}` is false"


# --------------------------------------------------------------------------------------------- inputs


def claims_from_objects(objects: Iterable[Mapping[str, Any]]) -> list[ResourceClaim]:
    return [claim for claim in map(parse_claim, objects) if claim is not None]


def classes_from_objects(objects: Iterable[Mapping[str, Any]]) -> dict[str, list[str]]:
    return {device_class.name: list(device_class.selectors) for device_class in map(parse_device_class, objects)
            if device_class is not None}


def in_use_from_claims(claims: Iterable[ResourceClaim]) -> dict[Any, str]:
    """Devices allocated to existing ResourceClaims (status.allocation.devices.results), admin access excluded:
    (driver, pool, device) -> the claim holding it. Templates carry no allocation."""
    used: dict[Any, str] = {}
    for claim in claims:
        for result in claim.allocated:
            if not result.admin_access:
                used[(result.driver, result.pool, result.device)] = claim.name
    return used

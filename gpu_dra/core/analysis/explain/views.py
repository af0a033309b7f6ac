"""Selectors evaluated once per distinct view of a device: the parts of a device a set of CEL expressions can read
(their literal `device.attributes[...]` and `device.capacity[...]` lookups), so each distinct (selector, view) is
evaluated once and an inventory's devices are grouped by view, one evaluation per group."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from gpu_dra.core.analysis.inventory import Device, Inventory
from gpu_dra.core.dra.cel import CompileError, compile_selector, device_view, evaluate
from gpu_dra.core.dra.cel.compile import CompiledSelector
from gpu_dra.core.dra.cel.lexer import device_lookups, tokenize
from gpu_dra.core.findings import ERROR, Finding

from .report import CEL_COMPILE, CEL_RUNTIME

# (map, domain, name or None for the whole domain): one part of a device an expression reads.
ViewField = tuple[str, str, str | None]
# The parts a set of expressions reads, or None when they may read anything.
ViewSpec = tuple[ViewField, ...] | None


def _reads(expressions: tuple[str, ...]) -> ViewSpec:
    """(map, domain, name or None for the whole domain) for every device lookup; None when an expression reads
    device.attributes or device.capacity other than through a literal domain (then everything may matter)."""
    fields: set[ViewField] = set()
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


def _project(device: Device, field: ViewField) -> Any:
    map_name, domain, name = field
    source: Mapping[str, Any] = device.attributes if map_name == "attributes" else device.capacity
    if name is None:  # the whole domain
        return tuple(sorted((k, repr(v)) for k, v in source.items()
                            if k.rpartition("/")[0] == domain or (domain == device.driver and "/" not in k)))
    if domain == device.driver and name in source:
        return repr(source[name])
    found = source.get(f"{domain}/{name}", _ABSENT)
    return found if found is _ABSENT else repr(found)


class SelectorEvaluator:
    """Compiled selectors, results per (selector, device view), and per inventory its devices grouped by view."""

    def __init__(self, consumable_capacity: bool, list_type_attributes: bool = False):
        self.consumable_capacity, self.list_type_attributes = consumable_capacity, list_type_attributes
        self._compiled: dict[str, CompiledSelector | CompileError] = {}
        self._results: dict[tuple[str, Any], tuple[bool, Finding | None]] = {}
        self._specs: dict[tuple[str, ...], ViewSpec] = {}
        self._grouping: dict[int, tuple[Inventory, dict[Any, list[list[Device]]]]] = {}

    def compile(self, expression: str) -> CompiledSelector | CompileError:
        if expression not in self._compiled:
            try:
                # Stored selectors are evaluated whatever their estimated cost (the API server checks it on write).
                self._compiled[expression] = compile_selector(expression, self.consumable_capacity, check_cost=False,
                                                              list_type_attributes=self.list_type_attributes)
            except CompileError as error:
                self._compiled[expression] = error
        return self._compiled[expression]

    def evaluate(self, expression: str, device: Device) -> tuple[bool, Finding | None]:
        """(matches, the error that aborts allocation) for one selector on one device, once per distinct view."""
        key = (expression, self.device_key(device, self.spec([expression])))
        if key not in self._results:
            compiled = self.compile(expression)
            if isinstance(compiled, CompileError):
                self._results[key] = (False, Finding(CEL_COMPILE, ERROR, f"CEL compile error: {compiled.message}"))
            else:
                view = device_view(device.driver, device.attributes, device.capacity, device.allow_multiple_allocations)
                result = evaluate(compiled, view)
                error = Finding(CEL_RUNTIME, ERROR, f"CEL runtime error: {result.error}") if result.error else None
                self._results[key] = (result.matches, error)
        return self._results[key]

    def spec(self, expressions: Iterable[str]) -> ViewSpec:
        """The parts of a device these expressions can read, or None when they may read anything."""
        key = tuple(expressions)
        if key not in self._specs:
            self._specs[key] = _reads(key)
        return self._specs[key]

    @staticmethod
    def device_key(device: Device, spec: ViewSpec) -> Any:
        if spec is None:
            return device.shape
        # A device whose attributes do not convert (a bad version) errors whatever the selector reads.
        return (device.driver, device.allow_multiple_allocations, device.unreadable,
                tuple(_project(device, field) for field in spec))

    def grouping_of(self, inventory: Inventory) -> dict[Any, list[list[Device]]]:
        """Device groups per selector view, per inventory (held with it, so its id is not reused)."""
        held = self._grouping.get(id(inventory))
        if held is None:
            held = self._grouping[id(inventory)] = (inventory, {})
        return held[1]

    def groups(self, expressions: list[str], inventory: Inventory) -> list[list[Device]]:
        """The inventory's devices grouped by what these expressions can see: one evaluation per group."""
        spec = self.spec(expressions)
        grouping = self.grouping_of(inventory)
        if spec not in grouping:
            groups: dict[Any, list[Device]] = {}
            for device in inventory.devices:
                groups.setdefault(self.device_key(device, spec), []).append(device)
            grouping[spec] = list(groups.values())
        return grouping[spec]

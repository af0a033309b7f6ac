"""Evaluate a compiled selector on one device, as the scheduler's allocator does.

The device is presented as Kubernetes builds it (k8s.io/dynamic-resource-allocation/cel compile.go): attributes
and capacity grouped by domain, unprefixed names under the driver's domain, versions as semver values. A runtime
error is reported, never treated as "no match": in the allocator it aborts the whole claim. So is passing the
scheduler's runtime cost limit, or gpu-dra's size bound (gpu_dra.core.dra.cel.budget).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from cel_expr_python import cel

from gpu_dra.core.dra.cel import budget, library
from gpu_dra.core.dra.cel.compile import CompiledSelector
from gpu_dra.core.dra.quantity import QuantityError


@dataclass(frozen=True)
class DeviceView:
    """A device as CEL sees it, plus the problems found while building it (each aborts evaluation)."""

    data: dict[str, Any]
    problems: tuple[str, ...] = ()


@dataclass(frozen=True)
class EvalResult:
    matches: bool
    error: str | None = None  # a runtime error: the scheduler aborts the claim


def _qualified(name: str, driver: str) -> tuple[str, str]:
    domain, _, ident = name.rpartition("/")
    return (domain or driver), ident


def _attribute_value(name: str, value: Mapping[str, Any]) -> Any:
    if "int" in value:
        return int(value["int"])
    if "bool" in value:
        return bool(value["bool"])
    if "string" in value:
        return str(value["string"])
    if "version" in value:
        try:
            return library.parse_semver(str(value["version"]))
        except library.SemverError as exc:
            raise ValueError(f"attribute {name}: parse semantic version: {exc}") from None
    raise ValueError(f"attribute {name}: unsupported attribute value")


@functools.lru_cache(maxsize=4096)
def _version_parses(text: str) -> bool:
    try:
        library.parse_semver(text)
    except library.SemverError:
        return False
    return True


def attributes_convert(attributes: Mapping[str, Mapping[str, Any]]) -> bool:
    """Whether every attribute converts to its CEL type (device_view finds no attribute problem). A fleet's devices
    share a few driver and CUDA version strings: each is parsed once."""
    for name, value in attributes.items():
        if "version" in value and not ("int" in value or "bool" in value or "string" in value):
            if not _version_parses(str(value["version"])):
                return False
            continue
        try:
            _attribute_value(name, value)
        except ValueError:
            return False
    return True


def device_view(driver: str, attributes: Mapping[str, Mapping[str, Any]] | None = None,
                capacity: Mapping[str, Any] | None = None, allow_multiple_allocations: bool | None = None,
                ) -> DeviceView:
    """Build the CEL `device` from a ResourceSlice device (v1 shape: attributes {name: {int|bool|string|version}},
    capacity {name: {value: quantity}} or {name: quantity})."""
    problems = []
    attribute_map: dict[str, dict[str, Any]] = {}
    for name, value in (attributes or {}).items():
        domain, ident = _qualified(name, driver)
        try:
            attribute_map.setdefault(domain, {})[ident] = _attribute_value(name, value)
        except ValueError as exc:
            problems.append(str(exc))
    capacity_map: dict[str, dict[str, Any]] = {}
    for name, value in (capacity or {}).items():
        domain, ident = _qualified(name, driver)
        text = value.get("value") if isinstance(value, Mapping) else value
        try:
            capacity_map.setdefault(domain, {})[ident] = library.make_quantity(str(text))
        except QuantityError as exc:
            problems.append(f"capacity {name}: {exc}")
    data: dict[str, Any] = {"driver": driver, "attributes": attribute_map, "capacity": capacity_map}
    data["allowMultipleAllocations"] = bool(allow_multiple_allocations)
    return DeviceView(data, tuple(problems))


_NOT_FOUND = re.compile(r'^NOT_FOUND: Key not found in map : "?(.*?)"?$')


def runtime_error_text(message: str) -> str:
    """cel-cpp's error in the words of cel-go, which is what users see from the scheduler."""
    match = _NOT_FOUND.match(message)
    if match:
        return f"no such key: {match.group(1)}"
    if "Iteration budget exceeded" in message:
        # cel-cpp's comprehension budget stands in for Kubernetes' runtime cost limit (1,000,000).
        return "operation cancelled: actual cost limit exceeded (comprehension iteration budget)"
    return re.sub(r"^[A-Z_]+: ", "", message)


def evaluate(selector: CompiledSelector, device: DeviceView) -> EvalResult:
    if device.problems:
        return EvalResult(False, device.problems[0])
    data = device.data
    if not selector.consumable_capacity and "allowMultipleAllocations" in data:
        data = {k: v for k, v in data.items() if k != "allowMultipleAllocations"}
    with budget.evaluation() as spent:
        try:
            result = selector.program.eval(data={"device": data})
        except RuntimeError as error:  # e.g. cel-cpp's comprehension iteration budget: evaluation stops, never hangs
            return EvalResult(False, spent.exceeded or runtime_error_text(str(error)))
    if spent.exceeded:  # the scheduler stops at the limit, whatever `||`, `&&` or a macro would make of the error
        return EvalResult(False, spent.exceeded)
    if result.type() == cel.Type.ERROR:
        return EvalResult(False, runtime_error_text(str(result.value())))
    value = result.value()
    if not isinstance(value, bool):
        kind = result.type().name().lower()
        return EvalResult(False, f"CEL result of type {kind} could not be converted to bool: {value!r}")
    return EvalResult(value)

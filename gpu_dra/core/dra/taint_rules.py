"""DeviceTaintRules read into one shape whatever version was read: each keeps its selector and its taint, the taint
naming its rule. A rule that has not the API's shape is an ObjectError naming it and the key."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from gpu_dra.core.data import mapping
from gpu_dra.core.dra.objects import ObjectError, list_at, mapping_at, named_spec
from gpu_dra.core.dra.slices import DeviceTaint


@dataclass(frozen=True)
class DeviceTaintRule:
    """A DeviceTaintRule: its taint added to every device its selector matches, "the same effect as if the taint
    was specified directly in the ResourceSlice by the DRA driver". Served as resource.k8s.io/v1alpha3 from 1.33
    and v1beta2 from 1.36 (kubernetes/api@v0.34.0:resource/v1alpha3/types.go, kubernetes/api@v0.36.0:
    resource/v1beta2/types.go). A criterion not written is None and matches every device. So does a rule without
    `deviceSelector`: the API's comment says such a rule matches none, but the scheduler's ResourceSlice tracker
    applies it to all (`applyPatches` in kubernetes/dynamic-resource-allocation@v0.34.9 and @v0.36.0
    resourceslice/tracker/tracker.go), and the tracker decides. `device_class` and `selectors` (CEL) exist in
    1.33-1.34's v1alpha3 only; 1.35 removed them (kubernetes/api@v0.35.0:resource/v1alpha3/types.go)."""

    name: str
    taint: DeviceTaint
    source: str  # the file or "cluster" it was read from
    driver: str | None = None
    pool: str | None = None
    device: str | None = None
    device_class: str | None = None
    selectors: tuple[str, ...] = ()


def parse_taint_rule(obj: Mapping[str, Any], source: str) -> DeviceTaintRule:
    """A DeviceTaintRule of any served version (v1alpha3, v1beta2); a shape the API server would not store is an
    ObjectError naming the rule and the key."""
    name, where, spec = named_spec(obj, "DeviceTaintRule", source, " with deviceSelector and taint")
    taint = spec.get("taint")
    if not isinstance(taint, Mapping):
        raise ObjectError(f"{where}: spec.taint must be a mapping with key, value and effect")
    for key in ("key", "effect"):
        if not isinstance(taint.get(key), str) or not taint[key]:
            raise ObjectError(f"{where}: spec.taint.{key} must be a non-empty string")
    value = "" if taint.get("value") is None else taint["value"]
    if not isinstance(value, str):
        raise ObjectError(f"{where}: spec.taint.value must be a string")
    selector = mapping_at(spec.get("deviceSelector"), f"{where}: spec.deviceSelector")
    criteria: dict[str, str | None] = {}
    for key in ("driver", "pool", "device", "deviceClassName"):
        written = selector.get(key)
        if written is not None and not isinstance(written, str):
            raise ObjectError(f"{where}: spec.deviceSelector.{key} must be a string")
        criteria[key] = written
    expressions = []
    for index, entry in enumerate(list_at(selector.get("selectors"), f"{where}: spec.deviceSelector.selectors")):
        expression = mapping(mapping(entry).get("cel")).get("expression")
        if not isinstance(expression, str):
            raise ObjectError(f"{where}: spec.deviceSelector.selectors[{index}] must be {{cel: {{expression: "
                              "string}}")
        expressions.append(expression)
    return DeviceTaintRule(name, DeviceTaint(taint["key"], value, taint["effect"], name), source,
                           criteria["driver"], criteria["pool"], criteria["device"], criteria["deviceClassName"],
                           tuple(expressions))

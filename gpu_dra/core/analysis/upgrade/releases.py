"""What a new release of the DRA driver chart or of Karpenter changes for a stack, from the facts gpu-dra keeps of
each release: the driver's gates (facts/nvidia_driver.DRIVER_GATES), the chart's values.yaml (facts/chart_values),
the DeviceClasses it renders (render/chart_templates), the attributes its devices publish (facts/nvidia); Karpenter's
per-instance-type DRA metadata (facts/karpenter_dra)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from gpu_dra.core.analysis.upgrade.report import finding
from gpu_dra.core.config.models import Stack
from gpu_dra.core.facts import nvidia
from gpu_dra.core.facts.nvidia_driver import DRIVER_GATES, effective_gates
from gpu_dra.core.findings import Finding
from gpu_dra.core.render import charts
from gpu_dra.core.render.chart_templates import chart_objects

NOTHING = "no gate, value, DeviceClass or published attribute gpu-dra models differs"


def _on(value: bool) -> str:
    return "on" if value else "off"


def _keys(values: Mapping[str, Any], path: tuple[str, ...] = ()) -> set[tuple[str, ...]]:
    """Every key path of a values file (a non-empty map's keys, not the map itself)."""
    found: set[tuple[str, ...]] = set()
    for key, value in values.items():
        here = (*path, str(key))
        found |= _keys(value, here) if isinstance(value, Mapping) and value else {here}
    return found


def _classes(stack: Stack) -> dict[str, Mapping[str, Any]]:
    driver = stack.config.dra_driver
    return {str(obj["metadata"]["name"]): obj.get("spec") or {}
            for obj in chart_objects(driver.chart.value, driver.version, charts.dra_chart_values(stack.config),
                                     "gpu-dra", "gpu-dra") if obj.get("kind") == "DeviceClass"}


def driver_changes(before: Stack, after: Stack, file: str, line: int | None) -> tuple[list[str], list[Finding]]:
    """What moving the stack's chart from one release (or chart line) to another changes: gates that arrive, gates
    whose effective value for the stack's featureGates changes, values keys gone or new, the chart's DeviceClasses
    gained, lost or changed, attributes the devices stop or start publishing."""
    old, new = before.config.dra_driver, after.config.dra_driver
    said: list[str] = []
    found: list[Finding] = []
    old_level, new_level = nvidia.release_level_of(old.version), nvidia.release_level_of(new.version)
    for gate in DRIVER_GATES.values():
        if old_level < gate.since <= new_level:
            said.append(f"driver gate {gate.name} arrives ({gate.stage}, {'on' if gate.default else 'off'} by "
                        "default)")
    before_gates = effective_gates(old.version, old.feature_gates)
    after_gates = effective_gates(new.version, new.feature_gates)
    for name in sorted(set(before_gates) | set(after_gates)):
        was, will = before_gates.get(name, False), after_gates.get(name, False)
        if was != will:
            said.append(f"driver gate {name} is {_on(will)} for this stack (was {_on(was)})")
    old_values = nvidia.chart_values_of(old.chart.value, old.version) or {}
    new_values = nvidia.chart_values_of(new.chart.value, new.version) or {}
    old_keys, new_keys = _keys(old_values), _keys(new_values)
    for key in sorted(old_keys - new_keys):
        said.append(f"value {'.'.join(key)} is gone")
    for key in sorted(new_keys - old_keys):
        said.append(f"value {'.'.join(key)} is new")
    for key in sorted(_keys(old.values)):
        if key in old_keys and key not in new_keys:
            found.append(finding("upgrade-driver", f"draDriver.values sets {'.'.join(key)}, which "
                                                   f"{new.chart.value} {new.version} no longer has", error=True,
                                 file=file, line=line, path=f"gpu-dra:draDriver.values.{'.'.join(key)}"))
    if before.config.installs_driver_chart:
        old_classes, new_classes = _classes(before), _classes(after)
        for name in sorted(set(new_classes) - set(old_classes)):
            said.append(f"the chart adds DeviceClass {name}")
        for name in sorted(set(old_classes) - set(new_classes)):
            said.append(f"the chart no longer installs DeviceClass {name}")
            found.append(finding("upgrade-driver", f"DeviceClass {name} is no longer installed by "
                                                   f"{new.chart.value} {new.version}", file=file, line=line))
        for name in sorted(set(old_classes) & set(new_classes)):
            if old_classes[name] != new_classes[name]:
                resource = new_classes[name].get("extendedResourceName")
                extra = f" (now maps {resource})" if resource and not old_classes[name].get("extendedResourceName") \
                    else ""
                said.append(f"the chart changes DeviceClass {name}{extra}")
    for device_type in ("gpu", "mig"):
        was_published = nvidia.published_attributes(old_level, device_type)
        now_published = nvidia.published_attributes(new_level, device_type)
        for attribute in sorted(was_published - now_published):
            said.append(f"{device_type} devices stop publishing {attribute}")
        for attribute in sorted(now_published - was_published):
            said.append(f"{device_type} devices start publishing {attribute}")
    if not said:
        said.append(f"{NOTHING} between {old.chart.value} {old.version} and {new.chart.value} {new.version}")
    return said, found


def nothing_modelled(said: list[str]) -> bool:
    return len(said) == 1 and said[0].startswith(NOTHING)


def karpenter_type_changes(pools: Iterable[tuple[str, list[str]]], old: Mapping[str, Any], new: Mapping[str, Any],
                           versions: tuple[str, str]) -> list[str]:
    """Per NodePool (name, instance types), the instance types whose DRA metadata one release has and the other has
    not: Karpenter launches a node for a claim only on types it has metadata for."""
    said = []
    for name, types in pools:
        gained = sorted(t for t in types if t in new and t not in old)
        lost = sorted(t for t in types if t in old and t not in new)
        if lost:
            said.append(f"NodePool {name}: Karpenter {versions[1]} has no DRA metadata for {', '.join(lost)} "
                        f"(Karpenter {versions[0]} had): no node of these types is launched for a claim")
        if gained:
            said.append(f"NodePool {name}: Karpenter {versions[1]} gains DRA metadata for {', '.join(gained)}")
    return said

"""DeviceTaintRules applied as the scheduler's ResourceSlice tracker applies them: each rule's taint added to the
devices it selects, before the allocator sees them."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from gpu_dra.core.analysis.allocator import Features
from gpu_dra.core.analysis.inventory import Device, Inventory, devices_of
from gpu_dra.core.dra.cel import CompileError
from gpu_dra.core.dra.slices import ResourceSlice
from gpu_dra.core.dra.taint_rules import DeviceTaintRule

from .views import SelectorEvaluator


class TaintRuleError(ValueError):
    """A DeviceTaintRule explain cannot apply as the scheduler would: the message names its file, the rule and the
    field."""


@dataclass
class TaintedInventory:
    """An inventory as the scheduler's allocator sees it once DeviceTaintRules are applied, and what each did."""

    inventory: Inventory  # applied: the devices carry the rules' taints, and it holds no rules to apply twice
    applied: bool  # whether the features apply DeviceTaintRules at all
    rules: list[tuple[DeviceTaintRule, list[Device]]]  # each rule read, with the devices it taints
    notes: list[str] = field(default_factory=list)  # devices a rule's selector errors on, which stay untainted

    def as_dict(self) -> dict[str, Any]:
        return {"applied": self.applied, "notes": self.notes, "rules": [
            {"name": rule.name, "source": rule.source, "taint": rule.taint.label,
             "devices": [{"node": d.node, "driver": d.driver, "pool": d.pool, "device": d.name} for d in tainted]}
            for rule, tainted in self.rules]}


class TaintRules:
    """The DeviceTaintRules of an inventory judged with a scheduler's classes, selectors and features."""

    def __init__(self, selectors: SelectorEvaluator, classes: Mapping[str, list[str]], features: Features):
        self.selectors, self.classes, self.features = selectors, classes, features

    def apply(self, inventory: Inventory) -> TaintedInventory:
        """The inventory as the scheduler's ResourceSlice tracker hands it to the allocator: with the features that
        apply DeviceTaintRules, each rule's taint added to the devices it selects (`applyPatches` in
        kubernetes/dynamic-resource-allocation@v0.34.9 and @v0.35.0 resourceslice/tracker/tracker.go: driver, pool
        and device name; before 1.35 also the class's and the rule's CEL selectors, a device on which one errors
        left untainted); otherwise as it is. Raises TaintRuleError for a rule it cannot apply as the scheduler
        would."""
        applied = self.features.device_taint_rules
        tainted: dict[int, list[Device]] = {id(rule): [] for rule in inventory.taint_rules}
        result = TaintedInventory(inventory, applied, [(rule, tainted[id(rule)]) for rule in inventory.taint_rules])
        if not applied or not inventory.taint_rules:
            return result
        for rule in inventory.taint_rules:
            self._check(rule)
        slices: dict[int, ResourceSlice] = {}  # id of a slice a rule taints -> the slice with the taints
        devices: dict[int, Device] = {}  # id of one of its devices -> the device of the tainted slice
        for slice_, members in inventory.slice_members():
            views = list(devices_of(slice_, slice_.source))
            added = [[rule for rule in inventory.taint_rules if self._selects(rule, slice_, view, result.notes)]
                     for view in views]
            if not any(added):
                continue
            patched = slices[id(slice_)] = replace(slice_, devices=tuple(
                replace(typed, taints=(*typed.taints, *(rule.taint for rule in rules)))
                for typed, rules in zip(slice_.devices, added, strict=True)))
            fresh = list(devices_of(patched, slice_.source))
            devices.update((id(old), new) for old, new in zip(members, fresh, strict=False))
            for device, rules in zip(fresh, added, strict=True):
                for rule in rules:
                    tainted[id(rule)].append(device)
        result.inventory = Inventory([devices.get(id(d), d) for d in inventory.devices], list(inventory.notes),
                                     [slices.get(id(s), s) for s in inventory.slices])
        return result

    def _check(self, rule: DeviceTaintRule) -> None:
        """What the tracker would do with the rule's class and CEL selectors must be known: they select only before
        1.35, the class must be in the inputs, and each selector must compile."""
        where = f"{rule.source}: DeviceTaintRule {rule.name}: spec.deviceSelector"
        written = [key for key, present in (("deviceClassName", rule.device_class is not None),
                                            ("selectors", bool(rule.selectors))) if present]
        if written and not self.features.taint_rule_selectors:
            raise TaintRuleError(f"{where}.{written[0]}: only Kubernetes 1.33-1.34 (resource.k8s.io/v1alpha3) "
                                 "select devices so; 1.35 removed the field (the API server refuses or drops it, and "
                                 "the rule then taints every device its driver, pool and device match): select with "
                                 "those")
        if rule.device_class is not None and rule.device_class not in self.classes:
            raise TaintRuleError(f"{where}.deviceClassName: DeviceClass {rule.device_class} is not in the inputs "
                                 "(the scheduler applies no rule whose class does not exist): give the class")
        for index, expression in enumerate(rule.selectors):
            compiled = self.selectors.compile(expression)
            if isinstance(compiled, CompileError):
                raise TaintRuleError(f"{where}.selectors[{index}]: CEL compile error: {compiled.message}")

    def _selects(self, rule: DeviceTaintRule, slice_: ResourceSlice, device: Device, notes: list[str]) -> bool:
        """Driver, pool and device name as written, then the class's and the rule's selectors: a runtime error on
        the device leaves it untainted, as the tracker does, and says so in `notes`."""
        if (rule.driver is not None and rule.driver != slice_.driver
                or rule.pool is not None and rule.pool != slice_.pool.name
                or rule.device is not None and rule.device != device.name):
            return False
        stages = [(f"class {rule.device_class}: ", self.classes[rule.device_class])] if rule.device_class else []
        for owner, expressions in [*stages, ("", list(rule.selectors))]:
            for index, expression in enumerate(expressions):
                matches, error = self.selectors.evaluate(expression, device)
                if error is not None:
                    notes.append(f"{rule.source}: DeviceTaintRule {rule.name}: {owner}selector #{index} on device "
                                 f"{device.driver}/{device.pool}/{device.name}: {error.message}; the scheduler "
                                 "leaves that device untainted")
                    return False
                if not matches:
                    return False
        return True

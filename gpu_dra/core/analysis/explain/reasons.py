"""Why devices and claims fail, in the user's words: the first false term of a selector on a device, why the
allocator cannot take a matching device (the claim holding it, a taint and where it came from, a gate that is off),
and why a claim is not allocatable on any node tried."""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import replace
from typing import Any

from gpu_dra.core.analysis.allocator import Features, untolerated
from gpu_dra.core.analysis.inventory import Device
from gpu_dra.core.dra.cel.lexer import Token, device_lookups, tokenize
from gpu_dra.core.dra.claims import DeviceConstraint, DeviceId, RequestChoice

from .fleet import Busy, Fleet, Matched
from .report import RequestReport
from .views import SelectorEvaluator

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


def _texts(tokens: list[Token]) -> list[str]:
    return [t.text if t.kind != "string" else "STRING" for t in tokens]


def _describe(term: str, device: Device) -> str:
    """The term's shape read from CEL's tokens (comments and spacing aside; string literals decoded as CEL does),
    worded with the device's value; any other shape as written."""
    tokens = tokenize(term) or []
    lookups = device_lookups(tokens)
    if len(tokens) == 5 and _texts(tokens[:4]) == ["device", ".", "driver", "=="] and tokens[4].kind == "string":
        return f"driver is {device.driver}"
    lookup = lookups[0] if lookups and lookups[0].open_bracket is tokens[3] else None
    if lookup is None or lookup.domain is None or lookup.name is None or lookup.optional:
        return f"`{term}` is false"
    close = tokens.index(lookup.close_bracket)
    if _texts(tokens[close + 1:close + 3]) != [".", lookup.name]:
        return f"`{term}` is false"
    name, rest = lookup.name, tokens[close + 3:]
    shape = _texts(rest)
    value = device.attribute(f"{lookup.domain}/{name}")
    if lookup.map == "attributes" and shape == [".", "matches", "(", "STRING", ")"]:
        return f'{name} "{value}" does not match "{rest[3].string_value}"'
    if lookup.map == "attributes" and shape == ["==", "STRING"]:
        return f'{name} is "{value}", not "{rest[1].string_value}"'
    if lookup.map == "attributes" and shape[:2] == ["in", "["] and shape[-1] == "]":
        return f'{name} "{value}" is not one of [{term[rest[1].end:rest[-1].start].strip()}]'
    if lookup.map == "capacity" and shape == [".", "compareTo", "(", "quantity", "(", "STRING", ")", ")", ">=", "0"]:
        have = device.capacity.get(name) or device.capacity.get(f"{lookup.domain}/{name}")
        return f"{name} {have} is less than {rest[5].string_value}"
    if (lookup.map == "attributes" and shape[:5] == [".", "compareTo", "(", "semver", "("] and len(shape) > 8
            and shape[5] == "STRING" and shape[-4:] == [")", ")", ">=", "0"]):
        return f"{name} {value} is below {rest[5].string_value}"
    return f"`{term}` is false"


def failing_term(selectors: SelectorEvaluator, expression: str, device: Device) -> str | None:
    """Describe the first top-level `&&` term that is false on the device, in the user's words."""
    for term in _top_level_terms(expression):
        matches, error = selectors.evaluate(term, device)
        if error is None and not matches:
            return _describe(term, device)
    return None


# --------------------------------------------------------------------------------------------- claims


def constraint_reason(constraints: list[DeviceConstraint], requests: list[RequestReport], node: str) -> str:
    """Enough devices match, but not together: show the constrained values on a node that has the devices."""
    parts = []
    for constraint in constraints:
        attribute = constraint.match_attribute or constraint.distinct_attribute or ""
        values: dict[str, int] = {}
        for request in requests:
            for device in request.matching:
                if device.node == node:
                    found = device.attribute(attribute)
                    value = "(attribute not set)" if found is None else str(found)
                    values[value] = values.get(value, 0) + 1
        kind = "matchAttribute" if constraint.match_attribute else "distinctAttribute"
        seen = ", ".join(f"{v} x{n}" if n > 1 else v for v, n in sorted(values.items()))
        parts.append(f"{kind} {attribute}: on {node} the matching devices carry {seen}")
    return ("enough devices match, but no node has a set that satisfies the constraints; " + "; ".join(parts))


def _listing(blocked: list[tuple[Device, str]], limit: int = 8) -> str:
    """The first `limit` devices with their causes, those of one cause together: `gpu-0, gpu-1: allocated to
    ml/a; gpu-2: taint ...` (a busy node's eight devices are mostly held by one claim)."""
    by_cause: dict[str, list[str]] = {}
    for device, why in blocked[:limit]:
        by_cause.setdefault(why, []).append(device.name)
    shown = "; ".join(f"{', '.join(names)}: {why}" for why, names in by_cause.items())
    return shown + (f"; +{len(blocked) - limit} more" if len(blocked) > limit else "")


class UnallocatableReasons:
    """Why a claim that matches is not allocatable, in the scheduler's terms, naming the devices in use and the
    claims holding them; claims alike share one."""

    def __init__(self, features: Features):
        self.features = features
        # (fleet, requests, devices in use, nodes tried, constraints) -> why a claim is not allocatable
        self._reasons: dict[tuple[Any, ...], tuple[Fleet, Busy, str]] = {}

    def of(self, matched: Matched, fleet: Fleet, busy: Busy, only: Collection[str] | None) -> str:
        """In the scheduler's terms, naming the devices in use and the claims holding them."""
        for request in matched.report.requests:
            if not request.matching:
                top = max(request.rejected.items(), key=lambda item: len(item[1]), default=None)
                why = f"; most common: {top[0]} ({len(top[1])} devices)" if top else ""
                return f"request {request.name}: no device matches{why}"
        # It reads every node the claim may use: claims alike (the same requests, on the same nodes, against the
        # same devices in use) share it.
        labels = tuple(r.name for r in matched.report.requests)
        key = (id(fleet), id(busy), None if only is None else frozenset(only), labels,
               # as text: a choice may hold a dict (its capacity requests), and its paths in the file do not matter
               repr(tuple(tuple((replace(choice, path=(), selector_paths=()), devices) for choice, devices in choices)
                          for choices in matched.choices)), bool(matched.claim.constraints))
        cached = self._reasons.get(key)
        if cached is None or cached[0] is not fleet or cached[1] is not busy:
            cached = self._reasons[key] = (fleet, busy, self._on_nodes(matched, fleet, busy, only))
        return cached[2]

    def _on_nodes(self, matched: Matched, fleet: Fleet, busy: Busy, only: Collection[str] | None) -> str:
        nodes = [n for n in fleet.nodes if only is None or n.name in only]
        if not nodes:
            return "no node the pod may use reaches the devices"
        offset = 0
        for choices in matched.choices:
            labels = [r.name for r in matched.report.requests[offset:offset + len(choices)]]
            offset += len(choices)
            best: tuple[Any, ...] | None = None
            fits = False
            for (spec, key), label in zip(choices, labels, strict=True):
                passing = fleet.passing(key)
                for node in nodes:
                    matching = [d for d in fleet.devices[node.name] if id(d) in passing]
                    blocked = [(d, cause) for d in matching
                               if (cause := self._unavailable(d, spec, fleet, busy, node.name)) is not None]
                    wanted = len(matching) if spec.allocation_mode == "All" else spec.count
                    if matching and len(matching) - len(blocked) >= wanted:
                        fits = True
                        break
                    score = (len(matching) - len(blocked) - wanted, len(matching), -len(blocked))
                    if best is None or score > best[0]:
                        best = (score, label, spec, node.name, matching, blocked, wanted)
                if fits:
                    break
            if fits or best is None:
                continue
            _, label, spec, node_name, matching, blocked, wanted = best
            if not matching:
                return f"request {label}: none of its matching devices is reachable from the nodes tried"
            held = _listing(blocked)
            if spec.allocation_mode == "All":
                return (f"request {label} asks for all {wanted} matching device(s) on {node_name}, but "
                        f"{len(blocked)} cannot be allocated: {held}")
            if not blocked:
                return (f"request {label} needs {wanted} device(s), but at most {len(matching)} match on one "
                        f"node ({node_name})")
            return (f"request {label} needs {wanted} device(s); on {node_name} {len(matching) - len(blocked)} of "
                    f"its {len(matching)} matching device(s) are free: {held}")
        blocked_anywhere = [(d, cause) for node in nodes[:1] for d in fleet.devices[node.name]
                            if id(d) in fleet.passing_any([k for cs in matched.choices for _, k in cs])
                            and (cause := self._unavailable(d, None, fleet, busy, nodes[0].name)) is not None]
        more = f"; on {nodes[0].name}: {_listing(blocked_anywhere)}" if blocked_anywhere else ""
        if fleet.uses_counters:
            more += "; devices share counters, which one allocation can exhaust for its siblings"
        return ("cannot allocate all claims: no single node has enough matching, free devices for all requests "
                f"together{' within the constraints' if matched.claim.constraints else ''}{more}")

    def _unavailable(self, device: Device, spec: RequestChoice | None, fleet: Fleet,
                     busy: Mapping[DeviceId, str], node: str) -> str | None:
        """Why the allocator cannot take a matching device on this node whatever else it picks, or None."""
        problem = fleet.pool_problem(node, device)
        if problem is not None:
            return problem
        holder = busy.get(DeviceId(device.driver, device.pool, device.name))
        if holder and not (spec is not None and spec.admin_access):
            return f"allocated to {holder}"
        typed = fleet.typed.get(id(device))
        if typed is None:
            return None
        features = self.features
        if typed.binding_conditions and not (features.device_binding and features.device_status):
            off = " and ".join(gate for gate, on in (("DRADeviceBindingConditions", features.device_binding),
                                                     ("DRAResourceClaimDeviceStatus", features.device_status))
                               if not on)
            return f"has binding conditions ({' '.join(typed.binding_conditions)}), which {off} (off) must allow"
        if typed.consumes_counters and not features.partitionable_devices:
            return "consumes shared counters, which DRAPartitionableDevices (off) must allow"
        if features.device_taints:
            taints = untolerated(typed.taints, spec.tolerations if spec is not None else ())
            if taints:
                slice_name = device.slice.name if device.slice is not None else "of the device"
                shown = " and ".join(f"{t.label} from " + (f"DeviceTaintRule {t.rule}" if t.rule
                                                            else f"ResourceSlice {slice_name}") for t in taints)
                return f"taint{'s' if len(taints) > 1 else ''} {shown}, not tolerated"
        return None

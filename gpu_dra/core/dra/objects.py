"""DRA objects parsed once into small typed values, in the resource.k8s.io/v1 shape whatever version was read.

v1beta1 nests a device's fields under `basic` and puts a request's fields on the request; v1beta2 and v1 put them on
the device and under `exactly` (kubernetes/api@v0.34.0 resource/v1beta1 and resource/v1 types.go). For slices,
everything the structured allocator reads is kept: the pool with its generation and slice count, how the slice (or
each device) selects nodes, shared counters and what each device consumes of them, device taints. Readers decide
what to do with it; a slice that has not the API's shape is an ObjectError naming the slice and the field.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from gpu_dra.core.dra.api import REQUEST_FIELDS, uses_exactly


class ObjectError(ValueError):
    """An object that has not the API's shape: the message names the object and the field."""


@dataclass(frozen=True)
class Pool:
    name: str
    generation: int
    slice_count: int


@dataclass(frozen=True)
class NodeSelection:
    """Which nodes reach a slice's (or a device's) devices: one node, every node, or a node selector."""

    node_name: str | None = None
    all_nodes: bool = False
    node_selector: Mapping[str, Any] | None = None  # a core/v1 NodeSelector, as written


@dataclass(frozen=True)
class DeviceTaint:
    key: str
    value: str
    effect: str


@dataclass(frozen=True)
class CounterConsumption:
    counter_set: str
    counters: Mapping[str, str]  # counter name -> quantity


@dataclass(frozen=True)
class SliceDevice:
    name: str
    attributes: Mapping[str, Mapping[str, Any]]  # qualified or bare name -> {int|bool|string|version: value}
    capacity: Mapping[str, str]  # name -> quantity
    allow_multiple_allocations: bool = False
    consumes_counters: tuple[CounterConsumption, ...] = ()
    taints: tuple[DeviceTaint, ...] = ()
    node_selection: NodeSelection | None = None  # only with the slice's perDeviceNodeSelection


@dataclass(frozen=True)
class ResourceSlice:
    name: str
    driver: str
    pool: Pool
    node_selection: NodeSelection | None  # None: per device (perDeviceNodeSelection)
    devices: tuple[SliceDevice, ...]
    shared_counters: Mapping[str, Mapping[str, str]]  # counter set -> counter -> quantity
    source: str  # the file or "cluster" it was read from


def _mapping(value: Any, where: str) -> Mapping[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise ObjectError(f"{where} must be a mapping")
    return value


def _list(value: Any, where: str) -> list[Any]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise ObjectError(f"{where} must be a list")
    return value


def _quantity(value: Any) -> str:
    return str(value.get("value")) if isinstance(value, Mapping) else str(value)


def _node_selection(body: Mapping[str, Any], where: str) -> NodeSelection | None:
    node_name, all_nodes, selector = body.get("nodeName"), bool(body.get("allNodes")), body.get("nodeSelector")
    if selector is not None and not isinstance(selector, Mapping):
        raise ObjectError(f"{where}.nodeSelector must be a NodeSelector mapping")
    if not node_name and not all_nodes and selector is None:
        return None
    return NodeSelection(str(node_name) if node_name else None, all_nodes, selector)


def _device(device: Any, where: str, per_device: bool) -> SliceDevice:
    if not isinstance(device, Mapping):
        raise ObjectError(f"{where} must be a device with attributes {{name: {{int|bool|string|version: value}}}} "
                          "and capacity {name: {value: quantity}}")
    body = _mapping(device.get("basic"), f"{where}.basic") or device  # v1beta1 nests under `basic`
    attributes = body.get("attributes") or {}
    capacity = body.get("capacity") or {}
    if (not isinstance(attributes, Mapping) or not isinstance(capacity, Mapping)
            or not all(isinstance(v, Mapping) and len(v) == 1 for v in attributes.values())):
        raise ObjectError(f"{where} must be a device with attributes {{name: {{int|bool|string|version: value}}}} "
                          "and capacity {name: {value: quantity}}")
    consumes = []
    for c, entry in enumerate(_list(body.get("consumesCounters"), f"{where}.consumesCounters")):
        entry = _mapping(entry, f"{where}.consumesCounters[{c}]")
        counters = _mapping(entry.get("counters"), f"{where}.consumesCounters[{c}].counters")
        consumes.append(CounterConsumption(str(entry.get("counterSet", "")),
                                           {str(k): _quantity(v) for k, v in counters.items()}))
    taints = []
    for t, taint in enumerate(_list(body.get("taints"), f"{where}.taints")):
        taint = _mapping(taint, f"{where}.taints[{t}]")
        taints.append(DeviceTaint(str(taint.get("key", "")), str(taint.get("value", "")), str(taint.get("effect", ""))))
    return SliceDevice(str(device.get("name", "?")), dict(attributes), {k: _quantity(v) for k, v in capacity.items()},
                       bool(body.get("allowMultipleAllocations")), tuple(consumes), tuple(taints),
                       _node_selection(body, where) if per_device else None)


def parse_slice(obj: Mapping[str, Any], source: str) -> ResourceSlice:
    """A ResourceSlice of any served version (v1, v1beta2, v1beta1) in the v1 shape."""
    metadata = obj.get("metadata")
    name = str(metadata.get("name", "?")) if isinstance(metadata, Mapping) else "?"
    where = f"{source}: ResourceSlice {name}"
    spec = obj.get("spec")
    if not isinstance(spec, Mapping):
        raise ObjectError(f"{where}: spec must be a mapping")
    pool = _mapping(spec.get("pool"), f"{where}: spec.pool")
    try:
        parsed_pool = Pool(str(pool.get("name") or ""), int(pool.get("generation") or 0),
                           int(pool.get("resourceSliceCount") or 1))
    except (TypeError, ValueError):
        raise ObjectError(f"{where}: spec.pool.generation and resourceSliceCount must be integers") from None
    per_device = bool(spec.get("perDeviceNodeSelection"))
    devices = tuple(_device(device, f"{where}: spec.devices[{index}]", per_device)
                    for index, device in enumerate(_list(spec.get("devices"), f"{where}: spec.devices")))
    shared: dict[str, Mapping[str, str]] = {}
    for s, counter_set in enumerate(_list(spec.get("sharedCounters"), f"{where}: spec.sharedCounters")):
        counter_set = _mapping(counter_set, f"{where}: spec.sharedCounters[{s}]")
        counters = _mapping(counter_set.get("counters"), f"{where}: spec.sharedCounters[{s}].counters")
        shared[str(counter_set.get("name", ""))] = {str(k): _quantity(v) for k, v in counters.items()}
    return ResourceSlice(name, str(spec.get("driver") or ""), parsed_pool,
                         None if per_device else _node_selection(spec, f"{where}: spec"), devices, shared, source)


# --------------------------------------------------------------------------------------------- claims and classes


@dataclass(frozen=True)
class DeviceChoice:
    """One way to satisfy a request: its `exactly`, or one of its `firstAvailable` subrequests."""

    subrequest: str  # "" for exactly
    device_class: str
    selectors: tuple[str, ...] = ()  # CEL expressions
    allocation_mode: str = "ExactCount"
    count: int = 1
    admin_access: bool = False


@dataclass(frozen=True)
class Request:
    name: str
    choices: tuple[DeviceChoice, ...]  # one for exactly; the alternatives in order for firstAvailable


@dataclass(frozen=True)
class Constraint:
    requests: tuple[str, ...]  # empty: all requests; "req" covers its subrequests; "req/sub" one subrequest
    match_attribute: str | None = None
    distinct_attribute: str | None = None


@dataclass(frozen=True)
class AllocatedDevice:
    driver: str
    pool: str
    device: str
    admin_access: bool = False


@dataclass(frozen=True)
class ResourceClaim:
    """A ResourceClaim, or a ResourceClaimTemplate's claim spec, by `namespace/name`."""

    name: str
    requests: tuple[Request, ...]
    constraints: tuple[Constraint, ...] = ()
    allocated: tuple[AllocatedDevice, ...] = ()  # status.allocation.devices.results of a live claim
    problem: str | None = None  # why the API server would not even store it


def _choice(subrequest: str, spec: Mapping[str, Any]) -> DeviceChoice:
    selectors = tuple(str((s.get("cel") or {}).get("expression", "")) for s in spec.get("selectors") or []
                      if isinstance(s, Mapping))
    return DeviceChoice(subrequest, str(spec.get("deviceClassName", "")), selectors,
                        str(spec.get("allocationMode", "ExactCount")), int(spec.get("count", 1) or 1),
                        bool(spec.get("adminAccess")))


def claim_from_devices(name: str, devices: Mapping[str, Any], api_version: str = "resource.k8s.io/v1",
                       allocated: tuple[AllocatedDevice, ...] = ()) -> ResourceClaim:
    """A claim from its `spec.devices`. v1beta1 puts the request fields on the request, v1beta2 and v1 under
    `exactly`; in a v1 object they are a mistake the API server rejects, which becomes the claim's problem."""
    requests, problem = [], None
    for request in devices.get("requests") or []:
        name_of = str(request.get("name", "?"))
        misplaced = {k: v for k, v in request.items() if k in REQUEST_FIELDS}
        if request.get("firstAvailable"):
            choices = tuple(_choice(str(alt.get("name", "?")), alt) for alt in request["firstAvailable"])
        elif misplaced and "exactly" not in request:
            if uses_exactly(api_version) and problem is None:
                problem = (f"request {name_of}: {', '.join(misplaced)} sit on the request, which {api_version} does "
                           "not accept (they belong under `exactly`); `gpu-dra lint` shows the fix")
            choices = (_choice("", misplaced),)
        else:
            choices = (_choice("", request.get("exactly") or {}),)
        requests.append(Request(name_of, choices))
    constraints = tuple(Constraint(tuple(c.get("requests") or ()), c.get("matchAttribute"), c.get("distinctAttribute"))
                        for c in devices.get("constraints") or [])
    return ResourceClaim(name, tuple(requests), constraints, allocated, problem)


def parse_claim(obj: Mapping[str, Any]) -> ResourceClaim | None:
    """A ResourceClaim or ResourceClaimTemplate of any served version; None for other kinds."""
    kind = obj.get("kind")
    if kind not in ("ResourceClaim", "ResourceClaimTemplate"):
        return None
    meta = obj.get("metadata") or {}
    name = f"{meta['namespace']}/{meta.get('name')}" if meta.get("namespace") else str(meta.get("name"))
    spec = obj.get("spec") or {}
    if kind == "ResourceClaimTemplate":
        spec = spec.get("spec") or {}
    status: Mapping[str, Any] = obj["status"] if isinstance(obj.get("status"), Mapping) else {}
    results = ((status.get("allocation") or {}).get("devices") or {}).get("results") or []
    allocated = tuple(AllocatedDevice(str(r.get("driver")), str(r.get("pool")), str(r.get("device")),
                                      bool(r.get("adminAccess"))) for r in results if isinstance(r, Mapping))
    return claim_from_devices(name, spec.get("devices") or {}, str(obj.get("apiVersion", "resource.k8s.io/v1")),
                              allocated)


def class_selectors(obj: Mapping[str, Any]) -> tuple[str, tuple[str, ...]] | None:
    """(name, CEL selectors) of a DeviceClass; None for other kinds."""
    if obj.get("kind") != "DeviceClass":
        return None
    return (str((obj.get("metadata") or {}).get("name", "")),
            tuple(str((s.get("cel") or {}).get("expression", "")) for s in (obj.get("spec") or {}).get("selectors")
                  or [] if isinstance(s, Mapping)))

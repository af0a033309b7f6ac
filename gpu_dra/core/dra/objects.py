"""DRA objects parsed once into small typed values, in the resource.k8s.io/v1 shape whatever version was read.

v1beta1 nests a device's fields under `basic` and puts a request's fields on the request; v1beta2 and v1 put them on
the device and under `exactly` (kubernetes/api@v0.34.0 resource/v1beta1 and resource/v1 types.go). For slices,
everything the structured allocator reads is kept: the pool with its generation and slice count, how the slice (or
each device) selects nodes, shared counters and what each device consumes of them, device taints, capacity request
policies, binding conditions. DeviceTaintRules keep their selector and taint, each taint naming its rule. Readers
decide what to do with it; a slice or rule that has not the API's shape is an ObjectError naming it and the field.
DeviceClasses and claims keep the key path of every element they were read from, so lint and the policy rules
report where a field was written.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from gpu_dra.core.dra.api import REQUEST_FIELDS, uses_exactly
from gpu_dra.core.yamlsource import Loc


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
    # The DeviceTaintRule that added it; "" for a taint its ResourceSlice carries. Only reports read it: the
    # allocator sees the taint alike whichever way it came.
    rule: str = field(default="", compare=False, repr=False)

    @property
    def label(self) -> str:
        return f"{self.key}{'=' + self.value if self.value else ''}:{self.effect}"


@dataclass(frozen=True)
class CapacityRange:
    """A capacity request policy's `validRange`: quantities as written, None where not written."""

    min: str | None = None
    max: str | None = None
    step: str | None = None


@dataclass(frozen=True)
class CapacityRequestPolicy:
    """How a capacity of a device allocated more than once is consumed (DRAConsumableCapacity): the amount taken
    when a request names none, and the amounts a request may take."""

    default: str | None = None
    valid_range: CapacityRange | None = None
    valid_values: tuple[str, ...] = ()


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
    request_policies: Mapping[str, CapacityRequestPolicy] = field(default_factory=dict)  # capacity name -> policy
    binding_conditions: tuple[str, ...] = ()  # DRADeviceBindingConditions
    binding_failure_conditions: tuple[str, ...] = ()
    binds_to_node: bool = False
    # Whether every attribute converts to its CEL type, where the reader judged it as it read them (a plain
    # device: `_plain_device`); None where it did not. Only a shortcut for `Device.unreadable`: not compared.
    convertible: bool | None = field(default=None, compare=False, repr=False)


@dataclass(frozen=True)
class ResourceSlice:
    name: str
    driver: str
    pool: Pool
    node_selection: NodeSelection | None  # None: per device (perDeviceNodeSelection)
    devices: tuple[SliceDevice, ...]
    shared_counters: Mapping[str, Mapping[str, str]]  # counter set -> counter -> quantity
    source: str  # the file or "cluster" it was read from
    per_device_node_selection: bool = False  # spec.perDeviceNodeSelection as written


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


def _strings_at(value: Any, where: str) -> tuple[str, ...]:
    return tuple(str(item) for item in _list(value, where))


def _request_policy(capacity: Any, where: str) -> CapacityRequestPolicy | None:
    if not isinstance(capacity, Mapping) or capacity.get("requestPolicy") is None:
        return None
    policy = _mapping(capacity["requestPolicy"], f"{where}.requestPolicy")
    written = policy.get("validRange")
    valid_range = None
    if written is not None:
        bounds = _mapping(written, f"{where}.requestPolicy.validRange")
        valid_range = CapacityRange(*(None if bounds.get(key) is None else _quantity(bounds[key])
                                      for key in ("min", "max", "step")))
    default = policy.get("default")
    return CapacityRequestPolicy(None if default is None else _quantity(default), valid_range,
                                 tuple(_quantity(v) for v in _list(policy.get("validValues"),
                                                                   f"{where}.requestPolicy.validValues")))


def _node_selection(body: Mapping[str, Any], where: str) -> NodeSelection | None:
    node_name, all_nodes, selector = body.get("nodeName"), bool(body.get("allNodes")), body.get("nodeSelector")
    if selector is not None and not isinstance(selector, Mapping):
        raise ObjectError(f"{where}.nodeSelector must be a NodeSelector mapping")
    if node_name is not None and not isinstance(node_name, str):
        written = "a list" if isinstance(node_name, list) else "a mapping" if isinstance(node_name, Mapping) \
            else repr(node_name)  # a number or boolean
        raise ObjectError(f"{where}.nodeName must be a node's name (a string), not {written}")
    if not node_name and not all_nodes and selector is None:
        return None
    return NodeSelection(node_name or None, all_nodes, selector)


def _check_attribute(typed: Mapping[str, Any], where: str, name: str) -> None:
    """An attribute's int is an int64 and its bool a boolean, as the API server stores them (DeviceAttribute in
    kubernetes/api@v0.34.0:resource/v1/types.go): `.inf`, 1e999, 2^64 or "8" would fail the CEL that reads them, or
    read as something else. Strings and versions are taken as text."""
    if "int" in typed:
        value = typed["int"]
        if type(value) is not int or not -INT64_MAX - 1 <= value <= INT64_MAX:
            raise ObjectError(f"{where}.attributes.{name}.int must be a whole number that fits an int64, not "
                              f"{_shown(value)}")
    elif "bool" in typed and type(typed["bool"]) is not bool:
        raise ObjectError(f"{where}.attributes.{name}.bool must be true or false, not {_shown(typed['bool'])}")


def _shown(value: Any) -> str:
    """A value in a message, cut: an echoed value can be megabytes."""
    text = repr(value) if not isinstance(value, int) or abs(value) < 10**40 else "a number of more than 40 digits"
    return text if len(text) <= 40 else f"{text[:30]}..."


# The fields of a device as a fleet's drivers mostly write it: read by _plain_device.
_PLAIN_DEVICE_KEYS = frozenset(("name", "attributes", "capacity"))


def _plain_device(device: Any) -> SliceDevice | None:
    """A device of name, attributes and capacity only, each of the API's shape, read in one pass (a 10,000-node
    fleet has 100,000 of them); None for anything else, which `_device` reads and, where it is wrong, names."""
    if type(device) is not dict or not device.keys() <= _PLAIN_DEVICE_KEYS:
        return None
    attributes, capacity = device.get("attributes") or {}, device.get("capacity") or {}
    if type(attributes) is not dict or type(capacity) is not dict:
        return None
    may_fail: dict[str, Any] = {}  # attributes whose conversion to CEL can fail: versions, unknown types
    for name, typed in attributes.items():
        if type(typed) is not dict or len(typed) != 1:
            return None
        if "int" in typed:
            value = typed["int"]
            if type(value) is not int or not -INT64_MAX - 1 <= value <= INT64_MAX:
                return None
        elif "bool" in typed:
            if type(typed["bool"]) is not bool:
                return None
        elif "string" not in typed:
            may_fail[name] = typed
    quantities = {}
    for name, value in capacity.items():
        if type(value) is dict:
            if value.get("requestPolicy") is not None:
                return None
            quantities[name] = str(value.get("value"))
        else:
            quantities[name] = _quantity(value)
    convertible = True
    if may_fail:
        # here, not at the top: the verbs that read no slices need not load CEL's runtime (0.1 s)
        from gpu_dra.core.dra.cel import attributes_convert

        convertible = attributes_convert(may_fail)
    return SliceDevice(str(device.get("name", "?")), dict(attributes), quantities, convertible=convertible)


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
    for name, typed in attributes.items():
        if "int" in typed or "bool" in typed:
            _check_attribute(typed, where, name)
    # A fleet's devices mostly have none of what follows: each `where` of a message is made only where it is read.
    consumes = []
    if body.get("consumesCounters") is not None:
        for c, entry in enumerate(_list(body["consumesCounters"], f"{where}.consumesCounters")):
            entry = _mapping(entry, f"{where}.consumesCounters[{c}]")
            counters = _mapping(entry.get("counters"), f"{where}.consumesCounters[{c}].counters")
            consumes.append(CounterConsumption(str(entry.get("counterSet", "")),
                                               {str(k): _quantity(v) for k, v in counters.items()}))
    taints = []
    if body.get("taints") is not None:
        for t, taint in enumerate(_list(body["taints"], f"{where}.taints")):
            taint = _mapping(taint, f"{where}.taints[{t}]")
            taints.append(DeviceTaint(str(taint.get("key", "")), str(taint.get("value", "")),
                                      str(taint.get("effect", ""))))
    policies = {str(name): policy for name, value in capacity.items()
                if isinstance(value, Mapping) and value.get("requestPolicy") is not None
                and (policy := _request_policy(value, f"{where}.capacity.{name}")) is not None}
    conditions, failures = body.get("bindingConditions"), body.get("bindingFailureConditions")
    return SliceDevice(str(device.get("name", "?")), dict(attributes), {k: _quantity(v) for k, v in capacity.items()},
                       bool(body.get("allowMultipleAllocations")), tuple(consumes), tuple(taints),
                       _node_selection(body, where) if per_device else None, policies,
                       () if conditions is None else _strings_at(conditions, f"{where}.bindingConditions"),
                       () if failures is None else _strings_at(failures, f"{where}.bindingFailureConditions"),
                       bool(body.get("bindsToNode")))


def _named_spec(obj: Mapping[str, Any], kind: str, source: str,
                needs: str = "") -> tuple[str, str, Mapping[str, Any]]:
    """The object's name, `<source>: <kind> <name>` for messages, and its spec, which must be a mapping."""
    metadata = obj.get("metadata")
    name = str(metadata.get("name", "?")) if isinstance(metadata, Mapping) else "?"
    where = f"{source}: {kind} {name}"
    spec = obj.get("spec")
    if not isinstance(spec, Mapping):
        raise ObjectError(f"{where}: spec must be a mapping{needs}")
    return name, where, spec


# The largest int64, the type of the API's integer fields (kubernetes/api@v0.34.0:resource/v1/types.go)
INT64_MAX = 2**63 - 1


def _pool_integer(pool: Mapping[str, Any], key: str, least: int, where: str) -> int:
    """`spec.pool.<key>` as the API server stores it: an int64 of at least `least` (generation >= 0,
    resourceSliceCount > 0: validateResourcePool in kubernetes/kubernetes@v1.34.0:
    pkg/apis/resource/validation/validation.go). Not written: `least`. Not a whole number (a float, `.inf`, text,
    a boolean) or out of range: an ObjectError, not a value made up from it."""
    value = pool.get(key)
    if value is None:
        return least
    if isinstance(value, bool) or not isinstance(value, int) or not least <= value <= INT64_MAX:
        raise ObjectError(f"{where}: spec.pool.{key} is {_shown(value)}; spec.pool.generation and resourceSliceCount "
                          "must be whole numbers below 2^63 (generation 0 or more, resourceSliceCount 1 or more)")
    return value


def parse_slice(obj: Mapping[str, Any], source: str) -> ResourceSlice:
    """A ResourceSlice of any served version (v1, v1beta2, v1beta1) in the v1 shape."""
    name, where, spec = _named_spec(obj, "ResourceSlice", source)
    pool = _mapping(spec.get("pool"), f"{where}: spec.pool")
    parsed_pool = Pool(str(pool.get("name") or ""), _pool_integer(pool, "generation", 0, where),
                       _pool_integer(pool, "resourceSliceCount", 1, where))
    per_device = bool(spec.get("perDeviceNodeSelection"))
    devices = tuple(_plain_device(device) or _device(device, f"{where}: spec.devices[{index}]", per_device)
                    for index, device in enumerate(_list(spec.get("devices"), f"{where}: spec.devices")))
    shared: dict[str, Mapping[str, str]] = {}
    for s, counter_set in enumerate(_list(spec.get("sharedCounters"), f"{where}: spec.sharedCounters")):
        counter_set = _mapping(counter_set, f"{where}: spec.sharedCounters[{s}]")
        counters = _mapping(counter_set.get("counters"), f"{where}: spec.sharedCounters[{s}].counters")
        shared[str(counter_set.get("name", ""))] = {str(k): _quantity(v) for k, v in counters.items()}
    return ResourceSlice(name, str(spec.get("driver") or ""), parsed_pool,
                         None if per_device else _node_selection(spec, f"{where}: spec"), devices, shared, source,
                         per_device)


# --------------------------------------------------------------------------------------------- device taint rules


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
    name, where, spec = _named_spec(obj, "DeviceTaintRule", source, " with deviceSelector and taint")
    taint = spec.get("taint")
    if not isinstance(taint, Mapping):
        raise ObjectError(f"{where}: spec.taint must be a mapping with key, value and effect")
    for key in ("key", "effect"):
        if not isinstance(taint.get(key), str) or not taint[key]:
            raise ObjectError(f"{where}: spec.taint.{key} must be a non-empty string")
    value = "" if taint.get("value") is None else taint["value"]
    if not isinstance(value, str):
        raise ObjectError(f"{where}: spec.taint.value must be a string")
    selector = _mapping(spec.get("deviceSelector"), f"{where}: spec.deviceSelector")
    criteria: dict[str, str | None] = {}
    for key in ("driver", "pool", "device", "deviceClassName"):
        written = selector.get(key)
        if written is not None and not isinstance(written, str):
            raise ObjectError(f"{where}: spec.deviceSelector.{key} must be a string")
        criteria[key] = written
    expressions = []
    for index, entry in enumerate(_list(selector.get("selectors"), f"{where}: spec.deviceSelector.selectors")):
        expression = _as_mapping(_as_mapping(entry).get("cel")).get("expression")
        if not isinstance(expression, str):
            raise ObjectError(f"{where}: spec.deviceSelector.selectors[{index}] must be {{cel: {{expression: "
                              "string}}")
        expressions.append(expression)
    return DeviceTaintRule(name, DeviceTaint(taint["key"], value, taint["effect"], name), source,
                           criteria["driver"], criteria["pool"], criteria["device"], criteria["deviceClassName"],
                           tuple(expressions))


# --------------------------------------------------------------------------------------------- claims and classes
#
# Claims and classes carry where each element was written: its key path inside the object (`Loc`, as
# `yamlsource.Located.line` and `format_path` read it), for readers that report a file and line. Paths, and what
# only validation reads (the keys written on a request, the count as written), take no part in equality: a claim
# reads the same whatever API version it was written in. What has not the API's shape (a request that is not a
# mapping, a selector without a string expression) is left out; the schema check reports it.


@dataclass(frozen=True)
class DeviceToleration:
    """A request's toleration of device taints (DRADeviceTaints), as written: "" where a field is not written
    (an empty operator means Equal, as the API server defaults it)."""

    key: str = ""
    operator: str = ""
    value: str = ""
    effect: str = ""
    toleration_seconds: int | None = None
    path: Loc = field(default=(), compare=False)


@dataclass(frozen=True)
class DeviceChoice:
    """One way to satisfy a request: its `exactly`, or one of its `firstAvailable` subrequests.

    `path` is where its fields sit: `requests[i].exactly`, `requests[i].firstAvailable[j]`, or the request itself
    in the v1beta1 shape (and where a v1 object misplaced them); `selector_paths[k]` is where `selectors[k]` was
    written, and `unknown_selectors` the indices of selectors without `cel` (a kind added after v1, which the
    allocator refuses). `written_admin_access` is None when `adminAccess` is not written: the allocator refuses
    even `false` with DRAAdminAccess off.
    """

    subrequest: str  # "" for exactly
    device_class: str
    selectors: tuple[str, ...] = ()  # CEL expressions
    allocation_mode: str = "ExactCount"
    count: int = 1  # as the allocator takes it: 1 unless a positive count is written
    written_admin_access: bool | None = None
    tolerations: tuple[DeviceToleration, ...] = ()
    capacity_requests: Mapping[str, str] | None = None  # capacity.requests, name -> quantity; None: no `capacity`
    unknown_selectors: tuple[int, ...] = ()
    path: Loc = field(default=(), compare=False)
    selector_paths: tuple[Loc, ...] = field(default=(), compare=False)
    written_count: int | None = field(default=None, compare=False)  # None when not written, for validation

    @property
    def admin_access(self) -> bool:
        return bool(self.written_admin_access)

    @property
    def has_tolerations(self) -> bool:
        return bool(self.tolerations)

    @property
    def requests_capacity(self) -> bool:
        return self.capacity_requests is not None


@dataclass(frozen=True)
class Request:
    name: str
    choices: tuple[DeviceChoice, ...]  # one for exactly; the alternatives in order for firstAvailable
    path: Loc = field(default=(), compare=False)
    fields: frozenset[str] = field(default=frozenset(), compare=False)  # the keys written on the request itself


@dataclass(frozen=True)
class Constraint:
    requests: tuple[str, ...]  # empty: all requests; "req" covers its subrequests; "req/sub" one subrequest
    match_attribute: str | None = None
    distinct_attribute: str | None = None
    path: Loc = field(default=(), compare=False)


@dataclass(frozen=True)
class DeviceConfig:
    """An entry of a claim's `devices.config`: opaque parameters for one driver, for the named requests or all."""

    requests: tuple[str, ...]
    driver: str
    parameters: Mapping[str, Any]
    path: Loc = field(default=(), compare=False)


@dataclass(frozen=True)
class AllocatedDevice:
    """One result of a live claim's allocation. A share of a device allocated more than once carries its share ID
    and the capacity it consumes (DRAConsumableCapacity)."""

    driver: str
    pool: str
    device: str
    admin_access: bool = False
    share_id: str | None = None
    consumed_capacity: Mapping[str, str] = field(default_factory=dict)  # capacity name -> quantity


@dataclass(frozen=True)
class ResourceClaim:
    """A ResourceClaim, or a ResourceClaimTemplate's claim spec, by `namespace/name`."""

    name: str
    requests: tuple[Request, ...]
    constraints: tuple[Constraint, ...] = ()
    allocated: tuple[AllocatedDevice, ...] = ()  # status.allocation.devices.results of a live claim
    problem: str | None = None  # why the API server would not even store it
    config: tuple[DeviceConfig, ...] = ()
    kind: str = "ResourceClaim"
    api_version: str = field(default="resource.k8s.io/v1", compare=False)


@dataclass(frozen=True)
class DeviceClass:
    name: str
    selectors: tuple[str, ...]  # CEL expressions
    selector_paths: tuple[Loc, ...] = field(default=(), compare=False)
    extended_resource_name: str | None = None  # None when not written, "" when written empty


def _as_mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _indexed_mappings(value: Any) -> Iterator[tuple[int, Mapping[str, Any]]]:
    """(index in the list, entry) of the mapping entries of a list; the index keeps paths where they were written."""
    if isinstance(value, list):
        yield from ((index, entry) for index, entry in enumerate(value) if isinstance(entry, Mapping))


def _strings(value: Any) -> tuple[str, ...]:
    return tuple(str(item) for item in value) if isinstance(value, list) else ()


def _written_count(value: Any) -> int | None:
    """A count as written, for validation to judge; None where it is no number at all (`.inf` and `.nan` have no
    integer value). One beyond the int64 the API holds is kept as the nearest value past it: Python cannot even
    print an int of 5,000 digits."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return max(min(int(value), INT64_MAX + 1), -INT64_MAX - 2)


def _selectors(spec: Mapping[str, Any], path: Loc) -> tuple[tuple[str, ...], tuple[Loc, ...]]:
    """(expressions, where each was written) of a class's or a choice's `selectors`."""
    found = [((*path, "selectors", index, "cel", "expression"), expression)
             for index, selector in _indexed_mappings(spec.get("selectors"))
             if isinstance(expression := _as_mapping(selector.get("cel")).get("expression"), str)]
    return tuple(expression for _, expression in found), tuple(where for where, _ in found)


def _toleration(entry: Mapping[str, Any], path: Loc) -> DeviceToleration:
    key, operator, value, effect = (str(entry.get(name) or "") for name in ("key", "operator", "value", "effect"))
    return DeviceToleration(key, operator, value, effect, _written_count(entry.get("tolerationSeconds")), path)


def _choice(subrequest: str, spec: Mapping[str, Any], path: Loc) -> DeviceChoice:
    selectors, selector_paths = _selectors(spec, path)
    unknown = tuple(index for index, selector in _indexed_mappings(spec.get("selectors"))
                    if selector.get("cel") is None)
    written = _written_count(spec.get("count"))
    admin = spec.get("adminAccess")
    capacity = spec.get("capacity")
    requests = None if not capacity else {str(name): _quantity(value) for name, value in
                                          _as_mapping(_as_mapping(capacity).get("requests")).items()}
    return DeviceChoice(subrequest, str(spec.get("deviceClassName", "")), selectors,
                        str(spec.get("allocationMode", "ExactCount")), written if written and written > 0 else 1,
                        None if admin is None else bool(admin),
                        tuple(_toleration(t, (*path, "tolerations", index))
                              for index, t in _indexed_mappings(spec.get("tolerations"))), requests,
                        unknown, path, selector_paths, written)


def claim_from_devices(name: str, devices: Mapping[str, Any], api_version: str = "resource.k8s.io/v1",
                       allocated: tuple[AllocatedDevice, ...] = (), *, kind: str = "ResourceClaim",
                       path: Loc = ("spec", "devices")) -> ResourceClaim:
    """A claim from its `spec.devices`, which sits at `path` in the object. v1beta1 puts the request fields on the
    request, v1beta2 and v1 under `exactly`; in a v1 object they are a mistake the API server rejects, which becomes
    the claim's problem."""
    requests, problem = [], None
    for index, request in _indexed_mappings(devices.get("requests")):
        here = (*path, "requests", index)
        name_of = str(request.get("name", "?"))
        misplaced = [key for key in request if key in REQUEST_FIELDS]
        if request.get("firstAvailable"):
            choices = tuple(_choice(str(alternative.get("name", "?")), alternative, (*here, "firstAvailable", a))
                            for a, alternative in _indexed_mappings(request["firstAvailable"]))
        elif misplaced and "exactly" not in request:
            if uses_exactly(api_version) and problem is None:
                problem = (f"request {name_of}: {', '.join(misplaced)} sit on the request, which {api_version} does "
                           "not accept (they belong under `exactly`); `gpu-dra lint` shows the fix")
            choices = (_choice("", request, here),)
        else:
            choices = (_choice("", _as_mapping(request.get("exactly")), (*here, "exactly")),)
        for choice in choices:
            count = choice.written_count
            if problem is None and count is not None and not 0 < count <= INT64_MAX:
                where = f"{name_of}/{choice.subrequest}" if choice.subrequest else name_of
                shown = count if -INT64_MAX - 1 <= count <= INT64_MAX else "beyond int64"
                bound = "greater than zero" if count <= 0 else f"at most {INT64_MAX} (an int64)"
                problem = (f"request {where}: count {shown} must be {bound} (the API server rejects the claim); "
                           "`gpu-dra lint` shows where")
        requests.append(Request(name_of, choices, here, frozenset(request)))
    constraints = tuple(Constraint(_strings(c.get("requests")), c.get("matchAttribute"), c.get("distinctAttribute"),
                                   (*path, "constraints", index))
                        for index, c in _indexed_mappings(devices.get("constraints")))
    config = tuple(DeviceConfig(_strings(entry.get("requests")), str(opaque.get("driver", "")),
                                _as_mapping(opaque.get("parameters")), (*path, "config", index))
                   for index, entry in _indexed_mappings(devices.get("config"))
                   for opaque in (_as_mapping(entry.get("opaque")),))
    return ResourceClaim(name, tuple(requests), constraints, allocated, problem, config, kind, api_version)


def _allocated(result: Mapping[str, Any]) -> AllocatedDevice:
    share = result.get("shareID")
    return AllocatedDevice(str(result.get("driver")), str(result.get("pool")), str(result.get("device")),
                           bool(result.get("adminAccess")), None if share is None else str(share),
                           {str(k): _quantity(v) for k, v in _as_mapping(result.get("consumedCapacity")).items()})


def parse_claim(obj: Mapping[str, Any]) -> ResourceClaim | None:
    """A ResourceClaim or ResourceClaimTemplate of any served version; None for other kinds."""
    kind = obj.get("kind")
    if kind not in ("ResourceClaim", "ResourceClaimTemplate"):
        return None
    meta = _as_mapping(obj.get("metadata"))
    name = f"{meta['namespace']}/{meta.get('name')}" if meta.get("namespace") else str(meta.get("name"))
    spec = _as_mapping(obj.get("spec"))
    path: Loc = ("spec", "devices")
    if kind == "ResourceClaimTemplate":
        spec, path = _as_mapping(spec.get("spec")), ("spec", "spec", "devices")
    results = _as_mapping(_as_mapping(_as_mapping(obj.get("status")).get("allocation")).get("devices")).get("results")
    allocated = tuple(_allocated(result) for _, result in _indexed_mappings(results))
    return claim_from_devices(name, _as_mapping(spec.get("devices")), str(obj.get("apiVersion", "resource.k8s.io/v1")),
                              allocated, kind=str(kind), path=path)


def parse_device_class(obj: Mapping[str, Any]) -> DeviceClass | None:
    """A DeviceClass of any served version; None for other kinds."""
    if obj.get("kind") != "DeviceClass":
        return None
    spec = _as_mapping(obj.get("spec"))
    selectors, paths = _selectors(spec, ("spec",))
    extended = None if "extendedResourceName" not in spec else str(spec["extendedResourceName"] or "")
    return DeviceClass(str(_as_mapping(obj.get("metadata")).get("name", "")), selectors, paths, extended)


def parse_object(obj: Mapping[str, Any]) -> DeviceClass | ResourceClaim | None:
    """A DeviceClass, ResourceClaim or ResourceClaimTemplate of any served version; None for other kinds."""
    return parse_device_class(obj) or parse_claim(obj)

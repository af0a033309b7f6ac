"""ResourceSlices read into the v1 shape (`objects` says how the versions differ).

Everything the structured allocator reads is kept: the pool with its generation and slice count, how the slice (or
each device) selects nodes, shared counters and what each device consumes of them, device taints, capacity request
policies, binding conditions. Readers decide what to do with it; a slice that has not the API's shape is an
ObjectError naming it and the field.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from gpu_dra.core.dra.objects import INT64_MAX, ObjectError, list_at, mapping_at, named_spec, quantity_text


@dataclass(frozen=True)
class ResourcePool:
    """The pool a slice belongs to, with its generation and how many slices it has (ResourcePool in
    kubernetes/api@v0.34.0:resource/v1/types.go)."""

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
    pool: ResourcePool
    node_selection: NodeSelection | None  # None: per device (perDeviceNodeSelection)
    devices: tuple[SliceDevice, ...]
    shared_counters: Mapping[str, Mapping[str, str]]  # counter set -> counter -> quantity
    source: str  # the file or "cluster" it was read from
    per_device_node_selection: bool = False  # spec.perDeviceNodeSelection as written


def _strings_at(value: Any, where: str) -> tuple[str, ...]:
    return tuple(str(item) for item in list_at(value, where))


def _request_policy(capacity: Any, where: str) -> CapacityRequestPolicy | None:
    if not isinstance(capacity, Mapping) or capacity.get("requestPolicy") is None:
        return None
    policy = mapping_at(capacity["requestPolicy"], f"{where}.requestPolicy")
    written = policy.get("validRange")
    valid_range = None
    if written is not None:
        bounds = mapping_at(written, f"{where}.requestPolicy.validRange")
        valid_range = CapacityRange(*(None if bounds.get(key) is None else quantity_text(bounds[key])
                                      for key in ("min", "max", "step")))
    default = policy.get("default")
    return CapacityRequestPolicy(None if default is None else quantity_text(default), valid_range,
                                 tuple(quantity_text(v) for v in list_at(policy.get("validValues"),
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
            quantities[name] = quantity_text(value)
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
    body = mapping_at(device.get("basic"), f"{where}.basic") or device  # v1beta1 nests under `basic`
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
        for c, entry in enumerate(list_at(body["consumesCounters"], f"{where}.consumesCounters")):
            entry = mapping_at(entry, f"{where}.consumesCounters[{c}]")
            counters = mapping_at(entry.get("counters"), f"{where}.consumesCounters[{c}].counters")
            consumes.append(CounterConsumption(str(entry.get("counterSet", "")),
                                               {str(k): quantity_text(v) for k, v in counters.items()}))
    taints = []
    if body.get("taints") is not None:
        for t, taint in enumerate(list_at(body["taints"], f"{where}.taints")):
            taint = mapping_at(taint, f"{where}.taints[{t}]")
            taints.append(DeviceTaint(str(taint.get("key", "")), str(taint.get("value", "")),
                                      str(taint.get("effect", ""))))
    policies = {str(name): policy for name, value in capacity.items()
                if isinstance(value, Mapping) and value.get("requestPolicy") is not None
                and (policy := _request_policy(value, f"{where}.capacity.{name}")) is not None}
    conditions, failures = body.get("bindingConditions"), body.get("bindingFailureConditions")
    return SliceDevice(str(device.get("name", "?")), dict(attributes),
                       {k: quantity_text(v) for k, v in capacity.items()},
                       bool(body.get("allowMultipleAllocations")), tuple(consumes), tuple(taints),
                       _node_selection(body, where) if per_device else None, policies,
                       () if conditions is None else _strings_at(conditions, f"{where}.bindingConditions"),
                       () if failures is None else _strings_at(failures, f"{where}.bindingFailureConditions"),
                       bool(body.get("bindsToNode")))


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
    name, where, spec = named_spec(obj, "ResourceSlice", source)
    pool = mapping_at(spec.get("pool"), f"{where}: spec.pool")
    parsed_pool = ResourcePool(str(pool.get("name") or ""), _pool_integer(pool, "generation", 0, where),
                               _pool_integer(pool, "resourceSliceCount", 1, where))
    per_device = bool(spec.get("perDeviceNodeSelection"))
    devices = tuple(_plain_device(device) or _device(device, f"{where}: spec.devices[{index}]", per_device)
                    for index, device in enumerate(list_at(spec.get("devices"), f"{where}: spec.devices")))
    shared: dict[str, Mapping[str, str]] = {}
    for s, counter_set in enumerate(list_at(spec.get("sharedCounters"), f"{where}: spec.sharedCounters")):
        counter_set = mapping_at(counter_set, f"{where}: spec.sharedCounters[{s}]")
        counters = mapping_at(counter_set.get("counters"), f"{where}: spec.sharedCounters[{s}].counters")
        shared[str(counter_set.get("name", ""))] = {str(k): quantity_text(v) for k, v in counters.items()}
    return ResourceSlice(name, str(spec.get("driver") or ""), parsed_pool,
                         None if per_device else _node_selection(spec, f"{where}: spec"), devices, shared, source,
                         per_device)


"""ResourceClaims, their templates and DeviceClasses read into the v1 shape (`objects` says how the versions differ),
and a cluster's or a file's claims, classes and the devices its claims hold: the inputs explain, pods, migrate, lint
and the policy pack judge claims with.

Claims and classes carry where each element was written: its key path inside the object (`Loc`, as
`yamlsource.Located.line` and `format_path` read it), for readers that report a file and line. Paths, and what only
validation reads (the keys written on a request, the count as written), take no part in equality: a claim reads the
same whatever API version it was written in. What has not the API's shape (a request that is not a mapping, a
selector without a string expression) is left out; the schema check reports it.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from gpu_dra.core.data import mapping
from gpu_dra.core.dra.api import REQUEST_FIELDS, uses_exactly
from gpu_dra.core.dra.objects import INT64_MAX, quantity_text
from gpu_dra.core.facts import gates
from gpu_dra.core.yamlsource import Loc


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
class RequestChoice:
    """One way to satisfy a request: its `exactly`, or one of its `firstAvailable` subrequests (ExactDeviceRequest
    and DeviceSubRequest in kubernetes/api@v0.34.0:resource/v1/types.go).

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
class DeviceRequest:
    """A claim's request (DeviceRequest in kubernetes/api@v0.34.0:resource/v1/types.go), its choices in order."""

    name: str
    choices: tuple[RequestChoice, ...]  # one for exactly; the alternatives in order for firstAvailable
    path: Loc = field(default=(), compare=False)
    fields: frozenset[str] = field(default=frozenset(), compare=False)  # the keys written on the request itself


@dataclass(frozen=True)
class DeviceConstraint:
    """A constraint across a claim's requests (DeviceConstraint in kubernetes/api@v0.34.0:resource/v1/types.go)."""

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
    requests: tuple[DeviceRequest, ...]
    constraints: tuple[DeviceConstraint, ...] = ()
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
             if isinstance(expression := mapping(selector.get("cel")).get("expression"), str)]
    return tuple(expression for _, expression in found), tuple(where for where, _ in found)


def _toleration(entry: Mapping[str, Any], path: Loc) -> DeviceToleration:
    key, operator, value, effect = (str(entry.get(name) or "") for name in ("key", "operator", "value", "effect"))
    return DeviceToleration(key, operator, value, effect, _written_count(entry.get("tolerationSeconds")), path)


def _choice(subrequest: str, spec: Mapping[str, Any], path: Loc) -> RequestChoice:
    selectors, selector_paths = _selectors(spec, path)
    unknown = tuple(index for index, selector in _indexed_mappings(spec.get("selectors"))
                    if selector.get("cel") is None)
    written = _written_count(spec.get("count"))
    admin = spec.get("adminAccess")
    capacity = spec.get("capacity")
    requests = None if not capacity else {str(name): quantity_text(value) for name, value in
                                          mapping(mapping(capacity).get("requests")).items()}
    return RequestChoice(subrequest, str(spec.get("deviceClassName", "")), selectors,
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
            choices = (_choice("", mapping(request.get("exactly")), (*here, "exactly")),)
        for choice in choices:
            count = choice.written_count
            if problem is None and count is not None and not 0 < count <= INT64_MAX:
                where = f"{name_of}/{choice.subrequest}" if choice.subrequest else name_of
                shown = count if -INT64_MAX - 1 <= count <= INT64_MAX else "beyond int64"
                bound = "greater than zero" if count <= 0 else f"at most {INT64_MAX} (an int64)"
                problem = (f"request {where}: count {shown} must be {bound} (the API server rejects the claim); "
                           "`gpu-dra lint` shows where")
        requests.append(DeviceRequest(name_of, choices, here, frozenset(request)))
    constraints = tuple(DeviceConstraint(_strings(c.get("requests")), c.get("matchAttribute"),
                                         c.get("distinctAttribute"), (*path, "constraints", index))
                        for index, c in _indexed_mappings(devices.get("constraints")))
    config = tuple(DeviceConfig(_strings(entry.get("requests")), str(opaque.get("driver", "")),
                                mapping(opaque.get("parameters")), (*path, "config", index))
                   for index, entry in _indexed_mappings(devices.get("config"))
                   for opaque in (mapping(entry.get("opaque")),))
    return ResourceClaim(name, tuple(requests), constraints, allocated, problem, config, kind, api_version)


def _allocated(result: Mapping[str, Any]) -> AllocatedDevice:
    share = result.get("shareID")
    return AllocatedDevice(str(result.get("driver")), str(result.get("pool")), str(result.get("device")),
                           bool(result.get("adminAccess")), None if share is None else str(share),
                           {str(k): quantity_text(v) for k, v in mapping(result.get("consumedCapacity")).items()})


def parse_claim(obj: Mapping[str, Any]) -> ResourceClaim | None:
    """A ResourceClaim or ResourceClaimTemplate of any served version; None for other kinds."""
    kind = obj.get("kind")
    if kind not in ("ResourceClaim", "ResourceClaimTemplate"):
        return None
    meta = mapping(obj.get("metadata"))
    name = f"{meta['namespace']}/{meta.get('name')}" if meta.get("namespace") else str(meta.get("name"))
    spec = mapping(obj.get("spec"))
    path: Loc = ("spec", "devices")
    if kind == "ResourceClaimTemplate":
        spec, path = mapping(spec.get("spec")), ("spec", "spec", "devices")
    results = mapping(mapping(mapping(obj.get("status")).get("allocation")).get("devices")).get("results")
    allocated = tuple(_allocated(result) for _, result in _indexed_mappings(results))
    return claim_from_devices(name, mapping(spec.get("devices")), str(obj.get("apiVersion", "resource.k8s.io/v1")),
                              allocated, kind=str(kind), path=path)


def parse_device_class(obj: Mapping[str, Any]) -> DeviceClass | None:
    """A DeviceClass of any served version; None for other kinds."""
    if obj.get("kind") != "DeviceClass":
        return None
    spec = mapping(obj.get("spec"))
    selectors, paths = _selectors(spec, ("spec",))
    extended = None if "extendedResourceName" not in spec else str(spec["extendedResourceName"] or "")
    return DeviceClass(str(mapping(obj.get("metadata")).get("name", "")), selectors, paths, extended)


def parse_object(obj: Mapping[str, Any]) -> DeviceClass | ResourceClaim | None:
    """A DeviceClass, ResourceClaim or ResourceClaimTemplate of any served version; None for other kinds."""
    return parse_device_class(obj) or parse_claim(obj)


class DeviceId(NamedTuple):
    """A device as an allocation result names it: driver, pool, device (`DeviceRequestAllocationResult` in
    kubernetes/api@v0.34.0:resource/v1/types.go). A tuple, so it equals and hashes as the plain triple."""

    driver: str
    pool: str
    device: str


def claims_from_objects(objects: Iterable[Mapping[str, Any]]) -> list[ResourceClaim]:
    """The ResourceClaims and ResourceClaimTemplates among the objects, typed."""
    return [claim for claim in map(parse_claim, objects) if claim is not None]


def classes_from_objects(objects: Iterable[Mapping[str, Any]]) -> dict[str, list[str]]:
    """DeviceClass name -> its CEL selectors, for the DeviceClasses among the objects."""
    return {device_class.name: list(device_class.selectors) for device_class in map(parse_device_class, objects)
            if device_class is not None}


@dataclass(frozen=True)
class Share:
    """A share of a device allocated more than once (DRAConsumableCapacity): the claim holding it, its shareID and
    the capacity it consumes. The device stays free for other shares while its capacity lasts."""

    claim: str
    share_id: str
    consumed_capacity: Mapping[str, str] = field(default_factory=dict)  # capacity name -> quantity


class InUse(dict[DeviceId, str]):
    """What existing claims hold: as a mapping, the devices held whole (device -> the claim); `shares`, the devices
    held in shares (device -> its shares), which a share-aware scheduler does not count as taken."""

    def __init__(self, whole: Mapping[DeviceId, str] | None = None,
                 shares: Mapping[DeviceId, tuple[Share, ...]] | None = None):
        super().__init__(whole or {})
        self.shares: dict[DeviceId, tuple[Share, ...]] = dict(shares or {})


def in_use_from_claims(claims: Iterable[ResourceClaim]) -> InUse:
    """Devices allocated to existing ResourceClaims (status.allocation.devices.results), admin access excluded:
    whole devices by the claim holding them, and shares (a result with a shareID) by device. Templates carry no
    allocation."""
    used = InUse()
    shares: dict[DeviceId, list[Share]] = {}
    for claim in claims:
        for result in claim.allocated:
            if result.admin_access:
                continue
            device = DeviceId(result.driver, result.pool, result.device)
            if result.share_id is None:
                used[device] = claim.name
            else:
                shares.setdefault(device, []).append(Share(claim.name, result.share_id, result.consumed_capacity))
    used.shares = {device: tuple(held) for device, held in shares.items()}
    return used


def gate_sites(parsed: DeviceClass | ResourceClaim | None) -> Iterator[tuple[Loc, gates.GuardedField]]:
    """Every field a feature gate guards, where it was written."""
    if isinstance(parsed, DeviceClass):
        if parsed.extended_resource_name is not None:
            yield ("spec", "extendedResourceName"), gates.EXTENDED_RESOURCE
        return
    if parsed is None:
        return
    for request in parsed.requests:
        if "firstAvailable" in request.fields:
            yield (*request.path, "firstAvailable"), gates.PRIORITIZED_LIST
        for choice in request.choices:
            if choice.admin_access:
                yield (*choice.path, "adminAccess"), gates.ADMIN_ACCESS
            if choice.has_tolerations:
                yield (*choice.path, "tolerations"), gates.DEVICE_TAINTS
            if choice.requests_capacity:
                yield (*choice.path, "capacity"), gates.CAPACITY_REQUESTS
    for constraint in parsed.constraints:
        if constraint.distinct_attribute is not None:
            yield (*constraint.path, "distinctAttribute"), gates.DISTINCT_ATTRIBUTE


def device_quota_name(device_class: str) -> str:
    """The resource a ResourceQuota caps a DeviceClass's devices by (docs/sources.md#kubernetes-dra-api), and the name
    gpu-dra gives the class's devices in Kueue's quota too: one name for them in both."""
    return f"{device_class}.deviceclass.resource.k8s.io/devices"

"""Config -> Kubernetes objects, as plain dicts in `resource.k8s.io/v1` shape.

The components pass these dicts to typed pulumi_kubernetes classes; the policies and the offline commands read the
same dicts, so what is previewed, checked and applied is one thing.
"""

from __future__ import annotations

import re
from typing import Any

from gpu_dra.core.config.models import (
    ADMIN_ACCESS_LABEL,
    DESCRIPTION_ANNOTATION,
    AllocationCount,
    ClaimTemplate,
    DeviceChoice,
    DeviceClassConfig,
    Request,
    Sharing,
    Stack,
    Team,
)
from gpu_dra.core.dra.claims import device_quota_name
from gpu_dra.core.facts.nvidia import DRIVER_NAME
from gpu_dra.core.facts.nvidia_driver import SharingStrategy
from gpu_dra.core.render.selectors import selector_expressions
from gpu_dra.core.yamlsource import Loc

RESOURCE_API = "resource.k8s.io/v1"
MANAGED_BY = {"app.kubernetes.io/managed-by": "gpu-dra"}
TEAM_LABEL = "gpu-dra.io/team"
NVIDIA_CONFIG_API = "resource.nvidia.com/v1beta1"
CLAIMS_QUOTA = "count/resourceclaims.resource.k8s.io"


def _metadata(name: str, namespace: str | None = None, labels: dict[str, str] | None = None,
              description: str | None = None) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "labels": {**MANAGED_BY, **(labels or {})}}
    if namespace:
        meta["namespace"] = namespace
    if description:
        meta["annotations"] = {DESCRIPTION_ANNOTATION: description}
    return meta


def _selectors(choice: DeviceChoice | DeviceClassConfig) -> list[dict[str, Any]]:
    guard = isinstance(choice, DeviceClassConfig)
    return [{"cel": {"expression": e}} for e in selector_expressions(choice.match, choice.selectors, guard)]


def device_class(config: DeviceClassConfig, extended_resource_name: str | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {"selectors": _selectors(config)}
    if config.config:
        spec["config"] = [{"opaque": {"driver": c.driver, "parameters": c.parameters}} for c in config.config]
    if extended_resource_name:
        spec["extendedResourceName"] = extended_resource_name
    return {"apiVersion": RESOURCE_API, "kind": "DeviceClass",
            "metadata": _metadata(config.name, description=config.description), "spec": spec}


def stack_device_classes(stack: Stack) -> list[dict[str, Any]]:
    mappings = {m.device_class: m.extended_resource_name for m in stack.config.legacy_mappings}
    return [device_class(c, mappings.get(c.name)) for c in stack.config.device_classes]


def namespace(team: Team) -> dict[str, Any]:
    labels = {**team.namespace.labels, TEAM_LABEL: team.name}
    if team.admin:
        labels[ADMIN_ACCESS_LABEL] = "true"
    meta = _metadata(team.namespace_name, labels=labels, description=team.description)
    if team.namespace.annotations:
        meta["annotations"] = {**meta.get("annotations", {}), **team.namespace.annotations}
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": meta}


def resource_quota(team: Team) -> dict[str, Any] | None:
    """The team's quota, or None when its file sets none (the policy pack decides whether that is allowed)."""
    hard: dict[str, str] = {}
    if team.quota.claims is not None:
        hard[CLAIMS_QUOTA] = str(team.quota.claims)
    for device_class_name, count in sorted(team.quota.devices.items()):
        hard[device_quota_name(device_class_name)] = str(count)
    if not hard:
        return None
    return {"apiVersion": "v1", "kind": "ResourceQuota",
            "metadata": _metadata("gpu-dra-devices", team.namespace_name, {TEAM_LABEL: team.name}),
            "spec": {"hard": hard}}


def _choice(choice: DeviceChoice) -> dict[str, Any]:
    out: dict[str, Any] = {"deviceClassName": choice.device_class}
    selectors = _selectors(choice)
    if selectors:
        out["selectors"] = selectors
    out["allocationMode"] = choice.allocation_mode.value
    if choice.allocation_mode is AllocationCount.ExactCount:
        out["count"] = choice.count or 1
    if choice.tolerations:
        out["tolerations"] = [t.model_dump(exclude_none=True) for t in choice.tolerations]
    if choice.capacity:
        out["capacity"] = {"requests": dict(choice.capacity)}
    return out


def _request(request: Request) -> dict[str, Any]:
    if request.first_available is not None:
        return {"name": request.name,
                "firstAvailable": [{"name": alt.name, **_choice(alt)} for alt in request.first_available]}
    exactly = _choice(request)
    if request.admin_access:
        exactly["adminAccess"] = True
    return {"name": request.name, "exactly": exactly}


_SELECTOR_AT = re.compile(r"selectors\[(\d+)\]")
# A rendered request's fields and the team file's keys they come from (_choice, _request).
_SOURCE_KEYS = {"deviceClassName": "deviceClass", "count": "count", "allocationMode": "allocationMode",
                "adminAccess": "adminAccess", "tolerations": "tolerations", "capacity": "capacity"}
_REQUEST_AT = re.compile(r"^spec\.spec\.devices\.requests\[(\d+)\](?:\.firstAvailable\[(\d+)\])?")


def source_of_selector(choice: DeviceChoice | DeviceClassConfig, index: int) -> Loc:
    """Where the rendered selector `index` of a class or request comes from in its file: its `match:` (rendered
    first), else its own `selectors` entry."""
    if choice.match is not None:
        return ("match",) if index == 0 else ("selectors", index - 1)
    return ("selectors", index)


def source_in_template(template: ClaimTemplate, path: str) -> Loc:
    """The key of the team file's claim template that a finding's path in the rendered ResourceClaimTemplate comes
    from (`spec.spec.devices.requests[0].exactly.selectors[1].cel.expression` -> requests[0].selectors[0] under a
    match): the request, its firstAvailable alternative, the selector; () where the path names none of them."""
    at = _REQUEST_AT.match(path)
    if at is None or int(at.group(1)) >= len(template.requests):
        return ()
    request = template.requests[int(at.group(1))]
    loc: Loc = ("requests", int(at.group(1)))
    choice: DeviceChoice = request
    if at.group(2) is not None:
        alternatives = request.first_available or []
        if int(at.group(2)) >= len(alternatives):
            return loc
        choice, loc = alternatives[int(at.group(2))], (*loc, "firstAvailable", int(at.group(2)))
    rest = path[at.end():].removeprefix(".exactly").removeprefix(".")
    selector = _SELECTOR_AT.match(rest)
    if selector:
        return (*loc, *source_of_selector(choice, int(selector.group(1))))
    key = _SOURCE_KEYS.get(re.split(r"[.\[]", rest, maxsplit=1)[0])
    return (*loc, key) if key else loc


def gpu_sharing_config(sharing: Sharing) -> dict[str, Any]:
    """NVIDIA's opaque GpuConfig for time-slicing or MPS (resource.nvidia.com/v1beta1; NVIDIA/k8s-dra-driver-gpu
    @v25.12.0:api/nvidia.com/resource/v1beta1/gpuconfig.go, sharing.go)."""
    settings: dict[str, Any] = {"strategy": sharing.strategy.value}
    if sharing.strategy is SharingStrategy.TimeSlicing:
        if sharing.interval:
            settings["timeSlicingConfig"] = {"interval": sharing.interval}
    else:
        mps: dict[str, Any] = {}
        if sharing.active_thread_percentage is not None:
            mps["defaultActiveThreadPercentage"] = sharing.active_thread_percentage
        if sharing.pinned_memory_limit is not None:
            mps["defaultPinnedDeviceMemoryLimit"] = sharing.pinned_memory_limit
        if mps:
            settings["mpsConfig"] = mps
    config: dict[str, Any] = {"opaque": {"driver": DRIVER_NAME, "parameters": {
        "apiVersion": NVIDIA_CONFIG_API, "kind": "GpuConfig", "sharing": settings}}}
    if sharing.requests:
        config["requests"] = list(sharing.requests)
    return config


def dra_objects(stack: Stack) -> list[dict[str, Any]]:
    """The stack's DeviceClasses and its teams' claim templates, as rendered: what explain, doctor and upgrade judge
    of a stack."""
    return [*stack_device_classes(stack),
            *(claim_template(team, t) for team in stack.teams for t in team.claim_templates)]


def claim_template(team: Team, template: ClaimTemplate) -> dict[str, Any]:
    devices: dict[str, Any] = {"requests": [_request(r) for r in template.requests]}
    if template.constraints:
        devices["constraints"] = [
            {**({"requests": list(c.requests)} if c.requests else {}),
             **({"matchAttribute": c.match_attribute} if c.match_attribute else {}),
             **({"distinctAttribute": c.distinct_attribute} if c.distinct_attribute else {})}
            for c in template.constraints]
    if template.sharing:
        devices["config"] = [gpu_sharing_config(template.sharing)]
    return {"apiVersion": RESOURCE_API, "kind": "ResourceClaimTemplate",
            "metadata": _metadata(template.name, team.namespace_name, {TEAM_LABEL: team.name},
                                  template.description),
            "spec": {"spec": {"devices": devices}}}

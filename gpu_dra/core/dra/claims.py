"""A cluster's or a file's claims, DeviceClasses and the devices its claims hold, read from their objects: the
inputs explain, pods, migrate and the policy pack judge claims with."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, NamedTuple

from gpu_dra.core.dra.objects import ResourceClaim, parse_claim, parse_device_class


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


def in_use_from_claims(claims: Iterable[ResourceClaim]) -> dict[DeviceId, str]:
    """Devices allocated to existing ResourceClaims (status.allocation.devices.results), admin access excluded:
    device -> the claim holding it. Templates carry no allocation."""
    used: dict[DeviceId, str] = {}
    for claim in claims:
        for result in claim.allocated:
            if not result.admin_access:
                used[DeviceId(result.driver, result.pool, result.device)] = claim.name
    return used

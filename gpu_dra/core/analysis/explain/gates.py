"""A claim as the API server stores it with the cluster's feature gates (the allocator's switches for a cluster are
gpu_dra.core.analysis.features.features_for)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from gpu_dra.core.analysis.allocator import Features
from gpu_dra.core.dra.claims import ResourceClaim
from gpu_dra.core.facts import gates

# Request fields behind a gate: the allocator's switch for the gate, the typed request's attribute, and its value
# once the API server drops it (dropDisabledFields in kubernetes/kubernetes
# pkg/registry/resource/{resourceclaim,resourceclaimtemplate,deviceclass}/strategy.go: a field whose gate is off is
# not stored on create).
_GATED_FIELDS = ((gates.CAPACITY_REQUESTS, "consumable_capacity", "capacity_requests", None),
                 (gates.ADMIN_ACCESS, "admin_access", "written_admin_access", None),
                 (gates.DEVICE_TAINTS, "device_taints", "tolerations", ()))
# Every gated field the API server drops on write, leaving the object valid: the claims' above and a DeviceClass's
# extendedResourceName (explain uses no class field it guards, but says when one is dropped).
DROPPED_ON_WRITE = (*(guarded for guarded, *_ in _GATED_FIELDS), gates.EXTENDED_RESOURCE)


def as_stored(claim: ResourceClaim, features: Features) -> ResourceClaim:
    """The claim as the API server stores it with these gates: fields of a gate that is off are dropped on write
    (lint and dra-feature-gates report them), so the scheduler never sees them."""
    dropped: dict[str, Any] = {name: value for _, switch, name, value in _GATED_FIELDS
                               if not getattr(features, switch)}
    if not dropped:
        return claim
    requests = tuple(replace(request, choices=tuple(
        replace(choice, **{k: v for k, v in dropped.items() if getattr(choice, k) != v}) for choice in request.choices))
        for request in claim.requests)
    return replace(claim, requests=requests)

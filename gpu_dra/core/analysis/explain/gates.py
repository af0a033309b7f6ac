"""A claim as the API server stores it with the cluster's feature gates (the allocator's switches for a cluster are
gpu_dra.core.analysis.features.features_for)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from gpu_dra.core.analysis.allocator import Features
from gpu_dra.core.dra.claims import ResourceClaim

# Request fields behind a gate, and their value once the API server drops them (k8s resource strategy
# dropDisabledFields: a field whose gate is off is not stored on create).
_GATED_FIELDS = (("consumable_capacity", "capacity_requests", None), ("admin_access", "written_admin_access", None),
                 ("device_taints", "tolerations", ()))


def as_stored(claim: ResourceClaim, features: Features) -> ResourceClaim:
    """The claim as the API server stores it with these gates: fields of a gate that is off are dropped on write
    (lint and dra-feature-gates report them), so the scheduler never sees them."""
    dropped: dict[str, Any] = {name: value for gate, name, value in _GATED_FIELDS if not getattr(features, gate)}
    if not dropped:
        return claim
    requests = tuple(replace(request, choices=tuple(
        replace(choice, **{k: v for k, v in dropped.items() if getattr(choice, k) != v}) for choice in request.choices))
        for request in claim.requests)
    return replace(claim, requests=requests)

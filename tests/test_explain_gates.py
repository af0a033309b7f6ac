"""explain answers for the claim the API server stores: a request field whose feature gate is off is dropped on
write (lint and dra-feature-gates report it), so the scheduler never sees it, and neither does explain."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import yaml

from gpu_dra.core.analysis.allocator import Features
from gpu_dra.core.analysis.explain import Explainer
from gpu_dra.core.dra.claims import claims_from_objects, in_use_from_claims

from .test_cli import gpu_dra
from .test_explain import P5, _allocated, claim, exactly, load

ALL_HELD = in_use_from_claims(claims_from_objects([_allocated([f"gpu-{i}" for i in range(8)])]))
ADMIN_ON = Features(admin_access=True)


def test_admin_access_is_dropped_where_its_gate_is_off() -> None:
    """With DRAAdminAccess an admin claim may take devices others hold; without it the field is gone and the claim
    waits for them like any other."""
    admin = claim([exactly(mode="All", count=None, admin=True)])
    fleet = load(P5)
    assert Explainer({}, features=ADMIN_ON).explain(admin, fleet, ALL_HELD).allocatable
    off = Explainer({}, features=replace(ADMIN_ON, admin_access=False)).explain(admin, fleet, ALL_HELD)
    plain = Explainer({}, features=replace(ADMIN_ON, admin_access=False)).explain(
        claim([exactly(mode="All", count=None)]), fleet, ALL_HELD)
    assert not off.allocatable and off.reason == plain.reason


def test_capacity_requests_are_dropped_where_consumable_capacity_is_off() -> None:
    """A request for 100Gi of a GPU's memory: with DRAConsumableCapacity no 80 GB H100 has it; without the gate the
    API server drops `capacity` and any H100 will do."""
    request = exactly(1)
    request["exactly"]["capacity"] = {"requests": {"memory": "100Gi"}}
    fleet = load(P5)
    on = Explainer({}, features=Features(consumable_capacity=True)).explain(claim([request]), fleet)
    off = Explainer({}, features=Features(consumable_capacity=False)).explain(claim([request]), fleet)
    assert (on.allocatable, off.allocatable) == (False, True)


def test_a_capacity_request_that_cannot_be_allocated_is_explained(tmp_path: Path) -> None:
    """Its reason is shared between claims alike by a key the capacity requests (a mapping) are part of: that key
    once failed to hash, and explain ended in an internal error."""
    template = tmp_path / "cap.yaml"
    template.write_text(yaml.safe_dump({
        "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
        "metadata": {"name": "cap", "namespace": "default"},
        "spec": {"spec": {"devices": {"requests": [{"name": "gpu", "exactly": {
            "deviceClassName": "gpu.nvidia.com", "count": 9, "capacity": {"requests": {"memory": "10Gi"}}}}]}}}}))
    result = gpu_dra("explain", str(P5), str(template), "--kubernetes-version", "1.36")
    assert result.returncode == 1 and result.stderr == "", result
    assert "claim default/cap: NOT allocatable: request gpu needs 9 device(s)" in result.stdout, result.stdout

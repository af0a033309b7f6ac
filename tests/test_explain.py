"""Inventory, explain and the allocator on the real ResourceSlice dumps and on synthesized fleets."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from gpu_dra.core.analysis import inventory as inv
from gpu_dra.core.analysis.explain import Explainer, claims_from_objects, in_use_from_claims
from gpu_dra.core.config.loader import load_stack
from gpu_dra.core.dra.objects import ResourceClaim, claim_from_devices
from gpu_dra.core.facts import nvidia
from gpu_dra.core.yamlsource import parse_documents

from .conftest import ROOT, Project
from .test_cli import gpu_dra

DUMPS = ROOT / "tests" / "data" / "resourceslices"
P5 = DUMPS / "h100-80gb-hbm3_eks-p5_v25.12.0.yaml"
GB200 = DUMPS / "gb200_oke_bm-gpu-gb200-v3.4.yaml"


def load(path: Path) -> inv.Inventory:
    return inv.from_documents(path.name, parse_documents(path.read_text(), path.name))


def claim(requests: list[dict[str, Any]], constraints: list[dict[str, Any]] | None = None,
          name: str = "default/test") -> ResourceClaim:
    return claim_from_devices(name, {"requests": requests, "constraints": constraints or []})


def exactly(count: int | None = 1, selectors: tuple[str, ...] = (), klass: str = "gpu.nvidia.com",
            mode: str = "ExactCount", admin: bool = False, name: str = "gpu") -> dict[str, Any]:
    spec: dict[str, Any] = {"deviceClassName": klass, "allocationMode": mode,
                            "selectors": [{"cel": {"expression": s}} for s in selectors]}
    if mode == "ExactCount":
        spec["count"] = count
    if admin:
        spec["adminAccess"] = True
    return {"name": name, "exactly": spec}


GUIDE_SELECTOR = ("device.capacity['gpu.nvidia.com'].memory.compareTo(quantity('20Gi')) >= 0 && "
                  "device.attributes['gpu.nvidia.com'].productName.matches('A100|H100|H200')")


def test_real_p5_dump_parses_device_by_device() -> None:
    fleet = load(P5)
    gpus = [d for d in fleet.devices if d.driver == "gpu.nvidia.com"]
    assert [d.name for d in gpus] == [f"gpu-{i}" for i in range(8)]
    assert {d.attribute("gpu.nvidia.com/productName") for d in gpus} == {"NVIDIA H100 80GB HBM3"}
    assert {d.capacity["memory"] for d in gpus} == {"81559Mi"}
    assert gpus[0].attribute("resource.kubernetes.io/pciBusID") == "0000:53:00.0"
    assert {d.name for d in fleet.devices if d.driver == "compute-domain.nvidia.com"} == {"channel-0", "daemon-0"}
    assert fleet.nodes() == ["ip-100-64-147-149.ec2.internal"]


def test_real_gb200_dump_parses() -> None:
    fleet = load(GB200)
    assert len(fleet.devices) == 4
    assert {d.capacity["memory"] for d in fleet.devices} == {"189471Mi"}
    assert {d.attribute("gpu.nvidia.com/addressingMode") for d in fleet.devices} == {"ATS"}


@pytest.mark.parametrize("dump,the_claim,allocatable,matching", [
    (P5, claim([exactly(1, (GUIDE_SELECTOR,))]), True, 8),
    (GB200, claim([exactly(1, (GUIDE_SELECTOR,))]), False, 0),
    (P5, claim([exactly(8)]), True, 8),
    (P5, claim([exactly(9)]), False, 8),
    (P5, claim([exactly(mode="All", count=None)]), True, 8),
    (P5, claim([exactly(2)], [{"matchAttribute": "resource.kubernetes.io/pcieRoot"}]), False, 8),  # one GPU per root
    (P5, claim([exactly(2)], [{"matchAttribute": "gpu.nvidia.com/productName"}]), True, 8),
    (P5, claim([exactly(8)], [{"distinctAttribute": "gpu.nvidia.com/uuid"}]), True, 8),
    (GB200, claim([exactly(1, ("device.capacity['gpu.nvidia.com'].memory.compareTo(quantity('185Gi')) >= 0",))]),
     True, 4),
])
def test_expected_matches_on_real_dumps(dump: Path, the_claim: ResourceClaim, allocatable: bool, matching: int) -> None:
    report = Explainer({}).explain(the_claim, load(dump))
    assert report.allocatable is allocatable, report.reason
    assert len(report.requests[0].matching) == matching


def test_rejections_name_the_selector_and_failing_term() -> None:
    report = Explainer({}).explain(claim([exactly(1, (GUIDE_SELECTOR,))]), load(GB200))
    assert list(report.requests[0].rejected) == [
        'selector #0: productName "NVIDIA GB200" does not match "A100|H100|H200"']
    assert report.reason.startswith("request gpu: no device matches")


def test_class_rejections_say_which_class() -> None:
    report = Explainer({}).explain(claim([exactly(1)]), load(P5))
    reasons = list(report.requests[0].rejected)
    assert reasons == ['class gpu.nvidia.com: selector #0: driver is compute-domain.nvidia.com']


def test_a_runtime_error_on_any_device_aborts_the_claim() -> None:
    report = Explainer({}).explain(claim([exactly(1, ("device.attributes['gpu.nvidia.com'].memory == 1",))]),
                                   load(P5))
    assert report.allocatable is False
    assert [(e.rule, e.message) for e in report.errors] == [
        ("cel-runtime-error", "claim default/test: selector #0: CEL runtime error: no such key: memory")]
    assert "aborts the whole claim" in report.reason


def test_first_available_takes_the_first_alternative_that_fits() -> None:
    alternatives = {"name": "gpu", "firstAvailable": [
        {"name": "h200", "deviceClassName": "gpu.nvidia.com", "count": 1,
         "selectors": [{"cel": {"expression": "device.attributes['gpu.nvidia.com'].productName == 'NVIDIA H200'"}}]},
        {"name": "h100-pair", "deviceClassName": "gpu.nvidia.com", "count": 2}]}
    report = Explainer({}).explain(claim([alternatives]), load(P5))
    assert report.allocatable
    assert report.solution is not None
    node, allocations = report.solution
    assert [(a.subrequest, len(a.devices)) for a in allocations] == [("h100-pair", 2)]


def _allocated(devices: list[str], admin: bool = False) -> dict[str, Any]:
    return {"kind": "ResourceClaim", "metadata": {"name": "busy", "namespace": "default"},
            "spec": {"devices": {"requests": []}},
            "status": {"allocation": {"devices": {"results": [
                {"request": "gpu", "driver": "gpu.nvidia.com", "pool": "ip-100-64-147-149.ec2.internal",
                 "device": d, **({"adminAccess": True} if admin else {})} for d in devices]}}}}


def test_devices_in_use_are_skipped_unless_admin_access() -> None:
    in_use = in_use_from_claims(claims_from_objects([_allocated([f"gpu-{i}" for i in range(8)])]))
    fleet = load(P5)
    assert not Explainer({}).explain(claim([exactly(1)]), fleet, in_use).allocatable
    assert Explainer({}).explain(claim([exactly(mode="All", count=None, admin=True)]), fleet, in_use).allocatable
    assert not Explainer({}).explain(claim([exactly(mode="All", count=None)]), fleet,
                                     in_use_from_claims(claims_from_objects([_allocated(["gpu-3"])]))).allocatable


def test_unknown_class_is_reported() -> None:
    report = Explainer({}).explain(claim([exactly(1, klass="gpu-b200")]), load(P5))
    assert [(e.rule, e.message) for e in report.errors] == [
        ("device-class-missing", "request gpu: device class gpu-b200 does not exist")]


def test_v1beta1_slices_are_read() -> None:
    text = yaml.safe_dump({"apiVersion": "resource.k8s.io/v1beta1", "kind": "ResourceSlice",
                           "metadata": {"name": "n1-gpu"},
                           "spec": {"driver": "gpu.nvidia.com", "nodeName": "n1", "pool": {"name": "n1"},
                                    "devices": [{"name": "gpu-0", "basic": {
                                        "attributes": {"type": {"string": "gpu"},
                                                       "productName": {"string": "NVIDIA A10G"}},
                                        "capacity": {"memory": {"value": "23028Mi"}}}}]}})
    fleet = inv.from_documents("old.yaml", parse_documents(text, "old.yaml"))
    assert fleet.devices[0].capacity == {"memory": "23028Mi"}
    assert Explainer({}).explain(claim([exactly(1)]), fleet).allocatable


def test_synthesized_fleet_follows_the_node_groups() -> None:
    fleet = inv.synthesize(load_stack(ROOT, "prod").config)
    assert len(fleet.nodes()) == 4 + 8  # h100 max 4, l40s max 8; the device-plugin group publishes nothing
    assert {d.capacity["memory"] for d in fleet.devices if d.node.startswith("h100")} == {"81559Mi"}
    assert any("legacy-a10g: device-plugin group" in note for note in fleet.notes)


def test_stack_templates_on_the_stack_fleet() -> None:
    result = gpu_dra("explain", "--stack", "prod", "--format", "json")
    reports = {c["claim"]: c for c in json.loads(result.stdout)["claims"]}
    assert reports["inference/gpu-20gb-any"]["allocatable"] is True
    assert reports["ml-training/h100-x8"]["allocatable"] is True
    assert reports["ml-training/h100-else-two-a100"]["solution"]["devices"][0]["request"] == "gpu/h100"
    assert result.returncode == 0


def test_explain_cli_on_a_real_dump(tmp_path: Path) -> None:
    template = tmp_path / "claim.yaml"
    template.write_text(yaml.safe_dump({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
                                        "metadata": {"name": "pair", "namespace": "ml"},
                                        "spec": {"spec": {"devices": {
                                            "requests": [exactly(2)],
                                            "constraints": [{"matchAttribute": "resource.kubernetes.io/pcieRoot"}]}}}}))
    result = gpu_dra("explain", str(P5), str(template))
    assert result.returncode == 1
    assert ("claim ml/pair: NOT allocatable: enough devices match, but no node has a set that satisfies the "
            "constraints; matchAttribute resource.kubernetes.io/pcieRoot: on ip-100-64-147-149.ec2.internal the "
            "matching devices carry pci0000:44, pci0000:55") in result.stdout


def test_claims_from_objects_reads_templates_and_claims() -> None:
    objects = [{"kind": "ResourceClaimTemplate", "metadata": {"name": "t", "namespace": "a"},
                "spec": {"spec": {"devices": {"requests": [exactly(1)]}}}},
               {"kind": "ResourceClaim", "metadata": {"name": "c"}, "spec": {"devices": {"requests": []}}}]
    assert [c.name for c in claims_from_objects(objects)] == ["a/t", "c"]


def test_v1beta1_claims_are_read_and_misplaced_v1_fields_explained() -> None:
    request = {"name": "gpu", "deviceClassName": "gpu.nvidia.com", "count": 1}
    old = {"apiVersion": "resource.k8s.io/v1beta1", "kind": "ResourceClaim", "metadata": {"name": "old"},
           "spec": {"devices": {"requests": [request]}}}
    wrong = {**old, "apiVersion": "resource.k8s.io/v1", "metadata": {"name": "wrong"}}
    old_claim, wrong_claim = claims_from_objects([old, wrong])
    assert Explainer({}).explain(old_claim, load(P5)).allocatable
    report = Explainer({}).explain(wrong_claim, load(P5))
    assert not report.allocatable and "belong under `exactly`" in report.reason


def test_a_claims_own_allocation_does_not_block_it() -> None:
    allocated = _allocated([f"gpu-{i}" for i in range(8)])
    allocated["spec"]["devices"]["requests"] = [exactly(8)]
    (own,) = claims_from_objects([allocated])
    report = Explainer({}).explain(own, load(P5), in_use_from_claims(claims_from_objects([allocated])))
    assert report.allocatable


def test_match_attribute_needs_the_same_type_too() -> None:
    text = yaml.safe_dump({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": "s"},
                           "spec": {"driver": "gpu.nvidia.com", "nodeName": "n1", "pool": {"name": "n1"},
                                    "devices": [
                                        {"name": "a", "attributes": {"type": {"string": "gpu"}, "x": {"bool": True}}},
                                        {"name": "b", "attributes": {"type": {"string": "gpu"}, "x": {"int": 1}}}]}})
    fleet = inv.from_documents("s.yaml", parse_documents(text, "s.yaml"))
    assert not Explainer({}).explain(claim([exactly(2)], [{"matchAttribute": "gpu.nvidia.com/x"}]),
                                     fleet).allocatable


@pytest.mark.parametrize("body,message", [
    ("spec: hello", "spec must be a mapping"),
    ("spec: {driver: gpu.nvidia.com, nodeName: n1, devices: [gpu-0]}", "spec.devices[0] must be a device"),
    ("spec: {driver: gpu.nvidia.com, nodeName: n1, devices: [{name: g, attributes: {productName: H100}}]}",
     "spec.devices[0] must be a device"),
])
def test_malformed_slices_are_clear_errors(tmp_path: Path, body: str, message: str) -> None:
    path = tmp_path / "slices.yaml"
    path.write_text(f"apiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata: {{name: s}}\n{body}\n")
    result = gpu_dra("inventory", str(path))
    assert result.returncode == 2 and message in result.stderr, result.stderr


def test_malformed_claims_are_clear_errors(tmp_path: Path) -> None:
    path = tmp_path / "claim.yaml"
    path.write_text(yaml.safe_dump({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
                                    "metadata": {"name": "c"},
                                    "spec": {"devices": {"requests": [exactly(2)], "constraints": [
                                        {"requests": "gpu", "matchAttribute": "gpu.nvidia.com/x"}]}}}))
    result = gpu_dra("explain", str(P5), str(path))
    assert result.returncode == 2
    assert "ResourceClaim c: spec.devices.constraints.0.requests" in result.stderr
    assert "internal error" not in result.stderr


@pytest.mark.parametrize("level", [(0, 1), (0, 2), (0, 3), (0, 4)])
def test_synthesized_devices_carry_what_the_driver_release_publishes(level: tuple[int, int]) -> None:
    """One list of published names (nvidia.published_attributes) decides the synthesized devices' attributes."""
    device = inv.synthesize_groups([inv.GroupSpec("h100", "p5.48xlarge", 1, True)], level).devices[0]
    assert set(device.attributes) == nvidia.published_attributes(level, "gpu")


def test_synthesized_p5_looks_like_the_real_p5_dump() -> None:
    real = next(d for d in load(P5).devices if d.driver == "gpu.nvidia.com")
    fake = inv.synthesize_groups([inv.GroupSpec("h100", "p5.48xlarge", 1, True)], (0, 3)).devices[0]
    assert set(fake.attributes) == set(real.attributes) and fake.capacity == real.capacity
    for name in ("productName", "architecture", "addressingMode", "cudaComputeCapability", "driverVersion"):
        assert fake.attributes[name] == real.attributes[name], name


def test_a_pci_bus_selector_is_safe_on_the_prod_fleet(project: Project) -> None:
    """The selector is correct on real p5 nodes, so the fleet check must not call it unsafe (it once did: the
    synthesized devices lacked the attribute and the lookup raised)."""
    def add_template(team: dict[str, Any]) -> None:
        team["claimTemplates"].append({"name": "gpu-on-pci-domain-0", "requests": [{
            "name": "gpu", "deviceClass": "gpu.nvidia.com",
            "selectors": ["device.attributes['resource.kubernetes.io'].pciBusID.startsWith('0000:')"]}]})
    project.edit("stacks/teams/inference.yaml", add_template)
    result = gpu_dra("--project-dir", str(project.root), "check", "--stack", "prod", "--format", "json")
    assert result.returncode == 0, result.stdout + result.stderr
    assert json.loads(result.stdout)["stacks"][0]["violations"] == []

"""Inventory, explain and the allocator on the real ResourceSlice dumps and on synthesized fleets."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from gpu_dra.core.analysis import inventory as inv
from gpu_dra.core.analysis.explain import Explainer, TaintRuleError
from gpu_dra.core.analysis.features import features_for
from gpu_dra.core.analysis.pools import Node
from gpu_dra.core.config.loader import load_stack
from gpu_dra.core.dra.claims import (
    DeviceId,
    ResourceClaim,
    claim_from_devices,
    claims_from_objects,
    in_use_from_claims,
)
from gpu_dra.core.facts import nvidia
from gpu_dra.core.facts.target import Platform, Target
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


def test_one_explainer_answers_each_claim_against_the_devices_others_hold() -> None:
    """An explainer shares its work between claims alike (a cluster's Pending pods use a few templates): the
    holder of the devices still finds them free, and the others, before and after it, find them taken."""
    in_use = in_use_from_claims(claims_from_objects([_allocated([f"gpu-{i}" for i in range(7)])]))
    fleet, explainer = load(P5), Explainer({})
    eight = [exactly(8)]
    first = explainer.explain(claim(eight, name="default/other"), fleet, in_use)
    holder = explainer.explain(claim(eight, name="default/busy"), fleet, in_use)
    last = explainer.explain(claim(eight, name="default/another"), fleet, in_use)
    assert (first.allocatable, holder.allocatable, last.allocatable) == (False, True, False)
    assert "allocated to default/busy" in first.reason and first.reason == last.reason
    assert [len(r.in_use) for r in (*first.requests, *holder.requests, *last.requests)] == [7, 0, 7]
    assert explainer.explain(claim(eight, name="default/other"), fleet, {}).allocatable  # nothing held


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


def test_a_claim_named_by_its_team_instead_of_its_namespace_is_pointed_at() -> None:
    """training's namespace is ml-training: the template of that name there is suggested, and what exists listed."""
    result = gpu_dra("explain", "--stack", "prod", "--claim", "training/h100-x8")
    assert result.returncode == 2
    assert result.stderr.startswith("gpu-dra: no claim or claim template named 'training/h100-x8' in the inputs; "
                                    "did you mean 'ml-training/h100-x8'? there are: gpu-ops/all-gpus-monitoring, "
                                    "inference/gpu-20gb-any, ")
    typo = gpu_dra("explain", "--stack", "prod", "--claim", "ml-training/h100-x9")
    assert "did you mean 'ml-training/h100-x8'?" in typo.stderr


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


def test_devices_in_use_are_named_by_device_id_equal_to_the_plain_triple() -> None:
    """pods and pending look devices in use up by the (driver, pool, device) an allocation result names: the key
    must equal and hash as that triple, and admin access holds nothing."""
    held = in_use_from_claims(claims_from_objects([_allocated(["gpu-0"]), {**_allocated(["gpu-1"], admin=True),
                                                                           "metadata": {"name": "admin"}}]))
    triple = ("gpu.nvidia.com", "ip-100-64-147-149.ec2.internal", "gpu-0")
    assert list(held) == [DeviceId(*triple)] and held[triple] == "default/busy"
    (key,) = held
    assert (key.driver, key.pool, key.device) == triple


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


# --------------------------------------------------------------------------------------------- the faithful core


def _p5_items() -> list[dict[str, Any]]:
    return list(yaml.safe_load(P5.read_text())["items"])


def _fleet_of(items: list[dict[str, Any]]) -> inv.Inventory:
    text = yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": items})
    return inv.from_documents("slices.yaml", parse_documents(text, "slices.yaml"))


P5_NODE = "ip-100-64-147-149.ec2.internal"


def _held_by(name: str, devices: list[str]) -> dict[str, Any]:
    namespace, _, claim_name = name.partition("/")
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
            "metadata": {"name": claim_name, "namespace": namespace},
            "spec": {"devices": {"requests": [exactly(len(devices))]}},
            "status": {"allocation": {"devices": {"results": [
                {"request": "gpu", "driver": "gpu.nvidia.com", "pool": P5_NODE, "device": d} for d in devices]}}}}


def test_busy_devices_are_named_with_their_holders_on_the_real_p5_dump() -> None:
    trainer = _held_by("ml/trainer-0-gpu", [f"gpu-{i}" for i in range(7)])
    in_use = in_use_from_claims(claims_from_objects([trainer]))
    report = Explainer({}).explain(claim([exactly(2)], name="ml/pair"), load(P5), in_use)
    assert not report.allocatable and not report.errors
    assert report.reason.startswith(f"request gpu needs 2 device(s); on {P5_NODE} 1 of its 8 matching device(s) "
                                    "are free: gpu-0, gpu-1, gpu-2, gpu-3, gpu-4, gpu-5, gpu-6: allocated to "
                                    "ml/trainer-0-gpu")
    assert "None" not in report.reason
    (request,) = report.as_dict()["requests"]
    assert request["in_use"]["count"] == 7
    assert request["in_use"]["devices"][0] == {"node": P5_NODE, "driver": "gpu.nvidia.com", "pool": P5_NODE,
                                               "device": "gpu-0", "claim": "ml/trainer-0-gpu"}
    one = Explainer({}).explain(claim([exactly(1)], name="ml/one"), load(P5), in_use)
    assert one.allocatable and one.solution is not None
    assert [d.name for a in one.solution[1] for d in a.devices] == ["gpu-7"]


def test_busy_devices_on_the_cli_text_and_json(tmp_path: Path) -> None:
    held = tmp_path / "claims.yaml"
    held.write_text(yaml.safe_dump_all([_held_by("ml/trainer-0-gpu", [f"gpu-{i}" for i in range(7)]), {
        "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
        "metadata": {"name": "pair", "namespace": "ml"}, "spec": {"spec": {"devices": {"requests": [exactly(2)]}}}}]))
    text = gpu_dra("explain", str(P5), str(held), "--claim", "ml/pair")
    assert text.returncode == 1
    assert "gpu-3, gpu-4, gpu-5, gpu-6: allocated to ml/trainer-0-gpu" in text.stdout
    report = json.loads(gpu_dra("explain", str(P5), str(held), "--claim", "ml/pair", "--format", "json").stdout)
    (pair,) = report["claims"]
    assert "gpu-3, gpu-4, gpu-5, gpu-6: allocated to ml/trainer-0-gpu" in pair["reason"]
    assert pair["requests"][0]["in_use"]["count"] == 7


def test_a_missing_constrained_attribute_reads_without_none() -> None:
    items = _p5_items()
    del items[1]["spec"]["devices"][0]["attributes"]["resource.kubernetes.io/pcieRoot"]
    report = Explainer({}).explain(claim([exactly(2)], [{"matchAttribute": "resource.kubernetes.io/pcieRoot"}]),
                                   _fleet_of(items))
    assert not report.allocatable
    assert "(attribute not set)" in report.reason and "None" not in report.reason


COMPUTE_DOMAIN_SLICE = {  # the shape of the cluster-wide slice NVIDIA's DRA chart (0.5 line) installs
    "apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
    "metadata": {"name": "compute-domain-default-channel"},
    "spec": {"driver": "compute-domain.nvidia.com", "pool": {"name": "compute-domain", "generation": 1,
                                                             "resourceSliceCount": 1},
             "nodeSelector": {"nodeSelectorTerms": [{"matchExpressions": [
                 {"key": "nvidia.com/gpu.present", "operator": "In", "values": ["true"]}]}]},
             "devices": [{"name": "channel-1", "attributes": {"type": {"string": "channel"}, "id": {"int": 1}}}]}}


def test_a_node_selector_slice_is_read_by_inventory_and_explain(tmp_path: Path) -> None:
    fleet = _fleet_of([*_p5_items(), COMPUTE_DOMAIN_SLICE])
    shared = [d for d in fleet.devices if d.node == inv.SELECTED_NODES]
    assert [d.name for d in shared] == ["channel-1"] and fleet.nodes() == [P5_NODE]
    path = tmp_path / "slices.yaml"
    path.write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": [*_p5_items(),
                                                                                 COMPUTE_DOMAIN_SLICE]}))
    result = gpu_dra("inventory", str(path))
    assert result.returncode == 0, result.stderr
    gpus = claim([exactly(1)])
    assert Explainer({}).explain(gpus, fleet).allocatable
    channel = claim([exactly(1, ("device.attributes['compute-domain.nvidia.com'].id == 1",),
                             klass="compute-domain-default-channel.nvidia.com")])
    explainer = Explainer({"compute-domain-default-channel.nvidia.com": [
        "device.driver == 'compute-domain.nvidia.com'"]})
    labelled = [Node(P5_NODE, {"nvidia.com/gpu.present": "true"})]
    report = explainer.explain(channel, fleet, nodes=labelled)
    assert report.allocatable and report.allocation is not None
    assert [(d.pool, d.device) for d in report.allocation.devices] == [("compute-domain", "channel-1")]
    # the slice selects labelled nodes only: on an unlabelled node the channel is out of reach
    assert not explainer.explain(channel, fleet, nodes=[Node(P5_NODE, {})]).allocatable


def test_a_duplicated_pool_fails_the_pod_on_1_34_and_the_node_from_1_35() -> None:
    """1.34's allocator fails the claim once its search reaches an invalid pool; from 1.35 the pool is passed over
    and, nothing else fitting, the node fails with "invalid resource pools were encountered" (upstream v0.35.6
    `invalid-pool-is-error-if-no-other-device-can-be-allocated`), which explain completes with the pool's fault."""
    items = _p5_items()
    copy = yaml.safe_load(yaml.safe_dump(items[1]))
    copy["metadata"]["name"] += "-copy"
    for piece in (items[1], copy):  # the pool says it has two slices: it is whole, and names gpu-0 twice
        piece["spec"]["pool"]["resourceSliceCount"] = 2
    fleet = _fleet_of([*items, copy])
    old = Explainer({}, features=features_for(Target("1.34"))).explain(claim([exactly(1)]), fleet)
    assert not old.allocatable
    assert [e.rule for e in old.errors] == ["allocation-error"]
    assert "duplicate device name gpu-0" in old.reason
    for version in ("1.35", "1.36"):
        report = Explainer({}, features=features_for(Target(version))).explain(claim([exactly(1)]), fleet)
        assert not report.allocatable and not report.errors, version
        assert "invalid resource pools were encountered" in report.reason, report.reason
        assert "duplicate device name gpu-0" in report.reason, report.reason


def test_an_incomplete_pool_is_not_used_from_1_35_and_explain_says_so() -> None:
    """1.34 allocates from a pool missing slices; 1.35 does not (upstream v0.35.6 `no-allocation-from-incomplete-
    pools`, kubernetes/dynamic-resource-allocation bcad823): explain names the pool and its slice count."""
    items = _p5_items()
    items[1]["spec"]["pool"]["resourceSliceCount"] = 2  # one of two slices published
    fleet = _fleet_of(items)
    assert Explainer({}, features=features_for(Target("1.34"))).explain(claim([exactly(1)]), fleet).allocatable
    report = Explainer({}, features=features_for(Target("1.35"))).explain(claim([exactly(1)]), fleet)
    assert not report.allocatable and not report.errors
    assert ("its pool gpu.nvidia.com/ip-100-64-147-149.ec2.internal is incomplete: 1 slice(s) of generation 1 where "
            "its resourceSliceCount says 2") in report.reason, report.reason


def test_an_older_pool_generation_does_not_count() -> None:
    items = _p5_items()
    old = yaml.safe_load(yaml.safe_dump(items[1]))
    old["metadata"]["name"] += "-old"
    old["spec"]["pool"]["generation"] = 0
    old["spec"]["devices"] = [{**d, "name": f"old-{d['name']}"} for d in old["spec"]["devices"]]
    report = Explainer({}).explain(claim([exactly(9)]), _fleet_of([*items, old]))
    assert len(report.requests[0].matching) == 16  # the match report lists every device read
    assert not report.allocatable and not report.errors  # the allocator only the newest generation


def test_a_device_taint_the_request_does_not_tolerate() -> None:
    items = _p5_items()
    for device in items[1]["spec"]["devices"]:
        device["taints"] = [{"key": "nvidia.com/gpu-unhealthy", "value": "xid-79", "effect": "NoSchedule"}]
    fleet = _fleet_of(items)
    on = Explainer({}, features=features_for(Target("1.36")))  # DRADeviceTaints: beta, on by default from 1.36
    report = on.explain(claim([exactly(1)]), fleet)
    assert not report.allocatable
    slice_name = items[1]["metadata"]["name"]
    assert (f"gpu-7: taint nvidia.com/gpu-unhealthy=xid-79:NoSchedule from ResourceSlice {slice_name}, not "
            "tolerated") in report.reason
    tolerant = {"name": "gpu", "exactly": {"deviceClassName": "gpu.nvidia.com", "count": 1, "tolerations": [
        {"key": "nvidia.com/gpu-unhealthy", "operator": "Exists", "effect": "NoSchedule"}]}}
    assert on.explain(claim([tolerant]), fleet).allocatable
    off = Explainer({}, features=features_for(Target("1.34")))  # gate off
    assert off.explain(claim([exactly(1)]), fleet).allocatable


def test_a_dump_whose_kind_is_not_text_is_bad_input_not_a_crash(tmp_path: Path) -> None:
    path = tmp_path / "slices.yaml"
    path.write_text("kind: [List]\nitems: []\n")
    result = gpu_dra("inventory", str(path))
    assert result.returncode == 2 and "internal error" not in result.stderr
    assert str(path) in result.stderr


def test_reading_a_dump_does_not_load_the_stack_models() -> None:
    """pydantic and the stack models cost about 0.3 s at start-up; inventory and explain on files never use them."""
    import subprocess
    import sys

    code = ("import sys; from gpu_dra.cli.main import execute; code = execute(['inventory', sys.argv[1]]); "
            "print('\\nmodels loaded:', 'gpu_dra.core.config.models' in sys.modules, code)")
    result = subprocess.run([sys.executable, "-c", code, str(P5)], cwd=ROOT, capture_output=True, text=True,
                            timeout=60)
    assert result.stdout.strip().endswith("models loaded: False 0"), result.stdout[-300:] + result.stderr


# --------------------------------------------------------------------------------------------- device taint rules

GPU_3 = "device.attributes['resource.kubernetes.io'].pcieRoot == 'pci0000:77'"  # the PCIe root of the p5's gpu-3
MAINTENANCE = {"key": "maintenance", "value": "true", "effect": "NoSchedule"}


def taint_rule(name: str = "gpu-maintenance", selector: dict[str, Any] | None = None,
               taint: dict[str, Any] | None = None, version: str = "v1beta2") -> dict[str, Any]:
    spec: dict[str, Any] = {"taint": taint or MAINTENANCE}
    if selector is not None:
        spec["deviceSelector"] = selector
    return {"apiVersion": f"resource.k8s.io/{version}", "kind": "DeviceTaintRule", "metadata": {"name": name},
            "spec": spec}


GPU_3_RULE = {"driver": "gpu.nvidia.com", "pool": P5_NODE, "device": "gpu-3"}


def _with_rules(*rules: dict[str, Any]) -> inv.Inventory:
    """The real p5 dump and the rules, read as explain reads its files (rules in a kubectl List)."""
    text = yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": [*_p5_items(), *rules]})
    return inv.from_documents("p5-and-rules.yaml", parse_documents(text, "p5-and-rules.yaml"))


def _tainted(explainer: Explainer, fleet: inv.Inventory) -> list[str]:
    """The devices of the fleet, as the explainer hands them to the allocator, that carry a rule's taint."""
    typed = explainer.with_taint_rules(fleet).inventory.slice_members()
    return sorted(device.name for slice_, _ in typed for device in slice_.devices
                  if any(taint.rule for taint in device.taints))


def test_device_taint_rules_are_read_in_both_served_versions_and_the_list_shape() -> None:
    fleet = _with_rules(taint_rule(selector=GPU_3_RULE),
                        taint_rule("old", {"deviceClassName": "gpu.nvidia.com", "selectors": [{"cel": {
                            "expression": GPU_3}}]}, {"key": "k", "effect": "NoExecute"}, version="v1alpha3"))
    new, old = fleet.taint_rules
    assert (new.name, new.source, new.driver, new.pool, new.device) == (
        "gpu-maintenance", "p5-and-rules.yaml", "gpu.nvidia.com", P5_NODE, "gpu-3")
    assert (new.taint.label, new.taint.rule, new.device_class, new.selectors) == (
        "maintenance=true:NoSchedule", "gpu-maintenance", None, ())
    assert (old.taint.label, old.device_class, old.selectors, old.driver) == ("k:NoExecute", "gpu.nvidia.com",
                                                                               (GPU_3,), None)
    assert len(fleet.devices) == 10  # rules are no devices


@pytest.mark.parametrize("spec,message", [
    ("hello", "spec must be a mapping with deviceSelector and taint"),
    ("{deviceSelector: {device: gpu-3}}", "spec.taint must be a mapping with key, value and effect"),
    ("{taint: {effect: NoSchedule}}", "spec.taint.key must be a non-empty string"),
    ("{taint: {key: k, effect: ''}}", "spec.taint.effect must be a non-empty string"),
    ("{taint: {key: k, value: 1, effect: NoSchedule}}", "spec.taint.value must be a string"),
    ("{deviceSelector: [gpu-3], taint: {key: k, effect: NoSchedule}}", "spec.deviceSelector must be a mapping"),
    ("{deviceSelector: {device: [gpu-3]}, taint: {key: k, effect: NoSchedule}}",
     "spec.deviceSelector.device must be a string"),
    ("{deviceSelector: {selectors: [{cel: {}}]}, taint: {key: k, effect: NoSchedule}}",
     "spec.deviceSelector.selectors[0] must be {cel: {expression: string}}"),
])
def test_a_malformed_device_taint_rule_names_the_rule_and_the_key(spec: str, message: str) -> None:
    text = f"apiVersion: resource.k8s.io/v1beta2\nkind: DeviceTaintRule\nmetadata: {{name: drain}}\nspec: {spec}\n"
    with pytest.raises(inv.InventoryError) as error:
        inv.from_documents("rules.yaml", parse_documents(text, "rules.yaml"))
    assert str(error.value) == f"rules.yaml: DeviceTaintRule drain: {message}"


def test_the_taint_rule_gate_per_version_and_platform() -> None:
    """DRADeviceTaints before 1.35 (when rules also select by class and CEL), DRADeviceTaintRules from 1.35: alpha,
    then beta off by default in 1.36, on in 1.37; an existing cluster declares its own."""
    def rules(version: str, platform: Platform = Platform.eks, declared: dict[str, bool] | None = None
              ) -> tuple[bool, bool]:
        features = features_for(Target(version, platform, declared or {}))
        return features.device_taint_rules, features.taint_rule_selectors

    assert [rules(v) for v in ("1.34", "1.35", "1.36", "1.37")] == [(False, False)] * 3 + [(True, False)]
    assert rules("1.34", Platform.existing, {"DRADeviceTaints": True}) == (True, True)
    assert rules("1.36", Platform.existing, {"DRADeviceTaintRules": True}) == (True, False)
    assert rules("1.36", Platform.eks, {"DRADeviceTaintRules": True}) == (False, False)  # EKS runs the defaults


def test_a_device_taint_rule_keeps_a_request_off_its_device_where_the_scheduler_applies_it() -> None:
    fleet = _with_rules(taint_rule(selector=GPU_3_RULE))
    wants_gpu_3 = claim([exactly(1, (GPU_3,))])
    tolerant = claim([{"name": "gpu", "exactly": {"deviceClassName": "gpu.nvidia.com", "selectors": [
        {"cel": {"expression": GPU_3}}], "tolerations": [{"key": "maintenance", "operator": "Exists"}]}}])
    for features in (features_for(Target("1.37")),
                     features_for(Target("1.36", Platform.existing, {"DRADeviceTaintRules": True}))):
        explainer = Explainer({}, features=features)
        seen = explainer.with_taint_rules(fleet)
        assert [(rule.name, [d.name for d in devices]) for rule, devices in seen.rules] == [
            ("gpu-maintenance", ["gpu-3"])]
        report = explainer.explain(wants_gpu_3, seen.inventory)
        assert not report.allocatable
        assert report.reason == (f"request gpu needs 1 device(s); on {P5_NODE} 0 of its 1 matching device(s) are free: "
                                 "gpu-3: taint maintenance=true:NoSchedule from DeviceTaintRule gpu-maintenance, not "
                                 "tolerated")
        assert report.as_dict()["reason"] == report.reason
        allowed = explainer.explain(tolerant, seen.inventory)
        assert allowed.solution is not None and [d.name for d in allowed.solution[1][0].devices] == ["gpu-3"]
        assert explainer.explain(claim([exactly(8)]), seen.inventory).reason.endswith("not tolerated")
    for version in ("1.34", "1.36"):  # DRADeviceTaints, DRADeviceTaintRules off by default on EKS
        explainer = Explainer({}, features=features_for(Target(version)))
        seen = explainer.with_taint_rules(fleet)
        assert not seen.applied and seen.inventory is fleet
        assert explainer.explain(wants_gpu_3, seen.inventory).allocatable


@pytest.mark.parametrize("selector,tainted", [
    (None, [f"gpu-{i}" for i in range(8)] + ["channel-0", "daemon-0"]),  # as the tracker applies it: to all
    ({}, [f"gpu-{i}" for i in range(8)] + ["channel-0", "daemon-0"]),
    ({"driver": "gpu.nvidia.com"}, [f"gpu-{i}" for i in range(8)]),
    ({"pool": P5_NODE, "device": "daemon-0"}, ["daemon-0"]),
    ({"driver": "gpu.nvidia.com", "device": "daemon-0"}, []),
    ({"pool": "another-node"}, []),
])
def test_a_rule_taints_the_devices_its_driver_pool_and_device_select(selector: dict[str, Any] | None,
                                                                      tainted: list[str]) -> None:
    fleet = _with_rules(taint_rule(selector=selector))
    assert _tainted(Explainer({}, features=features_for(Target("1.37"))), fleet) == sorted(tainted)


def test_a_rule_with_the_none_effect_only_informs() -> None:
    """1.35 added the None effect: the taint is on the device, and keeps no request off it."""
    fleet = _with_rules(taint_rule(selector=GPU_3_RULE, taint={"key": "firmware", "effect": "None"}))
    explainer = Explainer({}, features=features_for(Target("1.37")))
    assert _tainted(explainer, fleet) == ["gpu-3"]
    assert explainer.explain(claim([exactly(1, (GPU_3,))]), explainer.with_taint_rules(fleet).inventory).allocatable


def test_a_1_34_rule_selects_by_class_and_cel_where_the_scheduler_evaluates_them() -> None:
    """1.34's tracker (DRADeviceTaints on) evaluates the class's selectors, then the rule's; a runtime error leaves
    the device untainted, which explain says."""
    features = features_for(Target("1.34", Platform.existing, {"DRADeviceTaints": True}))
    by_cel = taint_rule(selector={"deviceClassName": "gpu.nvidia.com", "selectors": [{"cel": {"expression": GPU_3}}]},
                        version="v1alpha3")
    assert _tainted(Explainer({}, features=features), _with_rules(by_cel)) == ["gpu-3"]
    by_class = taint_rule(selector={"deviceClassName": "gpu.nvidia.com"}, version="v1alpha3")
    assert _tainted(Explainer({}, features=features), _with_rules(by_class)) == [f"gpu-{i}" for i in range(8)]
    erring = taint_rule(selector={"selectors": [{"cel": {
        "expression": "device.attributes['gpu.nvidia.com'].productName.startsWith('NVIDIA')"}}]}, version="v1alpha3")
    seen = Explainer({}, features=features).with_taint_rules(_with_rules(erring))
    assert [[d.name for d in devices] for _, devices in seen.rules] == [[f"gpu-{i}" for i in range(8)]]
    assert [note.split(": CEL")[0] for note in seen.notes] == [
        f"p5-and-rules.yaml: DeviceTaintRule gpu-maintenance: selector #0 on device compute-domain.nvidia.com/"
        f"{P5_NODE}/{name}" for name in ("channel-0", "daemon-0")]
    assert all(note.endswith("the scheduler leaves that device untainted") for note in seen.notes)


@pytest.mark.parametrize("features,selector,message", [
    (features_for(Target("1.37")), {"deviceClassName": "gpu.nvidia.com"},
     "spec.deviceSelector.deviceClassName: only Kubernetes 1.33-1.34 (resource.k8s.io/v1alpha3) select devices so"),
    (features_for(Target("1.36", Platform.existing, {"DRADeviceTaintRules": True})),
     {"selectors": [{"cel": {"expression": GPU_3}}]},
     "spec.deviceSelector.selectors: only Kubernetes 1.33-1.34"),
    (features_for(Target("1.34", Platform.existing, {"DRADeviceTaints": True})), {"deviceClassName": "gpu-b200"},
     "spec.deviceSelector.deviceClassName: DeviceClass gpu-b200 is not in the inputs"),
    (features_for(Target("1.34", Platform.existing, {"DRADeviceTaints": True})),
     {"selectors": [{"cel": {"expression": "device."}}]},
     "spec.deviceSelector.selectors[0]: CEL compile error"),
])
def test_a_rule_explain_cannot_apply_as_the_scheduler_would_is_refused(features: Any, selector: dict[str, Any],
                                                                        message: str) -> None:
    fleet = _with_rules(taint_rule(selector=selector, version="v1alpha3"))
    with pytest.raises(TaintRuleError) as error:
        Explainer({}, features=features).with_taint_rules(fleet)
    assert str(error.value).startswith(f"p5-and-rules.yaml: DeviceTaintRule gpu-maintenance: {message}")


# --------------------------------------------------------------------------------------------- binding conditions

BINDING = ROOT / "tests" / "data" / "explain" / "h100-80gb-hbm3_eks-p5_binding-conditions.yaml"


def test_the_binding_conditions_slice_is_the_real_p5_slice_with_three_fields_more() -> None:
    (slice_,) = yaml.safe_load_all(BINDING.read_text())
    for device in slice_["spec"]["devices"]:
        assert (device.pop("bindsToNode"), device.pop("bindingConditions"), device.pop("bindingFailureConditions")) == (
            True, ["example.com/fabric-attached"], ["example.com/fabric-attach-failed"])
    assert slice_ == _p5_items()[1]


def test_binding_conditions_of_the_devices_chosen_are_reported_not_simulated() -> None:
    report = Explainer({}, features=features_for(Target("1.36"))).explain(claim([exactly(2)]), load(BINDING))
    assert report.allocatable and report.allocation is not None
    assert [(d.device, d.binding_conditions, d.binding_failure_conditions) for d in report.allocation.devices] == [
        (f"gpu-{i}", ("example.com/fabric-attached",), ("example.com/fabric-attach-failed",)) for i in (0, 1)]
    binding = report.as_dict()["binding"]
    assert binding["simulated"] is False and "gpu-dra does not simulate binding conditions" in binding["note"]
    assert [(d["claim"], d["device"], d["conditions"], d["failure_conditions"]) for d in binding["devices"]] == [
        ("default/test", f"gpu-{i}", ["example.com/fabric-attached"], ["example.com/fabric-attach-failed"])
        for i in (0, 1)]
    assert Explainer({}, features=features_for(Target("1.36"))).explain(claim([exactly(2)]), load(P5)).as_dict()[
        "binding"] is None


def test_a_device_with_binding_conditions_is_not_allocatable_with_the_gate_off() -> None:
    report = Explainer({}, features=features_for(Target("1.34"))).explain(claim([exactly(1)]), load(BINDING))
    assert not report.allocatable and report.allocation is None
    assert report.reason.startswith(f"request gpu needs 1 device(s); on {P5_NODE} 0 of its 8 matching device(s) are "
                                    "free: gpu-0, gpu-1, gpu-2, gpu-3, gpu-4, gpu-5, gpu-6, gpu-7: has binding "
                                    "conditions (example.com/fabric-attached), which DRADeviceBindingConditions (off) "
                                    "must allow")
    status_off = features_for(Target("1.36", Platform.existing, {"DRAResourceClaimDeviceStatus": False}))
    assert "which DRAResourceClaimDeviceStatus (off) must allow" in Explainer({}, features=status_off).explain(
        claim([exactly(1)]), load(BINDING)).reason

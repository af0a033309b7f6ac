"""DRA objects parsed once into typed values, the same whatever API version they were read in."""

from __future__ import annotations

import copy
from typing import Any

import pytest
import yaml

from gpu_dra.core.dra.claims import (
    AllocatedDevice,
    DeviceConstraint,
    DeviceToleration,
    RequestChoice,
    parse_claim,
    parse_device_class,
)
from gpu_dra.core.dra.objects import ObjectError
from gpu_dra.core.dra.slices import (
    CapacityRange,
    CapacityRequestPolicy,
    CounterConsumption,
    DeviceTaint,
    NodeSelection,
    parse_slice,
)
from gpu_dra.core.yamlsource import parse_documents

from .test_explain import P5

REAL = yaml.safe_load(P5.read_text())["items"]
GPU_SLICE = next(s for s in REAL if s["spec"]["driver"] == "gpu.nvidia.com")


def as_v1beta1(slice_: dict[str, Any]) -> dict[str, Any]:
    """The same slice as resource.k8s.io/v1beta1 writes it: device fields under `basic`."""
    old = copy.deepcopy(slice_)
    old["apiVersion"] = "resource.k8s.io/v1beta1"
    old["spec"]["devices"] = [{"name": d["name"], "basic": {k: v for k, v in d.items() if k != "name"}}
                              for d in old["spec"]["devices"]]
    return old


def test_the_real_p5_slice() -> None:
    parsed = parse_slice(GPU_SLICE, "p5.yaml")
    assert parsed.driver == "gpu.nvidia.com" and len(parsed.devices) == 8
    assert parsed.pool.name == GPU_SLICE["spec"]["nodeName"] and parsed.pool.generation == 1
    assert parsed.pool.slice_count == 1
    assert parsed.node_selection == NodeSelection(node_name=GPU_SLICE["spec"]["nodeName"])
    assert parsed.devices[0].capacity == {"memory": "81559Mi"}
    assert parsed.devices[0].attributes["productName"] == {"string": "NVIDIA H100 80GB HBM3"}


def test_v1beta1_reads_the_same_as_v1() -> None:
    assert parse_slice(as_v1beta1(GPU_SLICE), "p5.yaml") == parse_slice(GPU_SLICE, "p5.yaml")


PARTITIONABLE = {
    "apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": "mig"},
    "spec": {"driver": "gpu.nvidia.com", "pool": {"name": "n1", "generation": 3, "resourceSliceCount": 2},
             "perDeviceNodeSelection": True,
             "sharedCounters": [{"name": "gpu-0-counter-set",
                                 "counters": {"memory": {"value": "80Gi"}, "memory-slice-0": {"value": "1"}}}],
             "devices": [{"name": "gpu-0-mig-1g10gb-19-0", "nodeName": "n1",
                          "attributes": {"type": {"string": "mig"}}, "capacity": {"memory": {"value": "9856Mi"}},
                          "consumesCounters": [{"counterSet": "gpu-0-counter-set",
                                                "counters": {"memory": {"value": "10Gi"},
                                                             "memory-slice-0": {"value": "1"}}}],
                          "taints": [{"key": "example.com/unhealthy", "value": "ecc", "effect": "NoSchedule"}]}]},
}


def test_partitionable_devices_counters_taints_and_per_device_nodes() -> None:
    parsed = parse_slice(PARTITIONABLE, "mig.yaml")
    assert parsed.pool.generation == 3 and parsed.pool.slice_count == 2
    assert parsed.node_selection is None  # per device
    assert parsed.shared_counters == {"gpu-0-counter-set": {"memory": "80Gi", "memory-slice-0": "1"}}
    (device,) = parsed.devices
    assert device.consumes_counters == (CounterConsumption("gpu-0-counter-set", {"memory": "10Gi",
                                                                                 "memory-slice-0": "1"}),)
    assert device.taints == (DeviceTaint("example.com/unhealthy", "ecc", "NoSchedule"),)
    assert device.node_selection == NodeSelection(node_name="n1")
    assert parsed.per_device_node_selection and not parse_slice(GPU_SLICE, "p5.yaml").per_device_node_selection


SHARED_AND_BOUND = {
    "apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": "mps"},
    "spec": {"driver": "gpu.nvidia.com", "pool": {"name": "n1"}, "nodeName": "n1", "devices": [
        {"name": "gpu-0", "allowMultipleAllocations": True,
         "capacity": {"memory": {"value": "80Gi", "requestPolicy": {
             "default": "10Gi", "validRange": {"min": "10Gi", "max": "80Gi", "step": "10Gi"}}},
                      "cores": {"value": "132", "requestPolicy": {"validValues": ["33", "66", "132"]}},
                      "uuid": {"value": "1"}}},
        {"name": "fabric-0", "bindsToNode": True, "bindingConditions": ["FabricAttached"],
         "bindingFailureConditions": ["FabricFailed"]}]},
}


def test_capacity_request_policies_and_binding_conditions_in_v1_and_v1beta1() -> None:
    parsed = parse_slice(SHARED_AND_BOUND, "mps.yaml")
    assert parse_slice(as_v1beta1(SHARED_AND_BOUND), "mps.yaml") == parsed
    gpu, fabric = parsed.devices
    assert gpu.capacity == {"memory": "80Gi", "cores": "132", "uuid": "1"}
    assert gpu.request_policies == {
        "memory": CapacityRequestPolicy("10Gi", CapacityRange("10Gi", "80Gi", "10Gi")),
        "cores": CapacityRequestPolicy(valid_values=("33", "66", "132"))}
    assert (gpu.binding_conditions, gpu.binds_to_node) == ((), False)
    assert (fabric.binding_conditions, fabric.binding_failure_conditions) == (("FabricAttached",), ("FabricFailed",))
    assert fabric.binds_to_node and fabric.request_policies == {}


def test_node_selector_and_all_nodes_slices() -> None:
    selector = {"nodeSelectorTerms": [{"matchExpressions": [{"key": "nvidia.com/gpu.clique", "operator": "Exists"}]}]}
    by_selector = {"metadata": {"name": "cd"}, "spec": {"driver": "compute-domain.nvidia.com", "pool": {"name": "cd"},
                                                        "nodeSelector": selector, "devices": []}}
    everywhere = {"metadata": {"name": "net"}, "spec": {"driver": "net.example.com", "pool": {"name": "net"},
                                                        "allNodes": True, "devices": []}}
    assert parse_slice(by_selector, "s.yaml").node_selection == NodeSelection(node_selector=selector)
    assert parse_slice(everywhere, "s.yaml").node_selection == NodeSelection(all_nodes=True)


@pytest.mark.parametrize("spec,message", [
    ("hello", "ResourceSlice s: spec must be a mapping"),
    ({"driver": "d", "devices": "gpu-0"}, "ResourceSlice s: spec.devices must be a list"),
    ({"driver": "d", "devices": [{"name": "g", "attributes": {"x": "y"}}]}, "spec.devices[0] must be a device"),
    ({"driver": "d", "pool": {"name": "p", "generation": "new"}}, "spec.pool.generation and resourceSliceCount"),
    ({"driver": "d", "devices": [{"name": "g", "taints": "bad"}]}, "spec.devices[0].taints must be a list"),
    ({"driver": "d", "sharedCounters": [{"name": "c", "counters": []}]}, "spec.sharedCounters[0].counters must be"),
    ({"driver": "d", "devices": [{"name": "g", "capacity": {"m": {"value": "1", "requestPolicy": "any"}}}]},
     "spec.devices[0].capacity.m.requestPolicy must be a mapping"),
    ({"driver": "d", "devices": [{"name": "g", "bindingConditions": "Ready"}]},
     "spec.devices[0].bindingConditions must be a list"),
])
def test_malformed_slices_name_the_slice_and_the_field(spec: Any, message: str) -> None:
    with pytest.raises(ObjectError, match=message.replace("[", r"\[").replace("]", r"\]")):
        parse_slice({"metadata": {"name": "s"}, "spec": spec}, "s.yaml")


V1_TEMPLATE = {
    "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
    "metadata": {"name": "pair", "namespace": "ml"},
    "spec": {"spec": {"devices": {
        "requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu.nvidia.com", "count": 2,
                                                 "selectors": [{"cel": {"expression": "device.driver != ''"}}]}},
                     {"name": "any", "firstAvailable": [{"name": "big", "deviceClassName": "gpu-h100"},
                                                        {"name": "small", "deviceClassName": "gpu-l4",
                                                         "allocationMode": "All"}]}],
        "constraints": [{"requests": ["gpu"], "matchAttribute": "resource.kubernetes.io/pcieRoot"}]}}},
}


def test_a_claim_template_in_the_v1_shape() -> None:
    claim = parse_claim(V1_TEMPLATE)
    assert claim is not None and claim.name == "ml/pair" and claim.problem is None
    gpu, any_of = claim.requests
    assert gpu.choices == (RequestChoice("", "gpu.nvidia.com", ("device.driver != ''",), "ExactCount", 2),)
    assert [(c.subrequest, c.device_class, c.allocation_mode) for c in any_of.choices] == [
        ("big", "gpu-h100", "ExactCount"), ("small", "gpu-l4", "All")]
    assert claim.constraints == (DeviceConstraint(("gpu",), "resource.kubernetes.io/pcieRoot"),)


def test_v1beta1_claims_read_as_v1_and_misplaced_v1_fields_are_the_claims_problem() -> None:
    old = copy.deepcopy(V1_TEMPLATE)
    old["apiVersion"] = "resource.k8s.io/v1beta1"
    request = old["spec"]["spec"]["devices"]["requests"][0]
    request.update(request.pop("exactly"))
    assert parse_claim(old) == parse_claim(V1_TEMPLATE)
    wrong = {**old, "apiVersion": "resource.k8s.io/v1"}
    problem = parse_claim(wrong).problem  # type: ignore[union-attr]
    assert problem is not None and "deviceClassName, count, selectors sit on the request" in problem


def test_a_live_claims_allocation() -> None:
    live = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {"name": "c", "namespace": "n"},
            "spec": {"devices": {"requests": []}},
            "status": {"allocation": {"devices": {"results": [
                {"request": "gpu", "driver": "gpu.nvidia.com", "pool": "node-1", "device": "gpu-0"},
                {"request": "watch", "driver": "gpu.nvidia.com", "pool": "node-1", "device": "gpu-1",
                 "adminAccess": True}]}}}}
    claim = parse_claim(live)
    assert claim is not None and claim.allocated == (AllocatedDevice("gpu.nvidia.com", "node-1", "gpu-0"),
                                                     AllocatedDevice("gpu.nvidia.com", "node-1", "gpu-1", True))
    live["status"]["allocation"]["devices"]["results"] = [
        {"request": "gpu", "driver": "gpu.nvidia.com", "pool": "node-1", "device": "gpu-2",
         "shareID": "0c6f7a9e-5a4b-4f0e-9d59-1d0f3f0e9b11", "consumedCapacity": {"memory": "20Gi"}}]
    shared = parse_claim(live)
    assert shared is not None and shared.allocated == (AllocatedDevice(
        "gpu.nvidia.com", "node-1", "gpu-2", share_id="0c6f7a9e-5a4b-4f0e-9d59-1d0f3f0e9b11",
        consumed_capacity={"memory": "20Gi"}),)
    assert parse_claim({"kind": "DeviceClass"}) is None


TEMPLATE_TEXT = """\
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: pair, namespace: ml}
spec:
  spec:
    devices:
      requests:
      - name: gpu
        exactly:
          deviceClassName: gpu.nvidia.com
          tolerations: [{key: example.com/unhealthy, operator: Exists}]
          selectors:
          - cel: {expression: "device.driver == 'gpu.nvidia.com'"}
          - cel: {expression: "device.attributes['gpu.nvidia.com'].type == 'gpu'"}
      - name: any
        firstAvailable:
        - name: big
          deviceClassName: gpu-h100
          capacity: {requests: {memory: 10Gi}}
          selectors:
          - cel: {expression: "device.capacity['gpu.nvidia.com'].memory.isGreaterThan(quantity('70Gi'))"}
      constraints:
      - {requests: [gpu], distinctAttribute: gpu.nvidia.com/uuid}
      config:
      - opaque: {driver: gpu.nvidia.com, parameters: {kind: GpuConfig, sharing: {strategy: MPS}}}
"""


def _line_of(text: str, needle: str) -> int:
    return next(number for number, line in enumerate(text.splitlines(), 1) if needle in line)


def test_a_templates_elements_carry_the_path_and_line_they_were_written_at() -> None:
    (document,) = parse_documents(TEMPLATE_TEXT, "pair.yaml")
    claim = parse_claim(document.data)
    assert claim is not None and (claim.kind, claim.api_version) == ("ResourceClaimTemplate", "resource.k8s.io/v1")
    gpu, any_of = claim.requests
    assert gpu.path == ("spec", "spec", "devices", "requests", 0) and gpu.fields == {"name", "exactly"}
    (exactly,) = gpu.choices
    assert exactly.path == (*gpu.path, "exactly")
    assert exactly.selector_paths[1] == ("spec", "spec", "devices", "requests", 0, "exactly", "selectors", 1, "cel",
                                         "expression")
    assert [document.line(path) for path in exactly.selector_paths] == [
        _line_of(TEMPLATE_TEXT, "device.driver =="), _line_of(TEMPLATE_TEXT, ".type == 'gpu'")]
    (big,) = any_of.choices
    assert big.path == ("spec", "spec", "devices", "requests", 1, "firstAvailable", 0)
    assert document.line(big.selector_paths[0]) == _line_of(TEMPLATE_TEXT, "isGreaterThan")
    (constraint,) = claim.constraints
    assert document.line((*constraint.path, "distinctAttribute")) == _line_of(TEMPLATE_TEXT, "distinctAttribute")
    (config,) = claim.config
    assert config.path == ("spec", "spec", "devices", "config", 0)
    assert config.driver == "gpu.nvidia.com" and config.parameters["sharing"] == {"strategy": "MPS"}


def test_the_fields_feature_gates_guard_are_kept_per_choice() -> None:
    claim = parse_claim(yaml.safe_load(TEMPLATE_TEXT))
    assert claim is not None
    (exactly,), (big,) = (request.choices for request in claim.requests)
    assert (exactly.has_tolerations, exactly.requests_capacity) == (True, False)
    assert (big.has_tolerations, big.requests_capacity) == (False, True)


SHARING_TEXT = """\
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: share, namespace: ml}
spec:
  devices:
    requests:
    - name: gpu
      exactly:
        deviceClassName: gpu.nvidia.com
        adminAccess: false
        capacity: {requests: {memory: 20Gi}}
        tolerations:
        - {key: nvidia.com/gpu.xid, operator: Equal, value: "79", effect: NoExecute, tolerationSeconds: 300}
        - {operator: Exists}
        selectors:
        - {}
        - cel: {expression: "device.allowMultipleAllocations"}
"""


def test_tolerations_capacity_requests_admin_access_and_unknown_selectors_with_their_paths() -> None:
    """As written, in v1 and in v1beta1 (on the request), each toleration at its line; a selector without `cel`
    is kept by its index so that the allocator can refuse it as upstream does."""
    (document,) = parse_documents(SHARING_TEXT, "share.yaml")
    claim = parse_claim(document.data)
    assert claim is not None
    ((choice,),) = (request.choices for request in claim.requests)
    assert choice.tolerations == (DeviceToleration("nvidia.com/gpu.xid", "Equal", "79", "NoExecute", 300),
                                  DeviceToleration(operator="Exists"))
    assert [document.line(t.path) for t in choice.tolerations] == [
        _line_of(SHARING_TEXT, "tolerationSeconds"), _line_of(SHARING_TEXT, "{operator: Exists}")]
    assert choice.capacity_requests == {"memory": "20Gi"} and choice.requests_capacity and choice.has_tolerations
    assert (choice.written_admin_access, choice.admin_access) == (False, False)
    assert choice.unknown_selectors == (0,) and choice.selectors == ("device.allowMultipleAllocations",)
    assert document.line((*choice.path, "selectors", 0)) == _line_of(SHARING_TEXT, "- {}")
    old = copy.deepcopy(document.data)
    old["apiVersion"] = "resource.k8s.io/v1beta1"
    request = old["spec"]["devices"]["requests"][0]
    request.update(request.pop("exactly"))
    parsed_old = parse_claim(old)
    assert parsed_old == claim
    assert parsed_old is not None and parsed_old.requests[0].choices[0].tolerations[1].path == (
        "spec", "devices", "requests", 0, "tolerations", 1)
    plain = parse_claim(V1_TEMPLATE)
    assert plain is not None and plain.requests[0].choices[0].written_admin_access is None
    assert plain.requests[0].choices[0].capacity_requests is None and not plain.requests[0].choices[0].tolerations


def test_request_fields_on_the_request_keep_the_path_they_were_written_at() -> None:
    """v1beta1 writes them on the request; in a v1 object they are misplaced there. Either way the choice's path is
    the request's, without `exactly`, and the count as written is kept for validation."""
    for api_version in ("resource.k8s.io/v1beta1", "resource.k8s.io/v1"):
        claim = parse_claim({"apiVersion": api_version, "kind": "ResourceClaim", "metadata": {"name": "c"},
                             "spec": {"devices": {"requests": [{"name": "gpu", "deviceClassName": "gpu.nvidia.com",
                                                                "count": 0, "selectors": [
                                                                    {"cel": {"expression": "true"}}]}]}}})
        assert claim is not None
        (request,) = claim.requests
        (choice,) = request.choices
        assert choice.path == request.path == ("spec", "devices", "requests", 0)
        assert choice.selector_paths == (("spec", "devices", "requests", 0, "selectors", 0, "cel", "expression"),)
        assert (choice.count, choice.written_count) == (1, 0)  # the allocator takes one; validation sees the 0
        assert request.fields == {"name", "deviceClassName", "count", "selectors"}


def test_malformed_parts_of_a_claim_are_left_out_with_the_rest_where_written() -> None:
    """The schema check reports what has not the API's shape; the typed claim keeps the rest at its written index."""
    claim = parse_claim({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {"name": "c"},
                         "spec": {"devices": {"requests": ["gpu", {"name": "ok", "exactly": {
                             "deviceClassName": "gpu.nvidia.com", "selectors": ["nope", {"cel": {}},
                                                                              {"cel": {"expression": "true"}}]}}]}}})
    assert claim is not None
    (request,) = claim.requests
    assert request.path == ("spec", "devices", "requests", 1)
    assert request.choices[0].selectors == ("true",)
    assert request.choices[0].selector_paths == (("spec", "devices", "requests", 1, "exactly", "selectors", 2, "cel",
                                                  "expression"),)


@pytest.mark.parametrize("spec,extended", [({}, None), ({"extendedResourceName": None}, ""),
                                           ({"extendedResourceName": "nvidia.com/gpu"}, "nvidia.com/gpu")])
def test_a_device_class_with_its_selectors_and_extended_resource_name(spec: dict[str, Any],
                                                                      extended: str | None) -> None:
    device_class = parse_device_class({"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass",
                                       "metadata": {"name": "gpu-l4"}, "spec": {**spec, "selectors": [
                                           {"cel": {"expression": "device.driver == 'gpu.nvidia.com'"}}]}})
    assert device_class is not None and device_class.name == "gpu-l4"
    assert device_class.selectors == ("device.driver == 'gpu.nvidia.com'",)
    assert device_class.selector_paths == (("spec", "selectors", 0, "cel", "expression"),)
    assert device_class.extended_resource_name == extended
    assert parse_device_class({"kind": "ResourceClaim"}) is None


@pytest.mark.parametrize("count", [0, -1])
def test_a_count_below_one_is_the_claims_problem_not_a_count_of_one(count: int) -> None:
    """The API server rejects `count: -1`; explain must not call such a claim allocatable."""
    bad = copy.deepcopy(V1_TEMPLATE)
    bad["spec"]["spec"]["devices"]["requests"][0]["exactly"]["count"] = count
    claim = parse_claim(bad)
    assert claim is not None and claim.problem is not None
    assert f"count {count} must be greater than zero" in claim.problem
    assert parse_claim(V1_TEMPLATE).problem is None  # type: ignore[union-attr]

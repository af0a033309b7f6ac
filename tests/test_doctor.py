"""`gpu-dra doctor`: the checks on crafted clusters built from the real EKS p5 ResourceSlice dump, one change per case
(that rule and only that rule fires), then the verb through a local API server (tests/fake_apiserver.py)."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from gpu_dra.core.analysis.doctor import RULES, diagnose, normalised
from gpu_dra.core.config.loader import load_stack
from gpu_dra.core.facts.target import Platform, Target
from gpu_dra.core.findings import Finding
from gpu_dra.core.render import manifests

from .conftest import ROOT, Project
from .fake_apiserver import FakeApiServer, Fault
from .test_cli import gpu_dra
from .test_explain import P5

P5_NODE = "ip-100-64-147-149.ec2.internal"  # the node of the dump's slices
GPU_SLICE = "ip-100-64-147-149.ec2.internal-gpu.nvidia.com-bvcfk"
KINDS = ("Node", "ResourceSlice", "DeviceClass", "ResourceClaim", "ResourceClaimTemplate", "ResourceQuota",
         "DeviceTaintRule")
EKS_135 = Target("1.35", Platform.eks)
EKS_136 = Target("1.36", Platform.eks)
STAMP = "2026-03-01T10:00:00Z"


# --------------------------------------------------------------------------------------------- crafted clusters


def node(name: str, labels: dict[str, str], gpus: int = 0, kubelet: str = "v1.35.2-eks-3cfe0ce") -> dict[str, Any]:
    """A Node as the API server returns it: server metadata, status.allocatable (nvidia.com/gpu only where NVIDIA's
    device plugin runs) and status.nodeInfo."""
    allocatable = {"cpu": "191450m", "ephemeral-storage": "95551679124", "memory": "2097927536Ki", "pods": "100"}
    if gpus:
        allocatable["nvidia.com/gpu"] = str(gpus)
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "uid": f"uid-{name}", "resourceVersion": "8799001",
                         "creationTimestamp": STAMP, "labels": {"kubernetes.io/hostname": name, **labels}},
            "spec": {"providerID": f"aws:///us-west-2a/i-0{abs(hash(name)) % 10**16:016d}"},
            "status": {"allocatable": allocatable, "capacity": dict(allocatable),
                       "nodeInfo": {"kubeletVersion": kubelet, "kubeProxyVersion": kubelet, "architecture": "amd64",
                                    "containerRuntimeVersion": "containerd://2.1.4", "operatingSystem": "linux",
                                    "osImage": "Amazon Linux 2023.9.20251208"}}}


def p5_node(**changes: Any) -> dict[str, Any]:
    labels = {"gpu-dra.io/allocation": "dra", "nvidia.com/gpu.present": "true",
              "node.kubernetes.io/instance-type": "p5.48xlarge"}
    return node(P5_NODE, {**labels, **changes.pop("labels", {})}, **changes)


def p5_slices() -> list[dict[str, Any]]:
    return yaml.safe_load(P5.read_text())["items"]


def chart_class(name: str, selector: str, **spec: Any) -> dict[str, Any]:
    """A class of NVIDIA's chart, as stored: Helm's labels, not gpu-dra's."""
    return {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass",
            "metadata": {"name": name, "uid": f"uid-{name}", "resourceVersion": "7001", "creationTimestamp": STAMP,
                         "labels": {"app.kubernetes.io/managed-by": "Helm"}},
            "spec": {"selectors": [{"cel": {"expression": selector}}], **spec}}


def healthy() -> list[dict[str, Any]]:
    """A p5 DRA node with its slices, a system node, a device-plugin node, the chart's classes, a claim."""
    claim = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
             "metadata": {"name": "train-0-gpu", "namespace": "ml-training", "uid": "uid-claim",
                          "resourceVersion": "9001"},
             "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu.nvidia.com",
                                                                          "allocationMode": "ExactCount",
                                                                          "count": 1}}]}},
             "status": {"allocation": {"devices": {"results": [
                 {"request": "gpu", "driver": "gpu.nvidia.com", "pool": P5_NODE, "device": "gpu-0"}]}}}}
    return [p5_node(),
            node("ip-10-0-1-10.ec2.internal", {"gpu-dra.io/role": "system",
                                               "node.kubernetes.io/instance-type": "m7i.xlarge"}),
            node("ip-10-0-2-20.ec2.internal", {"gpu-dra.io/allocation": "device-plugin",
                                               "nvidia.com/gpu.present": "true",
                                               "node.kubernetes.io/instance-type": "g6.xlarge"}, gpus=1),
            *p5_slices(),
            chart_class("gpu.nvidia.com", "device.driver == 'gpu.nvidia.com' && "
                                          "device.attributes['gpu.nvidia.com'].type == 'gpu'"),
            chart_class("mig.nvidia.com", "device.driver == 'gpu.nvidia.com' && "
                                          "device.attributes['gpu.nvidia.com'].type == 'mig'"),
            claim]


def findings(objects: list[dict[str, Any]], target: Target = EKS_135,
             rendered: list[dict[str, Any]] | None = None) -> list[Finding]:
    return diagnose([("cluster", objects)], target, KINDS, rendered, "dev").findings


def rules(objects: list[dict[str, Any]], target: Target = EKS_135,
          rendered: list[dict[str, Any]] | None = None) -> list[str]:
    return [f.rule for f in findings(objects, target, rendered)]


def named(objects: list[dict[str, Any]], kind: str, name: str) -> dict[str, Any]:
    return next(o for o in objects if o["kind"] == kind and o["metadata"]["name"] == name)


def gpu_slice(objects: list[dict[str, Any]]) -> dict[str, Any]:
    return named(objects, "ResourceSlice", GPU_SLICE)


def taint(obj: dict[str, Any], devices: list[str], effect: str = "NoSchedule") -> None:
    for device in obj["spec"]["devices"]:
        if device["name"] in devices:
            device["taints"] = [{"key": "gpu.nvidia.com/xid", "value": "79", "effect": effect,
                                 "timeAdded": STAMP}]


def stack_render(root: Path = ROOT, stack: str = "dev") -> list[dict[str, Any]]:
    """What the stack applies of the kinds doctor compares (as commands/doctor.py renders it)."""
    loaded = load_stack(root, stack)
    objects = manifests.stack_device_classes(loaded)
    objects += [manifests.claim_template(team, t) for team in loaded.teams for t in team.claim_templates]
    objects += [q for team in loaded.teams if (q := manifests.resource_quota(team)) is not None]
    return objects


def served(obj: dict[str, Any], index: int = 0, extended_resources: bool = False) -> dict[str, Any]:
    """`obj` as the API server stores and returns it once applied: the metadata it sets, request defaults
    (kubernetes/api@v0.35.0 resource/v1/types.go: allocationMode ExactCount, count 1, toleration operator Equal),
    a template's spec.metadata written even when empty, a quota's status, and DeviceClass spec.extendedResourceName
    dropped while DRAExtendedResource is off."""
    out = copy.deepcopy(obj)
    meta = out["metadata"]
    meta.update(uid=f"0b8a{index:04d}-1c2d-4e5f-8a9b-0c1d2e3f4a5b", resourceVersion=str(8_800_000 + index),
                creationTimestamp=STAMP, generation=1,
                managedFields=[{"manager": "pulumi-kubernetes-5f8d1c2", "operation": "Apply",
                                "apiVersion": obj["apiVersion"], "time": STAMP, "fieldsType": "FieldsV1",
                                "fieldsV1": {"f:spec": {}}}])
    if obj["kind"] == "ResourceClaimTemplate":
        out["spec"] = {"metadata": {"creationTimestamp": None}, **out["spec"]}
        for request in out["spec"]["spec"]["devices"]["requests"]:
            for choice in [request["exactly"]] if "exactly" in request else request["firstAvailable"]:
                choice.setdefault("allocationMode", "ExactCount")
                if choice["allocationMode"] == "ExactCount":
                    choice.setdefault("count", 1)
                for toleration in choice.get("tolerations", []):
                    toleration.setdefault("operator", "Equal")
    if obj["kind"] == "DeviceClass" and not extended_resources:
        out["spec"].pop("extendedResourceName", None)
    if obj["kind"] == "ResourceQuota":
        out["status"] = {"hard": dict(out["spec"]["hard"]), "used": {k: "0" for k in out["spec"]["hard"]}}
    return out


def applied(render: list[dict[str, Any]], extended_resources: bool = False) -> list[dict[str, Any]]:
    return [served(obj, i, extended_resources) for i, obj in enumerate(render)]


# --------------------------------------------------------------------------------------------- the core


def test_a_healthy_cluster_has_no_findings() -> None:
    assert findings(healthy()) == []
    assert findings(healthy(), EKS_136) == []


def _drop_gpu_slice(objects: list[dict[str, Any]]) -> None:
    objects.remove(gpu_slice(objects))


def _p5_node(**changes: Any) -> Callable[[list[dict[str, Any]]], None]:
    def change(objects: list[dict[str, Any]]) -> None:
        objects[objects.index(named(objects, "Node", P5_NODE))] = p5_node(**changes)
    return change


def _stale(objects: list[dict[str, Any]]) -> None:
    stale = copy.deepcopy(gpu_slice(objects))
    stale["metadata"]["name"] = "ip-10-0-9-9.ec2.internal-gpu.nvidia.com-x7k2p"
    stale["spec"]["nodeName"] = stale["spec"]["pool"]["name"] = "ip-10-0-9-9.ec2.internal"
    objects.append(stale)


def _older_generation(objects: list[dict[str, Any]]) -> None:
    older = copy.deepcopy(gpu_slice(objects))
    older["metadata"]["name"] = "ip-100-64-147-149.ec2.internal-gpu.nvidia.com-old01"
    older["spec"]["pool"]["generation"] = 0
    objects.append(older)


def _incomplete(objects: list[dict[str, Any]]) -> None:
    gpu_slice(objects)["spec"]["pool"]["resourceSliceCount"] = 2


def _extended_resource(objects: list[dict[str, Any]]) -> None:
    named(objects, "DeviceClass", "gpu.nvidia.com")["spec"]["extendedResourceName"] = "nvidia.com/gpu"


@pytest.mark.parametrize(("change", "target", "expected"), [
    (_drop_gpu_slice, EKS_135, "gpu-node-without-slices"),
    (_p5_node(kubelet="v1.34.1-eks-3cfe0ce"), EKS_135, "kubelet-dra-regression"),
    (_p5_node(gpus=8), EKS_135, "double-allocation-risk"),
    (_extended_resource, EKS_135, "extended-resource-dropped"),
    (_stale, EKS_135, "stale-slices"),
    (_older_generation, EKS_135, "pool-generations"),
    (_incomplete, EKS_135, "pool-incomplete"),
    (lambda objects: taint(gpu_slice(objects), ["gpu-6", "gpu-7"]), EKS_136, "devices-tainted"),
], ids=lambda value: value if isinstance(value, str) else None)
def test_one_change_fires_its_rule_alone(change: Callable[[list[dict[str, Any]]], None], target: Target,
                                         expected: str) -> None:
    objects = healthy()
    change(objects)
    assert rules(objects, target) == [expected]


def test_a_gpu_node_without_slices_is_named_and_its_regressed_kubelet_cited() -> None:
    objects = healthy()
    _drop_gpu_slice(objects)  # the compute-domain slice stays: another driver's slice does not count
    _p5_node(kubelet="v1.34.1-eks-3cfe0ce")(objects)
    found, = findings(objects)
    assert (found.rule, found.severity, found.object) == ("gpu-node-without-slices", "error", f"Node {P5_NODE}")
    assert "publishes no ResourceSlice of driver gpu.nvidia.com" in found.message
    assert "kubernetes/kubernetes#133920" in found.message and "1.34.2" in found.message
    _p5_node(kubelet="v1.34.2-eks-3cfe0ce")(objects)
    found, = findings(objects)
    assert "133920" not in found.message
    objects.append(node("ip-10-0-1-11.ec2.internal", {"gpu-dra.io/role": "system"}, kubelet="v1.34.0-eks-1"))
    assert [f.object for f in findings(objects)] == [f"Node {P5_NODE}"]  # not a GPU node: its kubelet is no matter


def test_without_the_allocation_label_gpu_nodes_are_found_by_their_gpus() -> None:
    """No node labelled gpu-dra.io/allocation=dra: nodes with NVIDIA GPUs (gpu.present, or a GPU instance type)
    that no device plugin serves are the DRA nodes."""
    objects = [o for o in healthy() if o["kind"] != "Node"]
    objects += [node(P5_NODE, {"nvidia.com/gpu.present": "true"}),
                node("ip-10-0-4-4.ec2.internal", {"node.kubernetes.io/instance-type": "p4d.24xlarge"}),
                node("ip-10-0-5-5.ec2.internal", {"nvidia.com/gpu.present": "true"}),
                node("ip-10-0-1-10.ec2.internal", {"node.kubernetes.io/instance-type": "m7i.xlarge"}),
                node("ip-10-0-2-20.ec2.internal", {"nvidia.com/gpu.present": "true",
                                                   "node.kubernetes.io/instance-type": "g6.xlarge"}, gpus=1),
                node("ip-10-0-2-21.ec2.internal", {"gpu-dra.io/allocation": "device-plugin",
                                                   "node.kubernetes.io/instance-type": "g6.xlarge"})]
    by_type, by_label = findings(objects)
    assert [(f.rule, f.object) for f in (by_type, by_label)] == [
        ("gpu-node-without-slices", "Node ip-10-0-4-4.ec2.internal"),
        ("gpu-node-without-slices", "Node ip-10-0-5-5.ec2.internal")]
    assert "p4d.24xlarge: 8 x NVIDIA A100-SXM4-40GB" in by_type.message
    assert "label nvidia.com/gpu.present=true" in by_label.message


def test_double_allocation_names_the_node_and_what_each_side_offers() -> None:
    objects = healthy()
    _p5_node(gpus=8)(objects)
    found, = findings(objects)
    assert (found.severity, found.object) == ("error", f"Node {P5_NODE}")
    assert "offers 8 nvidia.com/gpu" in found.message and "the DRA driver 8 device(s)" in found.message


def test_an_incomplete_pool_says_what_the_versions_scheduler_does() -> None:
    """kubernetes/dynamic-resource-allocation@v0.34.9 allocates ExactCount requests from incomplete pools, @v0.35.0
    from none (structured/internal/stable/allocator_stable.go)."""
    objects = healthy()
    _incomplete(objects)
    found, = findings(objects, EKS_135)
    assert "has 1 of its 2 slice(s)" in found.message and "takes none of its devices" in found.message
    found, = findings(objects, Target("1.34", Platform.eks))
    assert "other requests still take its devices" in found.message
    assert found.object == f"ResourceSlice {GPU_SLICE}"


def test_older_generations_name_the_invisible_devices() -> None:
    objects = healthy()
    _older_generation(objects)
    found, = findings(objects)
    assert "the 8 device(s) of 1 older slice(s) (ip-100-64-147-149.ec2.internal-gpu.nvidia.com-old01)" \
        in found.message
    assert found.object == "ResourceSlice ip-100-64-147-149.ec2.internal-gpu.nvidia.com-old01"


def test_stale_slices_need_the_nodes_listed() -> None:
    """Without Nodes in the inputs nothing says a node is gone."""
    objects = healthy()
    _stale(objects)
    without_nodes = diagnose([("dump", objects)], EKS_135, [k for k in KINDS if k != "Node"]).findings
    assert [f.rule for f in without_nodes] == []


def test_extended_resource_name_is_judged_by_the_clusters_gates() -> None:
    """EKS runs upstream defaults: the field does nothing on 1.35 and works on 1.36. An existing cluster whose API
    server stored the field runs the gate (it drops the field otherwise); a manifest proves nothing."""
    objects = healthy()
    _extended_resource(objects)
    assert rules(objects, EKS_136) == []
    assert rules(objects, Target("1.35", Platform.existing)) == []
    declared_off = Target("1.35", Platform.existing, {"DRAExtendedResource": False})
    assert rules(objects, declared_off) == ["extended-resource-dropped"]
    del named(objects, "DeviceClass", "gpu.nvidia.com")["metadata"]["uid"]
    del named(objects, "DeviceClass", "gpu.nvidia.com")["metadata"]["resourceVersion"]
    assert rules(objects, Target("1.35", Platform.existing)) == ["extended-resource-dropped"]


def test_a_dropped_mapping_is_seen_against_the_stack() -> None:
    """The stack maps nvidia.com/gpu-l4 to gpu-l4; the API server of EKS 1.35 dropped the field on apply: one
    finding, extended-resource-dropped, not drift."""
    render = stack_render()
    named(render, "DeviceClass", "gpu-l4")["spec"]["extendedResourceName"] = "nvidia.com/gpu-l4"
    cluster = healthy() + applied(render)
    found, = findings(cluster, EKS_135, render)
    assert (found.rule, found.object) == ("extended-resource-dropped", "DeviceClass gpu-l4")
    assert "nvidia.com/gpu-l4" in found.message and "stay Pending" in found.message


def test_slice_taints_count_where_the_scheduler_reads_them() -> None:
    """DRADeviceTaints: alpha and off on EKS 1.35, beta and on from 1.36; an existing cluster whose API server
    stored slice taints runs it."""
    objects = healthy()
    taint(gpu_slice(objects), ["gpu-6", "gpu-7"], "NoExecute")
    found, = findings(objects, EKS_136)
    assert found.object == f"Node {P5_NODE}"
    assert found.message.startswith("2 device(s) tainted gpu.nvidia.com/xid=79:NoExecute: gpu.nvidia.com/gpu-6, "
                                    "gpu.nvidia.com/gpu-7")
    assert "evicts" in found.message and "no ResourceClaim or ResourceClaimTemplate tolerates it" in found.message
    assert findings(objects, EKS_135) == []
    assert rules(objects, Target("1.35", Platform.existing)) == ["devices-tainted"]
    taint(gpu_slice(objects), ["gpu-5"], "None")  # informational (1.35's effect None): keeps no claim off
    assert rules(objects, EKS_136) == ["devices-tainted"]
    _older_generation(objects)  # a tainted copy the scheduler does not read
    assert [f.message.split(" ", 1)[0] for f in findings(objects, EKS_136) if f.rule == "devices-tainted"] == ["2"]


def test_a_device_taint_rule_counts_where_the_version_applies_rules_and_tolerations_are_named() -> None:
    """DeviceTaintRules: DRADeviceTaintRules is beta and off in 1.36, on in 1.37 (gates.py)."""
    rule = {"apiVersion": "resource.k8s.io/v1beta2", "kind": "DeviceTaintRule",
            "metadata": {"name": "gpu-maintenance", "uid": "uid-rule", "resourceVersion": "9100"},
            "spec": {"deviceSelector": {"driver": "gpu.nvidia.com", "pool": P5_NODE, "device": "gpu-3"},
                     "taint": {"key": "maintenance", "value": "true", "effect": "NoSchedule"}}}
    tolerating = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
                  "metadata": {"name": "burn-in", "namespace": "ops", "uid": "uid-t", "resourceVersion": "9200"},
                  "spec": {"spec": {"devices": {"requests": [{"name": "gpu", "exactly": {
                      "deviceClassName": "gpu.nvidia.com",
                      "tolerations": [{"key": "maintenance", "operator": "Exists"}]}}]}}}}
    objects = [*healthy(), rule]
    assert rules(objects, EKS_136) == []
    found, = findings(objects, Target("1.37", Platform.eks))
    assert found.rule == "devices-tainted" and found.object == f"Node {P5_NODE}"
    assert "1 device(s) tainted maintenance=true:NoSchedule (from DeviceTaintRule gpu-maintenance)" in found.message
    assert "no ResourceClaim or ResourceClaimTemplate tolerates it" in found.message
    found, = findings([*objects, tolerating], Target("1.37", Platform.eks))
    assert "tolerated by ResourceClaimTemplate ops/burn-in" in found.message


def test_a_freshly_applied_stack_shows_no_drift() -> None:
    render = stack_render()
    assert findings(healthy() + applied(render), EKS_135, render) == []


def test_drift_missing_extra_and_changed() -> None:
    render = stack_render()
    cluster = healthy() + applied(render)
    cluster.remove(named(cluster, "ResourceClaimTemplate", "l40s"))
    extra = served(copy.deepcopy(named(render, "DeviceClass", "gpu-l4")), 99)
    extra["metadata"]["name"] = "gpu-t4"
    cluster.append(extra)
    changed = named(cluster, "DeviceClass", "gpu-a100")["spec"]["selectors"][0]["cel"]
    changed["expression"] = changed["expression"].replace("A100", "A100-SXM4-80GB")
    quota = next(o for o in cluster if o["kind"] == "ResourceQuota" and o["metadata"]["namespace"] == "research")
    found = {(f.rule, f.object): f for f in findings(cluster, EKS_135, render)}
    assert set(found) == {("drift-missing", "ResourceClaimTemplate inference/l40s"),
                          ("drift-extra", "DeviceClass gpu-t4"), ("drift-changed", "DeviceClass gpu-a100")}
    diff = found[("drift-changed", "DeviceClass gpu-a100")].message.splitlines()
    assert diff[1:3] == ["--- cluster", "+++ stack"]
    assert any(line.startswith("-") and "A100-SXM4-80GB" in line for line in diff)
    assert any(line.startswith("+") and "matches('A100')" in line for line in diff)
    quota["spec"]["hard"]["count/resourceclaims.resource.k8s.io"] = "7"
    assert ("drift-changed", "ResourceQuota research/gpu-dra-devices") in {
        (f.rule, f.object) for f in findings(cluster, EKS_135, render)}


def test_drift_judges_only_kinds_the_inputs_hold() -> None:
    """A dump without quotas says nothing of the cluster's quotas: not missing, but not judged."""
    render = stack_render()
    cluster = healthy() + [o for o in applied(render) if o["kind"] != "ResourceQuota"]
    diagnosis = diagnose([("dump", cluster)], EKS_135, [k for k in KINDS if k != "ResourceQuota"], render, "dev")
    assert diagnosis.findings == []
    assert "the inputs hold no ResourceQuota objects: drift of the stack's ResourceQuota objects not judged" \
        in diagnosis.notes


def test_drift_compares_as_the_api_server_stores() -> None:
    """Defaults the server writes (allocationMode, count, operator) and quantities in another form are no drift;
    what a user wrote differently is."""
    template = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
                "metadata": {"name": "t", "namespace": "ml"},
                "spec": {"spec": {"devices": {"requests": [
                    {"name": "gpu", "exactly": {"deviceClassName": "gpu-h100",
                                                "tolerations": [{"key": "k", "value": "v"}],
                                                "capacity": {"requests": {"memory": "1Gi"}}}},
                    {"name": "any", "firstAvailable": [{"name": "a", "deviceClassName": "gpu-l4"}]}]}}}}
    quota = {"apiVersion": "v1", "kind": "ResourceQuota", "metadata": {"name": "q", "namespace": "ml"},
             "spec": {"hard": {"count/resourceclaims.resource.k8s.io": "1000m"}}}
    stored = served(template)
    stored["spec"]["spec"]["devices"]["requests"][0]["exactly"]["capacity"]["requests"]["memory"] = "1024Mi"
    stored_quota = served(quota)
    stored_quota["spec"]["hard"]["count/resourceclaims.resource.k8s.io"] = "1"
    assert normalised(stored) == normalised(template)
    assert normalised(stored_quota) == normalised(quota)
    stored["spec"]["spec"]["devices"]["requests"][1]["firstAvailable"][0]["count"] = 2
    assert normalised(stored) != normalised(template)


# --------------------------------------------------------------------------------------------- the verb

PATHS = {"ResourceSlice": "/apis/resource.k8s.io/v1/resourceslices",
         "DeviceClass": "/apis/resource.k8s.io/v1/deviceclasses",
         "ResourceClaim": "/apis/resource.k8s.io/v1/resourceclaims",
         "ResourceClaimTemplate": "/apis/resource.k8s.io/v1/resourceclaimtemplates",
         "Node": "/api/v1/nodes", "ResourceQuota": "/api/v1/resourcequotas",
         "DeviceTaintRule": "/apis/resource.k8s.io/v1beta2/devicetaintrules"}
UPSTREAM_135 = {"major": "1", "minor": "35", "gitVersion": "v1.35.2", "platform": "linux/amd64"}  # not EKS


@pytest.fixture
def fake() -> Iterator[FakeApiServer]:
    """An API server serving every list doctor makes, empty until a test serves objects; read-only."""
    server = FakeApiServer()
    yield from server.serve()
    assert server.requests and all(method == "GET" for method, _, _ in server.requests)


def serve(server: FakeApiServer, objects: list[dict[str, Any]], tmp_path: Path) -> Path:
    """The objects as list requests return them (items without apiVersion or kind); a kubeconfig for the server."""
    server.collections.update({path: [] for kind, path in PATHS.items() if kind != "DeviceTaintRule"})
    for obj in objects:
        item = {k: v for k, v in obj.items() if k not in ("apiVersion", "kind")}
        server.collections.setdefault(PATHS[obj["kind"]], []).append(item)
    return server.kubeconfig(tmp_path / "kubeconfig")


def broken(render: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A cluster where every rule fires: see test_every_rule_fires_on_a_broken_cluster."""
    objects = [o for o in healthy() if not (o["kind"] == "Node" and o["metadata"]["name"] == P5_NODE)]
    objects += [p5_node(gpus=8, kubelet="v1.34.1-eks-3cfe0ce"),
                node("ip-10-0-3-7.ec2.internal", {"gpu-dra.io/allocation": "dra",
                                                  "node.kubernetes.io/instance-type": "p5.48xlarge"})]
    _stale(objects)
    _older_generation(objects)
    taint(gpu_slice(objects), ["gpu-7"])
    shared = copy.deepcopy(gpu_slice(objects))
    shared["metadata"]["name"] = "fabric-gpu.nvidia.com-q9w8e"
    shared["spec"].pop("nodeName")
    shared["spec"]["allNodes"] = True
    shared["spec"]["pool"] = {"name": "fabric", "generation": 3, "resourceSliceCount": 2}
    shared["spec"]["devices"] = shared["spec"]["devices"][:1]
    objects.append(shared)
    cluster = applied(render)
    cluster.remove(named(cluster, "ResourceClaimTemplate", "l40s"))
    changed = named(cluster, "DeviceClass", "gpu-a100")["spec"]["selectors"][0]["cel"]
    changed["expression"] = changed["expression"].replace("A100", "A100-SXM4-80GB")
    extra = served(named(render, "DeviceClass", "gpu-a100"), 99)
    extra["metadata"]["name"] = "gpu-v100"
    return objects + cluster + [extra]


def test_every_rule_fires_on_a_broken_cluster(fake: FakeApiServer, project: Project, tmp_path: Path) -> None:
    """An existing (not EKS) 1.35 cluster: its API server stored slice taints, so it runs DRADeviceTaints; the
    stack maps nvidia.com/gpu-l4, which that server dropped (DRAExtendedResource off)."""
    project.edit_stack("dev", lambda config: config.setdefault("gpu-dra:legacyMappings", []).append(
        {"extendedResourceName": "nvidia.com/gpu-l4", "deviceClass": "gpu-l4"}))
    fake.version = UPSTREAM_135
    kubeconfig = serve(fake, broken(stack_render(project.root)), tmp_path)
    result = gpu_dra("--project-dir", str(project.root), "doctor", "--cluster", "--kubeconfig", str(kubeconfig),
                     "--stack", "dev", "--format", "json")
    assert result.returncode == 1, result.stderr
    found = json.loads(result.stdout)
    assert {f["rule"] for f in found} == set(RULES)
    by_rule = {f["rule"]: f for f in found}
    assert by_rule["extended-resource-dropped"]["object"] == "DeviceClass gpu-l4"
    assert by_rule["gpu-node-without-slices"]["object"] == "Node ip-10-0-3-7.ec2.internal"
    assert by_rule["pool-incomplete"]["object"] == "ResourceSlice fabric-gpu.nvidia.com-q9w8e"
    assert all(set(f) == {"rule", "severity", "object", "message", "fix"} and f["fix"] for f in found)
    text = gpu_dra("--project-dir", str(project.root), "doctor", "--cluster", "--kubeconfig", str(kubeconfig),
                   "--stack", "dev")
    assert text.returncode == 1
    assert (f"error double-allocation-risk Node {P5_NODE}: NVIDIA's device plugin offers 8 nvidia.com/gpu"
            in text.stdout)
    assert "    --- cluster\n    +++ stack\n" in text.stdout  # the diff under its finding line
    assert f"2 error(s), {len(found) - 2} warning(s) (judged as Kubernetes 1.35 (existing), from the API " \
           "server's v1.35.2)" in text.stdout


def test_double_allocation_on_an_eks_cluster(fake: FakeApiServer, tmp_path: Path) -> None:
    objects = healthy()
    _p5_node(gpus=8)(objects)
    kubeconfig = serve(fake, objects, tmp_path)
    result = gpu_dra("doctor", "--cluster", "--kubeconfig", str(kubeconfig))
    assert result.returncode == 1, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].startswith(f"error double-allocation-risk Node {P5_NODE}: NVIDIA's device plugin offers 8 "
                               "nvidia.com/gpu (status.allocatable) and the DRA driver 8 device(s)")
    assert lines[1].startswith("    fix: serve the node by one plugin only")
    assert lines[-1] == "1 error(s), 0 warning(s) (judged as Kubernetes 1.35 (eks), from the API server's " \
                        "v1.35.2-eks-3cfe0ce)"


def test_a_healthy_cluster_holding_the_stack_exits_0(fake: FakeApiServer, tmp_path: Path) -> None:
    kubeconfig = serve(fake, healthy() + applied(stack_render()), tmp_path)
    result = gpu_dra("doctor", "--cluster", "--kubeconfig", str(kubeconfig), "--stack", "dev")
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.endswith("0 error(s), 0 warning(s): DRA looks healthy (judged as Kubernetes 1.35 (eks), "
                                  "from the API server's v1.35.2-eks-3cfe0ce)\n")
    assert {path for _, path, _ in fake.requests} >= set(PATHS.values()) - {PATHS["DeviceTaintRule"]}


def test_warnings_alone_exit_0_and_sarif_names_the_objects(fake: FakeApiServer, tmp_path: Path) -> None:
    objects = healthy()
    _stale(objects)
    kubeconfig = serve(fake, objects, tmp_path)
    result = gpu_dra("doctor", "--cluster", "--kubeconfig", str(kubeconfig), "--format", "sarif")
    assert result.returncode == 0, result.stderr
    sarif = json.loads(result.stdout)
    assert sarif["version"] == "2.1.0"
    run = sarif["runs"][0]
    assert [r["id"] for r in run["tool"]["driver"]["rules"]] == list(RULES)
    result_, = run["results"]
    assert (result_["ruleId"], result_["level"]) == ("stale-slices", "warning")
    obj = "ResourceSlice ip-10-0-9-9.ec2.internal-gpu.nvidia.com-x7k2p"
    assert result_["properties"]["object"] == obj
    assert result_["locations"] == [{"logicalLocations": [{"name": obj.split(" ", 1)[1], "fullyQualifiedName": obj,
                                                           "kind": "resource"}]}]
    assert result_["message"]["text"].startswith(f"{obj}: names node ip-10-0-9-9.ec2.internal, which does not exist")
    assert ". Fix: delete it" in result_["message"]["text"]


def test_a_forbidden_list_is_a_clear_error(fake: FakeApiServer, tmp_path: Path) -> None:
    kubeconfig = serve(fake, healthy(), tmp_path)
    fake.faults["/api/v1/resourcequotas"] = Fault(status=403)
    result = gpu_dra("doctor", "--cluster", "--kubeconfig", str(kubeconfig))
    assert result.returncode == 2
    assert "refused GET /api/v1/resourcequotas: HTTP 403" in result.stderr
    assert "the identity lacks `list` on resourcequotas (the core API group)" in result.stderr
    assert "Traceback" not in result.stderr and result.stdout == ""


def test_a_captured_state_is_judged_as_the_cluster(fake: FakeApiServer, project: Project, tmp_path: Path) -> None:
    """The broken cluster as `kubectl get ... -o yaml` dumps it (a List per kind): the same findings offline."""
    project.edit_stack("dev", lambda config: config.setdefault("gpu-dra:legacyMappings", []).append(
        {"extendedResourceName": "nvidia.com/gpu-l4", "deviceClass": "gpu-l4"}))
    objects = broken(stack_render(project.root))
    fake.version = UPSTREAM_135
    kubeconfig = serve(fake, objects, tmp_path)
    files = []
    for kind in KINDS:
        path = tmp_path / f"{kind.lower()}s.yaml"
        path.write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "List", "metadata": {"resourceVersion": ""},
                                        "items": [o for o in objects if o["kind"] == kind]}))
        files.append(str(path))
    common = ("--project-dir", str(project.root), "doctor", "--stack", "dev", "--format", "json")
    offline = gpu_dra(*common, *files, "--platform", "existing", "--kubernetes-version", "1.35")
    live = gpu_dra(*common, "--cluster", "--kubeconfig", str(kubeconfig))
    assert offline.returncode == live.returncode == 1, offline.stderr + live.stderr
    assert json.loads(offline.stdout) == json.loads(live.stdout)


def test_inputs_are_required_and_checked(tmp_path: Path) -> None:
    result = gpu_dra("doctor")
    assert result.returncode == 2
    assert "doctor needs --cluster or FILEs of a captured state" in result.stderr
    bad = tmp_path / "slices.yaml"
    bad.write_text(yaml.safe_dump({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
                                   "metadata": {"name": "s"}, "spec": "not a mapping"}))
    result = gpu_dra("doctor", str(bad))
    assert result.returncode == 2 and "ResourceSlice s" in result.stderr and "Traceback" not in result.stderr
    result = gpu_dra("doctor", str(bad), "--kubernetes-version", "1.99")
    assert result.returncode == 2 and "known versions 1.33" in result.stderr


def test_help_shows_examples() -> None:
    result = gpu_dra("doctor", "--help")
    assert result.returncode == 0
    assert "examples:\n  gpu-dra doctor --cluster\n" in result.stdout
    assert "--stack" in result.stdout and "--format {text,json,sarif}" in result.stdout


def test_one_node_dumped_alone_does_not_make_other_slices_stale(tmp_path: Path) -> None:
    """`kubectl get node n1 -o yaml` is one Node, not the cluster's list: a slice of another node is not called
    stale from it (and no delete advised). With the Nodes as a List, it is."""
    slices = tmp_path / "slices.yaml"
    slices.write_text(P5.read_text())
    other = node("ip-10-0-3-7.ec2.internal", {"node.kubernetes.io/instance-type": "m7i.2xlarge"})
    alone = tmp_path / "node.yaml"
    alone.write_text(yaml.safe_dump(other))
    single = gpu_dra("doctor", str(alone), str(slices), "--format", "json")
    assert "stale-slices" not in {f["rule"] for f in json.loads(single.stdout)}, single.stdout + single.stderr
    listed = tmp_path / "nodes.yaml"
    listed.write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": [other]}))
    as_list = gpu_dra("doctor", str(listed), str(slices), "--format", "json")
    assert "stale-slices" in {f["rule"] for f in json.loads(as_list.stdout)}


def test_input_with_nothing_to_check_is_bad_input(tmp_path: Path) -> None:
    for text in ("hello\n", "{}\n", "apiVersion: v1\nkind: List\nitems: [1, 2]\n"):
        path = tmp_path / "state.yaml"
        path.write_text(text)
        result = gpu_dra("doctor", str(path))
        assert result.returncode == 2, (text, result.stdout)
        assert "nothing to check" in result.stderr and "looks healthy" not in result.stdout

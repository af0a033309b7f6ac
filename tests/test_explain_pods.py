"""Pods and workloads: all of a pod's claims allocated together on a node the pod may use, on the real p5 dump."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml

from gpu_dra.core.analysis import inventory as inv
from gpu_dra.core.analysis.explain import Explainer
from gpu_dra.core.analysis.features import features_for
from gpu_dra.core.analysis.pods import explain_pods, nodes_from_objects, pods_from_objects
from gpu_dra.core.dra.claims import claims_from_objects, in_use_from_claims
from gpu_dra.core.facts.target import Target
from gpu_dra.core.yamlsource import parse_documents

P5 = Path(__file__).parent / "data" / "resourceslices" / "h100-80gb-hbm3_eks-p5_v25.12.0.yaml"
NODE = "ip-100-64-147-149.ec2.internal"
ONE_GPU = "device.attributes['resource.kubernetes.io'].pcieRoot == 'pci0000:77'"  # gpu-3 on p5


def load() -> inv.Inventory:
    return inv.from_documents(P5.name, parse_documents(P5.read_text(), P5.name))


def template(name: str, count: int = 1, selectors: tuple[str, ...] = ()) -> dict[str, Any]:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
            "metadata": {"name": name, "namespace": "ml"},
            "spec": {"spec": {"devices": {"requests": [{"name": "gpu", "exactly": {
                "deviceClassName": "gpu.nvidia.com", "count": count,
                "selectors": [{"cel": {"expression": s}} for s in selectors]}}]}}}}


def pod_spec(*templates: str, **extra: Any) -> dict[str, Any]:
    return {"containers": [{"name": "main", "image": "trainer"}], **extra,
            "resourceClaims": [{"name": f"c{i}", "resourceClaimTemplateName": t} for i, t in enumerate(templates)]}


def pod(name: str, *templates: str, **extra: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "ml"},
            "spec": pod_spec(*templates, **extra)}


def run(objects: list[dict[str, Any]]) -> list[Any]:
    claims = claims_from_objects(objects)
    nodes = nodes_from_objects(objects) or None
    return explain_pods(pods_from_objects(objects), claims, load(), Explainer({}), in_use_from_claims(claims), nodes)


def test_two_claims_competing_for_one_device_fit_alone_not_together() -> None:
    objects = [template("gpu-3", selectors=(ONE_GPU,)), template("also-gpu-3", selectors=(ONE_GPU,)),
               pod("alone", "gpu-3"), pod("both", "gpu-3", "also-gpu-3")]
    alone, both = run(objects)
    assert alone.allocatable and alone.node == NODE
    assert [d.device for d in alone.claims[0].allocation.devices] == ["gpu-3"]
    assert alone.claims[0].claim == "ml/alone-c0"
    assert not both.allocatable and both.node is None
    assert [c.report.allocatable for c in both.claims] == [True, True]  # each alone fits
    assert "fits alone, but no node it may use has devices for all of them together" in both.reason
    data = both.as_dict()
    assert data["pod"] == "ml/both" and data["allocatable"] is False
    assert [c["alone"]["allocatable"] for c in data["claims"]] == [True, True]
    json.dumps(data)


def test_two_claims_that_fit_together_get_distinct_devices() -> None:
    (report,) = run([template("one"), pod("pair", "one", "one")])
    assert report.allocatable
    assert [[d.device for d in c.allocation.devices] for c in report.claims] == [["gpu-0"], ["gpu-1"]]


def test_workloads_carry_their_pod_template() -> None:
    deployment = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "namespace": "ml"},
                  "spec": {"template": {"spec": pod_spec("one")}}}
    cronjob = {"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": "nightly", "namespace": "ml"},
               "spec": {"jobTemplate": {"spec": {"template": {"spec": pod_spec("eight")}}}}}
    web, nightly = run([template("one"), template("eight", 9), deployment, cronjob])
    assert (web.pod, web.kind, web.allocatable) == ("ml/web", "Deployment", True)
    assert (nightly.pod, nightly.kind, nightly.allocatable) == ("ml/nightly", "CronJob", False)
    assert "needs 9 device(s), but at most 8 match on one node" in nightly.reason


def test_a_missing_template_is_an_error() -> None:
    (report,) = run([pod("lost", "nowhere")])
    assert not report.allocatable
    assert [e.rule for e in report.errors] == ["pod-claim-missing"]
    assert "template ml/nowhere is not in the inputs" in report.reason


def test_node_objects_decide_where_the_pod_may_go() -> None:
    node = {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": NODE, "labels": {"node.kubernetes.io/instance-type": "p5.48xlarge"}},
            "spec": {"taints": [{"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}]}}
    toleration = [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}]
    untolerated, tolerated, elsewhere = run([
        template("one"), node, pod("plain", "one"), pod("tolerant", "one", tolerations=toleration),
        pod("picky", "one", tolerations=toleration, nodeSelector={"node.kubernetes.io/instance-type": "p4d"})])
    assert not untolerated.allocatable and [e.rule for e in untolerated.errors] == ["pod-no-node"]
    assert tolerated.allocatable and tolerated.node == NODE
    assert not elsewhere.allocatable


def test_a_shared_claim_allocated_already_keeps_its_devices() -> None:
    shared = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
              "metadata": {"name": "shared", "namespace": "ml"},
              "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu.nvidia.com",
                                                                           "count": 7}}]}},
              "status": {"allocation": {"devices": {"results": [
                  {"request": "gpu", "driver": "gpu.nvidia.com", "pool": NODE, "device": f"gpu-{i}"}
                  for i in range(7)]}}}}
    consumer = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "consumer", "namespace": "ml"},
                "spec": {"containers": [], "resourceClaims": [{"name": "s", "resourceClaimName": "shared"},
                                                              {"name": "more", "resourceClaimTemplateName": "two"}]}}
    (report,) = run([shared, template("two", 2), consumer])
    assert report.claims[0].allocated_already
    assert not report.allocatable
    assert "gpu-6: allocated to ml/shared" in report.reason
    assert yaml.safe_dump(report.as_dict())


BINDING = Path(__file__).parent / "data" / "explain" / "h100-80gb-hbm3_eks-p5_binding-conditions.yaml"


def test_a_pod_reports_the_binding_conditions_its_devices_wait_for() -> None:
    objects = [template("one"), template("two", count=2), pod("trainer", "one", "two")]
    fleet = inv.from_documents(BINDING.name, parse_documents(BINDING.read_text(), BINDING.name))
    claims = claims_from_objects(objects)
    explainer = Explainer({}, features=features_for(Target("1.36")))
    (trainer,) = explain_pods(pods_from_objects(objects), claims, fleet, explainer)
    assert trainer.allocatable
    binding = trainer.as_dict()["binding"]
    assert binding["simulated"] is False
    assert [(d["claim"], d["request"], d["device"], d["conditions"]) for d in binding["devices"]] == [
        ("ml/trainer-c0", "gpu", "gpu-0", ["example.com/fabric-attached"]),
        ("ml/trainer-c1", "gpu", "gpu-1", ["example.com/fabric-attached"]),
        ("ml/trainer-c1", "gpu", "gpu-2", ["example.com/fabric-attached"])]
    (alone,) = explain_pods(pods_from_objects([pod("alone", "one")]), claims, load(), Explainer({}))
    assert alone.allocatable and alone.as_dict()["binding"] is None


def test_a_pod_whose_gpu_a_device_taint_rule_taints_stays_pending() -> None:
    rule = {"apiVersion": "resource.k8s.io/v1beta2", "kind": "DeviceTaintRule", "metadata": {"name": "xid-79"},
            "spec": {"deviceSelector": {"device": "gpu-3"},
                     "taint": {"key": "nvidia.com/gpu.xid", "value": "79", "effect": "NoExecute"}}}
    fleet = inv.from_documents("all.yaml", parse_documents(yaml.safe_dump_all([yaml.safe_load(P5.read_text()), rule]),
                                                           "all.yaml"))
    explainer = Explainer({}, features=features_for(Target("1.37")))
    objects = [template("gpu-3", selectors=(ONE_GPU,)), pod("solo", "gpu-3")]
    (solo,) = explain_pods(pods_from_objects(objects), claims_from_objects(objects),
                           explainer.with_taint_rules(fleet).inventory, explainer)
    assert not solo.allocatable
    assert solo.reason.endswith("gpu-3: taint nvidia.com/gpu.xid=79:NoExecute from DeviceTaintRule xid-79, not "
                                "tolerated")

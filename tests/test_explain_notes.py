"""What explain's verdict rests on beyond its inputs, said in its output (issue 27, item 5): the NVIDIA DeviceClasses
it assumed, the fields the API server drops where their gate is off, a driver a class selects that has no device in
the inputs, pods judged without Nodes. Through the CLI, text and JSON, on the real p5 dump."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml

from .test_cli import gpu_dra
from .test_explain_pods import NODE, P5, pod, template

GPU_CLASS = {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "gpu.nvidia.com"},
             "spec": {"selectors": [{"cel": {"expression": "device.driver == 'gpu.nvidia.com'"}}]}}
ASSUMED = ("note: DeviceClass gpu.nvidia.com is not in the inputs: judged as NVIDIA's chart defines it "
           "(dra-driver-nvidia-gpu 0.4.1, nvidia-dra-driver-gpu 25.12.0) for ml/one; give the cluster's own "
           "(kubectl get deviceclasses -o yaml) if it differs")


def write(tmp_path: Path, *objects: dict[str, Any]) -> str:
    path = tmp_path / "objects.yaml"
    path.write_text(yaml.safe_dump_all(objects))
    return str(path)


def as_json(*args: str) -> dict[str, Any]:
    result = gpu_dra("explain", *args, "--format", "json")
    assert result.returncode in (0, 1), result.stderr
    document: dict[str, Any] = json.loads(result.stdout)
    return document


def capacity_template(name: str, memory: str) -> dict[str, Any]:
    made = template(name)
    made["spec"]["spec"]["devices"]["requests"][0]["exactly"]["capacity"] = {"requests": {"memory": memory}}
    return made


# ------------------------------------------------------------------------------- DeviceClasses explain assumed


def test_a_chart_class_not_in_the_inputs_is_named_as_assumed_with_its_release(tmp_path: Path) -> None:
    inputs = write(tmp_path, template("one"))
    result = gpu_dra("explain", str(P5), inputs)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[1] == ASSUMED
    document = as_json(str(P5), inputs)
    assert document["claims"][0]["assumed_classes"] == ["gpu.nvidia.com"]
    assert ASSUMED.removeprefix("note: ") in document["notes"]


def test_a_class_the_inputs_define_is_not_assumed(tmp_path: Path) -> None:
    inputs = write(tmp_path, template("one"), GPU_CLASS)
    result = gpu_dra("explain", str(P5), inputs)
    assert result.returncode == 0, result.stderr
    assert "note:" not in result.stdout
    document = as_json(str(P5), inputs)
    assert (document["claims"][0]["assumed_classes"], document["notes"]) == ([], [])


def test_a_class_a_pods_template_uses_is_named_for_the_template(tmp_path: Path) -> None:
    inputs = write(tmp_path, template("one"), pod("solo", "one"))
    result = gpu_dra("explain", str(P5), inputs, "--pod", "ml/solo")
    assert result.returncode == 0, result.stderr
    assert ASSUMED in result.stdout
    (solo,) = as_json(str(P5), inputs, "--pod", "ml/solo")["pods"]
    assert solo["claims"][0]["alone"]["assumed_classes"] == ["gpu.nvidia.com"]


# ---------------------------------------------------------------------- fields the API server drops (gate off)


def test_a_capacity_request_dropped_where_its_gate_is_off_is_said(tmp_path: Path) -> None:
    """EKS 1.35 runs DRAConsumableCapacity off (alpha): the API server stores the template without `capacity`, so
    any H100 does; the note names the object, the field, the gate and the version."""
    inputs = write(tmp_path, capacity_template("big", "100Gi"), GPU_CLASS)
    result = gpu_dra("explain", str(P5), inputs)
    assert result.returncode == 0, result.stderr  # judged without the 100Gi no H100 has
    assert ("note: ResourceClaimTemplate ml/big: spec.spec.devices.requests[0].exactly.capacity dropped: "
            "DRAConsumableCapacity is alpha and off in Kubernetes 1.35 (EKS runs only the upstream defaults), so the "
            "API server does not store it and the scheduler ignores it; judged without it"
            ) in result.stdout.splitlines()
    (claim,) = as_json(str(P5), inputs)["claims"]
    assert claim["dropped"] == [{"object": "ResourceClaimTemplate ml/big",
                                 "field": "spec.spec.devices.requests[0].exactly.capacity",
                                 "gate": "DRAConsumableCapacity", "kubernetes": "1.35", "platform": "eks"}]


def test_a_capacity_request_kept_where_its_gate_is_on_has_no_note(tmp_path: Path) -> None:
    inputs = write(tmp_path, capacity_template("big", "100Gi"), GPU_CLASS)
    result = gpu_dra("explain", str(P5), inputs, "--kubernetes-version", "1.36")
    assert result.returncode == 1, result.stderr  # no 80 GB H100 has 100Gi
    assert "dropped" not in result.stdout
    assert as_json(str(P5), inputs, "--kubernetes-version", "1.36")["claims"][0]["dropped"] == []


def test_an_extended_resource_name_dropped_where_its_gate_is_off_is_said(tmp_path: Path) -> None:
    mapped = {**GPU_CLASS, "spec": {**GPU_CLASS["spec"], "extendedResourceName": "example.com/gpu"}}
    inputs = write(tmp_path, template("one"), mapped)
    note = ("note: DeviceClass gpu.nvidia.com: spec.extendedResourceName dropped: DRAExtendedResource is alpha and off "
            "in Kubernetes 1.35 (EKS runs only the upstream defaults), so the API server does not store it and the "
            "scheduler ignores it; judged without it")
    assert note in gpu_dra("explain", str(P5), inputs).stdout.splitlines()
    assert note.removeprefix("note: ") in as_json(str(P5), inputs)["notes"]
    assert "dropped" not in gpu_dra("explain", str(P5), inputs, "--kubernetes-version", "1.36").stdout


# ------------------------------------------------------------------------------------ what the inputs lack


def test_slices_without_the_driver_a_class_selects_say_so(tmp_path: Path) -> None:
    """A dump holding only the compute-domain driver's slice: the claim's "no device matches" is explained by the
    gpu.nvidia.com devices missing from the inputs, with what to dump."""
    dump = yaml.safe_load(P5.read_text())
    dump["items"] = [item for item in dump["items"] if item["spec"]["driver"] != "gpu.nvidia.com"]
    slices = tmp_path / "slices.yaml"
    slices.write_text(yaml.safe_dump(dump))
    inputs = write(tmp_path, template("one"), GPU_CLASS)
    result = gpu_dra("explain", str(slices), inputs)
    assert result.returncode == 1, result.stderr
    note = ("note: no device of driver gpu.nvidia.com in the inputs, which DeviceClass gpu.nvidia.com selects for "
            "ml/one: they hold 2 of driver compute-domain.nvidia.com only; give every driver's ResourceSlices (kubectl "
            "get resourceslices -o yaml), and check that gpu.nvidia.com's kubelet plugin runs on the nodes")
    assert note in result.stdout.splitlines()
    assert note.removeprefix("note: ") in as_json(str(slices), inputs)["notes"]
    assert "no device of driver" not in gpu_dra("explain", str(P5), inputs).stdout


def test_pods_judged_without_nodes_say_so(tmp_path: Path) -> None:
    note = ("note: no Node in the inputs: the pods are judged on the nodes the ResourceSlices name, without labels or "
            "taints, so their nodeSelector, node affinity and tolerations are not checked (add the Nodes: kubectl get "
            "nodes -o yaml)")
    without = write(tmp_path, template("one"), pod("solo", "one"), GPU_CLASS)
    assert note in gpu_dra("explain", str(P5), without, "--pod", "ml/solo").stdout.splitlines()
    node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": NODE}}
    with_node = write(tmp_path, template("one"), pod("solo", "one"), GPU_CLASS, node)
    result = gpu_dra("explain", str(P5), with_node, "--pod", "ml/solo")
    assert result.returncode == 0, result.stderr
    assert "note:" not in result.stdout

"""`gpu-dra explain` with pods and workloads, through the CLI, on the real p5 dump and the examples/explain files."""

from __future__ import annotations

import json
from pathlib import Path

import yaml

from .test_cli import ROOT, gpu_dra
from .test_explain_pods import NODE, P5, pod, template

TWO_CLAIMS = ROOT / "examples" / "explain" / "pod-two-claims.yaml"
BUSY = ROOT / "examples" / "explain" / "busy-gpus.yaml"


def test_a_pod_whose_two_claims_compete_for_one_gpu() -> None:
    result = gpu_dra("explain", str(P5), str(TWO_CLAIMS))
    assert result.returncode == 1, result.stderr
    assert "claim ml/gpu-3: allocatable on 1 node(s)" in result.stdout  # each template alone fits
    assert ("pod ml/both (Pod): NOT allocatable: each of its 2 claims fits alone, but no node it may use has devices "
            "for all of them together (they compete for the same devices)") in result.stdout
    assert "  claim c0 (template ml/gpu-3 -> ml/both-c0): fits alone on 1 node(s)" in result.stdout
    assert "  claim c1 (template ml/also-gpu-3 -> ml/both-c1): fits alone on 1 node(s)" in result.stdout


def test_a_pod_whose_two_claims_compete_as_json() -> None:
    result = gpu_dra("explain", str(P5), str(TWO_CLAIMS), "--format", "json")
    assert result.returncode == 1, result.stderr
    document = json.loads(result.stdout)
    assert set(document) == {"source", "claims", "pods"}
    assert [c["claim"] for c in document["claims"]] == ["ml/gpu-3", "ml/also-gpu-3"]
    (both,) = document["pods"]
    assert (both["pod"], both["kind"], both["allocatable"], both["node"]) == ("ml/both", "Pod", False, None)
    assert [(c["name"], c["claim"], c["alone"]["allocatable"]) for c in both["claims"]] == [
        ("c0", "ml/both-c0", True), ("c1", "ml/both-c1", True)]


def test_devices_held_by_another_claim_leave_a_deployment_pending() -> None:
    result = gpu_dra("explain", str(P5), str(BUSY), "--pod", "ml/inference")
    assert result.returncode == 1, result.stderr
    assert "claim ml/two-gpus" not in result.stdout  # --pod shows that pod alone
    assert ("pod ml/inference (Deployment): NOT allocatable: claim ml/inference-gpus (gpus): request gpu needs 2 "
            f"device(s); on {NODE} 1 of its 8 matching device(s) are free: gpu-0: allocated to ml/trainer-0-gpu"
            ) in result.stdout
    assert "  claim gpus (template ml/two-gpus -> ml/inference-gpus): NOT allocatable alone (the reason above)" \
        in result.stdout


def test_a_deployment_that_fits_gets_its_devices(tmp_path: Path) -> None:
    deployment = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "namespace": "ml"},
                  "spec": {"template": {"spec": pod("x", "one", "one")["spec"]}}}
    manifests = tmp_path / "web.yaml"
    manifests.write_text(yaml.safe_dump_all([template("one"), deployment]))
    result = gpu_dra("explain", str(P5), str(manifests), "--pod", "web")
    assert result.returncode == 0, result.stderr
    assert f"pod ml/web (Deployment): allocatable on {NODE}" in result.stdout
    assert f"  claim c0 (template ml/one -> ml/web-c0): gpu -> gpu.nvidia.com/{NODE}/gpu-0" in result.stdout
    assert f"  claim c1 (template ml/one -> ml/web-c1): gpu -> gpu.nvidia.com/{NODE}/gpu-1" in result.stdout
    (web,) = json.loads(gpu_dra("explain", str(P5), str(manifests), "--format", "json").stdout)["pods"]
    assert [[d["device"] for d in c["devices"]] for c in web["claims"]] == [["gpu-0"], ["gpu-1"]]


def test_pod_names_one_that_exists() -> None:
    result = gpu_dra("explain", str(P5), str(TWO_CLAIMS), "--pod", "ml/nowhere")
    assert result.returncode == 2
    assert "no pod or workload with resource claims named 'ml/nowhere'" in result.stderr


def test_the_kubernetes_version_decides_on_device_taints(tmp_path: Path) -> None:
    dump = yaml.safe_load(P5.read_text())
    for item in dump["items"]:
        for device in item["spec"]["devices"]:
            device["taints"] = [{"key": "nvidia.com/gpu-unhealthy", "value": "xid-79", "effect": "NoSchedule"}]
    slices = tmp_path / "tainted.yaml"
    slices.write_text(yaml.safe_dump(dump))
    manifests = tmp_path / "pod.yaml"
    manifests.write_text(yaml.safe_dump_all([template("one"), pod("solo", "one")]))
    old = gpu_dra("explain", str(slices), str(manifests))  # 1.34: DRADeviceTaints is alpha, off
    assert old.returncode == 0, old.stderr
    assert f"pod ml/solo (Pod): allocatable on {NODE}" in old.stdout
    new = gpu_dra("explain", str(slices), str(manifests), "--kubernetes-version", "1.36")  # beta, on
    assert new.returncode == 1, new.stderr
    assert "pod ml/solo (Pod): NOT allocatable" in new.stdout
    assert "tainted nvidia.com/gpu-unhealthy=xid-79:NoSchedule" in new.stdout
    wrong = gpu_dra("explain", str(slices), str(manifests), "--kubernetes-version", "1.2")
    assert wrong.returncode == 2 and "known versions" in wrong.stderr


def test_files_without_devices_are_named() -> None:
    result = gpu_dra("explain", str(TWO_CLAIMS))
    assert result.returncode == 2
    assert f"no devices in {TWO_CLAIMS}" in result.stderr

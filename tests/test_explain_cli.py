"""`gpu-dra explain` with pods and workloads, DeviceTaintRules and binding conditions, through the CLI, on the real p5
dump and the examples/explain files."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml

from .conftest import Project
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
    assert set(document) == {"source", "kubernetes", "taint_rules", "claims", "pods", "notes"}
    # the default target, 1.35 on EKS: DeviceTaintRules are alpha and off
    assert document["taint_rules"] == {"gate": "DRADeviceTaintRules", "applied": False, "notes": [], "rules": []}
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
            f"device(s); on {NODE} 1 of its 8 matching device(s) are free: gpu-0, gpu-1, gpu-2, gpu-3, gpu-4, "
            "gpu-5, gpu-6: allocated to ml/trainer-0-gpu"
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
    assert ("gpu-7: taint nvidia.com/gpu-unhealthy=xid-79:NoSchedule from ResourceSlice "
            "ip-100-64-147-149.ec2.internal-gpu.nvidia.com-bvcfk, not tolerated") in new.stdout
    wrong = gpu_dra("explain", str(slices), str(manifests), "--kubernetes-version", "1.2")
    assert wrong.returncode == 2 and "known versions" in wrong.stderr


def test_files_without_devices_are_named() -> None:
    relative = TWO_CLAIMS.relative_to(ROOT)  # as given: a path as long as the checkout's would be cut
    result = gpu_dra("explain", str(relative))
    assert result.returncode == 2
    assert f"no devices in {relative}" in result.stderr


MAINTENANCE = ROOT / "examples" / "explain" / "gpu-maintenance.yaml"
BINDING = ROOT / "tests" / "data" / "explain" / "h100-80gb-hbm3_eks-p5_binding-conditions.yaml"
TAINTED_GPU_3 = ("gpu-3: taint maintenance=true:NoSchedule from DeviceTaintRule gpu-maintenance, not tolerated")


def test_a_device_taint_rule_keeps_the_trainer_pending_where_the_scheduler_applies_it() -> None:
    result = gpu_dra("explain", str(P5), str(MAINTENANCE), "--kubernetes-version", "1.37")
    assert result.returncode == 1, result.stderr
    assert (f"DeviceTaintRule gpu-maintenance (maintenance=true:NoSchedule): taints 1 device(s): {NODE}/gpu-3"
            in result.stdout)
    assert (f"pod ml/trainer (Pod): NOT allocatable: claim ml/trainer-gpus (gpus): request gpu needs 8 device(s); on "
            f"{NODE} 7 of its 8 matching device(s) are free: {TAINTED_GPU_3}") in result.stdout
    assert f"pod ml/diagnostics (Pod): allocatable on {NODE}" in result.stdout  # it tolerates the taint
    document = json.loads(gpu_dra("explain", str(P5), str(MAINTENANCE), "--kubernetes-version", "1.37",
                                  "--format", "json").stdout)
    assert document["taint_rules"] == {"gate": "DRADeviceTaintRules", "applied": True, "notes": [], "rules": [
        {"name": "gpu-maintenance", "source": str(MAINTENANCE), "taint": "maintenance=true:NoSchedule",
         "devices": [{"node": NODE, "driver": "gpu.nvidia.com", "pool": NODE, "device": "gpu-3"}]}]}
    trainer, diagnostics = document["pods"]
    assert trainer["reason"].endswith(TAINTED_GPU_3) and diagnostics["allocatable"]


def test_a_device_taint_rule_is_not_applied_where_its_gate_is_off() -> None:
    for version, gate in (("1.34", "DRADeviceTaints"), ("1.36", "DRADeviceTaintRules")):
        result = gpu_dra("explain", str(P5), str(MAINTENANCE), "--kubernetes-version", version)
        assert result.returncode == 0, result.stderr
        assert (f"DeviceTaintRule gpu-maintenance (maintenance=true:NoSchedule): not applied: {gate} is off in "
                f"Kubernetes {version} (eks)") in result.stdout
        assert f"pod ml/trainer (Pod): allocatable on {NODE}" in result.stdout


def test_an_existing_cluster_declaring_the_gate_applies_rules_from_a_kubectl_list(project: Project,
                                                                                  tmp_path: Path) -> None:
    def existing(config: dict[str, Any]) -> None:
        config["gpu-dra:cluster"] = {"name": "lab", "platform": "existing", "kubernetesVersion": "1.36",
                                     "kubeconfig": {"path": "~/.kube/config"},
                                     "featureGates": {"DRADeviceTaintRules": True}}
        config["gpu-dra:nodeGroups"] = []

    project.edit_stack("dev", existing)
    documents = list(yaml.safe_load_all(MAINTENANCE.read_text()))
    rules = tmp_path / "devicetaintrules.yaml"  # as `kubectl get devicetaintrules -o yaml` writes them
    rules.write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": documents[:1]}))
    workloads = tmp_path / "workloads.yaml"
    workloads.write_text(yaml.safe_dump_all(documents[1:]))
    args = ("--project-dir", str(project.root), "explain", str(P5), str(rules), str(workloads), "--stack", "dev",
            "--pod", "ml/trainer")
    applied = gpu_dra(*args)
    assert applied.returncode == 1, applied.stderr
    assert f"taints 1 device(s): {NODE}/gpu-3" in applied.stdout and TAINTED_GPU_3 in applied.stdout
    upstream = gpu_dra(*args, "--platform", "eks")  # the version's defaults: the gate is beta, off
    assert upstream.returncode == 0, upstream.stderr
    assert "not applied: DRADeviceTaintRules is off in Kubernetes 1.36 (eks)" in upstream.stdout


def test_a_rule_explain_cannot_apply_as_the_scheduler_would_is_bad_input(tmp_path: Path) -> None:
    rule = next(yaml.safe_load_all(MAINTENANCE.read_text()))
    rule["spec"]["deviceSelector"] = {"deviceClassName": "gpu.nvidia.com"}  # 1.34's v1alpha3 only
    path = tmp_path / "rule.yaml"
    path.write_text(yaml.safe_dump(rule))
    result = gpu_dra("explain", str(P5), str(path), str(TWO_CLAIMS), "--kubernetes-version", "1.37")
    assert result.returncode == 2
    assert (f"{path}: DeviceTaintRule gpu-maintenance: spec.deviceSelector.deviceClassName: only Kubernetes "
            "1.33-1.34 (resource.k8s.io/v1alpha3) select devices so") in result.stderr
    rule["spec"]["taint"] = "maintenance"
    path.write_text(yaml.safe_dump(rule))
    malformed = gpu_dra("explain", str(P5), str(path), str(TWO_CLAIMS))
    assert malformed.returncode == 2
    assert f"{path}: DeviceTaintRule gpu-maintenance: spec.taint must be a mapping" in malformed.stderr


def test_binding_conditions_are_reported_for_the_claim_and_the_pod(tmp_path: Path) -> None:
    manifests = tmp_path / "pod.yaml"
    manifests.write_text(yaml.safe_dump_all([template("two", count=2), pod("trainer", "two")]))
    result = gpu_dra("explain", str(BINDING), str(manifests), "--kubernetes-version", "1.36")
    assert result.returncode == 0, result.stderr
    waits = [f"gpu.nvidia.com/{NODE}/gpu-{i}: example.com/fabric-attached (fails on example.com/fabric-attach-failed)"
             for i in (0, 1)]
    claim_part, pod_part = result.stdout.split("pod ml/trainer (Pod)")
    assert "  binding waits for the binding conditions of 2 device(s):\n" in claim_part
    assert all(f"\n    {line}\n" in claim_part for line in waits)
    assert all(f"\n    ml/trainer-c0: {line}\n" in pod_part for line in waits)
    assert claim_part.count("gpu-dra does not simulate binding conditions") == 1
    assert pod_part.count("gpu-dra does not simulate binding conditions") == 1
    document = json.loads(gpu_dra("explain", str(BINDING), str(manifests), "--kubernetes-version", "1.36",
                                  "--format", "json").stdout)
    ((claim,), (trainer,)) = document["claims"], document["pods"]
    assert [d["device"] for d in claim["binding"]["devices"]] == ["gpu-0", "gpu-1"]
    assert [(d["claim"], d["device"]) for d in trainer["binding"]["devices"]] == [
        ("ml/trainer-c0", "gpu-0"), ("ml/trainer-c0", "gpu-1")]
    assert trainer["binding"]["simulated"] is False
    off = gpu_dra("explain", str(BINDING), str(manifests))  # 1.34: DRADeviceBindingConditions is alpha, off
    assert off.returncode == 1
    assert ("gpu-7: has binding conditions (example.com/fabric-attached), which DRADeviceBindingConditions (off) "
            "must allow") in off.stdout

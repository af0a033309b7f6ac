"""One verdict across verbs for a pod on a stack's fleet: explain --stack and migrate judge it against the same
synthesized Nodes (analysis/stack_nodes), whose labels and taints the scheduler's NodeAffinity and TaintToleration
filters read before DynamicResources runs. Every DRA group carries gpu-dra's nvidia.com/gpu=true:NoSchedule taint, so
a pod on claims that does not tolerate it runs nowhere, and both verbs say which taint."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from .test_cli import gpu_dra

ROOT = Path(__file__).resolve().parent.parent
POD = ROOT / "examples" / "migrate" / "pod-on-claims.yaml"  # inference's l40s template, tolerating the GPU taint
TAINT = "the pod does not tolerate its taint nvidia.com/gpu=true:NoSchedule"


def _without_tolerations(tmp_path: Path) -> Path:
    pod = yaml.safe_load(POD.read_text())
    del pod["spec"]["tolerations"]
    path = tmp_path / "pod.yaml"
    path.write_text(yaml.safe_dump(pod))
    return path


@pytest.mark.parametrize("stack", ["staging", "prod"])
def test_a_pod_that_does_not_tolerate_the_gpu_taint_runs_nowhere_in_explain_and_migrate(tmp_path: Path,
                                                                                       stack: str) -> None:
    pod = str(_without_tolerations(tmp_path))
    explained = gpu_dra("explain", "--stack", stack, pod, "--pod", "inference/embed-l40s")
    assert explained.returncode == 1, explained.stderr
    assert "pod inference/embed-l40s (Pod): NOT allocatable" in explained.stdout
    assert TAINT in explained.stdout
    migrated = gpu_dra("migrate", "--stack", stack, pod)
    assert migrated.returncode == 1, migrated.stderr
    assert "On claims already, but its claims do not allocate" in migrated.stdout and TAINT in migrated.stdout


@pytest.mark.parametrize("stack", ["staging", "prod"])
def test_the_same_pod_tolerating_the_taint_is_placed_by_both(stack: str) -> None:
    explained = gpu_dra("explain", "--stack", stack, str(POD), "--pod", "inference/embed-l40s")
    assert explained.returncode == 0 and "pod inference/embed-l40s (Pod): allocatable on " in explained.stdout
    migrated = gpu_dra("migrate", "--stack", stack, str(POD))
    assert migrated.returncode == 0 and "its claims allocate on the stack's fleet" in migrated.stdout


def test_the_taint_is_named_only_where_every_node_reaching_the_devices_refuses_the_pod(tmp_path: Path) -> None:
    """The pod is bound to a node without GPUs (nodeName): of the two GPU nodes one is tainted, the other would admit
    it, so the reason must not say the nodes with matching devices refuse it."""
    dumps = ROOT / "tests" / "data" / "resourceslices"
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "bound", "namespace": "ml"},
           "spec": {"nodeName": "cpu-0", "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "one"}],
                    "containers": [{"name": "c", "image": "x", "resources": {"claims": [{"name": "gpu"}]}}]}}
    template = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
                "metadata": {"name": "one", "namespace": "ml"},
                "spec": {"spec": {"devices": {"requests": [{"name": "gpu", "exactly": {
                    "deviceClassName": "gpu.nvidia.com"}}]}}}}
    nodes = [{"apiVersion": "v1", "kind": "Node", "metadata": {"name": name}, "spec": {"taints": taints}}
             for name, taints in (("cpu-0", []), ("10.140.65.248", []),
                                  ("ip-100-64-147-149.ec2.internal",
                                   [{"key": "nvidia.com/gpu", "value": "true", "effect": "NoSchedule"}]))]
    path = tmp_path / "pod.yaml"
    path.write_text(yaml.safe_dump_all([pod, template, *nodes]))
    result = gpu_dra("explain", str(dumps / "h100-80gb-hbm3_eks-p5_v25.12.0.yaml"),
                     str(dumps / "gb200_oke_bm-gpu-gb200-v3.4.yaml"), str(path), "--pod", "ml/bound")
    assert result.returncode == 1 and "pod ml/bound (Pod): NOT allocatable" in result.stdout, result.stdout
    assert "admits the pod" not in result.stdout and "does not admit the pod" not in result.stdout


def test_pods_alike_but_for_their_node_selection_each_get_their_own_refusal(tmp_path: Path) -> None:
    """One run, three pods of one template, the p5 node tainted and a node without GPUs each may use: the answer
    kept for pods alike (the explainer's `refusals`) must not be given to a pod that selects nodes otherwise."""
    dump = ROOT / "tests" / "data" / "resourceslices" / "h100-80gb-hbm3_eks-p5_v25.12.0.yaml"
    template = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
                "metadata": {"name": "one", "namespace": "ml"},
                "spec": {"spec": {"devices": {"requests": [{"name": "gpu", "exactly": {
                    "deviceClassName": "gpu.nvidia.com"}}]}}}}
    node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "ip-100-64-147-149.ec2.internal"},
            "spec": {"taints": [{"key": "nvidia.com/gpu", "value": "true", "effect": "NoSchedule"}]}}
    cpu = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "cpu-0", "labels": {"zone": "z1"}}}
    toleration = [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}]

    def pod(name: str, **spec: object) -> dict[str, object]:
        return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "ml"},
                "spec": {**spec, "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "one"}],
                         "containers": [{"name": "c", "image": "x", "resources": {"claims": [{"name": "gpu"}]}}]}}
    pods = [pod("a"), pod("b"), pod("picky", tolerations=toleration, nodeSelector={"zone": "z1"})]
    path = tmp_path / "pods.yaml"
    path.write_text(yaml.safe_dump_all([*pods, template, node, cpu]))
    result = gpu_dra("explain", str(dump), str(path))
    assert result.returncode == 1, result.stderr
    reasons = {line.split(" (Pod)")[0]: line for line in result.stdout.splitlines() if line.startswith("pod ml/")}
    for name in ("pod ml/a", "pod ml/b"):
        assert "(ip-100-64-147-149.ec2.internal: the pod does not tolerate its taint nvidia.com/gpu=true:" \
               "NoSchedule)" in reasons[name], reasons
    assert "the pod's nodeSelector wants zone=z1; it has no such label" in reasons["pod ml/picky"], reasons
    assert "tolerate" not in reasons["pod ml/picky"]


def test_alike_pending_pods_judge_the_nodes_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """explain --cluster on a cluster's many Pending pods of one template: the nodes that reach the devices are
    judged against the pod once, not once per pod (1,000 nodes x 500 pods took 8 s with it per pod, 2 s without)."""
    from gpu_dra.core.analysis import pods as analysis

    judged = []
    real = analysis.why_not_on
    monkeypatch.setattr(analysis, "why_not_on", lambda *args: judged.append(1) or real(*args))
    dump = ROOT / "tests" / "data" / "resourceslices" / "h100-80gb-hbm3_eks-p5_v25.12.0.yaml"
    template = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
                "metadata": {"name": "one", "namespace": "ml"},
                "spec": {"spec": {"devices": {"requests": [{"name": "gpu", "exactly": {
                    "deviceClassName": "gpu.nvidia.com"}}]}}}}
    nodes = [{"apiVersion": "v1", "kind": "Node", "metadata": {"name": "ip-100-64-147-149.ec2.internal"},
              "spec": {"taints": [{"key": "nvidia.com/gpu", "value": "true", "effect": "NoSchedule"}]}},
             {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "cpu-0"}}]
    counts = []
    for many in (2, 20):
        pods = [{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"p{i}", "namespace": "ml"},
                 "spec": {"resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "one"}],
                          "containers": [{"name": "c", "image": "x", "resources": {"claims": [{"name": "gpu"}]}}]}}
                for i in range(many)]
        path = tmp_path / f"pods-{many}.yaml"
        path.write_text(yaml.safe_dump_all([*pods, template, *nodes]))
        judged.clear()
        result = gpu_dra("explain", str(dump), str(path))
        assert result.returncode == 1 and result.stdout.count("does not tolerate its taint") == many, result.stdout
        counts.append(len(judged))
    assert counts[0] == counts[1] > 0

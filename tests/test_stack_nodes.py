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

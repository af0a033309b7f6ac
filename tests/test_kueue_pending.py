"""`explain --cluster` names Kueue as what holds a Pending pod (issue 31): a pod at Kueue's admission gate whose
Workload has no quota reserved is reported with the Workload, its queue and Kueue's own message, before the
scheduler (which has not tried it); a cluster without Kueue is a note, not an error. Against the fake API server
of test_explain_pending, with a Workload shaped as Kueue 0.19.2 writes it for a plain pod (owned by the pod,
labelled with its UID; QuotaReserved=False, reason Pending, the flavor assigner's message)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from gpu_dra.core.facts import kueue

from .cluster_objects import TOLERATES_GPU
from .cluster_objects import pod as _pod
from .fake_apiserver import FakeApiServer, Fault
from .test_cli import gpu_dra
from .test_explain_pending import cluster

WORKLOADS = "/apis/kueue.x-k8s.io/v1beta2/workloads"
# kueue@v0.19.2:pkg/scheduler/flavorassigner/flavorassigner.go:228-245 and :1368, for the LocalQueue's ClusterQueue
# of one L40S-class resource at its nominal quota.
INSUFFICIENT = ("couldn't assign flavors to pod set main: insufficient unused quota for "
                "gpu.nvidia.com.deviceclass.resource.k8s.io/devices in flavor gpu-dra, 1 more needed")


def _queued(name: str) -> dict[str, Any]:
    held = _pod(name, "one-gpu", TOLERATES_GPU)
    held["metadata"]["labels"] = {kueue.QUEUE_NAME_LABEL: "gpu", "kueue.x-k8s.io/managed": "true"}
    held["spec"]["schedulingGates"] = [{"name": kueue.ADMISSION_GATE}]
    held["status"]["conditions"] = [{"type": "PodScheduled", "status": "False", "reason": "SchedulingGated",
                                     "message": "Scheduling is blocked due to non-empty scheduling gates"}]
    return held


def _workload(pod: str) -> dict[str, Any]:
    return {"metadata": {"name": f"pod-{pod}-3f2a1", "namespace": "ml",
                         "labels": {kueue.JOB_UID_LABEL: f"uid-{pod}"},
                         "ownerReferences": [{"apiVersion": "v1", "kind": "Pod", "name": pod, "uid": f"uid-{pod}",
                                              "controller": True}]},
            "spec": {"queueName": "gpu", "podSets": [{"name": "main", "count": 1}]},
            "status": {"conditions": [{"type": "QuotaReserved", "status": "False", "reason": "Pending",
                                       "message": INSUFFICIENT}]}}


def _serve(with_kueue: bool) -> Iterator[FakeApiServer]:
    collections = cluster()
    collections["/api/v1/pods"] = [*collections["/api/v1/pods"], _queued("queued-0"), _queued("orphan-0")]
    faults: dict[str, Fault] = {}
    if with_kueue:
        collections[WORKLOADS] = [_workload("queued-0")]
    else:
        faults[WORKLOADS] = Fault(status=404)
    yield from FakeApiServer(collections=collections, faults=faults).serve()


@pytest.fixture
def with_kueue() -> Iterator[FakeApiServer]:
    yield from _serve(True)


@pytest.fixture
def without_kueue() -> Iterator[FakeApiServer]:
    yield from _serve(False)


def _explain(fake_api: FakeApiServer, tmp_path: Path, *args: str) -> Any:
    return gpu_dra("explain", "--cluster", "--kubeconfig", str(fake_api.kubeconfig(tmp_path / "kubeconfig")), *args)


def test_a_pod_kueue_holds_names_kueue_and_the_quota(with_kueue: FakeApiServer, tmp_path: Path) -> None:
    result = _explain(with_kueue, tmp_path, "--format", "json")
    assert result.returncode == 1, result.stderr
    pods = {p["pod"]: p for p in json.loads(result.stdout)["pods"]}
    assert pods["ml/queued-0"]["kueue"] == {"workload": "ml/pod-queued-0-3f2a1", "queue": "gpu",
                                            "reason": "Pending", "message": INSUFFICIENT}
    assert pods["ml/queued-0"]["allocatable"]  # the devices are there: the quota holds it
    assert pods["ml/trainer-0"]["kueue"] is None  # not gated: the scheduler's question
    text = _explain(with_kueue, tmp_path, "--pod", "ml/queued-0").stdout
    lines = text.splitlines()
    held = lines.index(f"  held by Kueue in queue gpu: Workload ml/pod-queued-0-3f2a1: quota not reserved (Pending): "
                       f"{INSUFFICIENT}")
    assert lines[held - 1].startswith("pod ml/queued-0 (Pending): allocatable on ")
    assert lines[held + 1] == ("  scheduler (PodScheduled condition): Scheduling is blocked due to non-empty "
                               "scheduling gates")
    assert lines[held + 3].startswith("  => Kueue admits it once its queue has the quota")
    docs = (Path(__file__).parent.parent / "docs" / "queues.md").read_text()
    assert "\n".join(lines[held - 1:held + 4]) in docs  # the example in docs/queues.md is this output


def test_a_gated_pod_without_its_workload_says_so(with_kueue: FakeApiServer, tmp_path: Path) -> None:
    text = _explain(with_kueue, tmp_path, "--pod", "ml/orphan-0").stdout
    assert "held by Kueue in queue gpu (scheduling gate kueue.x-k8s.io/admission); no Kueue Workload of it was " \
           "read" in text


def test_a_cluster_without_kueue_is_a_note(without_kueue: FakeApiServer, tmp_path: Path) -> None:
    result = _explain(without_kueue, tmp_path, "--format", "json")
    assert result.returncode == 1, result.stderr  # trainer-0 and the rest are still explained
    document = json.loads(result.stdout)
    assert any("serves no workloads in kueue.x-k8s.io/v1beta2 (HTTP 404): Kueue is not installed" in n
               for n in document["notes"])
    assert {p["pod"] for p in document["pods"]} >= {"ml/trainer-0", "ml/queued-0"}


def test_an_inadmissible_workload_is_to_be_recreated(tmp_path: Path) -> None:
    """Kueue does not admit a Workload it found inadmissible again once the cause is fixed (kubernetes-sigs/kueue
    #13969): the hint says to recreate it, not to wait for quota."""
    collections = cluster()
    collections["/api/v1/pods"] = [*collections["/api/v1/pods"], _queued("queued-0")]
    stuck = _workload("queued-0")
    stuck["status"]["conditions"] = [{"type": "QuotaReserved", "status": "False", "reason": "Inadmissible",
                                      "message": "DeviceClass gpu.nvidia.com is not mapped in DRA configuration for "
                                                 "podset main"}]
    collections[WORKLOADS] = [stuck]
    for api in FakeApiServer(collections=collections).serve():
        text = _explain(api, tmp_path, "--pod", "ml/queued-0").stdout
        assert "quota not reserved (Inadmissible): DeviceClass gpu.nvidia.com is not mapped" in text
        assert "=> Kueue will not admit it as it is: fix what its message says, then a workload Kueue found " \
               "inadmissible" in text and "delete and recreate it" in text

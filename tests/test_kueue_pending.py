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


LOCAL_QUEUES = "/apis/kueue.x-k8s.io/v1beta2/localqueues"
CLUSTER_QUEUES = "/apis/kueue.x-k8s.io/v1beta2/clusterqueues"
DEVICES = "gpu.nvidia.com.deviceclass.resource.k8s.io/devices"


def _cluster_queue(name: str, nominal: int, reserved: int, cohort: str = "gpu", **limits: int) -> dict[str, Any]:
    """A ClusterQueue as gpu-dra renders it, with the reservation Kueue reports (status.flavorsReservation)."""
    return {"metadata": {"name": name}, "spec": {
        "cohortName": cohort, "resourceGroups": [{"coveredResources": [DEVICES], "flavors": [
            {"name": "gpu-dra", "resources": [{"name": DEVICES, "nominalQuota": nominal, **limits}]}]}]},
        "status": {"flavorsReservation": [{"name": "gpu-dra", "resources": [
            {"name": DEVICES, "total": str(reserved), "borrowed": str(max(0, reserved - nominal))}]}]}}


# ml's queue holds its one device; research uses both of its own: nothing to lend.
QUEUES = [_cluster_queue("ml", 1, 1), _cluster_queue("research", 2, 2)]


def _serve(with_kueue: bool) -> Iterator[FakeApiServer]:
    collections = cluster()
    collections["/api/v1/pods"] = [*collections["/api/v1/pods"], _queued("queued-0"), _queued("orphan-0")]
    faults: dict[str, Fault] = {}
    if with_kueue:
        collections[WORKLOADS] = [_workload("queued-0")]
        collections[LOCAL_QUEUES] = [{"metadata": {"name": "gpu", "namespace": "ml"}, "spec": {"clusterQueue": "ml"}}]
        collections[CLUSTER_QUEUES] = QUEUES
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
    assert pods["ml/queued-0"]["kueue"] == {
        "workload": "ml/pod-queued-0-3f2a1", "queue": "gpu", "reason": "Pending", "message": INSUFFICIENT,
        "cohort": f"cohort gpu has no {DEVICES} to lend ClusterQueue ml now: the other queues use or keep the rest "
                  "of their quota"}
    assert pods["ml/queued-0"]["allocatable"]  # the devices are there: the quota holds it
    assert pods["ml/trainer-0"]["kueue"] is None  # not gated: the scheduler's question
    text = _explain(with_kueue, tmp_path, "--pod", "ml/queued-0").stdout
    lines = text.splitlines()
    held = lines.index(f"  held by Kueue in queue gpu: Workload ml/pod-queued-0-3f2a1: quota not reserved (Pending): "
                       f"{INSUFFICIENT}")
    assert lines[held - 1].startswith("pod ml/queued-0 (Pending): allocatable on ")
    assert lines[held + 1] == ("  scheduler (PodScheduled condition): Scheduling is blocked due to non-empty "
                               "scheduling gates")
    assert lines[held + 3].startswith("  => Kueue admits it once its queue has the quota: devices freed in the "
                                      "team's queue, more lent by its cohort (cohort gpu has no ")
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


@pytest.mark.parametrize("queues, words", [
    ([_cluster_queue("ml", 1, 1), _cluster_queue("research", 4, 1, lendingLimit=2)],
     f"cohort gpu could lend ClusterQueue ml 2 {DEVICES} now"),  # 3 unused, at most 2 lent
    ([_cluster_queue("ml", 1, 1), _cluster_queue("research", 4, 1), _cluster_queue("vision", 1, 3)],
     f"cohort gpu could lend ClusterQueue ml 1 {DEVICES} now"),  # vision borrows 2 of research's 3 unused
    ([_cluster_queue("ml", 1, 2, borrowingLimit=1), _cluster_queue("research", 4, 0)],
     f"cohort gpu has no {DEVICES} to lend ClusterQueue ml now: ClusterQueue ml borrows its borrowingLimit (1) "
     "already"),
    ([_cluster_queue("ml", 1, 1, cohort=""), _cluster_queue("research", 4, 0)],
     "ClusterQueue ml is in no cohort: it has no quota to borrow"),
])
def test_whether_the_cohort_could_lend_is_said(tmp_path: Path, queues: list[dict[str, Any]], words: str) -> None:
    """From the ClusterQueues' spec and reservations, as Kueue lends: each other queue its unused nominal quota up to
    its lendingLimit, less what is borrowed already, up to the borrower's borrowingLimit."""
    collections = cluster()
    collections["/api/v1/pods"] = [*collections["/api/v1/pods"], _queued("queued-0")]
    collections[WORKLOADS] = [_workload("queued-0")]
    collections[LOCAL_QUEUES] = [{"metadata": {"name": "gpu", "namespace": "ml"}, "spec": {"clusterQueue": "ml"}}]
    collections[CLUSTER_QUEUES] = queues
    for api in FakeApiServer(collections=collections).serve():
        result = _explain(api, tmp_path, "--format", "json", "--pod", "ml/queued-0")
        (pod,) = json.loads(result.stdout)["pods"]
        assert pod["kueue"]["cohort"] == words


def test_queues_the_identity_may_not_list_are_a_note(tmp_path: Path) -> None:
    collections = cluster()
    collections["/api/v1/pods"] = [*collections["/api/v1/pods"], _queued("queued-0")]
    collections[WORKLOADS] = [_workload("queued-0")]
    faults = {LOCAL_QUEUES: Fault(status=403), CLUSTER_QUEUES: Fault(status=403)}
    for api in FakeApiServer(collections=collections, faults=faults).serve():
        document = json.loads(_explain(api, tmp_path, "--format", "json").stdout)
        assert any("may not list clusterqueues (API group kueue.x-k8s.io, HTTP 403): whether a held pod's cohort "
                   "could lend it quota is not said" in n for n in document["notes"])
        (held,) = [p for p in document["pods"] if p["pod"] == "ml/queued-0"]
        assert held["kueue"]["cohort"] == "" and held["kueue"]["reason"] == "Pending"

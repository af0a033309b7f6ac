"""`explain --cluster` with no FILE: every Pending pod with claims on a live cluster, explained from its objects.

The cluster is a local fake API server (tests/fake_apiserver.py) serving the real p5 ResourceSlice dump of
ip-100-64-147-149 (8 H100s) and a copy of it for a second p5 node, with Nodes, Pods, ResourceClaims, templates and
Events shaped as the API server returns them: a pod's template claim is named by the resourceclaim controller
`<pod>-<entry>-<5 random characters>` and recorded in status.resourceClaimStatuses; FailedScheduling Events are core/v1
Events with `count` and `lastTimestamp` (kubernetes/api@v0.34.0 core/v1 types.go).
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from .cluster_objects import GPU_CLASS, GPU_TAINT, TOLERATES_GPU
from .cluster_objects import claim as _claim
from .cluster_objects import event as _event
from .cluster_objects import node as _node
from .cluster_objects import pod as _pod
from .cluster_objects import template as _template
from .fake_apiserver import FakeApiServer, Fault
from .test_cli import gpu_dra, gpu_dra_process
from .test_explain import P5

NODE_A, NODE_B = "ip-100-64-147-149.ec2.internal", "ip-100-64-152-20.ec2.internal"


def _slices() -> list[dict[str, Any]]:
    """The real dump's slices for node A, and the same devices published by node B."""
    real = yaml.safe_load(P5.read_text())["items"]
    copies = copy.deepcopy(real)
    for item in copies:
        item["metadata"]["name"] = item["metadata"]["name"].replace(NODE_A, NODE_B)
        item["spec"]["nodeName"] = item["spec"]["pool"]["name"] = NODE_B
    return real + copies


# As the scheduler words it (pkg/scheduler/framework/types.go FitError.Error; "cannot allocate all claims" is the
# DynamicResources plugin's Filter status): node B's taint, and node A and the CPU node without the devices.
TRAINER_SAID = ("0/3 nodes are available: 1 node(s) had untolerated taint {maintenance: firmware}, 2 cannot "
                "allocate all claims. preemption: 0/3 nodes are available: 3 Preemption is not helpful for "
                "scheduling.")


def cluster() -> dict[str, list[dict[str, Any]]]:
    """Node A holds 7 of its 8 GPUs for ml/serve-0; node B is free but under maintenance, a taint no pod tolerates;
    trainer-0 wants 8 GPUs, huge-0 16 (no p5 has them), lost-0 names a template that does not exist. train-1 runs,
    bound-0 is bound to a node already: neither is a scheduling question."""
    pods = [_pod("trainer-0", "eight-gpus", TOLERATES_GPU, made="trainer-0-gpus-x7kq2"),
            _pod("huge-0", "sixteen-gpus", TOLERATES_GPU),
            _pod("lost-0", "no-such-template", TOLERATES_GPU),
            _pod("train-1", "one-gpu", TOLERATES_GPU, phase="Running", node=NODE_A, made="train-1-gpus-9d2mn"),
            _pod("bound-0", "one-gpu", TOLERATES_GPU, node=NODE_B),
            _pod("serve-0", "seven-gpus", TOLERATES_GPU, phase="Running", node=NODE_A, made="serve-0-gpus-b8x4p")]
    claims = [_claim("serve-0-gpus-b8x4p", 7, [f"gpu-{i}" for i in range(7)], NODE_A, "serve-0"),
              _claim("trainer-0-gpus-x7kq2", 8, [], NODE_A, None)]
    return {
        "/apis/resource.k8s.io/v1/resourceslices": _slices(),
        "/apis/resource.k8s.io/v1/deviceclasses": [GPU_CLASS],
        "/apis/resource.k8s.io/v1/resourceclaims": claims,
        "/apis/resource.k8s.io/v1/resourceclaimtemplates": [
            _template(name, count) for name, count in
            (("one-gpu", 1), ("seven-gpus", 7), ("eight-gpus", 8), ("sixteen-gpus", 16))],
        "/api/v1/nodes": [_node(NODE_A, [GPU_TAINT]), _node(NODE_B, [GPU_TAINT, {
            "key": "maintenance", "value": "firmware", "effect": "NoSchedule"}]),
            {"metadata": {"name": "ip-10-0-1-5.ec2.internal", "labels": {}}, "spec": {}, "status": {}}],
        "/api/v1/pods": pods,
        "/api/v1/events": [_event("trainer-0", "0/3 nodes are available: 3 cannot allocate all claims.", 3,
                                  "2026-12-01T09:10:00Z"),
                           _event("trainer-0", TRAINER_SAID, 41, "2026-12-01T10:02:11Z"),
                           {**_event("trainer-0", "Successfully assigned", 1, "2026-12-01T10:03:00Z"),
                            "reason": "Scheduled"}],
    }


@pytest.fixture
def fake_api() -> Iterator[FakeApiServer]:
    yield from FakeApiServer(collections=cluster(), page_size=2).serve()


def _explain(fake_api: FakeApiServer, tmp_path: Path, *args: str, run: Any = gpu_dra) -> Any:
    return run("explain", "--cluster", "--kubeconfig", str(fake_api.kubeconfig(tmp_path / "kubeconfig")), *args)


def _pods(fake_api: FakeApiServer, tmp_path: Path, *args: str) -> dict[str, Any]:
    result = _explain(fake_api, tmp_path, "--format", "json", *args)
    assert result.returncode == 1, result.stderr
    return {pod["pod"]: pod for pod in json.loads(result.stdout)["pods"]}


def test_every_pending_pod_with_claims_is_explained_and_nothing_else(fake_api: FakeApiServer,
                                                                    tmp_path: Path) -> None:
    pods = _pods(fake_api, tmp_path)
    assert sorted(pods) == ["ml/huge-0", "ml/lost-0", "ml/trainer-0"]
    assert all(not pod["allocatable"] for pod in pods.values())
    assert all(method == "GET" for method, _, _ in fake_api.requests)  # read-only


def test_lists_are_read_in_pages_and_pods_by_field_selector(fake_api: FakeApiServer, tmp_path: Path) -> None:
    _pods(fake_api, tmp_path)
    pods = [query for _, path, query in fake_api.requests if path == "/api/v1/pods"]
    assert len(pods) >= 2 and all(q["fieldSelector"] == "status.phase=Pending,spec.nodeName=" for q in pods)
    assert [bool(q.get("continue")) for q in pods] == [False] + [True] * (len(pods) - 1)
    slices = [q for _, path, q in fake_api.requests if path.endswith("/resourceslices")]
    assert len(slices) == 2  # four slices, two a page: every page read
    events = [q for _, path, q in fake_api.requests if path == "/api/v1/events"]
    assert events and all(q["fieldSelector"] == "reason=FailedScheduling" for q in events)


def test_the_scheduler_s_last_message_is_shown(fake_api: FakeApiServer, tmp_path: Path) -> None:
    trainer = _pods(fake_api, tmp_path)["ml/trainer-0"]
    assert trainer["scheduler"] == {"message": TRAINER_SAID, "count": 41, "last": "2026-12-01T10:02:11Z",
                                    "source": "event"}
    text = _explain(fake_api, tmp_path, "--pod", "ml/trainer-0").stdout
    assert f"  scheduler (FailedScheduling, 41 times, last 2026-12-01T10:02:11Z): {TRAINER_SAID}" in text


def test_the_busy_devices_name_the_claim_and_pod_holding_them(fake_api: FakeApiServer, tmp_path: Path) -> None:
    trainer = _pods(fake_api, tmp_path)["ml/trainer-0"]
    claim = trainer["claims"][0]
    assert claim["claim"] == "ml/trainer-0-gpus-x7kq2"  # the controller's claim, from resourceClaimStatuses
    assert "allocated to ml/serve-0-gpus-b8x4p (pod ml/serve-0)" in trainer["reason"]
    assert f"on {NODE_A} 1 of its 8 matching device(s) are free" in trainer["reason"]


def test_hints_say_what_would_make_each_pod_schedulable(fake_api: FakeApiServer, tmp_path: Path) -> None:
    pods = _pods(fake_api, tmp_path)
    assert pods["ml/trainer-0"]["hints"] == [
        f"its claims fit on {NODE_B}, but the pod does not tolerate its taint maintenance=firmware:NoSchedule",
        f"it would fit on {NODE_A} once these claims release their devices: ml/serve-0-gpus-b8x4p (pod ml/serve-0)"]
    assert pods["ml/huge-0"]["hints"] == [
        "neither another node nor freed devices would help: no node has matching devices enough (add capacity or "
        "change the request; the reasons above say what is missing)"]
    assert pods["ml/lost-0"]["hints"] == []
    assert "template ml/no-such-template is not in the inputs" in pods["ml/lost-0"]["reason"]


def test_tolerations_change_the_verdict(tmp_path: Path) -> None:
    """trainer-0 without tolerations may use neither GPU node (both carry the GPU taint), only the CPU node: the
    hint names the taint of the node its claims fit on. Tolerating every taint, it is allocatable on node B, and the
    hint says why the scheduler may not have placed it yet."""
    objects = cluster()
    trainer = objects["/api/v1/pods"][0]
    trainer["spec"]["tolerations"] = []
    for server in FakeApiServer(collections=objects).serve():
        pod = _pods(server, tmp_path, "--pod", "ml/trainer-0")["ml/trainer-0"]
        assert pod["reason"] == ("claim ml/trainer-0-gpus-x7kq2 (gpus): request gpu: none of its matching devices is "
                                 "reachable from the nodes tried; none of the 2 nodes with matching devices admits "
                                 "the pod (ip-100-64-147-149.ec2.internal: the pod does not tolerate its taint "
                                 "nvidia.com/gpu=true:NoSchedule)")
        assert pod["hints"] == [
            f"its claims fit on {NODE_B}, but the pod does not tolerate its taint nvidia.com/gpu=true:NoSchedule"]
        trainer["spec"]["tolerations"] = [{"operator": "Exists"}]
        result = _explain(server, tmp_path, "--format", "json", "--pod", "ml/trainer-0")
        assert result.returncode == 0, result.stdout
        (pod,) = json.loads(result.stdout)["pods"]
        assert pod["allocatable"] and pod["node"] == NODE_B
        assert pod["hints"][0].startswith(f"its claims are allocatable on {NODE_B} now")


def test_namespace_and_pod_narrow_what_is_read(fake_api: FakeApiServer, tmp_path: Path) -> None:
    result = _explain(fake_api, tmp_path, "-n", "ml", "--pod", "huge-0")
    assert result.returncode == 1
    assert "pod ml/huge-0 (Pending): NOT allocatable" in result.stdout and "trainer-0" not in result.stdout
    paths = fake_api.paths()
    assert "/api/v1/namespaces/ml/pods" in paths and "/api/v1/namespaces/ml/events" in paths
    assert "/apis/resource.k8s.io/v1/resourceclaims" in paths  # claims of every namespace hold devices
    missing = _explain(fake_api, tmp_path, "--pod", "ml/train-1")  # running: not a scheduling question
    assert missing.returncode == 2
    assert "no Pending pod with resource claims named 'ml/train-1' in the cluster" in missing.stderr


def test_no_pending_pod_is_a_clean_exit(tmp_path: Path) -> None:
    objects = cluster()
    objects["/api/v1/pods"] = [p for p in objects["/api/v1/pods"] if p["status"]["phase"] == "Running"]
    for server in FakeApiServer(collections=objects).serve():
        result = _explain(server, tmp_path)
    assert result.returncode == 0, result.stderr
    assert "No Pending pod with resource claims: every such pod is placed." in result.stdout


def test_the_cluster_s_version_is_the_scheduler_s(fake_api: FakeApiServer, tmp_path: Path) -> None:
    result = _explain(fake_api, tmp_path, "--format", "json")
    assert json.loads(result.stdout)["kubernetes"] == {"version": "1.35", "platform": "eks",
                                                       "server": "v1.35.2-eks-3cfe0ce"}
    flagged = json.loads(_explain(fake_api, tmp_path, "--format", "json", "--kubernetes-version", "1.36").stdout)
    assert flagged["kubernetes"]["version"] == "1.36"


# --------------------------------------------------------------------------------------------- faults


@pytest.mark.parametrize(("fault_path", "fault", "expected"), [
    ("/api/v1/pods", Fault(status=403),
     "refused GET /api/v1/pods: HTTP 403 Forbidden (the identity lacks `list` on pods (the core API group)"),
    ("/api/v1/events", Fault(status=403), "the identity lacks `list` on events (the core API group)"),
    ("/apis/resource.k8s.io/v1/resourceclaimtemplates", Fault(status=500),
     "refused GET /apis/resource.k8s.io/v1/resourceclaimtemplates: HTTP 500"),
    ("/apis/resource.k8s.io/v1/resourceslices", Fault(status=404),
     "(this v1.35.2-eks-3cfe0ce API server does not serve resourceslices in resource.k8s.io/v1"),
    ("/version", Fault(status=403), None),  # not readable: nothing depends on it alone
    ("/api/v1/nodes", Fault(truncate=True), "that are not JSON (cut short?)"),
    ("/api/v1/pods", Fault(expire_continue=True),
     "let the list of pods expire while it was read in pages (HTTP 410 Gone): the cluster changed meanwhile; run "
     "again"),
], ids=["pods-403", "events-403", "templates-500", "slices-404", "version-403", "truncated", "continue-expired"])
def test_faults_are_clear_errors(tmp_path: Path, fault_path: str, fault: Fault, expected: str | None) -> None:
    for server in FakeApiServer(collections=cluster(), faults={fault_path: fault}, page_size=2).serve():
        result = _explain(server, tmp_path)
    if expected is None:
        assert result.returncode == 1 and "Judged as the kube-scheduler of Kubernetes 1.35 (eks)\n" in result.stdout
        return
    assert result.returncode == 2, result.stdout
    assert expected in result.stderr
    assert "Traceback" not in result.stderr


def test_a_resource_missing_from_a_1_34_or_later_server_is_not_called_an_old_cluster(tmp_path: Path) -> None:
    faults = {"/apis/resource.k8s.io/v1/resourceclaimtemplates": Fault(status=404)}
    for server in FakeApiServer(collections=cluster(), faults=faults).serve():
        result = _explain(server, tmp_path)
    assert result.returncode == 2
    assert ("(this v1.35.2-eks-3cfe0ce API server does not serve resourceclaimtemplates in resource.k8s.io/v1, which "
            "Kubernetes serves from 1.34: is the API turned off with --runtime-config?)") in result.stderr


def test_a_stalled_answer_is_a_timeout_naming_the_request(tmp_path: Path) -> None:
    faults = {"/api/v1/events": Fault(stall=30)}
    for server in FakeApiServer(collections=cluster(), faults=faults).serve():
        result = _explain(server, tmp_path, "--request-timeout", "1s", run=gpu_dra_process)  # a deadline
    assert result.returncode == 2
    assert "did not answer GET /api/v1/events within 1s" in result.stderr


@pytest.mark.parametrize(("version", "said"), [
    ({"major": "1", "minor": "33", "gitVersion": "v1.33.5-eks-113cf36"}, "; this API server is v1.33.5-eks-113cf36"),
    (None, "")])
def test_a_pre_1_34_cluster_is_named(tmp_path: Path, version: dict[str, str] | None, said: str) -> None:
    """A 1.33 API server serves resource.k8s.io v1beta1 and v1beta2, not v1; one whose /version is not readable
    gets the same advice."""
    objects = {k: v for k, v in cluster().items() if "resource.k8s.io/v1/" not in k}
    for server in FakeApiServer(collections=objects, version=version).serve():
        result = _explain(server, tmp_path)
    assert result.returncode == 2
    assert (f"(the API server does not serve resource.k8s.io/v1: DRA's v1 API is served from Kubernetes 1.34{said}; "
            "upgrade the cluster to 1.34 or later)") in result.stderr


def test_with_files_too_the_cluster_s_version_is_the_scheduler_s(tmp_path: Path) -> None:
    """explain --cluster FILE judges as the API server's version, and a version newer than the gates gpu-dra knows
    as the newest it knows, with a note."""
    claim = tmp_path / "claim.yaml"
    claim.write_text(yaml.safe_dump({**_template("one", 1), "apiVersion": "resource.k8s.io/v1",
                                     "kind": "ResourceClaimTemplate"}))
    for gitversion, judged in (("v1.36.1-eks-0a21954", "1.36"), ("v1.38.0", "1.37")):
        version = {"major": "1", "minor": gitversion.split(".")[1], "gitVersion": gitversion}
        for server in FakeApiServer(collections=cluster(), version=version).serve():
            result = _explain(server, tmp_path, str(claim), "--format", "json")
        document = json.loads(result.stdout)
        assert document["kubernetes"]["version"] == judged and document["kubernetes"]["server"] == gitversion
    assert ("the API server is v1.38.0, whose gates gpu-dra does not know: judged as Kubernetes 1.37"
            in document["notes"])


@pytest.mark.parametrize(("field", "value"), [
    (("status", "conditions"), 5), (("status", "resourceClaimStatuses"), 3), (("spec", "tolerations"), "x"),
    (("spec", "nodeSelector"), ["a"]), (("spec", "affinity"), "x"),
    (("spec", "affinity"), {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": [{"matchExpressions": "x"}]}}})])
def test_a_malformed_pod_from_the_server_is_explained_not_a_traceback(tmp_path: Path, field: tuple[str, str],
                                                                      value: Any) -> None:
    objects = cluster()
    objects["/api/v1/pods"][0][field[0]][field[1]] = value
    for server in FakeApiServer(collections=objects).serve():
        result = _explain(server, tmp_path, "--pod", "ml/trainer-0")
    assert result.returncode == 1, result.stderr
    assert "pod ml/trainer-0 (Pending)" in result.stdout and "Traceback" not in result.stderr

"""`--cluster`: explain and inventory read a live cluster through a kubeconfig. A local HTTP server plays the API
server (no cluster here), serving the real p5 ResourceSlice dump."""

from __future__ import annotations

import contextlib
import json
import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
import yaml

from .conftest import ROOT
from .fake_apiserver import FakeApiServer, Fault
from .test_cli import gpu_dra
from .test_explain import P5


def _listing(kind: str, items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return items


def _responses() -> dict[str, list[dict[str, Any]]]:
    slices = yaml.safe_load(P5.read_text())["items"]
    claim = {"metadata": {"name": "busy", "namespace": "ml"}, "spec": {"devices": {"requests": []}},
             "status": {"allocation": {"devices": {"results": [
                 {"request": "gpu", "driver": "gpu.nvidia.com", "pool": "ip-100-64-147-149.ec2.internal",
                  "device": f"gpu-{i}"} for i in range(7)]}}}}
    nodes = [{"metadata": {"name": "ip-100-64-147-149.ec2.internal", "labels": {"nvidia.com/gpu.present": "true"}}},
             {"metadata": {"name": "ip-10-0-0-9.ec2.internal", "labels": {"nvidia.com/gpu.present": "true"}}}]
    return {"/apis/resource.k8s.io/v1/resourceslices": slices,
            "/apis/resource.k8s.io/v1/deviceclasses": [],
            "/apis/resource.k8s.io/v1/resourceclaims": [claim],
            "/apis/resource.k8s.io/v1/resourceclaimtemplates": [],
            "/api/v1/nodes": nodes, "/api/v1/pods": [], "/api/v1/events": [], "/api/v1/resourcequotas": []}


def _taint_rule(device: str) -> dict[str, Any]:
    """A DeviceTaintRule as a list request returns it (items carry no apiVersion or kind)."""
    return {"metadata": {"name": "gpu-maintenance"},
            "spec": {"deviceSelector": {"driver": "gpu.nvidia.com", "pool": "ip-100-64-147-149.ec2.internal",
                                        "device": device},
                     "taint": {"key": "maintenance", "value": "true", "effect": "NoSchedule"}}}


@pytest.fixture
def fake_api() -> Iterator[FakeApiServer]:
    yield from FakeApiServer().serve()


@pytest.fixture
def api_requests(fake_api: FakeApiServer) -> list[tuple[str, str]]:
    """The (method, path) of every request the api_server fixture answered, without the query."""
    class Seen(list[tuple[str, str]]):
        def __iter__(self) -> Iterator[tuple[str, str]]:
            return iter([(method, path) for method, path, _ in fake_api.requests])
    return Seen()


@pytest.fixture
def api_server(request: pytest.FixtureRequest, tmp_path: Path, fake_api: FakeApiServer) -> Iterator[Path]:
    """The param: one HTTP status for every path served (200 by default), or {path: items or HTTP status} added to
    what is served. A path not served answers 404, as an API server does for a version or resource it does not
    serve."""
    param = getattr(request, "param", 200)
    status, added = (param, {}) if isinstance(param, int) else (200, param)
    fake_api.collections.update(_responses())
    for path, value in added.items():
        if isinstance(value, int):
            fake_api.faults[path] = Fault(status=value)
        else:
            fake_api.collections[path] = value
    if status != 200:
        fake_api.faults.update({path: Fault(status=status) for path in [*fake_api.collections, "/version"]})
    yield fake_api.kubeconfig(tmp_path / "kubeconfig")
    assert all(method == "GET" for method, _, _ in fake_api.requests)  # read-only


def test_inventory_from_a_live_cluster(api_server: Path) -> None:
    result = gpu_dra("inventory", "--cluster", "--kubeconfig", str(api_server))
    assert result.returncode == 0, result.stderr
    assert "NVIDIA H100 80GB HBM3  1      8" in result.stdout
    assert ("node ip-10-0-0-9.ec2.internal has NVIDIA GPUs (label nvidia.com/gpu.present=true), but publishes no "
            "ResourceSlice of driver gpu.nvidia.com: is the DRA kubelet plugin running there?" in result.stdout)


def test_inventory_notes_the_gpu_nodes_doctor_finds_without_slices(fake_api: FakeApiServer, tmp_path: Path) -> None:
    """One judgement of "a GPU node without slices" for every verb: a node publishing another driver's slice only
    (compute-domain) publishes none of NVIDIA's GPU driver, for inventory's notes as for doctor's findings."""
    collections = _responses()
    collections["/apis/resource.k8s.io/v1/resourceslices"] = [
        s for s in collections["/apis/resource.k8s.io/v1/resourceslices"] if s["spec"]["driver"] != "gpu.nvidia.com"]
    fake_api.collections.update(collections)
    kubeconfig = str(fake_api.kubeconfig(tmp_path / "kubeconfig"))
    inventory = gpu_dra("inventory", "--cluster", "--kubeconfig", kubeconfig).stdout
    notes = [line.split()[1] for line in inventory.splitlines()
             if "publishes no ResourceSlice of driver gpu.nvidia.com" in line]
    doctor = json.loads(gpu_dra("doctor", "--cluster", "--kubeconfig", kubeconfig, "--format", "json").stdout)
    found = [f["object"].removeprefix("Node ") for f in doctor if f["rule"] == "gpu-node-without-slices"]
    assert notes == found == ["ip-10-0-0-9.ec2.internal", "ip-100-64-147-149.ec2.internal"]


def test_explain_counts_devices_allocated_to_existing_claims(api_server: Path, tmp_path: Path) -> None:
    claim = tmp_path / "claim.yaml"
    claim.write_text(yaml.safe_dump({
        "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {"name": "two", "namespace": "ml"},
        "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu.nvidia.com",
                                                                      "count": 2}}]}}}))
    result = gpu_dra("explain", "--cluster", "--kubeconfig", str(api_server), str(claim), "--claim", "ml/two")
    assert result.returncode == 1  # seven of eight GPUs are taken by ml/busy
    assert "claim ml/two: NOT allocatable" in result.stdout


@pytest.mark.parametrize("api_server", [403], indirect=True)
def test_forbidden_is_a_clear_error(api_server: Path) -> None:
    result = gpu_dra("inventory", "--cluster", "--kubeconfig", str(api_server))
    assert result.returncode == 2
    assert "refused GET /apis/resource.k8s.io/v1/resourceslices: HTTP 403" in result.stderr
    assert ("the identity lacks `list` on resourceslices (API group resource.k8s.io): see the ClusterRole in "
            "docs/troubleshooting.md" in result.stderr)
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize("api_server", [401], indirect=True)
def test_unauthorized_names_the_credentials_and_the_permission(api_server: Path) -> None:
    result = gpu_dra("inventory", "--cluster", "--kubeconfig", str(api_server))
    assert result.returncode == 2
    assert "HTTP 401" in result.stderr and "the kubeconfig's credentials were not accepted" in result.stderr
    assert "`list` on resourceslices (API group resource.k8s.io)" in result.stderr
    assert "Traceback" not in result.stderr


# --------------------------------------------------------------------------------------------- DeviceTaintRules

ONE_GPU = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {"name": "one", "namespace": "ml"},
           "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu.nvidia.com"}}]}}}


@pytest.mark.parametrize("api_server", [
    {f"/apis/resource.k8s.io/{version}/devicetaintrules": _listing("DeviceTaintRule", [_taint_rule("gpu-7")])}
    for version in ("v1", "v1beta2", "v1alpha3")], ids=["v1", "v1beta2", "v1alpha3"], indirect=True)
def test_a_served_device_taint_rule_taints_the_device(api_server: Path, tmp_path: Path) -> None:
    """ml/busy holds gpu-0 to gpu-6; the rule takes gpu-7, the one left, wherever the version's gates apply it."""
    claim = tmp_path / "claim.yaml"
    claim.write_text(yaml.safe_dump(ONE_GPU))
    explain = ("explain", "--cluster", "--kubeconfig", str(api_server), str(claim), "--claim", "ml/one")
    result = gpu_dra(*explain, "--kubernetes-version", "1.37")
    assert result.returncode == 1, result.stderr
    assert ("DeviceTaintRule gpu-maintenance (maintenance=true:NoSchedule): taints 1 device(s): "
            "ip-100-64-147-149.ec2.internal/gpu-7" in result.stdout)
    assert "gpu-7: taint maintenance=true:NoSchedule from DeviceTaintRule gpu-maintenance, not tolerated" \
        in result.stdout
    data = json.loads(gpu_dra(*explain, "--kubernetes-version", "1.37", "--format", "json").stdout)
    assert data["taint_rules"]["applied"] is True
    assert [(r["name"], r["source"], [d["device"] for d in r["devices"]]) for r in data["taint_rules"]["rules"]] \
        == [("gpu-maintenance", "cluster", ["gpu-7"])]
    off = gpu_dra(*explain, "--kubernetes-version", "1.36")  # DRADeviceTaintRules is beta and off in 1.36
    assert off.returncode == 0, off.stdout
    assert "DeviceTaintRule gpu-maintenance (maintenance=true:NoSchedule): not applied" in off.stdout


@pytest.mark.parametrize("api_server", [
    {"/apis/resource.k8s.io/v1beta2/devicetaintrules": _listing("DeviceTaintRule", [_taint_rule("gpu-7")])}],
    indirect=True)
def test_device_taint_rules_are_read_from_the_newest_version_served(api_server: Path,
                                                                    api_requests: list[tuple[str, str]]) -> None:
    result = gpu_dra("inventory", "--cluster", "--kubeconfig", str(api_server))
    assert result.returncode == 0, result.stderr
    assert "serves no DeviceTaintRules" not in result.stdout
    tried = [path.split("?")[0] for _, path in api_requests if "devicetaintrules" in path]
    assert tried == ["/apis/resource.k8s.io/v1/devicetaintrules", "/apis/resource.k8s.io/v1beta2/devicetaintrules"]


def test_a_cluster_serving_no_device_taint_rules_works_with_a_note(api_server: Path, tmp_path: Path,
                                                                  api_requests: list[tuple[str, str]]) -> None:
    """The fixture serves no DeviceTaintRule version, as a 1.34 cluster without the alpha API."""
    result = gpu_dra("inventory", "--cluster", "--kubeconfig", str(api_server))
    assert result.returncode == 0, result.stderr
    assert ("the API server serves no DeviceTaintRules (GET devicetaintrules in resource.k8s.io v1, v1beta2, "
            "v1alpha3: HTTP 404), so the cluster holds none and none were read") in result.stdout
    assert [path for _, path in api_requests if "devicetaintrules" in path] == [
        f"/apis/resource.k8s.io/{version}/devicetaintrules" for version in ("v1", "v1beta2", "v1alpha3")]
    claim = tmp_path / "claim.yaml"
    claim.write_text(yaml.safe_dump(ONE_GPU))
    explained = gpu_dra("explain", "--cluster", "--kubeconfig", str(api_server), str(claim), "--claim", "ml/one",
                        "--kubernetes-version", "1.37")
    assert explained.returncode == 0, explained.stdout + explained.stderr  # gpu-7 is free and untainted
    assert "claim ml/one: allocatable on 1 node(s): ip-100-64-147-149.ec2.internal" in explained.stdout
    assert "DeviceTaintRule gpu" not in explained.stdout  # no rule listed: only the reader's note says why
    assert "note: the API server serves no DeviceTaintRules" in explained.stdout


@pytest.mark.parametrize("api_server", [{"/apis/resource.k8s.io/v1/devicetaintrules": 403}], indirect=True)
def test_forbidden_device_taint_rules_are_an_error_naming_the_resource_and_verb(api_server: Path) -> None:
    """An identity bound to the ClusterRole from before DeviceTaintRules were read: an error, not a note (explain
    would otherwise call free a device the scheduler sees tainted; see read_cluster)."""
    result = gpu_dra("inventory", "--cluster", "--kubeconfig", str(api_server))
    assert result.returncode == 2
    assert ("refused GET /apis/resource.k8s.io/v1/devicetaintrules: HTTP 403 Forbidden (the identity lacks `list` "
            "on devicetaintrules (API group resource.k8s.io): see the ClusterRole in docs/troubleshooting.md)"
            in result.stderr)
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize("api_server", [
    {"/apis/resource.k8s.io/v1beta2/devicetaintrules": _listing("DeviceTaintRule", [_taint_rule("gpu-7")]),
     # Kueue runs: its queues are read too.
     "/apis/kueue.x-k8s.io/v1beta2/workloads": _listing("Workload", []),
     "/apis/kueue.x-k8s.io/v1beta2/localqueues": _listing("LocalQueue", []),
     "/apis/kueue.x-k8s.io/v1beta2/clusterqueues": _listing("ClusterQueue", [])}],
    indirect=True)
def test_the_documented_cluster_role_grants_exactly_what_is_read(api_server: Path,
                                                                 api_requests: list[tuple[str, str]]) -> None:
    """docs/troubleshooting.md's ClusterRole against the requests of every verb that reads a cluster: every one a
    list (a GET of a collection, /version aside: every identity may read it), and each (API group, resource) listed
    granted, no more."""
    for verb in (("inventory",), ("explain",), ("doctor",)):
        result = gpu_dra(*verb, "--cluster", "--kubeconfig", str(api_server))
        assert result.returncode in (0, 1), result.stderr
    read = set()
    for _, path in api_requests:
        if path == "/version":
            continue
        parts = path.strip("/").split("/")
        group, resource = ("", parts[2]) if parts[0] == "api" else (parts[1], parts[3])
        assert len(parts) == (3 if parts[0] == "api" else 4), path  # a collection: RBAC's list, never get
        read.add((group, resource))
    text = (ROOT / "docs" / "troubleshooting.md").read_text()
    blocks = [block.split("\n", 1)[1] for block in text.split("```yaml")[1:] if "kind: ClusterRole\n" in block]
    role = next(doc for doc in yaml.safe_load_all(blocks[0].split("```")[0]) if doc["kind"] == "ClusterRole")
    granted = set()
    for rule in role["rules"]:
        assert rule["verbs"] == ["list"], rule
        granted |= {(group, resource) for group in rule["apiGroups"] for resource in rule["resources"]}
    assert granted == read


# --------------------------------------------------------------------------------------------- hostile clusters


def _kubeconfig(path: Path, server: str, user: dict[str, Any]) -> Path:
    path.write_text(yaml.safe_dump({
        "apiVersion": "v1", "kind": "Config", "current-context": "lab",
        "clusters": [{"name": "lab", "cluster": {"server": server}}], "users": [{"name": "u", "user": user}],
        "contexts": [{"name": "lab", "context": {"cluster": "lab", "user": "u"}}]}))
    return path


@pytest.fixture
def silent_server() -> Iterator[str]:
    """An API server that accepts connections and never answers."""
    listener = socket.create_server(("127.0.0.1", 0))
    held: list[socket.socket] = []

    def accept() -> None:
        with contextlib.suppress(OSError):
            while True:
                held.append(listener.accept()[0])

    threading.Thread(target=accept, daemon=True).start()
    yield f"http://127.0.0.1:{listener.getsockname()[1]}"
    listener.close()
    for connection in held:
        connection.close()


def _timed(*args: str, cwd: Path = ROOT) -> tuple[subprocess.CompletedProcess[str], float]:
    """The CLI run from `cwd`: in the kubeconfig's folder, messages name it `kubeconfig` wherever the test runs (a
    long path would be cut in the middle)."""
    start = time.monotonic()
    result = subprocess.run([sys.executable, "-m", "gpu_dra.cli.main", *args], cwd=cwd, capture_output=True,
                            text=True, timeout=60, env={**os.environ, "PYTHONPATH": str(ROOT)})
    return result, time.monotonic() - start


@pytest.mark.parametrize("verb", [("inventory",), ("explain", "--stack", "dev")])
def test_a_server_that_never_answers_times_out_naming_it(silent_server: str, tmp_path: Path,
                                                         verb: tuple[str, ...]) -> None:
    kubeconfig = _kubeconfig(tmp_path / "kubeconfig", silent_server, {"token": "t"})
    result, took = _timed(*verb, "--cluster", "--kubeconfig", str(kubeconfig), "--request-timeout", "1s")
    assert result.returncode == 2, result.stderr
    assert f"the API server at {silent_server} did not answer GET /version within " \
           "1s" in result.stderr and "--request-timeout" in result.stderr
    assert took < 15  # one attempt, not urllib3's four
    assert "Traceback" not in result.stderr


def test_a_server_that_trickles_its_answer_times_out(tmp_path: Path) -> None:
    """Each byte comes in time for the read timeout; the whole answer does not."""
    class Trickle(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", "1000")
            self.end_headers()
            with contextlib.suppress(OSError):
                for _ in range(1000):
                    self.wfile.write(b" ")
                    self.wfile.flush()
                    time.sleep(0.1)

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Trickle)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    kubeconfig = _kubeconfig(tmp_path / "kubeconfig", f"http://127.0.0.1:{server.server_address[1]}", {"token": "t"})
    try:
        result, took = _timed("inventory", "--cluster", "--kubeconfig", str(kubeconfig), "--request-timeout", "1")
    finally:
        server.shutdown()
    assert result.returncode == 2 and "did not answer GET" in result.stderr, result.stderr
    assert took < 15  # the answer would take 100 s


def test_a_credential_plugin_that_sleeps_is_bounded(silent_server: str, tmp_path: Path) -> None:
    """The message cuts the command (the interpreter's path is as long as the checkout's): its end is asserted."""
    plugin = {"exec": {"apiVersion": "client.authentication.k8s.io/v1beta1", "command": sys.executable,
                       "args": ["-c", "import time; time.sleep(60)"]}}
    _kubeconfig(tmp_path / "kubeconfig", silent_server, plugin)
    result, took = _timed("inventory", "--cluster", "--kubeconfig", "kubeconfig", "--request-timeout", "1s",
                          cwd=tmp_path)
    assert result.returncode == 2
    assert result.stderr.startswith("gpu-dra: kubeconfig kubeconfig: the credential plugin `"), result.stderr
    assert "time.sleep(60)` did not finish within 1s (--request-timeout)" in result.stderr
    assert took < 15


def test_a_failing_credential_plugin_is_reported_not_sent_on_without_credentials(silent_server: str,
                                                                                 tmp_path: Path) -> None:
    plugin = {"exec": {"apiVersion": "client.authentication.k8s.io/v1beta1", "command": sys.executable,
                       "args": ["-c", "import sys; sys.exit('token expired: run aws sso login')"]}}
    _kubeconfig(tmp_path / "kubeconfig", silent_server, plugin)
    result, _ = _timed("inventory", "--cluster", "--kubeconfig", "kubeconfig", cwd=tmp_path)
    assert result.returncode == 2
    assert "kubeconfig kubeconfig: exec: process returned 1. token expired: run aws sso login" in result.stderr


def test_request_timeout_is_checked() -> None:
    result, _ = _timed("inventory", "--cluster", "--request-timeout", "soon")
    assert result.returncode == 2
    assert "argument --request-timeout: 'soon' is not a duration such as 30s, 2m or 0 (no limit)" in result.stderr


@pytest.mark.parametrize("text", [
    "clusters: [a\n",  # not YAML
    "- a\n- b\n",  # a list
    "apiVersion: v1\nclusters: 5\n",  # a number where a list belongs
    "current-context: x\ncontexts: [{name: x, context: 7}]\n",  # a number where a mapping belongs
    "\udcff",  # not UTF-8
])
def test_a_malformed_kubeconfig_is_bad_input_naming_the_file(tmp_path: Path, text: str) -> None:
    (tmp_path / "kubeconfig").write_bytes(text.encode("utf-8", "surrogateescape"))
    result, _ = _timed("inventory", "--cluster", "--kubeconfig", "kubeconfig", cwd=tmp_path)
    assert result.returncode == 2, result.stderr
    assert result.stderr.startswith("gpu-dra: kubeconfig kubeconfig: ") and "Traceback" not in result.stderr


@pytest.mark.parametrize("args, env, said", [
    (["--kubeconfig", "missing.yaml"], {}, "kubeconfig missing.yaml: no such file (--kubeconfig); "),
    ([], {"KUBECONFIG": "a.yaml:b.yaml"}, "kubeconfig a.yaml:b.yaml: no such file (KUBECONFIG); "),
    ([], {"KUBECONFIG": "", "HOME": "."}, "kubeconfig ~/.kube/config: no such file (the default); "),
])
def test_a_missing_kubeconfig_says_how_to_get_one(tmp_path: Path, args: list[str], env: dict[str, str],
                                                  said: str) -> None:
    """Not "Invalid kube-config file": which file, and how to name or write one."""
    result = subprocess.run([sys.executable, "-m", "gpu_dra.cli.main", "inventory", "--cluster", *args], cwd=tmp_path,
                            capture_output=True, text=True, timeout=60,
                            env={**os.environ, "PYTHONPATH": str(ROOT), **env})
    assert result.returncode == 2
    assert result.stderr == f"gpu-dra: {said}name one with --kubeconfig FILE or KUBECONFIG, or write one for an EKS " \
                            "cluster: aws eks update-kubeconfig --name CLUSTER\n"


def test_a_server_that_is_no_url_is_bad_input(tmp_path: Path) -> None:
    kubeconfig = _kubeconfig(tmp_path / "kubeconfig", "lab.example:6443", {"token": "t"})
    result, _ = _timed("inventory", "--cluster", "--kubeconfig", str(kubeconfig))
    assert result.returncode == 2
    assert "the cluster's server 'lab.example:6443' is not an https:// URL" in result.stderr

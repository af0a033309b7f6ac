"""`--cluster`: explain and inventory read a live cluster through a kubeconfig. A local HTTP server plays the API
server (no cluster here), serving the real p5 ResourceSlice dump."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
import yaml

from .test_cli import gpu_dra
from .test_explain import P5


def _listing(kind: str, items: list[dict[str, Any]]) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": f"{kind}List", "metadata": {}, "items": items}


def _responses(status: int) -> dict[str, Any]:
    slices = yaml.safe_load(P5.read_text())["items"]
    claim = {"metadata": {"name": "busy", "namespace": "ml"}, "spec": {"devices": {"requests": []}},
             "status": {"allocation": {"devices": {"results": [
                 {"request": "gpu", "driver": "gpu.nvidia.com", "pool": "ip-100-64-147-149.ec2.internal",
                  "device": f"gpu-{i}"} for i in range(7)]}}}}
    nodes = [{"metadata": {"name": "ip-100-64-147-149.ec2.internal", "labels": {"nvidia.com/gpu.present": "true"}}},
             {"metadata": {"name": "ip-10-0-0-9.ec2.internal", "labels": {"nvidia.com/gpu.present": "true"}}}]
    return {"status": status,
            "/apis/resource.k8s.io/v1/resourceslices": _listing("ResourceSlice", slices),
            "/apis/resource.k8s.io/v1/deviceclasses": _listing("DeviceClass", []),
            "/apis/resource.k8s.io/v1/resourceclaims": _listing("ResourceClaim", [claim]),
            "/api/v1/nodes": _listing("Node", nodes)}


@pytest.fixture
def api_server(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Path]:
    responses = _responses(getattr(request, "param", 200))
    seen: list[tuple[str, str]] = []

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802
            seen.append((self.command, self.path))
            body = responses.get(self.path.split("?")[0])
            status = responses["status"] if body is not None else 404
            payload = json.dumps(body if status == 200 else {"kind": "Status", "code": status}).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.end_headers()
            self.wfile.write(payload)

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(yaml.safe_dump({
        "apiVersion": "v1", "kind": "Config", "current-context": "lab",
        "clusters": [{"name": "lab", "cluster": {"server": f"http://127.0.0.1:{server.server_address[1]}"}}],
        "users": [{"name": "reader", "user": {"token": "t0ken"}}],
        "contexts": [{"name": "lab", "context": {"cluster": "lab", "user": "reader"}}]}))
    yield kubeconfig
    server.shutdown()
    assert all(method == "GET" for method, _ in seen)  # read-only


def test_inventory_from_a_live_cluster(api_server: Path) -> None:
    result = gpu_dra("inventory", "--cluster", "--kubeconfig", str(api_server))
    assert result.returncode == 0, result.stderr
    assert "NVIDIA H100 80GB HBM3  1      8" in result.stdout
    assert ("node ip-10-0-0-9.ec2.internal is labelled nvidia.com/gpu.present=true but publishes no ResourceSlice"
            in result.stdout)


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
    assert "HTTP 403" in result.stderr and "ClusterRole in docs/troubleshooting.md" in result.stderr
    assert "Traceback" not in result.stderr

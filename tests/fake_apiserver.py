"""A Kubernetes API server on 127.0.0.1 for tests (there is no cluster here): it serves recorded objects as a real
one answers list requests, and fails as real ones do.

Shaped as kube-apiserver answers (k8s.io/apiserver pkg/endpoints/handlers/get.go ListResource): a `<Kind>List` with
`metadata.resourceVersion`, items without apiVersion or kind; `limit` cuts a list into pages, each but the last with
`metadata.continue` (an opaque token) and `remainingItemCount`; `fieldSelector` terms `path=value` are applied; a
collection under /namespaces/<ns>/ lists that namespace's items; a path not served answers 404 with a Status, as
for an API version or resource the server does not serve. Every request is recorded, to assert what a command read.
"""

from __future__ import annotations

import base64
import json
import threading
import time
import urllib.parse
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import yaml

EKS_VERSION = {"major": "1", "minor": "35", "gitVersion": "v1.35.2-eks-3cfe0ce", "platform": "linux/amd64"}


@dataclass
class Fault:
    """How one path misbehaves: an HTTP status, a stall before answering, or a body cut short."""

    status: int = 0
    stall: float = 0.0
    truncate: bool = False
    expire_continue: bool = False  # 410 Gone for a continue token, as when the list changed too long ago


@dataclass
class FakeApiServer:
    """Collections by path (/api/v1/pods, /apis/resource.k8s.io/v1/resourceclaims): their items; faults by path."""

    collections: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    faults: dict[str, Fault] = field(default_factory=dict)
    version: Mapping[str, Any] | None = field(default_factory=lambda: EKS_VERSION)
    requests: list[tuple[str, str, dict[str, str]]] = field(default_factory=list)  # (method, path, query)
    # At most this many items a page, whatever the limit asked: an API server may answer with fewer items than
    # `limit` and a continue token (with a fieldSelector it reads etcd in pages of `limit` and filters them).
    page_size: int | None = None
    url: str = ""

    def paths(self) -> list[str]:
        """The paths requested, without their query."""
        return [path for _, path, _ in self.requests]

    def kubeconfig(self, path: Path) -> Path:
        path.write_text(yaml.safe_dump({
            "apiVersion": "v1", "kind": "Config", "current-context": "lab",
            "clusters": [{"name": "lab", "cluster": {"server": self.url}}],
            "users": [{"name": "reader", "user": {"token": "t0ken"}}],
            "contexts": [{"name": "lab", "context": {"cluster": "lab", "user": "reader"}}]}))
        return path

    # ----------------------------------------------------------------------------------------- answering

    def answer(self, method: str, target: str) -> tuple[int, bytes, float]:
        """(status, body, seconds to stall first) for one request."""
        parsed = urllib.parse.urlsplit(target)
        query = dict(urllib.parse.parse_qsl(parsed.query, keep_blank_values=True))
        path = parsed.path
        self.requests.append((method, path, query))
        fault = self.faults.get(path, Fault())
        if method != "GET":
            return 405, _status(405, "MethodNotAllowed"), 0
        if fault.status:
            return fault.status, _status(fault.status, "Forbidden" if fault.status == 403 else "Failure"), fault.stall
        if path == "/version":
            if self.version is None:
                return 404, _status(404, "NotFound"), 0
            return 200, json.dumps(self.version).encode(), fault.stall
        collection, namespace = _collection(path)
        items = self.collections.get(collection)
        if items is None:
            return 404, _status(404, "NotFound"), 0
        if namespace is not None:
            items = [i for i in items if (i.get("metadata") or {}).get("namespace") == namespace]
        items = [i for i in items if _selected(i, query.get("fieldSelector", ""))]
        start = 0
        if query.get("continue"):
            if fault.expire_continue:
                return 410, _status(410, "Expired"), 0
            start = int(base64.b64decode(query["continue"]).decode().split(":")[1])
        limit = int(query.get("limit") or 0) or len(items) or 1
        limit = min(limit, self.page_size or limit)
        page = items[start:start + limit]
        metadata: dict[str, Any] = {"resourceVersion": "48213"}
        if start + limit < len(items):
            metadata["continue"] = base64.b64encode(f"48213:{start + limit}".encode()).decode()
            metadata["remainingItemCount"] = len(items) - start - limit
        kind = _list_kind(collection)
        body = json.dumps({"kind": kind, "apiVersion": _api_version(collection), "metadata": metadata,
                           "items": page}).encode()
        if fault.truncate:
            body = body[: len(body) // 2]
        return 200, body, fault.stall

    def serve(self) -> Iterator[FakeApiServer]:
        server_state = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802
                self._answer("GET")

            def do_POST(self) -> None:  # noqa: N802
                self._answer("POST")

            def _answer(self, method: str) -> None:
                status, body, stall = server_state.answer(method, self.path)
                if stall:
                    time.sleep(stall)
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)
                except (BrokenPipeError, ConnectionResetError):  # the client gave up waiting
                    pass

            def log_message(self, *args: Any) -> None:
                pass

        server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        server.daemon_threads = True
        self.url = f"http://127.0.0.1:{server.server_address[1]}"
        threading.Thread(target=server.serve_forever, daemon=True).start()
        try:
            yield self
        finally:
            server.shutdown()
            server.server_close()


def _status(code: int, reason: str) -> bytes:
    return json.dumps({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                       "reason": reason, "code": code}).encode()


def _collection(path: str) -> tuple[str, str | None]:
    """The all-namespaces path of a request's collection, and its namespace: /api/v1/namespaces/ml/pods ->
    (/api/v1/pods, ml)."""
    parts = path.strip("/").split("/")
    base = 2 if parts[0] == "api" else 3
    if len(parts) == base + 3 and parts[base] == "namespaces":
        return "/" + "/".join(parts[:base] + parts[base + 2:]), parts[base + 1]
    return path, None


def _api_version(collection: str) -> str:
    parts = collection.strip("/").split("/")
    return parts[1] if parts[0] == "api" else f"{parts[1]}/{parts[2]}"


_KINDS = {"resourceslices": "ResourceSlice", "deviceclasses": "DeviceClass", "resourceclaims": "ResourceClaim",
          "resourceclaimtemplates": "ResourceClaimTemplate", "devicetaintrules": "DeviceTaintRule", "nodes": "Node",
          "pods": "Pod", "events": "Event", "resourcequotas": "ResourceQuota"}


def _list_kind(collection: str) -> str:
    return _KINDS.get(collection.rsplit("/", 1)[-1], "Object") + "List"


def _selected(item: Mapping[str, Any], selector: str) -> bool:
    for term in filter(None, selector.split(",")):
        path, _, wanted = term.partition("=")
        value: Any = item
        for key in path.split("."):
            value = value.get(key) if isinstance(value, Mapping) else None
        if str(value or "") != wanted:
            return False
    return True

"""A Kubernetes API server on 127.0.0.1 for tests (there is no cluster here): it serves recorded objects as a real
one answers list requests, and fails as real ones do.

Shaped as kube-apiserver answers (k8s.io/apiserver pkg/endpoints/handlers/get.go ListResource): a `<Kind>List` with
`metadata.resourceVersion`, items without apiVersion or kind; `limit` cuts a list into pages, each but the last with
`metadata.continue` (an opaque token) and `remainingItemCount`; `fieldSelector` terms `path=value` are applied; a
collection under /namespaces/<ns>/ lists that namespace's items; a path not served answers 404 with a Status, as
for an API version or resource the server does not serve; an answer over 128 KiB is gzipped where the client accepts
gzip (k8s.io/apiserver@v0.34.0:pkg/endpoints/handlers/responsewriters/writers.go, defaultGzipThresholdBytes). Every
request is recorded, to assert what a command read.

Faults make it hostile as no real one is: continue tokens without end, an answer of gigabytes, a gzip bomb.
"""

from __future__ import annotations

import base64
import functools
import gzip
import json
import threading
import time
import urllib.parse
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import yaml

EKS_VERSION = {"major": "1", "minor": "35", "gitVersion": "v1.35.2-eks-3cfe0ce", "platform": "linux/amd64"}


GZIP_THRESHOLD = 128 * 1024  # kube-apiserver gzips larger answers to clients that accept it
MIB = 1 << 20


@dataclass
class Fault:
    """How one path misbehaves: an HTTP status, a stall before answering, or a body cut short; or as no Kubernetes
    API server does: pages without end, a body of `size` bytes (streamed, its length announced unless
    `unannounced`: then it ends when the connection closes), gzip that inflates to `gzip_bomb` bytes, a list of
    `empty_items` objects `{}` (3 bytes of JSON, 64 in Python's memory)."""

    status: int = 0
    stall: float = 0.0
    truncate: bool = False
    expire_continue: bool = False  # 410 Gone for a continue token, as when the list changed too long ago
    endless: bool = False  # every page names a new continue token
    same_continue: bool = False  # every page names the continue token it was asked with
    size: int = 0
    unannounced: bool = False
    gzip_bomb: int = 0
    empty_items: int = 0


@dataclass
class Streamed:
    """A body sent in chunks as they are made (gigabytes are never held), with the headers that describe it."""

    chunks: Iterable[bytes]
    length: int | None
    encoding: str = ""


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
    ignore_selectors: bool = False  # as a server that ignores fieldSelector: clients must filter again
    gzipped: int = 0  # answers sent in gzip
    sent: int = 0  # bytes of JSON answered to list requests, before gzip
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

    def answer(self, method: str, target: str, accepts_gzip: bool = False) -> tuple[int, bytes | Streamed, float]:
        """(status, body, seconds to stall first) for one request."""
        parsed = urllib.parse.urlsplit(target)
        query = dict(urllib.parse.parse_qsl(parsed.query, keep_blank_values=True))
        path = parsed.path
        self.requests.append((method, path, query))
        fault = self.faults.get(path, Fault())
        if method != "GET":
            return 405, _status(405, "MethodNotAllowed"), 0
        if fault.size:
            token = f"page-{len(self.requests)}" if fault.endless else ""
            return fault.status or 200, _padded_list(fault.size, not fault.unannounced, token), fault.stall
        if fault.status:
            return fault.status, _status(fault.status, "Forbidden" if fault.status == 403 else "Failure"), fault.stall
        if fault.gzip_bomb:
            return 200, _gzip_bomb(fault.gzip_bomb), fault.stall
        if fault.empty_items:
            return 200, _empty_items(fault.empty_items), fault.stall
        if fault.endless or fault.same_continue:
            token = query.get("continue", "") if fault.same_continue else f"page-{len(self.requests)}"
            return 200, json.dumps({"kind": _list_kind(path), "apiVersion": _api_version(path),
                                    "metadata": {"continue": token or "page-0"}, "items": []}).encode(), fault.stall
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
        if not self.ignore_selectors:
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
        self.sent += len(body)
        if fault.truncate:
            body = body[: len(body) // 2]
        if accepts_gzip and len(body) > GZIP_THRESHOLD:
            self.gzipped += 1
            return 200, Streamed([gzip.compress(body)], None, "gzip"), fault.stall
        return 200, body, fault.stall

    def serve(self) -> Iterator[FakeApiServer]:
        server_state = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802
                self._answer("GET")

            def do_POST(self) -> None:  # noqa: N802
                self._answer("POST")

            def _answer(self, method: str) -> None:
                accepts_gzip = "gzip" in self.headers.get("Accept-Encoding", "")
                status, body, stall = server_state.answer(method, self.path, accepts_gzip)
                if stall:
                    time.sleep(stall)
                streamed = body if isinstance(body, Streamed) else Streamed([body], len(body))
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    if streamed.length is not None:
                        self.send_header("Content-Length", str(streamed.length))
                    if streamed.encoding:
                        self.send_header("Content-Encoding", streamed.encoding)
                    self.end_headers()
                    for chunk in streamed.chunks:
                        self.wfile.write(chunk)
                except (BrokenPipeError, ConnectionResetError):  # the client gave up waiting
                    pass

            def log_message(self, *args: Any) -> None:
                pass

        server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        server.daemon_threads = True
        self.url = f"http://127.0.0.1:{server.server_address[1]}"
        # serve_forever looks for shutdown() once a poll_interval (0.5 s by default): a short one ends the test
        # at once, at the cost of a select() every 10 ms while it runs.
        threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True).start()
        try:
            yield self
        finally:
            server.shutdown()
            server.server_close()


def _padded_list(size: int, announced: bool, token: str = "") -> Streamed:
    """An empty list of `size` bytes, JSON whitespace then the list (as long as a real list that large), naming
    `token` to continue with."""
    tail = json.dumps({"kind": "List", "apiVersion": "v1", "metadata": {"continue": token} if token else {},
                       "items": []}).encode()
    padding = size - len(tail)

    def chunks() -> Iterator[bytes]:
        block = b" " * MIB
        for _ in range(padding // MIB):
            yield block
        yield b" " * (padding % MIB) + tail

    return Streamed(chunks(), size if announced else None)


def _empty_items(count: int) -> Streamed:
    head, tail = b'{"kind": "List", "apiVersion": "v1", "metadata": {}, "items": [{}', b"]}"

    def chunks() -> Iterator[bytes]:
        yield head
        block = b",{}" * (MIB // 3)
        for _ in range((count - 1) // (MIB // 3)):
            yield block
        yield b",{}" * ((count - 1) % (MIB // 3)) + tail

    return Streamed(chunks(), len(head) + 3 * (count - 1) + len(tail))


@functools.cache
def _gzip_member() -> bytes:
    return gzip.compress(b" " * (64 * MIB), 9, mtime=0)  # 64 MiB in 65 kB


def _gzip_bomb(size: int) -> Streamed:
    """gzip (Content-Encoding) of `size` bytes of spaces, in members of 64 MiB (a gzip stream may hold several:
    RFC 1952 section 2.2), which clients inflate as one body."""
    member = _gzip_member()
    count = -(-size // (64 * MIB))
    return Streamed([member] * count, len(member) * count, "gzip")


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

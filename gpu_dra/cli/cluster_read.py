"""The read of a live cluster for `--cluster` (what gpu_dra.cli.cluster describes): the kubeconfig's client
configuration (gpu_dra.cli.kubeconfig), then each list request in pages through the client's connection pool, within
the read's bounds of time, pages, bytes and memory. Imports the kubernetes client: only a run with --cluster loads
this module."""

from __future__ import annotations

import json
import os
import time
import urllib.parse
import zlib
from collections.abc import Sequence
from typing import Any

import urllib3
from kubernetes import client
from urllib3.exceptions import NewConnectionError
from urllib3.exceptions import TimeoutError as RequestTimeout

from gpu_dra.cli.arguments import DEFAULT_REQUEST_TIMEOUT
from gpu_dra.cli.cluster import (
    CHUNK,
    DEVICE_READS,
    OBJECTS_PER_READ,
    PAGE,
    PAGES_PER_LIST,
    PAGES_PER_READ,
    READ_BYTES,
    READ_DEADLINE_REQUESTS,
    READ_MEMORY,
    RESPONSE_BYTES,
    SLICES,
    TAINT_RULE_VERSIONS,
    TAINT_RULES,
    VERSION_PATH,
    ClusterError,
    ClusterState,
    Read,
)
from gpu_dra.cli.kubeconfig import client_configuration, credential_plugins
from gpu_dra.cli.text import cut
from gpu_dra.core.data import mapping
from gpu_dra.core.yamlsource import parsed_size


class _Stalled(Exception):
    """A response took longer than the time limit, though each read of it came in time."""


class _Refused(Exception):
    """The API server answered with an HTTP status other than 2xx."""

    def __init__(self, status: int, reason: str):
        super().__init__(status, reason)
        self.status, self.reason = status, reason


def read_cluster(kubeconfig: str | None, context: str | None,
                 timeout: float | None = DEFAULT_REQUEST_TIMEOUT, reads: Sequence[Read] = DEVICE_READS,
                 namespace: str | None = None, memory: int = READ_MEMORY) -> ClusterState:
    """Every object of `reads` and the DeviceTaintRules, with a note where the API server serves no DeviceTaintRules
    (what the objects say, such as GPU nodes without slices, is for the verbs to judge: doctor.silent_gpu_nodes).
    `timeout`: seconds per request and for the credential plugin, None for no limit (then the read as a whole has
    none either). `namespace`: where the namespaced reads list, None for all. `memory`: what the parsed objects
    may take (READ_MEMORY)."""
    source = cut(kubeconfig or os.environ.get("KUBECONFIG") or "~/.kube/config")
    state = ClusterState()
    with credential_plugins(timeout) as plugins:
        configuration = client_configuration(kubeconfig, context, source, plugins)
        narrower = " With explain, -n NAMESPACE reads one namespace's pods and events." \
            if namespace is None and any(read.namespaced for read in reads) else ""
        reader = _Reader(client.ApiClient(configuration), timeout, narrower, memory)
        endpoint = reader.endpoint
        listed: dict[str, list[dict[str, Any]]] = {}
        rules_version = None  # the version DeviceTaintRules were listed in, None where none serves them
        path, read = VERSION_PATH, SLICES
        try:
            state.version = reader.server_version()
            refused: set[str] = set()  # the optional kinds not read
            for read in reads:
                if read.with_kind in refused:
                    listed[read.kind] = []
                    continue
                path = _path(read, namespace)
                try:
                    listed[read.kind] = reader.list(path, read)
                except _Refused as error:
                    if not read.optional or error.status not in (403, 404):
                        raise
                    listed[read.kind] = []
                    refused.add(read.kind)
                    state.notes.append(_optional_note(read, error.status))
            for api_version in TAINT_RULE_VERSIONS:
                read = Read(api_version, TAINT_RULES, "DeviceTaintRule")
                path = _path(read, None)
                try:
                    listed["DeviceTaintRule"] = reader.list(path, read)
                except _Refused as error:
                    if error.status == 404:  # this version does not serve them: try the next
                        continue
                    # Anything else is handled as for the other kinds. A 403 in particular is an error, not a note:
                    # without the rules explain would call free a device the scheduler sees tainted, and the API
                    # server authorizes a request before it looks for the resource, so a 403 does not say the
                    # cluster has no rules. The fix is one line of the ClusterRole, which the message names.
                    raise
                rules_version = api_version
                break
        except (_Stalled, RequestTimeout) as error:
            if isinstance(error, NewConnectionError):  # urllib3 files a refused connection under timeouts
                raise ClusterError(f"cannot reach the API server at {endpoint}: {cut(str(error))}") from None
            if reader.past_deadline():
                raise ClusterError(f"reading the cluster at {endpoint} took longer than {reader.deadline_seconds:g}s "
                                   f"in all ({READ_DEADLINE_REQUESTS} times --request-timeout), at GET {path}: a slow "
                                   "cluster may need a longer --request-timeout, which extends this too") from None
            limit = f"{timeout:g}s" if timeout else "the system's limit"
            raise ClusterError(f"the API server at {endpoint} did not answer GET {path} within {limit}: is it "
                               "reachable from here (VPN, private endpoint)? A slow cluster may need "
                               "--request-timeout 2m") from None
        except _Refused as error:
            if plugins.messages:  # a credential refresh failed on the way
                raise ClusterError(f"kubeconfig {source}: {plugins.first()}") from None
            hint = _refusal_hint(error.status, read, namespace, state.version)
            raise ClusterError(f"the API server at {endpoint} refused GET {path}: HTTP {error.status} "
                               f"{cut(str(error.reason), 100)}{hint}") from None
        except ClusterError:
            raise
        except MemoryError:  # where else than in building a body or its objects (see _Reader): say what it was
            raise ClusterError(f"memory ran out while the answer to GET {path} from {endpoint} was read: the "
                               "machine has too little for this cluster's objects") from None
        except Exception as error:  # connection refused, DNS, TLS, a bad server URL: urllib3 raises many kinds
            raise ClusterError(f"cannot reach the API server at {endpoint}: {type(error).__name__}: "
                               f"{cut(str(error))}") from None
        finally:
            reader.api_client.close()
    state.objects = [{"apiVersion": read.api_version, "kind": read.kind, **item}
                     for read in reads for item in listed[read.kind]]
    if rules_version is not None:
        state.objects += [{"apiVersion": rules_version, "kind": "DeviceTaintRule", **item}
                          for item in listed["DeviceTaintRule"]]
    if rules_version is None:
        versions = ", ".join(v.rpartition("/")[2] for v in TAINT_RULE_VERSIONS)
        state.notes.append(f"the API server serves no DeviceTaintRules (GET {TAINT_RULES} in resource.k8s.io "
                           f"{versions}: HTTP 404), so the cluster holds none and none were read")
    return state


def _optional_note(read: Read, status: int) -> str:
    """Why an add-on's objects were not read: the cluster does not serve them, or the identity may not list them."""
    group = read.api_version.rpartition("/")[0]
    if status == 404:
        return (f"the API server serves no {read.resource} in {read.api_version} (HTTP 404): Kueue is not installed "
                "(or not at that API version), so no pod is judged as held by it")
    lost = ("pods Kueue holds are named by their admission gate only" if not read.with_kind else
            "whether a held pod's cohort could lend it quota is not said")
    return (f"the identity may not list {read.resource} (API group {group}, HTTP 403): {lost}; the ClusterRole in "
            "docs/troubleshooting.md grants it")


def _path(read: Read, namespace: str | None) -> str:
    """The list path: /api/v1/nodes for the core group, /apis/<group>/<version>/<resource> else, with
    /namespaces/<ns> before the resource for a namespaced read in one namespace."""
    prefix = f"/apis/{read.api_version}" if "/" in read.api_version else f"/api/{read.api_version}"
    scope = f"/namespaces/{urllib.parse.quote(namespace, safe='')}" if namespace and read.namespaced else ""
    return f"{prefix}{scope}/{read.resource}"


def _refusal_hint(status: int, read: Read, namespace: str | None, version: str | None) -> str:
    """What a refusal of `read`'s list means: the permission it needs (401, 403), named as RBAC does, or the API
    the server does not serve (404)."""
    group = read.api_version.rpartition("/")[0]
    where = f" in namespace {cut(namespace, 63)}" if namespace and read.namespaced else ""
    what = f"`list` on {read.resource} ({f'API group {group}' if group else 'the core API group'}){where}"
    if status == 403:
        return f" (the identity lacks {what}: see the ClusterRole in docs/troubleshooting.md)"
    if status == 401:
        return (f" (the kubeconfig's credentials were not accepted: renew them; the identity then needs {what}, as "
                "the ClusterRole in docs/troubleshooting.md grants)")
    if status == 404 and read.api_version == "resource.k8s.io/v1":
        minor = ClusterState(version=version).minor
        if minor is None or tuple(map(int, minor.split("."))) < (1, 34):
            running = f"; this API server is {cut(version, 40)}" if version else ""
            return (f" (the API server does not serve {read.api_version}: DRA's v1 API is served from Kubernetes "
                    f"1.34{running}; upgrade the cluster to 1.34 or later)")
        return (f" (this {cut(version or '', 40)} API server does not serve {read.resource} in {read.api_version}, "
                "which Kubernetes serves from 1.34: is the API turned off with --runtime-config?)")
    return ""


class _Reader:
    """The GET requests of one read, within its bounds: each answer within `timeout` seconds in all and
    RESPONSE_BYTES, each list within PAGES_PER_LIST pages, and the read as a whole within PAGES_PER_READ pages,
    READ_BYTES, OBJECTS_PER_READ, READ_DEADLINE_REQUESTS times `timeout`, and `memory` for what the pages take
    once parsed, estimated before each is parsed; where the memory runs out even so, the error says so.

    Requests go through the client's connection pool (its TLS, proxy and credentials, refreshed by the exec plugin
    as the client does) but not through its REST layer, which reads the whole body of an error answer into memory
    (kubernetes-client/python@v35.0.0: kubernetes/client/rest.py RESTClientObject.request, ApiException) and would
    inflate gzip in urllib3 without bounds of ours. Answers are asked for in gzip, as kubectl asks them (Go's
    http.Transport asks unless client-go's rest.Config DisableCompression is set; kube-apiserver compresses answers
    over 128 KiB, k8s.io/apiserver@v0.34.0: pkg/endpoints/handlers/responsewriters/writers.go), and inflated here
    within the bounds."""

    def __init__(self, api_client: Any, timeout: float | None, narrower: str, memory: int = READ_MEMORY):
        self.api_client = api_client
        self.memory_limit = memory
        self.memory = 0  # the estimated size of the pages parsed
        self.timeout = timeout
        self.narrower = narrower  # how to read less, where a bound of the read as a whole is passed
        self.endpoint = cut(str(api_client.configuration.host), 100)
        self.deadline_seconds = READ_DEADLINE_REQUESTS * (timeout or 0)
        self.deadline = time.monotonic() + self.deadline_seconds if timeout else None
        self.pages = 0
        self.bytes = 0
        self.objects = 0

    def past_deadline(self) -> bool:
        return self.deadline is not None and time.monotonic() >= self.deadline

    def server_version(self) -> str | None:
        """The API server's gitVersion, or None where /version is not readable (it is public by default, but a
        cluster may restrict it; nothing depends on it alone). A 401 is raised: no other request would be accepted
        either."""
        try:
            body = self.get(VERSION_PATH)
        except _Refused as error:
            if error.status in (403, 404):
                return None
            raise
        try:
            version = json.loads(body).get("gitVersion")
        except (ValueError, AttributeError, RecursionError):
            return None
        return version if isinstance(version, str) else None

    def get(self, path: str, query: Sequence[tuple[str, str]] = ()) -> bytearray:
        """The body of one GET, inflated, read within the time limit in all (a limit per read alone lets a server
        that trickles its answer take as long as it likes) and within the bounds of bytes."""
        limit = self.timeout
        if limit is not None and self.deadline is not None:
            limit = min(limit, self.deadline - time.monotonic())
            if limit <= 0:
                raise _Stalled
        headers = {**self.api_client.default_headers, "Accept": "application/json", "Accept-Encoding": "gzip"}
        self.api_client.update_params_for_auth(headers, [], ["BearerToken"])
        response = self.api_client.rest_client.pool_manager.request(
            "GET", f"{self.api_client.configuration.host}{path}", fields=list(query), headers=headers,
            preload_content=False, decode_content=False,
            timeout=urllib3.Timeout(connect=limit, read=limit) if limit else None)
        try:
            if not 200 <= response.status <= 299:  # the status says enough: the body is not read
                raise _Refused(response.status, response.reason or "")
            body = self._body(path, response, limit)
        except BaseException:
            response.close()  # what is left of the answer is not read
            raise
        response.release_conn()
        self.bytes += len(body)
        return body

    def _body(self, path: str, response: Any, limit: float | None) -> bytearray:
        encoding = str(response.headers.get("Content-Encoding", "identity")).strip().lower()
        if encoding not in ("identity", "gzip"):
            raise ClusterError(f"the API server at {self.endpoint} answered GET {path} in Content-Encoding "
                               f"{cut(encoding, 40)!r}, which was not asked for (Accept-Encoding: gzip): is the "
                               "kubeconfig's server a Kubernetes API server?")
        announced = str(response.headers.get("Content-Length", ""))
        if announced.isdigit() and int(announced) > RESPONSE_BYTES:
            raise self._too_large(path, f"of {int(announced):,} bytes (its Content-Length)")
        gunzip = _Gunzip() if encoding == "gzip" else None
        deadline = time.monotonic() + limit if limit else None
        received = 0
        body = bytearray()
        try:
            # what has come, not a full block: the deadline and the bounds are checked in between
            while chunk := response.read1(CHUNK, decode_content=False):
                received += len(chunk)
                if received > RESPONSE_BYTES:
                    raise self._too_large(path, f"of more than {RESPONSE_BYTES:,} bytes")
                room = min(RESPONSE_BYTES, READ_BYTES - self.bytes) - len(body)
                body += gunzip.inflate(chunk, room) if gunzip else chunk
                if len(body) > RESPONSE_BYTES:
                    inflated = f" (inflated from {received:,})" if gunzip else ""
                    raise self._too_large(path, f"of more than {RESPONSE_BYTES:,} bytes{inflated}")
                if self.bytes + len(body) > READ_BYTES:
                    raise ClusterError(f"the API server at {self.endpoint} answered more than {READ_BYTES:,} bytes "
                                       f"in all by GET {path}, more than a 5,000-node cluster's objects: is the "
                                       "kubeconfig's server a Kubernetes API server?" + self.narrower)
                if deadline is not None and time.monotonic() > deadline:
                    raise _Stalled
        except MemoryError:
            raise ClusterError(f"memory ran out while the answer to GET {path} from {self.endpoint} was read "
                               f"({len(body):,} bytes held): the machine has too little for this cluster's "
                               "objects") from None
        except zlib.error as error:
            raise ClusterError(f"the API server at {self.endpoint} answered GET {path} with gzip that does not "
                               f"inflate ({cut(str(error), 100)}): is there a proxy between that breaks it?") from None
        if gunzip is not None and not gunzip.complete():
            raise ClusterError(f"the API server at {self.endpoint} answered GET {path} with gzip cut short: is "
                               "there a proxy between that drops the connection?")
        return body

    def _too_large(self, path: str, what: str) -> ClusterError:
        return ClusterError(f"the API server at {self.endpoint} answered GET {path} with a body {what}, more "
                            f"than one answer may hold ({RESPONSE_BYTES >> 20} MiB; a page of {PAGE} objects of a "
                            "5,000-node cluster is ~10 MB): is the kubeconfig's server a Kubernetes API server, one "
                            "that honours `limit`?")

    def list(self, path: str, read: Read) -> list[dict[str, Any]]:
        """Every item of a list, page by page (`limit`, then the `continue` token each page returns). A token that
        expired (HTTP 410, the list changed for longer than the server keeps it) is an error: a list stitched from
        two moments could hold an object twice or miss one."""
        items: list[dict[str, Any]] = []
        token = ""
        tokens: set[str] = set()
        for page_number in range(1, PAGES_PER_LIST + 1):
            query = [("limit", str(PAGE))] + ([("fieldSelector", read.selector)] if read.selector else []) \
                + ([("continue", token)] if token else [])
            if self.pages == PAGES_PER_READ:
                raise ClusterError(f"the API server at {self.endpoint} answered more than {PAGES_PER_READ:,} pages "
                                   f"in all by GET {path}, more than a 5,000-node cluster's objects: is the "
                                   "kubeconfig's server a Kubernetes API server?" + self.narrower)
            self.pages += 1
            try:
                body = self.get(path, query)
            except _Refused as error:
                if error.status == 410 and token:
                    raise ClusterError(f"the API server at {self.endpoint} let the list of {read.resource} expire "
                                       "while it was read in pages (HTTP 410 Gone): the cluster changed meanwhile; "
                                       "run again") from None
                raise
            self.memory += parsed_size(body, "json")
            if self.memory > self.memory_limit:
                raise ClusterError(f"the objects the API server at {self.endpoint} answered, up to GET {path}, would "
                                   f"take about {self.memory >> 20:,} MiB of memory once parsed, more than "
                                   f"--read-memory ({self.memory_limit >> 20:,} MiB): raise it for a cluster this "
                                   "large" + self.narrower)
            try:
                page = json.loads(body)
                found, token = page.get("items") or [], (page.get("metadata") or {}).get("continue") or ""
            except MemoryError:
                raise ClusterError(f"memory ran out while the answer to GET {path} from {self.endpoint} was parsed "
                                   f"({len(body):,} bytes of JSON): the machine has too little for this cluster's "
                                   "objects") from None
            except (ValueError, AttributeError, RecursionError):
                raise ClusterError(f"the API server at {self.endpoint} answered GET {path} with {len(body):,} bytes "
                                   "that are not JSON (cut short?): is the kubeconfig's server a Kubernetes API "
                                   "server, or a proxy between that drops the connection?") from None
            del body
            if not isinstance(found, list) or not all(isinstance(item, dict) for item in found) \
                    or not isinstance(token, str):
                raise ClusterError(f"the API server at {self.endpoint} answered GET {path} with something other "
                                   "than a list of objects: is the kubeconfig's server a Kubernetes API server?")
            self.objects += len(found)
            if self.objects > OBJECTS_PER_READ:
                raise ClusterError(f"the API server at {self.endpoint} answered more than {OBJECTS_PER_READ:,} "
                                   f"objects in all by GET {path}, more than a 5,000-node cluster holds: is the "
                                   "kubeconfig's server a Kubernetes API server?" + self.narrower)
            items += [item for item in found if self._selected(item, read, path)]
            if not token:
                return items
            if token in tokens:
                raise ClusterError(f"the API server at {self.endpoint} answered GET {path} page {page_number} with "
                                   "a continue token it gave before: the list would never end. Is the "
                                   "kubeconfig's server a Kubernetes API server?")
            tokens.add(token)
        raise ClusterError(f"the API server at {self.endpoint} answered GET {path} with more than {PAGES_PER_LIST} "
                           f"pages of up to {PAGE} objects (continue tokens without end?), more than a 5,000-node "
                           "cluster's list: is the kubeconfig's server a Kubernetes API server?"
                           + (self.narrower if read.namespaced else ""))

    def _selected(self, item: dict[str, Any], read: Read, path: str) -> bool:
        """Whether an item satisfies the read's fieldSelector of `path=value` terms (the only form used here): an
        API server that ignores the selector must not widen what is explained. A selected field that is not a
        string (a Pod's spec.nodeName a list) is no API server's: an error naming the object."""
        for term in filter(None, read.selector.split(",")):
            field_path, _, wanted = term.partition("=")
            value: Any = item
            for key in field_path.split("."):
                value = value.get(key) if isinstance(value, dict) else None
            if value is not None and not isinstance(value, str):
                meta = mapping(item.get("metadata"))
                name = "/".join(cut(str(meta[key]), 100) for key in ("namespace", "name") if meta.get(key))
                raise ClusterError(f"the API server at {self.endpoint} answered GET {path} with {read.kind} "
                                   f"{name or '(no name)'} whose {field_path} is {_json_type(value)}, not a string: "
                                   "is the kubeconfig's server a Kubernetes API server?")
            if (value or "") != wanted:
                return False
        return True


class _Gunzip:
    """gzip as kube-apiserver sends it where asked (Accept-Encoding), inflated a received chunk at a time and never
    to more than the room left, so that a small answer cannot grow without bound (a gzip bomb) before its size is
    checked. A stream may hold several members, read as one (RFC 1952 section 2.2)."""

    def __init__(self) -> None:
        self.member = zlib.decompressobj(16 + zlib.MAX_WBITS)
        self.fed = False

    def inflate(self, data: bytes, room: int) -> bytes:
        """What `data` inflates to, up to `room` + 1 bytes (more than `room`: too large, the rest is not inflated)."""
        out = b""
        while data:
            self.fed = True
            out += self.member.decompress(data, room + 1 - len(out))  # always >= 1: 0 would mean no limit
            if len(out) > room or not self.member.eof:  # full, or all of `data` taken
                break
            data = self.member.unused_data  # the next member
            self.member, self.fed = zlib.decompressobj(16 + zlib.MAX_WBITS), False
        return out

    def complete(self) -> bool:
        """Whether the stream ended at the end of a member."""
        return self.member.eof or not self.fed


def _json_type(value: Any) -> str:
    return {dict: "a mapping", list: "a list", bool: "a boolean", int: "a number", float: "a number"}.get(
        type(value), type(value).__name__)

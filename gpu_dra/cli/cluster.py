"""Read what explain, inventory and doctor need from a live cluster, read-only, through a kubeconfig.

Each verb names what it lists (`Read`s: ResourceSlices, DeviceClasses and ResourceClaims of resource.k8s.io/v1,
Nodes, and for Pending pods their Pods, ResourceClaimTemplates and scheduling Events), plus DeviceTaintRules from the
version the API server serves them in, if any, and the server's version; nothing is written. Lists are read in pages
(`limit` and `continue`, as kubectl does), so a large cluster's Pods do not come in one answer. The ClusterRole this
needs is in docs/troubleshooting.md. Each request and the kubeconfig's credential plugin have a time limit
(`--request-timeout`): an API server that accepts and never answers, or a plugin that waits, must not hang a CI job.
The kubernetes client gives neither a limit by default.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import subprocess
import time
import types
import urllib.parse
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from gpu_dra.cli.common import DEFAULT_REQUEST_TIMEOUT, cut
from gpu_dra.core.config.models import DRA_NODE_LABEL


class Read(NamedTuple):
    """One list request: RBAC's `list` verb on the resource. `namespaced`: listed in `--namespace` when one is given
    (else in all namespaces); `selector`: a fieldSelector the API server applies, so that only what is needed
    crosses the wire (the result is filtered again here, in case a server ignores it)."""

    api_version: str
    resource: str
    kind: str
    namespaced: bool = False
    selector: str = ""


SLICES = Read("resource.k8s.io/v1", "resourceslices", "ResourceSlice")
CLASSES = Read("resource.k8s.io/v1", "deviceclasses", "DeviceClass")
CLAIMS = Read("resource.k8s.io/v1", "resourceclaims", "ResourceClaim")  # every namespace's: they hold devices
NODES = Read("v1", "nodes", "Node")
TEMPLATES = Read("resource.k8s.io/v1", "resourceclaimtemplates", "ResourceClaimTemplate", namespaced=True)
# Pods the scheduler has not placed: Pending and bound to no node (field selectors of pods: kubernetes
# pkg/registry/core/pod/strategy.go PodToSelectableFields).
PENDING_PODS = Read("v1", "pods", "Pod", namespaced=True, selector="status.phase=Pending,spec.nodeName=")
# The scheduler's verdicts (core/v1 events are selectable by reason: pkg/registry/core/event/strategy.go).
SCHEDULING_EVENTS = Read("v1", "events", "Event", namespaced=True, selector="reason=FailedScheduling")
QUOTAS = Read("v1", "resourcequotas", "ResourceQuota", namespaced=True)

# What explain and inventory read with FILEs; what `explain --cluster` alone reads to explain Pending pods.
DEVICE_READS = (SLICES, CLASSES, CLAIMS, NODES)
PENDING_READS = (*DEVICE_READS, TEMPLATES, PENDING_PODS, SCHEDULING_EVENTS)
# DeviceTaintRules have no version every cluster serves: resource.k8s.io/v1alpha3 from 1.33, v1beta2 from 1.36, v1
# from 1.37 (`prerelease-lifecycle-gen:introduced` in kubernetes/api@v0.34.0:resource/v1alpha3/types.go,
# @v0.36.0:resource/v1beta2/types.go, and @v0.37.0-beta.0:resource/v1/types.go, not yet released), and an alpha or
# beta version only where the API server enables it. The versions are tried newest first; a 404 means that one does
# not serve them (the same objects in every version served), and none served means the cluster holds none.
TAINT_RULES = "devicetaintrules"
TAINT_RULE_VERSIONS = ("resource.k8s.io/v1", "resource.k8s.io/v1beta2", "resource.k8s.io/v1alpha3")
PAGE = 500  # items per list request, kubectl's chunk size (--chunk-size)
VERSION_PATH = "/version"  # readable by every authenticated identity (ClusterRole system:public-info-viewer)


@dataclass
class ClusterState:
    """What was read: every object with apiVersion and kind set, notes for the reader, and the API server's
    version (`gitVersion`, e.g. v1.35.2-eks-3cfe0ce), None where /version could not be read."""

    objects: list[dict[str, Any]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    version: str | None = None

    def of(self, kind: str) -> list[dict[str, Any]]:
        return [o for o in self.objects if o.get("kind") == kind]

    @property
    def minor(self) -> str | None:
        """The server's Kubernetes minor version, "1.35", from its gitVersion."""
        import re

        match = re.match(r"v?(\d+)\.(\d+)", self.version or "")
        return f"{match.group(1)}.{match.group(2)}" if match else None

    @property
    def on_eks(self) -> bool:
        """EKS builds carry `-eks-` in their gitVersion (v1.35.2-eks-3cfe0ce)."""
        return "-eks-" in (self.version or "")


class ClusterError(Exception):
    """The cluster could not be read: the message says what and what to do."""


class _Stalled(Exception):
    """A response took longer than the time limit, though each read of it came in time."""


class _PluginFailures(logging.Handler):
    """The kubeconfig loader logs a failed credential plugin and goes on without credentials (the API server then
    answers 401); collect those failures to report them instead. Other records go where they would have gone."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)  # what Python shows when no handler is set
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        if record.levelno >= logging.ERROR and os.path.basename(record.pathname) == "kube_config.py":
            self.messages.append(record.getMessage())
        elif logging.lastResort is not None:
            logging.lastResort.handle(record)


@contextlib.contextmanager
def _credential_plugins(limit: float | None) -> Iterator[_PluginFailures]:
    """While the cluster is read, the kubeconfig's exec credential plugin (`aws eks get-token`) runs at most `limit`
    seconds (the client waits on it forever), and its failures are collected rather than logged."""
    from kubernetes.config import exec_provider

    failures = _PluginFailures()

    class Bounded(subprocess.Popen[str]):
        def communicate(self, input: str | None = None, timeout: float | None = None) -> tuple[str, str]:
            try:
                return super().communicate(input, timeout if timeout is not None else limit)
            except subprocess.TimeoutExpired:
                self.kill()
                super().communicate()
                command = " ".join(map(str, self.args if isinstance(self.args, list) else [self.args]))
                failures.messages.append(f"the credential plugin `{cut(command, 100)}` did "
                                         f"not finish within {limit:g}s (--request-timeout)")
                raise

    root = logging.getLogger()
    root.addHandler(failures)
    original = exec_provider.subprocess
    exec_provider.subprocess = types.SimpleNamespace(Popen=Bounded, PIPE=subprocess.PIPE)
    try:
        yield failures
    finally:
        exec_provider.subprocess = original
        root.removeHandler(failures)


def _kubeconfig_problem(error: Exception) -> str:
    """The loader fails on a malformed file with whatever Python raised (TypeError, AttributeError, a YAML error)."""
    from kubernetes.config.config_exception import ConfigException

    text = " ".join(str(error).split())
    if isinstance(error, ConfigException | OSError):
        return cut(text)
    return f"not a valid kubeconfig ({type(error).__name__}: {cut(text)}); `kubectl config view` shows how it reads"


def read_cluster(kubeconfig: str | None, context: str | None,
                 timeout: float | None = DEFAULT_REQUEST_TIMEOUT, reads: Sequence[Read] = DEVICE_READS,
                 namespace: str | None = None) -> ClusterState:
    """Every object of `reads` and the DeviceTaintRules, with a note where the API server serves no DeviceTaintRules
    (what the objects say, such as GPU nodes without slices, is for the verbs to judge: silent_gpu_nodes).
    `timeout`: seconds per request and for the credential plugin, None for no limit. `namespace`: where the
    namespaced reads list, None for all."""
    from kubernetes import client, config
    from kubernetes.client.exceptions import ApiException
    from urllib3.exceptions import NewConnectionError
    from urllib3.exceptions import TimeoutError as RequestTimeout

    source = cut(kubeconfig or os.environ.get("KUBECONFIG") or "~/.kube/config")
    state = ClusterState()
    with _credential_plugins(timeout) as plugins:
        configuration = client.Configuration()
        try:
            config.load_kube_config(config_file=kubeconfig, context=context, client_configuration=configuration)
        except Exception as error:  # every failure here is the file's: see _kubeconfig_problem
            raise ClusterError(f"kubeconfig {source}: {_kubeconfig_problem(error)}") from None
        if plugins.messages:  # no credentials: every request would be refused
            raise ClusterError(f"kubeconfig {source}: {cut(plugins.messages[0])}")
        if not str(configuration.host).startswith(("https://", "http://")):
            raise ClusterError(f"kubeconfig {source}: the cluster's server {cut(str(configuration.host), 100)!r} is "
                               "not an https:// URL")
        configuration.retries = False  # urllib3 would repeat a request that timed out three more times
        endpoint = cut(str(configuration.host), 100)
        api_client = client.ApiClient(configuration)
        listed: dict[str, list[dict[str, Any]]] = {}
        rules_version = None  # the version DeviceTaintRules were listed in, None where none serves them
        path, read = VERSION_PATH, SLICES
        try:
            state.version = _server_version(api_client, timeout, endpoint)
            for read in reads:
                path = _path(read, namespace)
                listed[read.kind] = _list(api_client, path, read, timeout, endpoint)
            for api_version in TAINT_RULE_VERSIONS:
                read = Read(api_version, TAINT_RULES, "DeviceTaintRule")
                path = _path(read, None)
                try:
                    listed["DeviceTaintRule"] = _list(api_client, path, read, timeout, endpoint)
                except ApiException as error:
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
            limit = f"{timeout:g}s" if timeout else "the system's limit"
            raise ClusterError(f"the API server at {endpoint} did not answer GET {path} within {limit}: is it "
                               "reachable from here (VPN, private endpoint)? A slow cluster may need "
                               "--request-timeout 2m") from None
        except ApiException as error:
            if plugins.messages:  # a credential refresh failed on the way
                raise ClusterError(f"kubeconfig {source}: {cut(plugins.messages[0])}") from None
            if not error.status:  # TLS and other failures before any answer
                raise ClusterError(f"cannot reach the API server at {endpoint}: {cut(str(error.reason))}") from None
            hint = _refusal_hint(error.status, read, namespace, state.version)
            raise ClusterError(f"the API server at {endpoint} refused GET {path}: HTTP {error.status} "
                               f"{cut(str(error.reason), 100)}{hint}") from None
        except ClusterError:
            raise
        except Exception as error:  # connection refused, DNS, a bad server URL: urllib3 raises many kinds
            raise ClusterError(f"cannot reach the API server at {endpoint}: {type(error).__name__}: "
                               f"{cut(str(error))}") from None
        finally:
            api_client.close()
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


def silent_gpu_nodes(slices: list[dict[str, Any]], nodes: list[dict[str, Any]]) -> list[str]:
    """Notes on DRA GPU nodes that publish no ResourceSlice, for inventory and explain (doctor reports them as
    findings of its own)."""
    publishing = {_mapping(o.get("spec")).get("nodeName") for o in slices}
    key, value = DRA_NODE_LABEL
    notes = []
    for node in nodes:
        meta = _mapping(node.get("metadata"))
        labels = _mapping(meta.get("labels"))
        # from 1.35 the AL2023 NVIDIA AMI labels device-plugin nodes gpu.present too: those publish no slices
        if (labels.get(key) == value and labels.get("gpu-dra.io/allocation") != "device-plugin"
                and meta.get("name") not in publishing):
            notes.append(f"node {cut(str(meta.get('name')), 100)} is labelled {key}={value} but publishes no "
                         "ResourceSlice: is the DRA kubelet plugin running there?")
    return notes


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


def _server_version(api_client: Any, timeout: float | None, endpoint: str) -> str | None:
    """The API server's gitVersion, or None where /version is not readable (it is public by default, but a cluster
    may restrict it; nothing depends on it alone). A 401 is raised: no other request would be accepted either."""
    from kubernetes.client.exceptions import ApiException

    try:
        body = _get(api_client, VERSION_PATH, timeout)
    except ApiException as error:
        if error.status in (403, 404):
            return None
        raise
    try:
        version = json.loads(body).get("gitVersion")
    except (ValueError, AttributeError, RecursionError):
        return None
    return version if isinstance(version, str) else None


def _get(api_client: Any, path: str, timeout: float | None, query: Sequence[tuple[str, str]] = ()) -> bytes:
    """The body of one GET, read within `timeout` seconds in all (a limit per read alone lets a server that
    trickles its answer take as long as it likes)."""
    response = api_client.call_api(path, "GET", query_params=list(query),
                                   header_params={"Accept": "application/json"},
                                   auth_settings=["BearerToken"], _preload_content=False,
                                   _request_timeout=(timeout, timeout) if timeout else None,
                                   _return_http_data_only=True)
    deadline = time.monotonic() + timeout if timeout else None
    body = bytearray()
    while chunk := response.read1(1 << 16):  # what has come, not a full block: the deadline is checked in between
        body += chunk
        if deadline is not None and time.monotonic() > deadline:
            raise _Stalled
    response.release_conn()
    return bytes(body)


def _list(api_client: Any, path: str, read: Read, timeout: float | None, endpoint: str) -> list[dict[str, Any]]:
    """Every item of a list, page by page (`limit`, then the `continue` token each page returns). A token that
    expired (HTTP 410, the list changed for longer than the server keeps it) is an error: a list stitched from two
    moments could hold an object twice or miss one."""
    from kubernetes.client.exceptions import ApiException

    items: list[dict[str, Any]] = []
    token = ""
    while True:
        query = [("limit", str(PAGE))] + ([("fieldSelector", read.selector)] if read.selector else []) \
            + ([("continue", token)] if token else [])
        try:
            body = _get(api_client, path, timeout, query)
        except ApiException as error:
            if error.status == 410 and token:
                raise ClusterError(f"the API server at {endpoint} let the list of {read.resource} expire while it "
                                   "was read in pages (HTTP 410 Gone): the cluster changed meanwhile; run again") \
                    from None
            raise
        try:
            page = json.loads(body)
            found, token = page.get("items") or [], (page.get("metadata") or {}).get("continue") or ""
        except (ValueError, AttributeError, RecursionError):
            raise ClusterError(f"the API server at {endpoint} answered GET {path} with {len(body):,} bytes that are "
                               "not JSON (cut short?): is the kubeconfig's server a Kubernetes API server, or a "
                               "proxy between that drops the connection?") from None
        if not isinstance(found, list) or not all(isinstance(item, dict) for item in found) \
                or not isinstance(token, str):
            raise ClusterError(f"the API server at {endpoint} answered GET {path} with something other than a list "
                               "of objects: is the kubeconfig's server a Kubernetes API server?")
        items += [item for item in found if _selected(item, read.selector)]
        if not token:
            return items


def _selected(item: dict[str, Any], selector: str) -> bool:
    """Whether an item satisfies a fieldSelector of `path=value` terms (the only form used here): an API server
    that ignores the selector must not widen what is explained."""
    for term in filter(None, selector.split(",")):
        path, _, wanted = term.partition("=")
        value: Any = item
        for key in path.split("."):
            value = value.get(key) if isinstance(value, dict) else None
        if (value or "") != wanted:
            return False
    return True


def _mapping(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


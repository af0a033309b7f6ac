"""Read what explain, inventory and doctor need from a live cluster, read-only, through a kubeconfig.

Each verb names what it lists (`Read`s: ResourceSlices, DeviceClasses and ResourceClaims of resource.k8s.io/v1,
Nodes, and for Pending pods their Pods, ResourceClaimTemplates and scheduling Events), plus DeviceTaintRules from the
version the API server serves them in, if any, and the server's version; nothing is written. Lists are read in pages
(`limit` and `continue`, as kubectl does), so a large cluster's Pods do not come in one answer. The ClusterRole this
needs is in docs/troubleshooting.md. Each request and the kubeconfig's credential plugin have a time limit
(`--request-timeout`): an API server that accepts and never answers, or a plugin that waits, must not hang a CI job.
The kubernetes client gives neither a limit by default. Whatever answers at the kubeconfig's server is input like
any other: the read as a whole is bounded in time, pages and bytes (a server that sends continue tokens forever, a
list of gigabytes or a gzip bomb is an error naming the request), and the kubeconfig must be a file of a sane size.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import signal
import stat
import subprocess
import time
import types
import urllib.parse
import zlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import IO, Any, NamedTuple

from gpu_dra.cli.common import DEFAULT_REQUEST_TIMEOUT, cut, ended_on_exit, killed
from gpu_dra.core.data import mapping
from gpu_dra.core.yamlsource import PARSED_MEMORY, parsed_size


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

# Bounds of one read, sized so that a 5,000-node cluster with 8 GPUs a node fits with room to spare. Its longest lists
# are its ResourceClaims (40,000 at most, one a GPU: 80 pages) and, where many pods wait, its Pending pods and their
# FailedScheduling events (one a pod); its largest answers are full pages, ~10 MB (500 ResourceSlices of 8 GPUs at
# 18 kB, or 500 Pods with their managedFields); all it holds of what is read, ~300 MB (ResourceSlices 90 MB at 18 MB
# per 1,000 nodes, Nodes ~75 MB, ResourceClaims ~80 MB, Pending pods and events). The JSON parsed takes ~4 times its
# size in memory.
PAGES_PER_LIST = 250  # 125,000 objects of one kind
PAGES_PER_READ = 1_000  # the longest read (explain's, 7 lists) needs ~300
OBJECTS_PER_READ = 1_000_000  # ~150,000 besides Pending pods and their events (40,000 claims, 5,000 nodes, ...)
RESPONSE_BYTES = 64 << 20  # one answer, as received and as inflated: 6 times the largest page
READ_BYTES = 1 << 30  # every answer of the read together, inflated: 3 times the largest cluster's
# What the objects read may take in memory once parsed, estimated from each page's JSON before it is parsed
# (yamlsource.parsed_size), the same bound as for the files a run is given (PARSED_MEMORY). A 1,000-node cluster's
# ResourceSlices (bench/generate.py: 18 MB of JSON, 38 MB parsed) are estimated at 71 MiB, so the default leaves room
# for a 5,000-node cluster's slices, nodes and claims, and keeps a read under 1 GB with the process's own ~150 MB;
# `--read-memory` raises it. JSON takes 2 to 6 times its size parsed, and up to 24 times (millions of empty
# objects): a bound on bytes alone let 60 MB of them take 1.6 GB.
READ_MEMORY = PARSED_MEMORY
READ_DEADLINE_REQUESTS = 20  # the read as a whole may take as long as 20 requests at --request-timeout (10 min)
# A kubeconfig of 600 clusters with their CA certificates is ~1 MB; the client parses it with PyYAML in Python,
# which takes ~15 s and 400 MB for 1 MB of the smallest mappings.
KUBECONFIG_BYTES = 1 << 20
CHUNK = 1 << 16  # bytes read from the connection at a time, between checks of the bounds
PLUGIN_GRACE = 1.0  # seconds a killed credential plugin's output may take to close


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


class _Refused(Exception):
    """The API server answered with an HTTP status other than 2xx."""

    def __init__(self, status: int, reason: str):
        super().__init__(status, reason)
        self.status, self.reason = status, reason


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

    def first(self) -> str:
        """The first failure, cut (a plugin's stderr may be long), though not where _credential_plugins' own
        messages say what happened: they cut the command to 100 characters."""
        return cut(self.messages[0], 300)


@contextlib.contextmanager
def _credential_plugins(limit: float | None) -> Iterator[_PluginFailures]:
    """While the cluster is read, the kubeconfig's exec credential plugin (`aws eks get-token`) runs at most `limit`
    seconds (the client waits on it forever), and its failures are collected rather than logged. The client starts a
    plugin with Popen and reads its output with communicate() (kubernetes-client/python@v35.0.0:
    kubernetes/config/exec_provider.py ExecProvider.run; kube_config.py CommandTokenSource for gcp's cmd-path), which
    waits until the output closes: a plugin that leaves a process behind holding it (`sh -c 'helper & echo ...'`)
    would hold the read after the plugin is gone. So a plugin runs in a process group of its own, which is killed
    at the limit (and when a signal ends gpu-dra), and its output is read at most PLUGIN_GRACE seconds longer."""
    from kubernetes.config import exec_provider, kube_config

    failures = _PluginFailures()

    class Bounded(subprocess.Popen[str]):
        def __init__(self, args: Any, **options: Any) -> None:
            # A plugin that reads the terminal (the client hands it stdin when stdout is one) must stay in the
            # terminal's foreground process group: in a group of its own, reading would stop it (SIGTTIN).
            self.grouped = options.get("stdin") is None
            super().__init__(args, **options, process_group=0 if self.grouped else None)

        def communicate(self, input: str | None = None, timeout: float | None = None) -> tuple[str, str]:
            with ended_on_exit(killed(self, self.kill_all)):
                try:
                    return super().communicate(input, timeout if timeout is not None else limit)
                except subprocess.TimeoutExpired:
                    exited = self.ended()
                    self.kill_all()
                    self.close_output()
                    command = cut(" ".join(map(str, self.args if isinstance(self.args, list) else [self.args])), 100)
                    failures.messages.append(
                        f"the credential plugin `{command}` exited, but a process it started kept its output open "
                        f"past {limit:g}s (--request-timeout)" if exited else
                        f"the credential plugin `{command}` did not finish within {limit:g}s (--request-timeout)")
                    raise

        def ended(self) -> bool:
            """Whether the plugin has ended, without reaping it: until it is reaped its pid stays its group's."""
            if self.returncode is not None:
                return True
            return os.waitid(os.P_PID, self.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None

        def kill_all(self) -> None:
            """The plugin and, in its group, whatever it started; nothing once it is reaped (its output has
            closed, and its pid may be another process's by now)."""
            if self.returncode is not None:
                return
            with contextlib.suppress(ProcessLookupError, PermissionError):  # gone already
                if self.grouped:
                    os.killpg(self.pid, signal.SIGKILL)
                else:
                    self.kill()

        def close_output(self) -> None:
            """What is left of the output is read for PLUGIN_GRACE seconds, then no longer: a process that left
            the group may hold it open."""
            try:
                super().communicate(timeout=PLUGIN_GRACE)
            except subprocess.TimeoutExpired:
                for stream in (self.stdout, self.stderr):
                    if stream is not None:
                        stream.close()
                self.wait()  # the plugin itself was killed

    root = logging.getLogger()
    root.addHandler(failures)
    bounded = types.SimpleNamespace(Popen=Bounded, PIPE=subprocess.PIPE)
    originals = exec_provider.subprocess, kube_config.subprocess
    exec_provider.subprocess = kube_config.subprocess = bounded
    try:
        yield failures
    finally:
        exec_provider.subprocess, kube_config.subprocess = originals
        root.removeHandler(failures)


_FILE_KINDS = ((stat.S_ISFIFO, "a named pipe"), (stat.S_ISDIR, "a directory"), (stat.S_ISCHR, "a device"),
               (stat.S_ISBLK, "a device"), (stat.S_ISSOCK, "a socket"))


def _kubeconfig_file(path: Any, mode: str = "r", *args: Any, **options: Any) -> IO[Any]:
    """`open` as the kubeconfig loader sees it: a file it reads (each kubeconfig of --kubeconfig or KUBECONFIG,
    merged, and a user's tokenFile) must be a regular file of at most KUBECONFIG_BYTES. A named pipe would block the
    open until something writes to it, /dev/zero would be read until memory runs out. Opened without blocking, then
    checked; what the loader writes is opened as it asks."""
    from kubernetes.config.config_exception import ConfigException

    if any(flag in mode for flag in "wax+"):
        return open(path, mode, *args, **options)
    descriptor = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    try:
        info = os.fstat(descriptor)
        if not stat.S_ISREG(info.st_mode):
            kind = next((name for test, name in _FILE_KINDS if test(info.st_mode)), "a special file")
            raise ConfigException(f"{cut(str(path))} is {kind}, not a regular file")
        if info.st_size > KUBECONFIG_BYTES:
            raise ConfigException(f"{cut(str(path))} holds {info.st_size:,} bytes, more than a kubeconfig "
                                  f"({KUBECONFIG_BYTES >> 20} MiB at most): is it the right file?")
        os.set_blocking(descriptor, True)
        return open(descriptor, mode, *args, **options)
    except BaseException:
        os.close(descriptor)
        raise


@contextlib.contextmanager
def _checked_kubeconfig_files() -> Iterator[None]:
    """The kubeconfig loader opens its files through `_kubeconfig_file` (it calls the builtin `open` of its module,
    kubernetes-client/python@v35.0.0: kubernetes/config/kube_config.py KubeConfigMerger.load_config and
    FileOrData.as_data), so that every file it reads is checked where it reads it: the paths of --kubeconfig and
    KUBECONFIG as the loader splits and expands them, and the files the kubeconfig names."""
    from kubernetes.config import kube_config

    kube_config.open = _kubeconfig_file  # a module global shadows the builtin
    try:
        yield
    finally:
        del kube_config.open


def _kubeconfig_problem(error: Exception) -> str:
    """The loader fails on a malformed file with whatever Python raised (TypeError, AttributeError, a YAML error)."""
    from kubernetes.config.config_exception import ConfigException

    text = " ".join(str(error).split())
    if isinstance(error, ConfigException | OSError):
        return cut(text)
    return f"not a valid kubeconfig ({type(error).__name__}: {cut(text)}); `kubectl config view` shows how it reads"


def read_cluster(kubeconfig: str | None, context: str | None,
                 timeout: float | None = DEFAULT_REQUEST_TIMEOUT, reads: Sequence[Read] = DEVICE_READS,
                 namespace: str | None = None, memory: int = READ_MEMORY) -> ClusterState:
    """Every object of `reads` and the DeviceTaintRules, with a note where the API server serves no DeviceTaintRules
    (what the objects say, such as GPU nodes without slices, is for the verbs to judge: doctor.silent_gpu_nodes).
    `timeout`: seconds per request and for the credential plugin, None for no limit (then the read as a whole has
    none either). `namespace`: where the namespaced reads list, None for all. `memory`: what the parsed objects
    may take (READ_MEMORY)."""
    from kubernetes import client
    from urllib3.exceptions import NewConnectionError
    from urllib3.exceptions import TimeoutError as RequestTimeout

    source = cut(kubeconfig or os.environ.get("KUBECONFIG") or "~/.kube/config")
    state = ClusterState()
    with _credential_plugins(timeout) as plugins:
        configuration = _configuration(kubeconfig, context, source, plugins)
        narrower = " With explain, -n NAMESPACE reads one namespace's pods and events." \
            if namespace is None and any(read.namespaced for read in reads) else ""
        reader = _Reader(client.ApiClient(configuration), timeout, narrower, memory)
        endpoint = reader.endpoint
        listed: dict[str, list[dict[str, Any]]] = {}
        rules_version = None  # the version DeviceTaintRules were listed in, None where none serves them
        path, read = VERSION_PATH, SLICES
        try:
            state.version = reader.server_version()
            for read in reads:
                path = _path(read, namespace)
                listed[read.kind] = reader.list(path, read)
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


def _configuration(kubeconfig: str | None, context: str | None, source: str, plugins: _PluginFailures) -> Any:
    """The client configuration of the kubeconfig's context, its credentials fetched, or a ClusterError naming the
    file."""
    from kubernetes import client, config

    configuration = client.Configuration()
    try:
        with _checked_kubeconfig_files():
            config.load_kube_config(config_file=kubeconfig, context=context, client_configuration=configuration)
    except Exception as error:  # every failure here is the file's: see _kubeconfig_problem
        raise ClusterError(f"kubeconfig {source}: {_kubeconfig_problem(error)}") from None
    if plugins.messages:  # no credentials: every request would be refused
        raise ClusterError(f"kubeconfig {source}: {plugins.first()}")
    if not str(configuration.host).startswith(("https://", "http://")):
        raise ClusterError(f"kubeconfig {source}: the cluster's server {cut(str(configuration.host), 100)!r} is "
                           "not an https:// URL")
    configuration.retries = False  # urllib3 would repeat a request that timed out three more times
    return configuration


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
        import urllib3

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



"""Read what explain and inventory need from a live cluster, read-only, through a kubeconfig.

Lists ResourceSlices, DeviceClasses and ResourceClaims (resource.k8s.io/v1), Nodes, and DeviceTaintRules from the
version the API server serves them in, if any; nothing is written. The ClusterRole this needs is in
docs/troubleshooting.md. Each request and the kubeconfig's credential plugin have a time limit (`--request-timeout`):
an API server that accepts and never answers, or a plugin that waits, must not hang a CI job. The kubernetes client
gives neither a limit by default.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import subprocess
import time
import types
from collections.abc import Iterator
from typing import Any

from gpu_dra.cli.common import DEFAULT_REQUEST_TIMEOUT, cut
from gpu_dra.core.config.models import DRA_NODE_LABEL

# What is listed, in order: (group version, resource, kind). Each is one list request, RBAC's `list` verb on the
# resource, and docs/troubleshooting.md's ClusterRole grants exactly these and TAINT_RULES.
READS = (("resource.k8s.io/v1", "resourceslices", "ResourceSlice"),
         ("resource.k8s.io/v1", "deviceclasses", "DeviceClass"),
         ("resource.k8s.io/v1", "resourceclaims", "ResourceClaim"),
         ("v1", "nodes", "Node"))
# DeviceTaintRules have no version every cluster serves: resource.k8s.io/v1alpha3 from 1.33, v1beta2 from 1.36, v1
# from 1.37 (`prerelease-lifecycle-gen:introduced` in kubernetes/api@v0.34.0:resource/v1alpha3/types.go,
# @v0.36.0:resource/v1beta2/types.go, and @v0.37.0-beta.0:resource/v1/types.go, not yet released), and an alpha or
# beta version only where the API server enables it. The versions are tried newest first; a 404 means that one does
# not serve them (the same objects in every version served), and none served means the cluster holds none.
TAINT_RULES = "devicetaintrules"
TAINT_RULE_VERSIONS = ("resource.k8s.io/v1", "resource.k8s.io/v1beta2", "resource.k8s.io/v1alpha3")


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
                 timeout: float | None = DEFAULT_REQUEST_TIMEOUT) -> tuple[list[dict[str, Any]], list[str]]:
    """(objects with kind set, notes). Notes name GPU nodes that publish no ResourceSlice, and say so when the API
    server serves no DeviceTaintRules. `timeout`: seconds per request and for the credential plugin, None for no
    limit."""
    from kubernetes import client, config
    from kubernetes.client.exceptions import ApiException
    from urllib3.exceptions import NewConnectionError
    from urllib3.exceptions import TimeoutError as RequestTimeout

    source = cut(kubeconfig or os.environ.get("KUBECONFIG") or "~/.kube/config")
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
        try:
            for api_version, resource, kind in READS:
                path = _path(api_version, resource)
                listed[kind] = _list(api_client, path, timeout, endpoint)
            resource = TAINT_RULES
            for api_version in TAINT_RULE_VERSIONS:
                path = _path(api_version, resource)
                try:
                    listed["DeviceTaintRule"] = _list(api_client, path, timeout, endpoint)
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
            hint = _refusal_hint(error.status, api_version, resource)
            raise ClusterError(f"the API server at {endpoint} refused GET {path}: HTTP {error.status} "
                               f"{cut(str(error.reason), 100)}{hint}") from None
        except ClusterError:
            raise
        except Exception as error:  # connection refused, DNS, a bad server URL: urllib3 raises many kinds
            raise ClusterError(f"cannot reach the API server at {endpoint}: {type(error).__name__}: "
                               f"{cut(str(error))}") from None
        finally:
            api_client.close()
    objects = [{"apiVersion": api_version, "kind": kind, **item}
               for api_version, _, kind in READS if kind != "Node" for item in listed[kind]]
    if rules_version is not None:
        objects += [{"apiVersion": rules_version, "kind": "DeviceTaintRule", **item}
                    for item in listed["DeviceTaintRule"]]
    publishing = {_mapping(o.get("spec")).get("nodeName") for o in objects if o["kind"] == "ResourceSlice"}
    key, value = DRA_NODE_LABEL
    notes = []
    for node in listed["Node"]:
        meta = _mapping(node.get("metadata"))
        labels = _mapping(meta.get("labels"))
        # from 1.35 the AL2023 NVIDIA AMI labels device-plugin nodes gpu.present too: those publish no slices
        if (labels.get(key) == value and labels.get("gpu-dra.io/allocation") != "device-plugin"
                and meta.get("name") not in publishing):
            notes.append(f"node {cut(str(meta.get('name')), 100)} is labelled {key}={value} but publishes no "
                         "ResourceSlice: is the DRA kubelet plugin running there?")
    if rules_version is None:
        versions = ", ".join(v.rpartition("/")[2] for v in TAINT_RULE_VERSIONS)
        notes.append(f"the API server serves no DeviceTaintRules (GET {TAINT_RULES} in resource.k8s.io {versions}: "
                     "HTTP 404), so the cluster holds none and none were read")
    return objects, notes


def _path(api_version: str, resource: str) -> str:
    """The list path of a resource: /api/v1/nodes for the core group, /apis/<group>/<version>/<resource> else."""
    return f"/apis/{api_version}/{resource}" if "/" in api_version else f"/api/{api_version}/{resource}"


def _refusal_hint(status: int, api_version: str, resource: str) -> str:
    """What a 401 or 403 means for the list request of `resource`: the permission it needs, named as RBAC does."""
    group = api_version.rpartition("/")[0]
    what = f"`list` on {resource} ({f'API group {group}' if group else 'the core API group'})"
    if status == 403:
        return f" (the identity lacks {what}: see the ClusterRole in docs/troubleshooting.md)"
    if status == 401:
        return (f" (the kubeconfig's credentials were not accepted: renew them; the identity then needs {what}, as "
                "the ClusterRole in docs/troubleshooting.md grants)")
    return ""


def _list(api_client: Any, path: str, timeout: float | None, endpoint: str) -> list[dict[str, Any]]:
    """The items of one list request, read within `timeout` seconds in all (a limit per read alone lets a server
    that trickles its answer take as long as it likes)."""
    response = api_client.call_api(path, "GET", header_params={"Accept": "application/json"},
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
    try:
        items = json.loads(body).get("items") or []
    except (ValueError, AttributeError, RecursionError):
        items = None
    if not isinstance(items, list) or not all(isinstance(item, dict) for item in items):
        raise ClusterError(f"the API server at {endpoint} answered GET {path} with something other than a list of "
                           "objects: is the kubeconfig's server a Kubernetes API server?")
    return items


def _mapping(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


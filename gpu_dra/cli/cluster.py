"""Read what explain and inventory need from a live cluster, read-only, through a kubeconfig.

Lists ResourceSlices, DeviceClasses and ResourceClaims (resource.k8s.io/v1) and Nodes; nothing is written. The
ClusterRole this needs is in docs/troubleshooting.md.
"""

from __future__ import annotations

from typing import Any

from gpu_dra.core.config.models import DRA_NODE_LABEL

READS = (("resource.k8s.io", "v1", "resourceslices", "ResourceSlice"),
         ("resource.k8s.io", "v1", "deviceclasses", "DeviceClass"),
         ("resource.k8s.io", "v1", "resourceclaims", "ResourceClaim"))


class ClusterError(Exception):
    """The cluster could not be read: the message says what and what to do."""


def read_cluster(kubeconfig: str | None, context: str | None) -> tuple[list[dict[str, Any]], list[str]]:
    """(objects with kind set, notes). Notes name GPU nodes that publish no ResourceSlice."""
    from kubernetes import client, config
    from kubernetes.client.exceptions import ApiException
    from kubernetes.config.config_exception import ConfigException

    try:
        api_client = config.new_client_from_config(config_file=kubeconfig, context=context)
    except (ConfigException, OSError) as error:
        raise ClusterError(f"kubeconfig {kubeconfig or '~/.kube/config'}: {error}") from None
    custom = client.CustomObjectsApi(api_client)
    objects: list[dict[str, Any]] = []
    try:
        for group, version, plural, kind in READS:
            listing = custom.list_cluster_custom_object(group=group, version=version, plural=plural)
            for item in listing.get("items") or []:
                objects.append({"apiVersion": f"{group}/{version}", "kind": kind, **item})
        nodes = client.CoreV1Api(api_client).list_node().items
    except ApiException as error:
        hint = (" (the identity lacks read access: see the ClusterRole in docs/troubleshooting.md)"
                if error.status in (401, 403) else "")
        raise ClusterError(f"reading the cluster failed: HTTP {error.status} {error.reason}{hint}") from None
    except Exception as error:  # connection refused, DNS, TLS: urllib3 raises many kinds
        raise ClusterError(f"cannot reach the cluster: {type(error).__name__}: {error}") from None
    finally:
        api_client.close()
    publishing = {(o.get("spec") or {}).get("nodeName") for o in objects if o["kind"] == "ResourceSlice"}
    key, value = DRA_NODE_LABEL
    notes = [f"node {node.metadata.name} is labelled {key}={value} but publishes no ResourceSlice: "
             "is the DRA kubelet plugin running there?" for node in nodes
             if (node.metadata.labels or {}).get(key) == value
             and node.metadata.name not in publishing]
    return objects, notes

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

import re
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from gpu_dra.core.yamlsource import PARSED_MEMORY


class Read(NamedTuple):
    """One list request: RBAC's `list` verb on the resource. `namespaced`: listed in `--namespace` when one is given
    (else in all namespaces); `selector`: a fieldSelector the API server applies, so that only what is needed
    crosses the wire (the result is filtered again here, in case a server ignores it); `optional`: an add-on's
    resource, which a cluster without the add-on does not serve (404) or an identity may not be granted (403): then
    none is read, and a note says so."""

    api_version: str
    resource: str
    kind: str
    namespaced: bool = False
    selector: str = ""
    optional: bool = False
    with_kind: str = ""  # read only where the read of this kind answered (an add-on's other kinds: one note)


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
# Kueue's Workloads: why a pod Kueue holds at its admission gate waits (gpu_dra.core.facts.kueue).
WORKLOADS = Read("kueue.x-k8s.io/v1beta2", "workloads", "Workload", namespaced=True, optional=True)
# Kueue's queues: a held pod's LocalQueue names its ClusterQueue, whose cohort may lend it quota.
LOCAL_QUEUES = Read("kueue.x-k8s.io/v1beta2", "localqueues", "LocalQueue", namespaced=True, optional=True,
                    with_kind="Workload")
CLUSTER_QUEUES = Read("kueue.x-k8s.io/v1beta2", "clusterqueues", "ClusterQueue", optional=True, with_kind="Workload")

# What explain and inventory read with FILEs; what `explain --cluster` alone reads to explain Pending pods.
DEVICE_READS = (SLICES, CLASSES, CLAIMS, NODES)
PENDING_READS = (*DEVICE_READS, TEMPLATES, PENDING_PODS, SCHEDULING_EVENTS, WORKLOADS, LOCAL_QUEUES, CLUSTER_QUEUES)
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
        match = re.match(r"v?(\d+)\.(\d+)", self.version or "")
        return f"{match.group(1)}.{match.group(2)}" if match else None

    @property
    def on_eks(self) -> bool:
        """EKS builds carry `-eks-` in their gitVersion (v1.35.2-eks-3cfe0ce)."""
        return "-eks-" in (self.version or "")


class ClusterError(Exception):
    """The cluster could not be read: the message says what and what to do."""

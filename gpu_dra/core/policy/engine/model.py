"""The mock run as the engine sees it, shared by every resource's model: the engine's URNs, which values a create
computes (unknown in a first preview), whether the Kubernetes provider is configured, and the lookups the remote
components' providers make (region, cluster, account). Values the model invents (ids, ARNs, timestamps) are derived
from names, so a view is the same on every run."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from typing import Any

from gpu_dra.core.facts.pulumi_types import AWS_PROVIDER, CHART, CLUSTER
from gpu_dra.core.policy.engine.urns import EngineUrns
from gpu_dra.core.policy.engine.wire import ENGINE_UNKNOWN, Registered

# Invented, fixed values: the model's "now" and the account of the mock run's ARNs when none can be read from them.
CREATED_AT = "2026-01-01T00:00:00Z"
DEFAULT_ACCOUNT = "123456789012"


def digest(seed: str) -> str:
    return hashlib.sha256(seed.encode()).hexdigest()


def uuid(seed: str) -> str:
    h = digest(seed)
    return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-a{h[17:20]}-{h[20:32]}"


def replace_strings(value: Any, table: Mapping[str, Any]) -> Any:
    """`value` with every string that is a key of `table` replaced by its entry."""
    if isinstance(value, str):
        return table.get(value, value)
    if isinstance(value, Mapping):
        return {k: replace_strings(v, table) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [replace_strings(v, table) for v in value]
    return value


def contains(value: Any, strings: set[str]) -> bool:
    if isinstance(value, str):
        return value in strings
    if isinstance(value, Mapping):
        return any(contains(v, strings) for v in value.values())
    if isinstance(value, list | tuple):
        return any(contains(v, strings) for v in value)
    return False


def _is_component(type_: str) -> bool:
    """Components: the remote ones and pulumi-eks's, plus this project's own (package gpu-dra)."""
    return type_.startswith(("eks:index:", "gpu-dra:")) or type_ == CHART


def mock_id(r: Registered) -> str:
    """The ID the mock run gave a custom resource: `<name>-id` (gpu_dra/cli/offline.py `_Mocks.new_resource`), which
    is also what other resources' inputs carry where the program passed the resource itself."""
    return str(r.outputs.get("id") or f"{r.name}-id")


def mock_cluster_security_group(cluster: str) -> str:
    """The id the mock run gives a pulumi-eks Cluster's clusterSecurityGroupId (gpu_dra/cli/offline.py
    `mock_outputs`): EKS's own group, which EKS creates with the cluster."""
    return f"sg-{cluster}-mock"


class EngineModel:
    """One mock run, and whether the engine is running the first preview of a new stack."""

    def __init__(self, registered: Sequence[Registered], first_preview: bool):
        self.registered = list(registered)
        self.first = first_preview
        self.urns = EngineUrns(self.registered)
        self.by_urn = {r.urn: r for r in self.registered}
        self.by_id = {mock_id(r): r for r in self.registered if not _is_component(r.type)}
        # Values a create computes, as the mock run shows them (ids, ARNs): in a first preview every resource is new,
        # so an input carrying one of them is unknown.
        self.computed: set[str] = set(self.by_id)
        for r in self.registered:
            arn = r.outputs.get("arn")
            if isinstance(arn, str) and not _is_component(r.type):
                self.computed.add(arn)
            if r.type == CLUSTER:
                self.computed.add(mock_cluster_security_group(r.name))
        self.account = next((str(r.outputs["arn"]).split(":")[4] for r in self.registered
                             if str(r.outputs.get("arn", "")).count(":") >= 5
                             and str(r.outputs["arn"]).split(":")[4]), DEFAULT_ACCOUNT)
        # A new EKS cluster's kubeconfig is an output of the cluster (components/cluster.py cluster_access): unknown
        # in a first preview, so the engine never configures that Kubernetes provider (pulumi/pulumi@1b5949891b
        # pkg/resource/plugin/provider_plugin.go:1064-1080).
        self.k8s_unconfigured = first_preview and any(r.type == CLUSTER for r in self.registered)

    # ------------------------------------------------------------------------------------------- values
    def rewrite(self, value: Mapping[str, Any]) -> dict[str, Any]:
        """Mock URNs as engine URNs; in a first preview, computed values as ENGINE_UNKNOWN."""
        table: dict[str, Any] = dict(self.urns.table)
        if self.first:
            table.update(dict.fromkeys(self.computed, ENGINE_UNKNOWN))
        result = replace_strings(value, table)
        return dict(result) if isinstance(result, Mapping) else {}

    def unknown_if_new(self, value: Any) -> Any:
        """A value the provider's code builds with `apply` over others: wholly unknown in a first preview when any
        part of it is computed by a create."""
        return ENGINE_UNKNOWN if self.first and contains(value, self.computed) else value

    def known(self, value: Any) -> Any:
        """A computed value: ENGINE_UNKNOWN in a first preview."""
        return ENGINE_UNKNOWN if self.first else value

    @staticmethod
    def tags_all(tags: Any) -> Any:
        """Check's `tagsAll`: the provider's defaultTags (none here) merged with `tags`; `{}` when both are empty,
        unknown when the tags hold an unknown (pulumi/pulumi-aws@1128bcae provider/tags.go:25-44 applyTags, 50-53)."""
        if contains(tags, {ENGINE_UNKNOWN}):
            return ENGINE_UNKNOWN
        return dict(tags) if isinstance(tags, Mapping) else {}

    # ------------------------------------------------------------------------------------------- lookups
    def region(self, r: Registered) -> str | None:
        """The region of the aws provider a remote component's children use: the program's explicit provider, which
        the Python SDK hands a remote component of another package as its `providers` map, so children inherit it
        (site-packages/pulumi/runtime/resource.py:255-275). Found as the aws provider registered next to the
        component or next to one of its ancestors; else the run's only aws provider. The Check of pulumi-aws then
        copies it onto every resource (pulumi/pulumi-aws@72bd5227 provider/region.go:43 applyRegion)."""
        providers = [p for p in self.registered if p.type == AWS_PROVIDER]
        parent = r.parent
        while parent:
            for p in providers:
                if p.parent == parent and p.inputs.get("region"):
                    return str(p.inputs["region"])
            parent = self.by_urn[parent].parent if parent in self.by_urn else ""
        if len(providers) == 1 and providers[0].inputs.get("region"):
            return str(providers[0].inputs["region"])
        return None

    def cluster_of(self, node_group: Registered) -> Registered | None:
        ref = node_group.inputs.get("cluster")
        if isinstance(ref, str) and ref in self.by_urn:
            return self.by_urn[ref]
        clusters = [r for r in self.registered if r.type == CLUSTER]
        return clusters[0] if len(clusters) == 1 else None

    @staticmethod
    def cluster_name(cluster: Registered) -> str:
        """The EKS cluster's name: the component's `name` input; without one pulumi-aws autonames the
        `<component>-eksCluster` resource (Pulumi's random 7-character suffix; invented here)."""
        name = cluster.inputs.get("name")
        if isinstance(name, str) and name:
            return name
        return f"{cluster.name}-eksCluster-{digest(cluster.urn)[:7]}"

    def arn(self, service: str, region: str | None, rest: str) -> str:
        return f"arn:aws:{service}:{region or ''}:{self.account}:{rest}"

"""Kubernetes objects as pulumi-kubernetes stores them, and the objects a Helm chart component registers."""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from gpu_dra.core.data import mapping
from gpu_dra.core.facts.pulumi_types import kubernetes_type
from gpu_dra.core.policy.engine.model import CREATED_AT, EngineModel, contains, digest, uuid
from gpu_dra.core.policy.engine.urns import child_urn
from gpu_dra.core.policy.engine.wire import EngineResource, Registered
from gpu_dra.core.render.chart_templates import chart_objects

# Kinds whose API server sets metadata.generation (their types' docs: "Changing the spec automatically increments the
# metadata.generation number", kubernetes/api@10b39a39b resource/v1/types.go:2248 for DeviceClass; the observed
# generation of apps/v1/types.go:530 Deployment and :754 DaemonSet).
_GENERATION_KINDS = {"DaemonSet", "Deployment", "StatefulSet", "ReplicaSet", "DeviceClass"}


def _live(obj: Mapping[str, Any], seed: str, dry_run: bool = False) -> dict[str, Any]:
    """A Kubernetes object as the provider stores it after a create: the live object from the API server
    (pulumi-kubernetes@94977969d provider/pkg/provider/provider.go:1852-1893, checkpointObject at 3087-3123), i.e. the
    object plus the metadata the server adds. `dry_run`: a preview's server-side dry-run create, which returns no
    status (provider.go:1850-1854) and, from general API-server behaviour (not verified), no resourceVersion.
    managedFields and server-defaulted spec fields are left out to keep the model small."""
    live = copy.deepcopy(dict(obj))
    meta = dict(mapping(live.get("metadata")))
    kind = str(live.get("kind", ""))
    meta["uid"] = uuid(f"uid:{seed}")
    meta["creationTimestamp"] = CREATED_AT
    if not dry_run:
        meta["resourceVersion"] = str(100000 + int(digest(f"rv:{seed}")[:8], 16) % 900000)
    if kind in _GENERATION_KINDS:
        meta["generation"] = 1
    if kind == "Namespace":
        # Every namespace carries its name as a label (kubernetes/api@10b39a39b core/v1/well_known_labels.go:73).
        meta["labels"] = {**mapping(meta.get("labels")), "kubernetes.io/metadata.name": meta.get("name", "")}
        live["spec"] = {"finalizers": ["kubernetes"], **mapping(live.get("spec"))}
        if not dry_run:
            live["status"] = {"phase": "Active"}
    if kind == "ResourceQuota" and not dry_run:
        hard = dict(mapping(mapping(live.get("spec")).get("hard")))
        live["status"] = {"hard": hard, "used": {key: "0" for key in hard}}
    live["metadata"] = meta
    return live


def kubernetes_outputs(model: EngineModel, inputs: Mapping[str, Any], seed: str) -> dict[str, Any]:
    """A Kubernetes object's state outputs: the live object; in a first preview nothing when the provider is not
    configured (provider_plugin.go:1425-1443 returns no properties), else the server dry-run."""
    if model.k8s_unconfigured:
        return {}
    return _live(inputs, seed, dry_run=model.first)


def chart_children(model: EngineModel, r: Registered) -> list[EngineResource]:
    """The rendered objects the pack reads, registered by the Chart's Construct (pulumi-kubernetes@94977969d
    provider/pkg/provider/helm/v4/chart.go:151-319). None when the engine never calls Construct (the provider's
    kubeconfig is unknown: provider_plugin.go:2011-2037) or the chart's inputs hold unknowns (chart.go:171-177).
    Objects the pack does not read (RBAC, service accounts, webhooks, CRDs) are not modelled."""
    if model.k8s_unconfigured or (model.first and contains(r.inputs, model.computed)):
        return []
    chart = str(r.inputs.get("chart", ""))
    release = str(r.inputs.get("name") or r.name)  # chart.go:180-182
    prefix = str(r.inputs.get("resourcePrefix") or r.name)  # chart.go:183-187
    # chart.go:231-232, 287-289: the chart's namespace, else the provider's default one.
    namespace = str(r.inputs.get("namespace") or "default")
    objects = chart_objects(chart.rstrip("/").rsplit("/", 1)[-1], str(r.inputs.get("version", "")),
                            mapping(r.inputs.get("values")), release, namespace)
    parent = model.urns.of(r.urn)
    children = []
    for obj in objects:
        meta = mapping(obj.get("metadata"))
        # yaml/v2/yaml.go:344-352: "<prefix>:<namespace>/<name>", or "<prefix>:<name>" for cluster-scoped kinds.
        scoped = f"{meta['namespace']}/{meta['name']}" if meta.get("namespace") else str(meta["name"])
        name = f"{prefix}:{scoped}"
        type_ = kubernetes_type(str(obj["apiVersion"]), str(obj["kind"]))
        urn = child_urn(parent, type_, name)
        children.append(EngineResource(type_, name, urn, parent, r.protect, obj, kubernetes_outputs(model, obj, urn)))
    return children

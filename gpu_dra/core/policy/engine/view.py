"""Every resource of a mock run as the engine would send it to a policy pack."""

from __future__ import annotations

from collections.abc import Sequence

from gpu_dra.core.facts.pulumi_types import (
    CHART,
    CLUSTER,
    K8S_PROVIDER,
    LAUNCH_TEMPLATE,
    MANAGED_NODE_GROUP,
    is_kubernetes_object,
)
from gpu_dra.core.policy.engine import eks_cluster, node_group
from gpu_dra.core.policy.engine.kubernetes import chart_children, kubernetes_outputs
from gpu_dra.core.policy.engine.model import EngineModel, mock_id
from gpu_dra.core.policy.engine.wire import ENGINE_UNKNOWN, EngineResource, Registered


def engine_view(registered: Sequence[Registered], first_preview: bool = False) -> list[EngineResource]:
    """Every resource as the engine would send it: each registration (a remote component with no inputs and only the
    outputs its provider registers), each remote component followed by the children it registers, which carry its
    configuration. `first_preview`: the first preview of a new stack (every resource new)."""
    model = EngineModel(registered, first_preview)
    out: list[EngineResource] = []
    for r in model.registered:
        out.append(_resource(model, r))
        if r.type == CLUSTER:
            out += eks_cluster.cluster_children(model, r)
        elif r.type == MANAGED_NODE_GROUP:
            out.append(node_group.node_group_child(model, r))
        elif r.type == CHART:
            out += chart_children(model, r)
    return out


def _resource(model: EngineModel, r: Registered) -> EngineResource:
    """One registration as the engine sends it."""
    inputs, outputs = model.rewrite(r.inputs), model.rewrite(r.outputs)
    if r.type == CLUSTER:
        inputs, outputs = {}, eks_cluster.cluster_outputs(model, r)
    elif r.type == MANAGED_NODE_GROUP:
        inputs, outputs = {}, node_group.node_group_outputs(model, r)
    elif r.type == CHART:
        # chart.go:158 registers the component with no props, and Construct's outputs reach only the caller,
        # never the state (pulumi-kubernetes@94977969d provider/pkg/provider/helm/v4/chart.go:316-319).
        inputs, outputs = {}, {}
    elif is_kubernetes_object(r.type):
        outputs = kubernetes_outputs(model, inputs, r.urn)
    elif r.type == K8S_PROVIDER and model.k8s_unconfigured:
        inputs = {**inputs, "kubeconfig": ENGINE_UNKNOWN}
        outputs = {**outputs, "kubeconfig": ENGINE_UNKNOWN}
    elif r.type.startswith("aws:"):
        outputs = {"id": mock_id(r), **outputs}
        if model.first:
            # Computed by the create: the ARN and ID of every resource, and a launch template's versions.
            outputs.update(id=ENGINE_UNKNOWN, arn=ENGINE_UNKNOWN)
            if r.type == LAUNCH_TEMPLATE:
                outputs.update(latestVersion=ENGINE_UNKNOWN, defaultVersion=ENGINE_UNKNOWN)
    return EngineResource(r.type, r.name, model.urns.of(r.urn), model.urns.of(r.parent), r.protect, inputs, outputs)

"""Rules on how the platform fits together: one class per extended resource, each NVIDIA plugin on its own nodes,
the DRA driver chart pinned and set up for EKS nodes, admin access and quotas per team namespace."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from gpu_dra.core.dra.objects import DeviceClass, ResourceClaim
from gpu_dra.core.facts.nvidia import DEFAULT_CHART_VERSION
from gpu_dra.core.findings import Finding
from gpu_dra.core.policy.resources import (
    DAEMON_SET_TYPE,
    EXACT_VERSION,
    NAMESPACE_TYPE,
    QUOTA_TYPE,
    RESOURCE_TYPES,
    Context,
    Resource,
    dra_objects,
    error,
    node_groups,
    not_judged,
    unknown_objects,
)
from gpu_dra.core.render import charts
from gpu_dra.core.render.manifests import ADMIN_ACCESS_LABEL, CLAIMS_QUOTA, device_quota_name
from gpu_dra.core.yamlsource import format_path


def extended_resource_unique(resources: list[Resource], context: Context) -> list[Finding]:
    """Reads every DeviceClass in the stack, the chart's own among them (it gives gpu.nvidia.com
    `extendedResourceName: nvidia.com/gpu` from 25.12.0 on): the chart's first, so that a clash is reported on the
    class the stack declares, the one a user can change."""
    classes = sorted((r for r in resources if r.type == RESOURCE_TYPES["DeviceClass"]),
                     key=lambda r: not r.rendered_by_chart)
    out = unknown_objects("extended-resource-unique", classes, "DeviceClasses")
    owners: dict[str, str] = {}
    for resource in classes:
        device_class = resource.dra_object
        name = device_class.extended_resource_name if isinstance(device_class, DeviceClass) else None
        if not name:
            continue
        if name in owners:
            out.append(error("extended-resource-unique", f"{name} is also {owners[name]}'s; the API server lets the "
                             "later class win, so pods would silently move between classes", resource,
                             "spec.extendedResourceName", "give each class its own extended resource name"))
        owners.setdefault(name, resource.label)
    return out


def _pod_placement(daemon_set: Resource) -> dict[str, Any]:
    spec = daemon_set.props.get("spec") or {}
    pod = (spec.get("template") or {}).get("spec") or {}
    return {key: pod[key] for key in ("nodeSelector", "affinity", "tolerations") if key in pod}


def _plugin_placement(rule: str, resources: list[Resource], dra: bool
                      ) -> tuple[dict[str, Any] | None, list[Finding]]:
    """Pod placement of the DRA kubelet plugin (dra=True) or the device plugin, from the DaemonSet its chart renders;
    None when that chart is not in the stack."""
    chart = next((r for r in resources if (r.is_dra_chart if dra else r.is_device_plugin_chart)), None)
    marker = "kubelet-plugin" if dra else "device-plugin"
    for resource in resources:
        if resource.type == DAEMON_SET_TYPE and marker in str(resource.metadata.get("name", resource.name)):
            if resource.unknown:
                return None, [not_judged(rule, resource, f"the {marker} DaemonSet", resource.unknown)]
            return _pod_placement(resource), []
    if chart is None:
        return None, []
    return None, [not_judged(rule, chart, f"the chart's {marker} DaemonSet is not rendered in this preview (its "
                                          "Kubernetes provider is not configured yet)")]


def no_device_plugin_on_dra_nodes(resources: list[Resource], context: Context) -> list[Finding]:
    rule = "no-device-plugin-on-dra-nodes"
    groups, unknown_groups = node_groups(resources)
    dra_plugin, skipped = _plugin_placement(rule, resources, dra=True)
    device_plugin, more = _plugin_placement(rule, resources, dra=False)
    out = skipped + more + [not_judged(rule, r, "node group labels or taints", r.unknown) for r in unknown_groups]
    views = [charts.NodeGroupView(g.name, g.labels, g.taints) for g in groups]
    by_name = {g.name: g.resource for g in groups}
    return out + [error(rule, f"node group {name}: both NVIDIA's device plugin and the DRA kubelet plugin would run "
                        "there; each advertises every GPU, so pods would silently share them", by_name[name],
                        fix="keep each plugin's nodeSelector, affinity and tolerations to its own groups")
                  for name in charts.shared_gpu_nodes(views, dra_plugin, device_plugin)]


def dra_driver_chart_pinned(resource: Resource, context: Context) -> list[Finding]:
    """The chart's version and values as the stack renders them (pack config): the Chart component carries none."""
    if not resource.is_dra_chart:
        return []
    rule = "dra-driver-chart-pinned"
    out = []
    version = context.chart_version
    if not EXACT_VERSION.match(version):
        out.append(error(rule, f"the DRA driver chart needs an exact version (got {version or 'none'}); an unpinned "
                         "chart changes what is deployed without a config change", resource, "version",
                         f"pin one release, e.g. {DEFAULT_CHART_VERSION}"))
    values = context.chart_values
    if not values:
        return out + [not_judged(rule, resource, "the pack config holds no chartValues (write it with `gpu-dra check "
                                                 "--stack S --pack-config`)")]
    if values.get("gpuResourcesEnabledOverride") is not True:
        out.append(error(rule, "must be true with resources.gpus.enabled (the chart refuses to render otherwise)",
                         resource, "values.gpuResourcesEnabledOverride"))
    root = values.get("nvidiaDriverRoot", "/")
    if root not in charts.DRIVER_ROOTS.values():
        out.append(error(rule, f"{root!r} is neither '/' (EKS NVIDIA AMIs) nor '/run/nvidia/driver' (GPU Operator)",
                         resource, "values.nvidiaDriverRoot"))
    return out


def admin_access_restricted(resources: list[Resource], context: Context) -> list[Finding]:
    rule = "admin-access-restricted"
    namespaces = [r for r in resources if r.type == NAMESPACE_TYPE]
    objects = dra_objects(resources)
    out = unknown_objects(rule, namespaces + objects, "namespaces and claims")
    admin = {str(r.metadata.get("name")) for r in namespaces
             if isinstance(labels := r.metadata.get("labels"), Mapping) and labels.get(ADMIN_ACCESS_LABEL) == "true"}
    for resource in objects:
        claim = resource.dra_object
        namespace = resource.metadata.get("namespace")
        if not isinstance(claim, ResourceClaim) or namespace in admin:
            continue
        out += [error(rule, f"request {request.name}{'/' + choice.subrequest if choice.subrequest else ''} uses "
                      f"adminAccess, but namespace {namespace} lacks {ADMIN_ACCESS_LABEL}=true (only admin teams get "
                      "it)", resource, format_path((*choice.path, "adminAccess")))
                for request in claim.requests for choice in request.choices if choice.admin_access]
    return out


def team_quota_required(resources: list[Resource], context: Context) -> list[Finding]:
    rule = "team-quota-required"
    quotas = [r for r in resources if r.type == QUOTA_TYPE]
    templates = [r for r in resources if r.type == RESOURCE_TYPES["ResourceClaimTemplate"]]
    out = unknown_objects(rule, quotas + templates, "quotas and claim templates")
    hard_of: dict[str, set[str]] = {}
    quota_of: dict[str, Resource] = {}
    for resource in quotas:
        if resource.unknown:
            continue
        namespace = str(resource.metadata.get("namespace"))
        hard = (resource.props.get("spec") or {}).get("hard") or {}
        hard_of.setdefault(namespace, set()).update(hard)
        quota_of.setdefault(namespace, resource)
    uncapped_claims: set[str] = set()
    for resource in templates:
        claim = resource.dra_object
        if not isinstance(claim, ResourceClaim):
            continue
        namespace = str(resource.metadata.get("namespace"))
        hard = hard_of.get(namespace)
        if hard is None:
            out.append(error(rule, f"namespace {namespace} has claim templates but no ResourceQuota", resource,
                             "metadata.namespace", "set quota in the team's file"))
            continue
        out += [error(rule, f"the quota of {namespace} does not cap class {choice.device_class}", resource,
                      format_path((*choice.path, "deviceClassName")), f"add a quota.devices entry for "
                      f"{choice.device_class}")
                for request in claim.requests for choice in request.choices
                if choice.device_class and device_quota_name(choice.device_class) not in hard]
        if CLAIMS_QUOTA not in hard and namespace not in uncapped_claims:  # the namespace's quota, once
            uncapped_claims.add(namespace)
            out.append(error(rule, f"the quota of {namespace} does not cap claims", quota_of[namespace],
                             format_path(("spec", "hard", CLAIMS_QUOTA)), "set quota.claims in the team's file"))
    return out



"""What NVIDIA's charts render for given values: the objects gpu-dra reads back (workloads and their placement,
DeviceClasses), modelled from the charts' templates rather than running Helm. Objects nobody reads (RBAC, service
accounts, webhooks, CRDs) are not modelled.

Used for the objects a Helm chart registers under the engine (policy/engine) and for the DeviceClasses a driver
serves (analysis/migrate). Charts read: kubernetes-sigs/dra-driver-nvidia-gpu@v0.4.1 (commit 764900e7) and @v25.12.0
(commit 0882da87; the repository was NVIDIA/k8s-dra-driver-gpu then, same history), NVIDIA/k8s-device-plugin@v0.18.2
(commit fb1242ad) and @v0.20.0 (commit 1b826acc). Pure: plain dicts in, plain dicts out.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Mapping
from typing import Any

from gpu_dra.core.data import helm_merge, mapping
from gpu_dra.core.facts.nvidia import CHART_CLASS_SELECTORS, DEVICE_PLUGIN_CHART_DEFAULTS, DRA_CHART_DEFAULTS
from gpu_dra.core.render.charts import DEVICE_PLUGIN_CHART


def chart_objects(chart_name: str, version: str, values: Mapping[str, Any], release: str,
                  namespace: str) -> list[dict[str, Any]]:
    """The modelled objects of one of NVIDIA's charts, installed with `values` over the chart's defaults; [] for any
    other chart."""
    if chart_name in DRA_CHART_DEFAULTS:
        return dra_chart_objects(chart_name, version, helm_merge(DRA_CHART_DEFAULTS[chart_name], values), release,
                                 namespace)
    if chart_name == DEVICE_PLUGIN_CHART:
        return device_plugin_objects(version, helm_merge(DEVICE_PLUGIN_CHART_DEFAULTS, values), release, namespace)
    return []


def _helm_name(name: str) -> str:
    """`trunc 63 | trimSuffix "-"`, as every name helper of the three charts ends."""
    return name[:63].removesuffix("-")


def _fullname(values: Mapping[str, Any], base_name: str, release: str) -> str:
    """The charts' `fullname` helper: fullnameOverride, else the release, suffixed with the chart's name unless the
    release already contains it."""
    if values.get("fullnameOverride"):
        return _helm_name(str(values["fullnameOverride"]))
    return _helm_name(release if base_name in release else f"{release}-{base_name}")


def _version_at_least(version: str, floor: tuple[int, int]) -> bool:
    """Whether a chart version is `floor` (major, minor) or later; a version that does not parse counts as later."""
    found = re.match(r"^v?(\d+)\.(\d+)", version)
    return found is None or (int(found[1]), int(found[2])) >= floor


def _placement(section: Mapping[str, Any]) -> dict[str, Any]:
    """nodeSelector, affinity and tolerations as the three charts' templates write them: each under `{{- with }}`, so
    left out when empty."""
    return {key: copy.deepcopy(section[key]) for key in ("nodeSelector", "affinity", "tolerations") if section.get(key)}


def dra_chart_objects(chart_name: str, version: str, values: Mapping[str, Any], release: str,
                      namespace: str) -> list[dict[str, Any]]:
    """NVIDIA's DRA driver chart: the kubelet plugin DaemonSet, the controller Deployment, the DeviceClasses.

    Templates at kubernetes-sigs/dra-driver-nvidia-gpu@v0.4.1 deployments/helm/dra-driver-nvidia-gpu/templates/ and
    @v25.12.0 deployments/helm/nvidia-dra-driver-gpu/templates/ (same helpers and structure, names aside):
    _helpers.tpl:4-35 (name, fullname, namespace), :51-89 (labels), :102-109 (serviceAccountName), :187-198 at
    v0.4.1 (resourceApiVersion); kubeletplugin.yaml:15-49 and 372-383 at v0.4.1 (337-348 at v25.12.0) for its placement;
    controller.yaml:15-48 and 117-128 at v0.4.1 (90-101 at v25.12.0); deviceclass-*.yaml.
    """
    name = _helm_name(str(values.get("nameOverride") or chart_name))
    base_name = str(values.get("nameOverride") or chart_name)  # selectorLabels use it untruncated
    fullname = _fullname(values, base_name, release)
    ns = str(values.get("namespaceOverride") or namespace)
    account = mapping(values.get("serviceAccount"))
    service_account = (str(account.get("name") or f"{fullname}-service-account") if account.get("create", True)
                       else str(account.get("name") or "default"))
    template_labels = {"app.kubernetes.io/name": name, "app.kubernetes.io/instance": release}
    # The charts' appVersion equals their version at both tags read (Chart.yaml).
    labels = {"helm.sh/chart": _helm_name(f"{base_name}-{version}".replace("+", "_")),
              "app.kubernetes.io/version": version, "app.kubernetes.io/managed-by": "Helm", **template_labels}
    resources = mapping(values.get("resources"))
    gpus = bool(mapping(resources.get("gpus")).get("enabled"))
    compute_domains = bool(mapping(resources.get("computeDomains")).get("enabled"))

    def workload(kind: str, component: str, section: Mapping[str, Any], account_suffix: str) -> dict[str, Any]:
        selector = {f"{base_name}-component": component}
        spec: dict[str, Any] = {}
        if section.get("priorityClassName"):
            spec["priorityClassName"] = section["priorityClassName"]
        spec["serviceAccountName"] = f"{service_account}-{account_suffix}"
        spec.update(_placement(section))
        body: dict[str, Any] = {"selector": {"matchLabels": selector},
                                "template": {"metadata": {"labels": {**template_labels, **selector}}, "spec": spec}}
        if kind == "Deployment":
            # controller.yaml:25, .Values.controller.replicas at v0.4.1; a literal 1 at v25.12.0.
            body = {"replicas": section.get("replicas", 1), **body}
        return {"apiVersion": "apps/v1", "kind": kind,
                "metadata": {"name": f"{name}-{component}", "namespace": ns, "labels": dict(labels)}, "spec": body}

    objects: list[dict[str, Any]] = []
    if gpus or compute_domains:  # kubeletplugin.yaml:15
        objects.append(workload("DaemonSet", "kubelet-plugin", mapping(values.get("kubeletPlugin")), "kubeletplugin"))
    if compute_domains:  # controller.yaml:15: the controller serves ComputeDomains only
        objects.append(workload("Deployment", "controller", mapping(values.get("controller")), "controller"))
    return objects + _device_classes(chart_name, version, values, gpus, compute_domains)


def _device_classes(chart_name: str, version: str, values: Mapping[str, Any], gpus: bool,
                    compute_domains: bool) -> list[dict[str, Any]]:
    """The DRA driver chart's DeviceClasses (deviceclass-*.yaml at both tags read)."""
    # A set resourceApiVersion wins; else the newest the cluster serves: v1 on every Kubernetes gpu-dra targets.
    api_version = str(values.get("resourceApiVersion") or "resource.k8s.io/v1")
    # The 25.x line gained the vfio class and the gpu class's extendedResourceName at 25.12.0 (absent from
    # deviceclass-*.yaml at v25.8.0); the 0.4.x line has both.
    current = chart_name == "dra-driver-nvidia-gpu" or _version_at_least(version, (25, 12))
    classes = []
    if gpus:
        classes += ["gpu.nvidia.com", "mig.nvidia.com", *(["vfio.gpu.nvidia.com"] if current else [])]
    if compute_domains:
        classes += ["compute-domain-daemon.nvidia.com", "compute-domain-default-channel.nvidia.com"]
    objects = []
    for device_class in classes:
        spec: dict[str, Any] = {"selectors": [{"cel": {"expression": e}} for e in CHART_CLASS_SELECTORS[device_class]]}
        if device_class == "gpu.nvidia.com" and current and api_version == "resource.k8s.io/v1":
            spec["extendedResourceName"] = "nvidia.com/gpu"  # deviceclass-gpu.yaml:12-14
        objects.append({"apiVersion": api_version, "kind": "DeviceClass", "metadata": {"name": device_class},
                        "spec": spec})
    return objects


def device_plugin_objects(version: str, values: Mapping[str, Any], release: str,
                          namespace: str) -> list[dict[str, Any]]:
    """NVIDIA's device plugin chart: its DaemonSet (NVIDIA/k8s-device-plugin@v0.18.2 deployments/helm/
    nvidia-device-plugin/templates/daemonset-device-plugin.yml:15-45 and 262-273 for placement; _helpers.tpl:5-78 for
    names and labels) and the MPS control daemon's, rendered with it whenever the plugin is
    (daemonset-mps-control-daemon.yml:14-22 and 206-219: its own name, nodeSelector nvidia.com/mps.capable=true
    before the chart's, the same affinity and tolerations). At v0.20.0 both keep that placement
    (daemonset-device-plugin.yml:264-275, daemonset-mps-control-daemon.yml:210-223) and always name their service
    account (line 59 of each), which v0.18.2 did only with a config map, which gpu-dra never passes; hostNetwork
    is opt-in there (devicePlugin.enableHostNetwork, mps.enableHostNetwork) and not modelled. gpu-feature-discovery
    is off by default and not modelled."""
    if not mapping(values.get("devicePlugin")).get("enabled", True):
        return []
    base_name = str(values.get("nameOverride") or DEVICE_PLUGIN_CHART)
    fullname = _fullname(values, base_name, release)
    template_labels = {"app.kubernetes.io/name": _helm_name(base_name), "app.kubernetes.io/instance": release}
    labels = {"helm.sh/chart": _helm_name(f"{base_name}-{version}".replace("+", "_")), **template_labels,
              "app.kubernetes.io/version": version, "app.kubernetes.io/managed-by": "Helm"}
    spec: dict[str, Any] = {}
    if values.get("priorityClassName"):
        spec["priorityClassName"] = values["priorityClassName"]
    if _version_at_least(version, (0, 20)):
        spec["serviceAccountName"] = f"{fullname}-service-account"
    mps = {**spec, **_placement(values)}
    mps["nodeSelector"] = {"nvidia.com/mps.capable": "true", **mapping(values.get("nodeSelector"))}
    spec.update(_placement(values))

    def daemon_set(name: str, pod: dict[str, Any]) -> dict[str, Any]:
        return {"apiVersion": "apps/v1", "kind": "DaemonSet",
                "metadata": {"name": name, "namespace": str(values.get("namespaceOverride") or namespace),
                             "labels": copy.deepcopy(labels)},
                "spec": {"selector": {"matchLabels": dict(template_labels)},
                         "template": {"metadata": {"labels": dict(template_labels)}, "spec": pod}}}
    return [daemon_set(fullname, spec), daemon_set(_helm_name(f"{fullname}-mps-control-daemon"), mps)]

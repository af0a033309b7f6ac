"""The stack as migration sees it: its node groups at max size with their nodes' labels and taints, the
extendedResourceName mappings its classes declare and whether the API server keeps them, the tolerations admission
adds, and the stack less the device-plugin groups `--without` removes."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from gpu_dra.core.analysis.migrate.workloads import MigrateError
from gpu_dra.core.analysis.stack_nodes import GroupView
from gpu_dra.core.config.models import AllocationMode, Stack
from gpu_dra.core.facts import gates
from gpu_dra.core.facts.labels import GPU_TAINT_KEY
from gpu_dra.core.facts.target import Platform, Target
from gpu_dra.core.render import charts
from gpu_dra.core.render.chart_templates import chart_objects


@dataclass(frozen=True)
class ExtendedMapping:
    """A DeviceClass that maps an extended resource (spec.extendedResourceName)."""

    resource: str
    device_class: str
    origin: str  # "the DRA driver chart" or "gpu-dra:legacyMappings[i]"


def mappings(stack: Stack) -> dict[str, ExtendedMapping]:
    """Extended resource -> the class mapping it: the chart's own classes as it renders them for this stack
    (render/chart_templates, the one model of the chart's templates: gpu.nvidia.com maps nvidia.com/gpu from 0.4.x and
    25.12.0), then the stack's legacyMappings, which the API server picks over the chart's when both map a name (the
    later class wins: DeviceClassSpec.extendedResourceName, kubernetes/api@v0.36.0 resource/v1 types.go)."""
    driver = stack.config.dra_driver
    found: dict[str, ExtendedMapping] = {}
    # No chart on Auto Mode, and which classes Auto Mode creates is not documented (facts/auto_mode.UNDOCUMENTED).
    rendered = chart_objects(driver.chart.value, driver.version, charts.dra_chart_values(stack.config), "gpu-dra",
                             "gpu-dra") if stack.config.installs_driver_chart else []
    for obj in rendered:
        resource = (obj.get("spec") or {}).get("extendedResourceName") if obj.get("kind") == "DeviceClass" else None
        if resource:
            found[str(resource)] = ExtendedMapping(str(resource), str(obj["metadata"]["name"]), "the DRA driver chart")
    for index, mapping in enumerate(stack.config.legacy_mappings):
        found[mapping.extended_resource_name] = ExtendedMapping(mapping.extended_resource_name, mapping.device_class,
                                                         f"gpu-dra:legacyMappings[{index}]")
    return found


def mappings_effective(stack: Stack) -> bool:
    """Whether the API server keeps extendedResourceName (the gate DRAExtendedResource; render/charts decides the
    same for the chart's classes)."""
    return not charts.drops_extended_resource_name(stack.config)


def gate_off_reason(target: Target) -> str:
    version = target.kubernetes_version
    state = gates.state("DRAExtendedResource", version)
    stage = f"{state.stage} in {version}" if state else f"absent in {version}"
    platform = "; EKS runs no alpha gates" if target.platform is Platform.eks else " and not declared on"
    return f"DRAExtendedResource is off ({stage}{platform}), so the API server drops extendedResourceName"


def admission_tolerations(resources: Iterable[str], platform: Platform) -> list[dict[str, str]]:
    """The tolerations the ExtendedResourceToleration admission plugin adds to a pod requesting extended resources:
    key = the resource, Exists, NoSchedule (https://kubernetes.io/docs/reference/access-authn-authz/
    admission-controllers/#extendedresourcetoleration). EKS enables it on every platform version
    (https://docs.aws.amazon.com/eks/latest/userguide/platform-versions.html); an existing cluster may not, so none
    are assumed there. So `nvidia.com/gpu: 1` pods tolerate the DRA groups' `nvidia.com/gpu` taint, MIG ones do not."""
    if platform is not Platform.eks:
        return []
    return [{"key": r, "operator": "Exists", "effect": "NoSchedule"} for r in sorted(resources)]


def gpu_tolerations(views: Sequence[GroupView]) -> list[dict[str, str]]:
    """A toleration per distinct GPU taint of the DRA groups (render/nodes.node_taints puts nvidia.com/gpu on each)."""
    out: list[dict[str, str]] = []
    for view in views:
        if view.mode != AllocationMode.dra.value:
            continue
        for taint in view.taints:
            toleration = {"key": taint["key"], "operator": "Exists", "effect": taint["effect"]}
            if taint["key"] == GPU_TAINT_KEY and toleration not in out:
                out.append(toleration)
    return out


def device_plugin_groups(stack: Stack) -> list[str]:
    return [g.name for g in charts.gpu_nodes(stack.config) if g.allocation_mode is AllocationMode.device_plugin]


def without_groups(stack: Stack, names: Sequence[str]) -> Stack:
    """The stack with these device-plugin groups (or pools) removed; MigrateError for a name that is none."""
    legacy = device_plugin_groups(stack)
    for name in names:
        if name not in legacy:
            groups = [g.name for g in charts.gpu_nodes(stack.config)]
            problem = f"{name} is a dra group" if name in groups else f"stack {stack.name} has no node group {name!r}"
            have = (f"its device-plugin groups: {', '.join(legacy)}" if legacy
                    else f"it has no device-plugin group (its GPU groups: {', '.join(groups) or 'none'})")
            raise MigrateError(f"--without {name}: {problem}; {have}")
    karpenter = stack.config.karpenter
    config = stack.config.model_copy(update={
        "node_groups": [g for g in stack.config.node_groups if g.name not in names],
        "node_pools": [p for p in stack.config.node_pools if p.name not in names],
        "karpenter": karpenter and karpenter.model_copy(update={
            "node_pools": [p for p in karpenter.node_pools if p.name not in names]})})
    return stack.model_copy(update={"config": config})

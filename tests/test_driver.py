"""NVIDIA's DRA driver chart and the device plugin: derived values, gates, keys that exist, disjoint nodes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from gpu_dra.core.config.loader import load_stack
from gpu_dra.core.config.models import AllocationMode, DraDriver, NodeGroup, StackConfig
from gpu_dra.core.data import helm_merge
from gpu_dra.core.dra.scheduling import schedules_on
from gpu_dra.core.facts import nvidia_driver
from gpu_dra.core.facts.nvidia_driver import ChartName
from gpu_dra.core.facts.target import Platform, Target
from gpu_dra.core.render import charts
from gpu_dra.core.render.nodes import node_labels, node_taints

from .conftest import ROOT, STACKS, Project
from .test_config import _problems, _set
from .test_program import program

CHART_VALUES = ROOT / "tests" / "data" / "chart-values"
PINNED_VALUES = {("dra-driver-nvidia-gpu", "0.4.1"): "dra-driver-nvidia-gpu-0.4.1.values.yaml",
                 ("nvidia-dra-driver-gpu", "25.12.0"): "nvidia-dra-driver-gpu-25.12.0.values.yaml"}


def chart_defaults(chart: str, version: str) -> dict[str, Any]:
    return yaml.safe_load((CHART_VALUES / PINNED_VALUES[(chart, version)]).read_text())


def missing_keys(values: dict[str, Any], defaults: Any, path: str = "") -> list[str]:
    """Paths set in `values` that the chart's values.yaml does not have; an empty map in the chart is free-form."""
    missing = []
    for key, value in values.items():
        here = f"{path}.{key}" if path else key
        if not isinstance(defaults, dict) or key not in defaults:
            missing.append(here)
        elif isinstance(value, dict) and defaults[key]:
            missing += missing_keys(value, defaults[key], here)
    return missing


def config_with(**driver_fields: Any) -> StackConfig:
    """prod's config with another (validated) draDriver block."""
    config = load_stack(ROOT, "prod").config
    return config.model_copy(update={"dra_driver": DraDriver.model_validate(driver_fields)})


@pytest.mark.parametrize("stack", STACKS)
def test_every_value_set_exists_in_the_pinned_chart(stack: str) -> None:
    config = load_stack(ROOT, stack).config
    defaults = chart_defaults(config.dra_driver.chart.value, config.dra_driver.version)
    assert missing_keys(charts.dra_chart_values(config), defaults) == []


def test_every_value_set_exists_in_the_ngc_chart_too() -> None:
    config = config_with(chart="nvidia-dra-driver-gpu", version="25.12.0", featureGates={"MPSSupport": True})
    values = charts.dra_chart_values(config)
    assert missing_keys(values, chart_defaults("nvidia-dra-driver-gpu", "25.12.0")) == []
    # 25.x requires a control-plane node for its controller unless the affinity is replaced (EKS has none).
    terms = values["controller"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
    assert terms["nodeSelectorTerms"] == [{"matchExpressions": [
        {"key": "gpu-dra.io/role", "operator": "In", "values": ["system"]}]}]


def test_key_check_catches_a_removed_value() -> None:
    """The check can fail: nvidiaCtkPath was removed from the chart and makes newer releases fail to render."""
    assert missing_keys({"nvidiaCtkPath": "/usr/bin/nvidia-ctk"}, chart_defaults("dra-driver-nvidia-gpu", "0.4.1")) \
        == ["nvidiaCtkPath"]


def test_values_are_derived_from_the_node_groups() -> None:
    values = charts.dra_chart_values(load_stack(ROOT, "prod").config)
    assert values["nvidiaDriverRoot"] == "/"  # AL2023 and Bottlerocket NVIDIA AMIs carry the driver on the host
    assert values["gpuResourcesEnabledOverride"] is True
    assert values["resourceApiVersion"] == "resource.k8s.io/v1"
    assert values["resources"] == {"gpus": {"enabled": True}, "computeDomains": {"enabled": False}}
    assert values["controller"]["nodeSelector"] == {"gpu-dra.io/role": "system"}
    assert values["logVerbosity"] == "4"


def test_gpu_operator_driver_and_nvlink_change_the_values() -> None:
    """Rendering alone: on EKS node groups the config refuses both (gpu_dra.core.config.driver_rules: EKS's NVIDIA
    AMIs keep the driver at /, and no catalog type has multi-node NVLink), so the groups are changed past the loader."""
    config = load_stack(ROOT, "prod").config
    groups = [NodeGroup.model_validate({**g.model_dump(by_alias=True), "driver": "gpu-operator",
                                        "multiNodeNvlink": index == 0})
              if g.allocation_mode is AllocationMode.dra else g for index, g in enumerate(config.node_groups)]
    values = charts.dra_chart_values(config.model_copy(update={"node_groups": groups}))
    assert values["nvidiaDriverRoot"] == "/run/nvidia/driver"
    assert values["resources"]["computeDomains"]["enabled"] is True


def test_dev_passes_its_driver_gates() -> None:
    values = charts.dra_chart_values(load_stack(ROOT, "dev").config)
    assert values["featureGates"] == {"TimeSlicingSettings": True}


GATE_MISTAKES = [
    ("unknown", {"TimeSlicing": True}, "gpu-dra:draDriver.featureGates.TimeSlicing: unknown driver gate "
                                       "TimeSlicing; did you mean 'TimeSlicingSettings'? gates of "
                                       "dra-driver-nvidia-gpu 0.4.1: ComputeDomainCliques, CrashOnNVLinkFabricErrors, "
                                       "DeviceMetadata, DynamicMIG, IMEXDaemonsWithDNSNames, MPSSupport, "
                                       "NVMLDeviceHealthCheck, PassthroughSupport, TimeSlicingSettings"),
    ("too-new", {"ConsumableShares": True}, "ConsumableShares arrives in driver release 0.5"),
    ("dynamic-mig-mps", {"DynamicMIG": True, "MPSSupport": True}, "DynamicMIG and MPSSupport cannot both be on"),
    ("passthrough-health", {"PassthroughSupport": True, "NVMLDeviceHealthCheck": True},
     "PassthroughSupport and NVMLDeviceHealthCheck cannot both be on"),
    ("metadata-needs-passthrough", {"DeviceMetadata": True}, "DeviceMetadata needs PassthroughSupport on"),
    ("cliques-need-dns-names", {"IMEXDaemonsWithDNSNames": False},
     "ComputeDomainCliques needs IMEXDaemonsWithDNSNames on"),
    ("dynamic-mig-before-1.36", {"DynamicMIG": True}, "DynamicMIG needs the Kubernetes gate DRAPartitionableDevices"),
]


@pytest.mark.parametrize("gates,expected", [m[1:] for m in GATE_MISTAKES], ids=[m[0] for m in GATE_MISTAKES])
def test_driver_gate_mistakes(project: Project, gates: dict[str, bool], expected: str) -> None:
    project.edit_stack("prod", _set(["gpu-dra:draDriver", "featureGates"], gates))
    problems = _problems(project)
    assert any(expected in p for p in problems), problems


def test_sharing_needs_its_gate(project: Project) -> None:
    project.edit_stack("dev", _set(["gpu-dra:draDriver", "featureGates"], {}))
    problems = _problems(project, "dev")
    assert any("team research's template l4-shared uses TimeSlicing sharing, which the driver rejects unless "
               "TimeSlicingSettings: true" in p for p in problems), problems


def test_old_chart_is_rejected_with_the_reason(project: Project) -> None:
    project.edit_stack("prod", _set(["gpu-dra:draDriver"], {"chart": "nvidia-dra-driver-gpu", "version": "25.8.1"}))
    problems = _problems(project)
    assert any("gpu-dra:draDriver.version: nvidia-dra-driver-gpu 25.8.1 is older than 25.12.0" in p
               for p in problems), problems


def _plugins(config: StackConfig, nfd: bool) -> list[tuple[str, bool, bool]]:
    """Per node group: (name, DRA kubelet plugin lands there, device plugin lands there)."""
    dra_pod = helm_merge(chart_defaults(config.dra_driver.chart.value, config.dra_driver.version)["kubeletPlugin"],
                         charts.dra_chart_values(config)["kubeletPlugin"])
    device_plugin_pod = helm_merge(charts.DEVICE_PLUGIN_DEFAULTS, charts.device_plugin_values(config))
    out = []
    for group in config.node_groups:
        labels = {**node_labels(group), **(charts.NFD_GPU_LABELS if nfd else {})}
        taints = [{"key": t.key, "value": t.value, "effect": t.effect.value} for t in node_taints(group)]
        out.append((group.name, schedules_on(dra_pod, labels, taints),
                    charts.device_plugin_needed(config) and schedules_on(device_plugin_pod, labels, taints)))
    return out


def _assert_disjoint(config: StackConfig, nfd: bool) -> None:
    groups = {g.name: g for g in config.node_groups}
    for name, dra, device_plugin in _plugins(config, nfd):
        group = groups[name]
        assert not (dra and device_plugin), name
        assert dra == (group.allocation_mode is AllocationMode.dra), name
        # Bottlerocket device-plugin groups run the OS's built-in plugin, not the chart's.
        chart_served = group.allocation_mode is AllocationMode.device_plugin and not group.ami_type.startswith("BOTTLE")
        assert device_plugin == chart_served, name


@pytest.mark.parametrize("nfd", [False, True], ids=["plain", "with-NFD-labels"])
@pytest.mark.parametrize("stack", STACKS)
def test_device_plugin_and_dra_plugin_never_share_a_node(stack: str, nfd: bool) -> None:
    _assert_disjoint(load_stack(ROOT, stack).config, nfd)


def test_bottlerocket_legacy_group_keeps_its_builtin_plugin(project: Project) -> None:
    def add_groups(config: dict[str, Any]) -> None:
        config["gpu-dra:nodeGroups"].append({"name": "legacy-br", "instanceTypes": ["g5.xlarge"],
                                             "amiType": "BOTTLEROCKET_x86_64_NVIDIA",
                                             "allocationMode": "device-plugin", "scaling": {"min": 0, "desired": 0,
                                                                                             "max": 1}})
    project.edit_stack("prod", add_groups)
    config = load_stack(project.root, "prod").config
    _assert_disjoint(config, nfd=True)
    assert ("legacy-br", False, False) in _plugins(config, nfd=True)


def test_without_our_values_nfd_labels_would_put_both_plugins_on_a_node() -> None:
    """The check can fail: the charts' own affinities both admit an NFD-labelled GPU node."""
    config = load_stack(ROOT, "prod").config
    legacy = next(g for g in config.node_groups if g.allocation_mode is AllocationMode.device_plugin)
    labels = {**node_labels(legacy), **charts.NFD_GPU_LABELS}
    dra_defaults = chart_defaults("dra-driver-nvidia-gpu", "0.4.1")["kubeletPlugin"]
    assert schedules_on(dra_defaults, labels, []) and schedules_on(charts.DEVICE_PLUGIN_DEFAULTS, labels, [])


def test_user_taints_are_tolerated_by_the_plugins(project: Project) -> None:
    project.edit_stack("prod", _set(["gpu-dra:nodeGroups", 0, "taints"],
                                    [{"key": "dedicated", "value": "training", "effect": "NoSchedule"}]))
    config = load_stack(project.root, "prod").config
    assert ("h100", True, False) in _plugins(config, nfd=False)


def test_charts_wait_for_namespace_and_gpu_node_groups() -> None:
    run = program("prod")
    releases = {r.name: r for r in run.by_type("kubernetes:helm.sh/v4:Chart")}
    assert set(releases) == {"nvidia-dra-driver", "nvidia-device-plugin"}
    dra = releases["nvidia-dra-driver"]
    assert dra.inputs["chart"] == "oci://registry.k8s.io/dra-driver-nvidia/charts/dra-driver-nvidia-gpu"
    assert dra.inputs["version"] == "0.4.1" and dra.inputs["namespace"] == "nvidia-dra-driver"
    namespace = next(r for r in run.by_type("kubernetes:core/v1:Namespace") if r.name == "driver-namespace")
    groups = [r.urn for r in run.by_type("eks:index:ManagedNodeGroup") if not r.name.endswith("-system")]
    assert set(dra.dependencies) >= {namespace.urn, *groups}
    assert releases["nvidia-device-plugin"].inputs["version"] == charts.DEVICE_PLUGIN_VERSION


def test_no_device_plugin_without_device_plugin_groups() -> None:
    assert [r.name for r in program("dev").by_type("kubernetes:helm.sh/v4:Chart")] == ["nvidia-dra-driver"]


def test_shared_fixtures_are_present() -> None:
    assert all((CHART_VALUES / name).exists() for name in PINNED_VALUES.values()), Path(CHART_VALUES)


def test_embedded_dra_plugin_placement_matches_the_chart() -> None:
    """The policy pack carries the chart's kubeletPlugin placement as data; it must be the pinned chart's."""
    chart = chart_defaults("dra-driver-nvidia-gpu", "0.4.1")["kubeletPlugin"]
    assert {key: chart[key] for key in ("nodeSelector", "affinity", "tolerations")} == charts.DRA_PLUGIN_DEFAULTS


def test_dynamic_mig_follows_the_clusters_partitionable_devices_gate() -> None:
    """The gate table decides: off on 1.35 unless an existing cluster runs it; on (beta) from 1.36."""
    def conflicts(partitionable: bool) -> list[str]:
        return [m for _, m in nvidia_driver.gate_conflicts(ChartName.dra_driver_nvidia_gpu, "0.4.1",
                                                           {"DynamicMIG": True}, partitionable, [])]
    assert any("DRAPartitionableDevices" in m for m in conflicts(False))
    assert not any("DRAPartitionableDevices" in m for m in conflicts(True))
    assert Target("1.35", Platform.existing, {"DRAPartitionableDevices": True}).enabled("DRAPartitionableDevices")
    assert not Target("1.35", Platform.eks, {"DRAPartitionableDevices": True}).enabled("DRAPartitionableDevices")
    assert Target("1.36", Platform.eks).enabled("DRAPartitionableDevices")


@pytest.mark.parametrize("stack,dropped", [("dev", True), ("staging", False), ("prod", True)])
def test_the_chart_loses_extended_resource_name_where_the_gate_is_off(stack: str, dropped: bool) -> None:
    """dev (1.34) and prod (1.35) run DRAExtendedResource off: the program puts a transform on the DRA chart, so its
    gpu.nvidia.com class is registered without the field the API server would drop; staging (1.36) keeps it."""
    run = program(stack)
    chart, = (r for r in run.resources if r.type == "kubernetes:helm.sh/v4:Chart" and r.name == "nvidia-dra-driver")
    assert chart.transforms == (1 if dropped else 0)


def test_the_transform_drops_only_a_device_class_extended_resource_name() -> None:
    import pulumi

    from components.driver import drop_extended_resource_name

    def transformed(type_: str, props: dict[str, Any]) -> Any:
        args = pulumi.ResourceTransformArgs(True, type_, "nvidia-dra-driver:gpu.nvidia.com", props,
                                            pulumi.ResourceOptions())
        result = drop_extended_resource_name(args)
        return None if result is None else result.props

    device_class = {"metadata": {"name": "gpu.nvidia.com"},
                    "spec": {"selectors": [{"cel": {"expression": "true"}}], "extendedResourceName": "nvidia.com/gpu"}}
    assert transformed(charts.DEVICE_CLASS_TYPE, device_class) == {
        "metadata": {"name": "gpu.nvidia.com"}, "spec": {"selectors": [{"cel": {"expression": "true"}}]}}
    assert transformed("kubernetes:apps/v1:DaemonSet", {"spec": {"extendedResourceName": "x"}}) is None
    assert transformed(charts.DEVICE_CLASS_TYPE, {"spec": {"selectors": []}}) is None

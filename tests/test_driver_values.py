"""The guide's Helm install as a stack (issue 28 item 13): draDriver.values, checked against the pinned chart's
values.yaml and merged under gpu-dra's own values; the flags gpu-dra derives; where they cannot work on EKS."""

from __future__ import annotations

from typing import Any

import pytest

from gpu_dra.core.config.driver_rules import compute_domains_fit_node_groups, driver_root_fits_node_groups
from gpu_dra.core.config.loader import load_stack
from gpu_dra.core.config.models import DraDriver, NodeGroup, StackConfig
from gpu_dra.core.facts.nvidia_driver import DERIVED_VALUES
from gpu_dra.core.render import charts

from .conftest import ROOT, STACKS, Project
from .test_config import _problems, _set
from .test_driver import _assert_disjoint, _plugins, chart_defaults, missing_keys

MIRROR_VALUES: dict[str, Any] = {
    "image": {"repository": "123456789012.dkr.ecr.us-west-2.amazonaws.com/dra-driver-nvidia-gpu", "tag": "v0.4.1"},
    "imagePullSecrets": [{"name": "ecr-pull"}],
    "kubeletPlugin": {"priorityClassName": "gpu-critical",
                      "containers": {"gpus": {"resources": {"limits": {"memory": "512Mi"}}}},
                      "tolerations": [{"key": "dedicated", "operator": "Equal", "value": "ml", "effect": "NoSchedule"},
                                      {"operator": "Exists"}]},
}


def _with_values(values: dict[str, Any], stack: str = "prod", **driver: Any) -> StackConfig:
    config = load_stack(ROOT, stack).config
    return config.model_copy(update={"dra_driver": DraDriver.model_validate({**driver, "values": values})})


def test_passed_values_reach_the_chart_under_gpu_dras_own() -> None:
    values = charts.dra_chart_values(_with_values(MIRROR_VALUES))
    assert values["image"] == MIRROR_VALUES["image"] and values["imagePullSecrets"] == [{"name": "ecr-pull"}]
    plugin = values["kubeletPlugin"]
    assert plugin["priorityClassName"] == "gpu-critical"
    assert plugin["containers"] == {"gpus": {"resources": {"limits": {"memory": "512Mi"}}}}
    # Helm replaces lists: gpu-dra's GPU toleration stays, the stack's follow it; the placement stays gpu-dra's.
    assert plugin["tolerations"] == [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"},
                                     *MIRROR_VALUES["kubeletPlugin"]["tolerations"]]
    assert plugin["nodeSelector"] == {"gpu-dra.io/allocation": "dra"}
    assert missing_keys(values, chart_defaults("dra-driver-nvidia-gpu", "0.4.1")) == []


def test_a_stack_without_values_renders_what_it_did() -> None:
    """The passthrough changes nothing for the repo's stacks (none sets it)."""
    for stack in STACKS:
        config = load_stack(ROOT, stack).config
        assert config.dra_driver.values == {}
        assert charts.dra_chart_values(config) == charts.derived_dra_chart_values(config)


def test_tolerating_everything_still_keeps_the_plugin_off_device_plugin_nodes() -> None:
    """The never-beside-the-device-plugin rule rests on the nodeSelector, which values cannot replace: a toleration
    of every taint widens nothing beyond the DRA groups."""
    config = _with_values({"kubeletPlugin": {"tolerations": [{"operator": "Exists"}]}})
    _assert_disjoint(config, nfd=True)
    assert ("legacy-a10g", False, True) in _plugins(config, nfd=True)


VALUE_MISTAKES = [
    ("misspelt", {"image": {"repoitory": "mirror/dra"}},
     "gpu-dra:draDriver.values.image.repoitory: dra-driver-nvidia-gpu 0.4.1 has no value 'repoitory' at image (its "
     "values.yaml); did you mean 'repository'?"),
    ("not-a-list", {"imagePullSecrets": "ecr-pull"},
     "gpu-dra:draDriver.values.imagePullSecrets: must be a list, as in dra-driver-nvidia-gpu 0.4.1's values.yaml "
     "(got 'ecr-pull')"),
    ("not-a-mapping", {"kubeletPlugin": {"containers": {"gpus": {"resources": "512Mi"}}}},
     "gpu-dra:draDriver.values.kubeletPlugin.containers.gpus.resources: must be a mapping"),
    ("null-deletes-nothing", {"kubeletPlugin": {"tolerations": None}},
     "gpu-dra:draDriver.values.kubeletPlugin.tolerations: must be a list"),
    ("guide-driver-root", {"nvidiaDriverRoot": "/run/nvidia/driver"},
     "gpu-dra:draDriver.values.nvidiaDriverRoot: gpu-dra sets this value: set from the DRA node groups' (or node "
     "pools') `driver`: host -> /, gpu-operator -> /run/nvidia/driver"),
    ("guide-gpus", {"resources": {"gpus": {"enabled": False}}},
     "gpu-dra:draDriver.values.resources.gpus.enabled: gpu-dra sets this value: always true"),
    ("guide-compute-domains", {"resources": {"computeDomains": {"enabled": True}}},
     "gpu-dra:draDriver.values.resources.computeDomains.enabled: gpu-dra sets this value: set from `multiNodeNvlink`"),
    ("placement", {"kubeletPlugin": {"nodeSelector": {"nvidia.com/gpu.present": "true"}}},
     "gpu-dra:draDriver.values.kubeletPlugin.nodeSelector: gpu-dra sets this value: the kubelet plugin runs only on "
     "nodes labelled gpu-dra.io/allocation=dra, so that it never runs beside NVIDIA's device plugin"),
    ("gates", {"featureGates": {"MPSSupport": True}},
     "gpu-dra:draDriver.values.featureGates: gpu-dra sets this value: set draDriver.featureGates"),
]


@pytest.mark.parametrize("values,expected", [m[1:] for m in VALUE_MISTAKES], ids=[m[0] for m in VALUE_MISTAKES])
def test_value_mistakes_name_the_file_line_and_key(project: Project, values: dict[str, Any], expected: str) -> None:
    project.edit_stack("prod", _set(["gpu-dra:draDriver", "values"], values))
    problems = _problems(project)  # each with its line (checked there)
    assert any(p.startswith("stacks/Pulumi.prod.yaml: ") and expected in p for p in problems), problems


def test_values_are_checked_against_the_pinned_release() -> None:
    """altProcDevices is a value of 0.4.x, not of 25.12.0."""
    assert _with_values({"altProcDevices": "/var/lib/mock/proc-devices"}).dra_driver.values
    with pytest.raises(ValueError, match="nvidia-dra-driver-gpu 25.12.0 has no value 'altProcDevices'"):
        _with_values({"altProcDevices": "/x"}, chart="nvidia-dra-driver-gpu", version="25.12.0")


def test_every_value_gpu_dra_sets_is_listed_as_derived() -> None:
    """The mapping the docs give (the guide's flags to stack keys) covers every value gpu-dra derives, so none of
    them can be passed through and silently lost; kubeletPlugin.tolerations is merged instead."""
    merged = {("kubeletPlugin", "tolerations")}

    def leaves(values: dict[str, Any], path: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
        out = []
        for key, value in values.items():
            here = (*path, key)
            if here in DERIVED_VALUES or here in merged:
                out.append(here)
            elif isinstance(value, dict) and value:
                out += leaves(value, here)
            else:
                out.append(here)
        return out

    for stack in STACKS:
        config = load_stack(ROOT, stack).config
        for chart in ("dra-driver-nvidia-gpu", "nvidia-dra-driver-gpu"):
            version = "0.4.1" if chart == "dra-driver-nvidia-gpu" else "25.12.0"
            own = charts.derived_dra_chart_values(config.model_copy(update={"dra_driver": DraDriver.model_validate(
                {"chart": chart, "version": version, "featureGates": {"MPSSupport": True}})}))
            assert [p for p in leaves(own) if p not in DERIVED_VALUES and p not in merged] == [], (stack, chart)


# ----------------------------------------------------------------------------- values that cannot work on EKS's nodes
def _with_group(stack: str, name: str, **fields: Any) -> StackConfig:
    config = load_stack(ROOT, stack).config
    groups = [NodeGroup.model_validate({**g.model_dump(by_alias=True), **fields}) if g.name == name else g
              for g in config.node_groups]
    return config.model_copy(update={"node_groups": groups})


def test_gpu_operator_driver_root_cannot_work_on_an_eks_nvidia_ami() -> None:
    """The guide's nvidiaDriverRoot=/run/nvidia/driver is `driver: gpu-operator`; EKS's NVIDIA AMIs carry the
    driver on the host (root /), AL2023 and Bottlerocket alike."""
    assert list(driver_root_fits_node_groups(load_stack(ROOT, "prod").config)) == []
    for stack, group in (("prod", "h100"), ("staging", "h100")):
        config = _with_group(stack, group, driver="gpu-operator")
        index = next(i for i, g in enumerate(config.node_groups) if g.name == group)
        (key, loc, message), = driver_root_fits_node_groups(config)
        assert (key, loc) == ("nodeGroups", (index, "driver"))
        assert "with the driver installed on the host (driver root /)" in message and "Remove `driver`" in message


def test_compute_domains_cannot_work_without_multi_node_nvlink() -> None:
    """A single-L4 type (and p5, whose NVLink stays inside the instance) has no NVLink domain across instances."""
    assert list(compute_domains_fit_node_groups(load_stack(ROOT, "dev").config)) == []
    for stack, group in (("dev", "l4"), ("prod", "h100")):
        config = _with_group(stack, group, multiNodeNvlink=True)
        (key, loc, message), = compute_domains_fit_node_groups(config)
        assert key == "nodeGroups" and loc[1] == "multiNodeNvlink"
        assert "ComputeDomains need GPUs joined by NVLink across instances" in message
        assert charts.dra_chart_values(config)["resources"]["computeDomains"]["enabled"] is True

"""An existing cluster as a real mode: its GPU nodes declared as `gpu-dra:nodePools`, EKS-only keys refused, the GPU
plugins kept apart by the label users apply, and one fleet for `explain --stack` and the pack's fleet rules."""

from __future__ import annotations

import json
from typing import Any

import pytest
import yaml

from gpu_dra.cli import check
from gpu_dra.core.analysis import inventory as inv
from gpu_dra.core.config.loader import load_stack
from gpu_dra.core.data import helm_merge
from gpu_dra.core.dra.scheduling import schedules_on
from gpu_dra.core.facts.labels import ALLOCATION_LABEL
from gpu_dra.core.findings import ConfigError
from gpu_dra.core.render import charts

from .conftest import ROOT, Project
from .test_cli import gpu_dra

POOLS = [
    {"name": "l4", "nodeSelector": {"node.kubernetes.io/instance-type": "g6.xlarge"}, "instanceType": "g6.xlarge",
     "nodes": 2},
    {"name": "a100", "nodeSelector": {"pool": "a100"}, "gpuModel": "A100-80GB", "gpuCount": 8, "nodes": 1},
    {"name": "legacy", "nodeSelector": {"pool": "legacy"}, "gpuModel": "A10G", "gpuCount": 1, "nodes": 1,
     "allocationMode": "device-plugin"},
]
# dev's keys that only an EKS cluster has, as dev writes them.
DEV = yaml.safe_load((ROOT / "stacks" / "Pulumi.dev.yaml").read_text())["config"]
EKS_ONLY = ["region", "upgradePolicy", "networking", "endpoint", "accessEntries", "systemNodeGroup"]


def _existing(config: dict[str, Any]) -> None:
    config["gpu-dra:cluster"] = {"name": "lab", "platform": "existing", "kubernetesVersion": "1.35",
                                 "kubeconfig": {"path": "~/.kube/config"}}
    del config["gpu-dra:nodeGroups"]
    config["gpu-dra:nodePools"] = POOLS


@pytest.fixture
def existing(project: Project) -> Project:
    project.edit_stack("dev", _existing)
    return project


def _findings(project: Project) -> list[tuple[str, str, str]]:
    """(path, message, text of the line it points at) of every config problem of dev."""
    with pytest.raises(ConfigError) as caught:
        load_stack(project.root, "dev")
    lines = (project.root / "stacks/Pulumi.dev.yaml").read_text().splitlines()
    return [(f.path, f.message, lines[f.line - 1].strip() if f.line else "") for f in caught.value.findings]


@pytest.mark.parametrize("key", EKS_ONLY)
def test_an_eks_only_cluster_key_is_refused_on_an_existing_cluster(existing: Project, key: str) -> None:
    existing.edit_stack("dev", lambda config: config["gpu-dra:cluster"].update({key: DEV["gpu-dra:cluster"][key]}))
    ((path, message, line),) = _findings(existing)
    assert path == f"gpu-dra:cluster.{key}" and message.startswith("only for platform eks")
    assert line.startswith(f"{key}:")


def test_node_groups_are_refused_on_an_existing_cluster(existing: Project) -> None:
    existing.edit_stack("dev", lambda config: config.update({"gpu-dra:nodeGroups": DEV["gpu-dra:nodeGroups"]}))
    ((path, message, line),) = _findings(existing)
    assert (path, line) == ("gpu-dra:nodeGroups", "gpu-dra:nodeGroups:")
    assert message.startswith("only for platform eks: gpu-dra creates no nodes on an existing cluster; declare its "
                              "GPU nodes as gpu-dra:nodePools")


def test_node_pools_are_refused_on_eks(project: Project) -> None:
    project.edit_stack("dev", lambda config: config.update({"gpu-dra:nodePools": POOLS}))
    ((path, message, line),) = _findings(project)
    assert (path, line) == ("gpu-dra:nodePools", "gpu-dra:nodePools:")
    assert message.startswith("only for platform existing")


@pytest.mark.parametrize("change,path,message", [
    ({"gpuModel": "A100-80GB", "gpuCount": 8}, "gpu-dra:nodePools[0].instanceType",
     "set exactly one of instanceType or gpuModel (with gpuCount)"),
    ({"nodeSelector": {ALLOCATION_LABEL: "dra"}}, "gpu-dra:nodePools[0].nodeSelector",
     "gpu-dra.io/allocation: gpu-dra.io/ labels are the ones you apply for gpu-dra"),
    ({"instanceType": "p5.96xlarge"}, "gpu-dra:nodePools[0].instanceType", "unknown GPU instance type 'p5.96xlarge'"),
])
def test_a_pool_mistake_is_named(existing: Project, change: dict[str, Any], path: str, message: str) -> None:
    existing.edit_stack("dev", lambda config: config["gpu-dra:nodePools"][0].update(change))
    ((found, text, _),) = _findings(existing)
    assert found == path and text.startswith(message), text


def test_the_dra_plugin_runs_on_the_dra_pools_and_the_device_plugin_on_the_legacy_one(existing: Project) -> None:
    config = load_stack(existing.root, "dev").config
    dra = helm_merge(charts.DRA_PLUGIN_DEFAULTS, charts.dra_chart_values(config)["kubeletPlugin"])
    device_plugin = helm_merge(charts.DEVICE_PLUGIN_DEFAULTS, charts.device_plugin_values(config))
    assert charts.device_plugin_needed(config)
    placed = {pool.name: (schedules_on(dra, {**pool.labels, **charts.NFD_GPU_LABELS}, []),
                          schedules_on(device_plugin, {**pool.labels, **charts.NFD_GPU_LABELS}, []))
              for pool in config.node_pools}
    assert placed == {"l4": (True, False), "a100": (True, False), "legacy": (False, True)}
    # No gpu-dra system nodes on an existing cluster: the controller is not pinned to any.
    assert charts.dra_chart_values(config)["controller"] == {}


def test_check_finds_no_shared_gpu_node_and_would_name_a_pool(existing: Project,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    def shared(verdicts: list[check.StackFinding]) -> list[str]:
        return [v.finding.message for v in verdicts if v.finding.rule == "no-device-plugin-on-dra-nodes"]

    assert shared(check.check_stack(existing.root, "dev")) == []
    # The rule judges the pools: a device plugin left on the chart's own placement would take every GPU node.
    unrestricted = charts.device_plugin_values

    def anywhere(config: Any) -> dict[str, Any]:
        return {k: v for k, v in unrestricted(config).items() if k not in ("nodeSelector", "affinity")}
    monkeypatch.setattr(charts, "device_plugin_values", anywhere)
    assert [m.split(":")[0] for m in shared(check.check_stack(existing.root, "dev"))] == ["node pool l4",
                                                                                          "node pool a100"]


def test_explain_synthesizes_the_declared_pools(existing: Project) -> None:
    fleet = inv.synthesize(load_stack(existing.root, "dev").config)
    devices = {(d.node, d.attribute("productName")) for d in fleet.devices}
    assert devices == {("l4-0", "NVIDIA L4"), ("l4-1", "NVIDIA L4"), ("a100-0", "NVIDIA A100-SXM4-80GB")}
    assert len(fleet.devices) == 10
    assert "legacy: device-plugin group, publishes no ResourceSlices" in fleet.notes


def test_check_and_explain_agree_on_an_existing_cluster(existing: Project) -> None:
    result = gpu_dra("--project-dir", str(existing.root), "explain", "--stack", "dev", "--format", "json")
    explained = {c["claim"] for c in json.loads(result.stdout)["claims"] if not c["allocatable"]}
    assert explained == {"ml-training/h100-x8", "inference/l40s"}, result.stderr
    unsatisfiable = {v.finding.message.split()[2] for v in check.check_stack(existing.root, "dev")
                     if v.finding.rule == "dra-claim-satisfiable"}
    assert unsatisfiable == explained

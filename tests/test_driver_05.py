"""Current charts (issue 28 items 11 and 12): the vendored chart values and the tool that writes them, DRA driver
releases newer than any gpu-dra has read, NVIDIA's device plugin 0.20.0, and Bottlerocket's host DRA driver."""

from __future__ import annotations

import ast
import base64
import subprocess
import tomllib
from pathlib import Path
from typing import Any

import pytest
import yaml

from gpu_dra.core.config.loader import load_stack
from gpu_dra.core.data import helm_merge
from gpu_dra.core.facts import nvidia
from gpu_dra.core.facts.chart_values import CHART_VALUES
from gpu_dra.core.facts.nvidia_driver import ChartName, gate_conflicts
from gpu_dra.core.render import chart_templates, charts
from gpu_dra.core.render.nodes import is_bottlerocket, launch_template_settings

from .conftest import ROOT, Project, load_tool
from .test_config import _problems, _set

CHART_VALUES_DIR = ROOT / "tests" / "data" / "chart-values"


tool = load_tool("vendor_chart_values")


# ------------------------------------------------------------------------------------------- vendored chart values
def test_every_vendored_values_file_is_the_programs_data_and_names_its_source() -> None:
    """The tool writes both from one reading of each tag; the program reads the module, the tests the files."""
    files = sorted(CHART_VALUES_DIR.glob("*.values.yaml"))
    assert {f.name for f in files} == {f"{chart}-{version}.values.yaml" for chart, version in CHART_VALUES}
    for path in files:
        first = path.read_text().splitlines()[0]
        assert first.startswith("# Source: github.com/") and " tag v" in first and "values.yaml" in first, path
        chart, version = path.name.removesuffix(".values.yaml").rsplit("-", 1)
        assert yaml.safe_load(path.read_text()) == CHART_VALUES[(chart, version)], path


def test_the_charts_defaults_are_the_vendored_values() -> None:
    assert nvidia.DRA_CHART_DEFAULTS["dra-driver-nvidia-gpu"] == CHART_VALUES[("dra-driver-nvidia-gpu", "0.4.1")]
    vendored = yaml.safe_load((CHART_VALUES_DIR / "nvidia-device-plugin-0.20.0.values.yaml").read_text())
    assert vendored == nvidia.DEVICE_PLUGIN_CHART_DEFAULTS


def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@example.com", *args],
                   check=True, capture_output=True)


def _tagged_chart(tmp_path: Path, chart_version: str, values: dict[str, Any]) -> Path:
    repo = tmp_path / "clone"
    chart = repo / "deployments" / "helm" / "dra-driver-nvidia-gpu"
    chart.mkdir(parents=True)
    (chart / "Chart.yaml").write_text(f"name: dra-driver-nvidia-gpu\nversion: \"{chart_version}\"\n")
    (chart / "values.yaml").write_text("# a comment the vendored copy drops\n" + yaml.safe_dump(values))
    _git(repo, "init", "-q")
    _git(repo, "add", ".")
    _git(repo, "commit", "-q", "-m", "release")
    _git(repo, "tag", "-a", "v9.9.9", "-m", "v9.9.9")
    return repo / ".git"


def test_the_tool_vendors_a_tag_with_its_source_line(tmp_path: Path) -> None:
    values = {"nvidiaDriverRoot": "/", "kubeletPlugin": {"tolerations": [{"key": "nvidia.com/gpu"}]}}
    git_dir = _tagged_chart(tmp_path, "9.9.9", values)
    release = tool.Release("kubernetes-sigs/dra-driver-nvidia-gpu", "v9.9.9", "deployments/helm/dra-driver-nvidia-gpu")
    found = tool.read(release, git_dir)
    text = tool.vendored_text(found)
    first, _, body = text.partition("\n")
    assert first.startswith("# Source: github.com/kubernetes-sigs/dra-driver-nvidia-gpu tag v9.9.9 (")
    assert "deployments/helm/dra-driver-nvidia-gpu/values.yaml" in first and "comment" not in body
    assert yaml.safe_load(body) == values


def test_the_tool_stops_when_the_tag_holds_another_chart_version(tmp_path: Path) -> None:
    git_dir = _tagged_chart(tmp_path, "9.9.8", {"nvidiaDriverRoot": "/"})
    release = tool.Release("kubernetes-sigs/dra-driver-nvidia-gpu", "v9.9.9", "deployments/helm/dra-driver-nvidia-gpu")
    with pytest.raises(SystemExit, match="Chart.yaml says version '9.9.8'"):
        tool.read(release, git_dir)


def test_the_generated_module_is_the_data_within_the_line_length() -> None:
    """The Python literal the tool writes evaluates to the values and keeps to ruff's 120 columns."""
    for values in CHART_VALUES.values():
        text = tool.python_literal(values, 4, 40)
        assert ast.literal_eval(text) == values
        assert max(len(line) for line in text.splitlines()) <= 120


# ---------------------------------------------------------------------------------------------- DRA driver releases
def test_0_5_0_is_refused_as_a_release_not_read_yet(project: Project) -> None:
    """0.5.0 is released, but no snapshot gpu-dra read holds its tag: the refusal says so and names the release to
    pin (it said "not a release of that chart")."""
    project.edit_stack("prod", _set(["gpu-dra:draDriver", "version"], "0.5.0"))
    problems = _problems(project)
    assert any("gpu-dra:draDriver.version: dra-driver-nvidia-gpu 0.5.0 is a release gpu-dra has not read yet "
               "(tagged 2026-08-19" in p and "pin 0.4.1" in p for p in problems), problems


def test_a_newer_version_gpu_dra_does_not_know_says_what_to_pin() -> None:
    (what, message), = gate_conflicts(ChartName.dra_driver_nvidia_gpu, "0.5.1", {}, False, [])
    assert what == "version" and message == (
        "dra-driver-nvidia-gpu 0.5.1 is not a release of that chart; releases gpu-dra supports: 0.4.0, 0.4.1 (a "
        "release newer than 0.4.1 would be one gpu-dra has not read: pin 0.4.1)")
    older = gate_conflicts(ChartName.dra_driver_nvidia_gpu, "0.3.7", {}, False, [])
    assert older == [("version", "dra-driver-nvidia-gpu 0.3.7 is not a release of that chart; releases gpu-dra "
                                 "supports: 0.4.0, 0.4.1")]
    other_line = gate_conflicts(ChartName.dra_driver_nvidia_gpu, "25.12.0", {}, False, [])
    assert "set chart: nvidia-dra-driver-gpu" in other_line[0][1] and "newer" not in other_line[0][1]


def test_every_supported_release_has_its_values_read() -> None:
    """A stack's draDriver.values is checked against the pinned release's values.yaml: each release gpu-dra accepts
    must have one."""
    from gpu_dra.core.facts.nvidia_driver import supported_releases

    for chart in ChartName:
        for version in supported_releases(chart):
            assert nvidia.chart_values_of(chart.value, version) is not None, (chart, version)


# ------------------------------------------------------------------------------------------- NVIDIA's device plugin
def test_the_device_plugin_chart_is_0_20_0() -> None:
    assert charts.DEVICE_PLUGIN_VERSION == "0.20.0"


def _device_plugin_daemon_sets(version: str) -> list[dict[str, Any]]:
    config = load_stack(ROOT, "prod").config
    return chart_templates.chart_objects(charts.DEVICE_PLUGIN_CHART, version, charts.device_plugin_values(config),
                                         "nvidia-device-plugin", "nvidia-dra-driver")


def test_0_20_0_names_the_service_account_of_both_daemon_sets_and_keeps_their_placement() -> None:
    """v0.20.0 names `<fullname>-service-account` in both DaemonSets (v0.18.2 only with a config map); the
    placement is unchanged, the MPS control daemon's behind nvidia.com/mps.capable."""
    config = load_stack(ROOT, "prod").config
    placement = helm_merge(nvidia.DEVICE_PLUGIN_CHART_DEFAULTS, charts.device_plugin_values(config))
    plugin, mps = _device_plugin_daemon_sets("0.20.0")
    assert [plugin["metadata"]["name"], mps["metadata"]["name"]] == [
        "nvidia-device-plugin", "nvidia-device-plugin-mps-control-daemon"]
    for daemon_set in (plugin, mps):
        pod = daemon_set["spec"]["template"]["spec"]
        assert pod["serviceAccountName"] == "nvidia-device-plugin-service-account"
        assert pod["affinity"] == placement["affinity"] and pod["tolerations"] == placement["tolerations"]
    assert plugin["spec"]["template"]["spec"]["nodeSelector"] == placement["nodeSelector"]
    assert mps["spec"]["template"]["spec"]["nodeSelector"] == {"nvidia.com/mps.capable": "true",
                                                               **placement["nodeSelector"]}
    older = _device_plugin_daemon_sets("0.18.2")
    assert all("serviceAccountName" not in ds["spec"]["template"]["spec"] for ds in older)


# ------------------------------------------------------------------------------------ Bottlerocket's host DRA driver
def _settings(user_data_base64: str | None) -> dict[str, Any]:
    return tomllib.loads(base64.b64decode(user_data_base64 or "").decode())["settings"]


def test_bottlerocket_dra_nodes_run_one_dra_driver_the_charts() -> None:
    """Bottlerocket's NVIDIA variants ship the DRA kubelet plugin as a host service, run only when
    settings.kubelet-dra-drivers.nvidia.enabled is true and the device plugin is off (opt-in, off by default:
    bottlerocket-os/bottlerocket-core-kit PR #1035, bottlerocket PR #4926, Bottlerocket 1.66.0). gpu-dra turns the
    device plugin off on DRA groups and never turns that setting on, so the chart's kubelet plugin is the only one
    there: the staging h100 group (Bottlerocket, DRA) gets it, and its user data leaves the host driver off."""
    config = load_stack(ROOT, "staging").config
    group = next(g for g in config.node_groups if g.name == "h100")
    assert is_bottlerocket(group.ami_type)
    settings = _settings(launch_template_settings(group).user_data_base64)
    assert settings["kubelet-device-plugins"]["nvidia"]["enabled"] is False
    assert settings.get("kubelet-dra-drivers", {}).get("nvidia", {}).get("enabled", False) is False
    assert charts.dra_chart_values(config)["kubeletPlugin"]["nodeSelector"] == {"gpu-dra.io/allocation": "dra"}

"""A team file's `sharing:` becomes the opaque GpuConfig NVIDIA's driver reads (resource.nvidia.com/v1beta1
GpuConfig: sharing.strategy with mpsConfig or timeSlicingConfig; kubernetes-sigs/dra-driver-nvidia-gpu
api/nvidia.com/resource/v1beta1/sharing.go), and the policy pack recognises what was rendered."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from gpu_dra.core.config.models import Team
from gpu_dra.core.render.manifests import claim_template

from .policy_builders import TEMPLATE, happy_resources, mutate, resource, violations


def team_with_sharing(sharing: dict[str, Any]) -> Team:
    """A team file with one template of one request, `gpu`, shared as `sharing` says."""
    return Team.model_validate({"name": "research", "claimTemplates": [{
        "name": "shared", "requests": [{"name": "gpu", "deviceClass": "gpu.nvidia.com"}], "sharing": sharing}]})


def rendered(sharing: dict[str, Any]) -> dict[str, Any]:
    team = team_with_sharing(sharing)
    return claim_template(team, team.claim_templates[0])


def test_mps_renders_nvidias_gpu_config() -> None:
    template = rendered({"strategy": "MPS", "requests": ["gpu"], "activeThreadPercentage": 50,
                         "pinnedMemoryLimit": "10Gi"})
    assert template["spec"]["spec"]["devices"]["config"] == [{
        "requests": ["gpu"],
        "opaque": {"driver": "gpu.nvidia.com", "parameters": {
            "apiVersion": "resource.nvidia.com/v1beta1", "kind": "GpuConfig",
            "sharing": {"strategy": "MPS", "mpsConfig": {"defaultActiveThreadPercentage": 50,
                                                          "defaultPinnedDeviceMemoryLimit": "10Gi"}}}}}]


def test_mps_without_settings_leaves_the_drivers_defaults() -> None:
    """No mpsConfig at all (not an empty one), and no `requests`: the config applies to every request."""
    config = rendered({"strategy": "MPS"})["spec"]["spec"]["devices"]["config"]
    assert config == [{"opaque": {"driver": "gpu.nvidia.com", "parameters": {
        "apiVersion": "resource.nvidia.com/v1beta1", "kind": "GpuConfig", "sharing": {"strategy": "MPS"}}}}]


def test_time_slicing_renders_its_interval() -> None:
    config = rendered({"strategy": "TimeSlicing", "interval": "Short"})["spec"]["spec"]["devices"]["config"]
    assert config[0]["opaque"]["parameters"]["sharing"] == {"strategy": "TimeSlicing",
                                                            "timeSlicingConfig": {"interval": "Short"}}


@pytest.mark.parametrize("sharing", [
    {"strategy": "MPS", "mpsConfig": {"defaultActiveThreadPercentage": 50}},  # the driver's shape, not the file's
    {"strategy": "MPS", "interval": "Short"},                                 # a TimeSlicing setting
    {"strategy": "TimeSlicing", "activeThreadPercentage": 50},                # an MPS setting
])
def test_team_file_refuses_settings_of_the_other_shape(sharing: dict[str, Any]) -> None:
    with pytest.raises(ValidationError):
        team_with_sharing(sharing)


@pytest.mark.parametrize("gates,flagged", [({}, True), ({"MPSSupport": True}, False)])
def test_the_policy_pack_reads_rendered_mps_sharing(gates: dict[str, bool], flagged: bool) -> None:
    """What is rendered is what nvidia-driver-gates checks: MPS needs the driver gate MPSSupport."""
    team = Team.model_validate({"name": "ops", "namespace": {"name": "gpu-ops"}, "claimTemplates": [{
        "name": "shared", "requests": [{"name": "gpu", "deviceClass": "gpu.nvidia.com"}],
        "sharing": {"strategy": "MPS", "activeThreadPercentage": 50}}]})
    template = resource(TEMPLATE, "ops.shared", claim_template(team, team.claim_templates[0]))
    resources = mutate([*happy_resources("dev"), template], "Chart/nvidia-dra-driver", ("values", "featureGates"),
                       gates)
    assert set(violations(resources)) == ({"nvidia-driver-gates"} if flagged else set())

"""Behaviour that hand mutants of the code showed no test held (issue 26, "Tests that can fail"): each test here
fails if the named piece of code is changed as the mutant changed it."""

from __future__ import annotations

from typing import Any

import pytest

from gpu_dra.core.config.loader import load_stack
from gpu_dra.core.findings import ConfigError

from .conftest import Project, named
from .test_cel import run
from .test_doctor import EKS_135, P5_NODE, _drop_gpu_slice, _p5_node, healthy, node, rules


@pytest.mark.parametrize(("expression", "matches"), [
    ("quantity('1').isGreaterThan(quantity('1'))", False),  # strict: `>` made `>=` passed every other test
    ("quantity('1').isLessThan(quantity('1'))", False),
    ("quantity('2').isGreaterThan(quantity('1')) && quantity('1').isLessThan(quantity('2'))", True),
    ("semver('1.2.3').isGreaterThan(semver('1.2.3')) || semver('1.2.3').isLessThan(semver('1.2.3'))", False),
])
def test_cel_comparisons_of_equal_values_are_false(expression: str, matches: bool) -> None:
    result = run(expression)
    assert (result.matches, result.error) == (matches, None)


@pytest.mark.parametrize(("kubelet", "expected"), [
    ("v1.34.1-eks-3cfe0ce", ["kubelet-dra-regression"]),
    ("v1.34.10-eks-3cfe0ce", []),  # not 1.34.1: the version's end is part of the pattern
    ("v1.34.0", ["kubelet-dra-regression"]),
    ("v1.34.02", []),
])
def test_only_kubelets_1_34_0_and_1_34_1_carry_the_dra_regression(kubelet: str, expected: list[str]) -> None:
    objects = healthy()
    _p5_node(kubelet=kubelet)(objects)
    assert rules(objects, EKS_135) == expected


def test_a_device_plugin_node_with_nvidia_gpus_is_no_dra_node_without_slices() -> None:
    """Without the gpu-dra.io/allocation=dra label on any node, a node labelled for the device plugin is not a DRA
    node, even with NVIDIA's nvidia.com/gpu.present label and no device-plugin GPUs counted yet."""
    objects = [o for o in healthy() if o["kind"] != "Node"]
    objects += [node(P5_NODE, {"nvidia.com/gpu.present": "true"}),
                node("ip-10-0-2-21.ec2.internal", {"gpu-dra.io/allocation": "device-plugin",
                                                   "nvidia.com/gpu.present": "true"})]
    assert rules(objects, EKS_135) == []
    _drop_gpu_slice(objects)
    assert rules(objects, EKS_135) == ["gpu-node-without-slices"]  # the DRA node still is one


@pytest.mark.parametrize("namespace", ["kube-system", "kube-public", "kube-node-lease", "default"])
def test_a_team_in_a_reserved_namespace_is_refused(project: Project, namespace: str) -> None:
    def move(team: dict[str, Any]) -> None:
        team["namespace"]["name"] = namespace

    project.edit("stacks/teams/research.yaml", move)
    with pytest.raises(ConfigError) as error:
        load_stack(project.root, "dev")
    assert namespace in str(error.value) and "research" in str(error.value)


@pytest.mark.parametrize(("length", "refused"), [(37, False), (38, True)])
def test_the_eks_node_group_name_prefix_may_have_37_characters(project: Project, length: int, refused: bool) -> None:
    """EKS allows 63 characters and adds a 26-character suffix to a name prefix: `<cluster>-<group>-` <= 37."""
    cluster = load_stack(project.root, "dev").config.cluster.name
    group = "g" * (length - len(cluster) - 2)

    def rename(config: dict[str, Any]) -> None:
        named(config["gpu-dra:nodeGroups"], "l4")["name"] = group

    project.edit_stack("dev", rename)
    if not refused:
        assert any(g.name == group for g in load_stack(project.root, "dev").config.node_groups)
        return
    with pytest.raises(ConfigError) as error:
        load_stack(project.root, "dev")
    assert f"{cluster}-{group}-" in str(error.value) and "exceeds 37 characters" in str(error.value)

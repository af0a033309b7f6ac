"""Resource names are built and read back by one module, so `gpu-dra check` finds the entry behind a URN."""

from __future__ import annotations

import pytest

from gpu_dra.core.render import names
from gpu_dra.core.render.names import Declared, declared_by

TEAMS, CLASSES, GROUPS = {"ml-training", "ops"}, {"gpu-h100", "gpu-l4"}, {"h100", "l40s"}


@pytest.mark.parametrize("resource_type,name,expected", [
    ("kubernetes:resource.k8s.io/v1:ResourceClaimTemplate", names.claim_template("ml-training", "h100-x8"),
     Declared("template", "ml-training", "h100-x8")),
    ("kubernetes:core/v1:Namespace", names.namespace("ml-training"), Declared("namespace", "ml-training")),
    ("kubernetes:core/v1:ResourceQuota", names.quota("ops"), Declared("quota", "ops")),
    ("kubernetes:resource.k8s.io/v1:DeviceClass", names.device_class("gpu-h100"), Declared("device-class", "",
                                                                                            "gpu-h100")),
    ("eks:index:ManagedNodeGroup", names.node_group("gpu-prod", "l40s"), Declared("node-group", "", "l40s")),
    ("aws:eks/nodeGroup:NodeGroup", names.node_group("gpu-prod", "l40s"), Declared("node-group", "", "l40s")),
])
def test_every_declared_name_reads_back_to_its_entry(resource_type: str, name: str, expected: Declared) -> None:
    assert declared_by(resource_type, name, TEAMS, CLASSES, "gpu-prod", GROUPS) == expected


@pytest.mark.parametrize("resource_type,name", [
    ("kubernetes:resource.k8s.io/v1:ResourceClaimTemplate", "research.gpu"),  # a team this stack does not host
    ("kubernetes:core/v1:Namespace", "nvidia-dra-driver"),
    ("kubernetes:resource.k8s.io/v1:DeviceClass", "gpu.nvidia.com"),  # the chart's, not the stack's
    ("eks:index:ManagedNodeGroup", "gpu-prod-system"),
])
def test_names_the_stack_did_not_declare_read_back_to_nothing(resource_type: str, name: str) -> None:
    assert declared_by(resource_type, name, TEAMS, CLASSES, "gpu-prod", GROUPS) is None

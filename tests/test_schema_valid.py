"""Every Kubernetes object every stack declares validates, in strict mode, against the OpenAPI schema of the
stack's Kubernetes version (kubernetes-validate ships 1.34 to 1.37): what the API server would reject at apply
is caught here."""

from __future__ import annotations

import kubernetes_validate
import pytest

from gpu_dra.cli.manifest_files import kubernetes_objects
from gpu_dra.core.loader import load_stack

from .conftest import ROOT, STACKS
from .test_program import program


@pytest.mark.parametrize("stack", STACKS)
def test_rendered_objects_are_schema_valid(stack: str) -> None:
    version = load_stack(ROOT, stack).config.cluster.kubernetes_version
    objects = kubernetes_objects(program(stack))
    assert {o["kind"] for o in objects} >= {"DeviceClass", "Namespace", "ResourceQuota", "ResourceClaimTemplate"}
    for obj in objects:
        kubernetes_validate.validate(obj, version, strict=True)


def test_validation_catches_the_guide_mistake() -> None:
    """The check can fail: request fields outside `exactly` are what the v1 schema rejects."""
    wrong = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
             "metadata": {"name": "gpu-20gb-any"},
             "spec": {"spec": {"devices": {"requests": [{"name": "gpu", "deviceClassName": "gpu.nvidia.com"}]}}}}
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(wrong, "1.34", strict=True)

"""The selector shorthand compiles to the CEL people mean, including the parts they usually get wrong."""

from __future__ import annotations

import pytest

from gpu_dra.core.config import DeviceClassConfig, Match
from gpu_dra.core.manifests import device_class
from gpu_dra.core.selectors import compile_match

ATTR = "device.attributes['gpu.nvidia.com']"


def match(**fields: object) -> Match:
    return Match.model_validate(fields)


def test_guide_example_compiles_to_capacity_and_compare_to() -> None:
    assert compile_match(match(products=["A100", "H100", "H200"], minMemory="20Gi")) == (
        "device.driver == 'gpu.nvidia.com' && "
        "device.capacity['gpu.nvidia.com'].memory.compareTo(quantity('20Gi')) >= 0 && "
        f"{ATTR}.productName.matches('A100|H100|H200')")


@pytest.mark.parametrize("product,pattern", [
    ("L4", "L4\\\\b"),          # L4 must not match "NVIDIA L40S"
    ("A10", "A10\\\\b"),        # nor A10 "NVIDIA A10G" or "NVIDIA A100-SXM4-40GB"
    ("L40S", "L40S"),
    ("H100 80GB", "H100 80GB"),
    ("A100-SXM4", "A100-SXM4"),
])
def test_product_tokens_that_prefix_other_products_get_a_boundary(product: str, pattern: str) -> None:
    assert f"productName.matches('{pattern}')" in compile_match(match(products=[product]))


def test_versions_are_semver_and_padded() -> None:
    expression = compile_match(match(minComputeCapability="8.0", minDriverVersion="570"))
    assert f"{ATTR}.cudaComputeCapability.compareTo(semver('8.0.0')) >= 0" in expression
    assert f"{ATTR}.driverVersion.compareTo(semver('570.0.0')) >= 0" in expression


def test_mig_profiles_select_mig_devices_only() -> None:
    expression = compile_match(match(migProfiles=["1g.10gb", "2g.20gb"]))
    assert f"{ATTR}.type == 'mig' && {ATTR}.profile in ['1g.10gb', '2g.20gb']" in expression


def test_class_reading_gpu_only_attributes_skips_vfio_devices() -> None:
    """VFIO devices publish no memory capacity: without the guard the class would raise on them."""
    config = DeviceClassConfig.model_validate({"name": "big", "match": {"minMemory": "40Gi"}})
    expression = device_class(config)["spec"]["selectors"][0]["cel"]["expression"]
    assert f"{ATTR}.type in ['gpu', 'mig']" in expression
    typed = DeviceClassConfig.model_validate({"name": "big", "match": {"minMemory": "40Gi", "deviceType": "gpu"}})
    assert "type in ['gpu', 'mig']" not in device_class(typed)["spec"]["selectors"][0]["cel"]["expression"]


def test_request_selectors_rely_on_their_class() -> None:
    assert "type in" not in compile_match(match(minMemory="40Gi"))

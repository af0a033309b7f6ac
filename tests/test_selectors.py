"""The selector shorthand selects the devices people mean: each `match:` field is compiled, accepted by the API
server's checks, and evaluated on devices shaped as NVIDIA's driver publishes them (figures from
gpu_dra.core.facts.hardware), as the scheduler would."""

from __future__ import annotations

import pytest

from gpu_dra.core.config.models import DeviceClassConfig, Match
from gpu_dra.core.dra.cel import DeviceView, compile_selector, device_view, evaluate
from gpu_dra.core.facts.hardware import GPU_MODELS
from gpu_dra.core.render.manifests import device_class
from gpu_dra.core.render.selectors import compile_match

DRIVER = "gpu.nvidia.com"
ATTR = "device.attributes['gpu.nvidia.com']"


def match(**fields: object) -> Match:
    return Match.model_validate(fields)


def gpu(model: str = "H100-80GB", *, product: str | None = None, memory: str | None = None,
        driver_version: str = "580.105.8", driver: str = DRIVER) -> DeviceView:
    """A full GPU of a catalog model, optionally with another product name, memory or driver version."""
    spec = GPU_MODELS[model]
    return device_view(driver, {
        "type": {"string": "gpu"}, "productName": {"string": product or spec.product_name},
        "architecture": {"string": spec.architecture},
        "cudaComputeCapability": {"version": spec.compute_capability},
        "driverVersion": {"version": driver_version}}, {"memory": {"value": memory or spec.memory}})


def mig(profile: str) -> DeviceView:
    """A MIG slice of an H100 80GB."""
    spec = GPU_MODELS["H100-80GB"]
    return device_view(DRIVER, {
        "type": {"string": "mig"}, "profile": {"string": profile}, "productName": {"string": spec.product_name},
        "architecture": {"string": spec.architecture}, "cudaComputeCapability": {"version": spec.compute_capability},
        "driverVersion": {"version": "580.105.8"}}, {"memory": {"value": "9856Mi"}})


# A GPU bound to vfio-pci for passthrough (PassthroughSupport): no memory capacity, no versions.
VFIO = device_view(DRIVER, {"type": {"string": "vfio"}, "productName": {"string": "NVIDIA H100 80GB HBM3"}})


def selects(expression: str, device: DeviceView) -> bool:
    """Whether the scheduler would pick the device; the API server must accept the selector first."""
    result = evaluate(compile_selector(expression), device)
    assert result.error is None, result.error
    return result.matches


def test_guide_example_compiles_to_capacity_and_compare_to() -> None:
    """The README quotes this CEL for the guide's template: the text is the contract here."""
    expression = compile_match(match(products=["A100", "H100", "H200"], minMemory="20Gi"))
    assert expression == (
        "device.driver == 'gpu.nvidia.com' && "
        "device.capacity['gpu.nvidia.com'].memory.compareTo(quantity('20Gi')) >= 0 && "
        f"{ATTR}.productName.matches('A100|H100|H200')")
    assert selects(expression, gpu("H100-80GB")) and selects(expression, gpu("A100-40GB"))
    assert not selects(expression, gpu("L40S"))


@pytest.mark.parametrize("products,model,product,selected", [
    (["L4"], "L4", None, True),
    (["L4"], "L40S", None, False),           # L4 is a prefix of L40S
    (["L40S"], "L40S", None, True),
    (["L40S"], "L4", None, False),
    (["A10"], "A10G", None, False),          # nor A10 of A10G...
    (["A10"], "A100-40GB", None, False),     # ...or of A100
    (["A10"], "A10G", "NVIDIA A10", True),
    (["A100"], "A100-80GB", None, True),
    (["H100 80GB"], "H100-80GB", None, True),
    (["H100", "H200"], "H200", None, True),
    (["H100", "H200"], "B200", None, False),
])
def test_products_select_by_product_name(products: list[str], model: str, product: str | None,
                                         selected: bool) -> None:
    assert selects(compile_match(match(products=products)), gpu(model, product=product)) is selected


@pytest.mark.parametrize("min_memory,memory,selected", [
    ("20Gi", "81559Mi", True),
    ("20Gi", "16Gi", False),
    ("20Gi", "20Gi", True),      # at least: the threshold itself passes
    ("20Gi", "20480Mi", True),   # quantities compare by value, not by text
    ("80Gi", "81559Mi", False),  # an H100 "80GB" reports less than 80Gi
])
def test_min_memory_compares_capacity_quantities(min_memory: str, memory: str, selected: bool) -> None:
    assert selects(compile_match(match(minMemory=min_memory)), gpu(memory=memory)) is selected


@pytest.mark.parametrize("model,selected", [("H100-80GB", True), ("A100-40GB", True), ("L4", False)])
def test_architectures_select_any_listed(model: str, selected: bool) -> None:
    assert selects(compile_match(match(architectures=["Hopper", "Ampere"])), gpu(model)) is selected


@pytest.mark.parametrize("minimum,model,selected", [
    ("8.0", "A100-40GB", True),   # 8.0.0: the minimum itself passes
    ("8.0", "T4", False),         # 7.5.0
    ("8.0", "B200", True),        # 10.0.0: a version, not text ("10" < "8" as strings)
    ("8.9", "A10G", False),       # 8.6.0
    ("8.9", "L4", True),          # 8.9.0
])
def test_min_compute_capability_is_a_version_threshold(minimum: str, model: str, selected: bool) -> None:
    assert selects(compile_match(match(minComputeCapability=minimum)), gpu(model)) is selected


@pytest.mark.parametrize("minimum,installed,selected", [
    ("570", "580.105.8", True),
    ("570", "570.0.0", True),
    ("570", "565.57.1", False),
    ("570.124", "570.86.15", False),  # 86 < 124 as numbers, though "86" > "124" as text
    ("570.124", "570.124.6", True),
])
def test_min_driver_version_is_a_version_threshold(minimum: str, installed: str, selected: bool) -> None:
    assert selects(compile_match(match(minDriverVersion=minimum)), gpu(driver_version=installed)) is selected


def test_device_type_gpu_excludes_mig_slices() -> None:
    expression = compile_match(match(deviceType="gpu"))
    assert selects(expression, gpu()) and not selects(expression, mig("1g.10gb"))


@pytest.mark.parametrize("device,selected", [(mig("1g.10gb"), True), (mig("2g.20gb"), True),
                                             (mig("3g.40gb"), False), (gpu(), False)])
def test_mig_profiles_select_mig_devices_of_those_profiles(device: DeviceView, selected: bool) -> None:
    assert selects(compile_match(match(migProfiles=["1g.10gb", "2g.20gb"])), device) is selected


def test_another_drivers_device_is_never_selected() -> None:
    assert not selects(compile_match(match(products=["H100"])), gpu(driver="gpu.example.com"))


def _class_selector(match_fields: dict[str, object]) -> str:
    config = DeviceClassConfig.model_validate({"name": "big", "match": match_fields})
    return str(device_class(config)["spec"]["selectors"][0]["cel"]["expression"])


@pytest.mark.parametrize("match_fields", [{"minMemory": "40Gi"}, {"minMemory": "40Gi", "deviceType": "gpu"},
                                          {"minComputeCapability": "8.0"}])
def test_a_class_reading_gpu_only_attributes_skips_vfio_devices(match_fields: dict[str, object]) -> None:
    """A DeviceClass sees every device: on a VFIO device (no memory, no versions) a lookup error would abort every
    claim of the class, so the class must just not match it."""
    expression = _class_selector(match_fields)
    assert selects(expression, gpu("H100-80GB"))
    assert not selects(expression, VFIO)


def test_request_selectors_rely_on_their_class() -> None:
    """A request's selectors carry no device-type guard: they only see devices their class admitted, and on a VFIO
    device one would raise (which is why classes carry the guard)."""
    result = evaluate(compile_selector(compile_match(match(minMemory="40Gi"))), VFIO)
    assert result.error == "no such key: memory"

"""The DRA CEL engine: compile-time rejections of the API server and per-device semantics of the scheduler."""

from __future__ import annotations

import pytest

from gpu_dra.core.dra.cel import CompileError, compile_selector, device_view, evaluate

H100 = device_view(
    "gpu.nvidia.com",
    {"productName": {"string": "NVIDIA H100 80GB HBM3"}, "type": {"string": "gpu"},
     "cudaComputeCapability": {"version": "9.0.0"}, "driverVersion": {"version": "580.105.8"},
     "resource.kubernetes.io/pcieRoot": {"string": "pci0000:44"}},
    {"memory": {"value": "81559Mi"}})

GUIDE = ("device.driver == 'gpu.nvidia.com' && "
         "device.capacity['gpu.nvidia.com'].memory.compareTo(quantity('20Gi')) >= 0 && "
         "device.attributes['gpu.nvidia.com'].productName.matches('A100|H100|H200')")


def run(expression: str, device=H100, consumable_capacity: bool = False):
    """Evaluate as the scheduler does a stored selector (no estimated-cost check on write)."""
    return evaluate(compile_selector(expression, consumable_capacity, check_cost=False), device)


@pytest.mark.parametrize("expression,matches", [
    (GUIDE, True),
    ("device.capacity['gpu.nvidia.com'].memory.compareTo(quantity('80Gi')) >= 0", False),  # 81559Mi < 80Gi
    ("device.capacity['gpu.nvidia.com'].memory.isGreaterThan(quantity('79Gi'))", True),
    ("quantity('1Gi') == quantity('1024Mi')", True),
    ("quantity('1Gi').add(quantity('1Gi')) == quantity('2Gi') && quantity('2').sub(1) == quantity('1')", True),
    ("quantity('1.5').isInteger() == false && quantity('1k').asInteger() == 1000", True),
    # sign is a global function (kubernetes/apiserver@v0.35.7:pkg/cel/library/quantity.go `cel.Overload`)
    ("sign(quantity('-3')) == -1 && quantity('500m').asApproximateFloat() == 0.5", True),
    ("isQuantity('20Gi') && !isQuantity('20 GB')", True),
    ("device.attributes['gpu.nvidia.com'].cudaComputeCapability.isGreaterThan(semver('8.0.0'))", True),
    ("device.attributes['gpu.nvidia.com'].driverVersion.compareTo(semver('570', true)) >= 0", True),
    ("semver('1.2.3').isLessThan(semver('1.10.0')) && semver('1.0.0-rc.1').isLessThan(semver('1.0.0'))", True),
    ("semver('v01.2', true) == semver('1.2.0') && semver('1.2.3').major() == 1", True),
    ("isSemver('1.2.3') && !isSemver('1.2') && isSemver('1.2', true)", True),
    ("device.attributes['resource.kubernetes.io'].pcieRoot == 'pci0000:44'", True),
    ("device.attributes['no-such-domain'].size() == 0", True),            # unknown domain: empty map
    ("'no-such-domain' in device.attributes", False),                      # ...but not a member
    ("has(device.attributes['no-such-domain'].x)", False),
    ("device.attributes['gpu.nvidia.com'].?memory.orValue(0) == 0", True),  # optional chaining
    ("cel.bind(a, device.attributes['gpu.nvidia.com'], a.type == 'gpu')", True),
    ("'asymetric'.matches('[^a]?sym')", True),                             # RE2, unanchored
    ("device.attributes['gpu.nvidia.com'].productName.find('H[0-9]+') == 'H100'", True),
    ("'a1b2'.findAll('[0-9]') == ['1', '2'] && 'a1b2'.findAll('[0-9]', 1) == ['1']", True),
    ("device.attributes['gpu.nvidia.com'].productName.lowerAscii().contains('h100')", True),
])
def test_evaluates_like_kubernetes(expression: str, matches: bool) -> None:
    result = run(expression)
    assert result.error is None
    assert result.matches is matches


@pytest.mark.parametrize("expression,error", [
    ("device.attributes['gpu.nvidia.com'].memory == 1", "no such key: memory"),
    ("device.capacity['gpu.nvidia.com'].cores.isInteger()", "no such key: cores"),
    ("quantity('1.5').asInteger() == 1", "cannot convert value to integer"),
])
def test_runtime_errors_are_reported_not_swallowed(expression: str, error: str) -> None:
    result = run(expression)
    assert result.error == error and result.matches is False


def test_bad_version_attribute_is_a_runtime_error() -> None:
    device = device_view("gpu.nvidia.com", {"driverVersion": {"version": "580.105.08"}})
    result = run("device.driver == 'gpu.nvidia.com'", device)
    assert result.error is not None and "attribute driverVersion: parse semantic version" in result.error


@pytest.mark.parametrize("expression,kind,message", [
    # The migration guide's template: quantities have no >= and memory is not an attribute.
    ('device.attributes["gpu.nvidia.com"].memory.quantity >= quantity("20Gi")', "type",
     "found no matching overload for '_>=_' applied to '(dyn, kubernetes.Quantity)'"),
    ("quantity('1Gi') >= quantity('1Mi')", "type",
     "found no matching overload for '_>=_' applied to '(kubernetes.Quantity, kubernetes.Quantity)'"),
    ("device.atributes.size() > 0", "type", "undefined field 'atributes'"),
    ("device.allowMultipleAllocations", "type", "undefined field 'allowMultipleAllocations'"),
    ("quantity('-3').sign() == -1", "type", "sign"),  # not a member function, whatever quantity.go's doc says
    ("device.driver", "result", "must evaluate to bool or the unknown type, not string"),
    ("1 + 1", "result", "not int"),
    ("device.driver ==", "syntax", "Syntax error"),
    ("", "syntax", "expression is empty"),
    ("device.attributes['gpu.nvidia.com'].productName.matches('[')", "regex", "invalid regular expression '['"),
    ("true && " * 1300 + "true", "length", "must have at most 10240 bytes"),
])
def test_api_server_rejections(expression: str, kind: str, message: str) -> None:
    with pytest.raises(CompileError) as caught:
        compile_selector(expression)
    assert caught.value.kind == kind
    assert message in caught.value.message


def test_allow_multiple_allocations_only_with_consumable_capacity() -> None:
    device = device_view("gpu.nvidia.com", {}, {}, allow_multiple_allocations=True)
    assert run("device.allowMultipleAllocations", device, consumable_capacity=True).matches is True
    assert run("device.allowMultipleAllocations", device_view("gpu.nvidia.com"),
               consumable_capacity=True).matches is False


def test_unprefixed_names_belong_to_the_driver_domain() -> None:
    device = device_view("dra.example.com", {"model": {"string": "x"}, "other.io/model": {"string": "y"}})
    assert run("device.attributes['dra.example.com'].model == 'x' && "
               "device.attributes['other.io'].model == 'y'", device).matches is True


def test_a_rebound_device_is_left_alone() -> None:
    assert run("[{'attributes': {'a': 1}}].exists(device, device.attributes['a'] == 1)").matches is True


def test_non_bool_result_at_runtime_uses_the_scheduler_words() -> None:
    result = run("device.attributes['gpu.nvidia.com'].productName")
    assert result.error is not None and result.error.startswith("CEL result of type string could not be converted")


@pytest.mark.parametrize("expression", [
    "[1, 2].isSorted()", "sets.contains([1], [1])", "isIP('10.0.0.1')", "{'a': 1}.all(k, v, v > 0)",
    "device.capacity['gpu.nvidia.com'].memory.asInteger() > 1.5",
])
def test_kubernetes_libraries_not_implemented_are_not_reported_as_rejections(expression: str) -> None:
    with pytest.raises(CompileError) as caught:
        compile_selector(expression)
    assert caught.value.kind == "unsupported"
    assert "the API server accepts" in caught.value.message


def test_estimated_cost_over_the_limit_is_rejected_like_the_api_server() -> None:
    nested = "[" + ",".join(str(i) for i in range(200)) + "]"
    expression = f"{nested}.all(x, {nested}.all(y, {nested}.all(z, x + y + z >= 0)))"
    with pytest.raises(CompileError) as caught:
        compile_selector(expression)
    assert caught.value.kind == "cost" and "too complex, exceeds cost limit" in caught.value.message
    stored = compile_selector(expression, check_cost=False)  # already in a cluster: evaluated, stopped at the limit
    assert "actual cost limit exceeded" in (evaluate(stored, H100).error or "")


@pytest.mark.parametrize("expression,cost", [
    # ident 1 + select 1 + string equality ceil(min(63, 14) * 0.1) = 2
    ("device.driver == 'gpu.nvidia.com'", 4),
    # 4; memory lookup 4 + quantity() 1 + compareTo 1 + >= 1; productName lookup 4 + matches ceil(65 * 0.1) *
    # ceil(14 * 0.25) = 7 * 4
    (GUIDE, 43),
    # range 3 + per id (32 at most): loop condition 3 + step 4 (|| with k == '...' at ceil(11 * 0.1)); result 1
    ("device.attributes['gpu.nvidia.com'].exists(k, k == 'productName')", 228),
])
def test_estimated_costs(expression: str, cost: int) -> None:
    assert compile_selector(expression).estimated_cost == cost


def test_quantity_equality_costs_what_kubernetes_charges() -> None:
    """Kubernetes charges `==` on two Quantities 1 (kubernetes/apiserver@v0.35.7:pkg/cel/library/cost.go), also on a
    capacity value, which gpu-dra's checker types as dyn; `!=` has no such case, so cel-go charges it as a
    comparison of values of unknown size, and a new selector using it exceeds the limit."""
    assert compile_selector("device.capacity['gpu.nvidia.com'].memory == quantity('80Gi')").estimated_cost == 6
    with pytest.raises(CompileError) as caught:
        compile_selector("device.capacity['gpu.nvidia.com'].memory != quantity('80Gi')")
    assert caught.value.kind == "cost"

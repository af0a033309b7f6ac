"""The shortcuts that keep explain fast on a 10,000-node fleet read and write what the general paths do: a plain
device parsed in one pass, a device's CEL readability judged once per distinct set of the attributes that can fail,
and each distinct node list of the JSON report encoded once."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from gpu_dra.cli.commands.explain import _json_sharing_node_lists
from gpu_dra.core.analysis import inventory
from gpu_dra.core.analysis.inventory import Device
from gpu_dra.core.dra import slices
from gpu_dra.core.dra.cel import attributes_convert
from gpu_dra.core.dra.objects import ObjectError
from gpu_dra.core.dra.slices import parse_slice

from .test_objects import GPU_SLICE

GPU = GPU_SLICE["spec"]["devices"][0]


def _with(**changes: Any) -> dict[str, Any]:
    device = copy.deepcopy(GPU)
    for key, value in changes.items():
        if value is None:
            device.pop(key, None)
        else:
            device[key] = value
    return device


def _attribute(name: str, typed: Any) -> dict[str, Any]:
    return _with(attributes={**GPU["attributes"], name: typed})


DEVICES = [
    GPU,
    _with(capacity=None),
    _with(attributes=None),
    _with(attributes={}, capacity={}),
    _with(capacity={"memory": "80Gi"}),  # a bare quantity
    _with(capacity={"memory": {"value": "80Gi", "requestPolicy": {"default": "1Gi"}}}),
    _with(capacity={"memory": {"value": "80Gi", "requestPolicy": None}}),
    _with(taints=[{"key": "k", "value": "v", "effect": "NoSchedule"}]),
    _with(allowMultipleAllocations=True),
    _with(basic={"attributes": GPU["attributes"]}),
    _attribute("index", {"int": 3}),
    _attribute("index", {"int": 2**63 - 1}),
    _attribute("index", {"int": -(2**63)}),
    _attribute("healthy", {"bool": False}),
    _attribute("index", {"int": 2**63}),
    _attribute("index", {"int": "3"}),
    _attribute("index", {"int": True}),
    _attribute("index", {"int": 1.5}),
    _attribute("healthy", {"bool": 1}),
    _attribute("odd", {"string": "a", "version": "1.0.0"}),
    _attribute("odd", {}),
    _attribute("odd", "text"),
    _with(attributes=["a"]),
    _with(capacity=["a"]),
    "not a device",
]


def _read(devices: list[Any]) -> Any:
    spec = copy.deepcopy(GPU_SLICE)
    spec["spec"]["devices"] = devices
    try:
        return parse_slice(spec, "dump.yaml")
    except ObjectError as error:
        return str(error)


@pytest.mark.parametrize("device", DEVICES, ids=range(len(DEVICES)))
def test_a_plain_device_reads_as_the_general_path_reads_it(device: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    fast = _read([device])
    monkeypatch.setattr(slices, "_plain_device", lambda device: None)
    general = _read([device])
    assert fast == general
    if not isinstance(fast, str):
        for mine, theirs in zip(fast.devices, general.devices, strict=True):
            judged = {"convertible"}  # what only the shortcut judges as it reads
            assert ([type(v) for k, v in vars(mine).items() if k not in judged]
                    == [type(v) for k, v in vars(theirs).items() if k not in judged])
            assert theirs.convertible is None
            assert mine.convertible in (None, attributes_convert(mine.attributes))
            device = next(inventory.devices_of(fast, "dump.yaml"))
            assert device.unreadable is (not attributes_convert(device.attributes))


def test_the_shortcut_takes_the_fleets_devices_and_leaves_the_odd_ones() -> None:
    assert slices._plain_device(GPU) == slices._device(GPU, "w", False)
    assert slices._plain_device(_attribute("index", {"int": 3})) is not None
    for odd in (_attribute("index", {"int": 2**63}), _attribute("healthy", {"bool": 1}),
                _with(capacity={"memory": {"value": "80Gi", "requestPolicy": {"default": "1Gi"}}}),
                _with(taints=[]), _attribute("odd", {})):
        assert slices._plain_device(odd) is None


def test_a_plain_device_says_whether_its_attributes_convert_to_cel() -> None:
    for typed, convertible in (({"version": "1.2.3"}, True), ({"version": "1.2"}, False),
                               ({"float": 1.5}, False), ({"string": "1.2"}, True), ({"int": 3}, True)):
        device = slices._plain_device(_attribute("odd", typed))
        assert device is not None and device.convertible is convertible, typed


ATTRIBUTE_SETS: list[dict[str, Any]] = [
    {"driverVersion": {"version": "580.105.8"}, "uuid": {"string": "GPU-1"}},
    {"driverVersion": {"version": "580.105"}, "uuid": {"string": "GPU-2"}},  # not semver
    {"driverVersion": {"version": "580.105.8"}, "uuid": {"string": "GPU-3"}},
    {"index": {"int": 1}, "driverVersion": {"version": "1.0.0"}},
    {"index": {"int": "x"}, "driverVersion": {"version": "1.0.0"}},  # a Device made by hand
    {"index": {"int": "7"}, "driverVersion": {"version": "1.0.0"}},
    {"odd": {"float": 1.5}},  # no type CEL knows
    {"odd": {"version": ["1.0.0"]}},  # unhashable
    {"odd": "text"},  # not a mapping
    {"flag": {"bool": "no"}, "name": {"string": 5}},
    {"both": {"int": "x", "string": "y"}},  # int is read first
]


@pytest.mark.parametrize("order", [1, -1])
def test_unreadable_is_judged_as_the_cel_conversion_judges_it(order: int) -> None:
    inventory._CONVERTS.clear()
    for attributes in ATTRIBUTE_SETS[::order]:
        device = Device("n", "gpu.nvidia.com", "p", "gpu-0", attributes, {})
        assert device.unreadable is (not attributes_convert(attributes)), attributes
    assert inventory._CONVERTS, "judged once per distinct set"


def _report(claim: str, nodes: list[str]) -> dict[str, Any]:
    return {"claim": claim, "allocatable": bool(nodes), "nodes": nodes, "reason": "", "requests": []}


@pytest.mark.parametrize("claims", [
    [],
    [_report("ml/a", ["n-1", "n-2"]), _report("ml/b", ["n-1", "n-2"]), _report("ml/c", []),
     _report("ml/d", ["n-2", "é\u2028\x00"])],
    # an input's text that reads like a node list's stand-in, alone or after a quote: encoded as it is written
    [_report("\x00node list 0", ["n-1"]), _report("ml/b", ["n-2"])],
    [_report('ml/a"\x00node list 1', ["n-1"]), _report("ml/b", ["n-2"])],
    [_report("ml/a", ["\x00node list 1"]), _report("ml/b", ["n-2"])],
])
def test_node_lists_encoded_once_read_as_json_dumps_writes_them(claims: list[dict[str, Any]]) -> None:
    document = {"source": "dump.yaml", "claims": claims, "pods": [], "notes": ["\x00node list 0"]}
    expected = json.dumps(document, separators=(",", ":"))
    assert _json_sharing_node_lists(copy.deepcopy(document)) == expected

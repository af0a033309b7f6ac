"""Karpenter's NVIDIA GPU DRA metadata (gpu_dra/core/facts/karpenter_dra.py): the module is what
tools/vendor_karpenter_dra.py writes from the vendored upstream Go files, and the parse reads those files right."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from gpu_dra.core.facts import karpenter_dra
from gpu_dra.core.facts.karpenter_dra import KARPENTER_DRA, SUPPORTED_VERSIONS, Version

from .conftest import ROOT, load_tool

VENDORED = ROOT / "tests" / "data" / "karpenter"


tool = load_tool("vendor_karpenter_dra")


# ------------------------------------------------------------------------------------------- the generated module
def test_the_tool_regenerates_the_committed_module_byte_for_byte(tmp_path: Path) -> None:
    out = tmp_path / "karpenter_dra.py"
    tool.main(["--out", str(out)])
    assert out.read_text() == (ROOT / "gpu_dra" / "core" / "facts" / "karpenter_dra.py").read_text()


def _plain(value: object) -> object:
    """An attribute value comparable across the tool's and the module's Version types."""
    return ("version", value.text) if isinstance(value, (tool.Version, Version)) else value


def test_the_module_holds_every_gpu_the_vendored_files_list() -> None:
    assert SUPPORTED_VERSIONS == tuple(release.version for release in tool.RELEASES) == tuple(KARPENTER_DRA)
    for release in tool.RELEASES:
        parsed = tool.parse(release.path)
        module = KARPENTER_DRA[release.version]
        assert list(module) == list(parsed)
        for instance_type, gpus in parsed.items():
            assert [gpu.name for gpu in module[instance_type]] == [f"gpu-{i}" for i in range(len(gpus))]
            assert [{name: _plain(value) for name, value in gpu.attributes.items()} for gpu in module[instance_type]] \
                == [{name: _plain(value) for name, value in gpu.attributes.items()} for gpu in gpus], instance_type
            assert [gpu.capacity for gpu in module[instance_type]] == [gpu.capacity for gpu in gpus]


def test_every_vendored_file_is_a_named_apache_licensed_source() -> None:
    sources = (VENDORED / "SOURCES.md").read_text()
    assert sorted(p.relative_to(VENDORED).as_posix() for p in VENDORED.rglob("*.go")) == sorted(
        release.path.relative_to(VENDORED).as_posix() for release in tool.RELEASES)
    for release in tool.RELEASES:
        assert re.fullmatch(r"[0-9a-f]{40}", release.commit)
        assert release.commit in sources and f"v{release.version}" in sources
        assert release.commit in karpenter_dra.SOURCES[release.version]
        assert tool.LICENCE_LINE in release.path.read_text()


# ------------------------------------------------------------------------------------ spot checks of Karpenter 1.15.0
def _attribute(version: str, instance_type: str, name: str) -> list[object]:
    return [gpu.attributes[name] for gpu in KARPENTER_DRA[version][instance_type]]


def test_karpenter_1_15_0_p5_48xlarge_has_eight_h100s_on_eight_pcie_roots() -> None:
    gpus = KARPENTER_DRA["1.15.0"]["p5.48xlarge"]
    assert len(gpus) == 8
    assert set(_attribute("1.15.0", "p5.48xlarge", "productName")) == {"NVIDIA H100 80GB HBM3"}
    assert len(set(_attribute("1.15.0", "p5.48xlarge", "resource.kubernetes.io/pcieRoot"))) == 8
    assert {gpu.capacity["memory"] for gpu in gpus} == {"81152Mi"}
    assert _attribute("1.15.0", "p5.48xlarge", "cudaComputeCapability")[0] == Version("9.0.0")


def test_karpenter_1_15_0_small_types_and_their_memory() -> None:
    (l4,) = KARPENTER_DRA["1.15.0"]["g6.xlarge"]
    assert (l4.name, l4.attributes["productName"], l4.capacity) == ("gpu-0", "NVIDIA L4", {"memory": "23034Mi"})
    assert [gpu.capacity["memory"] for gpu in KARPENTER_DRA["1.15.0"]["g5g.metal"]] == ["16Gi", "16Gi"]
    assert _attribute("1.15.0", "g5g.metal", "resource.kubernetes.io/pcieRoot") == ["pci0002:00", "pci0002:00"]
    assert _attribute("1.15.0", "g4dn.metal", "resource.kubernetes.io/pcieRoot") == [
        "pci0000:17", "pci0000:17", "pci0000:34", "pci0000:34", "pci0000:e6", "pci0000:e6", "pci0000:f3", "pci0000:f3"]


def test_karpenter_1_15_0_is_the_metadata_before_1_15_2() -> None:
    """v1.15.2's release notes: it added g7/g7e and dropped g6f/gr6f, so the release before had the opposite."""
    types = KARPENTER_DRA["1.15.0"]
    assert len(types) == 53 and sum(len(gpus) for gpus in types.values()) == 160
    assert {"g6f.large", "g6f.xlarge", "g6f.2xlarge", "g6f.4xlarge", "gr6f.4xlarge"} <= set(types)
    assert not [name for name in types if name.startswith(("g7.", "g7e."))]
    assert _attribute("1.15.0", "g6f.large", "brand") == ["NvidiaVWS"]


def test_templates_carry_the_same_attribute_names_and_never_the_bound_ones() -> None:
    for gpus in KARPENTER_DRA["1.15.0"].values():
        for gpu in gpus:
            assert set(gpu.attributes) == {"architecture", "brand", "cudaComputeCapability", "productName",
                                           "resource.kubernetes.io/pcieRoot", "type"}
            assert set(gpu.capacity) == {"memory"}
            assert gpu.attributes["type"] == "gpu"
    assert set(karpenter_dra.BOUND_ATTRIBUTES) < karpenter_dra.RUNTIME_ONLY_ATTRIBUTES
    assert "resource.kubernetes.io/pcieRoot" in karpenter_dra.RUNTIME_ONLY_ATTRIBUTES


# ------------------------------------------------------------------------------------------------ the Go parser
_HEADER = '''/*
Licensed under the Apache License, Version 2.0 (the "License");
*/

package drametadata

// GPUMetadataByInstanceType maps an EC2 instance type to its scraped NVIDIA GPU metadata.
var GPUMetadataByInstanceType = map[string]*DeviceMetadata{
'''
_DEVICE = '''\t\t\t{
\t\t\t\tAttributes: map[resourcev1.QualifiedName]resourcev1.DeviceAttribute{
\t\t\t\t\t"cores":   {IntValue: intPtr(-3)},
\t\t\t\t\t"mig":     {BoolValue: boolPtr(false)},
\t\t\t\t\t"name":    {StringValue: strPtr("A")},
\t\t\t\t\t"version": {VersionValue: strPtr("1.2.3")},
\t\t\t\t},
\t\t\t},
'''


def _go(body: str) -> str:
    return _HEADER + body + "}\n"


def _entry(count: int, devices: str) -> str:
    return f'\t"x.large": {{\n\t\tCount: {count},\n\t\tDevices: []DRADevice{{\n{devices}\t\t}},\n\t}},\n'


def test_the_parser_keeps_each_attribute_type_and_a_device_without_capacity(tmp_path: Path) -> None:
    path = tmp_path / "metadata.go"
    path.write_text(_go(_entry(1, _DEVICE)))
    (gpu,) = tool.parse(path)["x.large"]
    assert gpu.attributes == {"cores": -3, "mig": False, "name": "A", "version": tool.Version("1.2.3")}
    assert type(gpu.attributes["mig"]) is bool and gpu.capacity == {}


@pytest.mark.parametrize(("body", "refused"), [
    (_entry(2, _DEVICE), "Count (2)"),
    (_entry(1, _DEVICE.replace("intPtr(-3)", "strPtr(\"3\")")), "IntValue given as strPtr"),
    (_entry(1, _DEVICE.replace("IntValue", "FloatValue")), "resource.k8s.io/v1 type"),
    (_entry(1, _DEVICE.replace('"A"', '"A\\n"')), "attribute literal"),
    (_entry(1, _DEVICE.replace("\t\t\t\t},\n\t\t\t},", "\t\t\t\t},\n\t\t\t\tConsumesCounters: nil,\n\t\t\t},")),
     "the end of a device"),
    (_entry(1, _DEVICE) + "\t// a comment\n", "// a comment"),
])
def test_the_parser_refuses_what_it_does_not_know(tmp_path: Path, body: str, refused: str) -> None:
    path = tmp_path / "metadata.go"
    path.write_text(_go(body))
    with pytest.raises(ValueError, match=re.escape(refused)):
        tool.parse(path)


def test_the_parser_refuses_a_file_without_the_licence(tmp_path: Path) -> None:
    path = tmp_path / "metadata.go"
    path.write_text(_go(_entry(1, _DEVICE)).replace("Apache", "MIT"))
    with pytest.raises(ValueError, match="licence"):
        tool.parse(path)

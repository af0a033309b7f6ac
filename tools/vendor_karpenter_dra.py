#!/usr/bin/env python3
"""Vendor the NVIDIA GPU DRA metadata Karpenter (aws/karpenter-provider-aws) ships, per Karpenter release.

Karpenter launches nodes for pending ResourceClaims by evaluating them against templates of the devices each
instance type will publish (pkg/providers/nvidiadra/nvidiadra.go builds one per instance type from
pkg/providers/drametadata/zz_generated_gpu_metadata.go). This tool reads the byte-exact copies of that Go file kept in
tests/data/karpenter/v<release>/ (tests/data/karpenter/SOURCES.md names each one's commit and how its release was
established) and writes gpu_dra/core/facts/karpenter_dra.py: per release, per instance type, the GPUs with their
typed attributes and capacities exactly as upstream lists them, plus what Karpenter says it cannot know before launch.

The parser accepts only the gofmt'd shape of the generated file (resource.k8s.io/v1 DeviceAttribute values through
strPtr/intPtr/boolPtr, capacities through resource.MustParse) and stops at the first line it does not know, so a
change of upstream's generator fails here instead of yielding silently wrong data. Development tool, not shipped:
stdlib only. Usage:

    tools/vendor_karpenter_dra.py [--out PATH]
"""

from __future__ import annotations

import argparse
import json
import re
import textwrap
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import NoReturn

ROOT = Path(__file__).resolve().parents[1]
VENDORED = ROOT / "tests" / "data" / "karpenter"
MODULE = ROOT / "gpu_dra" / "core" / "facts" / "karpenter_dra.py"
REPOSITORY = "aws/karpenter-provider-aws"
GPU_METADATA = "pkg/providers/drametadata/zz_generated_gpu_metadata.go"
LICENCE_LINE = 'Licensed under the Apache License, Version 2.0 (the "License");'


@dataclass(frozen=True)
class Release:
    version: str
    commit: str
    established: str  # how the commit was tied to the release (SOURCES.md has the evidence)

    @property
    def path(self) -> Path:
        return VENDORED / f"v{self.version}" / Path(GPU_METADATA).name


RELEASES = (
    Release("1.15.0", "25682c4906fe80a6ed5c9ace36fceba65bc5c684",
            "release mapping inferred (UNVERIFIED): it holds g6f/gr6f and no g7/g7e, the metadata the v1.15.2 "
            "release notes say that release replaced"),
)


@dataclass(frozen=True)
class Version:
    """A version attribute (VersionValue): kept apart from strings because CEL compares it as semver."""

    text: str


AttributeValue = str | int | bool | Version


@dataclass(frozen=True)
class Gpu:
    attributes: dict[str, AttributeValue]
    capacity: dict[str, str]


# --------------------------------------------------------------------------------------------------- parsing
_HEADER = ("// GPUMetadataByInstanceType maps an EC2 instance type to its scraped NVIDIA GPU metadata.",
           "var GPUMetadataByInstanceType = map[string]*DeviceMetadata{")
_ENTRY = re.compile(r'\t"(?P<name>[^"\\]+)": \{')
_COUNT = re.compile(r"\t\tCount: (?P<count>\d+),")
_DEVICES = "\t\tDevices: []DRADevice{"
_DEVICE = "\t\t\t{"
_ATTRIBUTES = "\t\t\t\tAttributes: map[resourcev1.QualifiedName]resourcev1.DeviceAttribute{"
_ATTRIBUTE = re.compile(r'\t{5}"(?P<name>[^"\\]+)": +\{(?P<kind>\w+): (?P<helper>\w+)\((?P<literal>[^()]*)\)\},')
_CAPACITY = "\t\t\t\tCapacity: map[resourcev1.QualifiedName]resourcev1.DeviceCapacity{"
_QUANTITY = re.compile(r'\t{5}"(?P<name>[^"\\]+)": +\{Value: resource\.MustParse\("(?P<quantity>[^"\\]+)"\)\},')
# DeviceAttribute field -> the helper types.go defines for it and the Go literal it takes.
_KINDS = {"StringValue": ("strPtr", r'"[^"\\]*"'), "VersionValue": ("strPtr", r'"[^"\\]*"'),
          "IntValue": ("intPtr", r"-?\d+"), "BoolValue": ("boolPtr", r"true|false")}


class _Lines:
    """The file's lines with their numbers, so every refusal names where upstream's shape changed."""

    def __init__(self, path: Path, text: str):
        self.path = path
        self.numbered: Iterator[tuple[int, str]] = enumerate(text.split("\n"), 1)
        self.number = 0

    def next(self) -> str:
        self.number, line = next(self.numbered, (self.number + 1, "<end of file>"))
        return line

    def expect(self, wanted: str) -> None:
        line = self.next()
        if line != wanted:
            self.fail(line, repr(wanted))

    def match(self, pattern: re.Pattern[str], line: str | None = None) -> re.Match[str]:
        line = self.next() if line is None else line
        found = pattern.fullmatch(line)
        if found is None:
            self.fail(line, pattern.pattern)
        return found

    def fail(self, line: str, wanted: str) -> NoReturn:
        raise ValueError(f"{self.path}:{self.number}: {line!r} is not {wanted}")


def _value(kind: str, helper: str, literal: str) -> AttributeValue:
    wanted_helper, literal_pattern = _KINDS[kind]
    if helper != wanted_helper or not re.fullmatch(literal_pattern, literal):
        raise ValueError(f"{kind} given as {helper}({literal})")
    if kind == "IntValue":
        return int(literal)
    if kind == "BoolValue":
        return literal == "true"
    text: str = json.loads(literal)  # no escapes (the pattern refuses backslashes), so Go's literal is JSON's
    return Version(text) if kind == "VersionValue" else text


def _device(lines: _Lines) -> Gpu:
    lines.expect(_ATTRIBUTES)
    attributes: dict[str, AttributeValue] = {}
    while (line := lines.next()) != "\t\t\t\t},":
        found = lines.match(_ATTRIBUTE, line)
        if found["name"] in attributes or found["kind"] not in _KINDS:
            lines.fail(line, "a new attribute of a resource.k8s.io/v1 type")
        try:
            attributes[found["name"]] = _value(found["kind"], found["helper"], found["literal"])
        except ValueError as error:
            lines.fail(line, f"an attribute literal ({error})")
    capacity: dict[str, str] = {}
    if (line := lines.next()) == _CAPACITY:
        while (line := lines.next()) != "\t\t\t\t},":
            found = lines.match(_QUANTITY, line)
            if found["name"] in capacity:
                lines.fail(line, "a new capacity")
            capacity[found["name"]] = found["quantity"]
        line = lines.next()
    if line != "\t\t\t},":
        lines.fail(line, "the end of a device")
    return Gpu(attributes, capacity)


def parse(path: Path) -> dict[str, tuple[Gpu, ...]]:
    """GPUMetadataByInstanceType of one vendored file: instance type -> its GPUs, in upstream's order."""
    text = path.read_text()
    if LICENCE_LINE not in text.split("*/", 1)[0]:
        raise ValueError(f"{path}: no Apache-2.0 licence header")
    lines = _Lines(path, text)
    while (line := lines.next()) != _HEADER[0]:
        if line == "<end of file>":
            lines.fail(line, repr(_HEADER[0]))
    lines.expect(_HEADER[1])
    metadata: dict[str, tuple[Gpu, ...]] = {}
    while (line := lines.next()) != "}":
        name = lines.match(_ENTRY, line)["name"]
        count = int(lines.match(_COUNT)["count"])
        lines.expect(_DEVICES)
        gpus: list[Gpu] = []
        while (line := lines.next()) != "\t\t},":
            if line != _DEVICE:
                lines.fail(line, "the start of a device")
            gpus.append(_device(lines))
        lines.expect("\t},")
        if name in metadata or count != len(gpus):
            lines.fail(line, f"the end of a new instance type whose Count ({count}) is its number of devices")
        metadata[name] = tuple(gpus)
    if lines.next() != "" or lines.next() != "<end of file>":
        lines.fail("text after the map", "the end of the file")
    return metadata


# ------------------------------------------------------------------------------------------------- writing
def _literal(value: AttributeValue) -> str:
    if isinstance(value, Version):
        return f"Version({json.dumps(value.text)})"
    if isinstance(value, bool):
        return repr(value)
    return json.dumps(value)


def _fill(opening: str, tokens: list[str], closing: str, indent: int, width: int = 120) -> list[str]:
    """`tokens` comma-separated between `opening` and `closing`, lines filled to `width`, continuation lines aligned
    under the first token."""
    if not tokens:
        return [" " * indent + opening + closing]
    lines, current = [], " " * indent + opening
    hanging = " " * (indent + len(opening))
    for index, token in enumerate(tokens):
        tail = "," if index < len(tokens) - 1 else closing
        if current.strip(" ") not in ("", opening) and len(current) + len(token) + len(tail) > width:
            lines.append(current.rstrip(" "))
            current = hanging
        current += token + tail + " "
    return [*lines, current.rstrip(" ")]


def _mapping(items: dict[str, AttributeValue] | dict[str, str]) -> list[str]:
    return [f"{json.dumps(name)}: {_literal(value)}" for name, value in items.items()]


def _shared(maps: list[dict[str, AttributeValue]]) -> dict[str, AttributeValue]:
    """What every map holds with the same value, in the first map's order."""
    return {name: value for name, value in maps[0].items()
            if all(name in other and other[name] == value and type(other[name]) is type(value) for other in maps)}


def _entry(instance_type: str, gpus: tuple[Gpu, ...]) -> list[str]:
    capacities = {json.dumps(gpu.capacity) for gpu in gpus}
    if len(capacities) != 1:
        raise ValueError(f"{instance_type}: GPUs with different capacities are not modelled; extend _gpus")
    shared = _shared([gpu.attributes for gpu in gpus])
    lines = [f"        {json.dumps(instance_type)}: _gpus(",
             f"            {len(gpus)},",
             *_fill("{", _mapping(shared), "},", 12),
             *_fill("{", _mapping(gpus[0].capacity), "},", 12)]
    per_gpu = [{name: value for name, value in gpu.attributes.items() if name not in shared} for gpu in gpus]
    if any(per_gpu):
        lines += _fill("per_gpu=[", ["{" + ", ".join(_mapping(attributes)) + "}" for attributes in per_gpu], "],",
                       12)
    return [*lines, "        ),"]


def _wrap(text: str, width: int) -> list[str]:
    return textwrap.wrap(text, width, break_long_words=False, break_on_hyphens=False)


def _source(release: Release) -> str:
    return (f"github.com/{REPOSITORY} commit {release.commit} {GPU_METADATA} (Apache-2.0), as Karpenter "
            f"{release.version}: {release.established}")


_DOCSTRING = '''"""The NVIDIA GPU DRA metadata each Karpenter release ships: per instance type, the GPUs
Karpenter assumes a node will publish before it exists (aws/karpenter-provider-aws pkg/providers/drametadata).

Generated by tools/vendor_karpenter_dra.py from the Go files vendored in tests/data/karpenter/ (their sources and
how each release was established: tests/data/karpenter/SOURCES.md); do not edit.
'''

_PREAMBLE = '''

from __future__ import annotations

from dataclasses import dataclass

# The DRA driver Karpenter models the GPUs of (nvidiadra.go DriverName); the attribute names below are in its domain
# unless qualified (resource.kubernetes.io/pcieRoot).
DRIVER = "gpu.nvidia.com"

# Attributes the driver publishes but Karpenter's templates leave out, because their values are only known on the
# running node: nvidiadra.go declares them as AttributeBindings over all the GPUs of an instance type instead, and
# sigs.k8s.io/karpenter's allocator ignores a binding of fewer than two devices (pkg/scheduling/dynamicresources/
# attributebindings.go BuildAttributeBindings), so matchAttribute on them fails on a one-GPU instance type.
BOUND_ATTRIBUTES = ("driverVersion", "cudaDriverVersion")

# Attributes Karpenter documents as usable only in a matchAttribute constraint, never in a selector: their values "are
# resolved at runtime, or are specific to a platform, so Karpenter can tell whether devices will match but not what
# the value will be" (karpenter.sh/docs/tasks/dra/, "Supported Attributes by Driver", NVIDIA table; website/content/
# en/preview/tasks/dra.md at aws/karpenter-provider-aws 974b272f). pcieRoot is nevertheless in the templates, with the
# values scraped from one instance of each type.
RUNTIME_ONLY_ATTRIBUTES = frozenset({*BOUND_ATTRIBUTES, "resource.kubernetes.io/pcieRoot"})


@dataclass(frozen=True)
class Version:
    """A version attribute (VersionValue): kept apart from strings because CEL compares it as semver."""

    text: str


AttributeValue = str | int | bool | Version


@dataclass(frozen=True)
class KarpenterGpu:
    """One GPU of an instance type's template: named gpu-<index> as nvidiadra.go names it, its attributes (name ->
    typed value) and capacities (name -> quantity) as the vendored metadata lists them. `shares` is not among them:
    Karpenter adds it only for an EC2NodeClass annotated karpenter.k8s.aws/nvidia-consumable-capacity with an integer
    (pkg/providers/nvidiadra/consumablecapacity.go)."""

    name: str
    attributes: dict[str, AttributeValue]
    capacity: dict[str, str]


def _gpus(count: int, attributes: dict[str, AttributeValue], capacity: dict[str, str],
          per_gpu: list[dict[str, AttributeValue]] | None = None) -> tuple[KarpenterGpu, ...]:
    """An instance type's GPUs from what they share and, per GPU, the attributes that differ."""
    differing = per_gpu or [{} for _ in range(count)]
    return tuple(KarpenterGpu(f"gpu-{index}", dict(sorted({**attributes, **differing[index]}.items())), dict(capacity))
                 for index in range(count))
'''


def module_text(releases: tuple[Release, ...] = RELEASES) -> str:
    """The generated module for `releases`, from their vendored Go files."""
    docstring = _DOCSTRING.split("\n")
    for release in releases:
        wrapped = _wrap(_source(release), 114)
        docstring += ["- " + wrapped[0], *("  " + line for line in wrapped[1:])]
    body = ["", "", "# Karpenter release -> where its metadata was read", "SOURCES: dict[str, str] = {"]
    for release in releases:
        wrapped = _wrap(_source(release), 100)
        quoted = [json.dumps(line + " ") for line in wrapped[:-1]] + [json.dumps(wrapped[-1])]
        body += [f"    {json.dumps(release.version)}: ({quoted[0]}", *(f"              {line}" for line in quoted[1:])]
        body[-1] += "),"
    body += ["}", f"SUPPORTED_VERSIONS = ({', '.join(json.dumps(r.version) for r in releases)},)", "",
             "# Karpenter release -> instance type -> its GPUs",
             "KARPENTER_DRA: dict[str, dict[str, tuple[KarpenterGpu, ...]]] = {"]
    for release in releases:
        body.append(f"    {json.dumps(release.version)}: {{")
        for instance_type, gpus in parse(release.path).items():
            body += _entry(instance_type, gpus)
        body.append("    },")
    body.append("}")
    return "\n".join([*docstring, '"""']) + _PREAMBLE + "\n".join(body) + "\n"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=MODULE, help=f"where to write the module (default: {MODULE})")
    args = parser.parse_args(argv)
    args.out.write_text(module_text())


if __name__ == "__main__":
    main()

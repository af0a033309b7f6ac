"""Kubernetes OpenAPI schema validation exactly as kubernetes-validate does it, with each validator built once.

`kubernetes_validate.validate` reads and parses its ~1.5 MB `_definitions.json` again for every object, which was
most of the time `gpu-dra lint` spent on a few hundred objects. This builds the same jsonschema Draft 2020-12
validator from the same files, once per (schema version, strict, kind, apiVersion) per process, so each error's
message and path are the ones kubernetes-validate gives. A missing schema is said in words: which Kubernetes
versions serve the object's apiVersion and which apiVersions this one serves.
"""

from __future__ import annotations

import functools
import re
from importlib import resources
from typing import Any

import jsonschema
from kubernetes_validate import SchemaNotFoundError, ValidationError
from kubernetes_validate.utils import (
    VersionNotSupportedError,
    all_versions,
    latest_version,
    major_minor,
    schema_contents,
)
from referencing import Registry, Resource

__all__ = ["SchemaNotFound", "ValidationError", "VersionNotSupportedError", "validate"]


class SchemaNotFound(SchemaNotFoundError):
    """kubernetes-validate's SchemaNotFoundError, with a message that says what to use instead (the base class's
    str() is empty)."""

    def __init__(self, kind: str, version: str, api_version: str, message: str):
        super().__init__(kind=kind, version=version, api_version=api_version)
        self.message = message

    def __str__(self) -> str:
        return self.message


def validate(data: dict[str, Any], desired_version: str, strict: bool = False) -> str:
    """Validate one object as `kubernetes_validate.validate(data, desired_version, strict)` does, returning the
    schema version used or raising its ValidationError (with .path and .message), SchemaNotFoundError (here a
    SchemaNotFound) or VersionNotSupportedError."""
    version = _schema_version(desired_version.removeprefix("v"))
    kind, api_version = data.get("kind"), data.get("apiVersion")
    if not isinstance(kind, str) or not isinstance(api_version, str):
        what = "kind" if not isinstance(kind, str) else "apiVersion"
        raise SchemaNotFound(str(kind), major_minor(desired_version), str(api_version),
                             f"{what} must be a string such as "
                             f"{'ResourceClaimTemplate' if what == 'kind' else 'resource.k8s.io/v1'} "
                             f"({f'got {data[what]!r}' if what in data else 'missing'})")
    for what, value, shape in (("kind", kind, _NAME), ("apiVersion", api_version, _API_VERSION)):
        if not shape.fullmatch(value):  # no schema has such a name: never hand it to the file system
            shown = value if len(value) <= 60 else f"{value[:40]}...({len(value)} characters)"
            raise SchemaNotFound(kind[:60], major_minor(desired_version), api_version[:60],
                                 f"{what} {shown!r} is not a Kubernetes {what} "
                                 f"(such as {'ResourceClaimTemplate' if what == 'kind' else 'resource.k8s.io/v1'})")
    try:
        validator = _validator(_schema_dir(version, strict), kind.lower(), _file_api_version(api_version))
    except FileNotFoundError:
        raise _not_found(kind, api_version, desired_version, strict) from None
    try:
        validator.validate(data)
    except jsonschema.ValidationError as error:
        raise ValidationError(error, version=major_minor(version)) from None
    return major_minor(version)


@functools.cache
def _schema_version(desired: str) -> str:
    """The newest schema version not newer than `desired` (kubernetes-validate's own choice)."""
    if major_minor(desired) > latest_version():
        raise VersionNotSupportedError(version=major_minor(desired))
    return [v for v in all_versions() if major_minor(v) <= major_minor(desired)][-1]


def _schema_dir(version: str, strict: bool) -> str:
    return f"v{version}-local" + ("-strict" if strict else "")


# What a kind and an apiVersion can be (a Go identifier; group/version, each a DNS-1123 name): anything else has no
# schema, and a long value must not become a file name.
_NAME = re.compile(r"[A-Za-z][A-Za-z0-9]{0,62}")
_API_VERSION = re.compile(r"(?:[a-z0-9]([a-z0-9.-]{0,251}[a-z0-9])?/)?v[0-9]+(?:(?:alpha|beta)[0-9]+)?")


def _file_api_version(api_version: str) -> str:
    """resource.k8s.io/v1 -> resource-v1, as kubernetes-validate names its files."""
    return re.sub(r"^([^./]*)(?:\.[^/]*)?/", r"\1-", api_version)


@functools.cache
def _definitions(schema_dir: str) -> Registry[Any]:
    return Resource.from_contents(schema_contents(f"kubernetes-json-schema/{schema_dir}/_definitions.json",
                                                  schema_dir)) @ Registry()


@functools.cache
def _validator(schema_dir: str, kind: str, file_api_version: str) -> jsonschema.Draft202012Validator:
    schema = schema_contents(f"kubernetes-json-schema/{schema_dir}/{kind}-{file_api_version}.json", schema_dir)
    registry = Resource.from_contents(schema) @ _definitions(schema_dir)
    return jsonschema.Draft202012Validator(schema, registry=registry)


@functools.cache
def _served(kind: str, group: str, strict: bool) -> dict[str, list[str]]:
    """Kubernetes minor version -> the apiVersions (of `group`) with a schema for `kind` there."""
    root = resources.files("kubernetes_validate").joinpath("kubernetes-json-schema")
    prefix = f"{kind.lower()}-{_file_api_version(group + '/')}"
    served: dict[str, list[str]] = {}
    for version in all_versions():
        names = [entry.name for entry in root.joinpath(_schema_dir(version, strict)).iterdir()]
        served[major_minor(version)] = sorted(f"{group}/{name[len(prefix):-len('.json')]}" for name in names
                                              if name.startswith(prefix) and name.endswith(".json"))
    return served


def _not_found(kind: str, api_version: str, desired_version: str, strict: bool) -> SchemaNotFound:
    group = api_version.rsplit("/", 1)[0] if "/" in api_version else ""
    minor = major_minor(desired_version.removeprefix("v"))
    served = _served(kind, group, strict)
    if not any(served.values()):  # a wrong group: the DRA kinds gpu-dra reads live in resource.k8s.io
        served = _served(kind, "resource.k8s.io", strict)
    # Alpha APIs are off unless the API server enables them one by one: never the advice.
    here = ", ".join(name for name in served.get(minor, []) if "alpha" not in name) or "no version of it"
    serving = [version for version, names in served.items() if api_version in names]
    known = list(served)
    if not serving:
        message = (f"no Kubernetes version from {known[0]} to {known[-1]} serves {kind} {api_version}; "
                   f"Kubernetes {minor} serves it as {here}")
    elif serving[-1] == known[-1]:
        message = (f"{kind} {api_version} is served from Kubernetes {serving[0]}, not by {minor}: use {here} "
                   f"there, or target {serving[0]}+")
    else:
        message = (f"{kind} {api_version} is served by Kubernetes {serving[0]} to {serving[-1]}, not by {minor}: "
                   f"use {here}")
    return SchemaNotFound(kind, minor, api_version, message)

"""DRA objects parsed once into small typed values, in the resource.k8s.io/v1 shape whatever version was read.

v1beta1 nests a device's fields under `basic` and puts a request's fields on the request; v1beta2 and v1 put them on
the device and under `exactly` (kubernetes/api@v0.34.0 resource/v1beta1 and resource/v1 types.go). The readers, one
per kind: `slices` (ResourceSlices), `taint_rules` (DeviceTaintRules), `claims` (ResourceClaims, their templates and
DeviceClasses). Here is what they share: the error that names an object and its field, and the readers of a field's
shape.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


class ObjectError(ValueError):
    """An object that has not the API's shape: the message names the object and the field."""


# The largest int64, the type of the API's integer fields (kubernetes/api@v0.34.0:resource/v1/types.go)
INT64_MAX = 2**63 - 1


def mapping_at(value: Any, where: str) -> Mapping[str, Any]:
    """A field that must be a mapping when written; an ObjectError naming `where` when it is not."""
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise ObjectError(f"{where} must be a mapping")
    return value


def list_at(value: Any, where: str) -> list[Any]:
    """A field that must be a list when written; an ObjectError naming `where` when it is not."""
    if value is None:
        return []
    if not isinstance(value, list):
        raise ObjectError(f"{where} must be a list")
    return value


def quantity_text(value: Any) -> str:
    """A quantity as written, bare or as a capacity's `{value: quantity}`."""
    return str(value.get("value")) if isinstance(value, Mapping) else str(value)


def named_spec(obj: Mapping[str, Any], kind: str, source: str, needs: str = "") -> tuple[str, str, Mapping[str, Any]]:
    """The object's name, `<source>: <kind> <name>` for messages, and its spec, which must be a mapping."""
    metadata = obj.get("metadata")
    name = str(metadata.get("name", "?")) if isinstance(metadata, Mapping) else "?"
    where = f"{source}: {kind} {name}"
    spec = obj.get("spec")
    if not isinstance(spec, Mapping):
        raise ObjectError(f"{where}: spec must be a mapping{needs}")
    return name, where, spec

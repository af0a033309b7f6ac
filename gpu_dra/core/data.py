"""Plain data from the mappings and sequences the Pulumi SDKs hand out (proxies, tuples)."""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from typing import Any


def plain(value: Any) -> Any:
    """Dicts, lists and scalars only, as JSON would hold them (unknowns stay UNKNOWN)."""
    if isinstance(value, Mapping):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, Sequence) and not isinstance(value, (str, bytes)):
        return [plain(v) for v in value]
    return value


class Unknown:
    """A value the Pulumi engine cannot know yet (an id or ARN of a resource a preview has not created): the policy
    shell hands it over in place of the value, so a rule skips the check that needs it and runs the rest."""

    _instance: Unknown | None = None

    def __new__(cls) -> Unknown:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "<unknown>"


UNKNOWN = Unknown()


def unknown_paths(value: Any, path: tuple[str | int, ...] = ()) -> list[tuple[str | int, ...]]:
    """Where inside a value the unknowns are (the value itself: the empty path)."""
    if value is UNKNOWN:
        return [path]
    if isinstance(value, Mapping):
        return [found for key, item in value.items() for found in unknown_paths(item, (*path, str(key)))]
    if isinstance(value, Sequence) and not isinstance(value, (str, bytes)):
        return [found for index, item in enumerate(value) for found in unknown_paths(item, (*path, index))]
    return []


def helm_merge(defaults: Mapping[str, Any], overrides: Mapping[str, Any]) -> dict[str, Any]:
    """Helm's value coalescing: maps merge key by key, anything else (lists included) is replaced. Helm's deletion of
    a default by an explicit null is not modelled."""
    merged = copy.deepcopy(dict(defaults))
    for key, value in overrides.items():
        if isinstance(value, Mapping) and isinstance(merged.get(key), Mapping):
            merged[key] = helm_merge(merged[key], value)
        else:
            merged[key] = copy.deepcopy(value)
    return merged


def mapping(value: Any) -> Mapping[str, Any]:
    """`value` where it is a mapping, else an empty one: objects read from files or a cluster hold what they hold,
    and a field of the wrong type reads as absent where its absence is already handled."""
    return value if isinstance(value, Mapping) else {}

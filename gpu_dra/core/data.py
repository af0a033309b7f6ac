"""Plain data from the mappings and sequences the Pulumi SDKs hand out (proxies, tuples)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def plain(value: Any) -> Any:
    """Dicts, lists and scalars only, as JSON would hold them."""
    if isinstance(value, Mapping):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    return value

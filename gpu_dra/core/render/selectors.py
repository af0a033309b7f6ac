"""The selector shorthand (`match:`), compiled to CEL that the API server accepts and the scheduler cannot trip on.

Encodes what people get wrong by hand: memory is a capacity compared with `compareTo` (quantities have no `>=`),
versions are semver values, and a product name like `L4` must not also match `L40S`.
"""

from __future__ import annotations

import re

from gpu_dra.core.config.models import DeviceType, Match
from gpu_dra.core.facts.hardware import KNOWN_PRODUCT_NAMES
from gpu_dra.core.facts.nvidia import DRIVER_NAME

ATTR = f"device.attributes['{DRIVER_NAME}']"
CAPACITY = f"device.capacity['{DRIVER_NAME}']"


def _cel_string(value: str) -> str:
    return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"


def _product_pattern(product: str) -> str:
    """A regex for one product token; a word boundary is added where the token is a prefix of a longer name."""
    pattern = re.sub(r"([\\.+*?()|\[\]{}^$])", r"\\\1", product)  # RE2 metacharacters only
    followed = re.compile(pattern + r"[A-Za-z0-9]")
    if any(followed.search(name) for name in KNOWN_PRODUCT_NAMES):
        pattern += r"\b"
    return pattern


def products_match(products: list[str], product_name: str) -> bool:
    """Whether a `match.products` list selects a device of this productName, as its compiled selector would."""
    return any(re.search(_product_pattern(product), product_name) for product in products)


def _semver(value: str) -> str:
    parts = (value.split(".") + ["0", "0"])[:3]
    return ".".join(str(int(p)) for p in parts)


# Terms reading what only GPUs and MIG devices publish; VFIO devices (PassthroughSupport) lack them, and a missing
# key is a runtime error that aborts the whole claim (`selectorsMatch` in kubernetes/dynamic-resource-allocation@v0.34.0
# structured/internal/*/allocator_*.go; docs/sources.md#allocator-and-scheduler).
_GPU_ONLY = ("min_memory", "architectures", "min_compute_capability", "min_driver_version")


def compile_match(match: Match, guard_device_type: bool = False) -> str:
    """One CEL expression for a `match:` block, guarded by the driver name.

    With `guard_device_type` (a DeviceClass, whose selector sees every device of every driver) a match reading
    GPU-only attributes without naming a device type gets `type in ['gpu', 'mig']`, so VFIO devices are skipped
    instead of raising. A request's selectors only see devices its class already admitted.
    """
    terms = [f"device.driver == '{DRIVER_NAME}'"]
    needs_guard = match.device_type is None and not match.mig_profiles and any(
        getattr(match, key) is not None for key in _GPU_ONLY)
    if guard_device_type and needs_guard:
        terms.append(f"{ATTR}.type in ['gpu', 'mig']")
    if match.min_memory:
        terms.append(f"{CAPACITY}.memory.compareTo(quantity({_cel_string(match.min_memory)})) >= 0")
    if match.products:
        regex = "|".join(_product_pattern(p) for p in match.products)
        terms.append(f"{ATTR}.productName.matches({_cel_string(regex)})")
    if match.architectures:
        terms.append(f"{ATTR}.architecture in [{', '.join(_cel_string(a) for a in match.architectures)}]")
    if match.min_compute_capability:
        version = _semver(match.min_compute_capability)
        terms.append(f"{ATTR}.cudaComputeCapability.compareTo(semver({_cel_string(version)})) >= 0")
    if match.min_driver_version:
        version = _semver(match.min_driver_version)
        terms.append(f"{ATTR}.driverVersion.compareTo(semver({_cel_string(version)})) >= 0")
    if match.device_type is DeviceType.gpu:
        terms.append(f"{ATTR}.type == 'gpu'")
    if match.mig_profiles:
        terms.append(f"{ATTR}.type == 'mig'")
        terms.append(f"{ATTR}.profile in [{', '.join(_cel_string(p) for p in match.mig_profiles)}]")
    elif match.device_type is DeviceType.mig:
        terms.append(f"{ATTR}.type == 'mig'")
    return " && ".join(terms)


def selector_expressions(match: Match | None, raw: list[str], guard_device_type: bool = False) -> list[str]:
    """The CEL expressions of a class or request: the shorthand's first, then the raw ones, in order."""
    return ([compile_match(match, guard_device_type)] if match else []) + list(raw)

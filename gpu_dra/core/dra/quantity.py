"""Kubernetes resource quantities (k8s.io/apimachinery/pkg/api/resource), parsed exactly.

Used wherever a user writes a quantity (memory thresholds, MPS limits) so that `20Gi`, `20480Mi` and
`21474836480` compare equal, as they do in the API server.
"""

from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation

_BINARY = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60}
_DECIMAL = {"n": Decimal("1e-9"), "u": Decimal("1e-6"), "m": Decimal("1e-3"), "": Decimal(1),
            "k": Decimal("1e3"), "M": Decimal("1e6"), "G": Decimal("1e9"), "T": Decimal("1e12"),
            "P": Decimal("1e15"), "E": Decimal("1e18")}
# Same grammar as apimachinery's ParseQuantity: signed decimal number, then a binary SI, decimal SI or exponent suffix.
_QUANTITY = re.compile(r"([+-]?(?:\d+\.?\d*|\.\d+))(Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE]|[eE][+-]?\d+)?")


# "No matter which of the three exponent forms is used, no quantity may represent a number greater than 2^63-1 in
# magnitude" (k8s.io/apimachinery@v0.34.0 pkg/api/resource/quantity.go). A larger one is refused here rather than
# capped, so a typo is named; it also keeps every computation with a quantity small (`1e999999` made explain's
# rounding up to a capacity step run for minutes).
MAX_MAGNITUDE = Decimal(2**63 - 1)


class QuantityError(ValueError):
    pass


def parse_quantity(text: str) -> Decimal:
    """Return the quantity's value in base units; raise QuantityError naming the accepted forms."""
    match = _QUANTITY.fullmatch(str(text))  # as ParseQuantity: no space around it ("20Gi\n" is refused)
    if not match:
        raise QuantityError(
            f"{text!r} is not a Kubernetes quantity (examples: 20Gi, 81559Mi, 500m, 1e9)")
    number, suffix = match.group(1), match.group(2) or ""
    try:
        value = Decimal(number)
    except InvalidOperation as exc:  # pragma: no cover - the regex admits only valid decimals
        raise QuantityError(f"{text!r} is not a Kubernetes quantity") from exc
    if suffix in _BINARY:
        value *= _BINARY[suffix]
    elif suffix in _DECIMAL:
        value *= _DECIMAL[suffix]
    elif len(suffix) <= 8:  # e-999999 to e999999: Decimal's default exponent range
        value *= Decimal(10) ** int(suffix[1:])
    elif value and suffix[1] == "-":
        raise QuantityError(f"{text!r} is below the smallest Kubernetes quantity (1n)")
    elif value:
        value = MAX_MAGNITUDE + 1
    if abs(value) > MAX_MAGNITUDE:
        raise QuantityError(f"{text!r} is too large for a Kubernetes quantity (at most 2^63-1)")
    return value


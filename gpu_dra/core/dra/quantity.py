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
_QUANTITY = re.compile(r"^([+-]?(?:\d+\.?\d*|\.\d+))(Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE]|[eE][+-]?\d+)?$")


class QuantityError(ValueError):
    pass


def parse_quantity(text: str) -> Decimal:
    """Return the quantity's value in base units; raise QuantityError naming the accepted forms."""
    match = _QUANTITY.match(str(text).strip())
    if not match:
        raise QuantityError(
            f"{text!r} is not a Kubernetes quantity (examples: 20Gi, 81559Mi, 500m, 1e9)")
    number, suffix = match.group(1), match.group(2) or ""
    try:
        value = Decimal(number)
    except InvalidOperation as exc:  # pragma: no cover - the regex admits only valid decimals
        raise QuantityError(f"{text!r} is not a Kubernetes quantity") from exc
    if suffix in _BINARY:
        return value * _BINARY[suffix]
    if suffix in _DECIMAL:
        return value * _DECIMAL[suffix]
    try:
        return value * (Decimal(10) ** int(suffix[1:]))
    except ArithmeticError:  # decimal.Overflow: 1e999999999 is beyond any resource (the API server caps at 2^63)
        raise QuantityError(f"{text!r} is too large for a Kubernetes quantity") from None


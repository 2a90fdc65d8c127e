"""Kubernetes resource quantities (``100m``, ``1.5Gi``, ``3e3``) as the API server reads
and prints them: apimachinery ``pkg/api/resource`` ``Quantity``, mirrored for what the
rollout plan adds up (a pod's requests, the surge's).

- **Parsing** (``ParseQuantity``): a signed decimal number and a suffix, binary
  (``Ki Mi Gi Ti Pi Ei``), decimal (``n u m "" k M G T P E``) or an exponent (``e3``,
  ``E-2``); the number keeps which of the three it had (its *format*). Precision
  beyond nano is rounded up (``.000000001Ki`` is ``1024n``'s neighbour ``2n`` upward).
  A YAML number (``cpu: 0.5``, ``memory: 1073741824``) is what ``kubectl`` sends as
  JSON: the same as its decimal text.
- **Canonical form** (``String`` → ``CanonicalizeBytes``): no precision lost, no
  fractional digits, the largest suffix of the quantity's family: ``1.5`` → ``1500m``,
  ``1024Mi`` → ``1Gi``, ``1.5Gi`` → ``1536Mi``, ``1000M`` → ``1G``, ``3e3`` stays
  ``3e3``; a binary quantity under 1024 or not whole is printed in decimal (``.5Ki`` →
  ``512``); zero is ``0``.
- **Arithmetic** (``Add``, ``Mul``, ``Cmp``): a sum keeps the format of its first
  non-zero term (``Add`` keeps the receiver's unless it is zero), a product its
  quantity's.
"""

from __future__ import annotations

import re
from fractions import Fraction
from functools import reduce
from typing import Any, NamedTuple

SOURCE = (
    "kubernetes/apimachinery pkg/api/resource/quantity.go ParseQuantity (suffix "
    "families, round up to nano), String / CanonicalizeBytes (largest suffix, no "
    "fractional digits, binary under 1024 printed decimal), Add (the receiver's format "
    "unless it is zero); amount.go AsCanonicalBytes, AsCanonicalBase1024Bytes; "
    "quantity_test.go TestQuantityString"
)

BINARY, DECIMAL, EXPONENT = "BinarySI", "DecimalSI", "DecimalExponent"
_BINARY = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}
_DECIMAL = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
_DECIMAL_SUFFIX = {e: s for s, e in _DECIMAL.items()}
_BINARY_SUFFIX = {0: "", **{e // 10: s for s, e in _BINARY.items()}}
_NUMBER = r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)"
_GRAMMAR = re.compile(rf"({_NUMBER})(Ki|Mi|Gi|Ti|Pi|Ei|[eE][+-]?[0-9]+|[numkMGTPE]?)")
_NANO = Fraction(1, 10**9)


class Quantity(NamedTuple):
    value: Fraction
    format: str  # BINARY, DECIMAL or EXPONENT

    def __str__(self) -> str:
        return canonical(self)

    def add(self, other: Quantity) -> Quantity:
        fmt = other.format if self.value == 0 else self.format
        return Quantity(self.value + other.value, fmt)

    def times(self, n: int) -> Quantity:
        return Quantity(self.value * n, self.format)


ZERO = Quantity(Fraction(0), DECIMAL)


def parse(value: Any) -> Quantity | None:
    """A quantity as the API server reads it; None where it refuses it (a template left
    unrendered, a word)."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int):
        text = str(value)
    elif isinstance(value, float):
        if value != value or value in (float("inf"), float("-inf")):
            return None
        text = _plain(value)  # as kubectl sends it: a JSON number
    elif isinstance(value, str):
        text = value.strip() if value == value.strip() else ""
    else:
        return None
    m = _GRAMMAR.fullmatch(text)
    if m is None:
        return None
    number, suffix = Fraction(m.group(1)), m.group(2)
    if suffix in _BINARY:
        amount, fmt = number * 2 ** _BINARY[suffix], BINARY
    elif suffix[:1] in ("e", "E") and len(suffix) > 1:
        amount, fmt = number * Fraction(10) ** int(suffix[1:]), EXPONENT
    else:
        amount, fmt = number * Fraction(10) ** _DECIMAL[suffix], DECIMAL
    # precision beyond nano is rounded up (away from zero), as ParseQuantity does
    nanos = amount / _NANO
    if nanos.denominator != 1:
        whole = -((-abs(nanos.numerator)) // nanos.denominator)
        amount = Fraction(whole if amount > 0 else -whole) * _NANO
    return Quantity(amount, fmt)


def _plain(value: float) -> str:
    from decimal import Decimal

    return format(Decimal(repr(value)), "f")


def _decimal(value: Fraction, exponent_form: bool) -> str:
    """The mantissa and the largest exponent (a multiple of 3, -9 to 18) that leave it
    whole."""
    exp = -9
    while exp < 18:
        nxt = value / Fraction(10) ** (exp + 3)
        if nxt.denominator != 1:
            break
        exp += 3
    mantissa = value / Fraction(10) ** exp
    if exponent_form:
        return f"{mantissa.numerator}" + (f"e{exp}" if exp else "")
    return f"{mantissa.numerator}{_DECIMAL_SUFFIX[exp]}"


def canonical(q: Quantity) -> str:
    """``Quantity.String()``."""
    v = q.value
    if v == 0:
        return "0"
    if q.format == BINARY:
        if -1024 < v < 1024 or v.denominator != 1:
            return _decimal(v, False)
        k, n = 0, v.numerator
        while k < 6 and n % 1024 == 0:
            n //= 1024
            k += 1
        return f"{n}{_BINARY_SUFFIX[k]}"
    return _decimal(v, q.format == EXPONENT)


def total(quantities: Any) -> Quantity:
    """The sum, as ``addResourceList`` adds: the first non-zero term's format."""
    return reduce(Quantity.add, quantities, ZERO)

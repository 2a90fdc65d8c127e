"""How Kubernetes' own YAML decoder reads a plain scalar.

``kubectl`` turns YAML into JSON with sigs.k8s.io/yaml, which resolves plain scalars
with its vendored go-yaml v2 (``goyaml.v2/resolve.go``). That is neither YAML 1.1 nor
1.2, so the table is pinned here and in ``tests/test_k8syaml.py``:

* booleans: ``y Y yes Yes YES true True TRUE on On ON`` and ``n N no No NO false
  False FALSE off Off OFF``; nulls: empty, ``~ null Null NULL``;
* floats: ``.inf``/``.nan`` spellings, ``.5``-style values, and for a value starting
  with a digit or a sign: underscores removed, then a Go integer literal (``0x1F``,
  ``0o17``, ``0b101``, leading-zero octal ``017``, any size) or a decimal float
  (``1.``, ``1e3``, ``08``) that is finite;
* **not** resolved: YAML 1.1 base-60 forms (``03:00``, ``16:9``), timestamps
  (go-yaml recognises ``2024-01-01``, but decoded without a schema it stays the string
  as written, and no timestamp is also a number), and everything else.

A plain scalar that resolves to a number or a boolean in a ``map[string]string`` field
(ConfigMap ``data``, Secret ``stringData``) is rejected by the API server; a boolean
field (``optional``, ``paused``, ``immutable``) takes exactly the boolean spellings.
"""

from __future__ import annotations

import functools
import math
import re

TRUE_WORDS = frozenset(("y", "Y", "yes", "Yes", "YES", "true", "True", "TRUE", "on", "On", "ON"))
FALSE_WORDS = frozenset(
    ("n", "N", "no", "No", "NO", "false", "False", "FALSE", "off", "Off", "OFF")
)
NULL_WORDS = frozenset(("", "~", "null", "Null", "NULL"))
_FLOAT_WORDS = frozenset(
    (
        ".nan",
        ".NaN",
        ".NAN",
        ".inf",
        ".Inf",
        ".INF",
        "+.inf",
        "+.Inf",
        "+.INF",
        "-.inf",
        "-.Inf",
        "-.INF",
    )
)

# strconv.ParseInt(s, 0, 64) syntax (a too-big value still resolves, as a big.Int)
_GO_INT = r"[-+]?(?:0[xX][0-9a-fA-F]+|0[oO][0-7]+|0[bB][01]+|0[0-7]*|[1-9][0-9]*)"
# go-yaml's yamlStyleFloat, then strconv.ParseFloat must give a finite value
_YAML_FLOAT = r"[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?"
_DOT_FLOAT = r"\.[0-9]+(?:[eE][-+]?[0-9]+)?"


@functools.cache
def _compiled(pattern: str) -> re.Pattern[str]:
    """``pattern`` compiled on first use (a plain run resolves no number), then nearly as
    fast as a module-level pattern (a report resolves every scalar; re's cache is slower)."""
    return re.compile(pattern)


def _finite(text: str) -> bool:
    try:
        return math.isfinite(float(text))
    except ValueError:  # pragma: no cover - the patterns only pass float syntax
        return False


def resolves_to_non_string(text: str) -> bool:
    """Whether a *plain* scalar ``text`` reaches the API server as something other than
    a string (a number, a boolean or null)."""
    if not text:
        return True  # null
    first = text[0]
    if text in TRUE_WORDS or text in FALSE_WORDS or text in NULL_WORDS or text in _FLOAT_WORDS:
        return True
    if first == ".":
        return bool(_compiled(_DOT_FLOAT).fullmatch(text)) and _finite(text)
    if not (first.isdigit() and first.isascii()) and first not in "+-":
        return False
    plain = text.replace("_", "")
    if _compiled(_GO_INT).fullmatch(plain):
        return True
    return bool(_compiled(_YAML_FLOAT).fullmatch(plain)) and _finite(plain)


def plain_bool(text: str) -> bool | None:
    """True/False for go-yaml's boolean spellings of a plain scalar, else None."""
    if text in TRUE_WORDS:
        return True
    if text in FALSE_WORDS:
        return False
    return None


def _go_int(plain: str) -> int:
    """strconv.ParseInt(plain, 0, 64)'s value (``_GO_INT`` syntax; any size)."""
    sign = -1 if plain.startswith("-") else 1
    digits = plain.lstrip("+-")
    if len(digits) > 1 and digits[0] == "0" and digits[1] not in "xXoObB":
        return sign * int(digits, 8)  # leading-zero octal: 0644 is 420
    return sign * int(digits, 0)


def plain_value(text: str) -> str | int | float | bool | None:
    """A *plain* scalar as kubectl sends it to the API server (go-yaml v2's resolve):
    a boolean, null, a Go integer literal (``0644`` is 420), a finite float, or the
    string itself."""
    if text in NULL_WORDS:
        return None
    as_bool = plain_bool(text)
    if as_bool is not None:
        return as_bool
    if text in _FLOAT_WORDS:
        value = float(text.lower().lstrip("+").replace(".", "", 1))
        return text if math.isnan(value) else value  # (NaN equals nothing, not even itself)
    if not resolves_to_non_string(text):
        return text
    plain = text if text[0] == "." else text.replace("_", "")
    if text[0] != "." and _compiled(_GO_INT).fullmatch(plain):
        return _go_int(plain)
    return float(plain)

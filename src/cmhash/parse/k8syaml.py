"""How Kubernetes' own YAML decoder reads a plain scalar.

``kubectl`` turns YAML into JSON with sigs.k8s.io/yaml, which resolves plain scalars
with its vendored go-yaml v2 (``goyaml.v2/resolve.go``). That is neither YAML 1.1 nor
1.2, so the table is pinned here and in ``tests/parse/test_k8syaml.py`` (and there
against kubectl itself):

* booleans: ``y Y yes Yes YES true True TRUE on On ON`` and ``n N no No NO false
  False FALSE off Off OFF``; nulls: empty, ``~ null Null NULL``;
* floats: ``.inf``/``.nan`` spellings, ``.5``-style values (an underscore between two
  digits: ``.5_0``), and for a value starting with a digit or a sign: underscores
  removed, then a Go integer literal (``0x1F``, ``0o17``, ``0b101``, leading-zero octal
  ``017``) within int64 or uint64, or a decimal float (``1.``, ``1e3``, ``08``, an
  integer beyond them) that is finite (a hex, octal or binary one beyond them is a
  string);
* **not** resolved: YAML 1.1 base-60 forms (``03:00``, ``16:9``), timestamps
  (go-yaml recognises ``2024-01-01``, but decoded without a schema it stays the string
  as written, and no timestamp is also a number), and everything else.

A plain scalar that resolves to a number or a boolean in a ``map[string]string`` field
(ConfigMap ``data``, Secret ``stringData``) is rejected by the API server; a boolean
field (``optional``, ``paused``, ``immutable``) takes exactly the boolean spellings.

And a scalar with a tag (``!!binary aGVsbG8=``, ``!!str 3``, ``!!int "3"``), as go-yaml
v2's decoder (``decode.go``: ``(*decoder).scalar``) reads it for kubectl:

* ``!!binary``: the base64 decoded (``encoding/base64``'s StdEncoding: padding required,
  line breaks skipped, nothing else), sent as a *string* of those bytes, each byte that
  is no UTF-8 becoming U+FFFD (``json.Marshal``); invalid base64 is an error;
* ``!!str``, and the non-specific ``!``: the text as written (``! 3`` is ``"3"``);
* ``!!null``, ``!!bool``, ``!!int``, ``!!float``, ``!!timestamp``: the text must resolve
  to that type (``!!float`` takes an integer too), else an error (``cannot decode !!str
  `abc` as a !!int``); a timestamp stays the text as written (decoded without a schema);
* ``!!map``, ``!!seq``, ``!!merge`` on a scalar: the text (a tag ``resolve`` does not
  know leaves it a string); a key ``<<`` is a merge when plain, ``!`` or ``!!merge``;
* a mapping key that resolves to another type is sent as a string (sigs.k8s.io/yaml
  ``convertToJSONableObject``): ``yes`` is ``true``, ``0x1F`` is ``31``, ``1.50`` is
  ``1.5`` (``strconv.FormatFloat(f, 'g', -1, 32)``); a null key is an error.

Measured with kubectl 1.35 (``kubectl label --local -f FILE -o json`` decodes without a
cluster) and pinned against it in the tests, case by case.
"""

from __future__ import annotations

import binascii
import functools
import math
import re

TRUE_WORDS = frozenset(("y", "Y", "yes", "Yes", "YES", "true", "True", "TRUE", "on", "On", "ON"))
FALSE_WORDS = frozenset(
    ("n", "N", "no", "No", "NO", "false", "False", "FALSE", "off", "Off", "OFF")
)
NULL_WORDS = frozenset(("", "~", "null", "Null", "NULL"))
_NAN_WORDS = (".nan", ".NaN", ".NAN")
_INF_WORDS = (".inf", ".Inf", ".INF")  # and each with a sign

# strconv.ParseInt(s, 0, 64) syntax (then its range, or ParseUint's: _go_int)
_GO_INT = r"[-+]?(?:0[xX][0-9a-fA-F]+|0[oO][0-7]+|0[bB][01]+|0[0-7]*|[1-9][0-9]*)"
# go-yaml's yamlStyleFloat, then strconv.ParseFloat must give a finite value
_YAML_FLOAT = r"[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?"
# strconv.ParseFloat of a value starting with ".": an underscore only between two digits
_DOT_FLOAT = r"\.[0-9](?:_?[0-9])*(?:[eE][-+]?[0-9](?:_?[0-9])*)?"
# what go-yaml's resolveTable hints: a value starting with anything else is a string
HINTED = frozenset("yYnNtTfFoO~.+-0123456789")
_INT64 = 1 << 63
_UINT64 = 1 << 64

TAG_PREFIX = "tag:yaml.org,2002:"
NON_SPECIFIC = "!"  # ``! 3``: the text, a string (and ``! <<`` a merge key, as plain)


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


def _go_int(plain: str) -> int | None:
    """strconv.ParseInt(plain, 0, 64)'s value, else ParseUint's (no sign), else None:
    bad syntax or out of both ranges (a too-big decimal is then a float; a too-big hex,
    octal or binary one a string: kubectl measured)."""
    if not _compiled(_GO_INT).fullmatch(plain):
        return None
    sign = -1 if plain.startswith("-") else 1
    digits = plain.lstrip("+-")
    octal = len(digits) > 1 and digits[0] == "0" and digits[1] not in "xXoObB"
    value = sign * int(digits, 8 if octal else 0)  # leading-zero octal: 0644 is 420
    if -_INT64 <= value < _INT64 or (plain[0] not in "+-" and 0 <= value < _UINT64):
        return value
    return None


_WORDS: dict[str, tuple[str, object]] = {
    **dict.fromkeys(TRUE_WORDS, ("bool", True)),
    **dict.fromkeys(FALSE_WORDS, ("bool", False)),
    **dict.fromkeys(NULL_WORDS, ("null", None)),
    **dict.fromkeys(_NAN_WORDS, ("float", math.nan)),
    **{
        sign + w: ("float", -math.inf if sign == "-" else math.inf)
        for sign in ("", "+", "-")
        for w in _INF_WORDS
    },
}


def resolve(text: str, timestamps: bool = False) -> tuple[str, object]:
    """go-yaml v2's ``resolve``: the type (``str``, ``null``, ``bool``, ``int``,
    ``float``, ``timestamp``: tried only for a ``!!timestamp`` tag, as a plain one is
    decoded as its text) and value a scalar's text resolves to."""
    if not text:
        return "null", None
    hint = text[0]
    if hint not in HINTED:
        return "str", text
    word = _WORDS.get(text)
    if word is not None:
        return word
    if hint == ".":
        if _compiled(_DOT_FLOAT).fullmatch(text) and _finite(text.replace("_", "")):
            return "float", float(text.replace("_", ""))
        return "str", text
    if hint in "+-" or "0" <= hint <= "9":
        if timestamps and is_timestamp(text):
            return "timestamp", text
        plain = text.replace("_", "")
        value = _go_int(plain)
        if value is not None:
            return "int", value
        if _compiled(_YAML_FLOAT).fullmatch(plain) and _finite(plain):
            return "float", float(plain)
    return "str", text


def resolves_to_non_string(text: str) -> bool:
    """Whether a *plain* scalar ``text`` reaches the API server as something other than
    a string (a number, a boolean or null)."""
    if not text:
        return True  # null
    if text[0] not in HINTED:
        return False  # (most values: no lookup)
    return resolve(text)[0] != "str"


def plain_bool(text: str) -> bool | None:
    """True/False for go-yaml's boolean spellings of a plain scalar, else None."""
    if text in TRUE_WORDS:
        return True
    if text in FALSE_WORDS:
        return False
    return None


def plain_value(text: str) -> str | int | float | bool | None:
    """A *plain* scalar as kubectl sends it to the API server (go-yaml v2's resolve):
    a boolean, null, a Go integer literal (``0644`` is 420), a finite float, or the
    string itself."""
    kind, value = resolve(text)
    if kind == "float" and math.isnan(value):  # type: ignore[arg-type]
        return text  # (NaN equals nothing, not even itself)
    return value  # type: ignore[return-value]


# -- tags ---------------------------------------------------------------------------------


class TagError(ValueError):
    """What kubectl refuses in a tagged scalar: ``message`` may quote the text, ``public``
    never does (a Secret's)."""

    def __init__(self, message: str, public: str) -> None:
        super().__init__(message)
        self.message = message
        self.public = public


BINARY_TAG = "tag:yaml.org,2002:binary"
_NOT_RESOLVED = ("str", "map", "seq", "merge")  # on a scalar: the text, a string
_BASE64 = r"(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?"


def go_base64(text: str) -> bytes | None:
    """``base64.StdEncoding.DecodeString(text)`` (Go): line breaks skipped, padding
    required, nothing after it, no other character; None where Go returns an error.
    (What kubectl does with ``!!binary``, and the API server with Secret ``data``.)"""
    compact = text.replace("\r", "").replace("\n", "")
    if not _compiled(_BASE64).fullmatch(compact):
        return None
    return binascii.a2b_base64(compact)


def go_string(data: bytes) -> str:
    """Bytes as a JSON string from Go: each byte that is no part of valid UTF-8 becomes
    U+FFFD (``json.Marshal``), one per byte (Python's ``replace`` would give one per
    invalid sequence)."""
    text = data.decode("utf-8", "surrogateescape")
    return text if text.isascii() else _compiled("[\udc80-\udcff]").sub("\ufffd", text)


def decode_tagged(tag: str, text: str) -> str:
    """A scalar's text as the tree keeps it, for a standard tag (the builder has refused
    the others): ``!!binary`` decoded to kubectl's string; any other, checked as go-yaml
    checks it and left as written. TagError where kubectl refuses the document."""
    short = tag[len(TAG_PREFIX) :]
    if tag == BINARY_TAG:
        data = go_base64(text)
        if data is None:
            words = (
                "the !!binary value is not valid base64, which kubectl refuses; write "
                "padded base64, or the text without the tag"
            )
            return _refuse(words, words)
        return go_string(data)
    if short in _NOT_RESOLVED:
        return text
    kind, _ = resolve(text, timestamps=short == "timestamp")
    if kind == short or (short == "float" and kind == "int"):
        return text
    what = "; remove the tag, or write a value of its type"
    return _refuse(
        f"cannot decode !!{kind} `{text}` as a !!{short}, which kubectl refuses{what}",
        f"cannot decode a !!{kind} as a !!{short}, which kubectl refuses{what}",
    )


def _refuse(message: str, public: str) -> str:
    raise TagError(message, public)


def tagged_value(tag: str, text: str) -> str | int | float | bool | None:
    """What kubectl sends for a scalar the builder kept with ``tag`` (its text already
    checked, a ``!!binary`` one already decoded)."""
    short = tag[len(TAG_PREFIX) :] if tag.startswith(TAG_PREFIX) else "str"
    if short in ("null", "bool", "int", "float"):
        value = resolve(text)[1]
        return float(value) if short == "float" else value  # type: ignore[arg-type,return-value]
    return text  # a string: !, !!str, !!binary (decoded), !!timestamp, !!map/seq/merge


def key_string(tag: str | None, text: str, plain: bool) -> str:
    """A mapping key as kubectl sends it: a string as written, any other type converted
    (sigs.k8s.io/yaml ``convertToJSONableObject``). TagError for a null key."""
    if tag is None:
        value: object = resolve(text)[1] if plain and text[:1] in HINTED else text
    else:
        value = tagged_value(tag, text)
    if isinstance(value, str):
        return value
    if value is None:
        words = "a null key (kubectl refuses it: unsupported map key); quote it"
        return _refuse(words, words)  # (no text of the document in it)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    return _go_float32(float(value))  # type: ignore[arg-type]


def _go_float32(value: float) -> str:
    """``strconv.FormatFloat(value, 'g', -1, 32)``, as sigs.k8s.io/yaml spells a float
    key: the shortest digits that give back the same float32; the exponent form below
    1e-4 and from 1e6 (for the shortest form, Go decides on a precision of 6)."""
    import struct

    try:
        f32 = struct.unpack("f", struct.pack("f", value))[0]
    except OverflowError:
        f32 = math.copysign(math.inf, value)
    if math.isinf(f32):
        return ".inf" if f32 > 0 else "-.inf"
    if math.isnan(f32):
        return ".nan"
    for digits in range(1, 10):
        mantissa = f"{f32:.{digits - 1}e}"
        if struct.unpack("f", struct.pack("f", float(mantissa)))[0] == f32:
            break
    head, _, exp_text = mantissa.partition("e")
    sign = "-" if head.startswith("-") else ""
    digit_text = head.lstrip("-").replace(".", "").rstrip("0") or "0"
    exp = int(exp_text)
    if exp < -4 or exp >= 6:
        frac = f".{digit_text[1:]}" if len(digit_text) > 1 else ""
        return f"{sign}{digit_text[0]}{frac}e{'-' if exp < 0 else '+'}{abs(exp):02d}"
    if exp >= len(digit_text) - 1:
        return sign + digit_text + "0" * (exp - len(digit_text) + 1)
    if exp >= 0:
        return f"{sign}{digit_text[: exp + 1]}.{digit_text[exp + 1 :]}"
    return f"{sign}0.{'0' * (-exp - 1)}{digit_text}"


# Go's time.Parse with go-yaml v2's allowedTimestampFormats ("2006-1-2T15:4:5.999999999Z07:00",
# the same with "t", "2006-1-2 15:4:5.999999999", "2006-1-2"): a 4-digit year, 1-2 digit
# month, day, hour, minute and second, a fraction of any length (. or ,), Z or +hh:mm;
# runs of spaces for the space; then the ranges (a day that its month has).
_TIMESTAMP = (
    r"(\d{4})-(\d{1,2})-(\d{1,2})"
    r"(?:(?:[Tt]|( +))(\d{1,2}):(\d{1,2}):(\d{1,2})(?:[.,]\d+)?"
    r"(Z|[-+]\d{2}:\d{2})?)?"
)


def is_timestamp(text: str) -> bool:
    """Whether go-yaml v2 reads ``text`` as a timestamp (``parseTimestamp``)."""
    import calendar

    m = _compiled(_TIMESTAMP).fullmatch(text)
    if m is None:
        return False
    year, month, day, spaced, hour, minute, second, zone = m.groups()
    if hour is not None and (spaced is None) == (zone is None):
        return False  # T/t takes a zone, the space none
    if (
        not 1 <= int(month) <= 12
        or not 1 <= int(day) <= calendar.monthrange(int(year), int(month))[1]
    ):
        return False
    return hour is None or (int(hour) <= 23 and int(minute) <= 59 and int(second) <= 59)

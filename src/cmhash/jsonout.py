"""JSON for people: exactly ``json.dumps(data, indent=2, ensure_ascii=False)``, faster.

With ``indent`` the standard library leaves its C encoder for a generic pure-Python one
(generators yielding every piece); on ``explain --format json`` for 5,000 apps that
took a fifth of the run. The documents cmhash writes hold only dicts with string keys,
lists and tuples, strings (text enums among them), ints, bools and None, so one small
recursion does it, with the C string escaper: in C (src/cmhash/native/_cjson.c) when it was
compiled at install, else here. Anything else (a float, a non-string key)
takes the standard library's path, so the output is always what ``json.dumps`` gives
(pinned in tests/test_jsonout.py).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from json.encoder import encode_basestring  # the C escaper
from typing import Any

from cmhash.native.cext import optional


class _Other(Exception):
    """A value this writer leaves to the standard library."""


# the same writer in C (src/cmhash/native/_cjson.c), when it was compiled at install
_CJSON = optional("cmhash.native._cjson")
_C_WRITE: Callable[[Any], str | None] | None = getattr(_CJSON, "write", None)
_C_DOCUMENT: Callable[[Any], bytes | None] | None = getattr(_CJSON, "document", None)


def dumps(data: Any) -> str:
    """``json.dumps(data, indent=2, ensure_ascii=False)``."""
    if _C_WRITE is not None:
        text = _C_WRITE(data)
        return text if text is not None else json.dumps(data, indent=2, ensure_ascii=False)
    return py_dumps(data)


def document(data: Any) -> bytes:
    """``dumps(data)`` and a line break, as UTF-8: for output written as it is (the C
    writer's bytes, with no str decoded from them and encoded back)."""
    if _C_DOCUMENT is not None:
        made = _C_DOCUMENT(data)
        if made is not None:
            return made
    return (dumps(data) + "\n").encode("utf-8")


def py_dumps(data: Any) -> str:
    """``dumps`` in Python: the reference for the C writer, and the writer without it."""
    out: list[str] = []
    try:
        _write(data, "\n", out)
    except _Other:
        return json.dumps(data, indent=2, ensure_ascii=False)
    return "".join(out)


def _write(value: Any, newline: str, out: list[str]) -> None:
    """``newline``: a line break and the indentation of the value's own line."""
    kind = type(value)
    if kind is str:
        out.append(encode_basestring(value))
    elif kind is dict:
        if not value:
            out.append("{}")
            return
        inner = newline + "  "
        sep = "{" + inner
        for key, item in value.items():
            if not isinstance(key, str):
                raise _Other
            out.append(sep)
            out.append(encode_basestring(key))
            out.append(": ")
            _write(item, inner, out)
            sep = "," + inner
        out.append(newline + "}")
    elif kind is list or kind is tuple:
        if not value:
            out.append("[]")
            return
        inner = newline + "  "
        sep = "[" + inner
        for item in value:
            out.append(sep)
            _write(item, inner, out)
            sep = "," + inner
        out.append(newline + "]")
    elif value is None:
        out.append("null")
    elif value is True:
        out.append("true")
    elif value is False:
        out.append("false")
    elif kind is int:
        out.append(int.__repr__(value))
    elif isinstance(value, str):  # a text enum (model.TextEnum): its value, as json does
        out.append(encode_basestring(value))
    else:
        raise _Other

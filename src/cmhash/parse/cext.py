"""The C extension (parse/_ctree.c), or None: not compiled at install (no C compiler or
libyaml's headers), or turned off with ``CMHASH_CTREE=0`` (for comparing). The one place
that decides; the modules it mirrors bind its functions (``function``). The two that need
only the compiler (``cmhash._cjson``, ``cmhash._cpack``) load through ``optional``."""

from __future__ import annotations

import os
import sys
from typing import Any


def optional(name: str) -> Any | None:
    """The C extension module ``name`` (``cmhash._cjson``, ``cmhash._cpack``), or None
    when it was not compiled at install: its Python reference does the work then."""
    try:
        __import__(name)  # (not importlib: every run would import it for this)
    except ImportError:
        return None
    return sys.modules[name]


def ctree() -> Any | None:
    if os.environ.get("CMHASH_CTREE") == "0":
        return None
    try:
        from cmhash.parse import _ctree  # type: ignore[attr-defined]
    except ImportError:
        return None
    return _ctree


def function(name: str, bind: str | None = None, *args: Any) -> Any | None:
    """The extension's function ``name``, after calling its ``bind`` with ``args`` (what it
    works with: our classes, constants and the Python fallback); None without it."""
    _ctree = ctree()
    if _ctree is None:
        return None
    if bind is not None:
        getattr(_ctree, bind)(*args)
    return getattr(_ctree, name)

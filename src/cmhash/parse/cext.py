"""The C extension (parse/_ctree.c), or None: not compiled at install (no C compiler or
libyaml's headers), or turned off with ``CMHASH_CTREE=0`` (for comparing). The one place
that decides; the modules it mirrors bind its functions (``function``). The two that need
only the compiler (``cmhash._cjson``, ``cmhash._cpack``) load through ``optional``.

``CMHASH_C_OFF=name,name``, for measuring what each piece of C saves (bench/c_gains.py):
those entry points (``build``, ``check_edit``, ``collect``, ``get``, ``site_refs``, ...,
or a whole module, ``_cjson``, ``_cpack``) are left to their Python references."""

from __future__ import annotations

import os
import sys
from typing import Any


def off(name: str) -> bool:
    """Whether ``CMHASH_C_OFF`` turns the C entry point or module ``name`` off."""
    return name in os.environ.get("CMHASH_C_OFF", "").replace(" ", "").split(",")


def optional(name: str) -> Any | None:
    """The C extension module ``name`` (``cmhash._cjson``, ``cmhash._cpack``), or None
    when it was not compiled at install: its Python reference does the work then."""
    if off(name.rpartition(".")[2]):
        return None
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
    if bind is not None:  # (also when turned off: the others may read what it binds)
        getattr(_ctree, bind)(*args)
    return None if off(name) else getattr(_ctree, name)

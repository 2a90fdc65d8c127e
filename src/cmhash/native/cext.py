"""The C extension (native/_ctree.c), or None: not compiled at install (no C compiler or
libyaml's headers), or turned off with ``CMHASH_CTREE=0`` (for comparing). The one place
that decides; the modules it mirrors bind its functions (``function``). The two that need
only the compiler (``cmhash.native._cjson``, ``cmhash.native._cpack``) load through ``optional``.

``CMHASH_C_OFF=name,name``, for measuring what each piece of C saves (bench/c_gains.py):
those entry points (:data:`NAMES`: ``build``, ``check_edit``, ``cuts``, ...; ``Node``
is the whole of ``_ctree``, whose every entry point reads C nodes; or a whole module,
``_cjson``, ``_cpack``) are left to their Python references. Another name (``node``,
``buidl``) is a usage error (:func:`check_off`, exit 2), never a run that measures
something else than asked."""

from __future__ import annotations

import os
import sys
from typing import Any

from cmhash.errors import UsageError

# what CMHASH_C_OFF may name: _ctree's entry points that bind here, then the modules
NAMES = (
    "Node",
    "build",
    "check_edit",
    "cuts",
    "document_resources",
    "find_refs",
    "resolve_plain",
    "top_level",
    "_cjson",
    "_cpack",
)


def _named() -> list[str]:
    return [n for n in os.environ.get("CMHASH_C_OFF", "").replace(" ", "").split(",") if n]


def off(name: str) -> bool:
    """Whether ``CMHASH_C_OFF`` turns the C entry point or module ``name`` off."""
    return name in _named()


def check_off() -> None:
    """A UsageError (exit 2, one line) when ``CMHASH_C_OFF`` names something that is not
    in :data:`NAMES`; the names are case-sensitive."""
    unknown = [n for n in _named() if n not in NAMES]
    if not unknown:
        return
    from cmhash.visible import visible

    cased = {n.lower(): n for n in NAMES}
    hints = [f" ({cased[n.lower()]}?)" if n.lower() in cased else "" for n in unknown]
    # (escaped: a newline or an escape sequence in the variable stays on the one line)
    named = ", ".join(f"'{visible(n)}'{hint}" for n, hint in zip(unknown, hints, strict=True))
    raise UsageError(
        f"CMHASH_C_OFF: unknown name {named}; names are case-sensitive, one of: " + ", ".join(NAMES)
    )


def optional(name: str) -> Any | None:
    """The C extension module ``name`` (``cmhash.native._cjson``, ``cmhash.native._cpack``), or None
    when it was not compiled at install: its Python reference does the work then."""
    if off(name.rpartition(".")[2]):
        return None
    try:
        __import__(name)  # (not importlib: every run would import it for this)
    except ImportError:
        return None
    return sys.modules[name]


def ctree() -> Any | None:
    if os.environ.get("CMHASH_CTREE") == "0" or off("Node"):
        return None
    try:
        from cmhash.native import _ctree  # type: ignore[attr-defined]
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

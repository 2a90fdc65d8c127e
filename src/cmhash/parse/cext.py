"""The C extension (parse/_ctree.c), or None: not compiled at install (no C compiler or
libyaml's headers), or turned off with ``CMHASH_CTREE=0`` (for comparing). The one place
that decides; events.py and tree.py bind its functions to our Node class."""

from __future__ import annotations

import os
from typing import Any


def ctree() -> Any | None:
    if os.environ.get("CMHASH_CTREE") == "0":
        return None
    try:
        from cmhash.parse import _ctree  # type: ignore[attr-defined]
    except ImportError:
        return None
    return _ctree

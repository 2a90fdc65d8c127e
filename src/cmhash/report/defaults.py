"""report: two pod templates compared as the API server stores them: on each side the
defaults the other side spells out are filled in (knowledge/defaults.py DEFAULTS), only
those, so that the values the report shows stay as the manifests wrote them; a quantity
spelled two ways in one format (QUANTITIES) is one amount.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from cmhash.knowledge.defaults import DEFAULTS, QUANTITIES, matches, quantity


def _default(path: tuple[str, ...], holder: Mapping[str, Any]) -> tuple[bool, Any]:
    """(whether the field at ``path`` has a default, that default) for ``holder``."""
    for d in DEFAULTS:
        if matches(d.pattern, path):
            value = d.value(holder) if callable(d.value) else d.value
            return True, value
    return False, None


def _key(item: Any, parent: str, names: Mapping[str, str]) -> Any:
    field = names.get(parent)
    return item.get(field) if field and isinstance(item, dict) else None


def _filled(
    a: Any, b: Any, path: tuple[str, ...], names: Mapping[str, str], spell: bool = False
) -> Any:
    """``a`` with the defaults ``b`` spells out where ``a`` leaves them out, and with
    ``spell``, ``b``'s spelling of a quantity of the same amount (a copy)."""
    if spell and a != b and any(matches(q, path) for q in QUANTITIES):
        amount = quantity(a)
        return b if amount is not None and amount == quantity(b) else a
    if isinstance(a, dict) and isinstance(b, dict):
        out = dict(a)
        for k, v in b.items():
            if k not in a:
                known, value = _default((*path, k), a)
                if known and value == v:
                    out[k] = v
            else:
                out[k] = _filled(a[k], v, (*path, k), names, spell)
        return out
    if isinstance(a, list) and isinstance(b, list):
        parent = path[-1] if path else ""
        by_name: dict[str, Any] = {}
        for item in b:
            name = _key(item, parent, names)
            if isinstance(name, str):
                by_name.setdefault(name, item)
        out_list = []
        for i, item in enumerate(a):
            name = _key(item, parent, names)
            other = by_name.get(name) if isinstance(name, str) else None
            if other is None and names.get(parent) is None and i < len(b):
                other = b[i]  # a list without names: by position
            out_list.append(
                item if other is None else _filled(item, other, (*path, "*"), names, spell)
            )
        return out_list
    return a


def with_defaults(old: Any, new: Any, names: Mapping[str, str]) -> tuple[Any, Any]:
    """Both templates, each with the defaults the other spells out filled in (``names``:
    the field that names a list's items, as podtemplate.py matches them)."""
    # (a quantity takes NEW's spelling on the OLD side only: one side, or they would swap)
    return _filled(old, new, (), names, spell=True), _filled(new, old, (), names)

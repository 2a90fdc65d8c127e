"""report: the immutable fields of a workload's object (knowledge/immutable.py FIXED)
that differ between OLD and NEW: a change the API server refuses."""

from __future__ import annotations

from typing import Any

from cmhash.knowledge.immutable import FIXED
from cmhash.knowledge.plain import path_get


def changed(kind: tuple[str, str], old: Any, new: Any) -> list[tuple[str, Any, Any]]:
    """(field, old value, new value) of each immutable field that differs."""
    if not isinstance(old, dict) or not isinstance(new, dict):
        return []
    out = []
    for row in FIXED:
        if kind not in row.kinds:
            continue
        before, after = row.fields(old), row.fields(new)
        for field in sorted(set(before) | set(after)):
            if before.get(field) != after.get(field):
                path = tuple(field.split("."))
                out.append((field, path_get(old, path), path_get(new, path)))
    return out

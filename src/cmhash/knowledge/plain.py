"""Reading a Kubernetes object held as plain data (dicts and lists, as kubectl sends it):
what the knowledge tables' predicates and the report's comparisons share."""

from __future__ import annotations

from typing import Any


def path_get(obj: Any, path: tuple[str, ...]) -> Any:
    """``obj[path[0]][path[1]]...``, or None where a step is missing or not a mapping."""
    for step in path:
        if not isinstance(obj, dict):
            return None
        obj = obj.get(step)
    return obj

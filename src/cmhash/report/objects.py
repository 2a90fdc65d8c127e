"""report: each workload of a run as plain data (its whole object), read again from its
document, so that OLD and NEW pod templates and rollout settings can be compared.

Only workload documents are read (each plan says where its object starts); nothing
from a ConfigMap or Secret enters this data. A pure function of the plans: no I/O.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import Any

from cmhash.analyze.resources import document_resources
from cmhash.model import ResourceId
from cmhash.parse.events import backend, parse_chunk
from cmhash.parse.limits import MAX_DEPTH
from cmhash.parse.tree import SCALAR, SEQ, Node, deref, entries, to_python
from cmhash.plan.resolve import WorkloadPlan
from cmhash.read.source import SourceText
from cmhash.read.split import chunk, cuts


def workload_objects(plans: Iterable[WorkloadPlan], parser: str) -> dict[ResourceId, Any]:
    """``plan.id`` -> the workload's object as plain data (YAML core scalars)."""
    be = backend(parser)
    cut_lists: dict[int, list[int]] = {}
    parsed: dict[tuple[int, int], dict[int, Any]] = {}  # (source, doc) -> offset -> object
    out: dict[ResourceId, Any] = {}
    for plan in plans:
        src: SourceText = plan.source
        doc = plan.info.doc
        key = (id(src), doc)
        if key not in parsed:
            if id(src) not in cut_lists:
                cut_lists[id(src)] = cuts(src.text)
            ch = chunk(cut_lists[id(src)], doc)
            roots = parse_chunk(src.text[ch.start : ch.end], ch.start, be)
            parsed[key] = {r.node.start: r.node for r in document_resources(src, doc, roots)}
        node = parsed[key].get(plan.info.offset)
        if node is None:
            continue
        with deep():
            out[plan.id] = plain(node)
    return out


@contextmanager
def deep() -> Iterator[None]:
    """Room for one frame or three a level: documents nest up to limits.MAX_DEPTH."""
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 4 * MAX_DEPTH + 1000))
    try:
        yield
    finally:
        sys.setrecursionlimit(limit)


def plain(node: Node | None) -> Any:
    """``tree.to_python`` without its depth limit for config files (the parser's own
    limit holds): YAML core scalars, merges and aliases resolved."""
    node = deref(node)
    if node is None or node.is_null:
        return None
    if node.kind == SCALAR:
        return to_python(node)
    if node.kind == SEQ:
        return [plain(x) for x in node.value]
    return {k: plain(v[1]) for k, v in entries(node).items()}


def path_get(obj: Any, path: tuple[str, ...]) -> Any:
    """``obj[path[0]][path[1]]...``, or None where a step is missing or not a mapping."""
    for step in path:
        if not isinstance(obj, dict):
            return None
        obj = obj.get(step)
    return obj

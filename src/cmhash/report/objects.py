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

from cmhash.errors import NodeError
from cmhash.model import ResourceId
from cmhash.parse.events import backend, parse_chunk
from cmhash.parse.k8syaml import plain_value
from cmhash.parse.limits import MAX_DEPTH
from cmhash.parse.resources import document_resources
from cmhash.parse.tree import SCALAR, SEQ, Node, deref, entries, to_python
from cmhash.plan.workplan import WorkloadPlan
from cmhash.read.source import SourceText
from cmhash.read.split import chunk, cuts


class Objects:
    """One side's workloads as plain data, read when first asked for (a big stream's
    report needs few: those whose document changed, and those a rule looks at)."""

    def __init__(self, plans: Iterable[WorkloadPlan], parser: str) -> None:
        self._plans = {p.id: p for p in plans}
        self._be = backend(parser)
        self._cuts: dict[int, list[int]] = {}
        self._parsed: dict[tuple[int, int], dict[int, Any]] = {}  # (source, doc) -> objects
        self._objects: dict[ResourceId, Any] = {}

    def __contains__(self, key: ResourceId) -> bool:
        return key in self._plans

    def ids(self) -> Iterable[ResourceId]:
        return self._plans.keys()

    def _chunk(self, plan: WorkloadPlan) -> tuple[int, int]:
        src: SourceText = plan.source
        if id(src) not in self._cuts:
            self._cuts[id(src)] = cuts(src.text)
        ch = chunk(self._cuts[id(src)], plan.info.doc)
        return ch.start, ch.end

    def text(self, key: ResourceId) -> str | None:
        """The text of the document that holds it."""
        plan = self._plans.get(key)
        if plan is None:
            return None
        start, end = self._chunk(plan)
        return str(plan.source.text[start:end])

    def get(self, key: ResourceId) -> Any:
        """The object (None: not on this side)."""
        if key in self._objects:
            return self._objects[key]
        plan = self._plans.get(key)
        if plan is None:
            return None
        src: SourceText = plan.source
        where = (id(src), plan.info.doc)
        if where not in self._parsed:
            start, end = self._chunk(plan)
            roots = parse_chunk(src.text[start:end], start, self._be)
            self._parsed[where] = {
                r.node.start: r.node for r in document_resources(src, plan.info.doc, roots)
            }
        node = self._parsed[where].get(plan.info.offset)
        with deep():
            try:
                obj = None if node is None else plain(node)
            except NodeError as exc:  # a complex key cmhash does not compare: said, exit 2
                raise src.error(
                    f"{plan.info.label}: cannot compare its pod template ({exc.public})",
                    exc.offset,
                ) from None
            self._objects[key] = obj
        return obj


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
    """The object as the API server receives it from kubectl: a plain scalar resolved by
    go-yaml's rules (k8syaml.py: ``0644`` is 420, ``yes`` is true), merges and aliases
    resolved, no depth limit but the parser's own."""
    node = deref(node)
    if node is None or node.is_null:
        return None
    if node.kind == SCALAR:
        if node.style is None and node.tag is None:
            return plain_value(str(node.value))
        return to_python(node)
    if node.kind == SEQ:
        return [plain(x) for x in node.value]
    return {k: plain(v[1]) for k, v in entries(node).items()}

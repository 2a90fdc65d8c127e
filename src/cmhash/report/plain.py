"""report: an object of the input as plain data, as the API server receives it from
kubectl (templates.py reads the workloads, scaling.py the autoscalers)."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from cmhash.parse.k8syaml import plain_value
from cmhash.parse.tree import MAX_DEPTH, SCALAR, SEQ, Node, deref, entries, to_python


@contextmanager
def deep() -> Iterator[None]:
    """Room for one frame or three a level: documents nest up to tree.MAX_DEPTH."""
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

"""The safety net (black's equivalence check): re-parse an edited document and
require it to equal the original apart from our annotation."""

from __future__ import annotations

from typing import Any

from cmhash.edit import own
from cmhash.errors import NodeError
from cmhash.kinds import WorkloadKind
from cmhash.resources import resources_of
from cmhash.source import SourceText
from cmhash.yamltree import MAP, Node, get, get_path, parse_chunk, same_tree


def _pairs_left(node: Node, drop: set[int]) -> int:
    return sum(1 for k, _ in node.value if id(k) not in drop)


def managed_pairs(template: Node, key: str) -> set[int]:
    """Key nodes to ignore: our key, and the levels that hold nothing else."""
    drop: set[int] = set()
    meta_pair = own(template, "metadata")
    if meta_pair is None:
        return drop
    mkey, meta = meta_pair
    if meta.is_null:
        drop.add(id(mkey))
        return drop
    if meta.kind != MAP:
        return drop
    ann_pair = own(meta, "annotations")
    if ann_pair is not None:
        akey, ann = ann_pair
        if ann.is_null:
            drop.add(id(akey))
        elif ann.kind == MAP:
            pair = own(ann, key)
            if pair is not None:
                drop.add(id(pair[0]))
            if _pairs_left(ann, drop) == 0:
                drop.add(id(akey))
    if _pairs_left(meta, drop) == 0:
        drop.add(id(mkey))
    return drop


def _templates(src: SourceText, doc: int, roots: list[Node],
               edited: list[tuple[int, WorkloadKind, str]]) -> list[Node | None]:
    resources = [r for root in roots for r in resources_of(src, doc, root)]
    out: list[Node | None] = []
    for pos, kind, _ in edited:
        node = resources[pos].node if pos < len(resources) else None
        out.append(get_path(node, kind.template_path) if kind.template_path else node)
    return out


def verify_edits(src: SourceText, doc: int, base: int, old_roots: list[Node], new_text: str,
                 edited: list[tuple[int, WorkloadKind, str]], key: str, be: Any) -> None:
    """``edited``: (resource position in the document, kind, value written)."""
    new_roots = parse_chunk(new_text, base, be)
    if len(new_roots) != len(old_roots):
        raise NodeError("the number of documents changed", base)
    drop_old: set[int] = set()
    drop_new: set[int] = set()
    for (_, kind, value), told, tnew in zip(edited, _templates(src, doc, old_roots, edited),
                                            _templates(src, doc, new_roots, edited),
                                            strict=True):
        if told is None or tnew is None:
            raise NodeError(f"a {kind.kind} pod template is gone", base)
        written = get(get_path(tnew, ("metadata", "annotations")), key)
        if written is None or written.value != value or written.style != '"':
            raise NodeError(f"a {kind.kind} does not carry the planned value", base)
        drop_old |= managed_pairs(told, key)
        drop_new |= managed_pairs(tnew, key)
    for a, b in zip(old_roots, new_roots, strict=True):
        if not same_tree(a, b, drop_old, drop_new):
            raise NodeError("the document changed beyond the annotation", base)

"""The safety net (black's equivalence check): re-parse every edited document and
require it to equal the original apart from our annotation."""

from __future__ import annotations

from typing import TYPE_CHECKING

from cmhash.edit import own
from cmhash.errors import NodeError
from cmhash.kinds import Policy
from cmhash.resources import resources_of
from cmhash.settings import Settings
from cmhash.yamltree import MAP, Node, backend, get, get_path, parse_chunk, to_plain

if TYPE_CHECKING:
    from cmhash.parse import Document
    from cmhash.plan import WorkloadPlan


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


def _targets(roots: list[Node], doc: Document, plans: list[WorkloadPlan]) -> list[Node]:
    """The pod templates of the edited workloads, found again in a (re-)parsed document."""
    resources = [r for root in roots for r in resources_of(doc.source, doc.index, root)]
    positions = {id(r.node): i for i, r in enumerate(doc.resources)}
    out = []
    for p in plans:
        res = resources[positions[id(p.resource.node)]]
        out.append(get_path(res.node, p.kind.template_path) if p.kind.template_path
                   else res.node)
    return out


def verify_document(doc: Document, new_text: str, plans: list[WorkloadPlan],
                    settings: Settings) -> None:
    assert doc.roots is not None
    key = settings.annotation_key
    new_roots = parse_chunk(new_text, doc.chunk.start, backend(settings.parser))
    if len(new_roots) != len(doc.roots):
        raise NodeError("the number of documents changed", doc.chunk.start)
    old_t = _targets(doc.roots, doc, plans)
    new_t = _targets(new_roots, doc, plans)
    drop_old: set[int] = set()
    drop_new: set[int] = set()
    for p, told, tnew in zip(plans, old_t, new_t):
        if told is None or tnew is None:
            raise NodeError(f"the pod template of {p.resource.label} is gone", doc.chunk.start)
        written = get(get_path(tnew, ("metadata", "annotations")), key)
        if written is None or written.value != p.value or written.style != '"':
            raise NodeError(f"{p.resource.label} does not carry the planned value",
                            doc.chunk.start)
        assert p.kind.policy in (Policy.ANNOTATE, Policy.JOB, Policy.POD)
        drop_old |= managed_pairs(told, key)
        drop_new |= managed_pairs(tnew, key)
    for a, b in zip(doc.roots, new_roots):
        if to_plain(a, drop_old) != to_plain(b, drop_new):
            raise NodeError("the document changed beyond the annotation", doc.chunk.start)

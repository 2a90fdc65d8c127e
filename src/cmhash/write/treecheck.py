"""The self-check on trees: the edited document, parsed again by the C tree builder
(parse/_ctree.c), must be the original tree plus our annotation. The same promise as
verify.py, without PyYAML's events: small inputs then never import PyYAML at all.

Only plain cases take this path, as in cverify.py: one document holding one object
(the workload itself, not a List item), whose edited text the C builder builds (so no
anchors, aliases or tags in it), with ``metadata``/``annotations`` either mappings or
absent. Our annotation must hold the planned value, double-quoted; an existing value
under our key is dropped from the original; levels the edit created must hold nothing
else. Everything else must be equal: kinds, values, styles, tags, anchors, the order of
entries. Anything else, or any difference, returns ``None`` and verify.py decides (its
message is the one users see).
"""

from __future__ import annotations

from collections.abc import Callable

from cmhash.analyze.kinds import WorkloadKind
from cmhash.errors import NodeError
from cmhash.parse.events import Roots, SamePairs, ctree_same_pairs
from cmhash.parse.tree import MAP, SCALAR, SEQ, Node, get


def verify(
    roots: Roots,
    new_text: str,
    base: int,
    kind: WorkloadKind,
    key: str,
    value: str,
    ctree: Callable[[str, int], list[Node] | None] | None,
) -> bool | None:
    """True when the edited document is the original plus our annotation; None when this
    path cannot tell. ``ctree``: the backend's C builder (None: this path cannot tell)."""
    if ctree is None or len(roots) != 1 or roots.aliased:
        return None
    built = ctree(new_text, base)
    if built is None or len(built) != 1:
        return None
    same = ctree_same_pairs() or _same_pairs  # the C walk; _same_pairs is its reference
    try:
        return _verify(roots[0], built[0], kind, key, value, same)
    except NodeError:  # a duplicate key or a bad merge on the way: verify.py says which
        return None


def _verify(
    old: Node, new: Node, kind: WorkloadKind, key: str, value: str, same: SamePairs
) -> bool | None:
    old_t, new_t = _at(old, kind.template_path), _at(new, kind.template_path)
    if old_t is None or new_t is None or old_t.kind != MAP or new_t.kind != MAP:
        return None
    old_meta, new_meta = _own(old_t, "metadata"), _own(new_t, "metadata")
    if old_meta is not None and old_meta.kind != MAP:  # null metadata: verify.py
        return None
    if new_meta is None or new_meta.kind != MAP:
        return None
    old_ann = _own(old_meta, "annotations") if old_meta is not None else None
    new_ann = _own(new_meta, "annotations")
    if (old_ann is not None and old_ann.kind != MAP) or new_ann is None or new_ann.kind != MAP:
        return None
    ours = [v for k, v in new_ann.value if _names(k, key)]
    if len(ours) != 1:
        return None
    mine = ours[0]
    if mine.kind != SCALAR or mine.style != '"' or mine.tag is not None or mine.value != value:
        return None
    # the original as the edit should leave it, against the edited tree without ours;
    # a level the edit created (annotations, metadata) must hold only what leads to ours
    if old_ann is None:
        if len(new_ann.value) != 1:
            return None
    elif not same(_without(old_ann, key), _without(new_ann, key)):
        return None
    if old_meta is None:
        if len(new_meta.value) != 1:
            return None
        old_template_pairs = old_t.value
    else:
        old_meta_pairs = old_meta.value if old_ann is None else _without(old_meta, "annotations")
        if not same(old_meta_pairs, _without(new_meta, "annotations")):
            return None
        old_template_pairs = _without(old_t, "metadata")
    equal = same(old_template_pairs, _without(new_t, "metadata"))
    return (equal and _same_rest(old, new, kind, same)) or None


def _same_rest(old: Node, new: Node, kind: WorkloadKind, same: SamePairs) -> bool:
    """Everything outside the pod template: each level of the template path, without the
    next step (compared on its own)."""
    path = kind.template_path
    for depth, step in enumerate(path):
        o, n = _at(old, path[:depth]), _at(new, path[:depth])
        if o is None or n is None or o.kind != MAP or n.kind != MAP:
            return False
        if not same(_without(o, step), _without(n, step)):
            return False
    return True


def _at(node: Node, path: tuple[str, ...]) -> Node | None:
    n: Node | None = node
    for step in path:
        n = get(n, step)
    return n


def _names(k: Node, key: str) -> bool:
    return k.kind == SCALAR and k.value == key


def _own(node: Node, key: str) -> Node | None:
    found = [v for k, v in node.value if _names(k, key)]
    return found[0] if len(found) == 1 else None


def _without(node: Node, key: str) -> list[tuple[Node, Node]]:
    pairs: list[tuple[Node, Node]] = node.value
    return [p for p in pairs if not _names(p[0], key)]


def _same_pairs(a: list[tuple[Node, Node]], b: list[tuple[Node, Node]]) -> bool:
    return len(a) == len(b) and all(
        _same(ka, kb) and _same(va, vb) for (ka, va), (kb, vb) in zip(a, b, strict=True)
    )


def _same(a: Node, b: Node) -> bool:
    if a.kind != b.kind or a.style != b.style or a.tag != b.tag or a.anchor != b.anchor:
        return False
    if a.kind == SCALAR:
        return bool(a.value == b.value)
    if a.kind == MAP:
        return _same_pairs(a.value, b.value)
    if a.kind == SEQ:
        return len(a.value) == len(b.value) and all(
            _same(x, y) for x, y in zip(a.value, b.value, strict=True)
        )
    return False  # an alias: never in a tree the C builder made

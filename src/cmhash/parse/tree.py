"""A light, position-carrying YAML tree (built by builder.py) and the accessors every stage
reads it with. Aliases are ``ALIAS`` nodes pointing at their anchor, never expanded, so
an alias bomb costs nothing until something reads through it; ``get`` and friends read
through aliases and ``<<`` merges, ``own`` only what a mapping itself writes.

Resource bounds (README, "Security and guarantees"): what the parser refuses before
anything downstream could blow up. Kubernetes stores an object in etcd, 1.5 MiB at
most, so no real manifest comes near these."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from cmhash.errors import NodeError
from cmhash.native import cext

SCALAR, SEQ, MAP, ALIAS = "scalar", "seq", "map", "alias"

MERGE_KEY = "<<"
# a key ``<<`` merges when plain, with the non-specific tag or ``!!merge`` (go-yaml v2
# ``isMerge``: implicit, or the merge tag); quoted or ``!!str``, it is a key
_MERGE_TAGS = (None, "!", "tag:yaml.org,2002:merge")
_NULLS = frozenset(("", "~", "null", "Null", "NULL"))


class _PyNode:
    """``value``: str (scalar), list[Node] (seq), list[tuple[Node, Node]] (map), Node (alias).

    ``style``: scalar style (None = plain, ``'"'``, ``"'"``, ``'|'``, ``'>'``) or, for
    collections, True when written in flow style. ``start``/``end`` are absolute
    character offsets in the source text.

    (``Node``: this, or the same class in C from native/_ctree.c, which keeps its
    offsets as C integers; this one stays its reference.)
    """

    # native/_ctree.c fills exactly these slots without calling __init__ (it refuses a
    # class with other slots): keep __init__ to these plain assignments
    __slots__ = ("_dict", "anchor", "end", "kind", "start", "style", "tag", "value")

    def __init__(
        self,
        kind: str,
        start: int,
        end: int,
        value: Any,
        style: Any,
        tag: str | None,
        anchor: str | None,
    ) -> None:
        self.kind = kind
        self.start = start
        self.end = end
        self.value = value
        self.style = style
        self.tag = tag
        self.anchor = anchor
        self._dict: dict[str, tuple[Node, Node]] | None = None

    def __repr__(self) -> str:  # pragma: no cover - debugging aid
        return f"Node({self.kind}, {self.start}-{self.end})"

    @property
    def is_null(self) -> bool:
        return (
            self.kind == SCALAR
            and self.style is None
            and self.value in _NULLS
            and (self.tag is None or self.tag == "tag:yaml.org,2002:null")
        )


if TYPE_CHECKING:
    Node = _PyNode
else:
    Node = cext.function("Node") or _PyNode


def deref(node: Node | None) -> Node | None:
    while node is not None and node.kind == ALIAS:  # (once: an anchored node is no alias)
        node = node.value
    return node


def entries(node: Node) -> dict[str, tuple[Node, Node]]:
    """Key -> (key node, value node) of a mapping, ``<<`` merges applied as kubectl's
    go-yaml v2 applies them, explicit duplicates refused.

    go-yaml v2 ``decode.go`` ``(*decoder).mapping`` sets the keys in document order and
    ``(*decoder).merge`` unmarshals the merged mapping into the same map, so a ``<<``
    overwrites a key written before it, and of two ``<<`` the later wins; in a list of
    mappings (merged last to first) the earlier wins. (The YAML merge spec, and yaml.v3,
    let the explicit key win; kubectl sends v2's.)"""
    cached = node._dict
    if cached is not None:
        return cached
    result: dict[str, tuple[Node, Node]] = {}
    written: set[str] = set()
    for k, v in node.value:
        key = deref(k)
        if key is None or key.kind != SCALAR:
            raise NodeError("complex mapping keys are not supported", k.start)
        name = key.value
        if name == MERGE_KEY and is_merge_key(key):
            result.update(_merged(v))
            continue
        if name in written:
            raise NodeError(f"duplicate key {name!r}", k.start)
        written.add(name)
        result[name] = (k, v)
    node._dict = result
    return result


def is_merge_key(key: Node) -> bool:
    """Whether a key scalar is a ``<<`` merge (go-yaml v2 ``isMerge``)."""
    return key.value == MERGE_KEY and key.style is None and key.tag in _MERGE_TAGS


def _merged(value: Node) -> dict[str, tuple[Node, Node]]:
    """What one ``<<`` sets: a mapping's entries, or a list's with the earlier winning."""
    target = deref(value)
    sources = [target]
    if target is not None and target.kind == SEQ:
        sources = [deref(x) for x in target.value]
    if not sources or any(s is None or s.kind != MAP for s in sources):
        raise NodeError("a '<<' merge key needs a mapping or a list of mappings", value.start)
    merged: dict[str, tuple[Node, Node]] = {}
    for src in sources:
        assert src is not None
        for name, pair in entries(src).items():
            merged.setdefault(name, pair)
    return merged


def own(node: Node, key: str) -> tuple[Node, Node] | None:
    """The (key, value) pair written in this mapping itself (not merged in)."""
    for k, v in node.value:
        if k.kind == SCALAR and k.value == key:
            return k, v
    return None


def get(node: Node | None, key: str) -> Node | None:
    """The value under ``key`` of a mapping (through aliases), or None. (The hottest
    function of a run; its C copy saved under 1 % of one: bench/c_gains.py.)"""
    if node is None:
        return None
    if node.kind != MAP:  # (the common case first: the hottest function of a run)
        node = deref(node)
        if node is None or node.kind != MAP:
            return None
    cached = node._dict
    pair = (cached if cached is not None else entries(node)).get(key)
    if pair is None:
        return None
    value = pair[1]
    return value if value.kind != ALIAS else deref(value)


def walk(node: Node | None, path: tuple[str, ...], field: str = "") -> list[tuple[Node, str]]:
    """Nodes at ``path`` below ``node`` ("*" fans out over list items), each with its
    field path (``spec.containers[0].env``)."""
    found: list[tuple[Node | None, str]] = [(node, field)]
    for step in path:
        nxt: list[tuple[Node | None, str]] = []
        for n, f in found:
            if step == "*":
                nxt.extend((x, f"{f}[{i}]") for i, x in enumerate(items(n)))
            else:
                child = get(n, step)
                if child is not None:
                    nxt.append((child, f"{f}.{step}" if f else step))
        found = nxt
    return [(n, f) for n, f in found if n is not None]


def get_path(node: Node | None, path: tuple[str, ...]) -> Node | None:
    for key in path:
        node = get(node, key)
        if node is None:
            return None
    return node


def scalar(node: Node | None) -> str | None:
    """A scalar's string value; None for null, absent or non-scalar nodes."""
    node = deref(node)
    if node is None or node.kind != SCALAR or node.is_null:
        return None
    return str(node.value)


# the Node class and kinds native/_ctree.c's readers of the tree (refs.py's site walk,
# resolve.py's plain references...) work with, bound once
_ctree = cext.ctree()
if _ctree is not None:
    _ctree.bind_get(Node, MAP, ALIAS)
    _ctree.bind_scalar(SCALAR, SEQ)


def items(node: Node | None) -> list[Node]:
    """A sequence's items, each read through its alias; [] for anything else."""
    if node is not None and node.kind == ALIAS:
        node = deref(node)
    if node is None or node.kind != SEQ:
        return []
    seq: list[Node] = node.value
    for x in seq:
        if x.kind == ALIAS:
            return [n for n in map(deref, seq) if n is not None]
    return list(seq)  # (the common case: no alias, and no Python step per item)


_BOOLS = {"true": True, "True": True, "TRUE": True, "false": False, "False": False, "FALSE": False}
_INT = r"^[-+]?[0-9]+$"  # (compiled by re's cache on first use: config files, Jobs)


def to_python(node: Node | None, depth: int = 0) -> Any:
    """Plain Python data (YAML 1.2 core scalars) for small documents such as config files."""
    node = deref(node)
    if depth > 100:
        raise NodeError("configuration nested too deeply", node.start if node else 0)
    if node is None or node.is_null:
        return None
    if node.kind == SCALAR:
        if node.style is None and node.tag is None:
            if node.value in _BOOLS:
                return _BOOLS[node.value]
            if re.match(_INT, node.value):
                return int(node.value)
        return node.value
    if node.kind == SEQ:
        return [to_python(x, depth + 1) for x in node.value]
    return {k: to_python(v[1], depth + 1) for k, v in entries(node).items()}


MAX_DEPTH = 1000  # nested collections
MAX_SCALAR = 8 * 1024 * 1024  # characters in one scalar
MAX_ALIAS_EXPANSION = 1_000_000  # nodes a document would have with its aliases expanded


def check_expansion(root: Node) -> None:
    """Refuse what would explode downstream: kubectl expands aliases (a "billion
    laughs" document turns 1 KB into gigabytes) and cannot encode recursive ones."""
    memo: dict[int, int] = {}
    active: set[int] = set()
    todo: list[tuple[Node, bool]] = [(root, False)]
    while todo:
        node, finish = todo.pop()
        key = id(node)
        if finish:
            active.discard(key)
            if node.kind == ALIAS:
                memo[key] = memo[id(node.value)]
                continue
            children = node.value if node.kind == SEQ else [x for pair in node.value for x in pair]
            total = 1 + sum(memo[id(c)] for c in children)
            if total > MAX_ALIAS_EXPANSION:
                raise NodeError(
                    f"aliases expand this node to more than {MAX_ALIAS_EXPANSION} "
                    "nodes (an alias bomb?)",
                    node.start,
                )
            memo[key] = total
            continue
        if key in memo:
            continue
        if key in active:
            raise NodeError("recursive alias: a node contains itself", node.start)
        if node.kind == SCALAR:
            memo[key] = 1
            continue
        active.add(key)
        todo.append((node, True))
        if node.kind == ALIAS:
            target = node.value
            if id(target) in active:
                raise NodeError(
                    f"recursive alias '*{node.anchor}': a node contains itself",
                    node.start,
                    public="recursive alias: a node contains itself",
                )
            todo.append((target, False))
        else:
            children = node.value if node.kind == SEQ else [x for pair in node.value for x in pair]
            todo.extend((c, False) for c in children)

"""tree.get in C (parse/_ctree.c's get): the same value, or the same exception, as
tree._py_get, its reference, on every mapping of the corpus and on the trees it hands
back (aliases, merges, duplicate keys, other kinds)."""

from __future__ import annotations

from typing import Any

import pytest
from conftest import CORPUS

from cmhash.errors import NodeError
from cmhash.parse import events, tree
from cmhash.parse.tree import MAP, SCALAR, SEQ, Node

pytest.importorskip("cmhash.parse._ctree")


def test_the_module_uses_the_c_get() -> None:
    assert tree.get is not tree._py_get
    assert type(tree.get).__name__ == "builtin_function_or_method"


def _outcome(node: Any, key: str) -> Any:
    try:
        return ("value", tree._py_get(node, key))
    except NodeError as exc:
        return ("error", exc.message, exc.offset)


def _c_outcome(node: Any, key: str) -> Any:
    try:
        return ("value", tree.get(node, key))
    except NodeError as exc:
        return ("error", exc.message, exc.offset)


def _nodes(node: Node) -> list[Node]:
    out = [node]
    if node.kind == MAP:
        for k, v in node.value:
            out += _nodes(k) + _nodes(v)
    elif node.kind == SEQ:
        for x in node.value:
            out += _nodes(x)
    return out


KEYS = ["metadata", "name", "spec", "containers", "<<", "a", "b", "x", "", "missing"]


def test_the_same_on_every_node_of_the_corpus() -> None:
    checked = 0
    for f in sorted(CORPUS.rglob("*.yaml"))[:40]:
        roots = events.parse_chunk(f.read_text(), 0, events.backend("fast"))
        for root in roots:
            for node in _nodes(root):
                for key in KEYS:
                    assert _c_outcome(node, key) == _outcome(node, key)
                    checked += 1
    assert checked > 10_000


@pytest.mark.parametrize(
    "text",
    [
        "a: &x {b: 1}\nc: *x\n",  # an alias value: read through
        "base: &b {x: 1, y: 2}\nm:\n  <<: *b\n  y: 3\n",  # a merge
        "m: {a: 1, a: 2}\n",  # a duplicate key: entries() raises
        "m: {<<: [1]}\n",  # a bad merge
        "m: [1, 2]\nn: 1\n",
        "m: {? [k] : v}\n",  # a complex key
        "m: !!map {a: 1}\n",  # a tag: built on the event path
        "m:\n",
    ],
)
def test_the_same_where_it_hands_back(text: str) -> None:
    roots = events.parse_chunk(text, 0, events.backend("fast"))
    for node in _nodes(roots[0]):
        for key in ["a", "b", "m", "x", "y", "<<", "k"]:
            assert _c_outcome(node, key) == _outcome(node, key), (text, node, key)
    alias = [n for n in _nodes(roots[0]) if n.kind == "alias"]
    for node in alias:
        assert _c_outcome(node, "b") == _outcome(node, "b")


def test_none_and_other_objects() -> None:
    assert tree.get(None, "a") is None
    with pytest.raises(AttributeError):
        tree.get("not a node", "a")  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        tree.get(None)  # type: ignore[call-arg]


# ------------------------------------------------------------------ tree.scalar in C


def test_the_module_uses_the_c_scalar() -> None:
    assert tree.scalar is not tree._py_scalar
    assert type(tree.scalar).__name__ == "builtin_function_or_method"


def _scalars(node: Any) -> tuple[Any, Any]:
    c = tree.scalar(node)
    py = tree._py_scalar(node)
    return (type(c), c), (type(py), py)


def test_scalar_the_same_on_every_node_of_the_corpus() -> None:
    checked = 0
    for f in sorted(CORPUS.rglob("*.yaml"))[:40]:
        for parser in ("fast", "exact"):
            roots = events.parse_chunk(f.read_text(), 0, events.backend(parser))
            for root in roots:
                for node in _nodes(root):
                    c, py = _scalars(node)
                    assert c == py, (f, node)
                    checked += 1
    assert checked > 10_000


@pytest.mark.parametrize(
    "text",
    [
        "a: ~\nb: null\nc: Null\nd: NULL\ne:\nf: ''\ng: 'null'\nh: \"~\"\ni: nulL\nj: nul\n",
        "a: !!null x\nb: !!str null\nc: !!null\nd: !!str\ne: !!null ~\n",  # tags: Python
        "a: &x ~\nb: *x\nc: &y v\nd: *y\ne: &m {k: v}\nf: *m\n",  # aliases: Python
        "a: |\n  null\nb: >\n  ~\nc: [1, ~]\nd: {}\n",
        "a: héllo\nb: ∅\nc: 'ünï'\n",
    ],
)
def test_scalar_the_same_on_odd_scalars(text: str) -> None:
    for parser in ("fast", "exact"):
        roots = events.parse_chunk(text, 0, events.backend(parser))
        for node in _nodes(roots[0]):
            c, py = _scalars(node)
            assert c == py, (text, parser, node)


def test_scalar_of_none_and_other_objects() -> None:
    assert tree.scalar(None) is None
    with pytest.raises(AttributeError):
        tree.scalar("not a node")  # type: ignore[arg-type]
    odd = Node("scalar", 0, 1, 5, None, None, None)  # a value no parser makes
    assert tree.scalar(odd) == tree._py_scalar(odd) == "5"


# ------------------------------------------------------------------ Node in C


def test_the_node_class_is_the_c_one_and_untracked() -> None:
    import gc

    assert tree.Node is not tree._PyNode
    node = tree.Node(SEQ, 0, 5, [], True, None, None)
    assert not gc.is_tracked(node)  # a tree is acyclic: no collector bookkeeping
    assert gc.is_tracked(tree._PyNode(SEQ, 0, 5, [], True, None, None))
    roots = events.parse_chunk("a: [b, {c: d}]\n", 0, events.backend("fast"))
    assert all(type(n) is tree.Node and not gc.is_tracked(n) for n in _nodes(roots[0]))


def _attrs(node: Any) -> Any:
    out = []
    for name in NAMES:
        try:
            out.append(("ok", getattr(node, name)))
        except (AttributeError, TypeError) as exc:
            out.append((type(exc).__name__,))
    return out


@pytest.mark.parametrize(
    "args",
    [
        ("scalar", 0, 1, "", None, None, None),
        ("scalar", 0, 1, "~", None, None, None),
        ("scalar", 0, 1, "null", None, None, "a"),
        ("scalar", 0, 1, "NULL", None, "tag:yaml.org,2002:null", None),
        ("scalar", 0, 1, "Null", '"', None, None),
        ("scalar", 0, 1, "nul", None, None, None),
        ("scalar", 0, 1, "null", None, "tag:yaml.org,2002:str", None),
        ("scalar", 0, 1, ["unhashable"], None, None, None),  # no parser makes it
        ("scalar", 0, 1, 5, None, None, None),
        ("map", 0, 1, [], False, None, None),
        ("seq", 3, 9, [], True, "!x", "y"),
        ("alias", 0, 1, None, None, None, None),
    ],
)
def test_the_c_node_is_the_python_node(args: tuple[Any, ...]) -> None:
    """The same attributes, is_null included (or the same exception), as tree._PyNode."""
    assert _attrs(tree.Node(*args)) == _attrs(tree._PyNode(*args))
    c, py = tree.Node(*args), tree._PyNode(*args)
    c._dict = py._dict = {"k": (1, 2)}  # type: ignore[assignment]
    assert _attrs(c) == _attrs(py)
    assert repr(c) == f"Node({args[0]}, {args[1]}-{args[2]})"


def test_a_c_node_with_unset_slots_is_a_python_one_with_unset_slots() -> None:
    """But for its offsets: C integers, 0 until set (no Python int a node)."""

    def other(node: Any) -> Any:
        return [a for name, a in zip(NAMES, _attrs(node), strict=True) if name not in POS]

    c, py = tree.Node.__new__(tree.Node), tree._PyNode.__new__(tree._PyNode)
    assert other(c) == other(py)
    assert (c.start, c.end) == (0, 0)
    for n in (c, py):
        n.kind = SCALAR
        n.style = None
        n.start, n.end = 3, 7
    assert _attrs(c) == _attrs(py)
    with pytest.raises(TypeError):
        c.start = "3"  # type: ignore[assignment]
    with pytest.raises(TypeError):
        tree.Node(SCALAR, 0, 1)  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        tree.Node(SCALAR, "0", 1, "x", None, None, None)  # type: ignore[arg-type]
    assert _attrs(
        tree.Node(kind=SCALAR, start=0, end=1, value="~", style=None, tag=None, anchor=None)
    ) == _attrs(tree._PyNode(SCALAR, 0, 1, "~", None, None, None))


NAMES = ("kind", "start", "end", "value", "style", "tag", "anchor", "_dict", "is_null")
POS = ("start", "end")

"""tree.get and tree.scalar (Python: their C copies saved under 1 % of a run, see
ARCHITECTURE.md) on the trees both parsers make, and tree.Node in C against
tree._PyNode, its reference."""

from __future__ import annotations

from typing import Any

import pytest
from conftest import CORPUS

from cmhash.errors import NodeError
from cmhash.parse import events, tree
from cmhash.parse.tree import MAP, SCALAR, SEQ, Node


def _nodes(node: Node) -> list[Node]:
    out = [node]
    if node.kind == MAP:
        for k, v in node.value:
            out += _nodes(k) + _nodes(v)
    elif node.kind == SEQ:
        for x in node.value:
            out += _nodes(x)
    return out


def _outcome(node: Any, key: str) -> Any:
    try:
        got = tree.get(node, key)
    except NodeError as exc:
        return ("error", exc.message, exc.offset)
    return ("value", None if got is None else (got.kind, tree.scalar(got)))


KEYS = ["metadata", "name", "spec", "containers", "<<", "a", "b", "x", "", "missing"]


@pytest.mark.parametrize(
    "text",
    [
        "a: &x {b: 1}\nc: *x\n",  # an alias value: read through
        "base: &b {x: 1, y: 2}\nm:\n  <<: *b\n  y: 3\n",  # a merge
        "m: {a: 1, a: 2}\n",  # a duplicate key: entries() raises
        "m: {<<: [1]}\n",  # a bad merge
        "m: [1, 2]\nn: 1\n",
        "m: {? [k] : v}\n",  # a complex key
        "m: !!map {a: 1}\n",
        "m:\n",
    ],
)
def test_get_the_same_on_both_parsers_trees(text: str) -> None:
    fast, exact = (events.parse_chunk(text, 0, events.backend(p))[0] for p in ("fast", "exact"))
    for a, b in zip(_nodes(fast), _nodes(exact), strict=True):
        for key in ["a", "b", "m", "x", "y", "<<", "k"]:
            assert _outcome(a, key) == _outcome(b, key), (text, a, key)


def test_none_and_other_objects() -> None:
    assert tree.get(None, "a") is None
    with pytest.raises(AttributeError):
        tree.get("not a node", "a")  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        tree.get(None)  # type: ignore[call-arg]


@pytest.mark.parametrize(
    "text",
    [
        "a: ~\nb: null\nc: Null\nd: NULL\ne:\nf: ''\ng: 'null'\nh: \"~\"\ni: nulL\nj: nul\n",
        "a: !!null ''\nb: !!str null\nc: !!null\nd: !!str\ne: !!null ~\n",
        "a: &x ~\nb: *x\nc: &y v\nd: *y\ne: &m {k: v}\nf: *m\n",
        "a: |\n  null\nb: >\n  ~\nc: [1, ~]\nd: {}\n",
        "a: héllo\nb: ∅\nc: 'ünï'\n",
    ],
)
def test_scalar_the_same_on_both_parsers_trees(text: str) -> None:
    fast, exact = (events.parse_chunk(text, 0, events.backend(p))[0] for p in ("fast", "exact"))
    got = [tree.scalar(n) for n in _nodes(fast)]
    assert got == [tree.scalar(n) for n in _nodes(exact)]


def test_scalar_of_none_and_other_objects() -> None:
    assert tree.scalar(None) is None
    with pytest.raises(AttributeError):
        tree.scalar("not a node")  # type: ignore[arg-type]
    odd = Node("scalar", 0, 1, 5, None, None, None)  # a value no parser makes
    assert tree.scalar(odd) == "5"


def _items_reference(node: Node | None) -> list[Node]:
    """tree.items as it was first written: every item read through deref."""
    node = tree.deref(node)
    if node is None or node.kind != SEQ:
        return []
    return [n for n in (tree.deref(x) for x in node.value) if n is not None]


@pytest.mark.parametrize(
    "text",
    [
        "s: [a, {b: 1}, [c]]\n",  # no alias: the items as they are
        "a: &x 1\nm: &m {k: v}\ns: [*x, 2, *m, &y [3], *y]\n",  # aliased items
        "l: &l [a, b]\ns: *l\nt: [*l]\n",  # the sequence itself an alias
        "s: []\nt: {a: [1]}\nu: x\nv:\n",  # empty, a mapping, a scalar, null
    ],
)
def test_items_the_same_as_its_reference(text: str) -> None:
    """``items`` copies a sequence without an alias as it is, and reads through each
    alias otherwise: the same nodes, in the same order, as deref on every item."""
    for parser in ("fast", "exact"):
        root = events.parse_chunk(text, 0, events.backend(parser))[0]
        for node in [None, *_nodes(root)]:
            got = tree.items(node)
            assert [id(n) for n in got] == [id(n) for n in _items_reference(node)]
            if node is not None and node.kind == SEQ:
                assert got is not node.value  # a copy: a caller may change it


def test_get_on_the_corpus() -> None:
    checked = 0
    for f in sorted(CORPUS.rglob("*.yaml"))[:10]:
        for root in events.parse_chunk(f.read_text(), 0, events.backend("fast")):
            meta = tree.get(root, "metadata")
            assert meta is None or meta.kind == MAP
            checked += meta is not None
            assert tree.scalar(tree.get(root, "kind")) is not None
    assert checked > 10


# ------------------------------------------------------------------ Node in C


def test_the_node_class_is_the_c_one_and_tracked() -> None:
    """Tracked by the cyclic collector as the Python one is: its slots can be written
    from Python (native/_ctree.c; a cycle through one is freed: tests/native)."""
    import gc

    assert tree.Node is not tree._PyNode
    node = tree.Node(SEQ, 0, 5, [], True, None, None)
    assert gc.is_tracked(node)
    assert gc.is_tracked(tree._PyNode(SEQ, 0, 5, [], True, None, None))
    roots = events.parse_chunk("a: [b, {c: d}]\n", 0, events.backend("fast"))
    assert all(type(n) is tree.Node and gc.is_tracked(n) for n in _nodes(roots[0]))


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

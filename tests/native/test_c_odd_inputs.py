"""The C helpers of native/_ctree.c on what a parser never makes: Nodes whose slots were
never filled, entries that are not (Node, Node) pairs, keys with Python-level __eq__ or
__hash__. None of it may crash the interpreter or read freed memory; each hands the
case back ("cannot tell" / the Python path), as an adversarial review found they did
not always do. And the one real input among them: aliases in a List's workloads."""

from __future__ import annotations

from typing import Any

import pytest
from conftest import run_cmhash

from cmhash.parse.tree import MAP, SCALAR, SEQ, Node, get

_ctree: Any = pytest.importorskip("cmhash.native._ctree")
K = (SCALAR, SEQ, MAP)


def S(value: str) -> Node:
    return Node(SCALAR, 0, 0, value, None, None, None)


def M(pairs: list[Any]) -> Node:
    return Node(MAP, 0, 0, pairs, False, None, None)


def unset(**slots: Any) -> Node:
    n = Node.__new__(Node)
    for name, value in slots.items():
        setattr(n, name, value)
    return n


@pytest.mark.parametrize(
    ("root", "text", "path"),
    [
        (unset(), "a: 1\n", ()),
        (M([(S("a"), unset(tag=None, anchor=None))]), "a: 1\n", ()),
        (M([(S("a"), unset(tag=None, anchor=None, kind=SCALAR, style='"'))]), 'a: "1"\n', ()),
        (
            M([(S("metadata"), M([(S("annotations"), M([5]))]))]),
            'metadata:\n  annotations:\n    k: "v"\n',
            (),
        ),
        (M([(12345, S("x"))]), "a: x\n", ("spec",)),
    ],
)
def test_check_edit_on_nodes_no_parser_makes(root: Node, text: str, path: tuple[str, ...]) -> None:
    assert _ctree.check_edit(root, text, Node, K, path, "k", "v") is None


def test_check_edit_leaves_our_key_twice_to_verify_py() -> None:
    """Two old values under our key is a duplicate key: verify.py names it (the walk
    used to drop both and accept)."""
    old = M([(S("metadata"), M([(S("annotations"), M([(S("k"), S("a")), (S("k"), S("b"))]))]))])
    new = 'metadata:\n  annotations:\n    k: "v"\n'
    assert _ctree.check_edit(old, new, Node, K, (), "k", "v") is None
    once = M([(S("metadata"), M([(S("annotations"), M([(S("k"), S("a"))]))]))])
    assert _ctree.check_edit(once, new, Node, K, (), "k", "v") is True


def test_get_with_a_key_that_is_not_a_str() -> None:
    root = _ctree.build("".join(f"k{i}: {{x: {i}}}\n" for i in range(40)), 0, Node, K, 100, 10**6)
    node = root[0]

    class Frees:
        def __hash__(self) -> int:
            return hash("k7")

        def __eq__(self, other: object) -> bool:
            node._dict = None
            node.value = None
            return True

    found = get(node, Frees())  # type: ignore[arg-type]
    assert found is None or isinstance(found, Node)
    node2 = _ctree.build("a: 1\n", 0, Node, K, 100, 10**6)[0]
    assert get(node2, "a") is node2.value[0][1]


LIST = """\
apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: ConfigMap
  metadata: &ref {name: app-config}
  data: {a: "1"}
- apiVersion: v1
  kind: ConfigMap
  metadata: {name: other}
  data: {a: "1"}
- apiVersion: apps/v1
  kind: Deployment
  metadata: {name: web}
  spec:
    template:
      spec:
        containers: &cs
        - name: a
          envFrom:
          - configMapRef: {name: other}
          - configMapRef: *ref
- apiVersion: apps/v1
  kind: Deployment
  metadata: {name: web2}
  spec:
    template:
      spec:
        containers: *cs
"""


def test_aliases_shared_by_a_lists_workloads() -> None:
    """The reference-site walk in C recorded an alias node at a site instead of what it
    repeats, once entries() had indexed the aliased mapping (the second workload): web2
    lost its reference to app-config and got another checksum than with CMHASH_CTREE=0."""
    with_c = run_cmhash(["explain", "--no-config", "--format", "json", "-"], stdin=LIST.encode())
    without = run_cmhash(
        ["explain", "--no-config", "--format", "json", "-"],
        stdin=LIST.encode(),
        env={"CMHASH_CTREE": "0"},
    )
    assert with_c.code == without.code
    assert with_c.stdout == without.stdout
    assert with_c.stdout.count(b'"name": "app-config"') >= 3  # the object, and both uses

"""The self-check must catch any change beyond our annotation (exit 3, never silent)."""

from __future__ import annotations

import pytest
from conftest import run_cmhash

from cmhash.errors import NodeError
from cmhash.kinds import DEFAULT_TABLE
from cmhash.source import SourceText
from cmhash.verify import verify_edits
from cmhash.yamltree import backend, parse_chunk, same_tree

DEP = ("apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: app\nspec:\n  template:\n"
       "    metadata:\n      labels: {app: a}\n    spec:\n      containers:\n      - name: m\n")
V = "f" * 64
GOOD = DEP.replace("      labels:", f'      annotations:\n        k/x: "{V}"\n      labels:')
KIND = DEFAULT_TABLE.lookup("apps/v1", "Deployment")


def check(old: str, new: str, value: str = V) -> None:
    be = backend("fast")
    src = SourceText("t.yaml", old)
    assert KIND is not None
    verify_edits(src, 0, 0, parse_chunk(old, 0, be), new, [(0, KIND, value)], "k/x", be)


def test_accepts_the_planned_edit() -> None:
    check(DEP, GOOD)


@pytest.mark.parametrize("new", [
    GOOD.replace("name: m", "name: n"),                     # another value changed
    GOOD.replace("name: m", "name: 'm'").replace("{app: a}", "{app: 'true'}"),  # plain -> quoted
    GOOD.replace("  name: app\n", "  name: app\n  extra: 1\n"),  # a key added
    GOOD.replace("      - name: m\n", ""),                  # a list item removed
    GOOD.replace('k/x: "', 'k/x: "0'),                      # not the planned value
    GOOD.replace(f'"{V}"', V),                              # value not double-quoted
    GOOD.replace("        k/x", "        other: o\n        k/x"),  # a second annotation
])
def test_rejects_anything_else(new: str) -> None:
    with pytest.raises(NodeError):
        check(DEP, new)


def test_same_tree_compares_tags_anchors_and_aliases() -> None:
    be = backend("fast")
    (a,) = parse_chunk("x: &a 1\ny: *a\n", 0, be)
    (b,) = parse_chunk("x: &b 1\ny: *b\n", 0, be)
    (c,) = parse_chunk("x: !!str 1\ny: 1\n", 0, be)
    (d,) = parse_chunk("{x: &a 1, y: *a}", 0, be)  # flow vs block style is not a difference
    assert not same_tree(a, b, set(), set())
    assert not same_tree(a, c, set(), set())
    assert same_tree(a, d, set(), set())


def test_failed_self_check_exits_3(monkeypatch: pytest.MonkeyPatch) -> None:
    import cmhash.edit

    real = cmhash.edit._q
    monkeypatch.setattr(cmhash.edit, "_q", lambda s: real(s) + " # }")  # a corrupting edit
    stream = (b"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata: {a: b}\n---\n"
              b"apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\nspec:\n  template:\n"
              b"    metadata: {labels: {a: b}}\n    spec:\n      containers:\n"
              b"      - envFrom: [{configMapRef: {name: c}}]\n")
    res = run_cmhash(["--no-config"], stdin=stream)
    assert res.code == 3 and res.stdout == b""
    assert "self-check failed" in res.stderr

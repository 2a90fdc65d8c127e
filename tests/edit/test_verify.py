"""The self-check must catch any change beyond our annotation (exit 3, never silent)."""

from __future__ import annotations

import pytest
from conftest import run_cmhash

from cmhash.edit.verify import verify_edits
from cmhash.errors import NodeError
from cmhash.knowledge.kinds import DEFAULT_TABLE
from cmhash.parse.events import backend, parse_chunk
from cmhash.read.source import SourceText

DEP = (
    "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: app\nspec:\n  template:\n"
    "    metadata:\n      labels: {app: a}\n    spec:\n      containers:\n      - name: m\n"
)
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


@pytest.mark.parametrize(
    "new",
    [
        GOOD.replace("name: m", "name: n"),  # another value changed
        GOOD.replace("name: m", "name: 'm'").replace(
            "{app: a}", "{app: 'true'}"
        ),  # plain -> quoted
        GOOD.replace("  name: app\n", "  name: app\n  extra: 1\n"),  # a key added
        GOOD.replace("      - name: m\n", ""),  # a list item removed
        GOOD.replace('k/x: "', 'k/x: "0'),  # not the planned value
        GOOD.replace(f'"{V}"', V),  # value not double-quoted
        GOOD.replace("        k/x", "        other: o\n        k/x"),  # a second annotation
    ],
)
def test_rejects_anything_else(new: str) -> None:
    with pytest.raises(NodeError):
        check(DEP, new)


def _annotated(doc: str) -> str:
    return doc.replace("      labels:", f'      annotations:\n        k/x: "{V}"\n      labels:')


ALIASED = DEP.replace("{app: a}", "&a {app: a}") + "  x: *a\n"


def test_compares_tags_anchors_and_aliases_not_flow_style() -> None:
    check(ALIASED, _annotated(ALIASED))
    with pytest.raises(NodeError):  # anchor and alias renamed
        check(ALIASED, _annotated(ALIASED).replace("&a", "&b").replace("*a", "*b"))
    with pytest.raises(NodeError):  # a tag added
        check(DEP, GOOD.replace("{app: a}", "{app: !!str a}"))
    # flow or block is style, not content
    check(DEP, GOOD.replace("labels: {app: a}", "labels:\n        app: a"))


def test_failed_self_check_exits_3(monkeypatch: pytest.MonkeyPatch) -> None:
    import cmhash.edit.splice

    real = cmhash.edit.splice._q
    monkeypatch.setattr(cmhash.edit.splice, "_q", lambda s: real(s) + " # }")  # a corrupting edit
    stream = (
        b"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata: {a: b}\n---\n"
        b"apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\nspec:\n  template:\n"
        b"    metadata: {labels: {a: b}}\n    spec:\n      containers:\n"
        b"      - envFrom: [{configMapRef: {name: c}}]\n"
    )
    res = run_cmhash(["--no-config"], stdin=stream)
    assert res.code == 3 and res.stdout == b""
    assert "self-check failed" in res.stderr
    # explain and report splice nothing, but check the same edits: they fail alike
    for args in (["explain", "--no-config", "-"], ["report", "--no-config", "/dev/null", "-"]):
        shown = run_cmhash(args, stdin=stream)
        assert shown.code == 3 and shown.stdout == b"", args
        assert "self-check failed" in shown.stderr

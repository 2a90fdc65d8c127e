"""The self-check on C-built trees (write/treecheck.py): it accepts exactly the original
plus our annotation, hands anything else to verify.py, and never accepts an edited
text that verify.py refuses."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_cverify import CASES, DEPLOYMENT, KEY, MUTATIONS, POD, V, doc

from cmhash.analyze.kinds import DEFAULT_TABLE, WorkloadKind
from cmhash.errors import NodeError
from cmhash.parse import events
from cmhash.read.source import SourceText
from cmhash.write import treecheck
from cmhash.write.verify import verify_edits

pytest.importorskip("cmhash.parse._ctree")

BE = events.backend("fast")
CRONJOB = DEFAULT_TABLE.lookup("batch/v1", "CronJob")


def check(old: str, new: str, kind: WorkloadKind = DEPLOYMENT, value: str = V) -> bool | None:
    roots = events.parse_chunk(old, 0, BE)
    return treecheck.verify(roots, new, 0, kind, KEY, value, BE.ctree)


def python_accepts(old: str, new: str, kind: WorkloadKind = DEPLOYMENT) -> bool:
    roots = events.parse_chunk(old, 0, BE)
    try:
        verify_edits(SourceText("x", old), 0, 0, roots, new, [(0, kind, V)], KEY, BE)
    except NodeError:
        return False
    return True


@pytest.mark.parametrize(("old", "new"), CASES)
def test_accepts_our_annotation(old: str, new: str) -> None:
    assert check(doc(old), doc(new)) is True
    assert python_accepts(doc(old), doc(new))


def test_a_pod_and_a_cronjob() -> None:
    pod = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\nspec: {}\n"
    edited = pod.replace("  name: p\n", f'  annotations:\n    {KEY}: "{V}"\n  name: p\n')
    assert check(pod, edited, POD) is True
    cron = (
        "apiVersion: batch/v1\nkind: CronJob\nmetadata:\n  name: c\nspec:\n"
        "  schedule: '*/5 * * * *'\n  jobTemplate:\n    spec:\n      template:\n"
        "        spec: {}\n"
    )
    edited = cron.replace(
        "      template:\n",
        f'      template:\n        metadata:\n          annotations:\n            {KEY}: "{V}"\n',
    )
    assert check(cron, edited, CRONJOB) is True
    assert check(cron, edited.replace("*/5", "*/6"), CRONJOB) is None


@pytest.mark.parametrize(
    "mutation",
    [
        *MUTATIONS,
        ("labels: {a: b}", "labels:\n        a: b"),  # block instead of flow
        ("kind: Deployment", "kind: Deployment\nextra: 1"),  # a new top-level key
        ("spec: {}", "spec: {x: 1}"),  # the pod spec
        ("    spec: {}", "    spec: {}\n    extra: 1"),  # the template
        (f'"{V}"\n', f'"{V}"\n        more: x\n'),  # a second annotation in the new level
        (f'"{V}"\n', f'"{V}"\n        {KEY}: "{V}"\n'),  # ours twice
        (f'"{V}"\n', f'"{V}"\n      name: n\n'),  # a second entry in the new metadata
    ],
)
def test_anything_else_is_not_accepted(mutation: tuple[str, str]) -> None:
    old, new = CASES[1]
    before, after = mutation
    edited = doc(new).replace(before, after, 1)
    assert edited != doc(new)
    assert check(doc(old), edited) is None


def test_wrong_value_or_style_of_ours() -> None:
    old, new = CASES[0]
    assert check(doc(old), doc(new), value="b" * 64) is None
    assert check(doc(old), doc(new).replace(f'"{V}"', f"'{V}'")) is None
    assert check(doc(old), doc(new).replace(f'"{V}"', V)) is None


def test_what_it_hands_to_verify_py() -> None:
    old, new = CASES[0]
    anchored = doc(new).replace("containers: []", "containers: &c []")
    assert check(doc(old).replace("containers: []", "containers: &c []"), anchored) is None
    assert check(doc("    metadata:\n    spec: {}\n"), doc(new)) is None  # null metadata
    assert check(doc(old), "a: [b") is None  # no parse
    assert check(doc(old), doc(new) + "---\nx: 1\n") is None  # two documents
    dup = doc(new).replace("  template:\n", "  template:\n    spec: 1\n", 1)
    assert check(doc(old), dup) is None  # a duplicate key: verify.py names it


def test_without_the_c_builder_it_does_not_decide(monkeypatch: pytest.MonkeyPatch) -> None:
    old, new = CASES[0]
    monkeypatch.setattr(BE, "ctree", None)
    assert check(doc(old), doc(new)) is None


_EDITS = st.tuples(st.integers(0, 10_000), st.sampled_from(["", "a", " ", "\n", "'", '"', "{"]))


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(CASES), st.lists(_EDITS, min_size=1, max_size=3))
def test_never_accepts_what_verify_py_refuses(
    case: tuple[str, str], edits: list[tuple[int, str]]
) -> None:
    old, new = doc(case[0]), doc(case[1])
    for at, text in edits:  # replace one character, delete it, or insert one
        at %= len(new)
        new = new[:at] + text + new[at + (1 if text != "a" else 0) :]
    if check(old, new) is True:
        assert python_accepts(old, new), new


# documents that differ in one way each: value, style, tag, anchor, kind, order, length,
# flow/block, aliases (these take the event path: alias nodes in the tree)
_VARIANTS = [
    "a: 1\nb: [x, y]\n",
    "a: 1\nb: [x, 'y']\n",
    'a: 1\nb: [x, "y"]\n',
    "a: 1\nb: [x, y, z]\n",
    "a: 1\nb: [x]\n",
    "a: 1\nb:\n- x\n- y\n",
    "a: '1'\nb: [x, y]\n",
    "a: !!str 1\nb: [x, y]\n",
    "a: &n 1\nb: [x, y]\n",
    "a: &n 1\nb: [*n, y]\n",
    "a: &n 1\nb: [*n, *n]\n",
    "b: [x, y]\na: 1\n",
    "a: 1\nb: {x: y}\n",
    "a: 1\nb: {x: z}\n",
    "a: 1\nb: {x: y, z: w}\n",
    "a: 1\nb:\n  x: y\n",
    "a: |\n  1\nb: [x, y]\n",
    "a: >\n  1\nb: [x, y]\n",
    "a: 1\nb: [x, y]\nc:\n",
    "a: 1\nb: [x, y]\nc: null\n",
    "a: 1\nb: [[x], y]\n",
    "a: 1\nb: [[x, y]]\n",
    "? [k]\n: 1\nb: [x, y]\n",
    "a: 1\n? [k]\n: [x, y]\n",
    "a: ü\nb: [x, y]\n",
]


def _pairs(text: str) -> list[tuple[treecheck.Node, treecheck.Node]]:
    roots = events.parse_chunk(text, 0, BE)
    pairs: list[tuple[treecheck.Node, treecheck.Node]] = roots[0].value
    return pairs


@pytest.mark.parametrize("a", _VARIANTS)
def test_the_c_tree_comparison_is_the_python_one(a: str) -> None:
    """parse/_ctree.c's same_pairs against treecheck._same_pairs, its reference, on every
    pair of variants (each equal to itself, parsed twice: different offsets)."""
    same = events.ctree_same_pairs()
    assert same is not None
    for b in _VARIANTS:
        pa, pb = _pairs(a), _pairs(b)
        expected = treecheck._same_pairs(pa, pb)
        assert same(pa, pb) is expected, (a, b)
        assert expected is (a == b) or "*n" in a + b, (a, b)  # an alias is never the same


def test_the_c_tree_comparison_on_the_corpus() -> None:
    from conftest import ROOT

    same = events.ctree_same_pairs()
    assert same is not None
    texts = [p.read_text() for p in sorted((ROOT / "tests" / "corpus").rglob("*.yaml"))[:20]]
    docs = [r for t in texts for r in events.parse_chunk(t, 0, BE) if r.kind == "map"]
    assert len(docs) > 20
    for a, b in zip(docs, docs[1:] + docs[:1], strict=True):
        assert same(a.value, a.value) is True
        assert same(a.value, b.value) is treecheck._same_pairs(a.value, b.value)


def test_the_c_tree_comparison_refuses_what_is_not_a_tree() -> None:
    same = events.ctree_same_pairs()
    assert same is not None
    pairs = _pairs("a: 1\n")
    with pytest.raises(TypeError):
        same(pairs, [("a", "1")])  # type: ignore[list-item]
    with pytest.raises(TypeError):
        same(pairs, "a")  # type: ignore[arg-type]
    assert same([], []) is True
    deep = "a: " + "[" * 900 + "]" * 900 + "\n"
    assert same(_pairs(deep), _pairs(deep)) is True

"""The self-check in C (edit/treecheck.py, native/_ctree.c's check_edit): it accepts
exactly the original plus our annotation, hands anything else to verify.py, and never
accepts an edited text that verify.py refuses."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from manifests import stops_on_a_signal
from test_cverify import CASES, DEPLOYMENT, KEY, MUTATIONS, POD, V, doc

from cmhash.edit import treecheck
from cmhash.edit.verify import verify_edits
from cmhash.errors import NodeError
from cmhash.knowledge.kinds import DEFAULT_TABLE, WorkloadKind
from cmhash.parse import backends, events
from cmhash.read.source import SourceText

pytest.importorskip("cmhash.native._ctree")

BE = events.backend("fast")
CRONJOB = DEFAULT_TABLE.lookup("batch/v1", "CronJob")


CHECK = backends.ctree_check_edit()


def check(old: str, new: str, kind: WorkloadKind = DEPLOYMENT, value: str = V) -> bool | None:
    roots = events.parse_chunk(old, 0, BE)
    return treecheck.verify(roots, new, kind, KEY, value, CHECK)


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


def test_without_the_c_builder_it_does_not_decide() -> None:
    """The fast backend carries the C walk; the exact one (ruamel's trees) does not, so
    its edits always go to verify.py."""
    assert BE.check_edit is CHECK is not None
    assert events.backend("exact").check_edit is None
    old, new = CASES[0]
    roots = events.parse_chunk(doc(old), 0, BE)
    assert treecheck.verify(roots, doc(new), DEPLOYMENT, KEY, V, None) is None
    assert treecheck.verify(roots, doc(new), DEPLOYMENT, KEY, V, BE.check_edit) is True


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


_TOKENS = [
    f"{KEY}: ",
    f'"{V}"',
    "metadata:",
    "annotations:",
    "\n    ",
    "\n      ",
    "\n        ",
    ": ",
    "- ",
    "{",
    "}",
    ", ",
    "&a ",
    "*a",
    "!!str ",
    "'",
    "# c",
    "---\n",
]


@settings(max_examples=500, deadline=None)
@given(
    st.sampled_from(CASES),
    st.lists(
        st.tuples(st.integers(0, 10_000), st.sampled_from(_TOKENS), st.booleans()), max_size=3
    ),
)
def test_never_accepts_what_verify_py_refuses_yaml_tokens(
    case: tuple[str, str], edits: list[tuple[int, str, bool]]
) -> None:
    """Edits that move YAML's own pieces (keys, our key and value, indentation, flow
    brackets, anchors, tags): whatever the walk accepts, verify.py accepts."""
    old, new = doc(case[0]), doc(case[1])
    for at, token, cut in edits:  # insert a token, or cut as many characters
        at %= len(new)
        new = new[:at] + new[at + len(token) :] if cut else new[:at] + token + new[at:]
    if check(old, new) is True:
        assert python_accepts(old, new), new
    elif not edits:
        raise AssertionError("the unedited case must pass")


# values that differ in one way each: value, style, tag, anchor, kind, order, length,
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
    'a: "\\u00fc"\nb: [x, y]\n',
]


def _pod(variant: str, annotated: bool) -> str:
    body = "".join(f"  {line}\n" for line in variant.splitlines())
    ann = f'  annotations:\n    {KEY}: "{V}"\n' if annotated else ""
    return f"apiVersion: v1\nkind: Pod\nmetadata:\n{ann}  name: p\nspec:\n{body}"


@pytest.mark.parametrize("a", _VARIANTS)
def test_the_event_walk_on_every_pair_of_variants(a: str) -> None:
    """A pod spec written one way, edited to another: the walk accepts only the same
    spec, and agrees with verify.py whenever it accepts."""
    for b in _VARIANTS:
        old, new = _pod(a, False), _pod(b, True)
        got = check(old, new, POD)
        plain = "&" not in a and "!" not in a  # anchors and tags: verify.py decides
        assert got is (True if a == b and plain else None), (a, b)
        if got:
            assert python_accepts(old, new, POD), (a, b)


def _c_check(old: str, new: str, kind: WorkloadKind = DEPLOYMENT) -> bool | None:
    c = backends.ctree_check_edit()
    assert c is not None
    roots = events.parse_chunk(old, 0, BE)
    return c(roots[0], new, kind.template_path, KEY, V)


def test_the_event_walk_keeps_keys_in_place() -> None:
    """Ours, and a level the edit created, may be anywhere in their mapping; every other
    key stays where it was (verify.py refuses a moved key too)."""
    old = doc("    metadata:\n      labels: {a: b}\n    spec: {}\n")
    moved = doc(f'    spec: {{}}\n    metadata:\n      annotations: {{{KEY}: "{V}"}}\n')
    moved = moved.replace("      annotations", "      labels: {a: b}\n      annotations")
    assert _c_check(old, moved) is None
    assert not python_accepts(old, moved)


@pytest.mark.parametrize("where", ["first", "last"])
def test_the_event_walk_takes_created_levels_anywhere(where: str) -> None:
    old = doc("    spec: {}\n    x: 1\n")
    meta = f'    metadata:\n      annotations:\n        {KEY}: "{V}"\n'
    new = doc(
        meta + "    spec: {}\n    x: 1\n" if where == "first" else "    spec: {}\n    x: 1\n" + meta
    )
    assert _c_check(old, new) is True
    old = doc("    metadata:\n      a: 1\n      b: 2\n    spec: {}\n")
    ann = f'      annotations: {{"{KEY}": "{V}"}}\n'
    at = "      a: 1\n" if where == "first" else "      b: 2\n"
    assert _c_check(old, old.replace(at, at + ann)) is True
    assert _c_check(old, old.replace(at, at + ann + ann)) is None  # created twice


def test_the_event_walk_on_a_pod_and_non_ascii_values() -> None:
    pod = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n  labels: {é: ü}\nspec: {x: 'ß'}\n"
    edited = pod.replace("  name: p\n", f'  annotations:\n    {KEY}: "{V}"\n  name: p\n')
    assert _c_check(pod, edited, POD) is True
    assert _c_check(pod, edited.replace("ß", "ss"), POD) is None
    assert _c_check(pod, edited.replace("ü", "u"), POD) is None


def test_the_event_walk_refuses_what_is_not_plain() -> None:
    old, new = CASES[1]
    assert _c_check(doc(old), doc(new).replace("labels: {a: b}", "labels: !!map {a: b}")) is None
    assert _c_check(doc(old), doc(new).replace("labels: {a: b}", "labels: &l {a: b}")) is None
    assert _c_check(doc(old), doc(new) + "...\n---\nx: 1\n") is None
    assert _c_check(doc(old), doc(new)[:-5]) is None  # cut short
    assert _c_check(doc(old), "") is None
    assert _c_check(doc(old), "[a, b]\n") is None


def test_the_event_walk_lets_signal_handlers_run() -> None:
    """A handler that raises stops a long walk (signals are checked every 4,096 events,
    as in build()): cmhash's SIGTERM/SIGHUP handlers and Ctrl-C do not wait for it."""
    items = "        - a\n" * 1_000_000
    old = doc("    metadata: {}\n    spec:\n      containers:\n" + items)
    new = old.replace("    metadata: {}\n", f'    metadata: {{annotations: {{{KEY}: "{V}"}}}}\n')
    roots = events.parse_chunk(old, 0, BE)
    c = backends.ctree_check_edit()
    assert c is not None
    assert c(roots[0], new, DEPLOYMENT.template_path, KEY, V) is True
    taken, full = stops_on_a_signal(lambda: c(roots[0], new, DEPLOYMENT.template_path, KEY, V))
    assert taken < full / 2 + 0.05, f"the walk went on for {taken:.2f} s of {full:.2f} s"

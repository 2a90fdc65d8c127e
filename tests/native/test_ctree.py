"""The C tree builder (native/_ctree.c) against the Python builder of parse/builder.py.

Both read libyaml's events over the same text; the C one makes the tree nodes directly.
For every text, the C builder either hands the text back (``None``: events.py parses it
on its own path) or returns exactly the tree the Python builder makes, node for node:
kinds, offsets, values, styles, tags, anchors. It must never accept a text the Python
path refuses. The common case must not be handed back, or the speed is gone.
"""

from __future__ import annotations

import gc
import os
import subprocess
import sys
import tracemalloc
import weakref
from pathlib import Path
from typing import Any

import pytest
from conftest import CORPUS, IN_CI, ROOT, SHARED, run_cmhash
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from manifests import Stream, Style, big_stream, render, stops_on_a_signal, streams, styles
from test_bad_inputs import CATALOGUE

from cmhash.errors import NodeError
from cmhash.parse import backends, builder, events, tree
from cmhash.parse.tree import MAP, MAX_DEPTH, MAX_SCALAR, SCALAR, SEQ, Node, entries

try:
    from cmhash.native import _ctree  # type: ignore[attr-defined]
except ImportError:  # pragma: no cover - depends on the install
    if IN_CI:
        raise  # CI installs a compiler and libyaml-dev: the extension must be there
    pytest.skip("the C tree builder was not compiled", allow_module_level=True)

KINDS = (SCALAR, SEQ, MAP)


def _python_backend() -> backends.Backend:
    """The Python builder over PyYAML's libyaml events, the C builder's reference (the
    fast backend's own events are ruamel's when PyYAML's libyaml is another release)."""
    be = events.backend("fast")
    assert be.name == "fast" and be.ctree is not None
    parts = backends.libyaml_parts()
    assert parts is not None, "PyYAML without libyaml"
    return backends.Backend("fast", lambda: parts)


PY = _python_backend()


def _index(node: Node) -> Any:
    """A mapping's key index: the one the C builder made, else what tree.entries()
    makes (or refuses) on first read. The C one must be exactly entries()'s."""
    try:
        index = node._dict if node._dict is not None else entries(node)
    except NodeError as exc:
        return ("refused", exc.message)
    return [(name, k.start, v.start) for name, (k, v) in index.items()]


def _dump(node: Node) -> Any:
    value: Any = node.value
    index = None
    if node.kind == MAP:
        value = [(_dump(k), _dump(v)) for k, v in value]
        index = _index(node)
    elif node.kind == SEQ:
        value = [_dump(x) for x in value]
    return (node.kind, node.start, node.end, value, node.style, node.tag, node.anchor, index)


def c_build(text: str, base: int = 0) -> list[Node] | None:
    built: list[Node] | None = _ctree.build(text, base, Node, KINDS, MAX_DEPTH, MAX_SCALAR)
    return built


def same(text: str, base: int = 0) -> bool:
    """Assert the two builders agree on ``text``; True when C built it itself. Both on
    libyaml's events: not parse_chunk, which sends a text libyaml misreads
    (parse/libyaml.py: ``?:``, a tab) to the reference parser before either builder."""
    built = c_build(text, base)
    try:
        expected = [_dump(r) for r in events._parse_fast(text, base, PY)]
    except builder.Misread:  # a single-pair flow mapping: handed back by C too
        assert built is None, f"C built a single-pair flow mapping: {text[:200]!r}"
        return False
    except (NodeError, UnicodeEncodeError):  # (lone surrogates: never out of a decoder)
        assert built is None, f"C accepted what the Python path refuses: {text[:200]!r}"
        return False
    if built is None:
        return False
    assert [_dump(r) for r in built] == expected, text[:200]
    return True


def test_the_fast_backend_uses_it(monkeypatch: pytest.MonkeyPatch) -> None:
    assert events.ctree_available()
    be = events.backend("fast")
    calls: list[str] = []

    build = be.ctree
    assert build is not None

    def spy(text: str, base: int) -> list[Node] | None:
        calls.append(text)
        return build(text, base)

    monkeypatch.setattr(be, "ctree", spy)
    roots = events.parse_chunk("a: [b]\n", 7, be)
    assert calls == ["a: [b]\n"]
    assert type(roots) is events.Roots and not roots.aliased
    assert [_dump(r) for r in roots] == [_dump(r) for r in events.parse_chunk("a: [b]\n", 7, PY)]
    # (which libyaml it links is not pinned: tests/parse/test_libyaml.py holds every path to
    # the same reading whichever libyaml builds it or ships in PyYAML)
    assert _ctree.LIBYAML_VERSION.count(".") == 2


EDGES = [
    "",
    "# only a comment\n",
    "---\n...\n",
    "a: b\n",
    "\ufeffa: b\n",  # a byte-order mark is not counted in libyaml's offsets
    "\ufeff---\nx: [1, {a: b}]\n---\ny: z\n",
    "a: é\nb: 😀x\nc: 'ü'\n",  # offsets count characters, astral ones as one
    "a: b\r\nc: d\r\n",
    "a: b\rc: d\r",
    "a: b\x85c: d\n",
    "a: 'x\ty'\nb: \"\\t\\u00e9\"\n",
    "a: |\n  one\n  two\n\nb: >-\n  folded\n  text\n\nc: |+\n  keep\n\n",
    "a: |2\n   indented\n",
    "a: {b: [1, 2, {c: d}], e: []}\nf: {}\n",
    "- a\n- - b\n  - c\n- {d: e}\n",
    "a:\nb: ~\nc: null\n'': empty key\n",
    "%YAML 1.1\n---\na: b\n",
    "? a\n: b\n",
    "a: b\n---\nc: d\n---\n- e\n",
    "a: 'it''s'\nb: \"q\\\"x\"\n",
    "a: plain\n  continued\n  lines\n",
    "key: value # comment\n# between\nother: 1\n",
    # what the C builder hands back to events.py
    "a: &x 1\nb: *x\n",
    "a: !!str 1\n",
    "a: !custom 1\n",
    "a: ! 1\n",
    "!!map {a: b}\n",
    "x: &m {a: b}\ny:\n  <<: *m\n",
    "a: b\n c: d\n",
    "a: [b\n",
    "a: 'b\n",
    "a: b\n\tc: d\n",
    "a: b\x00\n",
    "a: \udc80\n",
    "a: *nowhere\n",
    "{a: b}}\n",
    "a:\n- b\n c\n",
]


@pytest.mark.parametrize("text", EDGES)
def test_edge_cases(text: str) -> None:
    same(text)
    same(text, base=1234)


def test_key_index_only_when_plain() -> None:
    (root,) = c_build("a: 1\nb: {c: 2}\n'<<': quoted\n") or []
    assert root._dict is not None and list(root._dict) == ["a", "b", "<<"]
    assert root._dict["b"][1]._dict is not None
    for text in ("a: 1\na: 2\n", "? [a]\n: 1\n", "a: 1\n<<: {b: 2}\n"):
        (root,) = c_build(text) or []
        assert root._dict is None  # left to entries(): it refuses or merges on first read
    for text in ("a: 1\na: 2\n", "? [a]\n: 1\n"):
        (root,) = c_build(text) or []
        with pytest.raises(NodeError):
            entries(root)


def test_mapping_keys_are_shared_values_are_not() -> None:
    """A short ASCII key is decoded once and shared between mappings (with its hash
    ready for the key index); values, long keys and other keys are their own objects,
    and every one reads as written."""
    long = "k" * 41
    text = f"name: name\nlabels: {{name: x, clé: y, {long}: z, '': e}}\n"
    for _ in range(2):
        assert same(text)
    (one,) = c_build(text) or []
    (two,) = c_build(text) or []
    k1, v1 = one.value[0]
    k2, v2 = two.value[0]
    assert k1.value == v1.value == "name" and k1.value is k2.value  # the key: shared
    assert v1.value is not v2.value  # a value: never kept
    inner1, inner2 = one.value[1][1].value, two.value[1][1].value
    assert [k.value for k, _ in inner1] == ["name", "clé", long, ""]
    assert inner1[0][0].value is k1.value
    assert inner1[1][0].value is not inner2[1][0].value  # not ASCII: not kept
    assert inner1[2][0].value is not inner2[2][0].value  # over 40 characters: not kept


def test_what_it_builds_and_what_it_hands_back() -> None:
    assert same("a: {b: [1, 'x', \"y\", |\n  z\n]}\n") is False  # a syntax error
    assert same("a: {b: [1, 'x', \"y\"]}\nc: |\n  z\n") is True
    assert same("\ufeffa: é\n") is True
    for text in ("a: &x 1\n", "a: *x\n", "a: !!str 1\n", "a: b\n c: d\n", "a: \udc80\n"):
        assert c_build(text) is None


def test_depth_limit() -> None:
    def nested(depth: int) -> str:
        return "[" * depth + "]" * depth + "\n"

    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(limit + 8 * MAX_DEPTH)  # for _dump and comparing (sanitizers: deeper)
    try:
        assert same(nested(MAX_DEPTH)) is True
    finally:
        sys.setrecursionlimit(limit)
    assert c_build(nested(MAX_DEPTH + 1)) is None
    with pytest.raises(NodeError, match=f"nesting deeper than {MAX_DEPTH} levels"):
        events.parse_chunk(nested(MAX_DEPTH + 1), 0, events.backend("fast"))


def test_scalar_limit() -> None:
    at = "a: " + "x" * MAX_SCALAR + "\n"
    assert same(at) is True
    over = "a: " + "x" * (MAX_SCALAR + 1) + "\n"
    assert c_build(over) is None
    with pytest.raises(NodeError, match="over the limit"):
        events.parse_chunk(over, 0, events.backend("fast"))


@pytest.mark.parametrize("entry", [b for b in CATALOGUE if isinstance(b.text, str)], ids=str)
def test_bad_input_catalogue(entry: Any) -> None:
    same(entry.text)


def test_vendored_corpus_and_goldens() -> None:
    files = sorted(CORPUS.rglob("*.yaml")) + sorted((ROOT / "tests" / "cases").rglob("*.yaml"))
    assert len(files) > 60
    built = 0
    for f in files:
        try:
            text = f.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        built += same(text)
    assert built > 0.8 * len(files)


@pytest.mark.shared("corpus")
def test_full_corpus() -> None:
    files = sorted((SHARED / "corpus").rglob("*.yaml"))
    assert files
    for f in files:
        same(f.read_bytes().decode("utf-8", errors="replace"))


@pytest.mark.shared("bench", "make_stream.py")
def test_benchmark_stream_is_built_in_c() -> None:
    text = subprocess.run(
        [sys.executable, str(SHARED / "bench" / "make_stream.py"), "60"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    docs = text.split("\n---\n")
    assert len(docs) > 240
    assert all(same(d) for d in docs)  # every document, CRDs included, built in C


@settings(suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large], deadline=None)
@given(streams(), styles)
def test_generated_streams(stream: Stream, style: Style) -> None:
    text = render(stream, style).decode()
    assert same(text) is ("&" not in text)  # anchors are handed back


# Text fuzzing: fragments YAML gives meaning to, in any order. Most results are errors or
# odd readings; the property is the same either way.
FRAGMENTS = [
    "a", "b", "é", "😀", " ", "  ", "\n", "\r\n", "\t", ":", ": ", "- ", "-", "?", "? ",
    ",", "[", "]", "{", "}", "'", '"', "\\", "|", ">", "|-", ">+", "#", " #", "&x", "*x",
    "!", "!!str ", "%", "---", "...", "~", "null", "1", "0x1", "<<", "@", "`", "\ufeff",
]  # fmt: skip


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(FRAGMENTS), max_size=40).map("".join))
def test_fuzzed_text(text: str) -> None:
    same(text)


def test_no_leak() -> None:
    """Built trees, handed-back texts and refused layouts free everything they made."""
    texts = [
        "a: {b: [1, 'x']}\nc: |\n  z\n",
        "a: &x 1\n",
        "a: [b\n",
        "[" * 50 + "]" * 50,
        'a:\n  b:\n    c: [d, {e: f}]\n  g: "h"\n' * 20,
    ]

    def rounds(n: int) -> None:
        for _ in range(n):
            for t in texts:
                c_build(t)

    rounds(50)
    gc.collect()
    tracemalloc.start()
    try:
        rounds(50)
        gc.collect()
        first = tracemalloc.get_traced_memory()[0]
        rounds(500)
        gc.collect()
        grown = tracemalloc.get_traced_memory()[0] - first
    finally:
        tracemalloc.stop()
    assert grown < 20_000, f"{grown} bytes kept after 500 rounds"


def test_refuses_a_node_class_it_cannot_fill() -> None:
    """Only its own Node: reading where a Python class keeps its slots takes CPython's
    private API (the member descriptors' offsets), which the extension does not use."""

    class NoSlots:
        pass

    class FewSlots:
        __slots__ = ("kind", "start")

    class Twin:  # Node's slots exactly, in Python
        __slots__ = ("_dict", "anchor", "end", "kind", "start", "style", "tag", "value")

    for cls in (NoSlots, FewSlots, Twin, tree._PyNode, int):
        with pytest.raises(TypeError, match="its own Node"):
            _ctree.build("a: b\n", 0, cls, KINDS, MAX_DEPTH, MAX_SCALAR)
    # and, refused, still fills Nodes right after
    assert same("a: {b: [c, 'd']}\n") is True


def test_whole_runs_are_the_same_without_it(monkeypatch: pytest.MonkeyPatch) -> None:
    files = [*sorted(CORPUS.rglob("*.yaml"))[:12], ROOT / "examples" / "app.yaml"]
    data = b"\n---\n".join(f.read_bytes() for f in files)
    args = ["--no-config", "-q", "--workers", "1", "-"]
    on = run_cmhash(args, stdin=data)
    monkeypatch.setitem(events._BACKENDS, "fast", PY)
    off = run_cmhash(args, stdin=data)
    assert (on.code, on.stdout, on.stderr) == (off.code, off.stdout, off.stderr)
    assert on.code == 0 and on.stdout


def test_without_it_a_note_under_verbose(tmp_path: Path) -> None:
    big = tmp_path / "big.yaml"
    big.write_bytes(big_stream(20000))

    def run(flag: str) -> subprocess.CompletedProcess[str]:
        env = {**os.environ, "CMHASH_CTREE": flag}
        cmd = [sys.executable, "-m", "cmhash", "--no-config", "-v", str(big)]
        return subprocess.run(cmd, capture_output=True, text=True, env=env, check=False)

    off, on = run("0"), run("1")
    assert off.returncode == on.returncode == 0
    assert "note: cmhash's C tree builder was not compiled at install" in off.stderr
    assert "C tree builder" not in on.stderr
    assert off.stdout == on.stdout


def test_hands_back_str_subclasses() -> None:
    class Text(str):
        pass

    assert c_build(Text("a: b\n")) is None  # PyYAML refuses them: so does events.py's path
    with pytest.raises(TypeError):
        events.parse_chunk(Text("a: b\n"), 0, PY)


def test_a_build_inside_a_build() -> None:
    """A finalizer run by the collector during a build may build too (or another cmhash
    thread may): each build comes out whole."""

    inner: list[list[Any] | None] = []

    class Trigger:
        def __init__(self) -> None:
            self.me = self  # a cycle: freed by the collector, inside the outer build

        def __del__(self) -> None:
            inner.append(_ctree.build("x: [y]\n", 0, Node, KINDS, MAX_DEPTH, MAX_SCALAR))

    threshold = gc.get_threshold()
    gc.enable()
    gc.set_threshold(50)
    try:
        for _ in range(20):
            Trigger()
        roots = c_build("- [a, b]\n" * 2000)
    finally:
        gc.set_threshold(*threshold)
    assert roots is not None and inner
    assert len(roots) == 1 and len(roots[0].value) == 2000
    assert all(built is not None and len(built) == 1 for built in inner)


def _all(node: Any) -> list[Any]:
    out, todo = [], [node]
    while todo:
        n = todo.pop()
        out.append(n)
        if n.kind == MAP:
            todo.extend(x for pair in n.value for x in pair)
        elif n.kind == SEQ:
            todo.extend(n.value)
    return out


def test_a_signal_interrupts_a_long_build() -> None:
    """Python's signal handlers run while a large document is being built (cmhash's
    SIGTERM/SIGHUP handlers and Ctrl-C must not wait for the end of the parse)."""
    text = "- a\n" * 1_500_000
    assert c_build(text) is not None
    taken, full = stops_on_a_signal(lambda: c_build(text))
    assert taken < full / 2, f"the build went on for {taken:.2f} s of {full:.2f} s"


def test_leaves_no_utf8_copy_on_the_text() -> None:
    """A chunk may be a whole file's text: non-ASCII text is encoded into a temporary,
    not into a UTF-8 copy kept on the str for the rest of the run."""
    text = "a: é\n" * 1000
    size = sys.getsizeof(text)
    assert c_build(text) is not None
    assert sys.getsizeof(text) == size


@pytest.mark.parametrize(
    "text",
    [
        "a: &x [*x, " + "y" * 5000 + "]\n",  # refused: a recursive alias
        "a: &x {b: *x, c: " + "y" * 5000 + "}\n",
        "a: &x [*x, " + "y" * 5000 + "]\nb: [\n",  # and then a syntax error
    ],
)
def test_a_refused_recursive_alias_leaves_nothing_behind(text: str) -> None:
    """A recursive alias closes a cycle, which the console script's process (the cyclic
    collector off) would keep: the event path lets the aliases go of their targets when
    it refuses."""
    be = events.backend("fast")

    def parse() -> None:
        with pytest.raises(NodeError):
            events.parse_chunk(text, 0, be)

    parse()
    gc.collect()
    tracemalloc.start()
    try:
        first = tracemalloc.get_traced_memory()[0]
        for _ in range(50):
            parse()
        gc.collect()
        grown = tracemalloc.get_traced_memory()[0] - first
    finally:
        tracemalloc.stop()
    assert grown < 50_000, f"{grown} bytes kept after 50 refusals"


class _Witness:
    """Something a weak reference can watch, to be put in a cycle."""


@pytest.mark.parametrize("slot", ["kind", "value", "style", "tag", "anchor", "_dict"])
@pytest.mark.parametrize("made", ["built", "constructed"])
def test_a_cycle_through_a_node_is_collected(slot: str, made: str) -> None:
    """The C Node's slots are writable from Python (the event builder writes them), so
    a cycle can run through a Node: the cyclic collector frees it, as any Python
    object's (Node was not tracked: such a cycle was never freed)."""
    if made == "built":
        roots = c_build("a: [b, {c: d}]\n")
        assert roots is not None
        node = roots[0]
    else:
        node = Node("scalar", 0, 1, "x", None, None, None)
    assert gc.is_tracked(node)
    witness = _Witness()
    watch = weakref.ref(witness)
    setattr(node, slot, [node, witness])
    del node, witness
    if made == "built":
        del roots
    gc.collect()
    assert watch() is None


def test_a_cycle_through_a_built_trees_lists_is_collected() -> None:
    """The same through the lists a built tree holds (its children, its key index)."""
    roots = c_build("a: [b, c]\nd: {e: f}\n")
    assert roots is not None
    witness = _Witness()
    watch = weakref.ref(witness)
    root = roots[0]
    seq = root.value[0][1]
    seq.value.append(root)  # a child list that holds the root
    root.value.append((witness, seq))
    entries(root)["w"] = (root, witness)  # its key index
    del roots, root, seq, witness
    gc.collect()
    assert watch() is None

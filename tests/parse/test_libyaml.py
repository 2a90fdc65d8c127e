"""Every path reads the same YAML whatever libyaml is installed (parse/libyaml.py).

Three readers: the C tree builder (native/_ctree.c, the system's libyaml), the event path
(PyYAML's libyaml: 0.2.5 in PyYAML 6.0.3, 0.2.6 in 6.0.4) and the reference (ruamel).
Where libyaml's releases differ (``[ ? ] ]``, the nesting limit), all three must give the
same tree or the same refusal, and cmhash's own limits must decide with cmhash's message.
None of these tests depends on which libyaml is installed; the slow one runs them under
both PyYAML releases.
"""

from __future__ import annotations

import copy
import itertools
import json
import random
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import IN_CI, ROOT, TESTS, run_cmhash

from cmhash.errors import NodeError
from cmhash.native import cext
from cmhash.parse import backends, events, libyaml
from cmhash.parse.tree import MAP, MAX_DEPTH, SEQ, Node

# Found by a differential run of PyYAML 6.0.3 against 6.0.4 over generated flow texts:
# every text the two libyaml releases read differently, and their neighbours.
SHAPES = [
    "k: [?]\n",
    "k: [? ]\n",
    "k: [ ? ]\n",
    "k: [?  ]\n",
    "k: [?]]\n",
    "k: [? ] ]\n",
    "k: [[?],]\n",
    "k: [[?]]\n",
    "k: [a, ?]\n",
    "k: [?aa,? ]\n",
    "k: [a? ,? ]\n",
    "k: {[? ],? }\n",
    "k: [ ?\n  ]\n",
    "k: [ ? # a comment\n  ]\n",
    "- [?]\n",
    "[? ] ]\n",
    # the same libyaml function in every release drops a ``,`` or ``:`` after ``?``,
    # and takes a flow collection as a key with nothing after its ``:``
    "k: [? :]\n",
    "k: [?::]\n",
    "k: [? ,:a]\n",
    "k: [?,: ]\n",
    "k: [? , a]\n",
    "k: [*x?]\n",
]
# A ``:`` right after a JSON-like key inside ``[...]``: every libyaml reads a single-pair
# mapping, ruamel refuses (found by the generated texts below); the events route them.
SINGLE_PAIRS = [
    "k: [[]:]\n",
    "k: [{}:]\n",
    "k: [[]:a]\n",
    "k: [{}:a]\n",
    'k: ["a":]\n',
    'k: ["a" :]\n',
    'k: ["a":a]\n',
    'k: ["a":"b"]\n',
    "k: ['a':]\n",
    "k: ['a':b]\n",
    'k: [?"a":]\n',
    'k: [x, "a":,]\n',
    "[[]:]\n",
    # read alike, routed all the same (a single-pair mapping in a flow sequence)
    "k: [a: b]\n",
    "k: [? a : b]\n",
    "k: [[]: a]\n",
    "\ufeffk: [a: b]\n",
]
# A tab where libyaml skips it or keeps it in a plain scalar and ruamel refuses it, and
# tabs both read alike: every text with a tab is routed (parse/libyaml.py).
TABS = [
    "k: v\t\n",
    "k: v\t# c\n",
    "k: [a]\t\n",
    "k: {a: b}\t\n",
    'k: "v"\t\n',
    "k: a\tb\n",
    "k: a \tb\n",
    "k: &x\tv\n",
    "k: [a \tb]\n",
    "k: [a\n\tb]\n",
    "k: a\n \tb\n",
    "k: {a:\tb}\n",
    "k: [a:\tb]\n",
    "k: {a\t: b}\n",
    "k: [a,\tb]\n",
    'k: "a\tb"\n',
    "k: |\n  \ta\n",
    "k:\tv\n",
    "\tk: v\n",
]
# NEL, LS, PS: line breaks in YAML 1.1 (libyaml), not in 1.2 (ruamel); routed too
BREAKS = [
    "k: a\u2028b\n",
    "k: a\x85b\n",
    "k: a\u2029b\n",
    "k: 'a\u2028b'\n",
    "k: [a\u2028b]\n",
    "k: |\n  a\u2028b\n",
    "a: b\nmetadata:\n  nam\x85e: x\n",
    "k:\n  - a\n\u2028 - b\n",
]
# An anchor or alias name right before a ``:``: libyaml's names are alphanumeric (``*x``
# then ``:``), YAML 1.2's take the ``:`` (``*x:``, undefined); routed (found by comparing
# both paths over generated documents)
NAMED = [
    "a: &x b\n*x: c\n",
    "a: &x b\nc: {*x: d}\n",
    "a: {&x: b}\n",
    "a: &x b\nc: [d, *x: e]\n",
    "- &x a\n- {*x: b}\n",
    # or ``?``, ``%``, ``@``, a backquote: the end of a name for libyaml, not for ruamel
    "k: *x?\n",
    "k: *x%- \n",
    "k: [*x@]\n",
    "k: *x`\n",
    "k: &y-?#c\n 'a'&x \n",
]
# A %YAML directive: ruamel reads the version it names (its 1.1 is not libyaml's);
# routed, and 1.0 or 1.3 are refused at the directive on every path
DIRECTIVES = [
    "%YAML 1.1\n---\nk: {? a ? b}\n",
    "%YAML 1.1\n---\nk: [a?b, {c?: d}]\n",
    "%YAML 1.2\n---\nk: {? a ? b}\n",
    "%YAML 1.3\n---\nk: v\n",
    "%YAML 1.0\n---\nk: v\n",
    "k: v\n...\n%YAML 1.1\n---\nk: {? a ? b}\n",
]
# What libyaml refuses and the reference reads (a ``:`` next to a flow indicator): the
# fast path asks the reference on a refusal, so both parsers agree here too.
REFUSED_BY_LIBYAML = ["k: {:}\n", "k: [:a]\n", "k: {a:}\n", "k: [::]\n", "k: {:a}\n"]


def _python(be_name: str = "fast") -> backends.Backend:
    """The fast path without the C tree builder: PyYAML's libyaml events (the fast
    backend's own take ruamel's when PyYAML's libyaml is another release than the C
    builder's: backends.py)."""
    parts = backends.libyaml_parts()
    if be_name != "fast" or parts is None:
        be = copy.copy(events.backend(be_name))
        be.ctree = None
        return be
    return backends.Backend("fast", lambda: parts)


def _dump(node: Node, offsets: bool = True) -> Any:
    value: Any = node.value
    if node.kind == MAP:
        value = [(_dump(k, offsets), _dump(v, offsets)) for k, v in value]
    elif node.kind == SEQ:
        value = [_dump(x, offsets) for x in value]
    where = (node.start, node.end) if offsets else ()
    return (node.kind, *where, value, node.style, node.tag, node.anchor)


def _read(text: str, be: backends.Backend, offsets: bool = True) -> Any:
    try:
        return [_dump(r, offsets) for r in events.parse_chunk(text, 0, be)]
    except NodeError as exc:
        return ("refused", exc.offset if "nesting" in exc.message else None)


def _distinct(readings: list[Any]) -> int:
    """How many different readings (trees nest up to MAX_DEPTH: no hashing, no JSON)."""
    return sum(1 for i, r in enumerate(readings) if all(r != q for q in readings[:i]))


def _paths() -> dict[str, backends.Backend]:
    return {
        "fast": events.backend("fast"),  # with the C tree builder when it was compiled
        "fast without C": _python(),
        "exact": events.backend("exact"),
    }


@pytest.mark.parametrize(
    "text", SHAPES + REFUSED_BY_LIBYAML + SINGLE_PAIRS + TABS + BREAKS + NAMED + DIRECTIVES
)
def test_every_path_reads_the_shapes_alike(text: str) -> None:
    routed = SHAPES + TABS + BREAKS + NAMED + DIRECTIVES
    assert libyaml.misread(text) == (text in routed)
    readings = {name: _read(text, be) for name, be in _paths().items()}
    assert _distinct(list(readings.values())) == 1, readings


@pytest.mark.parametrize("text", SINGLE_PAIRS + TABS + BREAKS + NAMED + DIRECTIVES)
def test_the_fast_path_gives_the_reference_verdict_and_message(text: str) -> None:
    """Where libyaml and ruamel disagreed, the fast path (with and without C) now reads
    what the exact path reads, or refuses with its message at its place."""

    def outcome(be: backends.Backend) -> Any:
        try:
            return ("read", [_dump(r) for r in events.parse_chunk(text, 0, be)])
        except NodeError as exc:
            return ("refused", exc.message, exc.offset)

    exact = outcome(events.backend("exact"))
    assert outcome(events.backend("fast")) == exact
    assert outcome(_python()) == exact


def test_a_routed_chunk_is_self_checked_by_the_reference() -> None:
    """A chunk the events sent to the reference parser says so: analyze/chunk.py's
    self-check then reads the edited text with the reference too."""
    for be in (events.backend("fast"), _python()):
        assert events.parse_chunk("k: [a: b]\n", 0, be).exact
        assert not events.parse_chunk("k: [{a: b}]\n", 0, be).exact
    assert not events.parse_chunk("k: [a: b]\n", 0, events.backend("exact")).exact


@pytest.mark.parametrize("text", ["k: [a: b]\n", "k: [{}:]\n", "- [x, ? a]\n"])
def test_single_pair_mappings_leave_the_c_builder(text: str) -> None:
    """libyaml's single-pair flow mappings go to the reference parser, from the C
    builder too; a flow sequence of flow mappings (JSON) stays in C."""
    be = events.backend("fast")
    if be.ctree is None:
        pytest.skip("the C tree builder was not compiled")
    assert be.ctree(text, 0) is None
    assert be.ctree('{"a": [{"b": "c"}, {"d": ["e"]}]}\n', 0) is not None
    assert be.ctree("\ufeffa: [{b: c}]\n", 0) is not None
    assert be.ctree("é: [ {b: c}]\n", 0) is not None
    assert libyaml.single_pair("[a: b]", 1, 1)
    assert libyaml.single_pair("[? a]", 1, 2)
    assert not libyaml.single_pair("[{a: b}]", 1, 2)
    assert not libyaml.single_pair("\ufeff[{a: b}]", 1, 2)


def test_a_misread_shape_never_reaches_the_c_builder(monkeypatch: pytest.MonkeyPatch) -> None:
    be = events.backend("fast")
    calls: list[str] = []
    if be.ctree is not None:
        build = be.ctree

        def spy(text: str, base: int) -> list[Node] | None:
            calls.append(text)
            return build(text, base)

        monkeypatch.setattr(be, "ctree", spy)
    with pytest.raises(NodeError):
        events.parse_chunk("k: [? ] ]\n", 0, be)  # libyaml 0.2.5 takes it
    assert events.parse_chunk("k: [ ? ]\n", 0, be)  # libyaml 0.2.5 refuses it
    events.parse_chunk("k: [a, b]\n", 0, be)
    assert calls == (["k: [a, b]\n"] if be.ctree is spy else [])


def test_misread_is_conservative_and_cheap() -> None:
    for text in (
        "a: b\n",
        "url: http://x/?q=1\n",
        "k: [a]\n",
        "k: a?b\n",
        "? x\n: y\n",
        "re: ^(?:a|b)$\n",
        "re: https?://x\n",
        '{"a":[1],"b":{"c":[]}}\n',
    ):
        assert not libyaml.misread(text), text
    # quoted or not, a false match only sends the chunk to the reference parser
    assert libyaml.misread('k: "a ?]"\n')
    for text in ("u: http://x/?a=1&b:2\n", "a: b*c:d\n", "v: ['*', a*]\n", "k: *x\n"):
        assert not libyaml.misread(text), text
    # no catastrophic backtracking on many comment marks
    assert not libyaml.misread("k: [?" + " #" * 5000 + "\n  x]\n")
    assert not libyaml.misread("k: caf\u00e9 \u2027 \u202f \U0001f600\n")


def _generated() -> list[str]:
    tokens = ["[", "]", "{", "}", "?", ":", ",", "a", " ", "? ", ": ", "\n  ", "#c\n "]
    tokens += ['"a"', "'a'", "\t", ":\t", "&x ", "\u2028", "\x85"]
    texts = {"".join(c) for n in range(1, 4) for c in itertools.product(tokens, repeat=n)}
    rng = random.Random(25027)
    texts |= {"".join(rng.choice(tokens) for _ in range(rng.randint(4, 8))) for _ in range(3000)}
    return sorted(t + "\n" for body in texts for t in (body, "k: " + body))


def test_the_c_builder_and_pyyaml_agree_on_generated_flow_text() -> None:
    """The C tree builder (system libyaml) never gives another tree than PyYAML's libyaml
    on a text that is not routed away from both: this fails when a libyaml release
    changes how a shape reads and parse/libyaml.py does not know it yet."""
    fast, python = events.backend("fast"), _python()
    if fast.ctree is None:
        pytest.skip("the C tree builder was not compiled")
    for text in _generated():
        if libyaml.misread(text):
            continue
        built = fast.ctree(text, 0)
        if built is None:
            continue
        assert [_dump(r) for r in built] == _read(text, python), repr(text)


@pytest.mark.parametrize(
    "step", [pytest.param(7, id="a seventh"), pytest.param(1, id="all", marks=pytest.mark.slow)]
)
def test_every_path_agrees_on_generated_flow_text(step: int) -> None:
    """The three paths give the same tree or all refuse, on every generated text. (Not
    the offsets: libyaml and ruamel place an empty scalar differently, one character
    apart; the C builder and PyYAML's libyaml are held to the same offsets above.)"""
    paths = list(_paths().values())
    for text in _generated()[::step]:
        readings = [_read(text, be, offsets=False) for be in paths]
        assert _distinct(readings) == 1, (text, readings)


def _block(depth: int) -> str:
    return "".join(" " * i + f"k{i}:\n" for i in range(depth - 1)) + " " * (depth - 1) + "k: v\n"


def _flow(depth: int) -> str:
    return "a: " + "[" * (depth - 1) + "]" * (depth - 1) + "\n"


@pytest.mark.parametrize("shape", [_block, _flow])
def test_depth_limit_is_cmhashs_on_every_path(shape: Any) -> None:
    """At MAX_DEPTH every path reads the document (libyaml 0.2.6 alone refuses a block
    one); one level more, every path refuses it with cmhash's message at the same
    place (0.2.6's own message was another)."""
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(limit + 4 * MAX_DEPTH)  # for _dump
    try:
        at = {name: _read(shape(MAX_DEPTH), be) for name, be in _paths().items()}
        assert _distinct(list(at.values())) == 1
    finally:
        sys.setrecursionlimit(limit)
    assert at["exact"][0] != "refused"
    over = shape(MAX_DEPTH + 1)
    found = set()
    for be in _paths().values():
        with pytest.raises(NodeError) as info:
            events.parse_chunk(over, 0, be)
        assert info.value.message == f"nesting deeper than {MAX_DEPTH} levels"
        found.add(info.value.offset)
    assert len(found) == 1


def test_a_libyaml_limit_below_ours_does_not_decide(monkeypatch: pytest.MonkeyPatch) -> None:
    """Whatever the installed libyaml's limit, cmhash's decides: simulated with an event
    source that refuses every text the way libyaml 0.2.6 refuses deep nesting."""
    be = _python()
    real = be.run

    def refusing(text: str) -> Any:
        raise be.error(problem="exceeded maximum nesting depth", context="while increasing")

    monkeypatch.setattr(be, "run", refusing)
    text = _flow(50)
    assert [_dump(r) for r in events.parse_chunk(text, 0, be)] == _read(text, _python("exact"))
    monkeypatch.setattr(be, "run", real)


def test_lifted_limit_is_restored() -> None:
    calls = libyaml._pyyaml_limit()
    if calls is None or calls[0]() < 0:
        with libyaml.lifted_limit() as lifted:
            assert not lifted
        return
    get, put = calls
    before = get()
    put(20)  # lower than any real document: libyaml 0.2.6 refuses 21 levels by itself
    try:
        assert [_dump(r) for r in events.parse_chunk(_flow(60), 0, _python())]
        assert get() == 20
        with libyaml.lifted_limit() as lifted:
            assert lifted and get() == libyaml.LIFTED
        assert get() == 20
    finally:
        put(before)


def test_the_cli_agrees_on_both_parsers(tmp_path: Path) -> None:
    """Through the command line: the shapes libyaml took and ruamel refuses are refused by
    both parsers, the ones libyaml refused are read by both, and a tab between tokens is
    read as a space by both (as libyaml and Kubernetes read it: parse/events.py separating_tab)."""
    deployment = (
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: d\n  labels:\n"
        "    x: {shape}\nspec:\n  template:\n    spec:\n      containers:\n      - name: c\n"
        "        envFrom:\n        - configMapRef:\n            name: cfg\n---\n"
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cfg\ndata:\n  k: v\n"
    )
    for shape, code in (
        ("[? ] ]", 2),
        ("[ ? ]", 0),
        ("[? , a]", 0),
        ("{:}", 0),
        ("[[]:]", 2),
        ('["a":b]', 2),
        ("[a: b]", 0),
        ("{a: b}\t", 0),
        ("v\t", 0),
        ("[a \tb]", 2),
        ("{a:\tb}", 0),
        ("&x [a, {*x: b}]", 2),
        ("{&x: b}", 0),
    ):
        path = tmp_path / "in.yaml"
        path.write_text(deployment.format(shape=shape))
        results = [run_cmhash(["--no-config", "--parser", p, str(path)]) for p in ("fast", "exact")]
        assert [r.code for r in results] == [code, code], (shape, results)
        assert results[0].stdout == results[1].stdout
        assert results[0].stderr == results[1].stderr  # the same file:line:col message
        if code == 2:
            assert f"{path}:6:" in results[0].stderr


@pytest.mark.parametrize("version", ["1.1", "1.3"])
def test_the_cli_agrees_under_a_yaml_directive(tmp_path: Path, version: str) -> None:
    """Under ``%YAML 1.1`` ruamel reads otherwise than libyaml (``{? a ? b}`` was exit 0
    on the fast path, 2 on the exact one); ``%YAML 1.3`` was an internal error (exit 3)."""
    path = tmp_path / "in.yaml"
    path.write_text(
        f"%YAML {version}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n"
        "  labels: {? a ? b}\ndata:\n  k: v\n"
    )
    for args in ([], ["--check"], ["explain", "--format", "json"]):
        fast, exact = (
            run_cmhash([*args, "--no-config", "--parser", p, str(path)]) for p in ("fast", "exact")
        )
        assert fast.code == exact.code == 2, (args, fast, exact)
        assert (fast.stdout, fast.stderr) == (exact.stdout, exact.stderr), args
        assert fast.stderr.startswith(f"cmhash: {path}:"), fast.stderr


@pytest.mark.parametrize(
    ("text", "where"),
    [
        ("data: !!seq &x [a]\n", "5:7"),
        ("data: !<tag:yaml.org,2002:seq> &x [a]\n", "5:7"),
        ("data:\n  a: !foo &x b\n", "6:6"),
    ],
)
def test_a_tag_then_an_anchor_is_placed_alike(tmp_path: Path, text: str, where: str) -> None:
    """A node with a tag, then an anchor: libyaml marks it at the tag, ruamel at the
    anchor (the message's column differed); both paths now place it at the tag."""
    path = tmp_path / "in.yaml"
    path.write_text("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n" + text)
    fast, exact = (run_cmhash(["--no-config", "--parser", p, str(path)]) for p in ("fast", "exact"))
    assert fast.code == exact.code == 2
    assert fast.stderr == exact.stderr
    assert fast.stderr.startswith(f"cmhash: {path}:{where}:"), fast.stderr


@pytest.mark.parametrize(
    "text",
    [
        "data:\n  a: |\n    \n      x\n",  # a blank line of 4 spaces, then 6
        "data:\n  a: >-\n     \n       x\n       y\n",
        "data:\n  a: |\n    \n      \n",  # blank lines only
        "data:\n  a: |\n      \n    x\n",  # longer first: refused, alike
    ],
)
def test_a_block_scalar_after_a_shorter_blank_line(tmp_path: Path, text: str) -> None:
    """ruamel refused a first blank line with fewer spaces than the next line ("more
    indented follow up line than first"), libyaml (and YAML 1.2, and kubectl) read it:
    exit 0 on the fast path, 2 on the exact one. Both read it now, as libyaml does."""
    path = tmp_path / "in.yaml"
    path.write_text(
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cfg\n" + text + "---\n"
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: d\nspec:\n  template:\n"
        "    spec:\n      containers:\n      - name: c\n        envFrom:\n"
        "        - configMapRef: {name: cfg}\n"
    )
    fast, exact = (run_cmhash(["--no-config", "--parser", p, str(path)]) for p in ("fast", "exact"))
    assert (fast.code, fast.stdout, fast.stderr) == (exact.code, exact.stdout, exact.stderr)
    assert fast.code == (2 if "      \n    x" in text else 0), fast.stderr


# Syntax errors both parsers refuse, which libyaml words otherwise (and places otherwise:
# the first two), found by comparing the two paths over mutated corpus documents: the
# fast path gives the reference's message at its place, inside a ConfigMap, a Secret or
# a workload, whatever the command.
SYNTAX_ERRORS = [
    ": z\n b: y\n",
    "a: x\n b: y\n   : z\n",
    "%.\n",
    "a: b: c\n",
    "a: [b\n",
    "a: {b: c\n",
    "a: `b\n",
    "- a\nb: c\n",
    "a: |x\n  b\n",
    "a: !<x>y b\n",
    "a: b\n... x\n",
    "a: {b: c} d\n",
]
_PLACES = {
    "ConfigMap": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cfg\n{text}",
    "Secret": "apiVersion: v1\nkind: Secret\nmetadata:\n  name: sec\n{text}",
    "Deployment": (
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: d\n{text}spec:\n"
        "  template:\n    spec:\n      containers:\n      - name: c\n"
    ),
}


@pytest.mark.parametrize("kind", sorted(_PLACES))
@pytest.mark.parametrize("text", SYNTAX_ERRORS)
def test_both_parsers_refuse_with_the_same_message_at_the_same_place(
    tmp_path: Path, kind: str, text: str
) -> None:
    path = tmp_path / "in.yaml"
    path.write_text(_PLACES[kind].format(text=text))
    for args in ([], ["--check"], ["explain", "--format", "json"]):
        fast, exact = (
            run_cmhash([*args, "--no-config", "--parser", p, str(path)]) for p in ("fast", "exact")
        )
        assert fast.code == exact.code == 2, (args, fast, exact)
        assert (fast.stdout, fast.stderr) == (exact.stdout, exact.stderr), args


def test_a_flow_collection_key_with_an_empty_value() -> None:
    readings = [_read("k: [[]:]\n", be, offsets=False) for be in _paths().values()]
    assert _distinct(readings) == 1
    assert readings[0][0] == "refused"  # ruamel's verdict; libyaml took it


_CHECK = """
import json, sys
sys.setrecursionlimit(20000)
import yaml
from cmhash.parse import events
import test_libyaml as t
out = {"libyaml": yaml._yaml.get_version_string()}
for text in t.SHAPES + t.REFUSED_BY_LIBYAML + t.SINGLE_PAIRS + t.TABS + t.BREAKS + [t._block(t.MAX_DEPTH), t._block(t.MAX_DEPTH + 1), t._flow(t.MAX_DEPTH + 1)]:
    out[text[:40]] = t._distinct([t._read(text, be) for be in t._paths().values()])
for text in t._generated()[::3]:
    out["generated " + text] = t._distinct([t._read(text, be, offsets=False) for be in t._paths().values()])
print(json.dumps(out))
"""


@pytest.mark.slow
@pytest.mark.parametrize("release", ["6.0.3", "6.0.4"])
def test_under_both_pyyaml_releases(tmp_path: Path, release: str) -> None:
    """The checks above under PyYAML 6.0.3 (libyaml 0.2.5) and 6.0.4 (0.2.6), each in a
    subprocess with that release first on the path."""
    target = tmp_path / "site"
    pip = [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--target"]
    done = subprocess.run(
        [*pip, str(target), f"PyYAML=={release}"], capture_output=True, text=True, check=False
    )
    if done.returncode != 0:
        if IN_CI:
            pytest.fail(f"pip could not install PyYAML {release}: {done.stderr[-500:]}")
        pytest.skip(f"PyYAML {release} not installable here")
    # the child imports this module (its directory), which imports conftest (tests/)
    path = f"{target}:{Path(__file__).parent}:{TESTS}:{ROOT / 'src'}"
    run = subprocess.run(
        [sys.executable, "-c", _CHECK],
        capture_output=True,
        text=True,
        check=True,
        env={"PYTHONPATH": path, "PATH": "/usr/bin:/bin"},
    )
    out = json.loads(run.stdout)
    assert out.pop("libyaml") == {"6.0.3": "0.2.5", "6.0.4": "0.2.6"}[release]
    assert set(out.values()) == {1}, out


# The C tree builder links the system's libyaml; PyYAML's wheel bundles its own, maybe
# another release. What the C builder hands on (tags, anchors, errors) and what its
# self-check cannot tell go to PyYAML's libyaml only when it is the same release (one
# libyaml reads a run, by construction); otherwise to the reference parser (ruamel),
# with a -v note.
TAGGED = (
    "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata:\n  k: !!str 3\n---\n"
    "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\nspec:\n  template:\n"
    "    spec:\n      containers:\n      - name: c\n        envFrom: [{configMapRef: {name: c}}]\n"
)


def _simulated(monkeypatch: pytest.MonkeyPatch, ours: str, theirs: str | None) -> None:
    monkeypatch.setattr(backends, "libyaml_releases", lambda: (ours, theirs))
    events._BACKENDS.clear()  # (a fresh fast backend: its events are chosen on first use)


@pytest.fixture
def fresh_backends() -> Iterator[None]:
    yield
    events._BACKENDS.clear()


@pytest.mark.parametrize(
    ("ours", "theirs", "reader"),
    [
        ("0.2.5", "0.2.5", "yaml.events"),
        ("0.2.6", "0.2.6", "yaml.events"),
        ("0.2.5", "0.2.6", "ruamel.yaml.events"),  # the system's 0.2.5, PyYAML 6.0.4's 0.2.6
        ("0.2.6", "0.2.5", "ruamel.yaml.events"),
        ("0.2.5", None, "ruamel.yaml.events"),  # PyYAML without libyaml
    ],
)
def test_what_the_c_builder_hands_on_is_read_by_one_libyaml(
    monkeypatch: pytest.MonkeyPatch,
    fresh_backends: None,
    ours: str,
    theirs: str | None,
    reader: str,
) -> None:
    if events.backend("fast").ctree is None:
        pytest.skip("the C tree builder was not compiled")
    _simulated(monkeypatch, ours, theirs)
    be = events.backend("fast")
    assert be.scalar.__module__ == reader
    # the same output either way, and the note under -v only where releases differ
    res = run_cmhash(["--no-config", "-v", "-"], stdin=TAGGED.encode())
    assert res.code == 0, res.stderr
    noted = "C tree builder reads with libyaml" in res.stderr
    assert noted is (theirs is not None and ours != theirs), res.stderr
    if noted:
        assert f"libyaml {ours}, PyYAML with {theirs}" in res.stderr
    events._BACKENDS.clear()
    plain = run_cmhash(["--no-config", "--parser", "exact", "-"], stdin=TAGGED.encode())
    assert res.stdout == plain.stdout


def test_the_releases_compared_are_the_linked_ones() -> None:
    releases = backends.libyaml_releases()
    ctree = cext.ctree()
    if ctree is None:
        assert releases is None
        return
    import yaml

    assert releases == (ctree.LIBYAML_VERSION, yaml._yaml.get_version_string())
    # the real environment's choice (CI: Debian's libyaml 0.2.5 and PyYAML 6.0.4's 0.2.6)
    events._BACKENDS.clear()
    try:
        want = "yaml.events" if releases[0] == releases[1] else "ruamel.yaml.events"
        assert events.backend("fast").scalar.__module__ == want
    finally:
        events._BACKENDS.clear()


ODD_TAGS = [
    "!!se!!binary aGk9",  # (fuzzing found it: libyaml reads the handle !!, ruamel !se!)
    "!vault secret/x",
    "!!python/str x",
]


@pytest.mark.parametrize("value", ODD_TAGS)
def test_an_odd_tag_gets_one_message_with_or_without_the_c_builder(value: str) -> None:
    """Without the C tree builder (an install where it did not compile) the fast path
    reads libyaml's events through PyYAML: an unknown tag is refused by the reference
    parser there too, so the message is the one the C build and --parser exact give."""
    doc = f"apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: c}}\ndata:\n  a: {value}\n"
    said = set()
    for env, parser in (
        ({"CMHASH_CTREE": "1"}, "fast"),
        ({"CMHASH_CTREE": "0"}, "fast"),
        ({}, "exact"),
    ):
        res = run_cmhash(["--no-config", "--parser", parser, "-"], stdin=doc.encode(), env=env)
        assert res.code == 2, res.stderr
        said.add(res.stderr)
    assert len(said) == 1, said

"""The C++ read path (parse/rapid.py): wherever it builds a tree, the tree is libyaml's,
node for node (kind, offsets, value, style); wherever libyaml refuses a document, it
builds none; and it really reads the common documents instead of always stepping
aside."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from conftest import CORPUS, ROOT, SHARED_CORPUS, run_cmhash
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from manifests import Stream, Style, render, streams, styles

from cmhash.analyze.kinds import DEFAULT_TABLE
from cmhash.errors import NodeError
from cmhash.parse import rapid
from cmhash.parse.events import backend, parse_chunk
from cmhash.parse.tree import MAP, SEQ, Node
from cmhash.read.classify import classify
from cmhash.read.split import split_chunks

ryml = pytest.importorskip("ryml")
LIBYAML = backend("fast")


def _differs(a: Node, b: Node, path: str = "$") -> str | None:
    for field in ("kind", "start", "end", "style", "tag", "anchor"):
        if getattr(a, field) != getattr(b, field):
            return f"{path}: {field} {getattr(a, field)!r} != {getattr(b, field)!r}"
    if a.kind == MAP:
        if len(a.value) != len(b.value):
            return f"{path}: {len(a.value)} != {len(b.value)} entries"
        for i, ((ka, va), (kb, vb)) in enumerate(zip(a.value, b.value, strict=True)):
            found = _differs(ka, kb, f"{path}.<key {i}>") or _differs(va, vb, f"{path}.{ka.value}")
            if found:
                return found
        return None
    if a.kind == SEQ:
        if len(a.value) != len(b.value):
            return f"{path}: {len(a.value)} != {len(b.value)} items"
        for i, (x, y) in enumerate(zip(a.value, b.value, strict=True)):
            found = _differs(x, y, f"{path}[{i}]")
            if found:
                return found
        return None
    return None if a.value == b.value else f"{path}: {a.value!r} != {b.value!r}"


def compare(text: str, base: int = 0) -> str:
    """``read`` (rapid built the same tree), ``aside`` (rapid stepped aside), or raises
    AssertionError with the first difference."""
    try:
        expected: list[Node] | None = parse_chunk(text, base, LIBYAML)
    except NodeError:
        expected = None
    got = rapid.parse_fast(text, base)
    if got is None:
        return "aside"
    assert expected is not None, f"libyaml refuses this document, rapid read it: {text!r}"
    assert len(expected) == 1 and len(got) == 1 and not got.aliased
    found = _differs(expected[0], got[0])
    assert found is None, f"{found} in {text!r}"
    return "read"


def _chunks(text: str) -> list[tuple[int, str]]:
    return [(c.start, text[c.start : c.end]) for c in split_chunks(text)]


CASES = {  # document -> "read" or "aside"
    "a:\nb: 1\n": "read",
    "a:   # c\n  b: |\n    hi\n\n  # tail\nc: x\n": "read",
    "--- # x\nk:\n- a\n- {x: 1 , y: [ ]}  # q\n# end\n...\n": "read",
    "a: >-\n  x\n  y\n\n\nb: 'q'  \n": "read",
    "a: >\n  x\n\n  y\nb: 1\n": "read",
    "a: |-\n  x\n\n  y\n": "read",
    'b: "q\\"x"\nc: \'it\'\'s\'\nd: "\\u00e9 \\t"\ne: ""\n': "read",
    "a:\n  - x: 1\n    y:\n  - z\nb: ''\n": "read",
    "a: {b: {c: [1, 2, {d: e}]}, f: []}\n": "read",
    "a:\n  b:\n    c: 1\nd: 2\n# trailing\n": "read",
    "\"quoted key\": 1\n'single': 2\n": "read",
    "a: [x,\n  y]\n": "read",
    # aside: what this path does not take
    "a:\n  -  x: 1\n     y:\n  - \nb: ''\n": "aside",  # an empty sequence item
    "x:\n  y: 1\n z: 2\n": "aside",  # bad indentation (libyaml refuses it too)
    "a: &x 1\nb: *x\n": "aside",
    "a: !!str 1\n": "aside",
    "a: caf\u00e9\n": "aside",
    "a:\tb\n": "aside",
    "a: 1\r\nb: 2\r\n": "aside",
    "%YAML 1.1\n---\na: 1\n": "aside",
    "? a\n: 1\n": "aside",
    "a: |+\n  x\n\n": "aside",
    "a: |2\n    x\n": "aside",
    "a: >\n  x\n    more\n  y\n": "aside",  # a more-indented folded line
    "a: plain\n  continued\n": "aside",  # a multi-line plain scalar
    'a: "two\n  lines"\n': "aside",
    "- a\n- b\n": "aside",  # not a mapping
    "a: {b: }\n": "aside",  # an empty value in a flow mapping
    "args:\n- |\n  x\n": "aside",  # a block scalar as a sequence item
    "a: [b\n": "aside",  # a syntax error
}


@pytest.mark.parametrize(("text", "expected"), CASES.items(), ids=range(len(CASES)))
def test_cases(text: str, expected: str) -> None:
    assert compare(text) == expected
    assert compare(text, base=1000) == expected  # offsets shifted like libyaml's


def _documents(root: Path) -> list[tuple[int, str]]:
    out = []
    for f in sorted(root.rglob("*.y*ml")):
        try:
            text = f.read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError):
            continue
        out += _chunks(text)
    return out


def test_vendored_corpus_and_goldens_are_read_alike() -> None:
    docs = _documents(CORPUS) + _documents(ROOT / "tests" / "cases")
    results = [compare(text, base) for base, text in docs if text.strip()]
    relevant = [compare(text, base) for base, text in docs if classify(text, DEFAULT_TABLE) is True]
    assert len(results) > 400
    # the path must really read: stepping aside for everything would pass the rest
    assert relevant.count("read") > 0.8 * len(relevant), (
        relevant.count("read"),
        len(relevant),
    )


@pytest.mark.shared("corpus")
def test_shared_corpus_is_read_alike() -> None:
    results = [compare(text, base) for base, text in _documents(SHARED_CORPUS) if text.strip()]
    assert results.count("read") > 0.75 * len(results)


@settings(suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large], deadline=None)
@given(streams(), styles)
def test_generated_streams_are_read_alike(stream: Stream, style: Style) -> None:
    text = render(stream, style).decode("utf-8")
    for base, chunk in _chunks(text):
        compare(chunk, base)


# Text built from YAML's significant pieces: mostly invalid, sometimes odd but valid.
_PIECES = st.sampled_from(
    [
        "a", "b: ", "key", ": ", ":", "- ", "-", " ", "  ", "\n", "\n  ", "\n    ", "#", " # c",
        "'", '"', "''", '\\"', "\\n", "\\u00e9", "{", "}", "[", "]", ", ", ",", "|", "|-", ">",
        ">-", "...", "---", "1", "true", "~", "null", "x y", "é", "?", "\t", "&a ", "*a", "!t ",
        "k: ", "\n- ", "\n  k: ", "\n  - ", "@", "`", "%", "=", "<<: ", "-x", ":x", "?x",
    ]
)  # fmt: skip


@settings(suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(st.lists(_PIECES, min_size=1, max_size=40).map("".join))
def test_fuzzed_text_is_read_alike_or_left_to_libyaml(body: str) -> None:
    for text in (body, "k: v\n" + body, "m:\n  " + body + "\n"):
        compare(text)


def test_layout_check_refuses_another_layout(monkeypatch: pytest.MonkeyPatch) -> None:
    assert rapid._layout_ok(ryml)
    monkeypatch.setattr(rapid, "_WORDS", rapid._WORDS - 1)  # as if NodeData had changed
    assert not rapid._layout_ok(ryml)


def test_turned_off_reads_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CMHASH_RAPIDYAML", "0")
    assert rapid.parse_fast("a: 1\n", 0) is None
    assert not rapid.wanted(1 << 30)


def test_rapidyaml_prints_nothing_of_its_own(tmp_path: Path) -> None:
    """On a parse error rapidyaml writes to file descriptor 2 itself; users see only
    cmhash's one line (and never text from a Secret)."""
    bad = tmp_path / "bad.yaml"
    bad.write_text(
        "apiVersion: v1\nkind: Secret\nmetadata:\n  name: s\ndata:\n  pw: hunter2\n   x: [y\n"
    )
    res = subprocess.run(
        [sys.executable, "-m", "cmhash", "--no-config", str(bad)],
        capture_output=True,
        env={"CMHASH_RAPIDYAML": "1", "PATH": "/usr/bin:/bin"},
        check=False,
    )
    assert res.returncode == 2
    lines = res.stderr.decode().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"cmhash: {bad}:7:"), lines
    assert b"hunter2" not in res.stderr and b"ERROR" not in res.stderr


@pytest.mark.parametrize("args", [[], ["--versioned"], ["--check"], ["-q", "--jobs", "--pods"]])
def test_outputs_are_the_same_on_the_corpus(args: list[str]) -> None:
    for f in sorted(CORPUS.rglob("*.yaml"))[::3]:
        data = f.read_bytes()
        on = run_cmhash(["--no-config", *args, "-"], stdin=data, env={"CMHASH_RAPIDYAML": "1"})
        off = run_cmhash(["--no-config", *args, "-"], stdin=data, env={"CMHASH_RAPIDYAML": "0"})
        assert (on.code, on.stdout, on.stderr) == (off.code, off.stdout, off.stderr), f

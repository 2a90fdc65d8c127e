"""parse/resources.py's document_resources in C (native/_ctree.c): the same Resources
as resources_of, its reference, or NotImplemented (then the reference reads the whole
document, raising what it raises)."""

from __future__ import annotations

from typing import Any

import pytest
from conftest import CORPUS
from hypothesis import HealthCheck, given, settings
from manifests import Stream, Style, render, streams, styles

from cmhash.errors import NodeError
from cmhash.parse import events, resources
from cmhash.read.source import SourceText
from cmhash.read.split import split_chunks

_ctree: Any = pytest.importorskip("cmhash.native._ctree")


def _outcome_of(call: Any) -> Any:
    try:
        return call()
    except NodeError as exc:
        return (exc.message, exc.offset)


def _outcome(src: SourceText, roots: list[Any]) -> Any:
    return _outcome_of(lambda: [r for root in roots for r in resources.resources_of(src, 7, root)])


def _same(text: str, parser: str = "fast") -> list[bool]:
    """Per chunk: True when C made the Resources itself."""
    src = SourceText("x.yaml", text)
    made = []
    for chunk in split_chunks(text):
        try:
            roots = events.parse_chunk(
                text[chunk.start : chunk.end], chunk.start, events.backend(parser)
            )
        except NodeError:
            continue
        got = _ctree.document_resources(src, 7, roots)
        want = _outcome(src, roots)
        if got is not NotImplemented:
            assert got == want
            assert all(type(r) is resources.Resource for r in got)
            assert [(r.node, r.source) for r in got] == [(r.node, r.source) for r in want]
        assert _outcome_of(lambda r=roots: resources.document_resources(src, 7, r)) == want
        made.append(got is not NotImplemented)
    return made


def test_the_module_uses_it() -> None:
    assert resources._C_RESOURCES is not None


def test_the_same_on_the_corpus() -> None:
    made = [m for f in sorted(CORPUS.rglob("*.yaml")) for m in _same(f.read_text())]
    assert sum(made) > 250 and sum(made) > 0.8 * len(made)


@settings(suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large], deadline=None)
@given(streams(), styles)
def test_the_same_on_generated_streams(stream: Stream, style: Style) -> None:
    _same(render(stream, style).decode("utf-8"))


@pytest.mark.parametrize(
    ("text", "c_makes"),
    [
        ("kind: ConfigMap\napiVersion: v1\nmetadata: {name: a, namespace: n}\n", True),
        ("kind: ConfigMap\nmetadata: {name: a}\n", True),  # no apiVersion: ""
        ("kind: ConfigMap\napiVersion: ~\nmetadata: {name: '', generateName: g-}\n", True),
        ("kind: ConfigMap\nmetadata: {generateName: ''}\n", True),
        ("kind: ConfigMap\nmetadata: {namespace: ''}\n", True),
        ("kind: ConfigMap\n", True),
        ("kind: ConfigMap\nmetadata: ~\n", False),
        ("kind: ConfigMap\nmetadata: [a]\n", False),  # refused
        ("kind: ConfigMap\nmetadata: {name: [a]}\n", False),  # refused
        ("kind: ConfigMap\nmetadata: {name: a, namespace: {b: c}}\n", False),  # refused
        ("apiVersion: v1\nmetadata: {name: a}\n", False),  # no kind: refused
        ("kind: ~\n", False),
        ("kind: [a]\n", False),
        ("kind: !!str ConfigMap\n", False),
        ("kind: &k ConfigMap\nmetadata: {name: *k}\n", False),
        ("kind: List\napiVersion: v1\nitems:\n- {kind: ConfigMap, metadata: {name: a}}\n", False),
        ("kind: IPAllowList\napiVersion: x.io/v1\n", False),  # maybe a list: resources.py
        ("kind: ConfigMap\nkind: Secret\n", False),  # a duplicate key
        ("<<: {kind: ConfigMap}\nmetadata: {name: a}\n", False),
        ("- a\n", False),
        ("~\n", False),
        ("kind: ConfigMap\n---\nkind: Secret\nmetadata: {name: s}\n", True),
    ],
)
def test_odd_documents(text: str, c_makes: bool) -> None:
    assert _same(text) and all(m is c_makes for m in _same(text))


def test_trees_of_the_exact_parser_go_to_python() -> None:
    assert _same("kind: ConfigMap\nmetadata: {name: a}\n", parser="exact") == [False]

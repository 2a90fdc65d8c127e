"""split._top_level in C (native/_ctree.c's top_level): the same values, or the same
None, as split._py_top_level, its reference; text that is not ASCII goes to Python."""

from __future__ import annotations

import pytest
from conftest import CORPUS
from hypothesis import given, settings
from hypothesis import strategies as st

from cmhash.read import split
from cmhash.read.split import split_chunks

_ctree = pytest.importorskip("cmhash.native._ctree")


def test_the_module_uses_the_c_walk() -> None:
    assert split._top_level is not split._py_top_level


@pytest.mark.parametrize(
    "text",
    [
        "kind: Deployment\n",
        "kind: Deployment",
        "\nkind: Deployment\n",
        "kind:Deployment\n",
        "kind: 'Deployment'\n",
        'kind: "Deployment"  # a comment\n',
        "kind: Deployment #c\nkind: Service\n",
        "kind: Deploy#ment\n",
        "kind: Deploy#ment # c\n",
        "kind: a#b\t#c\n",
        "kind: #only a comment\n",
        "kind:\n",
        "kind: ''\n",
        "kind: '\n",
        "kind: \"x'\n",
        "kind: Deployment\r\n",
        "kind: \x1cDeployment\x1f\x0b\x0c\n",
        "kind: Deploy ment\n",
        "kind: apps/v1\n",
        "kindness: x\n",
        " kind: x\n",
        "spec:\n  kind: x\nkind: y\n",
        "kind: x\nkind:\n",
        "kind: x\n\nkind: y\n",
        "---\nkind: x\n...\n",
        "kind: x\n" * 50,
        "",
        "\n",
        "kind",
        "kind:",
        "\nkind:",
    ],
)
def test_the_same_as_python(text: str) -> None:
    for key in ("kind", "apiVersion", "k"):
        assert _ctree.top_level(text, key) == split._py_top_level(text, key), (text, key)


def test_not_ascii_goes_to_python() -> None:
    assert _ctree.top_level("kind: Deployment\u3000\n", "kind") is NotImplemented
    assert split._top_level("kind: Deployment\u3000\n", "kind") == ["Deployment"]
    assert _ctree.top_level("kind: x\n", "kïnd") is NotImplemented


def test_the_same_on_the_corpus() -> None:
    checked = 0
    for f in sorted(CORPUS.rglob("*.yaml")):
        whole = f.read_text(errors="replace")
        for chunk in [whole, *(whole[c.start : c.end] for c in split_chunks(whole))]:
            for key in ("kind", "apiVersion"):
                assert split._top_level(chunk, key) == split._py_top_level(chunk, key), f
                checked += 1
    assert checked > 600


_LINE = st.lists(
    st.sampled_from(
        [
            "kind",
            "apiVersion",
            ":",
            " ",
            "\t",
            "#",
            "'",
            '"',
            "\n",
            "\r",
            "\x0b",
            "\x1e",
            "a",
            "Z",
            "9",
            ".",
            "/",
            "-",
            "_",
            "x y",
            "kind:",
            "\nkind: ",
        ]
    ),
    max_size=30,
).map("".join)


@settings(max_examples=400, deadline=None)
@given(_LINE)
def test_the_same_on_generated_text(text: str) -> None:
    for key in ("kind", "apiVersion"):
        assert _ctree.top_level(text, key) == split._py_top_level(text, key), repr(text)

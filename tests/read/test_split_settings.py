from __future__ import annotations

import itertools
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cmhash.errors import ConfigError
from cmhash.read import split
from cmhash.read.split import split_chunks
from cmhash.settings.config import load_config_file, settings_from_mapping
from cmhash.settings.values import validate_annotation_key


def pieces(text: str) -> list[str]:
    chunks = split_chunks(text)
    assert "".join(text[c.start : c.end] for c in chunks) == text  # covers every byte
    return [text[c.start : c.end] for c in chunks]


def test_split_markers() -> None:
    text = "# lead\n---\na: 1\n--- # c\nb: 2\n...\n# between\n---\nc: 3"
    assert pieces(text) == [
        "# lead\n",
        "---\na: 1\n",
        "--- # c\nb: 2\n...\n",
        "# between\n",
        "---\nc: 3",
    ]


def test_split_ignores_indented_and_inline_dashes() -> None:
    text = "a: |\n  ---\n  x\nb: ---\n----\n"
    assert pieces(text) == [text]


def test_split_keeps_directives_with_their_document() -> None:
    text = "%YAML 1.1\n---\na: 1\n...\n%YAML 1.1\n---\nb: 2\n"
    assert pieces(text) == ["%YAML 1.1\n---\na: 1\n...\n", "%YAML 1.1\n---\nb: 2\n"]


def test_split_crlf() -> None:
    assert pieces("a: 1\r\n---\r\nb: 2\r\n") == ["a: 1\r\n", "---\r\nb: 2\r\n"]


@pytest.mark.parametrize(
    "key", ["checksum/config", "example.com/config-hash", "config-hash", "a.b-c/x_y.z", "A/b"]
)
def test_valid_keys(key: str) -> None:
    assert validate_annotation_key(key) is None


@pytest.mark.parametrize(
    "key", ["", "/x", "bad key", "x/", "-x", "x" * 64, "a/b/c", "exa_mple.com/x"]
)
def test_invalid_keys(key: str) -> None:
    assert validate_annotation_key(key) is not None


def test_config_file_roundtrip(tmp_path: Path) -> None:
    cfg = tmp_path / ".cmhash.yaml"
    cfg.write_text(
        "annotationKey: example.com/h\nnamespace: shop\nstrict: true\n"
        "workloadKinds:\n- {group: example.com, kind: Worker, templatePath: spec.tpl}\n"
    )
    s = settings_from_mapping(load_config_file(str(cfg)))
    assert s.annotation_key == "example.com/h"
    assert s.namespace == "shop" and s.strict
    assert s.extra_kinds[0].group == "example.com"
    assert s.extra_kinds[0].template_path == ("spec", "tpl")


@pytest.mark.parametrize(
    ("body", "where"),
    [
        ("strict: yes-please\n", "strict"),
        ("unknownOption: 1\n", "(top level)"),
        ("annotationKey: 'bad key'\n", "annotationKey"),
        ("workloadKinds:\n- {templatePath: spec.template}\n", "workloadKinds/0"),
    ],
)
def test_config_errors_name_the_path(tmp_path: Path, body: str, where: str) -> None:
    cfg = tmp_path / "c.yaml"
    cfg.write_text(body)
    with pytest.raises(ConfigError) as info:
        load_config_file(str(cfg))
    assert f"at {where}:" in str(info.value)
    assert str(cfg) in str(info.value)


def test_split_percent_line_inside_a_quoted_scalar_is_text() -> None:
    """A '%' at column 0 is a directive only before a document's content: inside a
    quoted multi-line scalar of a bare document it is text (libyaml and ruamel agree)."""
    text = 'a: "one\n%two\n  three"\n---\nb: 1\n'
    assert pieces(text) == ['a: "one\n%two\n  three"\n', "---\nb: 1\n"]


def test_split_percent_after_document_end_and_content() -> None:
    text = "a: 1\n...\nb: 'x\n%y'\n"
    assert pieces(text) == ["a: 1\n...\n", "b: 'x\n%y'\n"]
    # after "..." and only comments, a '%' line is a directive again
    text = "a: 1\n...\n# c\n%YAML 1.1\n%TAG ! tag:x,2000:\n---\nb: 2\n"
    assert pieces(text) == ["a: 1\n...\n", "# c\n", "%YAML 1.1\n%TAG ! tag:x,2000:\n---\nb: 2\n"]


def test_plain_keys_are_settings_schema_keys_and_options() -> None:
    """Each plain setting is one row: a Settings field, a schema key, an inject option."""
    from cmhash.cli.main import cli
    from cmhash.settings.config import PLAIN_KEYS, schema
    from cmhash.settings.values import Settings

    options = {p.name for p in cli.commands["inject"].params}
    properties = schema()["properties"]
    for key, field in PLAIN_KEYS:
        assert field in Settings._fields, field
        assert key in properties, key
        assert field in options, field


_OLD_MARKER = re.compile(r"^(?:---|\.\.\.)(?=[ \t\r\n]|$)|^%", re.MULTILINE)


@settings(max_examples=1000, deadline=None)
@given(
    st.lists(
        st.sampled_from(
            ["---", "...", "%", "\n", "\r\n", " ", "\t", "a", "#", "-", ".", "é", "€", "\U0001d11e"]
        )
    )
)
def test_markers_are_found_where_a_line_starts_with_one(pieces: list[str]) -> None:
    """The splitter's two patterns (the text's start, then from each line break) find
    exactly the marker lines one multi-line pattern finds, on text of every str width."""
    text = "".join(pieces)
    want = [m.start() for m in _OLD_MARKER.finditer(text)]
    assert list(split._py_markers(text)) == want
    assert list(split._markers(text)) == want


def test_the_split_uses_the_c_cuts() -> None:
    pytest.importorskip("cmhash.native._ctree")
    assert split._C_CUTS is not None


@settings(max_examples=2000, deadline=None)
@given(
    st.lists(
        st.sampled_from(
            [
                "---",
                "...",
                "%",
                "%YAML 1.1",
                "# c",
                "a: 1",
                "'x",
                "\n",
                "\r\n",
                " ",
                "\t",
                "é",
                "\U0001d11e",
                "\x85",
            ]
        )
    )
)
def test_the_c_cuts_are_the_reference_cuts(pieces: list[str]) -> None:
    """native/_ctree.c's cuts make the documents _py_cuts makes (directives after "...",
    a '%' that is text, CRLF, every str width), strictly increasing from 0 to the end."""
    text = "".join(pieces)
    want = split._py_cuts(text)
    assert want[0] == 0 and want[-1] == len(text)
    assert all(a < b for a, b in itertools.pairwise(want))
    if split._C_CUTS is not None:
        assert split._C_CUTS(text, split.only_comments) == want
    assert split.split_chunks(text) == [split.Chunk(a, b) for a, b in itertools.pairwise(want)]


def test_the_c_cuts_ask_about_comments_only_before_a_directive() -> None:
    """The text before a '%' line goes to only_comments (whose unicode stripping the C
    code does not copy), and what it answers decides."""
    if split._C_CUTS is None:
        pytest.skip("no C extension")
    asked: list[str] = []

    def only_comments(text: str) -> bool:
        asked.append(text)
        return split.only_comments(text)

    text = "a: 1\n...\n# c\n%YAML 1.1\n---\nb: 2\n"
    assert split._C_CUTS(text, only_comments) == [0, 9, 13, len(text)]
    assert asked == ["# c\n"]
    assert split._C_CUTS(text, lambda _: False) == [0, 9, 23, len(text)]  # "%" is text
    with pytest.raises(ZeroDivisionError):
        split._C_CUTS(text, lambda _: 1 / 0)

"""Effective ConfigMap/Secret content: what the pod sees, not how it is written."""

from __future__ import annotations

import pytest

from cmhash.analyze.configs import config_content
from cmhash.errors import NodeError
from cmhash.parse.events import backend, parse_chunk
from cmhash.parse.resources import resources_of
from cmhash.read.source import SourceText


def content(text: str, parser: str = "fast"):  # type: ignore[no-untyped-def]
    src = SourceText("t.yaml", text)
    (root,) = parse_chunk(text, 0, backend(parser))
    (res,) = resources_of(src, 0, root)
    return config_content(res)


SECRET = "apiVersion: v1\nkind: Secret\nmetadata:\n  name: s\n"


@pytest.mark.parametrize("parser", ["fast", "exact"])
def test_secret_decoded_and_stringdata_wins(parser: str) -> None:
    c = content(SECRET + "data:\n  a: YQ==\n  b: Yg==\nstringData:\n  b: override\n", parser)
    assert c.entries == {"a": b"a", "b": b"override"}
    assert c.secret_type == "Opaque"


def test_wrapped_base64_equals_unwrapped() -> None:
    wrapped = content(SECRET + "data:\n  k: |\n    aGVsbG8g\n    d29ybGQ=\n")
    flat = content(SECRET + "data:\n  k: aGVsbG8gd29ybGQ=\n")
    assert wrapped.entries == flat.entries == {"k": b"hello world"}


def test_stringdata_equals_data() -> None:
    assert (
        content(SECRET + "stringData:\n  k: hello\n").entries
        == content(SECRET + "data:\n  k: aGVsbG8=\n").entries
    )


def test_quoting_and_order_do_not_matter() -> None:
    a = content(
        "kind: ConfigMap\napiVersion: v1\nmetadata: {name: c}\ndata:\n  x: '1'\n  y: \"2\"\n"
    )
    b = content(
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n  labels: {l: v}\n"
        'data: {y: "2", x: "1"}\n'
    )
    assert a.entries == b.entries


def test_binary_data_decoded() -> None:
    c = content(
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n"
        "binaryData:\n  bin: AAEC\ndata:\n  t: x\n"
    )
    assert c.entries == {"bin": b"\x00\x01\x02", "t": b"x"}


def test_empty_type_is_opaque() -> None:
    assert content(SECRET + "type: ''\n").secret_type == "Opaque"
    assert content(SECRET + "type: kubernetes.io/tls\n").secret_type == "kubernetes.io/tls"


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("data:\n  n: 8080\n", "not a string"),
        ("data:\n  n: true\n", "not a string"),
        ("data:\n  n: 1.5\n", "not a string"),
        ("data:\n  n: [1]\n", "must be a string"),
        ("binaryData:\n  a: '!!'\n", "not valid base64"),
        ("data:\n  a: x\nbinaryData:\n  a: eA==\n", "both data and binaryData"),
    ],
)
def test_bad_configmap(body: str, message: str) -> None:
    with pytest.raises(NodeError, match=message):
        content("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n" + body)


def test_quoted_numbers_are_strings() -> None:
    c = content(
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n"
        "data:\n  a: '8080'\n  b: \"true\"\n  c: v1.2.3\n  d: 1.2.3\n  e: ''\n  f:\n"
    )
    assert c.entries == {
        "a": b"8080",
        "b": b"true",
        "c": b"v1.2.3",
        "d": b"1.2.3",
        "e": b"",
        "f": b"",
    }


def test_error_never_contains_the_value() -> None:
    with pytest.raises(NodeError) as info:
        content(SECRET + "data:\n  pass: 'hunter2-not-base64!'\n")
    assert "hunter2" not in info.value.message


@pytest.mark.parametrize(
    "plain",
    [
        "E400",
        "e5",
        "1.2.3",
        "0x",
        "1e",
        "abc123",
        "12ab",
        "03:00",
        "16:9",
        "1:30",
        "12:30:45",
        "2024-01-01",
        "1e400",
    ],
)
def test_plain_strings_that_only_look_numeric(plain: str) -> None:
    """Kubernetes' decoder (go-yaml) reads these as strings; so must we (found by the
    property tests: base64 of some bytes is "E400")."""
    c = content(f"apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: c}}\ndata:\n  a: {plain}\n")
    assert c.entries == {"a": plain.encode()}


@pytest.mark.parametrize(
    "plain",
    [
        "8080",
        "-1",
        "1_000",
        "1e3",
        "1.5e-3",
        ".5",
        "0x1F",
        "0o17",
        "017",
        "08",
        "yes",
        "Off",
        "~",
        ".inf",
    ],
)
def test_plain_non_strings_are_refused(plain: str) -> None:
    body = f"apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: c}}\ndata:\n  a: {plain}\n"
    if plain == "~":  # null: Kubernetes stores an empty string
        assert content(body).entries == {"a": b""}
        return
    with pytest.raises(NodeError, match="not a string"):
        content(body)

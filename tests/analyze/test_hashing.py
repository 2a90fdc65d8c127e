"""Known-answer tests for the canonical encoding (docs/hash-encoding.md).

These values are a contract: a change here rolls every user's pods. Only change
them together with ENCODING_VERSION and a release note.
"""

from __future__ import annotations

import base64
import hashlib
import hmac

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cmhash.analyze.hashing import (
    ENCODING_VERSION,
    Content,
    Use,
    canonical,
    canonical_json,
    digest,
    merge_uses,
)

EMPTY_CM = Content("ConfigMap", "cfg", {})


def entry(use: Use, secret_key: bytes | None = None) -> dict[str, object]:
    """One object's entry by its definition (docs/hash-encoding.md), as a dict."""
    out: dict[str, object] = {"kind": use.kind, "name": use.name}
    if use.namespace is not None:
        out["namespace"] = use.namespace
    c = use.content
    if c is None:
        out["absent"] = True
        return out
    whole = use.keys is None or c.source is not None  # a source is always used whole
    data: dict[str, str | None] = {}
    for key in sorted(c.entries) if whole else sorted(use.keys or ()):
        value = c.entries.get(key)
        if value is not None and secret_key is not None and c.kind == "Secret":
            value = hmac.new(secret_key, value, hashlib.sha256).digest()
        data[key] = None if value is None else base64.b64encode(value).decode("ascii")
    out["data"] = data
    if c.secret_type is not None:
        out["type"] = c.secret_type
    if c.source is not None:
        out["source"] = c.source
    return out


def py_canonical(uses: list[Use], secret_key: bytes | None = None) -> str:
    """The encoding by its definition: ``entry`` dicts through ``json.dumps`` (what
    ``canonical`` writes directly)."""
    refs = [entry(u, secret_key) for u in merge_uses(uses)]
    return canonical_json({"v": ENCODING_VERSION, "refs": refs})


def cm(entries: dict[str, bytes], name: str = "cfg") -> Content:
    return Content("ConfigMap", name, entries)


def secret(entries: dict[str, bytes], name: str = "sec", t: str = "Opaque") -> Content:
    return Content("Secret", name, entries, t)


def whole(c: Content) -> Use:
    return Use(c.kind, c.name, c, None)


@pytest.mark.parametrize(
    ("uses", "text", "value"),
    [
        pytest.param(
            [whole(EMPTY_CM)],
            '{"refs":[{"data":{},"kind":"ConfigMap","name":"cfg"}],"v":1}',
            "ad77320ac43bbb4ee46417f5746de403ec6f9b8b3b0e5bde5bf32b2df0d5bdb1",
            id="empty",
        ),
        pytest.param(
            [whole(cm({"a": b"1"}))],
            '{"refs":[{"data":{"a":"MQ=="},"kind":"ConfigMap","name":"cfg"}],"v":1}',
            "ce1f2af2c0d21d1bee5218b58219585fd73d55ed742d334d49940c532041309d",
            id="one-key",
        ),
        pytest.param(
            [Use("ConfigMap", "gone", None, None)],
            '{"refs":[{"absent":true,"kind":"ConfigMap","name":"gone"}],"v":1}',
            "be34ec41d2f2b318b96d0795f8c9b526b783e98698833e6c8cf89d2648996c36",
            id="absent",
        ),
        pytest.param(
            [whole(secret({"p": b"s3cr3t"}))],
            '{"refs":[{"data":{"p":"czNjcjN0"},"kind":"Secret","name":"sec","type":"Opaque"}],"v":1}',
            "ac78644c30a2c23a35ae74adb43b051ea73e4246d9d33a5c9ce13a2e302b626d",
            id="secret",
        ),
        pytest.param(
            [Use("ConfigMap", "cfg", cm({"a": b"1"}), frozenset({"a", "zz"}))],
            '{"refs":[{"data":{"a":"MQ==","zz":null},"kind":"ConfigMap","name":"cfg"}],"v":1}',
            "d4fc3fb1c2821baae71b8ebbcf00a10d909f9ee70dbe3e400fa94d489626095e",
            id="missing-key",
        ),
        pytest.param(
            [
                Use(
                    "Secret",
                    "db",
                    Content(
                        "Secret",
                        "db",
                        {"spec.encryptedData": b'{"p":"Ag"}'},
                        None,
                        "bitnami.com/SealedSecret",
                    ),
                    frozenset({"p"}),  # a produced Secret is always used whole
                )
            ],
            '{"refs":[{"data":{"spec.encryptedData":"eyJwIjoiQWcifQ=="},"kind":"Secret",'
            '"name":"db","source":"bitnami.com/SealedSecret"}],"v":1}',
            "ccbb1ec9cc304381ad4e5fa951184dda5f7e3aa99abf0cd27aa77a8010289c4a",
            id="produced-by-a-source",
        ),
    ],
)
def test_known_answers(uses: list[Use], text: str, value: str) -> None:
    assert canonical(uses) == text
    assert hashlib.sha256(text.encode()).hexdigest() == value
    assert digest(uses) == value


def test_key_order_does_not_matter() -> None:
    a = cm({"a": b"1", "b": b"2"})
    b = cm({"b": b"2", "a": b"1"})
    assert digest([whole(a)]) == digest([whole(b)])


def test_source_order_does_not_matter() -> None:
    x, y = whole(cm({"a": b"1"}, "x")), whole(secret({"k": b"v"}, "y"))
    assert digest([x, y]) == digest([y, x])


def test_unambiguous_boundaries() -> None:
    # (ab, c) and (a, bc) must differ: the encoding is JSON, not concatenation
    assert digest([whole(cm({"ab": b"c"}))]) != digest([whole(cm({"a": b"bc"}))])


def test_key_precision() -> None:
    before = cm({"a": b"1", "b": b"2"})
    after = cm({"a": b"1", "b": b"CHANGED"})
    reads_a = lambda c: Use("ConfigMap", "cfg", c, frozenset({"a"}))  # noqa: E731
    reads_b = lambda c: Use("ConfigMap", "cfg", c, frozenset({"b"}))  # noqa: E731
    assert digest([reads_a(before)]) == digest([reads_a(after)])
    assert digest([reads_b(before)]) != digest([reads_b(after)])
    assert digest([whole(before)]) != digest([whole(after)])


def test_whole_use_wins_over_keys() -> None:
    c = cm({"a": b"1", "b": b"2"})
    merged = digest([Use("ConfigMap", "cfg", c, frozenset({"a"})), whole(c)])
    assert merged == digest([whole(c)])


def test_absent_differs_from_empty() -> None:
    assert digest([Use("ConfigMap", "cfg", None, None)]) != digest([whole(EMPTY_CM)])


def test_secret_type_matters() -> None:
    assert digest([whole(secret({}, t="Opaque"))]) != digest(
        [whole(secret({}, t="kubernetes.io/tls"))]
    )


def test_hmac_keyed_secrets() -> None:
    s = whole(secret({"p": b"hunter2"}))
    plain = digest([s])
    keyed = digest([s], secret_key=b"k1")
    assert keyed != plain
    assert keyed == digest([s], secret_key=b"k1")
    assert keyed != digest([s], secret_key=b"k2")
    # ConfigMaps are not keyed
    c = whole(cm({"a": b"1"}))
    assert digest([c], secret_key=b"k1") == digest([c])


def test_declared_dependency_in_another_namespace_is_hashed_with_its_namespace() -> None:
    """A pod-spec reference never crosses namespaces, so its entry has no namespace and
    every earlier value is unchanged; a declared ``other-ns/name`` adds one, and sorts
    after the workload's own object of the same name."""
    own = Use("ConfigMap", "ca", Content("ConfigMap", "ca", {"a": b"1"}), None)
    other = Use("ConfigMap", "ca", Content("ConfigMap", "ca", {"a": b"1"}), None, "platform")
    assert (
        canonical([own]) == '{"refs":[{"data":{"a":"MQ=="},"kind":"ConfigMap","name":"ca"}],"v":1}'
    )
    assert canonical([other, own]) == (
        '{"refs":[{"data":{"a":"MQ=="},"kind":"ConfigMap","name":"ca"},'
        '{"data":{"a":"MQ=="},"kind":"ConfigMap","name":"ca","namespace":"platform"}],"v":1}'
    )
    assert digest([own]) != digest([other])


# ------------------------------------------------------------------ the direct writer

_TEXT = st.text(
    st.sampled_from(
        [
            "a",
            "Z",
            "0",
            ".",
            "-",
            "_",
            '"',
            "\\",
            "\n",
            "\x00",
            "\x7f",
            "é",
            "€",
            "\U0001d11e",
            "\ud800",
        ]
    ),
    max_size=6,
)
_CONTENT = st.builds(
    Content,
    st.sampled_from(["ConfigMap", "Secret", "SecretProviderClass"]),
    _TEXT,
    st.dictionaries(_TEXT, st.binary(max_size=8), max_size=4),
    st.none() | _TEXT,
    st.none() | _TEXT,
)
_USE = st.builds(
    Use,
    st.sampled_from(["ConfigMap", "Secret", "SecretProviderClass"]),
    _TEXT,
    st.none() | _CONTENT,
    st.none() | st.frozensets(_TEXT, max_size=4),
    st.none() | _TEXT,
)


@settings(max_examples=500, deadline=None)
@given(st.lists(_USE, max_size=4), st.none() | st.binary(min_size=1, max_size=8))
def test_the_direct_writer_is_json_dumps_of_the_entries(
    uses: list[Use], secret_key: bytes | None
) -> None:
    """canonical writes the text itself; it must be, byte for byte, json.dumps of the
    entry dicts (py_canonical): any difference would roll every user's pods."""
    assert canonical(uses, secret_key) == py_canonical(uses, secret_key)


# uses of the same objects again: merged (one entry each, the union of keys)
_NAME = st.sampled_from(["a", "b", "é", 'q"\\\n'])  # few: the same object is used again
_MERGING = st.builds(
    Use,
    st.sampled_from(["ConfigMap", "Secret"]),
    _NAME,
    st.none() | _CONTENT,
    st.none() | st.frozensets(_TEXT, max_size=4),
    st.none() | st.sampled_from(["", "other"]),
)


@settings(max_examples=300, deadline=None)
@given(st.lists(_MERGING, max_size=6))
def test_the_direct_writer_merges_as_json_dumps_does(uses: list[Use]) -> None:
    assert canonical(uses) == py_canonical(uses)


# What Git does not see enters beside "refs" (plan/lock.py), only when there is some:
# the lock's fingerprints of what a workload uses, and the restarts asked for
EXTRA = {
    "lock": [{"fingerprint": "ab" * 32, "kind": "Secret", "name": "db"}],
    "restart": [{"reason": "new CA"}, {"kind": "ConfigMap", "name": "cfg", "reason": "resize"}],
}


def test_known_answer_with_a_lock_and_a_restart() -> None:
    uses = [whole(cm({"a": b"1"}))]
    text = (
        '{"lock":[{"fingerprint":"' + "ab" * 32 + '","kind":"Secret","name":"db"}],'
        '"refs":[{"data":{"a":"MQ=="},"kind":"ConfigMap","name":"cfg"}],'
        '"restart":[{"reason":"new CA"},{"kind":"ConfigMap","name":"cfg","reason":"resize"}],'
        '"v":1}'
    )
    assert canonical(uses, None, EXTRA) == text
    assert digest(uses, None, EXTRA) == hashlib.sha256(text.encode()).hexdigest()
    assert digest(uses, None, EXTRA) == (
        "1053809aa2e280e9b8e0d07ebcfb8cb7366b304d0816978da8965ebb00ab2650"
    )
    # none given, or empty: the encoding of version 1 as it always was
    assert canonical(uses, None, None) == canonical(uses) == canonical(uses, None, {})


@settings(max_examples=200, deadline=None)
@given(st.lists(_USE, max_size=3), st.booleans(), st.booleans())
def test_the_extra_fields_are_json_dumps_of_the_document(
    uses: list[Use], lock: bool, restart: bool
) -> None:
    extra = {k: v for k, v in EXTRA.items() if (lock if k == "lock" else restart)}
    refs = [entry(u) for u in merge_uses(uses)]
    assert canonical(uses, None, extra) == canonical_json(
        {"v": ENCODING_VERSION, "refs": refs, **extra}
    )

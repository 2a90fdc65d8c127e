"""cmhash.jsonout.dumps is ``json.dumps(indent=2, ensure_ascii=False)``, character for
character, on any JSON value (and on what explain and report really write)."""

from __future__ import annotations

import json
from typing import Any

from conftest import CORPUS, run_cmhash
from hypothesis import given
from hypothesis import strategies as st

from cmhash import jsonout
from cmhash.model import Level
from cmhash.report.changes import Change

_enums = st.sampled_from([*Level, *Change])  # text enums: json writes their value
_leaves = st.one_of(
    st.none(), st.booleans(), st.integers(), st.text(), st.floats(allow_nan=True), _enums
)
_values = st.recursive(
    _leaves,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.dictionaries(st.text(max_size=8), inner, max_size=4),
        st.tuples(inner, inner),
        st.dictionaries(st.integers(), inner, max_size=2),  # keys json.dumps converts
        st.dictionaries(_enums, inner, max_size=2),
    ),
    max_leaves=30,
)


@given(_values)
def test_same_as_the_standard_library(value: Any) -> None:
    want = json.dumps(value, indent=2, ensure_ascii=False)
    assert jsonout.dumps(value) == want  # the C writer, when compiled
    assert jsonout.py_dumps(value) == want  # its reference, the writer without it
    # the document form (explain's JSON output): the same text and a line break, as
    # UTF-8 bytes; the standard library's for what the C writer leaves to it (a lone
    # surrogate is not UTF-8: that one raises, as writing the str out always did)
    try:
        encoded = (want + "\n").encode("utf-8")
    except UnicodeEncodeError:
        return
    assert jsonout.document(value) == encoded


def test_the_document_is_written_by_c_as_bytes() -> None:
    import pytest

    if jsonout._C_DOCUMENT is None:
        pytest.skip("without the C extension")
    value = {"a": ["é", 1, None], "b": {}}
    made = jsonout._C_DOCUMENT(value)
    assert isinstance(made, bytes)
    assert made == (json.dumps(value, indent=2, ensure_ascii=False) + "\n").encode()
    assert jsonout._C_DOCUMENT({"a": 1.5}) is None  # left to json.dumps


def test_the_c_writer() -> None:
    """src/cmhash/native/_cjson.c: what it writes itself, and what it leaves to json.dumps."""
    import pytest

    if jsonout._C_WRITE is None:
        pytest.skip("without the C extension")
    write = jsonout._C_WRITE
    deep: Any = "x"
    for _ in range(100):  # deeper than its cache of indentation strings
        deep = [deep]
    for value in (deep, {"a": '\x00\x1f\x7fé\u2028"\\'}, {Level.ERROR: Level.INFO}, -(10**30)):
        assert write(value) == json.dumps(value, indent=2, ensure_ascii=False)
    odd = (1.5, {1: 2}, {"a": [1.0]}, type("D", (dict,), {})(a=1), [object()], ["\ud800"])
    for value in odd:
        assert write(value) is None
    assert jsonout.dumps({"a": [1.0]}) == json.dumps({"a": [1.0]}, indent=2)


def test_cases() -> None:
    for value in ({}, [], {"a": {}}, {"a": []}, [[], {}], 'é\u2028"\\\n', {"k": [1, True, None]}):
        assert jsonout.dumps(value) == json.dumps(value, indent=2, ensure_ascii=False)
    # what report holds, written here now instead of by the standard library
    value = {Level.ERROR: (Level.WARNING, ("a", 1)), "t": ()}
    assert jsonout.dumps(value) == json.dumps(value, indent=2, ensure_ascii=False)
    jsonout._write(value, "\n", [])  # without falling back (it raises _Other then)


def test_explain_and_report_outputs_parse_back_unchanged() -> None:
    for f in sorted(CORPUS.rglob("*.yaml"))[::4]:
        res = run_cmhash(["--no-config", "explain", "--format", "json", str(f)])
        if res.code != 0:
            continue
        text = res.stdout.decode()
        assert text == json.dumps(json.loads(text), indent=2, ensure_ascii=False) + "\n"


def test_the_optional_extensions_load_through_one_place() -> None:
    """_cjson (jsonout) and _cpack (transport) load through cext.optional: the
    module when it was compiled, None (the Python references) when it was not."""
    import importlib.util

    from cmhash.analyze import transport
    from cmhash.native import cext

    assert cext.optional("cmhash._not_an_extension") is None
    for name, users in (
        ("cmhash.native._cjson", [jsonout._C_WRITE, jsonout._C_DOCUMENT]),
        ("cmhash.native._cpack", [transport.packer]),
    ):
        built = importlib.util.find_spec(name) is not None
        assert (cext.optional(name) is not None) == built
        assert all((u is not None) == built for u in users), name

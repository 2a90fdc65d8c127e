"""How the workers' results cross the pipe (analyze/transport.py, _cpack.c): packed in C
when the extension is there, pickled otherwise or for what the packer does not take;
either way the parent gets back what the worker had, class for class."""

from __future__ import annotations

import enum
import pickle
from typing import Any, NamedTuple

import pytest
from conftest import CORPUS, IN_CI, ROOT
from hypothesis import HealthCheck, given, settings
from manifests import Stream, Style, render, streams, styles

from cmhash.analyze import transport
from cmhash.analyze.chunk import analyze_source
from cmhash.analyze.summaries import DocInfo, SkipReason
from cmhash.app.pipeline import kind_table
from cmhash.errors import InputError
from cmhash.read.source import SourceText
from cmhash.record import Record
from cmhash.settings.stages import stages
from cmhash.settings.values import Settings

try:
    from cmhash.native import _cpack  # type: ignore[attr-defined]  # noqa: F401
except ImportError:  # pragma: no cover - depends on the install
    if IN_CI:
        raise  # CI installs a compiler: the extension must be there
    pytest.skip("the C packer was not compiled", allow_module_level=True)

DEFAULT = Settings()
VERSIONED = Settings(versioned=True, versioned_keep=True, versioned_immutable=True)


def _infos(text: str, settings: Settings = DEFAULT) -> list[DocInfo]:
    try:
        return analyze_source(
            SourceText("x.yaml", text), kind_table(settings), stages(settings).analyze
        )
    except InputError:
        return []


def _inputs() -> list[str]:
    files = sorted(CORPUS.rglob("*.yaml")) + sorted((ROOT / "tests" / "cases").glob("*/input.yaml"))
    assert len(files) > 100
    texts = []
    for path in files:
        try:
            texts.append(path.read_text(encoding="utf-8"))
        except UnicodeDecodeError:  # a bad-input case
            continue
    return texts


def _sample() -> list[tuple[int, DocInfo]]:
    """kube-prometheus's manifests: Deployments, DaemonSets, ConfigMaps and Secrets."""
    text = "---\n".join(
        p.read_text() for p in sorted((CORPUS / "kube-prometheus" / "manifests").glob("*.yaml"))
    )
    infos = [(0, d) for d in _infos(text) if d.kept]
    assert len(infos) > 8
    return infos


def _same(a: Any, b: Any) -> None:
    """Equal, and of the same class at every level (== alone would take a tuple for a
    NamedTuple, or a str for a text enum)."""
    assert type(a) is type(b), (type(a), type(b))
    if isinstance(a, enum.Enum):
        assert a is b
    elif isinstance(a, (tuple, list)):
        assert len(a) == len(b)
        for x, y in zip(a, b, strict=True):
            _same(x, y)
    elif isinstance(a, dict):
        assert list(a) == list(b)
        for k in a:
            _same(a[k], b[k])
    elif isinstance(a, BaseException):
        assert (a.args, vars(a)) == (b.args, vars(b))
    elif isinstance(a, Record):
        for name in type(a).__slots__:
            _same(getattr(a, name), getattr(b, name))
    else:
        assert a == b


def _round_trip(result: Any) -> bytes:
    data = transport.encode(result)
    _same(transport.decode(data), result)
    _same(pickle.loads(pickle.dumps(result)), transport.decode(data))
    return data


@pytest.mark.parametrize("settings", [DEFAULT, VERSIONED], ids=["default", "versioned"])
def test_every_summary_of_the_corpus_and_the_cases_is_packed(settings: Settings) -> None:
    """Every DocInfo of real manifests packs (a class missing from the registry would
    quietly fall back to pickle, and lose the speed) and comes back the same."""
    kept = refused = 0
    for text in _inputs():
        infos = [d for d in _infos(text, settings) if d.kept]
        if not infos:
            continue
        kept += len(infos)
        result = ([(0, d) for d in infos], True)
        # a refused edit's error is an exception: that result is pickled
        errors = any(w.edit_error for d in infos for w in d.workloads)
        packed = _round_trip(result)[:1] == transport.PACKED
        assert packed != errors, text[:200]
        refused += errors
    assert kept > 300 and 0 < refused < 10


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(stream=streams(), style=styles)
def test_generated_streams_pack_and_come_back_the_same(stream: Stream, style: Style) -> None:
    text = render(stream, style).decode()
    for settings_ in (DEFAULT, VERSIONED):
        infos = [(0, d) for d in _infos(text, settings_) if d.kept]
        errors = any(w.edit_error for _, d in infos for w in d.workloads)
        assert (_round_trip((infos, True))[:1] == transport.PACKED) != errors


def test_shared_objects_stay_shared_and_enums_stay_members() -> None:
    """An object met twice is written once (as pickle's memo does): the parent gets one
    object, not a copy per use."""
    name = "".join(["shared", "-name"])  # not interned
    label = (("app", name),)
    data = transport.encode([name, label, name, label, SkipReason.JOB, SkipReason.JOB])
    assert data[:1] == transport.PACKED
    back = transport.decode(data)
    assert back[0] is back[2] and back[1] is back[3] and back[1][0][1] is back[0]
    assert back[4] is SkipReason.JOB and back[5] is SkipReason.JOB
    assert len(data) < len(transport.encode([name, label, "x" * 11, (("app", "y" * 11),)]))


class _Unregistered(NamedTuple):
    a: int


class _Text(str):
    pass


def _deep(n: int) -> Any:
    out: Any = []
    for _ in range(n):
        out = [out]
    return out


@pytest.mark.parametrize(
    "value",
    [
        _Unregistered(1),
        _Text("a str subclass"),
        2**64,
        -(2**63) - 1,
        "a lone surrogate \udc80",
        1.5,
        {1, 2},
        bytearray(b"x"),
        _deep(80),
        InputError("an input error", path="x.yaml"),
        ([(0, DocInfo(0, None, True))], [_Unregistered(2)]),  # type: ignore[arg-type]
    ],
    ids=lambda v: type(v).__name__,
)
def test_what_the_packer_does_not_take_is_pickled(value: Any) -> None:
    data = transport.encode(value)
    assert data[:1] == transport.PICKLED
    back = transport.decode(data)
    assert type(back) is type(value)
    assert repr(back) == repr(value)


def test_an_unset_slot_is_pickled() -> None:
    info = DocInfo(0, None, True)  # type: ignore[arg-type]
    del info.verify_error
    assert transport.encode(info)[:1] == transport.PICKLED


@pytest.mark.parametrize(
    "value",
    [
        None,
        True,
        False,
        0,
        -1,
        2**63 - 1,
        -(2**63),
        "",
        "ünï ☃ 𝄞",
        b"\x00\xff",
        (),
        [],
        {},
        frozenset({"a", "b"}),
    ],
    ids=repr,
)
def test_plain_values(value: Any) -> None:
    data = transport.encode({"v": [value, (value,)]})
    assert data[:1] == transport.PACKED
    _same(transport.decode(data), {"v": [value, (value,)]})


def test_without_the_extension_everything_is_pickled(monkeypatch: pytest.MonkeyPatch) -> None:
    infos = _sample()
    monkeypatch.setattr(transport, "packer", None)
    data = transport.encode((infos, True))
    assert data[:1] == transport.PICKLED
    _same(transport.decode(data), (infos, True))


@pytest.mark.parametrize("cut", [1, 2, 7, 100, -1])
def test_damaged_data_is_refused_not_misread(cut: int) -> None:
    """A cut or damaged result raises (the pool then does that batch again)."""
    infos = _sample()
    data = transport.encode((infos, True))
    assert data[:1] == transport.PACKED
    with pytest.raises(ValueError):
        transport.decode(data[:cut] if cut > 0 else data + b"N")


@pytest.mark.parametrize(
    "data", [b"", b"x", b"cZ", b"co\xff\xff", b"cr\x00\x00\x00\x00", b"ct\xff\xff\xff\xff"]
)
def test_garbage_is_refused(data: bytes) -> None:
    with pytest.raises(ValueError):
        transport.decode(data)


def test_the_registry_refuses_what_it_could_not_rebuild() -> None:
    class WithDict(tuple):  # type: ignore[type-arg]
        pass

    class Fields(NamedTuple):
        a: int

    class Extra(Fields):  # no __slots__: instances get a __dict__
        pass

    class Plain:
        __slots__ = ("a",)

    for cls in (WithDict, Extra, Plain):
        with pytest.raises(TypeError):
            transport._entry(cls)
    assert transport._entry(Fields) == (Fields, transport.HOW_TUPLE, None)
    assert transport._entry(SkipReason)[2] == tuple(SkipReason)
    assert transport._entry(DocInfo)[2] == DocInfo.__slots__

"""Property-based tests over generated manifest streams (tests/manifests.py).

The default profile runs a bounded number of examples; ``--hypothesis-profile=nightly``
runs many more (README, "Security and guarantees")."""

from __future__ import annotations

import difflib
import re
from dataclasses import replace
from typing import Any

from conftest import run_cmhash, strip_key
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from manifests import Config, Stream, Style, load_objects, render, streams, styles, with_config

KEY = "checksum/config"
ARGS = ["--no-config", "-q", "--jobs", "--pods", "-"]
ADDED = re.compile(r'^\s*(metadata:|annotations:|checksum/config: "[0-9a-f]{64}")\s*$')
common = settings(
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large], deadline=None
)


def _given(stream: Stream, *styles: Style) -> None:
    """Streams whose objects stay distinct under every style used (see manifests.py)."""
    assume(all(stream.unique_under(s) for s in styles))


def _run(data: bytes, *extra: str) -> bytes:
    res = run_cmhash([*ARGS[:-1], *extra, "-"], stdin=data)
    assert res.code == 0, res.stderr
    return res.stdout


def _template(obj: dict[str, Any]) -> dict[str, Any]:
    if obj["kind"] == "Pod":
        return obj
    if obj["kind"] == "CronJob":
        return obj["spec"]["jobTemplate"]["spec"]["template"]
    return obj["spec"]["template"]


def values(data: bytes) -> dict[tuple[str, str | None, str], str | None]:
    """(kind, namespace, name) of each workload -> its checksum (None: not annotated).
    A generateName-only workload is named ``prefix*``."""
    out = {}
    for obj in load_objects(data):
        if obj["kind"] in ("ConfigMap", "Secret"):
            continue
        meta = _template(obj).get("metadata") or {}
        value = (meta.get("annotations") or {}).get(KEY)
        m = obj["metadata"]
        name = m["name"] if "name" in m else m["generateName"] + "*"
        out[(obj["kind"], m.get("namespace"), name)] = value
    return out


@common
@given(streams(), styles)
def test_only_annotation_lines_change_and_it_is_idempotent(stream: Stream, style: Style) -> None:
    _given(stream, style)
    data = render(stream, style)
    out = _run(data)
    old, new = data.decode().splitlines(), out.decode().splitlines()
    for line in difflib.unified_diff(old, new, n=0, lineterm=""):
        if line.startswith(("---", "+++", "@@")):
            continue
        assert line.startswith("+") and ADDED.match(line[1:]), line
    assert [strip_key(o) for o in load_objects(out)] == load_objects(data)
    assert _run(out) == out
    if style.crlf:
        assert out.count(b"\n") == out.count(b"\r\n")
    assert out.endswith(b"\n") == data.endswith(b"\n")
    # exactly the workloads with a reference that resolves in the stream carry a value
    ns = stream.default_namespace(style)
    present = {(c.kind, c.name, c.namespace or ns or "") for c in stream.configs}
    got = values(out)
    for w in stream.workloads:
        in_stream = any((r.target, r.name, w.namespace or ns or "") in present for r in w.refs)
        annotated = in_stream and w.annotated  # generateName only when opted in
        assert (got[(w.kind, w.namespace, w.label)] is not None) == annotated, w


@common
@given(streams(), styles, st.randoms(use_true_random=False))
def test_document_order_does_not_matter(stream: Stream, style: Style, rnd: Any) -> None:
    _given(stream, style)
    n = len(stream.documents()) - len(stream.listed) + (1 if stream.listed else 0)
    order = list(range(n))
    rnd.shuffle(order)
    a = values(_run(render(stream, style)))
    b = values(_run(render(stream, style, order=order)))
    assert a == b


@common
@given(streams(), styles, st.data())
def test_changing_used_content_moves_exactly_its_users(
    stream: Stream, style: Style, data: Any
) -> None:
    _given(stream, style)
    pairs = [(i, k) for i, c in enumerate(stream.configs) for k in sorted(c.content())]
    assume(pairs)
    used = [
        (i, k)
        for i, k in pairs
        if any(
            w.uses(stream.configs[i], k, stream.default_namespace(style)) for w in stream.workloads
        )
    ]
    # mostly a key someone uses (the interesting case), sometimes any key
    cfg_index, key = data.draw(
        st.sampled_from(used if used and data.draw(st.integers(0, 4)) else pairs)
    )
    cfg = stream.configs[cfg_index]
    changed = replace(
        cfg, data=dict(cfg.data), string_data=dict(cfg.string_data), binary=dict(cfg.binary)
    )
    if key in changed.data:
        changed.data[key] += "-changed"
    if key in changed.string_data:
        changed.string_data[key] += "-changed"
    if key in changed.binary:
        changed.binary[key] += b"\x00"
    before = values(_run(render(stream, style)))
    after = values(_run(render(with_config(stream, cfg_index, changed), style)))
    users = {
        (w.kind, w.namespace, w.label)
        for w in stream.workloads
        if w.uses(cfg, key, stream.default_namespace(style)) and w.annotated
    }
    for wid, value in before.items():
        if wid in users:
            assert after[wid] != value, f"{wid} uses {cfg.kind}/{cfg.name}[{key}]"
        else:
            assert after[wid] == value, f"{wid} does not use {cfg.kind}/{cfg.name}[{key}]"


@common
@given(streams(), styles, styles, st.data())
def test_form_and_metadata_change_nothing(
    stream: Stream, style: Style, other: Style, data: Any
) -> None:
    """Quoting, indentation, flow/block, comments, CRLF, markers, key order, labels and
    base64 line wrapping are not content. (Helm output is another matter: ``# Source:``
    comments make the one named namespace the release namespace, so both renders must
    agree on that.)"""
    assume(stream.default_namespace(style) == stream.default_namespace(other))
    _given(stream, style, other)
    before = values(_run(render(stream, style)))
    cfgs: list[Config] = []
    for c in stream.configs:
        c = replace(
            c,
            labels={"changed": "yes"} if not c.labels else {},
            data=dict(reversed(list(c.data.items()))),
            string_data=dict(reversed(list(c.string_data.items()))),
            binary=dict(reversed(list(c.binary.items()))),
        )
        cfgs.append(c)
    reformatted = replace(stream, configs=cfgs)
    wrap = data.draw(st.booleans())
    assert values(_run(render(reformatted, other, b64_wrap=wrap))) == before


@common
@given(streams(), styles, st.data())
def test_unused_keys_change_nothing(stream: Stream, style: Style, data: Any) -> None:
    _given(stream, style)
    cfg_index = data.draw(st.integers(0, len(stream.configs) - 1))
    cfg = stream.configs[cfg_index]
    assume(
        not any(w.uses(cfg, "unused", stream.default_namespace(style)) for w in stream.workloads)
    )
    changed = replace(cfg, data={**cfg.data, "unused": "vnew"})
    before = values(_run(render(stream, style)))
    after = values(_run(render(with_config(stream, cfg_index, changed), style)))
    assert after == before

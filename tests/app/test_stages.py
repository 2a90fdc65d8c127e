"""Table-driven unit tests of the pipeline's stages, without the CLI: analyze (the map
stage), index and plan (the reduce stage), edit (the splice) and verify (the check).
Each case is a whole tiny manifest, written one line per string."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cmhash.analyze.chunk import analyze_chunk
from cmhash.analyze.summaries import DocInfo, SkipReason
from cmhash.edit.splice import PLACEHOLDER, Edit, annotation_edit, apply_edits, with_value
from cmhash.edit.verify import verify_edits
from cmhash.errors import NodeError
from cmhash.findings import Code, Finding
from cmhash.knowledge.kinds import DEFAULT_TABLE
from cmhash.model import ResourceId
from cmhash.parse.events import backend, parse_chunk
from cmhash.plan.index import build_index
from cmhash.plan.workload import plan_workload
from cmhash.read.source import SourceText
from cmhash.read.split import Chunk
from cmhash.settings.stages import stages
from cmhash.settings.values import Settings


def doc(*lines: str) -> str:
    return "".join(line + "\n" for line in lines)


def analyze(text: str, **settings: Any) -> DocInfo:
    src = SourceText("t.yaml", text)
    return analyze_chunk(
        src, 0, Chunk(0, len(text)), DEFAULT_TABLE, stages(Settings(**settings)).analyze, "\n"
    )


CM = doc(
    "apiVersion: v1", "kind: ConfigMap", "metadata:", "  name: cfg", "data:", "  a: '1'", "  b: '2'"
)
DEP = doc(
    "apiVersion: apps/v1",
    "kind: Deployment",
    "metadata:",
    "  name: web",
    "spec:",
    "  template:",
    "    spec:",
    "      containers:",
    "      - name: c",
    "        env:",
    "        - name: A",
    "          valueFrom: {configMapKeyRef: {name: cfg, key: a}}",
)

# ------------------------------------------------------------------ analyze

ANALYZE = [
    # (id, text, settings, expected summary: configs, workloads, skip, refs (kind/name/keys))
    ("configmap", CM, {}, (["ConfigMap/cfg"], [], None, [])),
    ("deployment-key-ref", DEP, {}, ([], ["Deployment/web"], None, [("ConfigMap", "cfg", ("a",))])),
    (
        "service-passes-through",
        doc("apiVersion: v1", "kind: Service", "metadata:", "  name: s"),
        {},
        ([], [], None, []),
    ),
    (
        "opted-out",
        DEP.replace("  name: web", "  name: web\n  annotations:\n    cmhash.io/skip: 'true'"),
        {},
        ([], ["Deployment/web"], SkipReason.OPTED_OUT, [("ConfigMap", "cfg", ("a",))]),
    ),
    (
        "no-template",
        doc(
            "apiVersion: apps/v1",
            "kind: Deployment",
            "metadata:",
            "  name: web",
            "spec:",
            "  replicas: 2",
        ),
        {},
        ([], ["Deployment/web"], SkipReason.NO_TEMPLATE, []),
    ),
    (
        "generate-name",
        DEP.replace("  name: web", "  generateName: web-"),
        {},
        ([], ["Deployment/web-*"], SkipReason.GENERATED, [("ConfigMap", "cfg", ("a",))]),
    ),
    (
        "generate-name-config",
        CM.replace("  name: cfg", "  generateName: cfg-"),
        {},
        ([], [], None, []),
    ),
    (
        "list",
        doc("apiVersion: v1", "kind: List", "items:")
        + "".join("- " + "\n  ".join(t.splitlines()) + "\n" for t in (CM, DEP)),
        {},
        (["ConfigMap/cfg"], ["Deployment/web"], None, [("ConfigMap", "cfg", ("a",))]),
    ),
    (
        "image-pull-secrets-opt-in",
        DEP.replace("    spec:\n", "    spec:\n      imagePullSecrets: [{name: reg}]\n"),
        {"image_pull_secrets": True},
        ([], ["Deployment/web"], None, [("ConfigMap", "cfg", ("a",)), ("Secret", "reg", None)]),
    ),
]


@pytest.mark.parametrize(
    ("text", "settings", "want"), [c[1:] for c in ANALYZE], ids=[c[0] for c in ANALYZE]
)
def test_analyze(text: str, settings: dict[str, Any], want: tuple[Any, ...]) -> None:
    info = analyze(text, **settings)
    configs, workloads, skip, refs = want
    assert [f"{c.kind}/{c.name}" for c in info.configs] == configs
    assert [w.label for w in info.workloads] == workloads
    if info.workloads:
        w = info.workloads[0]
        assert w.skip is skip
        assert [(r.target_kind, r.name, r.keys) for r in w.refs] == refs
        # a candidate edit exactly when the workload may be annotated and uses something
        assert (w.edit is not None) == (skip is None and bool(refs))


def test_analyze_candidate_edit_carries_the_placeholder() -> None:
    (w,) = analyze(DEP).workloads
    assert w.edit is not None and PLACEHOLDER in w.edit.text
    assert w.current is None and w.edit_error is None


# ------------------------------------------------------------------ index and plan


def plan(*texts: str, **settings: Any) -> tuple[list[Any], list[Finding]]:
    s = stages(Settings(**settings)).plan
    infos = [(SourceText(f"{i}.yaml", t), analyze(t, **settings)) for i, t in enumerate(texts)]
    findings: list[Finding] = []
    index = build_index([(src, c) for src, d in infos for c in d.configs], s, findings)
    plans = [plan_workload(src, w, index, s, findings) for src, d in infos for w in d.workloads]
    return plans, findings


PLANS = [
    # (id, texts, settings, annotated?, finding codes)
    ("in-stream", (CM, DEP), {}, True, []),
    ("missing", (DEP,), {}, False, [Code.MISSING_REFERENCE]),
    ("missing-key", (CM.replace("  a: '1'\n", ""), DEP), {}, True, [Code.MISSING_KEY]),
    (
        "namespace-mismatch",
        (CM.replace("  name: cfg", "  name: cfg\n  namespace: x"), DEP),
        {},
        False,
        [Code.NAMESPACE_MISMATCH],
    ),
    (
        "namespace-default",
        (CM.replace("  name: cfg", "  name: cfg\n  namespace: x"), DEP),
        {"namespace": "x"},
        True,
        [],
    ),
    (
        "opted-out-config",
        (CM.replace("  name: cfg", "  name: cfg\n  annotations:\n    cmhash.io/skip: 'true'"), DEP),
        {},
        False,
        [],
    ),
    ("duplicate", (CM, CM, DEP), {}, True, [Code.DUPLICATE_OBJECT]),
    (
        "job-gated",
        (CM, DEP.replace("apps/v1", "batch/v1").replace("Deployment", "Job")),
        {},
        False,
        [Code.JOB_NOT_ANNOTATED],
    ),
    (
        "job-opt-in",
        (CM, DEP.replace("apps/v1", "batch/v1").replace("Deployment", "Job")),
        {"jobs": True},
        True,
        [],
    ),
]


@pytest.mark.parametrize(
    ("texts", "settings", "annotated", "codes"), [c[1:] for c in PLANS], ids=[c[0] for c in PLANS]
)
def test_plan(
    texts: tuple[str, ...], settings: dict[str, Any], annotated: bool, codes: list[Code]
) -> None:
    plans, findings = plan(*texts, **settings)
    (p,) = plans
    assert (p.edit is not None) == annotated
    if annotated:
        assert p.value is not None and len(p.value) == 64 and p.value in p.edit.text
    assert [f.code for f in findings] == codes


def test_plan_value_follows_used_keys_only() -> None:
    base = plan(CM, DEP)[0][0].value
    assert plan(CM.replace("b: '2'", "b: '3'"), DEP)[0][0].value == base  # b is not used
    assert plan(CM.replace("a: '1'", "a: '9'"), DEP)[0][0].value != base


def test_plan_identity() -> None:
    (p,), _ = plan(CM, DEP, namespace="shop")
    assert p.id == ResourceId("apps", "Deployment", "shop", "web")


# ------------------------------------------------------------------ edit

V = "a" * 64
EDITS = [
    # (id, pod template mapping as written (under "template:"), expected after the edit)
    (
        "metadata-missing",
        doc("  template:", "    spec: {}"),
        doc(
            "  template:",
            "    metadata:",
            "      annotations:",
            f'        k: "{V}"',
            "    spec: {}",
        ),
    ),
    (
        "annotations-missing",
        doc("  template:", "    metadata:", "      labels: {a: b}", "    spec: {}"),
        doc(
            "  template:",
            "    metadata:",
            "      annotations:",
            f'        k: "{V}"',
            "      labels: {a: b}",
            "    spec: {}",
        ),
    ),
    (
        "annotations-block",
        doc("  template:", "    metadata:", "      annotations:", "        x: y", "    spec: {}"),
        doc(
            "  template:",
            "    metadata:",
            "      annotations:",
            f'        k: "{V}"',
            "        x: y",
            "    spec: {}",
        ),
    ),
    (
        "annotations-flow",
        doc("  template:", "    metadata:", "      annotations: {x: y}", "    spec: {}"),
        doc(
            "  template:",
            "    metadata:",
            f'      annotations: {{x: y, "k": "{V}"}}',
            "    spec: {}",
        ),
    ),
    (
        "annotations-null",
        doc("  template:", "    metadata:", "      annotations:", "    spec: {}"),
        doc(
            "  template:",
            "    metadata:",
            "      annotations:",
            f'        k: "{V}"',
            "    spec: {}",
        ),
    ),
    (
        "value-replaced",
        doc(
            "  template:",
            "    metadata:",
            "      annotations:",
            "        k: old  # keep",
            "    spec: {}",
        ),
        doc(
            "  template:",
            "    metadata:",
            "      annotations:",
            f'        k: "{V}"  # keep',
            "    spec: {}",
        ),
    ),
    (
        "four-space-indent",
        doc("    template:", "        spec: {}"),
        doc(
            "    template:",
            "        metadata:",
            "            annotations:",
            f'                k: "{V}"',
            "        spec: {}",
        ),
    ),
]


def _template_node(text: str) -> tuple[Any, Any]:
    root = parse_chunk("spec:\n" + text, 0, backend("fast"))[0]
    key, template = root.value[0][1].value[0]
    return template, key


@pytest.mark.parametrize(("before", "after"), [c[1:] for c in EDITS], ids=[c[0] for c in EDITS])
def test_edit_lifecycle(before: str, after: str) -> None:
    """Planned with the placeholder, given the value, spliced: only the edit changes."""
    text = "spec:\n" + before
    template, key = _template_node(before)
    candidate = annotation_edit(text, template, key, "k", PLACEHOLDER, "\n")
    assert candidate is not None
    final = with_value(candidate, V)
    assert apply_edits(text, [final]) == "spec:\n" + after
    # idempotent: on the result, no edit is needed
    template, key = _template_node(after)
    assert annotation_edit("spec:\n" + after, template, key, "k", V, "\n") is None


@pytest.mark.parametrize(
    ("before", "error"),
    [
        (doc("  template: &t", "    spec: {}"), "carries an anchor"),
        (
            doc("  template:", "    metadata:", "      annotations: *a", "    spec: {}"),
            "is an alias",
        ),
        (
            doc(
                "  template:",
                "    metadata:",
                "      annotations:",
                "        <<: {x: y}",
                "    spec: {}",
            ),
            "'<<' merge key",
        ),
        (
            doc(
                "  template:",
                "    metadata:",
                "      annotations:",
                "        k: |",
                "          x",
                "    spec: {}",
            ),
            "block scalar",
        ),
    ],
)
def test_edit_refusals(before: str, error: str) -> None:
    text = "spec:\n" + before
    if "*a" in text:
        text = "x: &a {}\n" + text
        root = parse_chunk(text, 0, backend("fast"))[0]
        key, template = root.value[1][1].value[0]
    else:
        template, key = _template_node(before)
    with pytest.raises(NodeError, match=error):
        annotation_edit(text, template, key, "k", PLACEHOLDER, "\n")


# ------------------------------------------------------------------ verify


def test_verify_accepts_exactly_the_planned_edit() -> None:
    text = DEP
    (w,) = analyze(text).workloads
    assert w.edit is not None and w.kind is not None
    be = backend("fast")
    src = SourceText("t.yaml", text)
    roots = parse_chunk(text, 0, be)
    new = apply_edits(text, [with_value(w.edit, V)])
    verify_edits(src, 0, 0, roots, new, [(0, w.kind, V)], "checksum/config", be)
    for broken, why in (
        (new.replace("name: c", "name: d"), "a value changed"),
        (new.replace(V, "b" * 64), "planned value"),
        (text, "annotation is missing"),
    ):
        with pytest.raises(NodeError, match=why):
            verify_edits(src, 0, 0, roots, broken, [(0, w.kind, V)], "checksum/config", be)


def _old_position(text: str, offset: int) -> tuple[int, int]:
    """SourceText.position before its line index became per block: every line start."""
    import bisect

    starts = [0] + [i + 1 for i, c in enumerate(text) if c == "\n"]
    i = bisect.bisect_right(starts, offset) - 1
    return i + 1, offset - starts[i] + 1


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.sampled_from(["\n", "a", "é", "€", "\U0001d11e", "\r\n", "x" * 50, "\n" * 3, "y" * 4096])
    ),
    st.lists(st.integers(0, 20_000), max_size=20),
)
def test_positions_as_from_every_line_start(pieces: list[str], offsets: list[int]) -> None:
    text = "".join(pieces)
    src = SourceText("x", text)
    every = [*offsets, 0, len(text), len(text) + 1, 4095, 4096, 4097, 8192]
    for offset in every:
        assert src.position(offset) == _old_position(text, offset), offset
    # many at once, in one pass (explain), in any order and with repeats
    assert src.lines(every) == {o: src.position(o)[0] for o in every}


def test_tuples_made_without_a_frame_have_every_field() -> None:
    """ConfigInfo, Chunk, Resolved, Use, ConfigEntry, Change and Edit (with its value)
    are made on the hot path as tuple.__new__(cls, (...)), which does not check the
    count: a field added to one of them must be added there too. Every such tuple of a
    run over examples and the corpus is whole."""
    from conftest import CORPUS, ROOT

    from cmhash.app import pipeline as app
    from cmhash.read.source import SourceText as Src

    files = [ROOT / "examples" / "app.yaml", *sorted(CORPUS.rglob("*.yaml"))[:15]]
    sources = [Src(str(f), f.read_text()) for f in files]
    result = app.run(sources, Settings(), keep_plans=True)
    assert result.config_index is not None
    configs = [e.info for e in result.config_index.objects.values()]
    resolved = [r for p in result.plans for r in p.resolved]
    assert configs and resolved
    entries = list(result.config_index.objects.values())
    edits = [p.edit for p in result.plans if p.edit is not None]
    assert result.changes and edits
    for t in [*configs, *resolved, *entries, *result.changes, *edits]:
        assert len(t) == len(type(t)._fields), type(t)
    from cmhash.plan.resolve import _use
    from cmhash.read.split import split_chunks

    chunks = split_chunks(sources[0].text)
    assert all(len(c) == len(Chunk._fields) for c in chunks)
    for r in resolved:
        if r.entry is not None and r.excluded is None:
            use = _use((r.ref.target_kind, r.ref.name, r.entry.info.content, None, None))
            assert len(use) == len(type(use)._fields)


def test_rendered_files_keep_the_documents_text_in_the_source() -> None:
    """render_files: the edited documents' text between the edits stays a range of the
    source (no copy of each document); the result is the edits spliced in."""
    from cmhash.app import pipeline as app
    from cmhash.settings.values import Settings

    text = (
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata: {a: '1'}\n---\n"
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\nspec:\n  template:\n"
        "    spec:\n      containers:\n      - name: x\n        envFrom:\n"
        "        - configMapRef: {name: c}\n"
    )
    src = SourceText("in.yaml", text)
    result = app.run([src], Settings())
    (f,) = result.files
    assert f.changed
    inserted = [s for s in f.segments if isinstance(s, str)]
    assert len(inserted) == 1 and "checksum/config" in inserted[0]
    assert len(inserted[0]) < 200  # the annotation, not the document
    (plan_edit,) = result.changes
    assert f.text.count("checksum/config") == 1 and f.text.startswith(text[:50])
    assert plan_edit.workload == "Deployment/d"


@pytest.mark.parametrize(
    ("edits", "unchanged"),
    [
        ([Edit(2, 3, "c")], True),  # the same text
        ([Edit(2, 3, "x")], False),  # the same length, another text
        ([Edit(2, 2, "x")], False),  # longer
        ([Edit(1, 3, "b"), Edit(3, 3, "c")], True),  # two edits that add up to nothing
        ([Edit(1, 3, "b"), Edit(3, 3, "x")], False),
    ],
)
def test_edits_that_change_nothing_leave_the_document_alone(
    edits: list[Edit], unchanged: bool
) -> None:
    from cmhash.analyze.summaries import DocInfo
    from cmhash.read.split import Chunk
    from cmhash.write.emit import _unchanged

    text = "abcdef"
    assert _unchanged(text, DocInfo(0, Chunk(0, 6), True), edits) is unchanged
    assert (apply_edits(text, edits) == text) is unchanged

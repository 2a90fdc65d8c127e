"""plan/resolve.py's resolve_workload in C (native/_ctree.c resolve_plain): for a workload whose
references are all plain, the same Resolved and Use as _py_resolve, its reference;
anything else (a pattern, a missing or excluded object, an unhashed imagePullSecret, a
source, a missing key, an odd type) is handed back, and Python does the workload."""

from __future__ import annotations

from typing import Any

import pytest
from conftest import CORPUS, IN_CI, ROOT
from hypothesis import HealthCheck, given, settings
from manifests import Stream, Style, render, streams, styles

from cmhash.analyze.refs import Reference
from cmhash.app import pipeline as app
from cmhash.errors import CmhashError
from cmhash.plan import resolve
from cmhash.plan.workplan import WorkloadPlan
from cmhash.read.source import SourceText
from cmhash.settings.values import Settings

if resolve._C_RESOLVE is None:  # pragma: no cover - depends on the install
    if IN_CI:
        raise AssertionError("CI compiles the C tree builder: resolve_plain must be there")
    pytest.skip("the C tree builder was not compiled", allow_module_level=True)

SETTINGS = [
    Settings(),
    Settings(image_pull_secrets=True),
    Settings(namespace="prod"),
    Settings(exclude_secrets=True),
]


def _plans(text: str, settings_: Settings) -> Any:
    """What the plan stage makes of ``text``: per workload, its resolved references,
    value, skip and edit; and the findings."""
    try:
        result = app.run([SourceText("in.yaml", text)], settings_, keep_plans=True)
    except CmhashError as exc:
        return ("error", str(exc))
    return (
        [(p.label, p.resolved, p.value, p.skip, p.edit) for p in result.plans],
        [(f.code, f.message, f.line) for f in result.findings],
    )


def _both(text: str, settings_: Settings, monkeypatch: pytest.MonkeyPatch) -> tuple[Any, int]:
    """The plans with and without the C path (which must agree), and how many workloads
    the C path made."""
    made = 0
    real = resolve._C_RESOLVE
    assert real is not None

    def counting(*args: Any) -> Any:
        nonlocal made
        out = real(*args)
        made += out is not None
        return out

    with monkeypatch.context() as m:
        m.setattr(resolve, "_C_RESOLVE", counting)
        with_c = _plans(text, settings_)
    with monkeypatch.context() as m:
        m.setattr(resolve, "_C_RESOLVE", None)
        without = _plans(text, settings_)
    assert with_c == without
    return with_c, made


def _texts() -> list[str]:
    files = sorted(CORPUS.rglob("*.yaml")) + sorted((ROOT / "tests" / "cases").glob("*/input.yaml"))
    out = []
    for path in files:
        try:
            out.append(path.read_text(encoding="utf-8"))
        except UnicodeDecodeError:
            continue
    return out


def test_the_corpus_and_the_cases_plan_the_same(monkeypatch: pytest.MonkeyPatch) -> None:
    made = 0
    for text in _texts():
        for s in SETTINGS:
            made += _both(text, s, monkeypatch)[1]
    assert made > 100  # the C path is taken, not only handed back


@settings(
    max_examples=100,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(stream=streams(), style=styles)
def test_generated_streams_plan_the_same(
    stream: Stream, style: Style, monkeypatch: pytest.MonkeyPatch
) -> None:
    text = render(stream, style).decode()
    for s in SETTINGS:
        _both(text, s, monkeypatch)


def test_the_benchmark_shape_is_made_in_c(monkeypatch: pytest.MonkeyPatch) -> None:
    """envFrom, a secretKeyRef, volume items and a projected Secret, all in the input:
    every workload in C."""
    from conftest import SHARED

    gen = SHARED / "bench" / "make_stream.py"
    if not gen.exists():
        pytest.skip("../shared/bench is not there")
    import subprocess
    import sys

    text = subprocess.run(
        [sys.executable, str(gen), "40"], capture_output=True, text=True, check=True
    ).stdout
    _, made = _both(text, Settings(), monkeypatch)
    assert made == 40


# ------------------------------------------------------------------ one workload


CM = """apiVersion: v1
kind: ConfigMap
metadata: {name: cfg, namespace: prod}
data: {a: "1", b: "2"}
---
apiVersion: v1
kind: Secret
metadata: {name: pull, namespace: prod}
type: kubernetes.io/dockerconfigjson
data: {.dockerconfigjson: e30=}
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: skipped
  namespace: prod
  annotations: {cmhash.io/skip: "true"}
data: {a: "1"}
"""


def _workload(spec: str, annotations: str = "{}") -> str:
    return (
        CM
        + "---\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: app\n"
        + f"  namespace: prod\n  annotations: {annotations}\nspec:\n  template:\n    spec:\n"
        + spec
    )


PLAIN = (
    "      containers:\n      - name: c\n        envFrom:\n        - configMapRef: {name: cfg}\n"
)
KEYED = (
    "      containers:\n      - name: c\n        env:\n        - name: A\n          valueFrom:\n"
    "            configMapKeyRef: {name: cfg, key: a}\n"
)


@pytest.mark.parametrize(
    ("spec", "annotations", "in_c"),
    [
        (PLAIN, "{}", True),
        (KEYED, "{}", True),
        (KEYED.replace("key: a", "key: zz"), "{}", False),  # a key the object lacks
        (PLAIN.replace("name: cfg", "name: gone"), "{}", False),  # not in the input
        (PLAIN.replace("name: cfg", "name: skipped"), "{}", False),  # excluded
        # imagePullSecrets are references only with --image-pull-secrets (then hashed)
        (PLAIN + "      imagePullSecrets: [{name: pull}]\n", "{}", True),
        (PLAIN, '{configmap.reloader.stakater.com/reload: "cf.*"}', False),  # a pattern
        (PLAIN, '{cmhash.io/extra-configmaps: "other/cfg"}', False),  # not in the input
        (PLAIN, '{cmhash.io/extra-configmaps: "prod/cfg"}', True),  # declared, present
    ],
    ids=[
        "plain",
        "keyed",
        "missing-key",
        "missing",
        "excluded",
        "image-pull",
        "pattern",
        "declared-missing",
        "declared",
    ],
)
def test_one_workload(
    spec: str, annotations: str, in_c: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    for s in (Settings(), Settings(image_pull_secrets=True)):
        _, made = _both(_workload(spec, annotations), s, monkeypatch)
        assert made == int(in_c)


def test_an_unhashed_image_pull_secret_is_handed_back() -> None:
    """(refs.py makes imagePullSecret references only when they are hashed; the C path
    still leaves one to Python when they are not.)"""
    c = resolve._C_RESOLVE
    assert c is not None
    text = _workload(PLAIN + "      imagePullSecrets: [{name: pull}]\n")
    result = app.run(
        [SourceText("in.yaml", text)], Settings(image_pull_secrets=True), keep_plans=True
    )
    plan = result.plans[0]
    assert result.config_index is not None
    objects = result.config_index.objects
    assert c(plan.info.refs, plan.namespace, objects, True) is not None
    assert c(plan.info.refs, plan.namespace, objects, False) is None


def test_odd_types_are_handed_back() -> None:
    c = resolve._C_RESOLVE
    assert c is not None
    ref = Reference("ConfigMap", "cfg", None, False, "envFrom", "f", 0)
    assert c((), "ns", {}, False) == ([], [])
    assert c((ref,), "ns", {}, False) is None  # not in the input
    assert c((tuple(ref),), "ns", {}, False) is None  # a tuple, not a Reference
    assert c((ref._replace(name=_Str("cfg")),), "ns", {}, False) is None
    with pytest.raises(TypeError):
        c([ref], "ns", {}, False)


class _Str(str):
    pass


def test_the_plan_is_the_same_through_the_c_path(monkeypatch: pytest.MonkeyPatch) -> None:
    """A WorkloadPlan's resolved list from C holds the same classes as Python's."""
    text = _workload(KEYED)
    result = app.run([SourceText("in.yaml", text)], Settings(), keep_plans=True)
    plan: WorkloadPlan = result.plans[0]
    assert [type(r).__name__ for r in plan.resolved] == ["Resolved"]
    assert type(plan.resolved[0].ref) is Reference

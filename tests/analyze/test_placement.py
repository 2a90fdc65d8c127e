"""Annotations written where their tool does not read them (knowledge/placement.py,
analyze/placement.py): every annotation cmhash reads on a workload has a row; each row,
written on the workload's metadata and on its pod template, gives a
``misplaced-annotation`` finding exactly where its tool does not read it, and there
cmhash does not read it either (the finding's "does nothing there" is true of cmhash's
checksum too); Reloader's one-place rule replayed from ShouldReload; one finding per
workload, a warning with ``--strict``, none for a tool ``--compat`` turns off."""

from __future__ import annotations

import json

import pytest
from conftest import run_cmhash

from cmhash.analyze.declared import ACKNOWLEDGE, ENABLED, SOURCES
from cmhash.analyze.versioned import VERSIONED
from cmhash.knowledge.compat import (
    CONFIG_EXCLUDED,
    DECLARATIONS,
    KAPP_REF,
    PLACED_PARTS,
    RELOADER_AUTO,
    RELOADER_KINDS,
    RELOADER_MATCH,
    RELOADER_SEARCH,
    WAVE_ON,
)
from cmhash.knowledge.placement import PLACEMENTS, TEMPLATE, WORKLOAD, placement
from cmhash.parse.resources import SKIP_ANNOTATION

CM = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: routes\ndata:\n  a: b\n"
KAPP_VALUE = "|\n{i}    apiVersion: v1\n{i}    kind: ConfigMap\n{i}    name: routes"


def _value(key: str, indent: str) -> str:
    if key.startswith(KAPP_REF):
        return KAPP_VALUE.format(i=indent)
    if key == SOURCES:
        return "configmaps"
    if key == ACKNOWLEDGE:
        return "missing-reference"
    if key.endswith(("/reload", "-configmaps", "-secrets")):
        return "routes"
    return '"true"'


def deployment(meta: dict[str, str] | None = None, template: dict[str, str] | None = None) -> str:
    def block(values: dict[str, str] | None, indent: str) -> str:
        if not values:
            return ""
        lines = "".join(f"{indent}  {k}: {_value(k, indent)}\n" for k, v in values.items())
        return f"{indent}annotations:\n{lines}"

    return (
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: app\n"
        + block(meta, "  ")
        + "spec:\n  template:\n    metadata:\n"
        + (block(template, "      ") or "      labels: {app: app}\n")
        + "    spec:\n      containers:\n      - name: app\n        image: app:1\n"
    )


def explain(text: str, *args: str) -> dict:  # type: ignore[type-arg]
    res = run_cmhash(
        ["explain", "--no-config", "--format", "json", *args, "-"], stdin=text.encode()
    )
    assert res.code == 0, res.stderr
    return json.loads(res.out)  # type: ignore[no-any-return]


def misplaced(report: dict) -> list[dict]:  # type: ignore[type-arg]
    return [f for f in report["findings"] if f["code"] == "misplaced-annotation"]


def test_every_annotation_cmhash_reads_on_a_workload_has_a_row() -> None:
    read = {d.annotation for d in DECLARATIONS} | set(CONFIG_EXCLUDED)
    read |= {RELOADER_AUTO, RELOADER_SEARCH, RELOADER_MATCH, WAVE_ON, KAPP_REF}
    read |= {k.typed_auto for k in RELOADER_KINDS} | {k.exclude for k in RELOADER_KINDS}
    read |= {ENABLED, SOURCES, ACKNOWLEDGE, VERSIONED, SKIP_ANNOTATION}
    assert {k for k in read if placement(k) is None} == set()
    assert placement(KAPP_REF + ".other") is placement(KAPP_REF + ".")
    for row in PLACEMENTS:
        assert any(part in row.annotation for part in PLACED_PARTS), row
        assert row.cite and row.read, row


ROWS = [p for p in PLACEMENTS if not p.annotation.endswith(".")]


@pytest.mark.parametrize("row", ROWS, ids=[p.annotation for p in ROWS])
@pytest.mark.parametrize("place", [WORKLOAD, TEMPLATE])
def test_a_finding_exactly_where_the_tool_does_not_read_it(row, place: str) -> None:  # type: ignore[no-untyped-def]
    values = {row.annotation: ""}
    text = deployment(values if place == WORKLOAD else None, values if place == TEMPLATE else None)
    found = misplaced(explain(CM + "---\n" + text))
    assert bool(found) == (place not in row.read), found
    if found:
        assert row.annotation in found[0]["message"] and row.who in found[0]["message"]


DECLARING = [
    *(d.annotation for d in DECLARATIONS),
    KAPP_REF,
    KAPP_REF + ".db",
]


@pytest.mark.parametrize("key", DECLARING)
@pytest.mark.parametrize("place", [WORKLOAD, TEMPLATE])
def test_cmhash_counts_a_declaration_only_where_its_tool_reads_it(key: str, place: str) -> None:
    """The note says "does nothing there": the declared ConfigMap is in the workload's
    checksum exactly when the annotation is where its tool reads it."""
    row = placement(key)
    assert row is not None
    values = {key: ""}
    text = deployment(values if place == WORKLOAD else None, values if place == TEMPLATE else None)
    workload = explain(CM + "---\n" + text)["workloads"][0]
    declared = [r for r in workload["references"] if r.get("name") == "routes"]
    assert bool(declared) == (place in row.read), workload


def test_a_kapp_reference_on_the_pod_template_is_no_dependency_now() -> None:
    """kapp reads explicit references on a resource's own annotations only
    (versioned_resource.go: res.Annotations()); cmhash read them on the pod template
    too, where kapp never updates them."""
    text = deployment(None, {KAPP_REF: ""})
    report = explain(CM + "---\n" + text)
    assert report["workloads"][0]["references"] == []
    assert (
        "kapp reads it on the Deployment's own metadata.annotations"
        in (misplaced(report)[0]["message"])
    )


# Reloader's ShouldReload (pkg/common/common.go): the reload list, auto, typed auto and
# search of one kind come from the metadata when any of the four is there, else all four
# from the pod template. (metadata, template) -> the template keys it does not read.
SHOULD_RELOAD = [
    ({RELOADER_AUTO: ""}, {"configmap.reloader.stakater.com/reload": ""}, True),
    (
        {"secret.reloader.stakater.com/reload": ""},
        {"configmap.reloader.stakater.com/reload": ""},
        False,
    ),
    (
        {"configmap.reloader.stakater.com/auto": ""},
        {"configmap.reloader.stakater.com/reload": ""},
        True,
    ),
    (
        {"configmap.reloader.stakater.com/auto": ""},
        {"secret.reloader.stakater.com/reload": ""},
        False,
    ),
    ({RELOADER_SEARCH: ""}, {RELOADER_AUTO: ""}, True),
    ({"configmaps.exclude.reloader.stakater.com/reload": ""}, {RELOADER_AUTO: ""}, False),
    ({}, {"configmap.reloader.stakater.com/reload": "", RELOADER_AUTO: ""}, False),
]


@pytest.mark.parametrize(("meta", "template", "ignored"), SHOULD_RELOAD)
def test_reloaders_one_place_rule(
    meta: dict[str, str], template: dict[str, str], ignored: bool
) -> None:
    found = misplaced(explain(CM + "---\n" + deployment(meta or None, template)))
    assert bool(found) == ignored, found
    if ignored:
        assert "so Reloader reads its annotations about" in found[0]["message"]


def test_auto_on_the_template_is_ignored_only_for_the_kinds_the_metadata_takes() -> None:
    text = deployment(
        {"configmap.reloader.stakater.com/reload": "", "secret.reloader.stakater.com/auto": ""},
        {RELOADER_AUTO: ""},
    )
    (found,) = misplaced(explain(CM + "---\n" + text))
    assert "about ConfigMaps and Secrets there only" in found["message"]


def test_one_finding_per_workload_a_warning_with_strict_none_when_compat_is_off() -> None:
    template = {WAVE_ON: "", "wave.pusher.com/extra-configmaps": "", SKIP_ANNOTATION: ""}
    text = CM + "---\n" + deployment({RELOADER_MATCH: ""}, template)
    (found,) = misplaced(explain(text))
    assert found["level"] == "info"
    assert found["line"] == 13  # the first of them, reloader.stakater.com/match
    for key in (*template, RELOADER_MATCH):
        assert f"{key} in " in found["message"]
    (strict,) = misplaced(explain(text, "--strict"))
    assert strict["level"] == "warning"
    (own,) = misplaced(explain(text, "--compat", "none"))
    assert SKIP_ANNOTATION in own["message"] and "Wave" not in own["message"]


def test_an_operators_pod_annotations_are_its_template() -> None:
    """A Prometheus' spec.podMetadata.annotations is where the operator copies pod
    annotations from: cmhash.io/skip there does nothing."""
    text = (
        "apiVersion: monitoring.coreos.com/v1\nkind: Prometheus\nmetadata:\n  name: k8s\n"
        "spec:\n  podMetadata:\n    annotations:\n      cmhash.io/skip: 'true'\n"
        "  configMaps: [routes]\n"
    )
    (found,) = misplaced(explain(CM + "---\n" + text))
    assert "cmhash.io/skip in spec.podMetadata.annotations does nothing there" in found["message"]


CRONJOB = (
    "apiVersion: batch/v1\nkind: CronJob\nmetadata:\n  name: cj\n{meta}spec:\n"
    "  schedule: '* * * * *'\n  jobTemplate:\n    spec:\n      template:\n        metadata:\n"
    "{template}          labels: {{app: cj}}\n        spec:\n          containers:\n"
    "          - {{name: c, image: i}}\n"
)


@pytest.mark.parametrize("kind", ["StatefulSet", "DaemonSet", "CronJob"])
@pytest.mark.parametrize("place", [WORKLOAD, TEMPLATE])
def test_wave_is_said_to_handle_only_its_kinds(kind: str, place: str) -> None:
    """Wave runs controllers for Deployments, StatefulSets and DaemonSets only: on a
    CronJob its annotation does nothing wherever it is (it was told to move it to the
    CronJob's metadata, where nothing reads it either)."""
    values = {WAVE_ON: ""}
    if kind == "CronJob":
        meta = f'  annotations: {{{WAVE_ON}: "true"}}\n' if place == WORKLOAD else ""
        template = f'          annotations: {{{WAVE_ON}: "true"}}\n' if place == TEMPLATE else ""
        text = CRONJOB.format(meta=meta, template=template)
    else:
        text = deployment(
            values if place == WORKLOAD else None, values if place == TEMPLATE else None
        ).replace("kind: Deployment", f"kind: {kind}")
    found = misplaced(explain(CM + "---\n" + text))
    if kind == "CronJob":
        (one,) = found
        assert "Wave handles only Deployments, StatefulSets and DaemonSets" in one["message"]
        assert one["message"].endswith("remove it"), one["message"]
    else:
        assert bool(found) == (place == TEMPLATE), found
        assert all("move it where it is read" in f["message"] for f in found)

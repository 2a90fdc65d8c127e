"""cmhash report compares pod templates as the API server stores them: a built-in
kind's zero values its Go types cannot tell from absent (knowledge/zerovalues.py).
Each through the CLI, on the same Deployment with one field added (a Helm chart's
``tolerations: {{ toYaml .Values.tolerations }}`` renders ``[]``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from conftest import ROOT, run_cmhash

from cmhash.knowledge.zerovalues import TYPES, fields, stored

CASE = ROOT / "tests" / "fixtures" / "report-stored"
OLD = (CASE / "zero-old.yaml").read_text()
POD = "      containers:\n"
CONTAINER = "        image: app:1\n"


def _plan(tmp_path: Path, old: str, new: str) -> dict[str, Any]:
    (tmp_path / "old.yaml").write_text(old)
    (tmp_path / "new.yaml").write_text(new)
    res = run_cmhash(
        ["report", "--no-config", "--format", "json", "old.yaml", "new.yaml"], cwd=tmp_path
    )
    assert res.code == 0, res.stderr
    data: dict[str, Any] = json.loads(res.out)
    return data


def _with(where: str, line: str, name: str = "web") -> str:
    """OLD named ``name`` with ``line`` added to the pod spec (``POD``) or the container
    (``CONTAINER``)."""
    doc = OLD.replace("name: web", f"name: {name}", 1)
    if where == POD:
        return doc.replace(POD, "      " + line + "\n" + POD, 1)
    return doc.replace(CONTAINER, CONTAINER + "        " + line + "\n", 1)


def _stream(cases: list[tuple[str, str]], added: bool) -> str:
    """One Deployment per case (web-0, web-1, ...), with its line when ``added``."""
    docs = [
        _with(where, line, f"web-{i}") if added else OLD.replace("name: web", f"name: web-{i}", 1)
        for i, (where, line) in enumerate(cases)
    ]
    return "---\n".join(d if d.endswith("\n") else d + "\n" for d in docs)


# the field as a chart renders it empty: a non-pointer Go field (or any slice, any map)
ABSENT = [
    (CONTAINER, "resources: {}"),
    (CONTAINER, "resources: {limits: {}, requests: {}}"),
    (CONTAINER, "args: []"),
    (CONTAINER, "command: []"),
    (CONTAINER, "workingDir: ''"),
    (CONTAINER, "stdin: false"),
    (CONTAINER, "tty: false"),
    (CONTAINER, "volumeMounts: []"),
    (CONTAINER, "env: []"),
    (CONTAINER, "ports: []"),
    (CONTAINER, "lifecycle: {preStop: {exec: {command: [sh]}}, postStart: null}"),
    (POD, "tolerations: []"),
    (POD, "nodeSelector: {}"),
    (POD, "imagePullSecrets: []"),
    (POD, "hostNetwork: false"),
    (POD, "hostPID: false"),
    (POD, "hostIPC: false"),
    (POD, "hostname: ''"),
    (POD, "nodeName: ''"),
    (POD, "dnsPolicy: ''"),  # "" is absent, then defaulted: ClusterFirst
    (POD, "volumes: []"),
    (POD, "initContainers: []"),
    (POD, "topologySpreadConstraints: []"),
    (POD, "securityContext: {}"),  # a pointer, but defaulted to {} (SetDefaults_PodSpec)
]


def test_a_zero_value_stored_as_absent_is_no_change(tmp_path: Path) -> None:
    # (the lifecycle case: the same hook on both sides, postStart: null only on NEW)
    cases = [c for c in ABSENT if not c[1].startswith("lifecycle")]
    for old, new in ((False, True), (True, False)):
        data = _plan(tmp_path, _stream(cases, old), _stream(cases, new))
        assert (data["restart"], data["notRestarting"]) == ([], [])
    # a zero value inside a list item: a probe's initialDelaySeconds 0 (a non-pointer int)
    probe = "readinessProbe: {tcpSocket: {port: 80}}"
    data = _plan(
        tmp_path,
        _with(CONTAINER, probe),
        _with(CONTAINER, probe.replace("}}", "}, initialDelaySeconds: 0}")),
    )
    assert data["restart"] == []


# a pointer field: an empty struct, false or 0 there is a value the server keeps
REAL = [
    (CONTAINER, "securityContext: {}", "spec.containers[c].securityContext"),
    (POD, "affinity: {}", "spec.affinity"),
    (POD, "enableServiceLinks: false", "spec.enableServiceLinks"),
    (POD, "terminationGracePeriodSeconds: 0", "spec.terminationGracePeriodSeconds"),
    (POD, "automountServiceAccountToken: false", "spec.automountServiceAccountToken"),
    (POD, "volumes: [{name: tmp, emptyDir: {}}]", "spec.volumes[tmp]"),
]


def test_a_pointer_fields_zero_is_a_change(tmp_path: Path) -> None:
    cases = [(where, line) for where, line, _ in REAL]
    data = _plan(tmp_path, _stream(cases, False), _stream(cases, True))
    got = {w["name"]: [c["field"] for c in w["causes"]] for w in data["restart"]}
    assert got == {f"web-{i}": [field] for i, (_, _, field) in enumerate(REAL)}


def test_a_real_change_beside_empty_fields_is_shown_without_them(tmp_path: Path) -> None:
    old = _with(CONTAINER, "resources: {limits: {}, requests: {cpu: 100m}}")
    new = _with(CONTAINER, "resources: {requests: {cpu: 200m}}")
    data = _plan(tmp_path, old, new)
    (w,) = data["restart"]
    assert [(c["field"], c["old"], c["new"]) for c in w["causes"]] == [
        (
            "spec.containers[c].resources",
            '{"requests":{"cpu":"100m"}}',
            '{"requests":{"cpu":"200m"}}',
        )
    ]


def test_which_kinds_read_the_template_as_go_types(tmp_path: Path) -> None:
    # an Argo Rollout decodes its template into core/v1 types and hashes json.Marshal of
    # it (omitempty): no change; a Knative Service gets a new Revision per generation of
    # the JSON the API server stores as sent: a change
    def kind(doc: str, api: str, name: str) -> str:
        return doc.replace("apps/v1\nkind: Deployment", f"{api}\nkind: {name}")

    rollout = kind(OLD, "argoproj.io/v1alpha1", "Rollout")
    data = _plan(
        tmp_path, rollout, kind(_with(POD, "hostNetwork: false"), "argoproj.io/v1alpha1", "Rollout")
    )
    assert data["restart"] == []
    knative = "serving.knative.dev/v1", "Service"
    data = _plan(tmp_path, kind(OLD, *knative), kind(_with(POD, "hostNetwork: false"), *knative))
    assert [c["field"] for w in data["restart"] for c in w["causes"]] == ["spec.hostNetwork"]


def test_the_table_as_core_v1_types_go_declares_it() -> None:
    # pinned rows of k8s.io/api core/v1 types.go (non-pointer: zero is absent; pointer:
    # a value) and every struct a row names is a row too
    pod, container = fields("PodSpec"), fields("Container")
    assert (pod["hostNetwork"], pod["nodeSelector"], pod["tolerations"]) == (
        "0",
        "{}",
        "[]Toleration",
    )
    assert (pod["affinity"], pod["securityContext"]) == ("*Affinity", "*PodSecurityContext")
    assert "enableServiceLinks" not in pod and "terminationGracePeriodSeconds" not in pod
    assert (container["resources"], container["args"], container["stdin"]) == (
        "ResourceRequirements",
        "[]",
        "0",
    )
    assert container["securityContext"] == "*SecurityContext"
    assert fields("ResourceRequirements")["limits"] == "{}"
    assert fields("EphemeralContainer").keys() >= container.keys()
    for name in TYPES:
        for code in fields(name).values():
            assert code in ("0", "{}", "[]") or code.lstrip("*[]") in TYPES, (name, code)
    assert stored({"spec": {"affinity": {}, "hostPID": False}}) == (
        True,
        {"spec": {"affinity": {}}},
    )

"""An update strategy the API server refuses is reported as refused (kubectl apply
fails, nothing rolls), never as a rollout with figures and a downtime warning; the
strategies it accepts still roll. Each case is a workload of the attacked shapes (a
DaemonSet with ``maxSurge: 1`` alone, as Traefik's chart users write it), OLD and NEW
differing only in the image."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from conftest import run_cmhash

from cmhash.knowledge.strategy import STRATEGY_CHECKS, refused_strategy

FIELD = {"Deployment": "strategy", "DaemonSet": "updateStrategy", "StatefulSet": "updateStrategy"}


def _doc(kind: str, name: str, strategy: str, image: str) -> str:
    return f"""apiVersion: apps/v1
kind: {kind}
metadata:
  name: {name}
  namespace: t
spec:
  replicas: 4
  selector:
    matchLabels:
      app: {name}
  {FIELD[kind]}: {strategy}
  template:
    metadata:
      labels:
        app: {name}
    spec:
      containers:
      - name: c
        image: {image}
""".replace("  replicas: 4\n", "" if kind == "DaemonSet" else "  replicas: 4\n")


REFUSED = [
    ("DaemonSet", "{rollingUpdate: {maxSurge: 1}}", "may not be set when maxUnavailable"),
    ("DaemonSet", "{rollingUpdate: {maxSurge: 1, maxUnavailable: 1}}", "may not be set"),
    ("DaemonSet", "{rollingUpdate: {maxSurge: 0, maxUnavailable: 0}}", "cannot be 0 when"),
    ("DaemonSet", "{rollingUpdate: {maxUnavailable: 200%}}", "greater than 100%"),
    ("DaemonSet", "{rollingUpdate: {maxSurge: 101%, maxUnavailable: 0}}", "greater than 100%"),
    ("StatefulSet", "{rollingUpdate: {maxUnavailable: 0}}", "cannot be 0"),
    ("StatefulSet", '{rollingUpdate: {maxUnavailable: "0%"}}', "cannot be 0"),
    ("StatefulSet", "{rollingUpdate: {maxUnavailable: 200%}}", "greater than 100%"),
    ("Deployment", "{rollingUpdate: {maxSurge: 0, maxUnavailable: 0}}", "may not be 0"),
    ("Deployment", '{rollingUpdate: {maxSurge: "0%", maxUnavailable: 0}}', "may not be 0"),
    ("Deployment", "{rollingUpdate: {maxUnavailable: 200%}}", "greater than 100%"),
    ("Deployment", "{type: Recreate, rollingUpdate: {maxSurge: 1}}", "'Recreate'"),
    ("Deployment", '{rollingUpdate: {maxSurge: "25"}}', "percentage"),
    ("Deployment", "{rollingUpdate: {maxSurge: -1}}", "integer ≥ 0"),
    ("Deployment", "{rollingUpdate: {maxSurge: 1.5}}", "neither an integer"),
    ("Deployment", "{type: Canary}", "not supported"),
]
ACCEPTED = [
    ("DaemonSet", "{rollingUpdate: {maxSurge: 1, maxUnavailable: 0}}"),
    ("DaemonSet", "{rollingUpdate: {maxUnavailable: 100%}}"),
    ("DaemonSet", "{type: OnDelete, rollingUpdate: {maxSurge: 1}}"),  # not validated
    ("StatefulSet", "{rollingUpdate: {maxUnavailable: 2}}"),
    ("Deployment", "{rollingUpdate: {maxSurge: 200%, maxUnavailable: 0}}"),
    ("Deployment", '{rollingUpdate: {maxSurge: "0%", maxUnavailable: "1%"}}'),
    ("Deployment", "{rollingUpdate: {maxSurge: 2.0, maxUnavailable: 0}}"),
    ("Deployment", "{type: Recreate}"),
]


def _report(tmp_path: Path, cases: list[tuple[str, str]]) -> dict[str, Any]:
    for side, image in (("old", "img:1"), ("new", "img:2")):
        docs = [_doc(k, f"w{i}", s, image) for i, (k, s) in enumerate(cases)]
        (tmp_path / f"{side}.yaml").write_text("---\n".join(docs))
    res = run_cmhash(
        ["report", "--no-config", "old.yaml", "new.yaml", "--format", "json", "--nodes", "4"],
        cwd=tmp_path,
    )
    assert res.code == 0, res.stderr
    data: dict[str, Any] = json.loads(res.out)
    return data


def test_refused_strategies_are_refused(tmp_path: Path) -> None:
    data = _report(tmp_path, [(k, s) for k, s, _ in REFUSED])
    assert data["restart"] == []
    got = {w["name"]: w for w in data["notRestarting"]}
    for i, (kind, _, words) in enumerate(REFUSED):
        w = got[f"w{i}"]
        assert w["outcome"] == "refused", (kind, w)
        assert words in w["reason"] and "the API server refuses" in w["reason"], w["reason"]
    assert not [f for f in data["findings"] if f["code"] == "rollout-downtime"]


def test_accepted_strategies_still_roll(tmp_path: Path) -> None:
    data = _report(tmp_path, ACCEPTED)
    rolls = {w["name"] for w in data["restart"]}
    assert rolls == {f"w{i}" for i, (k, s) in enumerate(ACCEPTED) if "OnDelete" not in s}


@pytest.mark.parametrize(
    ("kind", "spec", "refused"),
    [
        ("DaemonSet", {}, False),  # defaults: maxUnavailable 1, maxSurge 0
        ("Deployment", {}, False),  # defaults: 25% / 25%
        ("StatefulSet", {}, False),
        ("Deployment", {"strategy": {"type": "Recreate", "rollingUpdate": {}}}, True),
        ("Deployment", {"strategy": {"type": "Recreate", "rollingUpdate": None}}, False),
        ("DaemonSet", {"updateStrategy": {"rollingUpdate": {"maxSurge": "10%"}}}, True),
        ("Deployment", {"strategy": {"rollingUpdate": {"maxUnavailable": "100%"}}}, False),
        ("Deployment", {"strategy": {"rollingUpdate": {"maxUnavailable": True}}}, True),
    ],
)
def test_defaults_come_before_validation(kind: str, spec: dict[str, Any], refused: bool) -> None:
    assert (refused_strategy(kind, spec) is not None) == refused


def test_every_check_cites_upstream() -> None:
    for check in STRATEGY_CHECKS:
        assert "kubernetes/" in check.source, check.name


def test_whole_yaml_floats_are_the_integers_kubectl_sends(tmp_path: Path) -> None:
    """``1e3`` and ``4.0`` are YAML floats that kubectl sends as the JSON numbers 1000
    and 4, which decode into the int32 partition; ``"3"`` and ``1.5`` do not decode."""
    cases = [
        ("StatefulSet", "{rollingUpdate: {partition: 1e3}}"),
        ("StatefulSet", "{rollingUpdate: {partition: 4.0}}"),
        ("StatefulSet", '{rollingUpdate: {partition: "3"}}'),
        ("StatefulSet", "{rollingUpdate: {partition: 1.5}}"),
        ("StatefulSet", "{rollingUpdate: {partition: 2.0}}"),
    ]
    data = _report(tmp_path, cases)
    got = {w["name"]: w for w in data["notRestarting"] + data["restart"]}
    assert (got["w0"]["rule"], got["w1"]["rule"]) == ("statefulset-partition-all",) * 2
    assert "partition 1000 ≥ replicas 4" in got["w0"]["reason"]
    for name in ("w2", "w3"):
        assert got[name]["outcome"] == "refused" and "is no integer" in got[name]["reason"]
    assert got["w4"]["outcome"] == "partial" and got["w4"]["capacity"]["waves"] == 2
    (tmp_path / "new.yaml").write_text(
        _doc(
            "Deployment", "d", "{rollingUpdate: {maxSurge: 2.0, maxUnavailable: 0}}", "i:2"
        ).replace("replicas: 4", "replicas: 4.0")
    )
    (tmp_path / "old.yaml").write_text(_doc("Deployment", "d", "{}", "i:1"))
    res = run_cmhash(
        ["report", "--no-config", "old.yaml", "new.yaml", "--format", "json"], cwd=tmp_path
    )
    cap = json.loads(res.out)["restart"][0]["capacity"]
    assert (cap["replicas"], cap["surgePods"], cap["waves"]) == (4, 2, 2)

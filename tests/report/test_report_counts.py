"""cmhash report's pod counts where the manifests decide them though NEW leaves
``spec.replicas`` out (knowledge/replicas.py): OLD had the field, so apply deletes it and
the API server defaults it to 1. Each through the CLI."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from conftest import run_cmhash

DEPLOY = """apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: shop
{meta}spec:
  selector:
    matchLabels:
      app: web
  template:
    metadata:
      labels:
        app: web
    spec:
      containers:
      - name: c
        image: app:{v}
{replicas}"""
HPA = """---
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata:
  name: web
  namespace: shop
spec:
  scaleTargetRef:
    apiVersion: apps/v1
    kind: Deployment
    name: web
  maxReplicas: 10
  minReplicas: 3
"""


def _deploy(v: int, replicas: int | None = None, meta: str = "", hpa: bool = False) -> str:
    field = "" if replicas is None else f"  replicas: {replicas}\n"
    return DEPLOY.format(v=v, replicas=field, meta=meta) + (HPA if hpa else "")


def _plan(tmp_path: Path, old: str, new: str) -> dict[str, Any]:
    (tmp_path / "old.yaml").write_text(old)
    (tmp_path / "new.yaml").write_text(new)
    res = run_cmhash(
        ["report", "--no-config", "--format", "json", "old.yaml", "new.yaml"], cwd=tmp_path
    )
    assert res.code == 0, res.stderr
    data: dict[str, Any] = json.loads(res.out)
    return data


def _one(data: dict[str, Any]) -> dict[str, Any]:
    (w,) = data["restart"] + data["notRestarting"]
    return w


def test_replicas_removed_is_the_default_1(tmp_path: Path) -> None:
    # kubectl apply deletes a field the last applied configuration had and NEW has not
    # (declarative-config, merge patch calculation); the API server defaults it to 1: the
    # HPA docs' "one-time degradation of Pod counts"
    w = _one(_plan(tmp_path, _deploy(1, 3), _deploy(2)))
    assert w["outcome"] == "rolls"
    assert "replicas 1 from the API server's default (OLD's spec.replicas 3 is removed" in w["how"]
    # from 0: exactly one pod starts, no longer "unknown offline"
    w = _one(_plan(tmp_path, _deploy(1, 0), _deploy(2)))
    assert w["rule"] == "deployment-scale-from-zero"
    assert "starts 1 pods" in w["reason"] and "unknown" not in w["reason"]
    # with an HPA: down to 1, then the HPA scales it back to its range
    w = _one(_plan(tmp_path, _deploy(1, 5, hpa=True), _deploy(2, hpa=True)))
    assert "replicas 1..10 from the API server's default" in w["how"]
    assert "then HorizontalPodAutoscaler/web (3..10)" in w["how"]


def test_replicas_absent_on_both_sides_keeps_the_live_count(tmp_path: Path) -> None:
    w = _one(_plan(tmp_path, _deploy(1), _deploy(2)))
    assert w["how"] == "rolling update"
    w = _one(_plan(tmp_path, _deploy(1, hpa=True), _deploy(2, hpa=True)))
    assert w["how"] == "rolling update (replicas 3..10 from HorizontalPodAutoscaler/web)"


REPLACE = "  annotations:\n    argocd.argoproj.io/sync-options: Replace=true\n"


def test_argocd_replace_without_replicas_is_the_default_1(tmp_path: Path) -> None:
    # Replace=true: a sync is kubectl replace (a PUT of the whole object), and the API
    # server defaults the absent spec.replicas to 1; the HPA then scales it back
    w = _one(
        _plan(tmp_path, _deploy(1, meta=REPLACE, hpa=True), _deploy(2, meta=REPLACE, hpa=True))
    )
    assert w["how"].startswith(
        "rolling update (replicas 1..10 from the API server's default (spec.replicas is "
        "absent and Argo CD's Replace=true replaces the whole object), then "
        "HorizontalPodAutoscaler/web (3..10))"
    )
    w = _one(_plan(tmp_path, _deploy(1, meta=REPLACE), _deploy(2, meta=REPLACE)))
    assert "replicas 1 from the API server's default" in w["how"]
    # the live object's option counts as well (Argo CD from v3.4.0)
    w = _one(_plan(tmp_path, _deploy(1, meta=REPLACE), _deploy(2)))
    assert "Replace=true" in w["how"]
    # a count in the manifest is what the PUT sends
    w = _one(_plan(tmp_path, _deploy(1, 4, meta=REPLACE), _deploy(2, 4, meta=REPLACE)))
    assert w["how"] == "rolling update"

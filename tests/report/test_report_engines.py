"""cmhash report on what the deployment engines (Flux, Argo CD) and the API server do
with an object beyond a plain apply: a force mark on the live object, an object refused
on create, an Argo CD hook annotation that names no hook type. Each through the CLI, on
the shapes an attack on the report found."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from conftest import ROOT, run_cmhash

from cmhash.knowledge.engines import forced_by, skipped_by_argocd

CASE = ROOT / "tests" / "fixtures" / "report-engines"
FLUX = "  labels:\n    kustomize.toolkit.fluxcd.io/force: enabled\n"
SYNC = "argocd.argoproj.io/sync-options"


def _plan(tmp_path: Path, old: str, new: str) -> dict[str, Any]:
    (tmp_path / "old.yaml").write_text(old)
    (tmp_path / "new.yaml").write_text(new)
    res = run_cmhash(
        ["report", "--no-config", "--format", "json", "old.yaml", "new.yaml"], cwd=tmp_path
    )
    assert res.code == 0, res.stderr
    data: dict[str, Any] = json.loads(res.out)
    return data


def test_a_force_mark_on_the_live_object_recreates(tmp_path: Path) -> None:
    # OLD (the live object) has Flux's force label, NEW drops it and changes the
    # selector: fluxcd/pkg ssa shouldForceApply reads the existing object too
    old, new = (CASE / "force-old.yaml").read_text(), (CASE / "force-new.yaml").read_text()
    assert FLUX in old and FLUX not in new
    data = _plan(tmp_path, old, new)
    (w,) = data["restart"]
    assert (w["rule"], w["outcome"]) == ("recreated", "re-created")
    assert "Flux (kustomize.toolkit.fluxcd.io/force: enabled, on the live object)" in w["how"]
    # Argo CD's Force=true on the live object only (gitops-engine, from v3.4.0)
    argo = f"  annotations:\n    {SYNC}: Force=true\n"
    data = _plan(tmp_path, old.replace(FLUX, argo), new)
    (w,) = data["restart"]
    assert (w["rule"], w["outcome"]) == ("recreated", "re-created")
    assert f"Argo CD ({SYNC}: Force=true on the live object)" in w["how"]
    # on neither: refused
    data = _plan(tmp_path, old.replace(FLUX, ""), new)
    (w,) = data["notRestarting"]
    assert w["outcome"] == "refused"


def test_force_marks_as_each_engine_reads_them() -> None:
    def obj(options: str) -> dict[str, Any]:
        return {"metadata": {"annotations": {SYNC: options}}}

    # server-side apply is read on the object as synced only; Replace makes it a replace
    assert forced_by(obj("ServerSideApply=true"), obj("Force=true")) is None
    assert forced_by(obj("Replace=true,ServerSideApply=true"), obj("Force=true"))
    assert forced_by(obj("Force=true"), obj("ServerSideApply=true"))
    said = forced_by(obj("Replace=true"), obj("Replace=true,Force=true"))
    assert said == f"Argo CD ({SYNC}: Replace=true; Force=true on the live object)"
    assert forced_by(obj("Replace=true"), obj("Replace=true")) is None


def test_an_added_workload_whose_selector_misses_its_labels_is_refused(tmp_path: Path) -> None:
    # ValidateDeployment -> ValidateDeploymentSpec runs on create too: kubectl apply of
    # NEW fails for Deployment/api; the report listed it as added
    old, new = (CASE / "added-old.yaml").read_text(), (CASE / "added-new.yaml").read_text()
    data = _plan(tmp_path, old, new)
    assert data["added"] == []
    (w,) = data["notRestarting"]
    assert (w["name"], w["rule"], w["outcome"]) == ("api", "selector-mismatch", "refused")
    assert "refuses to create the Deployment" in w["reason"]
    assert [c["field"] for c in w["causes"]] == ["spec.selector", "spec.template.metadata.labels"]
    assert (data["summary"]["refused"], data["summary"]["added"]) == (1, 0)
    # the same workload with its labels right is an addition
    data = _plan(tmp_path, old, new.replace("app: apix", "app: api"))
    assert [a["name"] for a in data["added"]] == ["api"]
    assert data["notRestarting"] == []


def test_an_argocd_hook_value_that_names_no_hook_type_is_ignored(tmp_path: Path) -> None:
    # gitops-engine: Ignore(obj) = IsHook(obj) && len(Types(obj)) == 0 (NewHookType is
    # case-sensitive), and splitHooks leaves an ignored object out of the sync
    old, new = (CASE / "hook-old.yaml").read_text(), (CASE / "hook-new.yaml").read_text()
    data = _plan(tmp_path, old, new)
    # Skip, "Skip, Bogus", " Skip ", "skip": never applied; "PreSync,Skip": a hook
    assert [w["name"] for w in data["restart"]] == ["c"]
    assert sorted(w["name"] for w in data["notRestarting"]) == ["a", "b", "d", "e"]
    (e,) = [w for w in data["notRestarting"] if w["name"] == "e"]
    assert e["reason"].startswith("argocd.argoproj.io/hook: skip names no hook type of a sync")


def test_which_hook_values_argocd_ignores() -> None:
    def obj(**annotations: str) -> dict[str, Any]:
        return {"metadata": {"annotations": annotations}}

    hook, helm = "argocd.argoproj.io/hook", "helm.sh/hook"
    assert skipped_by_argocd(obj(**{hook: "Skip"})) is not None
    assert skipped_by_argocd(obj(**{hook: "presync"})) is not None
    assert skipped_by_argocd(obj(**{hook: ""})) is not None  # the key alone is a hook
    assert skipped_by_argocd(obj(**{hook: "PostDelete"})) is not None  # not a sync's
    assert skipped_by_argocd(obj(**{hook: "PreSync"})) is None
    assert skipped_by_argocd(obj(**{hook: "typo", helm: "pre-upgrade"})) is None  # Helm's
    assert skipped_by_argocd(obj(**{helm: "pre-upgrade"})) is None
    assert skipped_by_argocd(obj()) is None


def test_an_argo_rollout_resumed_is_released(tmp_path: Path) -> None:
    # spec.paused holds a Rollout at its step (argo-rollouts rollout/canary.go): removing
    # it lets an update held back go on, as for a Deployment
    old, new = (CASE / "resumed-old.yaml").read_text(), (CASE / "resumed-new.yaml").read_text()
    data = _plan(tmp_path, old, new)
    (w,) = data["restart"]
    assert (w["kind"], w["rule"], w["outcome"]) == ("Rollout", "rollout-resumed", "rolls")
    assert [c["type"] for c in w["causes"]] == ["released"]
    # still paused with a new template: nothing rolls
    data = _plan(tmp_path, old, old.replace("image: app:1", "image: app:2"))
    (w,) = data["notRestarting"]
    assert w["rule"] == "rollout-paused"

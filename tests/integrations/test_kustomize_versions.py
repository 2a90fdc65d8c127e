"""``cmhash patches --kustomization DIR`` and the two kustomize versions in use: a file of
several patches under ``patches:`` is one only kustomize v5 builds (cmhash says so, and
what to do for v4, when it adds the entry); a ``patches:`` list of bare file names is
kustomize v4's form, and cmhash's entry follows it, so that v4 still builds the
directory. Proved with the real standalone kustomize v4.5.4 and kubectl's v5."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
import yaml
from conftest import ROOT, Result, kustomize4, run_cmhash, tool

APP = ROOT / "examples" / "app.yaml"  # a Deployment and a CronJob: two patches
USER_PATCH = (
    "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n  namespace: shop\n"
    "spec:\n  replicas: 3\n"
)


def _build(version: int, d: Path) -> subprocess.CompletedProcess[str]:
    binary = [kustomize4(), "build"] if version == 4 else [tool("kubectl"), "kustomize"]
    return subprocess.run([*binary, str(d)], capture_output=True, text=True, check=False)


def _objects(done: subprocess.CompletedProcess[str]) -> dict[str, dict]:  # type: ignore[type-arg]
    assert done.returncode == 0, done.stderr
    return {d["kind"]: d for d in yaml.safe_load_all(done.stdout) if d}


def _dir(tmp: Path, kustomization: str) -> Path:
    d = tmp / "overlay"
    d.mkdir(parents=True)
    shutil.copy(APP, d / "app.yaml")
    (d / "replicas.yaml").write_text(USER_PATCH)
    (d / "kustomization.yaml").write_text(kustomization)
    return d


def _keep(d: Path, *extra: str) -> Result:
    """The recipe: ``kustomize build DIR | cmhash patches - --kustomization DIR`` (the
    build of the resources alone, as cmhash's patches do not enter the checksums)."""
    render = (d / "app.yaml").read_bytes()
    return run_cmhash(["patches", "--no-config", "-", "--kustomization", str(d), *extra], render)


def _annotated(objs: dict[str, dict]) -> bool:  # type: ignore[type-arg]
    meta = objs["Deployment"]["spec"]["template"].get("metadata") or {}
    return "checksum/config" in (meta.get("annotations") or {})


@pytest.mark.integration
def test_several_patches_under_patches_need_v5_and_cmhash_says_what_to_do(tmp_path: Path) -> None:
    d = _dir(tmp_path, "resources: [app.yaml]\n")
    done = _keep(d)
    assert done.code == 0, done.stderr
    note = (
        "cmhash: note: a file of several patches under patches: needs kustomize v5 (kubectl "
        "kustomize, Flux, Argo CD; kustomize v4 fails on it): for kustomize v4, take "
        "`- path: cmhash-patches.yaml` out of patches: (v4 builds the directory again) and "
        "run cmhash patches again with --kustomize-field patchesStrategicMerge"
    )
    assert note in done.stderr.splitlines()
    assert _annotated(_objects(_build(5, d)))
    v4 = _build(4, d)
    assert v4.returncode != 0 and "unable to parse SM or JSON patch" in v4.stderr
    # said once, when the entry goes in: a refresh of the patch file says nothing of it
    assert note not in _keep(d).stderr
    # what the note says, done with kustomize v4 alone, works with both
    text = (d / "kustomization.yaml").read_text()
    (d / "kustomization.yaml").write_text(text.replace("- path: cmhash-patches.yaml\n", ""))
    v4 = _build(4, d)
    assert v4.returncode == 0, v4.stderr
    psm = ["--kustomize-field", "patchesStrategicMerge"]
    done = run_cmhash(
        ["patches", "--no-config", "-", "--kustomization", str(d), *psm], v4.stdout.encode()
    )
    assert done.code == 0 and "note:" not in done.stderr
    assert _annotated(_objects(_build(4, d))) and _annotated(_objects(_build(5, d)))


@pytest.mark.integration
def test_the_field_given_moves_cmhashs_entry(tmp_path: Path) -> None:
    """--kustomize-field X takes cmhash's entry out of the other field: under both, v4
    fails on the patches: one and v5 applies the file twice."""
    d = _dir(tmp_path, "resources: [app.yaml]\n")
    assert _keep(d).code == 0
    assert _keep(d, "--kustomize-field", "patchesStrategicMerge").code == 0
    psm = "resources: [app.yaml]\npatchesStrategicMerge:\n- cmhash-patches.yaml\n"
    assert (d / "kustomization.yaml").read_text() == psm
    assert _annotated(_objects(_build(4, d))) and _annotated(_objects(_build(5, d)))
    assert _keep(d, "--check").code == 0  # the field it is in is kept without the option
    assert _keep(d, "--kustomize-field", "patches").code == 0
    back = "resources: [app.yaml]\npatches:\n- path: cmhash-patches.yaml\n"
    assert (d / "kustomization.yaml").read_text() == back


@pytest.mark.integration
def test_a_kustomization_with_patches_strategic_merge_gets_the_entry_there(tmp_path: Path) -> None:
    """kustomize v4's field in use (the user's patches, or cmhash's entry put there):
    without --kustomize-field the entry goes there too, and v4 still builds it."""
    kustomization = "resources: [app.yaml]\npatchesStrategicMerge:\n- replicas.yaml\n"
    d = _dir(tmp_path, kustomization)
    done = _keep(d)
    assert done.code == 0 and "note:" not in done.stderr
    assert (d / "kustomization.yaml").read_text() == kustomization.replace(
        "patchesStrategicMerge:\n", "patchesStrategicMerge:\n- cmhash-patches.yaml\n"
    )
    objs = _objects(_build(4, d))
    assert objs["Deployment"]["spec"]["replicas"] == 3 and _annotated(objs)
    assert _keep(d, "--check").code == 0


@pytest.mark.integration
def test_a_v4_patches_list_of_bare_names_gets_a_bare_name(tmp_path: Path) -> None:
    """kustomize v4 reads ``patches: [replicas.yaml]`` as patchesStrategicMerge (v5
    refuses it): cmhash adds its file as a bare name, and v4 builds both patches."""
    kustomization = "resources: [app.yaml]\npatches:\n- replicas.yaml\n"
    d = _dir(tmp_path, kustomization)
    assert _objects(_build(4, d))["Deployment"]["spec"]["replicas"] == 3
    assert _build(5, d).returncode != 0  # v5 refuses the user's list as it is
    done = _keep(d)
    assert done.code == 0, done.stderr
    text = (d / "kustomization.yaml").read_text()
    assert text == kustomization.replace("patches:\n", "patches:\n- cmhash-patches.yaml\n")
    assert "kustomize v4's form (v5 refuses it)" in done.stderr
    objs = _objects(_build(4, d))
    assert objs["Deployment"]["spec"]["replicas"] == 3 and _annotated(objs)
    assert _keep(d, "--check").code == 0
    # an item of the old form (`- path:`, written before) is not cmhash's there: v4 would
    # fail on it, so the bare name goes in beside it only when the file asks for it
    (d / "app.yaml").write_text("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: x\n")
    assert _keep(d).code == 0
    assert (d / "kustomization.yaml").read_text() == kustomization  # taken out again


@pytest.mark.integration
def test_patches_strategic_merge_beside_a_v4_patches_list_is_refused(tmp_path: Path) -> None:
    kustomization = "resources: [app.yaml]\npatches:\n- replicas.yaml\n"
    d = _dir(tmp_path, kustomization)
    done = _keep(d, "--kustomize-field", "patchesStrategicMerge")
    assert done.code == 2
    assert done.stderr.strip() == (
        f"cmhash: {d / 'kustomization.yaml'}:3:3: patches: lists a bare file name, which "
        "kustomize v4 reads as patchesStrategicMerge (and v5 refuses): a "
        "patchesStrategicMerge key beside it makes v4 drop one of the two lists without a "
        "word; leave out --kustomize-field and cmhash adds its file to patches: as a bare "
        "name, as the list's others"
    )
    assert (d / "kustomization.yaml").read_text() == kustomization
    assert not (d / "cmhash-patches.yaml").exists()
    # why: v4 with both keys builds, and the user's patch is gone
    (d / "cmhash-patches.yaml").write_text(run_cmhash(["patches", "--no-config", str(APP)]).out)
    (d / "kustomization.yaml").write_text(
        kustomization + "patchesStrategicMerge:\n- cmhash-patches.yaml\n"
    )
    objs = _objects(_build(4, d))
    assert objs["Deployment"]["spec"]["replicas"] == 2 and _annotated(objs)  # not 3

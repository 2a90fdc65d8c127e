"""Kustomize source trees in a repository walk (read/kustomize.py, read/kustfile.py),
through the CLI on the test repository of real manifests (tests/fixtures/envs-repo/,
kustomize's helloWorld example as a base with two overlays):

* a kustomization file that does not parse or has the wrong shape is one line with its
  ``file:line:col``: exit 2 when the walk reads files in or below its directory (any of
  them could be a patch; kustomize's default load restrictor keeps patches there), a
  warning without -v otherwise; the real kustomize refuses the same files;
* a file that is a resource of one kustomization and a patch of another is an object;
* each kustomization's note is printed once, however the walk reaches it."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
from conftest import ROOT, run_cmhash, tool

REPO = ROOT / "tests" / "fixtures" / "envs-repo"
STAGING = "kustomize/helloWorld/overlays/staging"
POINTER = "is a kustomization that patches or generates objects"

# broken staging kustomizations -> (line, column) of the problem, and what it says
BROKEN = {
    "unclosed flow sequence": (
        "resources:\n- ../../base\npatches:\n- path: map.yaml\n  target: [\n",
        (6, 1),
        "YAML: ",
    ),
    "patches is a string": (
        "resources:\n- ../../base\npatches: map.yaml\n",
        (3, 10),
        "patches must be a list",
    ),
    "a patch path is a mapping": (
        "resources:\n- ../../base\npatches:\n- path: {file: map.yaml}\n",
        (4, 9),
        "patches[].path must be a file name",
    ),
    "patchesStrategicMerge item is a mapping": (
        "resources:\n- ../../base\npatchesStrategicMerge:\n- {path: map.yaml}\n",
        (4, 3),
        "each item of patchesStrategicMerge must be a string",
    ),
    "generator files is a string": (
        "resources:\n- ../../base\nconfigMapGenerator:\n- name: x\n  files: map.yaml\n",
        (5, 10),
        "configMapGenerator[].files must be a list of strings",
    ),
    "resources is a mapping": (
        "resources: {base: ../../base}\npatches:\n- path: map.yaml\n",
        (1, 12),
        "resources must be a list of strings",
    ),
    "a list, not a mapping": ("- ../../base\n- map.yaml\n", (1, 1), "must be a mapping"),
    "a tab in the indentation": ("resources:\n\t- ../../base\n", (2, 1), "YAML: "),
}


def _copy(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    shutil.copytree(REPO, repo)
    return repo


@pytest.mark.parametrize("case", list(BROKEN))
@pytest.mark.parametrize("how", ["walk", "named"])
def test_a_broken_kustomization_is_exit_2_at_its_position(
    tmp_path: Path, case: str, how: str
) -> None:
    """Walked (``--check .``) or with the overlay's files named (pre-commit's
    pass_filenames): the patch could be taken for the ConfigMap, so the run stops at the
    kustomization's line and column, one line, nothing written."""
    text, (line, column), says = BROKEN[case]
    repo = _copy(tmp_path)
    (repo / STAGING / "kustomization.yaml").write_text(text)
    args = ["."] if how == "walk" else [f"{STAGING}/map.yaml", "kustomize/helloWorld/base"]
    res = run_cmhash(["--no-config", "-i", *args], cwd=repo)
    assert res.code == 2, res.stderr
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1, res.stderr
    want = f"cmhash: {STAGING}/kustomization.yaml:{line}:{column}: kustomization file: "
    assert lines[0].startswith(want), lines[0]
    assert says in lines[0] and "--exclude" in lines[0]
    assert "Traceback" not in res.stderr
    deploy = "kustomize/helloWorld/base/deployment.yaml"
    assert (repo / deploy).read_bytes() == (REPO / deploy).read_bytes()


@pytest.mark.integration
@pytest.mark.parametrize("case", list(BROKEN))
def test_the_real_kustomize_refuses_them_too(tmp_path: Path, case: str) -> None:
    repo = _copy(tmp_path)
    (repo / STAGING / "kustomization.yaml").write_text(BROKEN[case][0])
    run = subprocess.run(
        [tool("kustomize4"), "build", STAGING], cwd=repo, capture_output=True, text=True
    )
    assert run.returncode != 0, run.stdout


def test_a_broken_kustomization_with_nothing_to_change_is_a_warning(tmp_path: Path) -> None:
    """No file of the walk in or below its directory: nothing it could name is read, so
    the run goes on; the warning is shown without -v, and -q hides it."""
    repo = _copy(tmp_path)
    (repo / "notes").mkdir()
    (repo / "notes" / "kustomization.yaml").write_text("- a\n- b\n")
    (repo / "notes" / "README.md").write_text("not a manifest\n")
    res = run_cmhash(["--no-config", "--check", "."], cwd=repo)
    assert res.code == 1, res.stderr
    warn = [x for x in res.stderr.splitlines() if "notes/kustomization.yaml" in x]
    assert warn == [
        "notes/kustomization.yaml:1:1: warning: kustomization file: a kustomization must be "
        "a mapping of fields; kustomize refuses it (no file of this run is in its directory, "
        "so nothing read here changes)"
    ]
    quiet = run_cmhash(["--no-config", "-q", "--check", "."], cwd=repo)
    assert quiet.code == 1 and "notes/kustomization.yaml" not in quiet.stderr


def test_an_empty_kustomization_names_nothing(tmp_path: Path) -> None:
    repo = _copy(tmp_path)
    (repo / STAGING / "kustomization.yaml").write_text("# nothing yet\n")
    res = run_cmhash(["--no-config", "-v", "--check", STAGING], cwd=repo)
    assert res.code == 0, res.stderr  # map.yaml is read as the object it now is
    assert "kustomization file" not in res.stderr


def test_only_the_first_document_counts_as_kustomize_reads_it(tmp_path: Path) -> None:
    """kustomize build reads the first document of a kustomization file (the second's
    patches are not applied): so map.yaml is no patch, and is read as an object."""
    repo = _copy(tmp_path)
    text = "resources:\n- ../../base\n---\npatches:\n- path: map.yaml\n"
    (repo / STAGING / "kustomization.yaml").write_text(text)
    res = run_cmhash(["--no-config", "-v", STAGING], cwd=repo)
    assert res.code == 0, res.stderr
    assert "Have a pineapple" in res.out and "map.yaml" not in res.stderr


@pytest.mark.integration
def test_the_real_kustomize_reads_the_first_document(tmp_path: Path) -> None:
    repo = _copy(tmp_path)
    text = "resources:\n- ../../base\n---\npatches:\n- path: map.yaml\n"
    (repo / STAGING / "kustomization.yaml").write_text(text)
    run = subprocess.run(
        [tool("kustomize4"), "build", STAGING], cwd=repo, capture_output=True, text=True
    )
    assert run.returncode == 0, run.stderr
    assert "Have a pineapple" not in run.stdout and "the-map" in run.stdout


# a repository whose root kustomization patches a file that app/'s lists as a resource
ROOT_K = "resources:\n- app\npatches:\n- path: app/configMap.yaml\n"
APP_K = "resources:\n- deployment.yaml\n- configMap.yaml\n"


def _both(tmp_path: Path) -> Path:
    repo = tmp_path / "both"
    (repo / "app").mkdir(parents=True)
    base = REPO / "kustomize/helloWorld/base"
    for f in ("deployment.yaml", "configMap.yaml"):
        shutil.copy(base / f, repo / "app" / f)
    (repo / "kustomization.yaml").write_text(ROOT_K)
    (repo / "app" / "kustomization.yaml").write_text(APP_K)
    return repo


@pytest.mark.parametrize("order", ["walk", "named"])
def test_a_resource_of_one_and_a_patch_of_another_is_an_object(tmp_path: Path, order: str) -> None:
    """app/configMap.yaml is the ConfigMap app/ deploys (its resource) and a patch of the
    root kustomization: it is kept as the object, the Deployment is annotated with its
    checksum (the same as on app/ alone), and -v says why it was kept."""
    repo = _both(tmp_path)
    args = ["."] if order == "walk" else ["app/configMap.yaml", "app/deployment.yaml"]
    res = run_cmhash(["--no-config", "-v", "--check", *args], cwd=repo)
    assert res.code == 1, res.stderr
    assert "would update" in res.stderr and "app/deployment.yaml" in res.stderr
    assert "skipped" not in res.stderr or "configMap.yaml:" not in res.stderr
    assert (
        "app/configMap.yaml is a resource of app/kustomization.yaml (an object there) and a "
        "kustomize patch of kustomization.yaml: read as an object" in res.stderr
    )
    assert "missing-reference" not in res.stderr
    alone = run_cmhash(["--no-config", "app/configMap.yaml", "app/deployment.yaml"], cwd=repo)
    assert run_cmhash(["--no-config", "-i", *args], cwd=repo).code == 0
    assert (repo / "app/deployment.yaml").read_text() in alone.out


@pytest.mark.integration
def test_the_real_kustomize_deploys_it_as_an_object(tmp_path: Path) -> None:
    """What the rule stands on: kustomize build app/ emits the ConfigMap from that file."""
    repo = _both(tmp_path)
    run = subprocess.run(
        [tool("kustomize4"), "build", "app"], cwd=repo, capture_output=True, text=True
    )
    assert run.returncode == 0, run.stderr
    assert "kind: ConfigMap" in run.stdout and "the-map" in run.stdout


@pytest.mark.parametrize(
    "args",
    [
        ["."],
        ["kustomize"],
        ["kustomize", f"{STAGING}/map.yaml"],
        [".", "kustomize/helloWorld/overlays"],
        ["-i", "kustomize/helloWorld/overlays", "kustomize/helloWorld/base"],
    ],
)
def test_each_kustomization_note_is_printed_once(tmp_path: Path, args: list[str]) -> None:
    """The walk reaches the overlays from a directory and from a named file (relative
    and absolute paths): still one note per kustomization."""
    repo = _copy(tmp_path)
    if "-i" not in args:
        args = ["--check", *args]
    res = run_cmhash(["--no-config", "-v", *args], cwd=repo)
    assert res.code in (0, 1), res.stderr
    notes = [x for x in res.stderr.splitlines() if POINTER in x]
    assert sorted(notes) == sorted(set(notes)) and len(notes) == 2, notes
    skipped = [x for x in res.stderr.splitlines() if "skipped" in x and "map.yaml" in x]
    assert len(skipped) <= 1, skipped


def test_a_kustomization_reached_through_a_link_is_read_once(tmp_path: Path) -> None:
    repo = _copy(tmp_path)
    os.symlink(repo / "kustomize/helloWorld/overlays", repo / "overlays-link")
    res = run_cmhash(["--no-config", "--check", "kustomize", "overlays-link"], cwd=repo)
    notes = [x for x in res.stderr.splitlines() if POINTER in x]
    assert len(notes) == 2, res.stderr


def test_a_broken_kustomization_read_as_a_manifest_alone_is_a_warning(tmp_path: Path) -> None:
    """A kustomization with apiVersion and kind is read as a manifest (passed through):
    alone in its directory it can name no other file, so its wrong shape is a warning."""
    (tmp_path / "k").mkdir()
    (tmp_path / "k" / "kustomization.yaml").write_text(
        "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\npatches: x.yaml\n"
    )
    res = run_cmhash(["--no-config", "--check", "."], cwd=tmp_path)
    assert res.code == 0, res.stderr
    assert res.stderr.startswith("k/kustomization.yaml:3:10: warning: kustomization file:")


@pytest.mark.parametrize("second", ["kustomization.yml", "Kustomization"])
def test_two_kustomization_files_in_one_directory_are_exit_2(tmp_path: Path, second: str) -> None:
    """staging/ with kustomization.yaml and a second kustomization file: kustomize
    builds neither ("Found multiple kustomization files"). cmhash read the first only,
    so a patch the second names was hashed as an object; now it is the broken
    kustomization's exit 2, at the second file."""
    repo = _copy(tmp_path)
    staging = repo / STAGING
    (staging / second).write_text((staging / "kustomization.yaml").read_text())
    res = run_cmhash(["--no-config", "--check", "."], cwd=repo)
    assert res.code == 2, res.stderr
    want = f"cmhash: {STAGING}/{second}:1:1: kustomization file: kustomization.yaml is a "
    assert res.stderr.startswith(want), res.stderr
    assert len(res.stderr.strip().splitlines()) == 1


@pytest.mark.integration
def test_the_real_kustomize_refuses_two_kustomization_files(tmp_path: Path) -> None:
    repo = _copy(tmp_path)
    staging = repo / STAGING
    (staging / "Kustomization").write_text((staging / "kustomization.yaml").read_text())
    run = subprocess.run(
        [tool("kustomize4"), "build", STAGING], cwd=repo, capture_output=True, text=True
    )
    assert run.returncode != 0 and "multiple kustomization files" in run.stderr, run.stdout

"""The environment tie (plan/scopes.py rule 2) through the CLI, for every way a workload
names a ConfigMap or Secret and only for workloads cmhash annotates:

* a Reloader pattern (``configmap.reloader.stakater.com/reload: "mys.*"``, stakater
  Reloader ``internal/pkg/handler/upgrade.go``: the reload list's items are regular
  expressions matched against the changed object's name) stands for every name it
  matches, each resolved like a plain reference: the nearest directory's object, or the
  tie error when two are equally near;
* a workload that is left alone (opted out, ignored or not included by the
  configuration, opt-in mode, a Job without ``--jobs``) never fails the run.

On the test repository of real manifests (tests/fixtures/envs-repo/)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml
from conftest import ROOT, run_cmhash

REPO = ROOT / "tests" / "fixtures" / "envs-repo"
STS = (REPO / "environments/dev/mysql-statefulset.yaml").read_text()
RELOAD = "configmap.reloader.stakater.com/reload"

# a Deployment whose only link to the ConfigMap is a Reloader pattern
WATCHER = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: watcher
  annotations:
    {key}: "{pattern}"
spec:
  selector:
    matchLabels: {{app: watcher}}
  template:
    metadata:
      labels: {{app: watcher}}
    spec:
      containers:
      - name: c
        image: busybox
"""


def _copy(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    shutil.copytree(REPO, repo)
    return repo


def _checksum(text: str, name: str) -> str | None:
    for d in yaml.safe_load_all(text):
        if d and d["metadata"]["name"] == name and d["kind"] in ("Deployment", "StatefulSet"):
            ann = d["spec"]["template"]["metadata"].get("annotations") or {}
            return ann.get("checksum/config")
    raise AssertionError(name)


@pytest.mark.parametrize("pattern", ["mys.*", "mysql", "my[s]ql|other"])
def test_a_pattern_matching_a_tie_is_the_tie_error(tmp_path: Path, pattern: str) -> None:
    """Above both environments, the pattern matches dev's and prod's ConfigMap 'mysql'
    equally near: exit 2 at the annotation, both files named, nothing written."""
    repo = _copy(tmp_path)
    watcher = repo / "environments" / "watcher.yaml"
    watcher.write_text(WATCHER.format(key=RELOAD, pattern=pattern))
    res = run_cmhash(["--no-config", "-i", "."], cwd=repo)
    assert res.code == 2, res.stderr
    line = res.stderr.strip().splitlines()[-1]
    assert line.startswith("cmhash: ./environments/watcher.yaml:6:"), line
    assert f"matched by {RELOAD}: {pattern!r}" in line
    assert (
        "./environments/dev/mysql-configmap.yaml and ./environments/prod/mysql-configmap.yaml "
        "both define" in line
    )
    assert watcher.read_text() == WATCHER.format(key=RELOAD, pattern=pattern)
    dev = repo / "environments/dev/mysql-statefulset.yaml"
    assert dev.read_text() == STS  # all or nothing


def test_a_pattern_resolves_to_the_nearest_directory(tmp_path: Path) -> None:
    """Inside an environment the pattern's match is that environment's ConfigMap, as a
    plain reference's would be: the checksum is the one of the environment alone."""
    repo = _copy(tmp_path)
    for env in ("dev", "prod"):
        (repo / "environments" / env / "watcher.yaml").write_text(
            WATCHER.format(key=RELOAD, pattern="mys.*")
        )
    res = run_cmhash(["--no-config", "-i", "."], cwd=repo)
    assert res.code == 0, res.stderr
    got = {}
    for env in ("dev", "prod"):
        path = repo / "environments" / env / "watcher.yaml"
        got[env] = _checksum(path.read_text(), "watcher")
        single = run_cmhash(
            ["--no-config", str(REPO / "environments" / env / "mysql-configmap.yaml"), str(path)]
        )
        assert got[env] is not None and _checksum(single.out, "watcher") == got[env]
    assert got["dev"] != got["prod"]


def test_a_pattern_matching_no_tie_passes(tmp_path: Path) -> None:
    """A pattern above both environments that matches nothing they both define is no
    tie (and says what it misses, as without environments)."""
    repo = _copy(tmp_path)
    (repo / "environments" / "watcher.yaml").write_text(
        WATCHER.format(key=RELOAD, pattern="redis-.*")
    )
    res = run_cmhash(["--no-config", "--check", "."], cwd=repo)
    assert res.code == 1, res.stderr
    assert "[missing-reference]" in res.stderr and "both define" not in res.stderr


OPT_OUTS = {
    "annotation cmhash.io/enabled": ({"cmhash.io/enabled": '"false"'}, None, []),
    "ignore.workloads": ({}, "ignore:\n  workloads:\n  - {name: mysql}\n", []),
    "include.workloads": ({}, "include:\n  workloads:\n  - {name: other}\n", []),
    "optIn": ({}, "optIn: true\n", []),
    "ignore by selector": (
        {},
        "ignore:\n  workloads:\n  - {selector: '!legacy', kind: StatefulSet}\n",
        [],
    ),
}


@pytest.mark.parametrize("case", list(OPT_OUTS))
def test_a_workload_left_alone_never_raises_the_tie(tmp_path: Path, case: str) -> None:
    """The tie check runs on workloads cmhash annotates, after the selection: one it
    leaves alone (above both environments) does not fail the run, and the others are
    annotated as usual."""
    annotations, config, _ = OPT_OUTS[case]
    repo = _copy(tmp_path)
    sts = STS
    if annotations:
        lines = "".join(f"    {k}: {v}\n" for k, v in annotations.items())
        sts = sts.replace("  name: mysql\n", f"  name: mysql\n  annotations:\n{lines}", 1)
    (repo / "environments" / "mysql-statefulset.yaml").write_text(sts)
    args = ["--check", "."]
    if config is None:
        args.insert(0, "--no-config")
    else:
        (repo / ".cmhash.yaml").write_text(config)
    res = run_cmhash(args, cwd=repo)
    assert "both define" not in res.stderr
    assert res.code in (0, 1), res.stderr
    assert "would update ./environments/mysql-statefulset.yaml" not in res.stderr


def test_a_job_not_opted_in_never_raises_the_tie(tmp_path: Path) -> None:
    """A Job is annotated only under --jobs: without it, a Job above both environments
    is left alone and the run passes; with it, it is annotated, so the tie is an error."""
    repo = _copy(tmp_path)
    job = (
        "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: backup\nspec:\n  template:\n"
        "    spec:\n      restartPolicy: Never\n      containers:\n      - name: c\n"
        "        image: mysql:5.7\n        envFrom:\n        - configMapRef: {name: mysql}\n"
    )
    (repo / "environments" / "backup-job.yaml").write_text(job)
    res = run_cmhash(["--no-config", "--check", "."], cwd=repo)
    assert res.code == 1 and "both define" not in res.stderr, res.stderr
    res = run_cmhash(["--no-config", "--jobs=annotate", "--check", "."], cwd=repo)
    assert res.code == 2 and "both define" in res.stderr, res.stderr


def test_the_opted_out_workload_is_still_explained(tmp_path: Path) -> None:
    """explain shows the left-alone workload and exits 0."""
    repo = _copy(tmp_path)
    sts = STS.replace(
        "  name: mysql\n", '  name: mysql\n  annotations:\n    cmhash.io/enabled: "false"\n', 1
    )
    (repo / "environments" / "mysql-statefulset.yaml").write_text(sts)
    res = run_cmhash(["explain", "--no-config", "environments"], cwd=repo)
    assert res.code == 0, res.stderr
    assert res.out.count("StatefulSet/mysql") >= 3


NOT_HASHED = {
    "cmhash.io/sources: secrets": ('    cmhash.io/sources: "secrets"\n', None, []),
    "ignore.configs": ("", "ignore:\n  configs:\n  - {kind: ConfigMap, name: mysql}\n", []),
    "the ConfigMaps' own opt-out": ("", None, ["cmhash.io/skip"]),
}


@pytest.mark.parametrize("case", list(NOT_HASHED))
def test_a_tie_on_an_object_that_would_not_be_hashed_is_no_tie(tmp_path: Path, case: str) -> None:
    """Whichever ConfigMap is deployed, a workload that does not hash it gets the same
    checksum: no tie, and the run goes on (the annotated workload above both
    environments, dev's and prod's as usual)."""
    annotation, config, own = NOT_HASHED[case]
    repo = _copy(tmp_path)
    sts = STS
    if annotation:
        sts = sts.replace("  name: mysql\n", f"  name: mysql\n  annotations:\n{annotation}", 1)
    (repo / "environments" / "mysql-statefulset.yaml").write_text(sts)
    for key in own:
        for env in ("dev", "prod"):
            cm = repo / "environments" / env / "mysql-configmap.yaml"
            cm.write_text(
                cm.read_text().replace(
                    "  name: mysql\n", f'  name: mysql\n  annotations:\n    {key}: "true"\n', 1
                )
            )
    args = ["--check", "."]
    if config is None:
        args.insert(0, "--no-config")
    else:
        (repo / ".cmhash.yaml").write_text(config)
    res = run_cmhash(args, cwd=repo)
    assert "both define" not in res.stderr, res.stderr
    assert res.code in (0, 1), res.stderr

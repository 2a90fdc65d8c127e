"""Walks take every real file (README "Using cmhash in a repository"): JSON that holds
"kind" deeper down is not a manifest; symbolic links to directories are followed, each
directory once (a loop ends, with a note); a file name that is not UTF-8 is shown
escaped in every output; an invalid exclude pattern and a label selector are judged as
git and kubectl judge them: the right result, or exit 2 with the position."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from conftest import git, git_init, run_cmhash
from conftest import write_tree as tree

CM = 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cfg\ndata:\n  a: "1"\n'
DEP = (
    "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: app\n  labels: {labels}\n"
    "spec:\n  template:\n    spec:\n      containers:\n      - name: c\n        envFrom:\n"
    "        - configMapRef: {{name: cfg}}\n"
)


# ------------------------------------------------------------------ JSON


@pytest.mark.parametrize(
    "name",
    ["dashboard.json", "schema.json", "report.json", "list.json"],
)
def test_json_with_a_nested_kind_is_not_a_manifest(tmp_path: Path, name: str) -> None:
    data = {
        "dashboard.json": {"title": "x", "panels": [{"type": "graph", "kind": "panel"}]},
        "schema.json": {"properties": {"kind": {"type": "string"}, "apiVersion": {}}},
        "report.json": {"version": 1, "restarts": [{"kind": "Deployment", "name": "a"}]},
        "list.json": [{"apiVersion": "v1", "kind": "ConfigMap"}],
    }[name]
    root = tree(tmp_path, {"k8s/cm.yaml": CM, "k8s/dep.yaml": DEP.format(labels="{}")})
    (root / "k8s" / name).write_text(json.dumps(data, indent=2))
    res = run_cmhash(["--check", "-v", str(root / "k8s")])
    assert res.code == 1, res.stderr
    assert f"{name}: not a Kubernetes manifest" in res.stderr


def test_a_json_manifest_is_read_and_a_broken_one_is_an_error(tmp_path: Path) -> None:
    cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cfg"}, "data": {}}
    root = tree(tmp_path, {"k8s/dep.yaml": DEP.format(labels="{}")})
    (root / "k8s" / "cm.json").write_text(json.dumps(cm, indent=2))
    res = run_cmhash(["--check", "-v", str(root / "k8s")])
    assert res.code == 1 and "cm.json" not in res.stderr  # read: the reference resolves
    assert "missing-reference" not in res.stderr
    (root / "k8s" / "cm.json").write_text(json.dumps(cm, indent=2)[:-2])
    broken = run_cmhash(["--check", str(root / "k8s")])
    assert broken.code == 2 and broken.stderr.startswith(f"cmhash: {root}/k8s/cm.json:")


# ------------------------------------------------------------------ symbolic links


def test_linked_directories_are_followed_once_and_loops_end(tmp_path: Path) -> None:
    """A base linked into an environment, and a link back up: the base is read once,
    the loop ends, -v says both."""
    root = tree(tmp_path / "repo", {"env/app.yaml": DEP.format(labels="{}"), "shared/cm.yaml": CM})
    os.symlink("../shared", root / "env" / "shared")
    (root / "env" / "sub").mkdir()
    os.symlink("..", root / "env" / "sub" / "up")  # back to env/: a loop
    res = run_cmhash(["--check", "-v", str(root / "env")])
    assert res.code == 1, res.stderr
    assert "missing-reference" not in res.stderr  # the ConfigMap behind the link was read
    assert f"following {root}/env/shared -> {root}/shared" in res.stderr
    assert f"skipped {root}/env/sub/up/: a link to {root}/env, read already" in res.stderr
    fix = run_cmhash(["-i", str(root / "env")])
    assert fix.code == 0 and "checksum/config" in (root / "env" / "app.yaml").read_text()
    assert run_cmhash(["--check", str(root)]).code == 0  # shared/ itself and through env/


# ------------------------------------------------------------------ file names


@pytest.mark.parametrize(
    "args",
    [["--diff"], ["explain"], ["explain", "--format", "json"], ["--check"], ["-i"], []],
)
def test_a_file_name_that_is_not_utf8(tmp_path: Path, args: list[str]) -> None:
    root = tmp_path / "k8s"
    root.mkdir()
    name = os.fsencode(root) + b"/caf\xe9.yaml"
    with open(name, "w") as fh:
        fh.write(CM + "---\n" + DEP.format(labels="{}"))
    log = tmp_path / "log"
    res = run_cmhash([*args, str(root)], env={"CMHASH_LOG": str(log)})
    assert res.code in (0, 1), res.stderr
    shown = res.stdout.decode() + res.stderr + log.read_text()
    if "json" in args:
        assert "caf\\\\xe9.yaml" in shown  # the byte escaped, and in JSON its backslash
    elif args and args[0] != "-i":
        assert "caf\\xe9.yaml" in shown  # the byte, escaped
    if args == ["-i"]:
        with open(name) as fh:
            assert "checksum/config" in fh.read()
    bad = os.fsencode(root) + b"/b\xff.yaml"
    with open(bad, "w") as fh:
        fh.write("kind: ConfigMap\nx: [\n")
    err = run_cmhash([*args, str(root)])
    assert err.code == 2 and f"{root}/b\\xff.yaml:3:1: YAML syntax error" in err.stderr


# ------------------------------------------------------------------ exclude patterns


@pytest.mark.parametrize(
    ("pattern", "why"),
    [
        ("!", "a '!' needs a pattern after it"),
        ("\\", "a trailing '\\' escapes nothing"),
        ("[z-a]", "bad character range z-a"),
    ],
)
def test_an_invalid_exclude_pattern_is_exit_2_with_where(
    tmp_path: Path, pattern: str, why: str
) -> None:
    root = tree(tmp_path, {"k8s/cm.yaml": CM})
    res = run_cmhash(["--check", "--exclude", pattern, str(root / "k8s")])
    assert res.code == 2
    assert res.stderr == f"cmhash: --exclude {pattern!r}: not a valid gitignore pattern ({why})\n"
    (root / ".cmhash.yaml").write_text(f"exclude:\n  - ok/\n  - {json.dumps(pattern)}\n")
    res = run_cmhash(["--check", "k8s"], cwd=root)
    assert res.code == 2
    assert res.stderr.startswith(
        f"cmhash: {root / '.cmhash.yaml'}:3:5: invalid configuration at exclude/1: "
    )


# ------------------------------------------------------------------ label selectors


@pytest.mark.parametrize(
    ("selector", "labels", "ignored"),
    [
        ("in-cluster=true", "{in-cluster: 'true'}", True),
        ("in-cluster=true", "{in-cluster: 'false'}", False),
        ("x in (in-review)", "{x: in-review}", True),
        ("x notin (in-review,notin-x)", "{x: notin-x}", False),
        ("notin-team!=a,infra", "{notin-team: b, infra: 'y'}", True),
        ("x in (in)", "{x: in}", True),
    ],
)
def test_selectors_kubectl_accepts(
    tmp_path: Path, selector: str, labels: str, ignored: bool
) -> None:
    """Keywords are whole identifiers, as in apimachinery's lexer (scanIDOrKeyword)."""
    root = tree(tmp_path, {"k8s/all.yaml": CM + "---\n" + DEP.format(labels=labels)})
    (root / ".cmhash.yaml").write_text(
        f"ignore:\n  workloads:\n  - {{selector: {json.dumps(selector)}}}\n"
    )
    res = run_cmhash(["--check", "k8s"], cwd=root)
    assert res.code == (0 if ignored else 1), res.stderr


# ------------------------------------------------------------------ --diff labels


@pytest.mark.parametrize("arg", [".", "./", "./k8s", "k8s//"])
def test_a_diff_of_a_walk_applies_with_git(tmp_path: Path, arg: str) -> None:
    """``cmhash --diff .`` labels files as git does (``a/k8s/dep.yaml``, not
    ``a/./k8s/dep.yaml``, which ``git apply`` refuses as an invalid path)."""
    root = git_init(tree(tmp_path, {"k8s/cm.yaml": CM, "k8s/dep.yaml": DEP.format(labels="{}")}))
    res = run_cmhash(["--diff", arg], cwd=root)
    assert res.code == 0, res.stderr
    assert res.stdout.decode().startswith("--- a/k8s/dep.yaml\n+++ b/k8s/dep.yaml\n")
    (root / "fix.patch").write_bytes(res.stdout)
    git(root, "apply", "fix.patch")
    assert run_cmhash(["--check", "k8s"], cwd=root).code == 0

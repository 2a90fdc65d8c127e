"""Piped input is never replaced by a config file's ``paths``: every entry point run from
a repository whose ``.cmhash.yaml`` names ``paths: [k8s/]`` processes what it is given
(the pipe, Helm 3 and Helm 4 post-renderers, the kustomize exec transformer, the KRM
function), with the real tools. And the other side of the rule: an empty stdin (as
pre-commit and CI give) reads the config's paths, and --in-place with both is refused."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
import yaml
from conftest import (
    ROOT,
    cmhash_command,
    helm_env,
    kustomize,
    kustomize_build,
    run_cmhash,
    tool,
    write_tree,
)

CHART = ROOT / "tests" / "fixtures" / "chart"
EXAMPLES = ROOT / "ci-templates" / "kustomize"
REPO_CM = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: repo-config\ndata:\n  a: b\n"
REPO_DEP = (
    "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: repo-app\nspec:\n"
    "  template:\n    spec:\n      containers:\n      - name: c\n        envFrom:\n"
    "        - configMapRef: {name: repo-config}\n"
)
PIPED = (
    "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: piped\ndata:\n  x: z\n---\n"
    "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: piped-app\nspec:\n"
    "  template:\n    spec:\n      containers:\n      - name: c\n        envFrom:\n"
    "        - configMapRef: {name: piped}\n"
)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A repository whose .cmhash.yaml points at its own manifests."""
    config = "paths: [k8s/]\nannotationKey: example.com/hash\n"
    files = {"k8s/app.yaml": REPO_CM + "---\n" + REPO_DEP, ".cmhash.yaml": config}
    return write_tree(tmp_path / "repo", files)


def kinds_and_names(text: str) -> set[tuple[str, str]]:
    return {(d["kind"], d["metadata"]["name"]) for d in yaml.safe_load_all(text) if d}


def test_pipe_is_the_input(repo: Path) -> None:
    proc = subprocess.run(
        [*cmhash_command(), "-v"], input=PIPED.encode(), cwd=repo, capture_output=True, check=False
    )
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout.decode()
    assert kinds_and_names(out) == {("ConfigMap", "piped"), ("Deployment", "piped-app")}
    assert "example.com/hash" in out  # the config's other options still apply
    assert "reading stdin; the paths of .cmhash.yaml (k8s) are not read" in proc.stderr.decode()
    assert (repo / "k8s" / "app.yaml").read_text() == REPO_CM + "---\n" + REPO_DEP


@pytest.mark.parametrize("mode", ["--check", "--diff", "explain"])
def test_pipe_wins_in_every_mode(repo: Path, mode: str) -> None:
    args = ["explain"] if mode == "explain" else [mode]
    proc = subprocess.run(
        [*cmhash_command(), *args], input=PIPED.encode(), cwd=repo, capture_output=True, check=False
    )
    text = proc.stdout.decode() + proc.stderr.decode()
    assert "piped" in text and "repo-app" not in text, text


def test_empty_stdin_reads_the_config_paths(repo: Path) -> None:
    """pre-commit and CI jobs run hooks with an empty stdin: the config's paths it is."""
    proc = subprocess.run(
        [*cmhash_command(), "--check"],
        stdin=subprocess.DEVNULL,
        cwd=repo,
        capture_output=True,
        check=False,
    )
    assert proc.returncode == 1
    assert "would update k8s/app.yaml" in proc.stderr.decode()
    proc = subprocess.run(
        [*cmhash_command(), "-i"], input=b"", cwd=repo, capture_output=True, check=False
    )
    assert proc.returncode == 0, proc.stderr
    assert "example.com/hash" in (repo / "k8s" / "app.yaml").read_text()


def test_in_place_with_piped_data_and_config_paths_is_refused(repo: Path) -> None:
    proc = subprocess.run(
        [*cmhash_command(), "-i"], input=PIPED.encode(), cwd=repo, capture_output=True, check=False
    )
    assert proc.returncode == 2
    assert proc.stderr.decode().strip() == (
        "cmhash: data is piped to stdin, but --in-place would rewrite the paths of "
        ".cmhash.yaml (k8s) instead; pass the paths explicitly, or pipe without --in-place"
    )
    assert "example.com/hash" not in (repo / "k8s" / "app.yaml").read_text()


def test_a_terminal_reads_the_config_paths(repo: Path) -> None:
    """``cmhash`` typed alone at a terminal: the config's paths (a pty as stdin)."""
    import os
    import pty

    controller, terminal = pty.openpty()
    try:
        proc = subprocess.run(
            [*cmhash_command(), "--check"],
            stdin=terminal,
            cwd=repo,
            capture_output=True,
            check=False,
            timeout=60,
        )
    finally:
        os.close(terminal)
        os.close(controller)
    assert proc.returncode == 1, proc.stderr
    assert "would update k8s/app.yaml" in proc.stderr.decode()


def test_in_process_stdin_rule() -> None:
    """The rule on its own (inputs.select), without a subprocess."""
    import io

    from cmhash.read.inputs import select
    from cmhash.read.stdin import Mode, Stdin

    def pick(data: bytes, tty: bool, mode: Mode = Mode.STREAM) -> list[str]:
        return (
            [
                s.path
                for s in select(
                    (),
                    mode=mode,
                    config_paths=("nowhere/",),
                    config_file=".cmhash.yaml",
                    excludes=(),
                    max_bytes=1 << 20,
                    stdin=io.BytesIO(data),
                    stdin_kind=Stdin.TERMINAL if tty else Stdin.GIVEN,
                ).sources
            ]
            if data or tty
            else []
        )

    assert pick(b"a: b\n", tty=False) == ["-"]
    with pytest.raises(Exception, match="no such file or directory"):
        pick(b"", tty=True)  # a terminal: the config's (here missing) paths


# ------------------------------------------------------------------ real tools

pytest_integration = pytest.mark.integration


@pytest_integration
def test_helm4_plugin_in_a_repository(repo: Path, tmp_path: Path) -> None:
    shutil.copytree(CHART, repo / "chart")
    out = subprocess.run(
        [tool("helm"), "template", "web", "./chart", "--post-renderer", "cmhash"],
        capture_output=True,
        text=True,
        cwd=repo,
        env=helm_env(tmp_path, "helm"),
        check=False,
    )
    assert out.returncode == 0, out.stderr
    names = kinds_and_names(out.stdout)
    assert ("Deployment", "web-web") in names and ("Deployment", "repo-app") not in names
    assert "example.com/hash" in out.stdout


@pytest_integration
def test_helm3_executable_in_a_repository(repo: Path, tmp_path: Path) -> None:
    shutil.copytree(CHART, repo / "chart")
    out = subprocess.run(
        [tool("helm3"), "template", "web", "./chart", "--post-renderer", "cmhash"],
        capture_output=True,
        text=True,
        cwd=repo,
        env=helm_env(tmp_path, "helm3"),
        check=False,
    )
    assert out.returncode == 0, out.stderr
    names = kinds_and_names(out.stdout)
    assert ("Deployment", "web-web") in names and ("Deployment", "repo-app") not in names
    assert "example.com/hash" in out.stdout


@pytest_integration
def test_kustomize_transformer_in_a_repository(repo: Path, tmp_path: Path) -> None:
    home = tmp_path / "plugin-home"
    assert run_cmhash(["install-kustomize-plugin", "--plugin-home", str(home)]).code == 0
    shutil.copytree(EXAMPLES / "legacy", repo / "overlay")
    out = kustomize("overlay", cwd=repo, KUSTOMIZE_PLUGIN_HOME=str(home))
    assert out.returncode == 0, out.stderr
    names = {kind for kind, _ in kinds_and_names(out.stdout)}
    assert names == {"ConfigMap", "Deployment"} and "repo-app" not in out.stdout
    assert "checksum/config" in out.stdout


@pytest_integration
def test_krm_function_in_a_repository(repo: Path) -> None:
    shutil.copytree(EXAMPLES / "krm", repo / "krm")
    out = kustomize_build("krm", cwd=repo)
    assert out.returncode == 0, out.stderr
    assert "repo-app" not in out.stdout and "checksum/config" in out.stdout

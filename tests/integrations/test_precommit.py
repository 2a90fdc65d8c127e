"""The published pre-commit hooks, run with the real pre-commit (4.7.0) via try-repo
on a sample repository."""

from __future__ import annotations

import difflib
import subprocess
from pathlib import Path

import pytest
import yaml
from conftest import ROOT, checkout_head, git_commit, git_init, tool, tool_env

from cmhash import __version__

pytestmark = pytest.mark.integration

CM = 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cfg\ndata:\n  a: "1"\n'
DEP = (
    "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: app\nspec:\n  template:\n"
    "    spec:\n      containers:\n      - name: main   # keep me\n        envFrom:\n"
    "        - configMapRef: {name: cfg}\n"
)


@pytest.fixture
def sample(tmp_path: Path) -> Path:
    repo = tmp_path / "sample"
    git_init(repo)
    git_commit(
        repo, "init", {"k8s/config.yaml": CM, "k8s/app.yaml": DEP, ".cmhash.yaml": "paths: [k8s]\n"}
    )
    return repo


def try_repo(sample: Path, hook: str, home: Path) -> subprocess.CompletedProcess[str]:
    env = tool_env(PRE_COMMIT_HOME=str(home))
    env.pop("CI", None)  # pre-commit prints differently in CI; the result is the same
    return subprocess.run(
        [tool("pre-commit"), "try-repo", str(ROOT), hook, "--all-files"],
        cwd=sample,
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )


def test_manifest_is_valid() -> None:
    proc = subprocess.run(
        [tool("pre-commit"), "validate-manifest", str(ROOT / ".pre-commit-hooks.yaml")],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    hooks = {h["id"]: h for h in yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())}
    assert set(hooks) == {"cmhash", "cmhash-check"}
    assert all(h["pass_filenames"] is False and h["require_serial"] for h in hooks.values())


def test_check_then_fix_then_pass(sample: Path, tmp_path: Path) -> None:
    home = tmp_path / "pc-home"
    before = (sample / "k8s" / "app.yaml").read_text()
    check = try_repo(sample, "cmhash-check", home)
    assert check.returncode == 1, check.stdout + check.stderr
    assert "Failed" in check.stdout and "would update k8s/app.yaml" in check.stdout
    assert (sample / "k8s" / "app.yaml").read_text() == before

    fix = try_repo(sample, "cmhash", home)
    assert fix.returncode == 1  # pre-commit fails a run whose hook modified files
    assert "files were modified by this hook" in fix.stdout
    after = (sample / "k8s" / "app.yaml").read_text()
    assert "checksum/config" in after and "# keep me" in after
    changed = [d for d in difflib.ndiff(before.splitlines(), after.splitlines()) if d[:1] in "+-"]
    assert [d[1:].strip() for d in changed][:2] == ["metadata:", "annotations:"]
    assert len(changed) == 3 and changed[2].startswith("+") and "checksum/config" in changed[2]

    again = try_repo(sample, "cmhash", home)
    assert again.returncode == 0 and "Passed" in again.stdout  # idempotent
    assert try_repo(sample, "cmhash-check", home).returncode == 0


def test_pass_filenames_with_pre_commits_own_files_and_exclude(tmp_path: Path) -> None:
    """A consumer config with ``pass_filenames: true`` and pre-commit's own ``exclude``:
    pre-commit names every changed YAML file; cmhash skips those that are not manifests
    (a chart source, values.yaml, mkdocs.yml) and pre-commit's exclude keeps a broken
    legacy manifest away from it altogether."""
    head = checkout_head()
    repo = tmp_path / "consumer"
    files = {
        "k8s/config.yaml": CM,
        "k8s/app.yaml": DEP,
        "values.yaml": "replicas: 2\n",
        "mkdocs.yml": "site_name: x\n",
        "charts/web/Chart.yaml": "apiVersion: v2\nname: w\n",
        "charts/web/templates/d.yaml": "kind: Deployment\nmetadata:\n  name: {{ .x }}\n",
        "legacy/old.yaml": "apiVersion: v1\nkind: ConfigMap\ndata: {a: b\n",
        ".pre-commit-config.yaml": (
            f"repos:\n- repo: {ROOT}\n  rev: {head}\n  hooks:\n  - id: cmhash-check\n"
            "    pass_filenames: true\n    exclude: ^legacy/\n"
        ),
    }
    git_init(repo)
    git_commit(repo, "init", files)
    run = _run_precommit(repo, tmp_path / "pc-home")
    assert run.returncode == 1, run.stdout + run.stderr
    assert "would update k8s/app.yaml" in run.stdout
    assert "error" not in run.stdout.lower() and "legacy" not in run.stdout


def readme_snippet() -> str:
    """The pre-commit page's snippet, exactly as a user copies it."""
    page = (ROOT / "docs" / "integrations" / "pre-commit.md").read_text()
    return page.split("```yaml\n", 1)[1].split("```", 1)[0]


def _consumer(tmp_path: Path, config: str, extra: dict[str, str]) -> Path:
    repo = tmp_path / "consumer"
    files = {"k8s/config.yaml": CM, "k8s/app.yaml": DEP, ".pre-commit-config.yaml": config}
    git_init(repo)
    git_commit(repo, "init", {**files, **extra})
    return repo


def _run_precommit(repo: Path, home: Path) -> subprocess.CompletedProcess[str]:
    env = tool_env(PRE_COMMIT_HOME=str(home))
    env.pop("CI", None)
    return subprocess.run(
        [tool("pre-commit"), "run", "--all-files"],
        cwd=repo,
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )


@pytest.mark.parametrize("via", ["args", "config-paths"])
def test_readme_snippet_works_when_pasted(tmp_path: Path, via: str) -> None:
    """The snippet is a whole .pre-commit-config.yaml (``repos:`` included): pasted with
    only the repository URL and rev pointed at this checkout, the real pre-commit runs
    it. ``config-paths``: without ``args``, the hook reads ``paths:`` of .cmhash.yaml,
    although pre-commit hands it an empty pipe on stdin (the repository-mode rule)."""
    snippet = readme_snippet()
    assert snippet.lstrip("# .").split("\n", 1)[0].startswith("pre-commit-config.yaml")
    assert "\nrepos:\n" in snippet
    config = snippet.replace("https://gitlab.com/cmhash/cmhash", str(ROOT))
    config = config.replace(f"v{__version__}", checkout_head())
    extra = {}
    if via == "config-paths":
        config = "\n".join(line for line in config.splitlines() if "args:" not in line) + "\n"
        extra = {".cmhash.yaml": "paths: [k8s/]\n"}
    repo = _consumer(tmp_path, config, extra)
    home = tmp_path / "pc-home"
    first = _run_precommit(repo, home)
    assert first.returncode == 1, first.stdout + first.stderr
    assert "files were modified by this hook" in first.stdout
    assert "checksum/config" in (repo / "k8s" / "app.yaml").read_text()
    again = _run_precommit(repo, home)
    assert again.returncode == 0, again.stdout + again.stderr


def test_precommit_hands_hooks_an_empty_pipe(tmp_path: Path) -> None:
    """What the repository-mode rule is built on: pre-commit runs a hook with a pipe on
    stdin that is empty (so an empty pipe cannot mean "nothing was rendered" there)."""
    probe = (
        "import os, stat, sys; st = os.fstat(0); "
        "print('FIFO' if stat.S_ISFIFO(st.st_mode) else 'OTHER', len(sys.stdin.buffer.read()))"
    )
    config = (
        "repos:\n- repo: local\n  hooks:\n  - id: probe\n    name: probe\n"
        f'    entry: python3 -c "{probe}"\n    language: system\n'
        "    pass_filenames: false\n    always_run: true\n    verbose: true\n"
    )
    repo = _consumer(tmp_path, config, {})
    run = _run_precommit(repo, tmp_path / "pc-home")
    assert run.returncode == 0, run.stdout + run.stderr
    assert "FIFO 0" in run.stdout, run.stdout

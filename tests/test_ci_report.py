"""cmhash ci-report, the job the GitLab template and the GitHub action share: both
sides rendered (the base in a worktree at the merge base), every artifact written, the
text report printed, no comment outside a merge request, a failed render one line."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from conftest import ROOT, git, git_commit, git_init

PLAN = ROOT / "tests" / "fixtures" / "report-plan"


def _repo(tmp_path: Path) -> tuple[Path, str]:
    repo = git_init(tmp_path / "deploy", branch="main")
    git_commit(repo, "base", {"k8s.yaml": (PLAN / "old.yaml").read_text()})
    git(repo, "checkout", "-qb", "change")
    git_commit(repo, "change", {"k8s.yaml": (PLAN / "new.yaml").read_text()})
    return repo, "main"


def _ci_report(
    repo: Path, *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    base_env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "CI_"))}
    return subprocess.run(
        [sys.executable, "-m", "cmhash", "ci-report", "--no-config", *args],
        cwd=repo,
        env={**base_env, **(env or {})},
        capture_output=True,
        text=True,
    )


def test_writes_every_artifact_and_prints_the_text(tmp_path: Path) -> None:
    repo, base = _repo(tmp_path)
    summary = tmp_path / "summary.md"
    res = _ci_report(
        repo,
        "--render",
        "cat k8s.yaml",
        "--base",
        base,
        "--summary",
        str(summary),
        "--comment",
        "github",
    )
    assert res.returncode == 0, res.stderr
    out = repo / "cmhash-report"
    assert sorted(p.name for p in out.iterdir()) == [
        "codequality.json",
        "new.yaml",
        "old.yaml",
        "report.json",
        "report.md",
    ]
    assert (out / "old.yaml").read_text() == (PLAN / "old.yaml").read_text()
    assert json.loads((out / "report.json").read_text())["summary"]["restart"] == 13
    assert summary.read_text() == (out / "report.md").read_text()
    assert res.stdout.startswith("13 workloads will restart")
    assert "not a merge request: no comment posted" in res.stderr
    assert res.stderr.startswith("comparing ")
    assert git(repo, "worktree", "list").count("\n") == 0  # the base worktree is gone


def test_budget_exit_after_everything_is_written(tmp_path: Path) -> None:
    repo, base = _repo(tmp_path)
    res = _ci_report(repo, "--render", "cat k8s.yaml", "--base", base, "--max-restarts", "5")
    assert res.returncode == 1
    assert res.stderr.splitlines()[-1] == "cmhash: 13 workloads restart (budget 5)"
    assert (repo / "cmhash-report" / "report.md").exists()


def test_a_failed_render_is_one_line(tmp_path: Path) -> None:
    repo, base = _repo(tmp_path)
    res = _ci_report(repo, "--render", "exit 7", "--base", base)
    assert res.returncode == 2
    assert res.stderr.splitlines()[-1] == (
        "cmhash: render failed in the base checkout (exit 7): exit 7"
    )
    assert "Traceback" not in res.stderr

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
    assert "not a pull request: no comment posted" in res.stderr  # (--comment github)
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
    # the action's `render: |` block: several lines of shell, still one line of error
    res = _ci_report(repo, "--render", "echo rendering >/dev/null\nexit 7\n", "--base", base)
    assert res.returncode == 2
    assert res.stderr.strip().splitlines()[-1] == (
        "cmhash: render failed in the base checkout (exit 7): echo rendering >/dev/null\\nexit 7"
    )


def test_run_in_a_subdirectory_renders_the_base_in_the_same_one(tmp_path: Path) -> None:
    # a monorepo job: `cd deploy && cmhash ci-report --render "cat k8s.yaml"`; the base
    # must be rendered in deploy/ of its worktree too, not at the worktree's root
    repo = git_init(tmp_path / "mono", branch="main")
    sub = repo / "deploy"
    root_file = "# the root's own file: not what the job renders\n"
    git_commit(
        repo, "base", {"deploy/k8s.yaml": (PLAN / "old.yaml").read_text(), "k8s.yaml": root_file}
    )
    git(repo, "checkout", "-qb", "change")
    git_commit(repo, "change", {"deploy/k8s.yaml": (PLAN / "new.yaml").read_text()})
    res = _ci_report(sub, "--render", "cat k8s.yaml", "--base", "main")
    assert res.returncode == 0, res.stderr
    out = sub / "cmhash-report"
    assert (out / "old.yaml").read_text() == (PLAN / "old.yaml").read_text()
    assert json.loads((out / "report.json").read_text())["summary"]["restart"] == 13
    # a directory the base does not have yet: one line saying so
    git_commit(repo, "new app", {"new-app/k8s.yaml": (PLAN / "new.yaml").read_text()})
    res = _ci_report(repo / "new-app", "--render", "cat k8s.yaml", "--base", "main")
    assert res.returncode == 2, res.stderr
    assert res.stderr.splitlines()[-1] == (
        "cmhash: the base 'main' has no directory new-app: ci-report renders both sides "
        "in the directory it runs in; run it where both have it"
    )


def test_a_render_of_every_yaml_file_does_not_read_the_base_render(tmp_path: Path) -> None:
    # the output directory is in the checkout: a render that reads every .yaml under it
    # read old.yaml, just written by the base's render, into the head's (new.yaml:
    # duplicate keys, exit 2)
    repo, base = _repo(tmp_path)
    render = "find . -name '*.yaml' -not -path './.git/*' | sort | xargs cat"
    res = _ci_report(repo, "--render", render, "--base", base)
    assert res.returncode == 0, res.stderr
    out = repo / "cmhash-report"
    assert (out / "new.yaml").read_text() == (PLAN / "new.yaml").read_text()
    assert json.loads((out / "report.json").read_text())["summary"]["restart"] == 13


TOKEN = "s3cr3t-t0ken-value"


def test_a_multi_line_git_error_is_one_line_without_credentials(tmp_path: Path) -> None:
    repo, _ = _repo(tmp_path)
    # no such base here: ci-report fetches it from origin, which git cannot read (git says
    # so on five lines, "fatal: ... does not appear to be a git repository" first)
    git(repo, "remote", "add", "origin", str(tmp_path / "nowhere"))
    res = _ci_report(
        repo, "--render", "cat k8s.yaml", "--base", "release-9", env={"GITHUB_TOKEN": TOKEN}
    )
    assert res.returncode == 2, res.stderr
    last = res.stderr.splitlines()[-1]
    assert last.startswith("cmhash: cannot fetch the base 'release-9' from origin: git fetch ")
    assert "does not appear to be a git repository" in last
    assert len(res.stderr.strip().splitlines()) == 1, res.stderr
    assert "Traceback" not in res.stderr and "Please make sure" not in res.stderr
    # a remote URL with credentials: neither the password nor the token is shown
    git(repo, "remote", "set-url", "origin", f"https://oauth2:{TOKEN}@127.0.0.1:9/x.git")
    res = _ci_report(
        repo,
        "--render",
        "cat k8s.yaml",
        "--base",
        "release-9",
        env={"GITHUB_TOKEN": TOKEN, "GIT_TERMINAL_PROMPT": "0"},
    )
    assert res.returncode == 2, res.stderr
    assert TOKEN not in res.stderr and len(res.stderr.strip().splitlines()) == 1, res.stderr


def test_git_message_takes_the_first_meaningful_line() -> None:
    from cmhash.integrations.cireport import git_message

    stderr = (
        "hint: Using 'master' as the name for the initial branch.\n\n"
        f"fatal: unable to access 'https://x-access-token:{TOKEN}@github.com/o/r.git/': "
        "The requested URL returned error: 403\nerror: second line\n"
    )
    assert git_message(stderr, {}) == (
        "unable to access 'https://***@github.com/o/r.git/': The requested URL returned error: 403"
    )
    assert git_message(f"fatal: bad token {TOKEN}\n", {"MY_TOKEN": TOKEN}, "MY_TOKEN") == (
        "bad token ***"
    )
    assert git_message("\x1b[31mfatal: x\r\n", {}) == "\\x1b[31mfatal: x"


def test_a_shallow_clone_without_the_merge_base_says_how_to_fix_it(tmp_path: Path) -> None:
    upstream, _ = _repo(tmp_path)  # main: base; change: one commit on top
    git(upstream, "checkout", "-q", "main")
    for i in range(3):  # main moves on after the branch point
        (upstream / f"other{i}.txt").write_text(f"{i}\n")
        git(upstream, "add", ".")
        git(upstream, "commit", "-qm", f"main {i}")
    clone = tmp_path / "clone"
    git(
        tmp_path,
        "clone",
        "-q",
        "--depth",
        "1",
        "--branch",
        "change",
        f"file://{upstream}",
        str(clone),
    )
    assert git(clone, "rev-parse", "--is-shallow-repository") == "true"
    res = _ci_report(clone, "--render", "cat k8s.yaml", "--base", "main")
    assert res.returncode == 2, res.stderr
    last = res.stderr.splitlines()[-1]
    assert "the clone is shallow" in last
    assert "GIT_DEPTH: 0" in last and "fetch-depth: 0" in last
    assert "Traceback" not in res.stderr
    # the whole history: the same job works
    git(clone, "fetch", "-q", "--unshallow", "origin", "main:refs/remotes/origin/main")
    res = _ci_report(clone, "--render", "cat k8s.yaml", "--base", "origin/main")
    assert res.returncode == 0, res.stderr


def test_two_jobs_of_one_pull_request_keep_a_comment_each(tmp_path: Path) -> None:
    """A matrix over environments (another --render) and a monorepo's directories
    (ci-report run in another directory) post to one pull request: each job's comment
    is its own, keyed by its paths (the directory it renders in, and --render); a later
    run of each updates its own; a monorepo's directory is named above its report."""
    from fakegithub import FakeGitHub

    from cmhash.integrations.comments import marker

    old, new = ((PLAN / side).read_text() for side in ("old.yaml", "new.yaml"))
    repo = git_init(tmp_path / "deploy", branch="main")
    (repo / "apps" / "shop").mkdir(parents=True)
    git_commit(repo, "base", {"k8s.yaml": old, "apps/shop/k8s.yaml": old})
    git(repo, "checkout", "-qb", "change")
    git_commit(repo, "change", {"k8s.yaml": new, "apps/shop/k8s.yaml": new})
    base = "main"
    event = tmp_path / "event.json"
    event.write_text(json.dumps({"pull_request": {"number": 7}}))
    jobs = [
        (repo, "cat k8s.yaml"),
        (repo, "cat k8s.yaml # staging"),
        (repo / "apps" / "shop", "cat k8s.yaml"),
    ]
    with FakeGitHub(comments=0) as gh:
        env = gh.env(str(event))
        for _ in range(2):
            for cwd, render in jobs:
                res = _ci_report(
                    cwd, "--render", render, "--base", base, "--comment", "github", env=env
                )
                assert res.returncode == 0, res.stderr
        bodies = [c["body"] for c in gh.comments]
    assert len(bodies) == 3  # one per job; the second round updated them
    assert [b.splitlines()[0] for b in bodies] == [
        marker("\0cat k8s.yaml"),
        marker("\0cat k8s.yaml # staging"),
        marker("apps/shop/\0cat k8s.yaml"),
    ]
    assert bodies[2].splitlines()[1] == "<sub>apps/shop</sub>"
    assert bodies[0].splitlines()[1].startswith("### cmhash: 13 workloads will restart")

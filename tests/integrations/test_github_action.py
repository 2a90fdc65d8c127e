"""The composite action (action.yml at the repository root, what `uses: cmhash/cmhash@v…`
runs), step by step as GitHub runs them: each step's `run` script in bash with its `env`
(the `${{ … }}` expressions evaluated from the inputs and the event), in a real git
repository (the rollout-plan fixture pair as base and head), against a fake GitHub API. First run:
one POST; second run: one PATCH; the job summary holds the report; the budget fails it."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from conftest import ROOT, git, git_commit, git_init
from fakegithub import TOKEN, FakeGitHub

ACTION = ROOT / "action.yml"
EXPR = re.compile(r"\$\{\{\s*(.*?)\s*\}\}")


def _evaluate(expr: str, context: dict[str, str]) -> str:
    """GitHub's `a || b || c` over the few names the action uses."""
    for name in (part.strip() for part in expr.split("||")):
        value = context.get(name, "")
        if value:
            return value
    return ""


def _run_action(
    repo: Path,
    inputs: dict[str, str],
    env: dict[str, str],
    context: dict[str, str],
    action_path: Path = ROOT,
) -> subprocess.CompletedProcess[str]:
    action = yaml.safe_load((action_path / "action.yml").read_text())
    defaults = {k: str(v.get("default", "")) for k, v in action["inputs"].items()}
    ctx = {"github.action_path": str(action_path), "github.token": TOKEN, **context}
    for k, v in {**defaults, **inputs}.items():
        ctx[f"inputs.{k}"] = EXPR.sub(lambda m: _evaluate(m.group(1), ctx), v)
    for step in action["runs"]["steps"]:
        step_env = {
            k: EXPR.sub(lambda m: _evaluate(m.group(1), ctx), str(v))
            for k, v in step.get("env", {}).items()
        }
        res = subprocess.run(
            ["bash", "-e", "-c", step["run"]],
            cwd=repo,
            env={**env, **step_env},
            capture_output=True,
            text=True,
        )
        if res.returncode != 0:
            return res
    return res


PLAN = ROOT / "tests" / "fixtures" / "report-plan"


def _plan_repo(tmp_path: Path) -> tuple[Path, str]:
    """A repository whose main branch holds the fixture's old render; the new one is
    committed on top, on ``change``. The repository and main's commit."""
    repo = git_init(tmp_path / "deploy", branch="main")
    base = git_commit(repo, "base", {"manifests.yaml": (PLAN / "old.yaml").read_text()})
    git(repo, "checkout", "-qb", "change")
    git_commit(repo, "the change", {"manifests.yaml": (PLAN / "new.yaml").read_text()})
    return repo, base


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return _plan_repo(tmp_path)[0]


def _env(repo: Path, gh: FakeGitHub, base: str) -> tuple[dict[str, str], dict[str, str]]:
    event = repo.parent / "event.json"
    event.write_text(json.dumps({"pull_request": {"number": 5, "base": {"sha": base}}}))
    summary, output = repo.parent / "summary.md", repo.parent / "output.txt"
    env = {
        "PATH": os.pathsep.join([str(Path(sys.executable).parent), os.environ["PATH"]]),
        "HOME": str(repo.parent),
        "GITHUB_API_URL": gh.url,
        "GITHUB_REPOSITORY": "shop/deploy",
        "GITHUB_EVENT_PATH": str(event),
        "GITHUB_STEP_SUMMARY": str(summary),
        "GITHUB_OUTPUT": str(output),
    }
    return env, {"github.event.pull_request.base.sha": base}


INPUTS = {"render": "cat manifests.yaml", "install": "true"}


def test_action_posts_then_updates_one_comment(repo: Path) -> None:
    base = git(repo, "rev-parse", "main")
    with FakeGitHub(comments=0) as gh:
        env, context = _env(repo, gh, base)
        first = _run_action(repo, INPUTS, env, context)
        assert first.returncode == 0, first.stderr
        second = _run_action(repo, INPUTS, env, context)
        assert second.returncode == 0, second.stderr
        methods = [m for m, _ in gh.requests]
        # who posts: GET /user (403 for the job's token), then GraphQL's viewer
        assert methods == ["GET", "POST", "GET", "GET", "POST", "PATCH"]
        (comment,) = gh.comments
        assert "### cmhash: 13 workloads will restart" in comment["body"]
    summary = Path(env["GITHUB_STEP_SUMMARY"]).read_text()
    assert summary.count("### cmhash: 13 workloads will restart") == 2  # one per run
    assert "restarts=13" in Path(env["GITHUB_OUTPUT"]).read_text()
    assert TOKEN not in first.stdout + first.stderr + second.stdout + second.stderr


def test_action_comment_key_keeps_a_comment_per_job(repo: Path) -> None:
    from cmhash.integrations.comments import marker

    base = git(repo, "rev-parse", "main")
    with FakeGitHub(comments=0) as gh:
        env, context = _env(repo, gh, base)
        for key in ("prod", "staging", "prod"):
            res = _run_action(repo, {**INPUTS, "comment-key": key}, env, context)
            assert res.returncode == 0, res.stderr
        bodies = [c["body"] for c in gh.comments]
    assert [b.splitlines()[:2] for b in bodies] == [
        [marker("prod"), "<sub>prod</sub>"],
        [marker("staging"), "<sub>staging</sub>"],
    ]


def test_action_fails_over_the_budget_after_writing_everything(repo: Path) -> None:
    base = git(repo, "rev-parse", "main")
    with FakeGitHub(comments=0) as gh:
        env, context = _env(repo, gh, base)
        res = _run_action(repo, {**INPUTS, "max-restarts": "0"}, env, context)
        assert res.returncode == 1
        assert "cmhash: 13 workloads restart (budget 0)" in res.stderr
        assert [m for m, _ in gh.requests] == ["GET", "POST"]  # the comment still posted
    assert Path(env["GITHUB_STEP_SUMMARY"]).read_text().startswith("### cmhash:")


def test_action_capacity_budget_fails_and_the_comment_says_why(repo: Path) -> None:
    base = git(repo, "rev-parse", "main")
    inputs = {**INPUTS, "no-downtime": "true", "max-surge-cpu": "0", "nodes": "3"}
    with FakeGitHub(comments=0) as gh:
        env, context = _env(repo, gh, base)
        res = _run_action(repo, inputs, env, context)
        assert res.returncode == 1
        over = "2 workloads have no pod available during their rollout (--no-downtime)"
        assert f"cmhash: {over}" in res.stderr
        (comment,) = gh.comments
        assert comment["body"].endswith(f"> ❌ **Over budget**: {over}\n")
    report = json.loads((repo / "cmhash-report" / "report.json").read_text())
    logger = next(w for w in report["restart"] if w["name"] == "logger")
    assert logger["capacity"]["replicas"] == 3  # --nodes 3


def test_action_inputs_are_documented() -> None:
    action: dict[str, Any] = yaml.safe_load(ACTION.read_text())
    assert action["runs"]["using"] == "composite"
    assert all(v.get("description") for v in action["inputs"].values())
    assert all(s.get("shell") == "bash" for s in action["runs"]["steps"])


def _recipes() -> list[dict[str, Any]]:
    """The workflows the GitHub Actions page and docs/report.md show."""
    out = []
    for doc in (ROOT / "docs" / "integrations" / "github.md", ROOT / "docs" / "report.md"):
        for block in re.findall(r"```yaml\n(.*?)```", doc.read_text(), flags=re.S):
            data = yaml.safe_load(block)
            if isinstance(data, dict) and isinstance(data.get("jobs"), dict):
                out.append(data)
    return out


def test_recipes_use_the_action_as_it_is() -> None:
    """Every `uses: cmhash/cmhash@…` step of the documented workflows passes only inputs
    the action has, with the required ones, after a checkout with the history."""
    action = yaml.safe_load(ACTION.read_text())
    required = {k for k, v in action["inputs"].items() if v.get("required")}
    recipes = _recipes()
    assert len(recipes) == 2
    for wf in recipes:
        (steps,) = [j["steps"] for j in wf["jobs"].values()]
        ours = [s for s in steps if str(s.get("uses", "")).startswith("cmhash/cmhash@")]
        assert len(ours) == 1
        assert required <= set(ours[0]["with"]) <= set(action["inputs"])
        checkout = next(s for s in steps if str(s.get("uses", "")).startswith("actions/checkout"))
        assert checkout["with"]["fetch-depth"] == 0
        perms = wf.get("permissions", {})
        assert perms.get("pull-requests") == "write"


def test_recipe_runs_as_written(tmp_path: Path) -> None:
    """The GitHub Actions page's workflow step, run through the action's steps with its inputs
    (render swapped for the fixture repository's `cat`: no chart here)."""
    wf = _recipes()[0]  # the GitHub Actions page's
    (steps,) = [j["steps"] for j in wf["jobs"].values()]
    (ours,) = [s for s in steps if str(s.get("uses", "")).startswith("cmhash/cmhash@")]
    inputs = {k: str(v) for k, v in ours["with"].items()}
    inputs["render"] = "cat manifests.yaml"
    inputs["install"] = "true"
    repo, base = _plan_repo(tmp_path)
    with FakeGitHub(comments=0) as gh:
        env, context = _env(repo, gh, base)
        res = _run_action(repo, inputs, env, context)
    # 13 restarts against the page's max-restarts: 20 -> passes, comment posted
    assert res.returncode == 0, res.stderr
    assert [m for m, _ in gh.requests] == ["GET", "POST"]

"""The GitLab CI template (spec:inputs), run with the real gitlab-ci-local 4.73.0 in a
throwaway project, shell executor."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
from conftest import ROOT, git, git_commit, git_init, tool, tool_env

pytestmark = pytest.mark.integration

CM = 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cfg\ndata:\n  a: "1"\n'
DEP = (
    "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: app\nspec:\n  template:\n"
    "    spec:\n      containers:\n      - name: main\n        envFrom:\n"
    "        - configMapRef: {name: cfg}\n"
)

PIPELINE = """stages: [render, build, verify]

include:
  - local: ci-templates/gitlab/cmhash.yml
    inputs:
      install: "true"                 # cmhash is on PATH already
      manifests: rendered/
      needs: [render]
      annotation-key: example.com/config-hash
      extra-args: --strict
{check}
render:
  stage: render
  script:
    - mkdir -p rendered
    - cp fixtures/*.yaml rendered/
  artifacts:
    paths: [rendered/]

verify:
  stage: verify
  needs: [cmhash]
  script:
    - "grep -q 'example.com/config-hash: ' rendered/app.yaml"
    - test -s cmhash.log
"""


def project(tmp: Path, pipeline: str, app: str = DEP) -> Path:
    repo = tmp / "project"
    (repo / "ci-templates" / "gitlab").mkdir(parents=True)
    shutil.copy(
        ROOT / "ci-templates" / "gitlab" / "cmhash.yml",
        repo / "ci-templates" / "gitlab" / "cmhash.yml",
    )
    (repo / "fixtures").mkdir()
    (repo / "fixtures" / "config.yaml").write_text(CM)
    (repo / "fixtures" / "app.yaml").write_text(app)
    (repo / ".gitlab-ci.yml").write_text(pipeline)
    git_init(repo)
    git(repo, "remote", "add", "origin", "https://gitlab.example.com/platform/demo.git")
    git_commit(repo, "init")
    return repo


def gitlab_ci_local(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    tool("rsync")
    return subprocess.run(
        [tool("gitlab-ci-local"), "--force-shell-executor", *args],
        cwd=repo,
        capture_output=True,
        text=True,
        env=tool_env(),
        check=False,
        timeout=300,
    )


def test_inject_job_writes_the_artifact(tmp_path: Path) -> None:
    repo = project(tmp_path, PIPELINE.format(check=""))
    out = gitlab_ci_local(repo)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "PASS" in out.stdout and "verify" in out.stdout
    text = (repo / "rendered" / "app.yaml").read_text()  # artifacts copied back to source
    assert 'example.com/config-hash: "' in text


def test_check_only_fails_the_pipeline(tmp_path: Path) -> None:
    pipeline = PIPELINE.format(check="      check-only: true\n")
    repo = project(tmp_path, pipeline)
    out = gitlab_ci_local(repo, "render", "cmhash")
    assert out.returncode != 0
    assert "would update rendered/app.yaml" in out.stdout


def test_bad_annotation_key_input_is_rejected(tmp_path: Path) -> None:
    pipeline = PIPELINE.format(check="").replace("example.com/config-hash", "BAD KEY")
    repo = project(tmp_path, pipeline)
    out = gitlab_ci_local(repo, "--preview")
    assert out.returncode != 0
    assert "annotation-key" in out.stdout + out.stderr


def test_example_pipeline_is_valid(tmp_path: Path) -> None:
    """The README's complete example expands (render -> cmhash -> deploy)."""
    repo = project(
        tmp_path, (ROOT / "ci-templates" / "gitlab" / "example.gitlab-ci.yml").read_text()
    )
    out = gitlab_ci_local(repo, "--preview")
    assert out.returncode == 0, out.stdout + out.stderr
    assert "cmhash --in-place" in out.stdout and "needs:" in out.stdout


# ------------------------------------------------------------------ the report job

REPORT_PIPELINE = """stages: [test]

include:
  - local: ci-templates/gitlab/cmhash-report.yml
    inputs:
      install: "true"
      render: cat k8s/*.yaml
      post-comment: true
{extra}
"""


def report_project(tmp: Path, extra: str = "", case: Path | None = None) -> tuple[Path, str]:
    """A repo whose main branch has the report fixture's OLD side and whose feature
    branch (checked out) has the NEW side (``case``: another fixture's); returns it and
    main's commit."""
    from test_report import CASE

    src = case or CASE
    repo = tmp / "project"
    (repo / "ci-templates" / "gitlab").mkdir(parents=True)
    shutil.copy(
        ROOT / "ci-templates" / "gitlab" / "cmhash-report.yml",
        repo / "ci-templates" / "gitlab" / "cmhash-report.yml",
    )
    (repo / "k8s").mkdir()
    (repo / "k8s" / "app.yaml").write_bytes((src / "old.yaml").read_bytes())
    (repo / ".gitlab-ci.yml").write_text(REPORT_PIPELINE.format(extra=extra))
    git_init(repo, branch="main")
    git(repo, "remote", "add", "origin", "https://gitlab.example.com/platform/demo.git")
    base = git_commit(repo, "base")
    git(repo, "checkout", "-q", "-b", "feature")
    git_commit(repo, "change config", {"k8s/app.yaml": (src / "new.yaml").read_bytes()})
    return repo, base


def mr_variables(env: dict[str, str], base: str) -> list[str]:
    args = []
    for k in ("CI_API_V4_URL", "CI_PROJECT_ID", "CI_MERGE_REQUEST_IID", "CMHASH_GITLAB_TOKEN"):
        args += ["--variable", f"{k}={env[k]}"]
    return [*args, "--variable", f"CI_MERGE_REQUEST_DIFF_BASE_SHA={base}"]


def test_report_job_stores_artifacts_and_posts_one_note(tmp_path: Path) -> None:
    from fakegitlab import FakeGitLab

    from cmhash.integrations.comments import marker

    repo, base = report_project(tmp_path)
    with FakeGitLab() as gl:
        for _ in range(2):  # a second pipeline updates the note instead of adding one
            out = gitlab_ci_local(repo, *mr_variables(gl.env(), base))
            assert out.returncode == 0, out.stdout + out.stderr
        assert [n["id"] for n in gl.notes] == [1, 2]
        note = gl.notes[1]["body"]
    # this job's comment: keyed by the directory it renders in (the root) and --render
    key = marker("\0cat k8s/*.yaml")
    assert note.startswith(key + "\n### cmhash: 1 workload will restart;")
    assert "new-db-password-value" not in note
    art = repo / "cmhash-report"
    assert (art / "report.md").read_text() == note.removeprefix(key + "\n")
    data = json.loads((art / "report.json").read_text())
    assert [w["name"] for w in data["restart"]] == ["api"]
    issues = json.loads((art / "codequality.json").read_text())
    assert "cmhash/immutable-config" in {i["check_name"] for i in issues}
    assert b"LOG_LEVEL: info" in (art / "old.yaml").read_bytes()
    assert b"LOG_LEVEL: debug" in (art / "new.yaml").read_bytes()


def test_report_job_fail_on_error_keeps_the_artifacts(tmp_path: Path) -> None:
    from fakegitlab import FakeGitLab

    repo, base = report_project(tmp_path, "      fail-on: error\n")
    with FakeGitLab() as gl:
        out = gitlab_ci_local(repo, *mr_variables(gl.env(), base))
    assert out.returncode != 0
    assert "immutable-config" in out.stdout
    assert (repo / "cmhash-report" / "report.md").exists()
    assert len(gl.notes) == 2  # posted before failing


def test_report_job_capacity_budget_fails_and_says_so_in_the_note(tmp_path: Path) -> None:
    """The capacity budget inputs reach ci-report: over them the job fails after posting
    the note, which ends with the same line as the log."""
    from fakegitlab import FakeGitLab

    extra = '      max-surge-memory: 1Gi\n      no-downtime: true\n      nodes: "2"\n'
    case = ROOT / "tests" / "fixtures" / "report-capacity"
    repo, base = report_project(tmp_path, extra, case)
    with FakeGitLab() as gl:
        out = gitlab_ci_local(repo, *mr_variables(gl.env(), base))
        note = gl.notes[-1]["body"]
    assert out.returncode != 0
    over = (
        "the restarts rolling at once request 1968Mi more memory (--max-surge-memory 1Gi); "
        "3 workloads have no pod available during their rollout (--no-downtime)"
    )
    assert f"cmhash: {over}" in out.stdout
    assert note.endswith(f"> ❌ **Over budget**: {over}\n")
    data = json.loads((repo / "cmhash-report" / "report.json").read_text())
    agent = next(w for w in data["restart"] if w["name"] == "agent")
    assert agent["capacity"]["replicas"] == 2  # --nodes 2

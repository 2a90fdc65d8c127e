"""The GitLab CI template (spec:inputs), run with the real gitlab-ci-local 4.73.0 in a
throwaway project, shell executor."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from conftest import ROOT, tool, tool_env

pytestmark = pytest.mark.integration

CM = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cfg\ndata:\n  a: \"1\"\n"
DEP = ("apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: app\nspec:\n  template:\n"
       "    spec:\n      containers:\n      - name: main\n        envFrom:\n"
       "        - configMapRef: {name: cfg}\n")

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


def git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "user.email=t@example.com", "-c", "user.name=t", *args],
                   cwd=repo, check=True, capture_output=True)


def project(tmp: Path, pipeline: str, app: str = DEP) -> Path:
    repo = tmp / "project"
    (repo / "ci-templates" / "gitlab").mkdir(parents=True)
    shutil.copy(ROOT / "ci-templates" / "gitlab" / "cmhash.yml",
                repo / "ci-templates" / "gitlab" / "cmhash.yml")
    (repo / "fixtures").mkdir()
    (repo / "fixtures" / "config.yaml").write_text(CM)
    (repo / "fixtures" / "app.yaml").write_text(app)
    (repo / ".gitlab-ci.yml").write_text(pipeline)
    git(repo, "init", "-q")
    git(repo, "remote", "add", "origin", "https://gitlab.example.com/platform/demo.git")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "init")
    return repo


def gitlab_ci_local(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    tool("rsync")
    return subprocess.run([tool("gitlab-ci-local"), "--force-shell-executor", *args],
                          cwd=repo, capture_output=True, text=True, env=tool_env(),
                          check=False, timeout=300)


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
    repo = project(tmp_path, (ROOT / "ci-templates" / "gitlab" / "example.gitlab-ci.yml")
                   .read_text())
    out = gitlab_ci_local(repo, "--preview")
    assert out.returncode == 0, out.stdout + out.stderr
    assert "cmhash --in-place" in out.stdout and "needs:" in out.stdout

"""The recipe (docs/concepts/lock.md): the scheduled GitLab job (ci-templates/gitlab/
cmhash-lock.yml, run by the real gitlab-ci-local, shell executor) and the GitHub
workflow (ci-templates/github/cmhash-lock.yml, its steps run in bash as GitHub runs
them), each with a kubectl that answers from a fixed export and records what it was
asked, against the fake forges (tests/fakeforge.py): the first run proposes the lock,
a run with nothing rotated proposes nothing, a rotation updates the one request with the
rollout plan; kubectl is asked only for the kinds the lock needs; no exported value is
left in the workspace, the artifacts or the request."""

from __future__ import annotations

import base64
import os
import re
import shutil
import stat
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml
from clusterexport import VALUES, export
from conftest import ROOT, TESTS, git, git_commit, git_init
from fakeforge import FakeGitHubRepo, FakeGitLabRepo, Repo
from fakegithub import TOKEN as GITHUB_TOKEN

pytestmark = pytest.mark.integration

MANIFESTS = TESTS / "fixtures" / "lock" / "manifests"
KUBECTL = """#!/bin/sh
# a kubectl that answers `get` from the export the test put beside it
echo "$*" >> "$(dirname "$0")/kubectl.log"
cat "$(dirname "$0")/cluster.yaml"
"""
ROTATED = {"db-creds": {**VALUES["db-creds"], "password": "VALUE-vault-db-password-2"}}


def _kubectl(where: Path, text: str) -> Path:
    where.mkdir(parents=True, exist_ok=True)
    (where / "cluster.yaml").write_text(text)
    script = where / "kubectl"
    script.write_text(KUBECTL)
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    return script


def _repo_files() -> dict[str, str]:
    # as many repositories hold them: no `---` at the top, the last line without its
    # newline (plain `cat` of these would glue the documents)
    files = {
        f"k8s/{p.name}": p.read_text().removeprefix("---\n").rstrip("\n")
        for p in sorted(MANIFESTS.glob("*.yaml"))
    }
    files[".cmhash.yaml"] = "lock: cmhash.lock\n"
    return files


def _values_in(text: str) -> list[str]:
    forms = [
        form
        for values in VALUES.values()
        for v in values.values()
        for form in (v, base64.b64encode(v.encode()).decode())
    ]
    return [form for form in forms if form in text]


def _tree_text(root: Path) -> str:
    return "\n".join(
        p.read_bytes().decode("utf-8", "replace")
        for p in root.rglob("*")
        if p.is_file() and ".git" not in p.parts and "fake" not in p.parts
    )


# ------------------------------------------------------------------ GitLab

PIPELINE = """stages: [test]

include:
  - local: ci-templates/gitlab/cmhash-lock.yml
    inputs:
      install: "true"
      render: for f in k8s/*.yaml; do echo ---; cat "$f"; echo; done
      kubectl: {kubectl}
      secret-key-variable: CMHASH_LOCK_KEY
"""


def _gitlab_project(tmp: Path) -> tuple[Path, Path]:
    from test_gitlab import gitlab_ci_local  # noqa: F401  (skips without the tool)

    repo = tmp / "project"
    (repo / "ci-templates" / "gitlab").mkdir(parents=True)
    shutil.copy(ROOT / "ci-templates/gitlab/cmhash-lock.yml", repo / "ci-templates/gitlab/")
    fake = tmp / "fake"
    kubectl = _kubectl(fake, export())
    for name, text in _repo_files().items():
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text(text)
    (repo / ".gitlab-ci.yml").write_text(PIPELINE.format(kubectl=kubectl))
    git_init(repo, branch="main")
    git(repo, "remote", "add", "origin", "https://gitlab.example.com/platform/demo.git")
    git_commit(repo, "init")
    return repo, fake


def _gitlab_run(repo: Path, gl: FakeGitLabRepo) -> subprocess.CompletedProcess[str]:
    from test_gitlab import gitlab_ci_local

    args = ["--variable", "CI_PIPELINE_SOURCE=schedule", "--variable", "CMHASH_LOCK_KEY=k3y"]
    args += ["--variable", "CMHASH_LOCK_SCHEDULE=1"]
    for k, v in gl.env().items():
        args += ["--variable", f"{k}={v}"]
    return gitlab_ci_local(repo, *args)


RENDERED_SECRET = """apiVersion: v1
kind: Secret
metadata:
  name: api-token
  namespace: shop
stringData:
  api-token: Cnry-rendered-secret-X1
"""


def test_the_gitlab_job_proposes_a_changed_lock_once(tmp_path: Path) -> None:
    repo, fake = _gitlab_project(tmp_path)
    # a chart's render may hold a Secret: never kept as an artifact
    (repo / "k8s" / "zsecret.yaml").write_text(RENDERED_SECRET)
    git_commit(repo, "a rendered Secret", {"k8s/zsecret.yaml": RENDERED_SECRET})
    forge = Repo(_repo_files())
    with FakeGitLabRepo(forge) as gl:
        out = _gitlab_run(repo, gl)
        assert out.returncode == 0, out.stdout + out.stderr
        assert "opened merge request !1" in out.stdout + out.stderr
        [mr] = gl.mrs
        assert mr["source_branch"] == "cmhash/lock" and mr["target_branch"] == "main"
        assert "newly locked (VaultStaticSecret shop/db)" in mr["description"]
        lock = forge.files("cmhash/lock")["cmhash.lock"]  # type: ignore[index]
        assert '"keyed": true' in lock
        # kubectl was asked for exactly the kinds the lock needs, and nothing else
        [asked] = (fake / "kubectl.log").read_text().splitlines()
        kinds = asked.split()[1].split(",")
        assert set(kinds) == {
            "certificates.cert-manager.io",  # (the Secret it issues: never read as a Secret)
            "configmaps",
            "secrets",
            "hcpvaultsecretsapps.secrets.hashicorp.com",
            "secretproviderclasspodstatuses.secrets-store.csi.x-k8s.io",
            "vaultdynamicsecrets.secrets.hashicorp.com",
            "vaultpkisecrets.secrets.hashicorp.com",
            "vaultstaticsecrets.secrets.hashicorp.com",
        }
        assert asked.endswith("--all-namespaces -o yaml")
        # merged: nothing rotated, nothing proposed
        (repo / "cmhash.lock").write_text(lock)
        git_commit(repo, "merge the lock", {"cmhash.lock": lock})
        merged = {**forge.files("main"), "cmhash.lock": lock}  # type: ignore[dict-item]
        forge.branches["main"] = forge.commit(merged, forge.branches["cmhash/lock"], "merge")
        gl.mrs[0]["state"] = "merged"
        out = _gitlab_run(repo, gl)
        assert out.returncode == 0, out.stdout + out.stderr
        assert "cmhash.lock is current" in out.stdout + out.stderr
        # a rotation: the rollout plan says which pods roll and why
        (fake / "cluster.yaml").write_text(
            export(ROTATED, db="4q2+7wAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=")
        )
        out = _gitlab_run(repo, gl)
        assert out.returncode == 0, out.stdout + out.stderr
        assert "opened merge request !2" in out.stdout + out.stderr
        description = gl.mrs[1]["description"]
        assert "rotated in the store (VaultStaticSecret shop/db)" in description
        assert "`Deployment/api`" in description and "`Deployment/worker`" in description
        assert "`Deployment/web`" not in description
    for text in (description, _tree_text(repo), out.stdout, out.stderr):
        assert _values_in(text) == []
    assert not list(repo.glob("export*.yaml"))  # removed once the lock is written
    kept = [
        p for p in repo.rglob("*") if p.is_file() and {"artifacts", "cmhash-lock"} & set(p.parts)
    ]
    assert kept and not [p for p in kept if p.name == "manifests.yaml"]
    assert not [p for p in kept if "Cnry-rendered-secret-X1" in p.read_text("utf-8", "replace")]


# ------------------------------------------------------------------ GitHub

WORKFLOW = ROOT / "ci-templates" / "github" / "cmhash-lock.yml"
EXPR = re.compile(r"\$\{\{\s*(.*?)\s*\}\}")


def _expr(expr: str, context: dict[str, str]) -> str:
    for name in (part.strip() for part in expr.split("||")):
        if context.get(name):
            return context[name]
    return ""


def _run_workflow(repo: Path, env: dict[str, str], context: dict[str, str]) -> Any:
    workflow = yaml.safe_load(WORKFLOW.read_text())
    job = workflow["jobs"]["lock"]
    job_env = {
        k: EXPR.sub(lambda m: _expr(m.group(1), context), str(v)) for k, v in job["env"].items()
    }
    for step in job["steps"]:
        if "run" not in step or step["run"].startswith("pip install"):
            continue  # (actions/checkout, setup-python: the test's repository and venv)
        step_env = {
            k: EXPR.sub(lambda m: _expr(m.group(1), context), str(v))
            for k, v in step.get("env", {}).items()
        }
        res = subprocess.run(
            ["bash", "-e", "-c", step["run"]],
            cwd=repo,
            env={**env, **job_env, **step_env},
            capture_output=True,
            text=True,
            check=False,
        )
        if res.returncode != 0:
            return res
    return res


def test_the_github_workflow_proposes_a_changed_lock_once(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    for name, text in _repo_files().items():
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text(text)
    git_init(repo, branch="main")
    git_commit(repo, "init")
    fake = _kubectl(tmp_path / "fake", export())
    forge = Repo(_repo_files())
    summary = tmp_path / "summary.md"
    with FakeGitHubRepo(forge) as gh:
        env = {
            **os.environ,
            **gh.env(),
            "PATH": f"{fake.parent}{os.pathsep}{os.environ['PATH']}",
            "GITHUB_STEP_SUMMARY": str(summary),
            "RUNNER_TEMP": str(tmp_path / "runner-temp"),
        }
        context = {
            "secrets.CMHASH_KUBECONFIG": "apiVersion: v1\nkind: Config\n",
            "secrets.CMHASH_LOCK_KEY": "k3y",
            "github.token": GITHUB_TOKEN,
        }
        res = _run_workflow(repo, env, context)
        assert res.returncode == 0, res.stdout + res.stderr
        assert "opened pull request #1" in res.stderr
        [pull] = gh.pulls
        assert pull["head"] == "cmhash/lock" and pull["base"] == "main"
        assert "newly locked (VaultStaticSecret shop/db)" in pull["body"]
        lock = forge.files("cmhash/lock")["cmhash.lock"]  # type: ignore[index]
        git_commit(repo, "merge the lock", {"cmhash.lock": lock})
        merged = {**forge.files("main"), "cmhash.lock": lock}  # type: ignore[dict-item]
        forge.branches["main"] = forge.commit(merged, forge.branches["cmhash/lock"], "merge")
        pull["state"] = "closed"
        res = _run_workflow(repo, env, context)
        assert res.returncode == 0, res.stdout + res.stderr
        assert "cmhash.lock is current" in res.stdout
        (fake.parent / "cluster.yaml").write_text(
            export(ROTATED, db="4q2+7wAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=")
        )
        res = _run_workflow(repo, env, context)
        assert res.returncode == 0, res.stdout + res.stderr
        assert "opened pull request #2" in res.stderr
        assert "rotated in the store (VaultStaticSecret shop/db)" in gh.pulls[1]["body"]
        # the store went back before anyone merged: the stale pull request is closed
        (fake.parent / "cluster.yaml").write_text(export())
        res = _run_workflow(repo, env, context)
        assert res.returncode == 0, res.stdout + res.stderr
        assert "closed the stale pull request #2" in res.stderr
        assert gh.pulls[1]["state"] == "closed"
    assert _values_in(gh.pulls[1]["body"] + summary.read_text() + res.stdout + res.stderr) == []
    temp = tmp_path / "runner-temp" / "cmhash-lock"
    assert not list(temp.glob("export*")) and not (temp / "kubeconfig").exists()
    assert _values_in(_tree_text(temp)) == []


# GitHub's context availability ("Contexts reference", Context availability), as actionlint
# checks it (rhysd/actionlint, rule_expression.go: jobs.<job_id>.env): a workflow using
# another context there is invalid and never runs
JOB_ENV_CONTEXTS = {"github", "needs", "strategy", "matrix", "vars", "secrets", "inputs"}
STEP_CONTEXTS = JOB_ENV_CONTEXTS | {"job", "runner", "env", "steps"}


def test_the_github_workflow_uses_each_context_only_where_github_allows_it() -> None:
    workflow = yaml.safe_load(WORKFLOW.read_text())
    for name, job in workflow["jobs"].items():
        places = [(f"jobs.{name}.env", v, JOB_ENV_CONTEXTS) for v in job.get("env", {}).values()]
        for step in job["steps"]:
            for key in ("env", "with"):
                places += [
                    (f"a step's {key}", v, STEP_CONTEXTS) for v in step.get(key, {}).values()
                ]
            places += [("a step's run", step.get("run", ""), STEP_CONTEXTS)]
        for where, value, allowed in places:
            for expr in EXPR.findall(str(value)):
                used = set(re.findall(r"\b([a-z_]+)\.", expr)) - {"true", "false"}
                assert used <= allowed, (where, expr)


def test_a_checkout_git_cannot_read_fails_the_job_and_proposes_nothing(tmp_path: Path) -> None:
    """A git failure (no git, a checkout it refuses) is not "no lock on HEAD yet": that
    would propose every locked workload as newly locked on every run."""
    repo = tmp_path / "repo"
    for name, text in _repo_files().items():
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text(text)
    fake = _kubectl(tmp_path / "fake", export())
    with FakeGitHubRepo(Repo(_repo_files())) as gh:
        env = {
            **os.environ,
            **gh.env(),
            "PATH": f"{fake.parent}{os.pathsep}{os.environ['PATH']}",
            "GITHUB_STEP_SUMMARY": str(tmp_path / "summary.md"),
            "RUNNER_TEMP": str(tmp_path / "runner-temp"),
            "GIT_CEILING_DIRECTORIES": str(tmp_path),
        }
        context = {"secrets.CMHASH_KUBECONFIG": "apiVersion: v1\nkind: Config\n"}
        res = _run_workflow(repo, env, {**context, "github.token": GITHUB_TOKEN})
        assert res.returncode == 2, res.stdout + res.stderr
        assert "git cannot read this checkout's HEAD" in res.stdout
        assert gh.pulls == [] and gh.requests == []


def test_the_gitlab_job_runs_only_in_the_lock_s_own_schedule(tmp_path: Path) -> None:
    """Not in every scheduled pipeline of the project (a nightly build): only the one
    whose variables set CMHASH_LOCK_SCHEDULE."""
    from test_gitlab import gitlab_ci_local

    repo, fake = _gitlab_project(tmp_path)
    with FakeGitLabRepo(Repo(_repo_files())) as gl:
        args = ["--variable", "CI_PIPELINE_SOURCE=schedule"]
        for k, v in gl.env().items():
            args += ["--variable", f"{k}={v}"]
        out = gitlab_ci_local(repo, *args)
        assert "cmhash-lock starting" not in out.stdout + out.stderr
        assert gl.requests == []
    assert not (fake / "kubectl.log").exists()

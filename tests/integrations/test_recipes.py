"""Every recipe of the integration pages, run as it is written with the real tools. A
recipe is the fenced block after a ``<!-- recipe: NAME -->`` line; what it pins as a
release is pointed at the commit under test (the only change), the project's URL at
this checkout or at what it serves, and the things a reader brings (a chart, an
overlay, rendered manifests) are made here. Shell recipes run in bash -e with the
tools under the names the pages use (``helm`` is Helm 4 or, for the Helm 3 page, Helm
3; ``kustomize`` v5 or v4.5.4). pre-commit's recipe: test_precommit.py."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from conftest import ROOT, TOOLS_BIN, checkout_head, git, git_commit, git_init, run_cmhash, tool

from cmhash import __version__

pytestmark = pytest.mark.integration
PAGES = ROOT / "docs" / "integrations"
RECIPE = re.compile(r"^<!-- recipe: ([\w-]+) -->\n```(\w+)\n(.*?)^```$", re.MULTILINE | re.DOTALL)
HOME = "https://gitlab.com/cmhash/cmhash"
CHART = ROOT / "tests" / "fixtures" / "chart"


def recipes() -> dict[str, str]:
    found: dict[str, str] = {}
    for page in sorted(PAGES.glob("*.md")):
        for name, _lang, body in RECIPE.findall(page.read_text(encoding="utf-8")):
            assert name not in found, name
            found[name] = body
    return found


RECIPES = recipes()


def test_every_integration_page_has_its_recipes_and_tool_versions() -> None:
    assert set(RECIPES) == {
        "helm3",
        "helm4",
        "kustomize-pipe",
        "kustomize-transformer",
        "krm",
        "pre-commit",
        "gitlab",
        "gitlab-report",
        "github",
        "argocd-helm",
        "flux-kustomize",
    }
    for page in PAGES.glob("*.md"):
        if page.name == "index.md":
            continue
        first = page.read_text(encoding="utf-8").split("\n\n")[1]
        assert first.startswith("Works with") and re.search(r"\d+\.\d+", first), page.name


def _pinned(text: str, ref: str) -> str:
    """The recipe with its pinned release pointed at ``ref``."""
    return text.replace(f"v{__version__}", ref)


def _bin(tmp: Path, **names: str) -> Path:
    """A directory of the commands a recipe names, as links to the real tools."""
    out = tmp / "recipe-bin"
    out.mkdir(exist_ok=True)
    for name, real in names.items():
        (out / name).unlink(missing_ok=True)
        (out / name).symlink_to(tool(real))
    return out


def _sh(recipe: str, cwd: Path, bindir: Path, **env: str) -> subprocess.CompletedProcess[str]:
    path = os.pathsep.join(
        [str(bindir), str(Path(sys.executable).parent), str(TOOLS_BIN), os.environ["PATH"]]
    )
    return subprocess.run(
        ["bash", "-e", "-c", recipe],
        cwd=cwd,
        env={**os.environ, "PATH": path, **env},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def _helm_homes(tmp: Path) -> dict[str, str]:
    return {
        "HELM_CONFIG_HOME": str(tmp / "hc"),
        "HELM_DATA_HOME": str(tmp / "hd"),
        "HELM_CACHE_HOME": str(tmp / "hk"),
    }


def _annotated(text: str) -> int:
    """Workloads with cmhash's annotation (kustomize writes its value unquoted)."""
    return len(re.findall(r'checksum/config: "?[0-9a-f]{64}"?$', text, flags=re.MULTILINE))


# -- Helm --------------------------------------------------------------------------------


def test_helm3_recipe(tmp_path: Path) -> None:
    shutil.copytree(CHART, tmp_path / "chart")
    done = _sh(RECIPES["helm3"], tmp_path, _bin(tmp_path, helm="helm3"), **_helm_homes(tmp_path))
    assert done.returncode == 0, done.stderr
    plain = subprocess.run(
        [tool("helm3"), "template", "web", "./chart"], cwd=tmp_path, capture_output=True, text=True
    ).stdout
    assert _annotated(done.stdout) >= 1
    assert run_cmhash(["--no-config", "-"], stdin=plain.encode()).out == done.stdout


def test_helm4_recipe(tmp_path: Path) -> None:
    shutil.copytree(CHART, tmp_path / "chart")
    homes = _helm_homes(tmp_path)
    done = _sh(RECIPES["helm4"], tmp_path, _bin(tmp_path, helm="helm"), **homes)
    assert done.returncode == 0, done.stderr
    assert (Path(homes["HELM_DATA_HOME"]) / "plugins" / "cmhash" / "plugin.yaml").exists()
    assert _annotated(done.stdout) >= 1


# -- kustomize ----------------------------------------------------------------------------

DEPLOYMENT = (ROOT / "ci-templates" / "kustomize" / "krm" / "deployment.yaml").read_text()


@pytest.mark.parametrize("kustomize", ["kustomize", "kustomize4"])
def test_kustomize_pipe_recipe(tmp_path: Path, kustomize: str) -> None:
    overlay = tmp_path / "overlays" / "prod"
    overlay.mkdir(parents=True)
    (overlay / "deployment.yaml").write_text(DEPLOYMENT)
    (overlay / "kustomization.yaml").write_text(
        "resources: [deployment.yaml]\nconfigMapGenerator:\n"
        "  - name: web-config\n    literals: [LOG_LEVEL=info]\n"
    )
    done = _sh(RECIPES["kustomize-pipe"], tmp_path, _bin(tmp_path, kustomize=kustomize))
    assert done.returncode == 0, done.stderr
    assert _annotated((tmp_path / "rendered.yaml").read_text()) == 1


@pytest.mark.parametrize("kustomize", ["kustomize", "kustomize4"])
def test_kustomize_transformer_recipe(tmp_path: Path, kustomize: str) -> None:
    shutil.copytree(ROOT / "ci-templates", tmp_path / "ci-templates")
    done = _sh(
        RECIPES["kustomize-transformer"],
        tmp_path,
        _bin(tmp_path, kustomize=kustomize),
        XDG_CONFIG_HOME=str(tmp_path / "xdg"),
        HOME=str(tmp_path),
    )
    assert done.returncode == 0, done.stderr
    assert _annotated(done.stdout) == 1


def test_krm_recipe(tmp_path: Path) -> None:
    shutil.copytree(ROOT / "ci-templates", tmp_path / "ci-templates")
    done = _sh(RECIPES["krm"], tmp_path, _bin(tmp_path, kustomize4="kustomize4"))
    assert done.returncode == 0, done.stderr
    assert _annotated(done.stdout) == 1


def _chart_kustomization(app: Path) -> None:
    """What a reader has: a kustomization that inflates a chart (a local one here: no
    chart repository is reachable from CI)."""
    (app / "charts").mkdir(parents=True)
    shutil.copytree(CHART, app / "charts" / "demo")
    (app / "kustomization.yaml").write_text(
        "helmCharts:\n  - name: demo\n    releaseName: shop\n    namespace: shop\n"
        "helmGlobals:\n  chartHome: charts\n"
    )


def test_argocd_helm_recipe(tmp_path: Path) -> None:
    app = tmp_path / "apps" / "shop"
    _chart_kustomization(app)
    bindir = _bin(tmp_path, helm3="helm3", kubectl="kubectl")
    homes = _helm_homes(tmp_path)
    done = _sh(RECIPES["argocd-helm"], tmp_path, bindir, **homes)
    assert done.returncode == 0, done.stderr
    assert "- path: cmhash-patches.yaml" in (app / "kustomization.yaml").read_text()
    built = _sh(
        "kubectl kustomize --enable-helm --helm-command helm3 apps/shop", tmp_path, bindir, **homes
    )
    assert _annotated(built.stdout) >= 1
    again = _sh(RECIPES["argocd-helm"].rstrip() + " --check", tmp_path, bindir, **homes)
    assert again.returncode == 0, again.stderr


def test_flux_kustomize_recipe(tmp_path: Path) -> None:
    shop = tmp_path / "clusters" / "prod" / "shop"
    shop.mkdir(parents=True)
    (shop / "deployment.yaml").write_text(
        DEPLOYMENT.replace("name: web\n", "name: web\n  namespace: shop\n", 1)
    )
    (shop / "config.yaml").write_text(
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: web-config\n  namespace: shop\n"
        "data:\n  A: '1'\n"
    )
    (shop / "kustomization.yaml").write_text("resources:\n  - deployment.yaml\n  - config.yaml\n")
    done = _sh(RECIPES["flux-kustomize"], tmp_path, _bin(tmp_path, kubectl="kubectl"))
    assert done.returncode == 0, done.stderr  # the --check line passes after the write
    assert (shop / "cmhash-patches.yaml").is_file()
    (shop / "config.yaml").write_text((shop / "config.yaml").read_text().replace("'1'", "'2'"))
    stale = _sh(RECIPES["flux-kustomize"].splitlines()[-1], tmp_path, _bin(tmp_path))
    assert stale.returncode == 1, stale.stderr


# -- GitLab CI -----------------------------------------------------------------------------

PIP_SHIM = """#!/bin/sh
# pip as the recipe's job calls it: the release archive of the commit under test is what
# it installs (test_install.py installs such an archive for real); cmhash is on PATH.
[ "$*" = "install --quiet {url}" ] || {{ echo "pip shim: unexpected: $*" >&2; exit 9; }}
echo "$*" >> "{log}"
"""


def _gitlab_project(tmp: Path, recipe: str, head: str, extra: str) -> Path:
    """A consumer project whose .gitlab-ci.yml is the recipe (its pinned release pointed
    at ``head``) plus its own jobs; the project include is what GitLab would fetch: the
    template file at ``head`` (gitlab-ci-local's include cache, filled beforehand)."""
    repo = tmp / "project"
    (repo / "k8s").mkdir(parents=True)
    pipeline = _pinned(recipe, head) + extra
    include = yaml.safe_load(pipeline)["include"][0]
    cache = repo / ".gitlab-ci-local" / "includes" / "gitlab.com" / include["project"] / head
    (cache / Path(include["file"]).parent).mkdir(parents=True)
    (cache / include["file"]).write_text(git(ROOT, "show", f"{head}:{include['file']}") + "\n")
    (repo / ".gitlab-ci.yml").write_text(pipeline)
    return repo


def _gitlab_ci_local(repo: Path, bindir: Path, *args: str) -> subprocess.CompletedProcess[str]:
    tool("rsync")
    path = os.pathsep.join(
        [str(bindir), str(Path(sys.executable).parent), str(TOOLS_BIN), os.environ["PATH"]]
    )
    return subprocess.run(
        [tool("gitlab-ci-local"), "--force-shell-executor", *args],
        cwd=repo,
        capture_output=True,
        text=True,
        env={**os.environ, "PATH": path},
        timeout=300,
        check=False,
    )


def _pip_shim(tmp: Path, head: str) -> tuple[Path, Path]:
    bindir = tmp / "job-bin"
    bindir.mkdir()
    log = tmp / "pip.log"
    url = f"{HOME}/-/archive/{head}/cmhash-{head}.tar.gz"
    (bindir / "pip").write_text(PIP_SHIM.format(url=url, log=log))
    (bindir / "pip").chmod(0o755)
    return bindir, log


def test_gitlab_recipe(tmp_path: Path) -> None:
    head = checkout_head()
    render = (
        "\nstages: [render, build]\n"
        "render:\n  stage: render\n  script:\n    - mkdir -p rendered\n"
        "    - cp k8s/*.yaml rendered/\n  artifacts:\n    paths: [rendered/]\n"
    )
    repo = _gitlab_project(tmp_path, RECIPES["gitlab"], head, render)
    (repo / "k8s" / "app.yaml").write_text(DEPLOYMENT.replace("web-config", "cfg"))
    (repo / "k8s" / "config.yaml").write_text(
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cfg\ndata:\n  a: '1'\n"
    )
    git_init(repo)
    git(repo, "remote", "add", "origin", "https://gitlab.com/shop/deploy.git")
    git_commit(repo, "init")
    bindir, log = _pip_shim(tmp_path, head)
    done = _gitlab_ci_local(repo, bindir)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert log.read_text().count("install --quiet") == 1
    assert (
        _annotated(
            (
                repo / ".gitlab-ci-local" / "artifacts" / "cmhash" / "rendered" / "app.yaml"
            ).read_text()
        )
        == 1
    )


def test_gitlab_report_recipe_expands(tmp_path: Path) -> None:
    """The report recipe's include resolves and its inputs are the template's (the job
    itself, against a fake GitLab: test_gitlab.py)."""
    head = checkout_head()
    repo = _gitlab_project(tmp_path, RECIPES["gitlab-report"], head, "\nstages: [test]\n")
    git_init(repo)
    git(repo, "remote", "add", "origin", "https://gitlab.com/shop/deploy.git")
    git_commit(repo, "init", {"k8s/a.yaml": "a: 1\n"})
    done = _gitlab_ci_local(repo, tmp_path, "--preview")
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert "cmhash ci-report" in done.stdout and "helm template shop ./chart" in done.stdout


# -- GitHub Actions ---------------------------------------------------------------------------

PYTHON_SHIM = """#!/bin/sh
# python3 as the action's install step calls it: `python3 -m pip install --quiet DIR`,
# DIR the action's checkout at the commit under test (installing such a tree for real:
# test_install.py); anything else runs the real interpreter.
if [ "$1 $2 $3 $4" = "-m pip install --quiet" ]; then
  [ "$5" = "{action}" ] && [ -f "$5/pyproject.toml" ] || {{ echo "python3 shim: $*" >&2; exit 9; }}
  echo "$*" >> "{log}"; exit 0
fi
exec "{python}" "$@"
"""


def test_github_recipe(tmp_path: Path) -> None:
    """The page's workflow: the action at the pinned ref is this commit's action.yml, run
    step by step with the recipe's inputs (render swapped for a `cat`: no chart here)."""
    from fakegithub import FakeGitHub
    from test_github_action import _env, _plan_repo, _run_action

    head = checkout_head()
    action_dir = tmp_path / "action"
    action_dir.mkdir()
    archive = subprocess.run(
        ["git", "-C", str(ROOT), "archive", head], capture_output=True, check=True
    )
    subprocess.run(["tar", "-x", "-C", str(action_dir)], input=archive.stdout, check=True)
    wf = yaml.safe_load(_pinned(RECIPES["github"], head))
    (steps,) = [job["steps"] for job in wf["jobs"].values()]
    (ours,) = [s for s in steps if str(s.get("uses", "")).startswith("cmhash/cmhash@")]
    assert ours["uses"] == f"cmhash/cmhash@{head}"
    inputs = {k: str(v) for k, v in ours["with"].items()}
    inputs["render"] = "cat manifests.yaml"
    log = tmp_path / "pip.log"
    bindir = tmp_path / "step-bin"
    bindir.mkdir()
    (bindir / "python3").write_text(
        PYTHON_SHIM.format(action=action_dir, log=log, python=sys.executable)
    )
    (bindir / "python3").chmod(0o755)
    repo, base = _plan_repo(tmp_path)
    with FakeGitHub(comments=0) as gh:
        env, context = _env(repo, gh, base)
        env["PATH"] = os.pathsep.join([str(bindir), env["PATH"]])
        res = _run_action(repo, inputs, env, context, action_path=action_dir)
    assert res.returncode == 0, res.stderr
    assert log.read_text().count("install --quiet") == 1
    assert [m for m, _ in gh.requests] == ["GET", "POST"]

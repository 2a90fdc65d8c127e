"""The install story as written: the version in one place (every copy checked against
it), and the install page's two pip lines (a git URL and a release archive) work, tried with
a local clone in place of the project URL. The wheel and sdist are built and checked
with twine in .ci/run."""

from __future__ import annotations

import re
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest
from conftest import ROOT, checkout_head

from cmhash import __version__

TAG = f"v{__version__}"
HOME = "https://gitlab.com/cmhash/cmhash"


def test_every_copy_of_the_version_matches() -> None:
    plugin = (ROOT / "src/cmhash/data/helm/cmhash/plugin.yaml").read_text()
    assert re.search(r"^version: (\S+)$", plugin, re.MULTILINE).group(1) == __version__  # type: ignore[union-attr]
    texts = {
        p: (ROOT / p).read_text()
        for p in (
            "docs/install.md",
            "docs/integrations/pre-commit.md",
            "docs/integrations/gitlab.md",
            "ci-templates/gitlab/cmhash.yml",
            "ci-templates/gitlab/cmhash-report.yml",
            "ci-templates/argocd/Dockerfile",
            "ci-templates/argocd/sidecar.yaml",
        )
    }
    ours = re.compile(
        r"(?:cmhash[-:]v?|rev: v|ref: v|@v|/raw/v|/archive/v|"
        r"CMHASH_VERSION=v)(\d+\.\d+\.\d+)"
    )
    for path, text in texts.items():
        found = set(ours.findall(text))
        assert found == {__version__}, (path, found)
        assert "github.com/cmhash" not in text and "platform/cmhash" not in text, path
    install = texts["docs/install.md"]
    assert f"rev: {TAG}" in texts["docs/integrations/pre-commit.md"]
    assert f"ref: {TAG}" in texts["docs/integrations/gitlab.md"]
    assert f'pip install "cmhash @ git+{HOME}.git@{TAG}"' in install
    archive = f"{HOME}/-/archive/{TAG}/cmhash-{TAG}.tar.gz"
    assert archive in install
    for path in ("ci-templates/gitlab/cmhash.yml", "ci-templates/gitlab/cmhash-report.yml"):
        assert f"default: pip install --quiet {archive}" in texts[path]
    assert f"ARG CMHASH_VERSION={TAG}" in texts["ci-templates/argocd/Dockerfile"]
    meta = (ROOT / "pyproject.toml").read_text()
    assert 'dynamic = ["version"]' in meta and f'Homepage = "{HOME}"' in meta


def _fresh_venv(tmp: Path) -> Path:
    subprocess.run([sys.executable, "-m", "venv", str(tmp / "venv")], check=True)
    return tmp / "venv" / "bin"


def _works(bindir: Path, tmp: Path) -> None:
    out = subprocess.run(
        [str(bindir / "cmhash"), "--version"], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == f"cmhash, version {__version__}"
    res = subprocess.run(
        [str(bindir / "cmhash"), "--no-config", str(ROOT / "examples/app.yaml")],
        capture_output=True,
        text=True,
        check=True,
        cwd=tmp,
    )
    assert res.stdout.count('checksum/config: "') == 2
    data = subprocess.run(
        [str(bindir / "cmhash"), "helm-plugin-dir"], capture_output=True, text=True, check=True
    ).stdout.strip()
    assert (Path(data) / "plugin.yaml").is_file()  # package data made it into the install


@pytest.mark.slow
def test_pip_install_from_a_git_url(tmp_path: Path) -> None:
    """``pip install "cmhash @ git+URL@REF"`` with this repository's HEAD as URL@REF."""
    head = checkout_head()
    bindir = _fresh_venv(tmp_path)
    subprocess.run(
        [str(bindir / "pip"), "install", "--quiet", f"cmhash @ git+file://localhost{ROOT}@{head}"],
        check=True,
    )
    _works(bindir, tmp_path)


@pytest.mark.slow
def test_pip_install_from_a_release_archive(tmp_path: Path) -> None:
    """The archive GitLab serves for a tag is ``git archive --prefix=cmhash-TAG/``; pip
    installs it without git."""
    checkout_head()
    archive = tmp_path / f"cmhash-{TAG}.tar.gz"
    subprocess.run(
        [
            "git",
            "-C",
            str(ROOT),
            "archive",
            "--format=tar.gz",
            f"--prefix=cmhash-{TAG}/",
            "-o",
            str(archive),
            "HEAD",
        ],
        check=True,
    )
    with tarfile.open(archive) as tar:
        assert f"cmhash-{TAG}/pyproject.toml" in tar.getnames()
    bindir = _fresh_venv(tmp_path)
    subprocess.run([str(bindir / "pip"), "install", "--quiet", str(archive)], check=True)
    _works(bindir, tmp_path)


def test_every_header_the_c_extensions_include_is_in_the_sdist() -> None:
    """A header of ours that a C file includes (``#include "x.h"``) is named in that
    extension's ``depends`` in setup.py: only then does an sdist carry it, and the wheel
    pip builds from the sdist compile the extension instead of quietly going without."""
    setup = (ROOT / "setup.py").read_text()
    sources = re.findall(r'sources=\["(src/[^"]+\.c)"\]', setup)
    assert len(sources) == 3
    for source in sources:
        c = (ROOT / source).read_text()
        for header in re.findall(r'^#include "([^"]+)"', c, re.MULTILINE):
            path = str((Path(source).parent / header).as_posix())
            assert (ROOT / path).is_file(), path
            block = setup[setup.index(f'sources=["{source}"]') :].split("optional=True", 1)[0]
            assert f'depends=["{path}"]' in block, (source, path)

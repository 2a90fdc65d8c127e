"""A release is one command (scripts/release.py), and every recipe names the release the
package is: the version each recipe pins is ``cmhash.__version__``, and no other file
names one. The release itself is made in a clone: version everywhere, CHANGELOG section
moved, wheel and sdist built and checked, commit and tag; refused on a dirty tree or a
version that is not newer; a dry run leaves the clone as it was."""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ROOT, git

from cmhash import __version__

SCRIPT = ROOT / "scripts" / "release.py"


def _release():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location("release", SCRIPT)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


RELEASE = _release()
# Where a recipe could name a release of cmhash: every text file a user reads or copies.
READ = [
    ROOT / "README.md",
    ROOT / "action.yml",
    ROOT / ".pre-commit-hooks.yaml",
    *sorted((ROOT / "docs").rglob("*.md")),
    *sorted(p for p in (ROOT / "ci-templates").rglob("*") if p.is_file()),
    *sorted((ROOT / "src" / "cmhash" / "data").rglob("*.yaml")),
]


def test_every_recipe_names_the_package_version() -> None:
    for name in RELEASE.VERSION_FILES:
        found = {m.group("version") for m in RELEASE.VERSION.finditer((ROOT / name).read_text())}
        assert found == {__version__}, (name, found)


def test_no_other_file_names_a_release() -> None:
    listed = {ROOT / name for name in RELEASE.VERSION_FILES}
    for path in READ:
        if path in listed:
            continue
        found = [m.group(0) for m in RELEASE.VERSION.finditer(path.read_text())]
        assert not found, (path.relative_to(ROOT), found)


PINS = ("rev: v", "ref: v", "@v", "/archive/v", "/raw/v", "CMHASH_VERSION=v")


def test_each_pinned_release_says_what_to_use_before_the_first_release() -> None:
    """Until a tag exists, a recipe pasted as it is cannot find it: each line that pins
    a release (or one of the two lines above it) says what to put there instead, and
    the release drops that note."""
    for name in RELEASE.VERSION_FILES:
        lines = (ROOT / name).read_text().splitlines()
        for n, line in enumerate(lines):
            for m in RELEASE.VERSION.finditer(line):
                if m.group("lead") in PINS:
                    near = "\n".join(lines[max(0, n - 2) : n + 1])
                    assert RELEASE.FIRST_RELEASE_NOTE in near, f"{name}:{n + 1}: {line}"


def _clone(tmp_path: Path) -> Path:
    clone = tmp_path / "cmhash"
    subprocess.run(["git", "clone", "--quiet", "--no-hardlinks", str(ROOT), str(clone)], check=True)
    git(clone, "config", "user.email", "release@example.com")
    git(clone, "config", "user.name", "Release")
    return clone


def _run(clone: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(clone / "scripts" / "release.py"), *args],
        cwd=clone,
        capture_output=True,
        text=True,
        timeout=600,
    )


def _next() -> str:
    major, minor, _ = __version__.split(".")
    return f"{major}.{int(minor) + 1}.0"


def test_refusals_are_one_line_and_change_nothing(tmp_path: Path) -> None:
    clone = _clone(tmp_path)
    head = git(clone, "rev-parse", "HEAD")
    same = _run(clone, __version__)
    assert same.returncode == 2
    assert (
        same.stderr
        == f"release: {__version__} is not newer than the current version {__version__}\n"
    )
    assert _run(clone, "1.0").stderr == "release: '1.0' is not a version X.Y.Z (e.g. 0.3.0)\n"
    (clone / "notes.txt").write_text("x\n")
    dirty = _run(clone, _next())
    assert dirty.returncode == 2
    assert dirty.stderr.startswith("release: the work tree has changes (?? notes.txt")
    assert git(clone, "rev-parse", "HEAD") == head and git(clone, "tag") == ""


@pytest.mark.slow
def test_a_release_in_a_clone(tmp_path: Path) -> None:
    for module in ("build", "twine", "setuptools"):
        if importlib.util.find_spec(module) is None:
            pytest.skip(
                f"{module} is not installed (pip install -e '.[dev]'; CI's locked run has it)"
            )
    clone = _clone(tmp_path)
    head = git(clone, "rev-parse", "HEAD")
    new = _next()

    dry = _run(clone, new, "--dry-run")
    assert dry.returncode == 0, dry.stderr
    assert (
        f"cmhash, version {new}" in dry.stdout and "nothing was committed or tagged" in dry.stdout
    )
    assert git(clone, "rev-parse", "HEAD") == head and git(clone, "tag") == ""
    assert git(clone, "status", "--porcelain") == ""
    assert len(git(clone, "worktree", "list").splitlines()) == 1  # the dry run's is gone

    done = _run(clone, new, "--date", "2026-12-01")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1] == f"publish it: git push origin HEAD v{new}"
    assert git(clone, "rev-parse", f"v{new}^{{commit}}") == git(clone, "rev-parse", "HEAD")
    assert git(clone, "log", "-1", "--format=%s") == f"Release {new}"
    assert git(clone, "status", "--porcelain") == ""
    assert f'__version__ = "{new}"' in (clone / "src/cmhash/__init__.py").read_text()
    for name in RELEASE.VERSION_FILES:
        text = (clone / name).read_text()
        assert {m.group("version") for m in RELEASE.VERSION.finditer(text)} == {new}, name
        assert RELEASE.FIRST_RELEASE_NOTE not in text, name
    changelog = (clone / "CHANGELOG.md").read_text()
    before = (ROOT / "CHANGELOG.md").read_text()
    unreleased = before.split("## [Unreleased]\n", 1)[1].split("\n## [", 1)[0].strip()
    assert f"## [Unreleased]\n\n## [{new}] - 2026-12-01\n\n{unreleased}\n" in changelog
    assert re.search(rf"^## \[{re.escape(__version__)}\]", changelog, re.MULTILINE)

    again = _run(clone, new)
    assert again.returncode == 2 and "is not newer" in again.stderr


def test_a_missing_or_old_build_tool_is_refused_first(monkeypatch: pytest.MonkeyPatch) -> None:
    """A fresh venv's setuptools is older than [build-system] allows, and build and twine
    come with the dev extra only: the script says so in one line, before it changes
    anything (its build step would fail with setuptools' own error)."""
    spec = importlib.util.spec_from_file_location("release", ROOT / "scripts" / "release.py")
    assert spec is not None and spec.loader is not None
    release = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(release)
    monkeypatch.setattr(release, "NEEDED", {"setuptools": "9999", "no-such-tool-here": "1"})
    with pytest.raises(release.Refused) as refused:
        release.check_tools()
    assert str(refused.value) == (
        f"needs setuptools>=9999, no-such-tool-here>=1 in this Python ({sys.executable}): "
        "pip install -e '.[dev]'"
    )
    monkeypatch.setattr(release, "NEEDED", {"no-such-tool-here": "0"})  # any release
    with pytest.raises(release.Refused, match=r"^needs no-such-tool-here in this Python"):
        release.check_tools()
    monkeypatch.setattr(release, "NEEDED", {"pytest": "8"})
    release.check_tools()  # what the test extra has passes

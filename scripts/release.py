#!/usr/bin/env python3
"""Make a release of cmhash in one command: ``python scripts/release.py 0.3.0``.

In a clean work tree, on the commit to release:

1. refuses a version that is not X.Y.Z, not newer than ``cmhash.__version__``, or
   whose tag exists already, and a work tree with changes (tracked or untracked);
2. sets the version in ``src/cmhash/__init__.py`` and in every copy the recipes name
   (``VERSION_FILES``: the pre-commit, GitLab, GitHub, Argo CD and install recipes, the
   Helm plugin's ``plugin.yaml``), and drops the note that says what to use before the
   first release (``FIRST_RELEASE_NOTE``);
3. moves the CHANGELOG's ``[Unreleased]`` section under ``## [X.Y.Z] - DATE`` and leaves
   an empty ``[Unreleased]`` above it (refuses an empty one: nothing to release);
4. builds the wheel and the sdist (``python -m build``) and checks them
   (``twine check --strict``), then installs the wheel in a throwaway venv and runs
   ``cmhash --version`` and the shipped example;
5. commits ("Release X.Y.Z") and makes the annotated tag ``vX.Y.Z`` the recipes name.

``--dry-run`` does 1-4 in a throwaway worktree of HEAD, prints the diff, and leaves the
repository as it was: no commit, no tag. Nothing is pushed; the last line says how.
Exit 0: done; 2: refused (one line says why); 1: a build or check failed.
"""

from __future__ import annotations

import argparse
import datetime
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
INIT = "src/cmhash/__init__.py"
CHANGELOG = "CHANGELOG.md"
# Every file that names the release, and how it names it (the tests check that nothing
# else does, and that each names the package's version).
VERSION_FILES = (
    "src/cmhash/data/helm/cmhash/plugin.yaml",
    "action.yml",
    "ci-templates/gitlab/cmhash.yml",
    "ci-templates/gitlab/cmhash-report.yml",
    "ci-templates/gitlab/cmhash-lock.yml",
    "ci-templates/github/cmhash-lock.yml",
    "ci-templates/argocd/Dockerfile",
    "ci-templates/argocd/sidecar.yaml",
    "docs/install.md",
    "docs/integrations/pre-commit.md",
    "docs/integrations/gitlab.md",
    "docs/integrations/github.md",
    "docs/integrations/argocd.md",
    "docs/report.md",
    "docs/concepts/lock.md",
)
VERSION = re.compile(
    r"(?P<lead>cmhash[-:]v?|rev: v|ref: v|@v|/raw/v|/archive/v|CMHASH_VERSION=v|"
    r"^version: )(?P<version>\d+\.\d+\.\d+)",
    re.MULTILINE,
)
# What a recipe says at its version line until the first release exists.
FIRST_RELEASE_NOTE = "; before the first release: a commit SHA"
SEMVER = re.compile(r"\d+\.\d+\.\d+")


class Refused(Exception):
    """The release cannot be made as asked (exit 2, one line)."""


def current_version(root: Path) -> str:
    text = (root / INIT).read_text(encoding="utf-8")
    found = re.search(r'^__version__ = "([^"]+)"', text, re.MULTILINE)
    if not found:
        raise Refused(f"{INIT}: no __version__ line")
    return found.group(1)


def _key(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in version.split("."))


def git(root: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(root), *args], check=True, capture_output=True, text=True
    ).stdout.strip()


# what step 4 runs in this Python (``python -m build --no-isolation`` builds with this
# venv's setuptools, which pyproject.toml's [build-system] bounds); the dev extra has them
NEEDED = {"build": "1", "twine": "1", "setuptools": "77", "wheel": "0"}  # (0: any release)


def check_tools() -> None:
    """Refuse before touching anything when a tool of the build step is missing or too
    old here (a fresh venv's setuptools is older than the build system allows)."""
    from importlib import metadata

    def major(name: str) -> int:
        try:
            number = re.match(r"\d+", metadata.version(name))
        except metadata.PackageNotFoundError:
            return -1
        return int(number.group()) if number else 0

    short = [n + (f">={v}" if int(v) else "") for n, v in NEEDED.items() if major(n) < int(v)]
    if short:
        raise Refused(
            f"needs {', '.join(short)} in this Python ({sys.executable}): pip install -e '.[dev]'"
        )


def check_request(root: Path, version: str) -> str:
    """The current version, once ``version`` is known to be releasable from ``root``."""
    if not SEMVER.fullmatch(version):
        raise Refused(f"{version!r} is not a version X.Y.Z (e.g. 0.3.0)")
    old = current_version(root)
    if _key(version) <= _key(old):
        raise Refused(f"{version} is not newer than the current version {old}")
    if git(root, "tag", "--list", f"v{version}"):
        raise Refused(f"the tag v{version} exists already")
    dirty = git(root, "status", "--porcelain", "--untracked-files=normal")
    if dirty:
        first = dirty.splitlines()[0]
        raise Refused(f"the work tree has changes ({first.strip()} ...): commit or stash them")
    return old


def set_version(root: Path, old: str, new: str) -> None:
    init = root / INIT
    init.write_text(
        init.read_text(encoding="utf-8").replace(
            f'__version__ = "{old}"', f'__version__ = "{new}"'
        ),
        encoding="utf-8",
    )
    for name in VERSION_FILES:
        path = root / name
        text = path.read_text(encoding="utf-8")
        text = VERSION.sub(
            lambda m: m.group("lead") + (new if m.group("version") == old else m.group("version")),
            text,
        )
        path.write_text(text.replace(FIRST_RELEASE_NOTE, ""), encoding="utf-8")


def move_changelog(root: Path, new: str, today: datetime.date) -> None:
    path = root / CHANGELOG
    text = path.read_text(encoding="utf-8")
    head = "## [Unreleased]\n"
    if head not in text:
        raise Refused(f"{CHANGELOG}: no '## [Unreleased]' section")
    start = text.index(head) + len(head)
    end = text.find("\n## [", start)
    end = len(text) if end < 0 else end + 1
    if not text[start:end].strip():
        raise Refused(f"{CHANGELOG}: the [Unreleased] section is empty: nothing to release")
    released = f"\n## [{new}] - {today.isoformat()}\n\n"
    path.write_text(text[:start] + released + text[start:end].lstrip("\n") + text[end:], "utf-8")


def build_and_check(root: Path, out: Path) -> list[Path]:
    """Build the wheel and the sdist into ``out``, check them with twine, and install the
    wheel in a throwaway venv: the version and the shipped example."""
    subprocess.run(
        [sys.executable, "-m", "build", "--no-isolation", "--outdir", str(out), str(root)],
        check=True,
        stdout=subprocess.DEVNULL,
    )
    dists = sorted(out.iterdir())
    subprocess.run(
        [sys.executable, "-m", "twine", "check", "--strict", *map(str, dists)], check=True
    )
    wheel = next(d for d in dists if d.suffix == ".whl")
    target = out / "installed"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--quiet",
            "--no-deps",
            "--target",
            str(target),
            str(wheel),
        ],
        check=True,
    )
    # the installed wheel first on the path (its dependencies: this interpreter's)
    env = {**os.environ, "PYTHONPATH": str(target)}
    run = [sys.executable, "-m", "cmhash"]
    where = subprocess.run(
        [sys.executable, "-c", "import cmhash; print(cmhash.__file__)"],
        check=True,
        capture_output=True,
        text=True,
        env=env,
    ).stdout
    if not where.startswith(str(target)):
        raise SystemExit(f"the check imported cmhash from {where.strip()}, not from the wheel")
    version = subprocess.run(
        [*run, "--version"], check=True, capture_output=True, text=True, env=env
    )
    print(version.stdout.strip())
    example = subprocess.run(
        [*run, "--no-config", str(root / "examples" / "app.yaml")],
        check=True,
        capture_output=True,
        text=True,
        env=env,
        cwd=out,
    ).stdout
    if example.count('checksum/config: "') != 2:
        raise SystemExit("the installed wheel does not annotate the shipped example")
    shutil.rmtree(target)
    return dists


def release(root: Path, version: str, dry_run: bool, today: datetime.date) -> int:
    old = check_request(root, version)
    check_tools()
    work = root
    scratch = Path(tempfile.mkdtemp(prefix="cmhash-release-"))
    try:
        if dry_run:
            work = scratch / "tree"
            git(root, "worktree", "add", "--detach", str(work), "HEAD")
        set_version(work, old, version)
        move_changelog(work, version, today)
        dists = build_and_check(work, scratch / "dist")
        if dry_run:
            print(git(work, "diff", "--stat"))
            print(f"dry run: {version} builds and checks ({', '.join(d.name for d in dists)});")
            print("nothing was committed or tagged")
            return 0
        git(root, "commit", "--quiet", "-am", f"Release {version}")
        git(root, "tag", "-a", f"v{version}", "-m", f"cmhash {version}")
        head = git(root, "rev-parse", "--short", "HEAD")
        print(f"released {version}: commit {head}, tag v{version}")
        print(f"publish it: git push origin HEAD v{version}")
        return 0
    finally:
        if dry_run and work != root:
            subprocess.run(
                ["git", "-C", str(root), "worktree", "remove", "--force", str(work)],
                capture_output=True,
            )
        shutil.rmtree(scratch, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("version", help="the new version, X.Y.Z (newer than the current one)")
    parser.add_argument("--dry-run", action="store_true", help="build and check only")
    parser.add_argument("--date", help="the release date (default: today), YYYY-MM-DD")
    args = parser.parse_args(argv)
    today = datetime.date.fromisoformat(args.date) if args.date else datetime.date.today()
    try:
        return release(ROOT, args.version, args.dry_run, today)
    except Refused as refused:
        print(f"release: {refused}", file=sys.stderr)
        return 2
    except subprocess.CalledProcessError as failed:
        print(
            f"release: {' '.join(map(str, failed.cmd))} failed (exit {failed.returncode})",
            file=sys.stderr,
        )
        return 1


if __name__ == "__main__":
    sys.exit(main())

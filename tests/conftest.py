from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from hypothesis import settings as hypothesis_settings

ROOT = Path(__file__).resolve().parent.parent
# The test modules sit in one directory per package of src/cmhash they test (tests/read/,
# tests/plan/, ...: CONTRIBUTING.md, "Where things go"); the data (cases/, corpus/, crds/,
# fixtures/) and the shared helpers (this file, manifests.py, fake*.py) sit here.
TESTS = ROOT / "tests"
# There is no __init__.py: pytest imports each test module by its base name (unique in
# the tree) with its own directory on sys.path, as it puts this one there for ``from
# conftest import``. Some modules import from one in another directory (``from
# test_declared import stream``), so every test directory is on sys.path from the start,
# whichever file is collected first.
TEST_DIRS = sorted({p.parent for p in TESTS.glob("*/test_*.py")})
sys.path[:0] = [str(d) for d in TEST_DIRS if str(d) not in sys.path]
IN_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")
# A vendored subset of the public manifests (tests/corpus/SOURCES.md): always present.
CORPUS = TESTS / "corpus"
# Next to the checkout, when present: the full corpus and the benchmark generator. Tests
# that read it are marked ``shared``; CI runs next to it, so there they fail without it.
SHARED = ROOT.parent / "shared"
SHARED_CORPUS = SHARED / "corpus"

# Property tests: a bounded number of examples by default and in CI; many more with
# ``pytest --hypothesis-profile=nightly``.
hypothesis_settings.register_profile("default", max_examples=25)
hypothesis_settings.register_profile("ci", max_examples=60, derandomize=True)
hypothesis_settings.register_profile("nightly", max_examples=2000)
hypothesis_settings.load_profile("ci" if IN_CI else "default")


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--update-goldens",
        action="store_true",
        help="rewrite expected.yaml / error.txt / stderr.txt from actual output",
    )
    parser.addoption("--run-slow", action="store_true", help="run slow tests (always on in CI)")


def pytest_runtest_setup(item: pytest.Item) -> None:
    """``@pytest.mark.shared("corpus")``: the test reads ``../shared/corpus``. Missing:
    skip locally, fail in CI (which runs in a checkout next to ../shared)."""
    missing = [
        f"../shared/{'/'.join(m.args)}"
        for m in item.iter_markers("shared")
        if not SHARED.joinpath(*m.args).exists()
    ]
    if missing and IN_CI:
        pytest.fail(f"{', '.join(missing)} not present; CI runs in a checkout next to ../shared")
    if missing:
        pytest.skip(f"{', '.join(missing)} not present")


def shared_params(path: Path, id: str, *values: Any) -> list[Any]:
    """An extra parameter (``values``, else ``path``) for a test that reads ``path`` under
    ../shared, marked ``shared``: none locally without it (the vendored parameters stand
    in; nothing skips), and always in CI (where it then fails)."""
    if not (path.exists() or IN_CI):
        return []
    return [
        pytest.param(
            *(values or (path,)), id=id, marks=pytest.mark.shared(*path.relative_to(SHARED).parts)
        )
    ]


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if IN_CI or config.getoption("--run-slow"):
        return
    skip = pytest.mark.skip(reason="slow: run with --run-slow (always runs in CI)")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip)


@pytest.fixture
def update_goldens(request: pytest.FixtureRequest) -> bool:
    return bool(request.config.getoption("--update-goldens"))


@pytest.fixture(scope="session")
def corpus() -> Path:
    """The vendored corpus (tests/corpus), laid out as ../shared/corpus is."""
    return CORPUS


@dataclass
class Result:
    code: int
    stdout: bytes
    stderr: str

    @property
    def out(self) -> str:
        return self.stdout.decode("utf-8")


def run_cmhash(
    args: list[str],
    stdin: bytes = b"",
    cwd: str | os.PathLike[str] | None = None,
    env: dict[str, str] | None = None,
) -> Result:
    """Run the real console entry point in-process, with byte-level stdin/stdout."""
    from cmhash.cli.main import main

    in_buf, out_buf, err_buf = io.BytesIO(stdin), io.BytesIO(), io.BytesIO()
    saved = sys.stdin, sys.stdout, sys.stderr
    old_cwd = os.getcwd()
    old_env = dict(os.environ)
    sys.stdin = io.TextIOWrapper(in_buf, encoding="utf-8")
    sys.stdout = io.TextIOWrapper(out_buf, encoding="utf-8")
    sys.stderr = io.TextIOWrapper(err_buf, encoding="utf-8")
    try:
        if cwd is not None:
            os.chdir(cwd)
        if env:
            os.environ.update(env)
            _forget_backends()  # CMHASH_CTREE is read when a backend is first made
        try:
            main(args)
            code = 0
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else 2
        sys.stdout.flush()
        sys.stderr.flush()
        out, err = out_buf.getvalue(), err_buf.getvalue()
    finally:
        sys.stdin, sys.stdout, sys.stderr = saved
        os.chdir(old_cwd)
        os.environ.clear()
        os.environ.update(old_env)
        if env:
            _forget_backends()
    return Result(code, out, err.decode("utf-8"))


def _forget_backends() -> None:
    from cmhash.parse import backends, events

    events._BACKENDS.clear()
    backends.ctree_check_edit.cache_clear()
    backends.ctree_collect.cache_clear()


def report_json(tmp: Path, old: bytes, new: bytes, *args: str) -> dict[str, Any]:
    """``cmhash report --format json`` (no config file, ``args`` added) of two renders,
    written to ``tmp`` as old.yaml and new.yaml; the report, parsed (exit 0 checked)."""
    (tmp / "old.yaml").write_bytes(old)
    (tmp / "new.yaml").write_bytes(new)
    res = run_cmhash(
        ["report", "--no-config", *args, "--format", "json", "old.yaml", "new.yaml"], cwd=tmp
    )
    assert res.code == 0, res.stderr
    return json.loads(res.out)  # type: ignore[no-any-return]


@pytest.fixture
def cmhash():  # type: ignore[no-untyped-def]
    return run_cmhash


def cmhash_command() -> list[str]:
    """The installed console script (as users run it), else ``python -m cmhash``."""
    exe = Path(sys.executable).with_name("cmhash")
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "cmhash"]


TOOLS_BIN = ROOT / ".tools" / "bin"


def tool(name: str) -> str:
    """A real external binary for integration tests: on PATH or in .tools/bin (where
    scripts/get-tools.sh puts it). Missing: skip locally, fail in CI, so that a broken
    install step cannot hide behind skips."""
    import shutil

    found = (
        shutil.which(name, path=str(Path(sys.executable).parent))  # the test venv
        or shutil.which(name)
        or shutil.which(name, path=str(TOOLS_BIN))
    )
    if found:
        return found
    if IN_CI:
        pytest.fail(
            f"{name} is not installed; .ci/run should have installed it (scripts/get-tools.sh)"
        )
    pytest.skip(f"{name} is not installed (run scripts/get-tools.sh)")


def tool_env(**extra: str) -> dict[str, str]:
    """The environment for a real tool that runs cmhash: this interpreter's console
    script first on PATH."""
    env = dict(os.environ)
    env["PATH"] = os.pathsep.join(
        [str(Path(sys.executable).parent), str(TOOLS_BIN), env.get("PATH", "")]
    )
    env.update(extra)
    return env


def helm_env(tmp: Path, helm: str, **extra: str) -> dict[str, str]:
    """The environment for a real ``helm`` (Helm 4) or ``helm3`` that runs cmhash: its
    homes under ``tmp`` (nothing of the user's) and, for Helm 4, HELM_PLUGINS holding
    the post-renderer plugin cmhash ships (``cmhash helm-plugin-dir``'s parent)."""
    env = {
        "HELM_CONFIG_HOME": str(tmp / "c"),
        "HELM_DATA_HOME": str(tmp / "d"),
        "HELM_CACHE_HOME": str(tmp / "k"),
        "HELM_PLUGINS": str(tmp / "p"),
    }
    if helm == "helm":
        env["HELM_PLUGINS"] = str(Path(run_cmhash(["helm-plugin-dir"]).out.strip()).parent)
    return tool_env(**env, **extra)


def kustomize(
    directory: Path | str, cwd: Path | None = None, **env: str
) -> subprocess.CompletedProcess[str]:
    """kubectl's kustomize with plugins (the legacy exec transformer) enabled."""
    return subprocess.run(
        [tool("kubectl"), "kustomize", "--enable-alpha-plugins", str(directory)],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=tool_env(**env),
        check=False,
    )


def kustomize_build(
    directory: Path | str, cwd: Path | None = None, **env: str
) -> subprocess.CompletedProcess[str]:
    """Standalone kustomize with exec KRM functions enabled, as the README and
    cmhash-fn.yaml say to run it."""
    return subprocess.run(
        [tool("kustomize4"), "build", "--enable-alpha-plugins", "--enable-exec", str(directory)],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=tool_env(**env),
        check=False,
    )


# Headless Chromium as the browser tests start it: no sandbox (containers), no GPU, and
# no first-run, sync, update or background traffic (offline, the same each run).
CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def git(repo: Path, *args: str) -> str:
    """Run git in ``repo``; its output, stripped (a failure raises)."""
    return subprocess.run(
        ["git", *args], cwd=repo, check=True, capture_output=True, text=True
    ).stdout.strip()


def git_init(repo: Path, branch: str | None = None) -> Path:
    """A new repository at ``repo`` (made if missing; on ``branch``, else git's default
    branch), with a committer of its own: tests and the tools they run can commit
    without a global git configuration."""
    repo.mkdir(parents=True, exist_ok=True)
    git(repo, "init", "-q", *(["-b", branch] if branch else []))
    for key, value in (("user.email", "ci@example.com"), ("user.name", "ci")):
        git(repo, "config", key, value)
    return repo


def write_tree(root: Path, files: Mapping[str, str | bytes]) -> Path:
    """Write ``files`` (paths relative to ``root``: text, or bytes as they are) under
    ``root``, making the directories; ``root``."""
    for rel, content in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content)
    return root


def git_commit(repo: Path, message: str, files: Mapping[str, str | bytes] = {}) -> str:
    """Write ``files`` (paths relative to ``repo``), stage everything and commit it; the
    new commit's id."""
    write_tree(repo, files)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", message)
    return git(repo, "rev-parse", "HEAD")


def checkout_head() -> str:
    """This checkout's HEAD commit, for tests that install cmhash from it; no checkout
    (an sdist): skip."""
    try:
        return git(ROOT, "rev-parse", "HEAD")
    except (subprocess.CalledProcessError, FileNotFoundError):
        pytest.skip("not a git checkout")


def strip_key(obj: Any, key: str = "checksum/config") -> Any:
    """Parsed YAML without our annotation and the levels that held only it."""
    if isinstance(obj, dict):
        out = {k: strip_key(v, key) for k, v in obj.items() if k != key}
        for k in ("annotations", "metadata"):
            if k in out and out[k] in ({}, None) and (k not in obj or obj[k] != out[k]):
                del out[k]
        return out
    if isinstance(obj, list):
        return [strip_key(x, key) for x in obj]
    return obj

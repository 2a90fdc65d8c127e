from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from collections.abc import Callable, Mapping
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


SLOW_REASON = "slow: run with --run-slow (always runs in CI)"

# The heaviest tests of the default run, measured (``pytest --durations=60``, two cores;
# the seconds are a busy machine's, about three times a quiet one's), marked ``slow``
# here with why: the default run keeps a test of each area, CI runs them all. The second
# group (measured at 5m56s of CPU for the whole default run, on a machine at load 11)
# brings the default run under 4 minutes of CPU.
# "file::test" (under tests/) -> (the parameter ids of it that are heavy, as globs: None
# for all; why)
HEAVY: dict[str, tuple[tuple[str, ...] | None, str]] = {
    "integrations/test_precommit.py::test_check_then_fix_then_pass": (
        None,
        "pre-commit builds the hook's environment (pip installs this checkout): 117 s",
    ),
    "integrations/test_precommit.py::test_readme_snippet_works_when_pasted": (
        None,
        "a hook environment each: 48 s",
    ),
    "integrations/test_precommit.py::test_pass_filenames_with_pre_commits_own_files_and_exclude": (
        None,
        "a hook environment: 28 s",
    ),
    "parse/test_libyaml.py::test_both_parsers_refuse_with_the_same_message_at_the_same_place": (
        ("*-Secret", "*-Deployment"),
        "36 cases of six runs each: 37 s (inside a ConfigMap stays)",
    ),
    "analyze/test_sources.py::test_source_value_follows_content_only": (
        None,
        "a property test of many runs: 33 s",
    ),
    "report/test_report_plan.py::test_real_pair_argocd_install": (
        ("shared",),
        "two 2 MB renders: 22 s (the vendored excerpt stays)",
    ),
    "plan/test_versioned.py::test_rename_closure": (None, "a property test: 18 s"),
    "native/test_ctree.py::test_a_refused_recursive_alias_leaves_nothing_behind": (
        ("text1", "text2"),
        "5,000-node documents under a leak check: 10 s",
    ),
    "native/test_ctree.py::test_full_corpus": (None, "the whole shared corpus: 8 s"),
    "native/test_resolve_c.py::test_generated_streams_plan_the_same": (
        None,
        "a property test: 9 s",
    ),
    "native/test_transport.py::test_generated_streams_pack_and_come_back_the_same": (
        None,
        "a property test of 150 examples: 9 s",
    ),
    "read/test_split_settings.py::test_the_c_cuts_are_the_reference_cuts": (
        None,
        "a property test: 9 s",
    ),
    "integrations/test_gitlab.py::test_report_job_stores_artifacts_and_posts_one_note": (
        None,
        "gitlab-ci-local runs the job twice: 8 s (the inject job and the pipeline stay)",
    ),
    "integrations/test_gitlab.py::test_report_job_fail_on_error_keeps_the_artifacts": (
        None,
        "gitlab-ci-local: 4 s",
    ),
    "integrations/test_gitlab.py::test_check_only_fails_the_pipeline": (
        None,
        "gitlab-ci-local: 4 s",
    ),
    "integrations/test_patches.py::test_real_kustomize_builds_the_patches_into_cmhash_output": (
        None,
        "both kustomize versions on each render: 22 s, then 3 s for kiali's (the kustomize "
        "routes' own tests stay)",
    ),
    "knowledge/test_operators.py::test_profile_fields_are_in_the_published_crd": (
        ("monitoring.coreos.com/*",),
        "prometheus-operator's CRDs, the largest published: 41 s, then 15 s for the next "
        "(VictoriaMetrics', OpenTelemetry's and Strimzi's stay)",
    ),
    "end_to_end/test_bad_inputs.py::test_bad_input": (
        ("deep-flow-nesting-fast",),
        "nesting to the limit on every path: 37 s (the other hostile inputs stay)",
    ),
    "end_to_end/test_bad_inputs.py::test_50_mb_scalar_is_refused_quickly": (
        None,
        "builds and reads a 50 MB scalar: 27 s (the 8 MiB limit stays in native/)",
    ),
    "end_to_end/test_bad_inputs.py::test_hostile_input_memory_is_bounded": (
        ("deep-flow-nesting",),
        "nesting to the limit under a memory bound: 6 s (the other inputs stay)",
    ),
    "project/test_site.py::test_every_page_renders_without_a_defect_in_chromium": (
        None,
        "chromium renders every page: 23 s (the site's build and link checks stay)",
    ),
    "explain/test_mermaid.py::test_explain_diagram": (
        None,
        "mmdc starts a browser for the module's diagrams: 18 s (the renderer's refusal "
        "of broken Mermaid stays, and the Mermaid text tests of explain and report)",
    ),
    "explain/test_mermaid.py::test_report_markdown_diagram": (None, "the same browser: 8 s"),
    "explain/test_mermaid.py::test_hostile_names_explain": (None, "the same browser"),
    "explain/test_mermaid.py::test_hostile_names_report": (None, "the same browser"),
    "integrations/test_lock_recipe.py::test_the_gitlab_job_proposes_a_changed_lock_once": (
        None,
        "gitlab-ci-local runs the job: 16 s (the GitHub workflow's test stays)",
    ),
    "write/test_in_place_signals.py::test_a_signal_that_stops_the_write_rolls_back_and_says_so": (
        ("rename-494-*", "rename-989-*", "stage-494-*"),
        "a 989-file tree per signal: 47 s, then 6 s for stage-494 (rename-1 and stage-1 stay)",
    ),
    "write/test_in_place_signals.py::test_an_ignored_signal_stops_nothing": (
        ("rename-494-*", "rename-989-*", "stage-494-*"),
        "a 989-file tree per signal: 29 s, then 10 s for stage-494 (rename-1 and stage-1 stay)",
    ),
    "runtime/test_signals.py::test_signal_at_an_exact_step_rolls_everything_back": (
        ("stage-1-*", "stage-400-*", "rename-*"),
        "a 400-file tree and a process per signal and step: 68 s, then 17 s for rename-199 "
        "(stage-200 stays, with each signal)",
    ),
    "native/test_ctree.py::test_scalar_limit": (None, "8 MiB scalars: 8 s"),
    "native/test_ctree.py::test_a_signal_interrupts_a_long_build": (
        None,
        "a build long enough to interrupt: 8 s",
    ),
    "end_to_end/test_corpus.py::test_corpus_file": (
        ("shared/argo-cd/manifests/*",),
        "2 MB renders: 7 s each (the rest of the corpus stays)",
    ),
    "write/test_diff_hunks.py::test_corpus_diffs_are_difflibs": (
        ("shared/argo-cd/manifests/*",),
        "2 MB renders' diffs against difflib's: 9 s, then 5 s (the other files' stay)",
    ),
    "analyze/test_hashing.py::test_the_direct_writer_merges_as_json_dumps_does": (
        None,
        "a property test: 7 s (the direct writer's other property test stays)",
    ),
    "parse/test_libyaml.py::test_depth_limit_is_cmhashs_on_every_path": (
        ("_flow",),
        "flow nesting to the limit on every path: 6 s (block nesting stays)",
    ),
    "edit/test_treecheck.py::test_the_event_walk_lets_signal_handlers_run": (
        None,
        "a walk long enough to signal: 6 s",
    ),
    "write/test_reliability.py::test_killed_mid_run_leaves_each_file_old_or_new": (
        None,
        "SIGKILL at many moments of a 200-file run: 6 s (the other write tests stay)",
    ),
    "project/test_default_run.py::test_every_heavy_entry_names_a_test": (
        None,
        "collects the whole suite in a pytest of its own: 4 s (a whole-directory run "
        "checks HEAVY's names too)",
    ),
    "integrations/test_patches.py::test_real_kustomize_on_the_shared_chart_renders": (
        None,
        "both kustomize versions on calico's render: 5 s (the vendored renders' stay)",
    ),
    "parse/test_libyaml.py::test_the_cli_agrees_on_both_parsers": (
        None,
        "the CLI twice on every case: 7 s (the parsers' agreement on each input stays)",
    ),
    "parse/test_libyaml.py::test_every_path_agrees_on_generated_flow_text": (
        ("a seventh",),
        "2 s (the other generated texts stay)",
    ),
    "end_to_end/test_properties.py::test_form_and_metadata_change_nothing": (
        None,
        "a property test: 2 s (changing used content moves exactly its users stays)",
    ),
    "cli/test_cli.py::test_benchmark_script_runs": (None, "the benchmark script: 2 s"),
    "integrations/test_gitlab.py::test_example_pipeline_is_valid": (
        None,
        "gitlab-ci-local validates the example: 2 s (the inject job stays)",
    ),
    "integrations/test_ci_report.py::test_two_jobs_of_one_pull_request_keep_a_comment_each": (
        None,
        "two jobs against the fake forge: 2 s (one job's comment stays)",
    ),
    "integrations/test_github_action.py::test_action_comment_key_keeps_a_comment_per_job": (
        None,
        "the action twice: 2 s (the action's other tests stay)",
    ),
    "plan/test_environments.py::test_the_advised_route_with_the_real_kustomize": (
        None,
        "kustomize builds each environment: 9 s",
    ),
}


def _heavy(item: pytest.Item) -> bool:
    from fnmatch import fnmatchcase

    test, _, params = item.nodeid.removeprefix("tests/").partition("[")
    found = HEAVY.get(test)
    if found is None:
        return False
    globs = found[0]
    return globs is None or any(fnmatchcase(params[:-1], g) for g in globs)


def _stale_heavy(config: pytest.Config, items: list[pytest.Item]) -> None:
    """A HEAVY entry that names no test (renamed, removed): a usage error, checked on
    whole-directory runs (a run of some files or tests cannot tell)."""
    if config.option.keyword or config.option.markexpr:
        return
    if any("::" in a or not Path(a).is_dir() for a in config.args):
        return
    names = {i.nodeid.removeprefix("tests/").partition("[")[0] for i in items}
    collected = {n.partition("::")[0] for n in names}
    stale = [t for t in HEAVY if t.partition("::")[0] in collected and t not in names]
    if stale:
        raise pytest.UsageError(f"tests/conftest.py HEAVY names no test: {', '.join(stale)}")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """The default run (the README's ``pytest``: a few minutes on two cores) leaves the
    tests marked ``slow`` out (and those HEAVY lists); ``--run-slow`` and CI run them."""
    _stale_heavy(config, items)
    for item in items:
        if _heavy(item):
            item.add_marker(pytest.mark.slow)
    if IN_CI or config.getoption("--run-slow"):
        return
    skip = pytest.mark.skip(reason=SLOW_REASON)
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip)


def pytest_collection_finish(session: pytest.Session) -> None:
    """What collection built (every test module, its tables and parameters) lives to the
    end of the session: out of the cyclic collector's sight (``gc.freeze``), so that the
    collections an in-process run triggers walk only what that run builds (the heap of
    a whole session made the in-process end-to-end tests three times slower)."""
    import gc

    gc.collect()
    gc.freeze()


def _skip_reason(report: pytest.TestReport) -> str:
    longrepr = report.longrepr
    return str(longrepr[2]) if isinstance(longrepr, tuple) else str(longrepr)


def _missing_tool(reason: str) -> str:
    """The tool a skip reason names: ``NAME is not installed (run …)`` or ``no WHAT is
    installed (run …)`` (tool() and _standalone() below)."""
    import re

    text = reason.removeprefix("Skipped: ")
    found = re.match(r"(?:no )?(.+?) is (?:not )?installed \(run ", text)
    return found.group(1) if found else "?"


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    """After a default run: what it left out, and how to run it."""
    skipped = [_skip_reason(r) for r in terminalreporter.stats.get("skipped", [])]
    slow = sum(1 for reason in skipped if reason.endswith(SLOW_REASON))
    missing = [_missing_tool(r) for r in skipped if "(run scripts/get-tools.sh)" in r]
    tools = len(missing)
    if not (slow or tools):
        return
    write = terminalreporter.write_line
    terminalreporter.write_sep("-", "not run here")
    if slow:
        write(
            f"{slow} slow test{'s' if slow != 1 else ''} left out of the default run: "
            "`pytest --run-slow` runs them too; `CI=true pytest` runs everything as CI "
            "does (and fails where a tool is missing)"
        )
    if tools:
        names = ", ".join(sorted(set(missing)))
        write(
            f"{tools} test{'s' if tools != 1 else ''} of the real tools skipped, the tools "
            f"missing ({names}): scripts/get-tools.sh installs them"
        )


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


def _which(name: str) -> str | None:
    import shutil

    return (
        shutil.which(name, path=str(Path(sys.executable).parent))  # the test venv
        or shutil.which(name)
        or shutil.which(name, path=str(TOOLS_BIN))
    )


def tool(name: str) -> str:
    """A real external binary for integration tests: on PATH or in .tools/bin (where
    scripts/get-tools.sh puts it). Missing: skip locally, fail in CI, so that a broken
    install step cannot hide behind skips."""
    found = _which(name)
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


def _standalone(test: Callable[[str], bool], what: str) -> str:
    """The first of ``kustomize4`` and ``kustomize`` that passes ``test``: where
    scripts/get-tools.sh installs both, ``kustomize`` is kubectl's v5 and
    ``kustomize4`` the standalone v4.5.4; an older install has only ``kustomize`` (v4)."""
    for name in ("kustomize4", "kustomize"):
        found = _which(name)
        if found is not None and test(found):
            return found
    if IN_CI:
        pytest.fail(f"no {what}; .ci/run should have installed it (scripts/get-tools.sh)")
    pytest.skip(f"no {what} is installed (run scripts/get-tools.sh)")


def _says(binary: str, args: list[str], text: str) -> bool:
    done = subprocess.run([binary, *args], capture_output=True, text=True, check=False)
    return text in done.stdout + done.stderr


def kustomize4() -> str:
    """The standalone kustomize v4 (``kustomize4``, or ``kustomize`` when it is a v4)."""
    return _standalone(lambda b: _says(b, ["version"], "kustomize/v4."), "kustomize v4")


def kustomize_exec() -> str:
    """A standalone kustomize that runs exec KRM functions (``--enable-exec``, which
    kubectl's kustomize has not)."""
    return _standalone(
        lambda b: _says(b, ["build", "--help"], "--enable-exec"), "standalone kustomize"
    )


def kustomize_build(
    directory: Path | str, cwd: Path | None = None, **env: str
) -> subprocess.CompletedProcess[str]:
    """Standalone kustomize with exec KRM functions enabled, as the README and
    cmhash-fn.yaml say to run it."""
    return subprocess.run(
        [kustomize_exec(), "build", "--enable-alpha-plugins", "--enable-exec", str(directory)],
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

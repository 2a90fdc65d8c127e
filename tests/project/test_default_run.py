"""The default run (the README's ``pytest``) leaves the heavy tests out, says so at its
end, and its list of heavy tests names tests that exist."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import conftest
import pytest
from conftest import HEAVY, ROOT, SLOW_REASON


def _item(nodeid: str) -> Any:
    return SimpleNamespace(nodeid=nodeid)


def test_heavy_entries_mark_whole_tests_or_the_parameters_named() -> None:
    assert conftest._heavy(_item("tests/plan/test_versioned.py::test_rename_closure"))
    signals = "tests/runtime/test_signals.py::test_signal_at_an_exact_step_rolls_everything_back"
    assert conftest._heavy(_item(f"{signals}[rename-400-SIGHUP]"))
    assert not conftest._heavy(_item(f"{signals}[stage-200-SIGHUP]"))  # stays in
    assert not conftest._heavy(_item("tests/plan/test_versioned.py::test_rename_closure_x"))


def _config(*args: str, keyword: str = "", markexpr: str = "") -> Any:
    return SimpleNamespace(
        args=list(args), option=SimpleNamespace(keyword=keyword, markexpr=markexpr)
    )


def test_a_heavy_entry_that_names_no_test_stops_a_whole_run() -> None:
    file = next(iter(HEAVY)).partition("::")[0]
    items = [_item(f"tests/{file}::test_something_else")]
    with pytest.raises(pytest.UsageError, match="HEAVY names no test"):
        conftest._stale_heavy(_config(str(ROOT / "tests")), items)
    # a run of some files or tests, or a selection, cannot tell
    conftest._stale_heavy(_config(str(ROOT / "tests" / file)), items)
    conftest._stale_heavy(_config(str(ROOT / "tests"), keyword="x"), items)


def test_every_heavy_entry_names_a_test() -> None:
    """What the guard checks on a whole run, here without running one."""
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "--collect-only",
            "-q",
            "-p",
            "no:cacheprovider",
            *sorted({f"tests/{k.partition('::')[0]}" for k in HEAVY}),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    names = {line.partition("[")[0].removeprefix("tests/") for line in out.stdout.splitlines()}
    assert set(HEAVY) <= names, set(HEAVY) - names


class _Reporter:
    def __init__(self, reasons: list[str]) -> None:
        report = SimpleNamespace
        self.stats = {"skipped": [report(longrepr=("f.py", 1, f"Skipped: {r}")) for r in reasons]}
        self.lines: list[str] = []

    def write_sep(self, sep: str, title: str) -> None:
        self.lines.append(f"-- {title}")

    def write_line(self, line: str) -> None:
        self.lines.append(line)


def test_the_end_of_a_default_run_says_how_to_run_the_rest() -> None:
    reporter = _Reporter(
        [
            SLOW_REASON,
            SLOW_REASON,
            "pre-commit is not installed (run scripts/get-tools.sh)",
            "helm is not installed (run scripts/get-tools.sh)",
            "no kustomize v4 is installed (run scripts/get-tools.sh)",
            "helm is not installed (run scripts/get-tools.sh)",
        ]
    )
    conftest.pytest_terminal_summary(reporter, 0, None)  # type: ignore[arg-type]
    assert reporter.lines == [
        "-- not run here",
        "2 slow tests left out of the default run: `pytest --run-slow` runs them too; "
        "`CI=true pytest` runs everything as CI does (and fails where a tool is missing)",
        "4 tests of the real tools skipped, the tools missing (helm, kustomize v4, "
        "pre-commit): scripts/get-tools.sh installs them",
    ]
    quiet = _Reporter([])
    conftest.pytest_terminal_summary(quiet, 0, None)  # type: ignore[arg-type]
    assert quiet.lines == []


def test_the_readme_says_what_the_default_run_leaves_out() -> None:
    text = (ROOT / "README.md").read_text()
    assert "pytest --run-slow" in text and "CI=true pytest" in text
    assert Path(ROOT / "CONTRIBUTING.md").read_text().count("HEAVY") >= 1

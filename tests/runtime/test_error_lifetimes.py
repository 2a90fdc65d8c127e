"""Errors and stderr over a run's lifetime: an edit error crossing from a worker
process, the C++ self-check's stderr redirection under signals, and what a kept error holds."""

from __future__ import annotations

import pickle
import signal
import subprocess
import sys

import pytest
from conftest import ROOT

from cmhash.errors import NodeError
from cmhash.runtime.signals import HELD

EDIT_ERROR = ROOT / "tests" / "fixtures" / "edit-error.yaml"


def test_node_error_survives_pickling() -> None:
    err = NodeError("secret text 'x'", 42, public="public text")
    back = pickle.loads(pickle.dumps(err))
    assert (back.message, back.offset, back.public) == (err.message, 42, "public text")


def test_an_edit_error_from_a_worker_process_is_reported_not_hung() -> None:
    """Workers send an unplaceable annotation's error back to the parent: it used to
    fail to unpickle and stop the pool, and the run hung."""
    runs = [
        subprocess.run(
            [sys.executable, "-m", "cmhash", "--no-config", "--workers", n, str(EDIT_ERROR)],
            capture_output=True,
            timeout=60,
            check=False,
        )
        for n in ("1", "2")
    ]
    assert runs[0].returncode == runs[1].returncode == 0
    assert (runs[0].stdout, runs[0].stderr) == (runs[1].stdout, runs[1].stderr)
    assert b"missing-reference" in runs[1].stderr


def test_quiet_holds_signals_while_stderr_is_redirected() -> None:
    pytest.importorskip("ryml")
    from cmhash.edit.cverify import quiet

    with quiet():
        blocked = signal.pthread_sigmask(signal.SIG_BLOCK, [])
    assert set(HELD) <= blocked
    assert not set(HELD) & signal.pthread_sigmask(signal.SIG_BLOCK, [])


def test_a_kept_edit_error_holds_no_traceback() -> None:
    """A workload's edit error is kept until the reduce stage; through its traceback's
    frames it held the document's whole parse tree (3,000 such workloads: 583 MB peak,
    42 MB without)."""
    from cmhash.analyze.chunk import analyze_source
    from cmhash.analyze.options import AnalyzeOptions
    from cmhash.knowledge.kinds import DEFAULT_TABLE
    from cmhash.read.source import SourceText

    src = SourceText(str(EDIT_ERROR), EDIT_ERROR.read_text())
    infos = analyze_source(src, DEFAULT_TABLE, AnalyzeOptions())
    errors = [w.edit_error for d in infos for w in d.workloads if w.edit_error is not None]
    assert errors
    assert all(e.__traceback__ is None for e in errors)

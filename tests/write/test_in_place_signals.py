"""``-i`` says what happened when a signal comes during the write, with the signal's
default action and with the signal ignored (``nohup``, a background job in a script: the
parent made SIGINT/SIGHUP ignored, and cmhash keeps them so).

An ignored signal stops nothing: the write goes through, each ``updated`` line is true,
exit 0. A signal that stops the write rolls every file back, says so in one line and
exits 130/143/129: never an ``updated`` line for a file that was rolled back. (Blocked
while the files are renamed, an ignored signal still shows as pending: it was taken for
a stop, every file was rolled back, and yet each one was reported ``updated``, exit 0.)

On a repository of 989 files, the signal sent by the process itself right after an
exact step of the write, and from outside at many moments of whole runs."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import cmhash_command
from test_reliability import CM, dep
from test_signals import EXIT, INJECT, MESSAGE, ROLLED_BACK

N = 989


def make_repo(root: Path) -> dict[Path, bytes]:
    root.mkdir(parents=True, exist_ok=True)
    files = {root / "config.yaml": CM}
    files.update({root / f"app{i:03}.yaml": dep(f"app{i}") for i in range(N)})
    for path, data in files.items():
        path.write_bytes(data)
    return files


def state(files: dict[Path, bytes]) -> str:
    """'old' or 'new' when every file is; anything else fails the test."""
    changed = {p for p, data in files.items() if p.read_bytes() != data}
    if not changed:
        return "old"
    assert changed == {p for p in files if p.name != "config.yaml"}, f"{len(changed)} rewritten"
    return "new"


def disposition(sig: signal.Signals, action: signal.Handlers) -> Callable[[], None]:
    """The child's start: ``sig`` with ``action`` (SIG_IGN: as nohup or a background job
    starts it), SIGINT's default otherwise (CI may start us with SIGINT ignored)."""

    def start() -> None:
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        signal.signal(sig, action)

    return start


def updated(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith("updated ")]


SIGNALS = [signal.SIGINT, signal.SIGHUP]  # what nohup and background jobs ignore
POINTS = [("stage", 1), ("stage", N // 2), ("rename", 1), ("rename", N // 2), ("rename", N)]


@pytest.mark.parametrize("sig", SIGNALS, ids=lambda s: s.name)
@pytest.mark.parametrize(("step", "k"), POINTS)
def test_an_ignored_signal_stops_nothing(
    tmp_path: Path, sig: signal.Signals, step: str, k: int
) -> None:
    files = make_repo(tmp_path / "repo")
    proc = subprocess.run(
        [sys.executable, "-c", INJECT, str(int(sig)), step, str(k), str(tmp_path / "repo")],
        capture_output=True,
        text=True,
        preexec_fn=disposition(sig, signal.SIG_IGN),
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-500:]
    assert state(files) == "new"
    assert len(updated(proc.stderr)) == N == len(proc.stderr.splitlines())


@pytest.mark.parametrize("sig", SIGNALS, ids=lambda s: s.name)
@pytest.mark.parametrize(("step", "k"), POINTS)
def test_a_signal_that_stops_the_write_rolls_back_and_says_so(
    tmp_path: Path, sig: signal.Signals, step: str, k: int
) -> None:
    files = make_repo(tmp_path / "repo")
    proc = subprocess.run(
        [sys.executable, "-c", INJECT, str(int(sig)), step, str(k), str(tmp_path / "repo")],
        capture_output=True,
        text=True,
        preexec_fn=disposition(sig, signal.SIG_DFL),
        timeout=300,
    )
    assert proc.returncode == EXIT[sig], proc.stderr[-500:]
    assert state(files) == "old"
    assert proc.stderr.splitlines() == [ROLLED_BACK[sig]]


@pytest.mark.slow
@pytest.mark.parametrize("action", [signal.SIG_IGN, signal.SIG_DFL], ids=["ignored", "default"])
@pytest.mark.parametrize("sig", SIGNALS, ids=lambda s: s.name)
def test_signals_from_outside_tell_the_truth(
    tmp_path: Path, sig: signal.Signals, action: signal.Handlers
) -> None:
    """Whole runs signalled at 12 moments spread over their length: ignored, every run
    writes every file and says so, exit 0; with the default action, each run ends either
    all written (each file said ``updated``; exit 0, or 130/129 for a signal after the
    write), or none (no ``updated`` line; exit 130/129 with one line, the roll-back's
    when the write had begun)."""
    repo = tmp_path / "repo"
    files = make_repo(repo)
    command = [*cmhash_command(), "--no-config", "-i", str(repo)]
    start = time.monotonic()
    subprocess.run(command, check=True, capture_output=True)
    length = time.monotonic() - start
    seen = set()
    for i in range(12):
        for p, data in files.items():
            p.write_bytes(data)
        proc = subprocess.Popen(
            command,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            preexec_fn=disposition(sig, action),
        )
        time.sleep(length * (0.3 + 0.8 * i / 12))
        proc.send_signal(sig)
        _, err = proc.communicate(timeout=300)
        text = err.decode()
        outcome = state(files)
        assert not list(repo.glob(".cmhash-*")), "temp files left behind"
        if action == signal.SIG_IGN:
            assert (proc.returncode, outcome) == (0, "new"), text[-500:]
            assert len(updated(text)) == N
        elif outcome == "new":
            assert proc.returncode in (0, EXIT[sig]), text[-500:]
            assert len(updated(text)) == N
        else:
            assert proc.returncode == EXIT[sig], text[-500:]
            assert updated(text) == []
            assert text.splitlines() in ([MESSAGE[sig]], [ROLLED_BACK[sig]]), text[-500:]
        seen.add((proc.returncode, outcome))
    if action == signal.SIG_DFL:
        assert (EXIT[sig], "old") in seen, seen  # some signals did stop a run


# the signal sent right after the last rename (signals still held: it waits for the
# lines the run then prints, which are true): the files are new, and the line says so
AFTER_THE_WRITE = """
import os, signal, sys
import cmhash.write.writer as w
real, sig = w.wrote, int(sys.argv[1])
def wrote(files):
    real(files)
    os.kill(os.getpid(), sig)
w.wrote = wrote
sys.argv = ["cmhash", *sys.argv[2:]]
from cmhash.cli.main import entry
entry()
"""


@pytest.mark.parametrize(
    "sig", [signal.SIGINT, signal.SIGTERM, signal.SIGHUP], ids=lambda s: s.name
)
@pytest.mark.parametrize("command", ["in-place", "restart"])
def test_a_signal_after_the_write_says_the_files_are_new(
    tmp_path: Path, sig: signal.Signals, command: str
) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    files = {repo / "config.yaml": CM, repo / "a.yaml": dep("a"), repo / "b.yaml": dep("b")}
    for path, data in files.items():
        path.write_bytes(data)
    args = (
        ["--no-config", "-i", str(repo)]
        if command == "in-place"
        else ["restart", "deployment/a", str(repo)]
    )
    args += ["--reason", "rotate"] if command == "restart" else []
    proc = subprocess.run(
        [sys.executable, "-c", AFTER_THE_WRITE, str(int(sig)), *args],
        capture_output=True,
        text=True,
        preexec_fn=disposition(sig, signal.SIG_DFL),
        timeout=120,
    )
    assert proc.returncode == EXIT[sig], proc.stderr
    # (click writes a line break for Ctrl-C, after the terminal's "^C")
    *said, last = [line for line in proc.stderr.splitlines() if line]
    if command == "in-place":
        assert state({p: d for p, d in files.items() if p.name != "b.yaml"}) == "new"
        assert len(updated(proc.stderr)) == len(said) == 2
        assert last == f"{MESSAGE[sig]} after writing: 2 files updated"
    else:
        assert b"cmhash.io/restart" in (repo / "a.yaml").read_bytes()
        assert len(said) == 1 and said[0].endswith('cmhash.io/restart: "rotate"'), said
        assert last == f"{MESSAGE[sig]} after writing: 1 file updated"
    assert not list(repo.glob(".cmhash-*"))

"""Progress on stderr: at a terminal, for runs over a second, with documents, workers and
an ETA; never when stderr is not a terminal, under -q, or inside Helm."""

from __future__ import annotations

import os
import pty
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import cmhash_command

CM = b'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cfg\ndata:\n  a: "1"\n'


def big(tmp: Path, n: int = 40000) -> Path:
    dep = (
        b"---\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: app%d\nspec:\n"
        b"  template:\n    spec:\n      containers:\n      - name: main\n"
        b"        envFrom:\n        - configMapRef: {name: cfg}\n"
    )
    path = tmp / "big.yaml"
    path.write_bytes(CM + b"".join(dep % i for i in range(n)))
    return path


# the console entry point with the bar's one-second delay taken out: whether a run of
# the test input takes over a second depends on the machine (with workers, it does not)
AT_ONCE = [
    sys.executable,
    "-c",
    "import sys; from cmhash.runtime import progress; progress.DELAY = 0; "
    "from cmhash.cli.main import entry; sys.argv[0] = 'cmhash'; entry()",
]


def run_with_terminal_stderr(
    args: list[str], env: dict[str, str] | None = None, command: list[str] | None = None
) -> tuple[int, str]:
    """stderr on a pty (a terminal), stdout to /dev/null; what the terminal showed."""
    controller, terminal = pty.openpty()
    proc = subprocess.Popen(
        [*(command or cmhash_command()), *args],
        stdout=subprocess.DEVNULL,
        stderr=terminal,
        stdin=subprocess.DEVNULL,
        env={**os.environ, **(env or {})},
    )
    os.close(terminal)
    shown = b""
    while True:
        try:
            data = os.read(controller, 65536)
        except OSError:  # the child closed the terminal
            break
        if not data:
            break
        shown += data
    os.close(controller)
    return proc.wait(timeout=120), shown.decode("utf-8", "replace")


@pytest.mark.slow
@pytest.mark.parametrize("workers", ["1", "2"])
def test_progress_at_a_terminal(tmp_path: Path, workers: str) -> None:
    code, shown = run_with_terminal_stderr(
        ["--no-config", "--workers", workers, str(big(tmp_path))], command=AT_ONCE
    )
    assert code == 0
    assert "cmhash: analyzing" in shown and "%" in shown
    assert "documents" in shown
    if workers == "2":
        assert "/40,001 documents, 2 workers" in shown
    assert shown.endswith("\r\x1b[K\x1b[?25h")  # the bar erases itself


@pytest.mark.slow
@pytest.mark.parametrize(("args", "env"), [(["-q"], {}), ([], {"HELM_PLUGIN_NAME": "cmhash"})])
def test_no_progress_when_quiet_or_in_helm(
    tmp_path: Path, args: list[str], env: dict[str, str]
) -> None:
    code, shown = run_with_terminal_stderr(["--no-config", *args, str(big(tmp_path))], env)
    assert code == 0 and "analyzing" not in shown


def test_no_progress_when_stderr_is_not_a_terminal(tmp_path: Path) -> None:
    proc = subprocess.run(
        [*cmhash_command(), "--no-config", str(big(tmp_path, 20000))],
        capture_output=True,
        check=False,
    )
    assert proc.returncode == 0 and proc.stderr == b""


def test_short_runs_show_nothing(tmp_path: Path) -> None:
    code, shown = run_with_terminal_stderr(["--no-config", str(big(tmp_path, 10))])
    assert code == 0 and shown == ""


def test_the_first_frame_shows_the_work_done_and_the_bytes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A bar that opens after a second of work (here: at 95 %) draws 95 % and the bytes
    from its first frame; it read 0 % there and showed no bytes."""
    import io

    from cmhash.runtime import progress

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    term = Terminal()
    monkeypatch.setattr(sys, "stderr", term)
    monkeypatch.setattr(progress, "DELAY", 0)
    bar = progress.Progress(20_000_000, 1000, 2, enabled=True)
    bar.advance(19_000_000, 950)
    first = term.getvalue()
    assert " 95%" in first and " 0%" not in first, first
    assert "19.0/20.0 MB, 950/1,000 documents, 2 workers" in first, first
    bar.close()

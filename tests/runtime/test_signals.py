"""--in-place under SIGINT, SIGTERM and SIGHUP: all or nothing, whatever instruction the
signal lands on, and never a temp file left behind.

Two kinds of test: a signal raised by the process itself at exact points of the commit
(right after staging file k, right after renaming file k: the moments where a signal
used to be lost), and signals from outside at many moments of a run over hundreds of
files."""

from __future__ import annotations

import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import cmhash_command
from test_reliability import CM, dep

N = 400


def make_tree(root: Path, n: int) -> dict[Path, bytes]:
    root.mkdir(parents=True, exist_ok=True)
    files = {root / "config.yaml": CM}
    files.update({root / f"app{i:03}.yaml": dep(f"app{i}") for i in range(n)})
    for path, data in files.items():
        path.write_bytes(data)
    return files


def state(files: dict[Path, bytes]) -> str:
    """'old' or 'new' when every file is; anything else fails the test."""
    changed = {p for p, data in files.items() if p.read_bytes() != data}
    workloads = {p for p in files if p.name != "config.yaml"}
    if not changed:
        return "old"
    assert changed == workloads, f"{len(changed)} of {len(workloads)} files rewritten"
    for p in changed:
        assert p.read_bytes().count(b"checksum/config") == 1, p
    return "new"


def no_temps(root: Path) -> None:
    assert not list(root.glob(".cmhash-*")), "temp files left behind"


# A subprocess that runs the real console entry point, with the writer's rename or stage
# step wrapped so that the process sends itself a real signal right after step k.
INJECT = """
import os, signal, sys
import cmhash.write.writer as w
sig, step, k = int(sys.argv[1]), sys.argv[2], int(sys.argv[3])
calls = {"n": 0}
def after(real):
    def wrapped(*args, **kwargs):
        result = real(*args, **kwargs)
        calls["n"] += 1
        if calls["n"] == k:
            os.kill(os.getpid(), sig)
        return result
    return wrapped
if step == "rename":
    w.write_files.__kwdefaults__ = {"replace": after(os.replace)}
else:
    w._stage = after(w._stage)
sys.argv = ["cmhash", "--no-config", "-i", sys.argv[4]]
from cmhash.cli.main import entry
entry()
"""


def _as_in_a_terminal() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)  # CI may start us with SIGINT ignored


EXIT = {signal.SIGINT: 130, signal.SIGTERM: 143, signal.SIGHUP: 129}
MESSAGE = {
    signal.SIGINT: "cmhash: interrupted",
    signal.SIGTERM: "cmhash: terminated (SIGTERM)",
    signal.SIGHUP: "cmhash: terminated (SIGHUP)",
}
# the line of a signal that stopped the write: it rolled every file back
ROLLED_BACK = {
    sig: f"{line} while writing: every file was rolled back, none changed"
    for sig, line in MESSAGE.items()
}


@pytest.mark.parametrize(
    "sig", [signal.SIGINT, signal.SIGTERM, signal.SIGHUP], ids=lambda s: s.name
)
@pytest.mark.parametrize(
    ("step", "k"),
    [
        ("stage", 1),
        ("stage", 200),
        ("stage", N),
        ("rename", 1),
        ("rename", 2),
        ("rename", 199),
        ("rename", N - 1),
        ("rename", N),
    ],
)
def test_signal_at_an_exact_step_rolls_everything_back(
    tmp_path: Path, sig: signal.Signals, step: str, k: int
) -> None:
    tree = tmp_path / "m"
    files = make_tree(tree, N)
    proc = subprocess.run(
        [sys.executable, "-c", INJECT, str(int(sig)), step, str(k), str(tree)],
        capture_output=True,
        preexec_fn=_as_in_a_terminal,
        timeout=120,
    )
    assert proc.returncode == EXIT[sig], proc.stderr
    assert proc.stderr.decode().strip().splitlines() == [ROLLED_BACK[sig]]
    assert state(files) == "old"
    no_temps(tree)


@pytest.mark.slow
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=lambda s: s.name)
def test_signals_from_outside_at_many_moments(tmp_path: Path, sig: signal.Signals) -> None:
    """The whole run over 400 files, signalled at 12 moments spread over its length
    (after start-up): every time, all files old or all new (a signal after the commit,
    whose line says so), no temp files."""
    tree = tmp_path / "m"
    files = make_tree(tree, N)
    start = time.monotonic()
    subprocess.run(
        [*cmhash_command(), "--no-config", "-i", str(tree)], check=True, capture_output=True
    )
    length = time.monotonic() - start
    seen = set()
    for i in range(12):
        for p, data in files.items():
            p.write_bytes(data)
        proc = subprocess.Popen(
            [*cmhash_command(), "--no-config", "-i", str(tree)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            preexec_fn=_as_in_a_terminal,
        )
        time.sleep(length * (0.25 + 0.75 * i / 12))
        proc.send_signal(sig)
        _, err = proc.communicate(timeout=120)
        outcome = state(files)
        no_temps(tree)
        if proc.returncode == 0:
            assert outcome == "new"
        elif proc.returncode == -sig:  # landed in interpreter start-up, before cmhash ran
            assert outcome == "old"
        else:
            assert proc.returncode == EXIT[sig], err
            last = err.decode().strip().splitlines()[-1]
            if outcome == "new":  # landed after the commit: the line says the files changed
                assert last == f"{MESSAGE[sig]} after writing: {N} files updated", err
            else:
                assert last in (MESSAGE[sig], ROLLED_BACK[sig]), err
        seen.add((proc.returncode, outcome))
    assert (EXIT[sig], "old") in seen, seen  # some signals did land mid-run


# The console script's entry (cmhash.__main__), in a subprocess that sends itself a real
# signal at an exact point: when a module is first imported (during start-up, before
# and after the run's own handlers are in place, or inside the run), or right after
# main() is done (the final flush).
EARLY = """
import builtins, os, sys
sigs, point = [int(s) for s in sys.argv[1].split(",")], sys.argv[2]
sys.argv = ["cmhash", *sys.argv[3:]]
real_import = builtins.__import__
def send():
    for sig in sigs:  # (more than one: all pending at once, as two quick Ctrl-C's)
        os.kill(os.getpid(), sig)
if point == "after-main":
    import cmhash.cli.main as cli
    real_main = cli.main
    def main(argv=None):
        try:
            real_main(argv)
        finally:
            send()
    cli.main = main
else:
    def hooked(name, *args, **kwargs):
        if name == point:
            builtins.__import__ = real_import
            send()
        return real_import(name, *args, **kwargs)
    builtins.__import__ = hooked
from cmhash.__main__ import entry
entry()
"""

EARLY_POINTS = [
    "cmhash.runtime",  # __main__ imports early: its own handlers are in place
    "gc",  # the first import after __main__ put its handlers in place
    "click",  # cli's imports: about 70 ms of a small run, once a traceback
    "cmhash.cli.options",
    "cmhash.cli.exits",  # main(): the run's handlers are in, outcome() is not running yet
    "cmhash.deliver",  # inside the run
    "after-main",  # the exit code is known; the flush
]


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=lambda s: s.name)
@pytest.mark.parametrize("point", EARLY_POINTS)
def test_a_signal_during_start_up_is_one_line(
    tmp_path: Path, sig: signal.Signals, point: str
) -> None:
    """Ctrl-C (or SIGTERM) while cmhash is still importing click and its own modules
    gave a Python traceback, and SIGTERM while __main__ loaded ``early`` ended it
    silently: now, wherever it lands from __main__'s first line to the exit, one line
    and 130 (143). Exactly that line: stderr is no terminal here, so no blank line
    before it (click's main answers a KeyboardInterrupt with one)."""
    path = tmp_path / "m.yaml"
    path.write_bytes(CM + b"---\n" + dep("app"))
    proc = subprocess.run(
        [sys.executable, "-c", EARLY, str(int(sig)), point, "--no-config", str(path)],
        capture_output=True,
        preexec_fn=_as_in_a_terminal,
        timeout=60,
    )
    assert proc.returncode == EXIT[sig], proc.stderr
    assert proc.stderr.decode() == MESSAGE[sig] + "\n"


@pytest.mark.parametrize(
    "pair",
    [
        (signal.SIGINT, signal.SIGTERM),
        (signal.SIGHUP, signal.SIGTERM),
        (signal.SIGHUP, signal.SIGINT),
    ],
    ids=lambda p: "+".join(s.name for s in p),
)
@pytest.mark.parametrize("point", ["cmhash.cli.exits", "cmhash.deliver", "after-main"])
def test_two_signals_at_once_are_one_stop(
    tmp_path: Path, pair: tuple[signal.Signals, signal.Signals], point: str
) -> None:
    """Two signals at once (a second Ctrl-C, a SIGTERM after it): the first stops the
    run; the second, arriving while that stop unwinds (its line being written), had
    given a second line, or a traceback through cmhash's modules. Now one stop, one
    line, its exit code (of the one Python takes first: pending together, they are
    taken in a fixed order, whatever order they were sent in)."""
    path = tmp_path / "m.yaml"
    path.write_bytes(CM + b"---\n" + dep("app"))
    sigs = ",".join(str(int(s)) for s in pair)
    proc = subprocess.run(
        [sys.executable, "-c", EARLY, sigs, point, "--no-config", str(path)],
        capture_output=True,
        preexec_fn=_as_in_a_terminal,
        timeout=60,
    )
    (sig,) = [s for s in pair if EXIT[s] == proc.returncode] or [proc.returncode]
    assert proc.stderr.decode() == MESSAGE[sig] + "\n", proc.stderr


def test_an_ignored_sigint_stays_ignored(tmp_path: Path) -> None:
    """A background job's SIGINT is ignored by its parent: cmhash's early handler does
    not take it back (the run goes on and ends normally)."""
    path = tmp_path / "m.yaml"
    path.write_bytes(CM + b"---\n" + dep("app"))

    def ignored() -> None:
        signal.signal(signal.SIGINT, signal.SIG_IGN)

    proc = subprocess.run(
        [sys.executable, "-c", EARLY, str(int(signal.SIGINT)), "click", "--no-config", str(path)],
        capture_output=True,
        preexec_fn=ignored,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    assert b"checksum/config" in proc.stdout


# A program that runs the console script and, when ``point`` is first imported, sends
# itself the signal from inside ``fire``'s Python code (``signalled``: the handler runs
# there, at its loop), each script's ``fire`` being a place where Python treats an
# exception in its own way.
_HOOKED = """
import builtins, importlib, os, sys, weakref
sig, point = int(sys.argv[1]), sys.argv[2]
sys.argv = ["cmhash", *sys.argv[3:]]
def signalled(*_):
    os.kill(os.getpid(), sig)
    for _ in range(3):
        pass
{fire}
done = []
def hook(real):
    def hooked(name, *args, **kwargs):
        if name == point and not done:
            done.append(fire())
        return real(name, *args, **kwargs)
    return hooked
builtins.__import__ = hook(builtins.__import__)
importlib.import_module = hook(importlib.import_module)  # (how click's lookup imports)
from cmhash.__main__ import entry
entry()
"""

# A weakref callback: as when a signal comes while the import system frees a module lock
# (through a weakref callback), Python can only print the exception raised there
# ("Exception ignored in ..."): the signal was lost, the run went on and exited 0.
LOST = _HOOKED.format(
    fire="""
class Thing:
    pass
def fire():
    thing = Thing()
    ref = weakref.ref(thing, signalled)
    del thing
    return ref
"""
)

# A ``__set_name__`` while an import creates a class (an Enum's members, a
# cached_property): Python 3.11's type() turns the exception into ``RuntimeError: Error
# calling __set_name__`` (3.12 on keep it and add a note). Seen at random instants as
# "internal error (RuntimeError at <frozen abc>:106)", exit 3.
WRAPPED = _HOOKED.format(
    fire="""
class Named:
    __set_name__ = signalled
def fire():
    return type("Made", (), {"field": Named()})
"""
)


@pytest.mark.parametrize(
    "sig", [signal.SIGINT, signal.SIGTERM, signal.SIGHUP], ids=lambda s: s.name
)
@pytest.mark.parametrize(
    ("script", "point"),
    [
        (LOST, "cmhash.cli.inject"),  # the command's module, imported when click looks it up
        (LOST, "cmhash.settings.layering"),  # imported by the command
        (LOST, "cmhash.deliver"),
        (WRAPPED, "cmhash.cli.exits"),  # imported by main() before outcome() runs
        (WRAPPED, "cmhash.cli.inject"),  # inside outcome(): the command, looked up
        (WRAPPED, "cmhash.deliver"),
    ],
    ids=lambda v: {LOST: "lost", WRAPPED: "wrapped"}.get(v, v),
)
def test_a_signal_python_cannot_raise_or_wraps_is_that_signal(
    tmp_path: Path, sig: signal.Signals, script: str, point: str
) -> None:
    path = tmp_path / "m.yaml"
    path.write_bytes(CM + b"---\n" + dep("app"))
    proc = subprocess.run(
        [sys.executable, "-c", script, str(int(sig)), point, "--no-config", str(path)],
        capture_output=True,
        preexec_fn=_as_in_a_terminal,
        timeout=60,
    )
    assert (proc.returncode, proc.stderr.decode()) == (EXIT[sig], MESSAGE[sig] + "\n")


def test_what_counts_as_a_wrapped_signal() -> None:
    from cmhash.runtime import signals

    stop = signals.Terminated(signal.SIGTERM)
    wrapped = RuntimeError("Error calling __set_name__")
    wrapped.__cause__ = stop
    during = ValueError("while unwinding")
    during.__context__ = KeyboardInterrupt()
    looped = OSError("a cycle of causes")
    looped.__context__ = looped
    assert signals.inside(wrapped) is stop
    assert isinstance(signals.inside(during), KeyboardInterrupt)
    assert signals.inside(looped) is None and signals.inside(ValueError("a bug")) is None


def _disposition(sig: signal.Signals, action: signal.Handlers) -> Callable[[], None]:
    def start() -> None:
        _as_in_a_terminal()
        signal.signal(sig, action)

    return start


# Python's own report of a Ctrl-C that lands while it checks argv[0] at start-up
# (Modules/main.c pymain_run_python): it goes on with the run
PYTHON_GOES_ON = "Failed checking if argv[0] is an import path entry\n"

# a traceback frame in a module of the cmhash package (a path whose part after a `cmhash`
# directory is plain names: not `bin/cmhash` quoted in Python's own argv[0] report, not a
# checkout named cmhash holding `.venv/` or `site-packages/`), or a line of cmhash's
_CMHASH_FRAME = re.compile(r'File "[^"]*[/\\]cmhash[/\\](?:\w+[/\\])*\w+\.py"')


def _from_cmhash(text: str) -> bool:
    """Whether stderr holds anything of cmhash's own: a frame of its code or its line."""
    return bool(_CMHASH_FRAME.search(text)) or any(
        line.startswith("cmhash:") for line in text.splitlines()
    )


# (signal, disposition) -> runs: SIGINT, the one Python itself handles, the most
RANDOM_RUNS = {
    (signal.SIGINT, signal.SIG_DFL): 200,
    (signal.SIGTERM, signal.SIG_DFL): 80,
    (signal.SIGHUP, signal.SIG_DFL): 80,
    (signal.SIGINT, signal.SIG_IGN): 60,
    (signal.SIGHUP, signal.SIG_IGN): 60,
}


@pytest.mark.slow
@pytest.mark.parametrize(
    ("sig", "action"),
    list(RANDOM_RUNS),
    ids=[f"{s.name}-{'ignored' if a == signal.SIG_IGN else 'default'}" for s, a in RANDOM_RUNS],
)
def test_signals_at_random_instants_of_the_start(
    tmp_path: Path, sig: signal.Signals, action: signal.Handlers
) -> None:
    """The console script signalled at random instants 0 to 150 ms after it was started:
    from cmhash's first line on, always one line and the exit code (never a traceback,
    never a signal lost: exit 0 only with nothing on stderr, the run over before the
    signal came); ignored (nohup), never anything but the run's own end. Before cmhash's
    first line, in Python's own start-up (the interpreter, site-packages' ``.pth``
    files: a few milliseconds, more on a loaded machine), the signal is the
    interpreter's: killed by it, or for SIGINT Python's KeyboardInterrupt report, with
    no line of cmhash's."""
    import random

    path = tmp_path / "m.yaml"
    path.write_bytes(CM + b"---\n" + dep("app"))
    rng = random.Random(f"{sig.name}-{action}")
    seen: dict[str, int] = {}
    for _ in range(RANDOM_RUNS[(sig, action)]):
        proc = subprocess.Popen(
            [*cmhash_command(), "--no-config", str(path)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            preexec_fn=_disposition(sig, action),
        )
        time.sleep(rng.uniform(0, 0.150))
        proc.send_signal(sig)
        _, err = proc.communicate(timeout=60)
        text = err.decode()
        if proc.returncode == 0 and text.startswith(PYTHON_GOES_ON):
            # (Python itself took the Ctrl-C while it looked at argv[0], before any code
            # of cmhash: it reports it and goes on, and the run ends normally)
            assert action == signal.SIG_DFL and text.endswith("KeyboardInterrupt\n"), text
            assert not _from_cmhash(text), text
            outcome = "python"
        elif action == signal.SIG_IGN or proc.returncode == 0:
            assert (proc.returncode, text) == (0, ""), text
            outcome = "done"
        elif proc.returncode == EXIT[sig]:
            assert text == MESSAGE[sig] + "\n", text  # (one line: stderr is a pipe here)
            outcome = "cmhash"
        else:  # before cmhash's first line ran: the interpreter's
            assert proc.returncode in (-sig, 1), text
            assert sig == signal.SIGINT or not text, text
            assert not _from_cmhash(text), text
            outcome = "python"
        seen[outcome] = seen.get(outcome, 0) + 1
    print(sig.name, action.name, seen)
    if action == signal.SIG_DFL:
        assert seen.get("cmhash"), seen


# Python's own report, as it came from a console script at .venv/bin/cmhash: the path it
# quotes is the script's, not cmhash's code
_PYTHONS_REPORT = """Failed checking if argv[0] is an import path entry
Traceback (most recent call last):
  File "<frozen zipimport>", line 92, in __init__
KeyError: '/builds/cmhash/.venv/bin/cmhash'

During handling of the above exception, another exception occurred:

Traceback (most recent call last):
  File "<frozen zipimport>", line 94, in __init__
  File "<frozen zipimport>", line 401, in _read_directory
KeyboardInterrupt
"""


@pytest.mark.parametrize(
    ("text", "ours"),
    [
        (_PYTHONS_REPORT, False),
        (
            '  File "/builds/cmhash/.venv/lib/python3.11/site-packages/click/core.py", line 1\n',
            False,
        ),
        ('  File "/builds/x/src/cmhash/runtime.py", line 40, in entry\n', True),
        ('  File "/usr/lib/python3/site-packages/cmhash/cli/main.py", line 9, in main\n', True),
        ("cmhash: interrupted\n", True),
    ],
)
def test_what_counts_as_cmhash_on_stderr(text: str, ours: bool) -> None:
    """Python's own start-up report quotes the script's path (``bin/cmhash``): not cmhash's."""
    assert _from_cmhash(text) is ours


def test_main_says_what_early_says() -> None:
    """__main__'s first handlers (before ``early`` is loaded) give early's lines."""
    import cmhash.__main__ as main
    from cmhash.runtime import early

    assert {signal.Signals(n).name: line for n, line in main._LINES.items()} == {
        name: f"cmhash: {line}\n".encode() for name, line in early._LINES.items()
    }


# A second signal that arrives while the first one's one-line handler writes its line:
# Python runs its handler when the write returns, before the exit
QUIT_TWICE = """
import os, signal, sys
first, second, where = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
if where == "main":  # the handlers __main__ sets before it imports anything
    import cmhash.__main__ as mod
    for sig in (first, second):
        signal.signal(sig, mod._quit)
else:  # early's
    from cmhash.runtime import early as mod
    mod.install()
real_write, sent = os.write, []
def write(fd, data):
    n = real_write(fd, data)
    if not sent:  # (one second signal, no third)
        sent.append(second)
        os.kill(os.getpid(), second)
    return n
os.write = write
os.kill(os.getpid(), first)
for _ in range(10**6):
    pass
print("lost")
"""


TWICE = (signal.SIGHUP, signal.SIGTERM)


@pytest.mark.parametrize("where", ["main", "early"])
def test_a_signal_during_the_last_line_adds_none(where: str) -> None:
    """SIGHUP's line written, then SIGTERM before the exit: two lines and 143 before; one
    line and the first signal's code now."""
    proc = subprocess.run(
        [sys.executable, "-c", QUIT_TWICE, *(str(int(s)) for s in TWICE), where],
        capture_output=True,
        preexec_fn=_as_in_a_terminal,
        timeout=60,
    )
    assert (proc.returncode, proc.stderr.decode()) == (129, MESSAGE[signal.SIGHUP] + "\n")

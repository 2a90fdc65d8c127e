"""``python -m cmhash`` and the console script: ``cli.entry``, with the cyclic garbage
collector off from the start. ``entry`` turns it off for the whole process anyway (what a
run builds is acyclic, and the process ends with the run); doing it here, before click and
cmhash's modules are imported, also spares the collections that importing them triggers
(about 4 ms of a small chart's 60). So this module imports nothing itself, but
``early``, which makes a signal during those imports one line and its exit code.

Until ``early`` is loaded (its package and module: compiled, where bytecode is not
written), the handlers set here first give that line already: ``_signal`` is loaded with
the interpreter, so no import runs before they are in place. (Before this module's first
line, Python loads the ``cmhash`` package and this module: a signal then is Python's.)"""

import sys

_signal = sys.modules["_signal"]
# early._LINES' lines (tests/runtime/test_signals.py keeps them equal); no SIGHUP on Windows
_LINES = {
    getattr(_signal, name): f"cmhash: {line}\n".encode()
    for name, line in (
        ("SIGINT", "interrupted"),
        ("SIGTERM", "terminated (SIGTERM)"),
        ("SIGHUP", "terminated (SIGHUP)"),
    )
    if hasattr(_signal, name)
}


_quitting = False


def _quit(signum: int, frame: object) -> None:
    global _quitting
    if _quitting:  # (a second signal, its handler run between this one's write and exit)
        return
    _quitting = True
    import os

    line = _LINES[signum]
    os.write(2, b"\n" + line if signum == _signal.SIGINT and os.isatty(2) else line)
    os._exit(128 + signum)


for _num in _LINES:
    if _signal.getsignal(_num) != _signal.SIG_IGN:  # (nohup's stays)
        _signal.signal(_num, _quit)

from cmhash.runtime import early  # noqa: E402  (after the handler above, on purpose)

early.install()  # a signal during the imports: one line and its exit code, no traceback


def entry() -> None:
    import gc

    gc.disable()
    from cmhash.cli.main import entry as run

    run()


if __name__ == "__main__":
    entry()

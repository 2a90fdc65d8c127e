"""Signals outside the run's own handling: from the console script's first line until
``cli.entry`` has its handlers (about 70 ms of imports: click, jinja2...), and again
once the run is over (the final flush). A signal then ends the process at once with the
one line and exit code the run itself would give (130 SIGINT, 143 SIGTERM, 129
SIGHUP), never a KeyboardInterrupt traceback. What Python does before cmhash's first
line (its own start-up, a few milliseconds) is out of reach.

Imports nothing: ``_signal``, the C half of ``signal``, is loaded with the interpreter,
while ``signal`` itself imports ``enum`` (milliseconds with no handler in place)."""

import sys

_LINES = {
    "SIGINT": "interrupted",
    "SIGTERM": "terminated (SIGTERM)",
    "SIGHUP": "terminated (SIGHUP)",
}
_said: dict[int, bytes] = {}
# said after the line once an in-place write is done (``signals.wrote``): the files are new
after = ""
_sigint = -1  # its number, once install() has looked
_quitting = False


def _quit(signum: int, frame: object) -> None:
    # (its twin, cmhash/__main__.py's _quit, stands in until this module is loaded)
    global _quitting
    if _quitting:  # (a second signal, its handler run between this one's write and exit)
        return
    _quitting = True
    import os

    line = _said[signum]
    if signum == _sigint and os.isatty(2):
        line = b"\n" + line  # after the terminal's "^C" echo, as click does mid-run
    os.write(2, line)
    os._exit(128 + signum)


def install() -> None:
    """One line and the exit code, at once, on SIGINT, SIGTERM and SIGHUP; a signal the
    parent made ignored (``nohup``, a background job's SIGINT) stays ignored."""
    global _sigint
    sig = sys.modules.get("_signal") or __import__("signal")
    _sigint = sig.SIGINT
    for name, line in _LINES.items():
        num = getattr(sig, name, None)
        if num is None or sig.getsignal(num) == sig.SIG_IGN:
            continue
        _said[num] = f"cmhash: {line}{after}\n".encode()
        sig.signal(num, _quit)

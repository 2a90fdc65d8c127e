"""``python -m cmhash`` and the console script: ``cli.entry``, with the cyclic garbage
collector off from the start. ``entry`` turns it off for the whole process anyway (what a
run builds is acyclic, and the process ends with the run); doing it here, before click and
cmhash's modules are imported, also spares the collections that importing them triggers
(about 4 ms of a small chart's 60). So this module imports nothing itself, but
``early``, which makes a signal during those imports one line and its exit code.

Until ``early`` is loaded (its package and module: compiled, where bytecode is not
written), a Ctrl-C already gets that line from the handler set here first: ``_signal`` is
loaded with the interpreter, so no import runs before it is in place."""

import sys

_signal = sys.modules["_signal"]


def _interrupted(signum: int, frame: object) -> None:
    import os

    os.write(2, b"\ncmhash: interrupted\n" if os.isatty(2) else b"cmhash: interrupted\n")
    os._exit(130)


if _signal.getsignal(_signal.SIGINT) is _signal.default_int_handler:  # (not nohup's)
    _signal.signal(_signal.SIGINT, _interrupted)

from cmhash.runtime import early  # noqa: E402  (after the handler above, on purpose)

early.install()  # a signal during the imports: one line and its exit code, no traceback


def entry() -> None:
    import gc

    gc.disable()
    from cmhash.cli.main import entry as run

    run()


if __name__ == "__main__":
    entry()

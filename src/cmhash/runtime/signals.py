"""Signals: SIGTERM and SIGHUP end a run like Ctrl-C does, and a commit step can hold
every one of them off until it is done or rolled back (then :class:`RolledBack`). A signal
the parent made ignored (``nohup``, a background job's SIGINT) stays ignored and stops
nothing, held or not.

``timeout``, CI cancellation and container shutdown send SIGTERM; a closed terminal
sends SIGHUP. Each becomes a :class:`Terminated` exception (like ``KeyboardInterrupt``
for SIGINT, a ``BaseException``: no ``except Exception`` swallows it), so the same
clean-up runs and ``cli`` exits with 128 + the signal number and one line.
"""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType
from typing import Any

HANDLED = (signal.SIGTERM, signal.SIGHUP)
HELD = (signal.SIGINT, *HANDLED)


class _Signalled(BaseException):
    """A signal that ends the run (no ``except Exception`` swallows it)."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum

    @property
    def name(self) -> str:
        return signal.Signals(self.signum).name


class Terminated(_Signalled):
    """SIGTERM or SIGHUP arrived, or in the console script SIGINT: the run ends with
    128 + ``signum`` and :func:`line`."""


def inside(exc: BaseException) -> BaseException | None:
    """The stop (a signal's exception or a KeyboardInterrupt) that ``exc`` wraps, if any.

    Python 3.11's ``type()`` turns what a ``__set_name__`` raises into ``RuntimeError:
    Error calling __set_name__ …`` (its cause the original): a signal whose handler
    raised while an import created an Enum (its members) or a class with a
    ``cached_property`` reaches the run as that RuntimeError. It is still the signal;
    so is an error raised while the signal's exception unwound (its context)."""
    seen: set[int] = set()
    now: BaseException | None = exc
    while now is not None and id(now) not in seen:
        if isinstance(now, (_Signalled, KeyboardInterrupt)):
            return now
        seen.add(id(now))
        now = now.__cause__ or now.__context__
    return None


def line(signum: int) -> str:
    """The one line a stop on ``signum`` ends with (``after_write`` not included): after
    the terminal's "^C" echo for a Ctrl-C on a terminal, as ``early`` writes it."""
    if signum != signal.SIGINT:
        return f"cmhash: terminated ({signal.Signals(signum).name})"
    return ("\n" if _on_terminal() else "") + "cmhash: interrupted"


def _on_terminal() -> bool:
    try:
        return os.isatty(2)
    except OSError:  # pragma: no cover - stderr closed
        return False


# the signal whose exception is ending the run, once raised: a further one is that stop
_stop: int | None = None


def _raise(signum: int, frame: FrameType | None) -> None:
    global _stop
    if _stop is not None:
        return  # (a second signal while the first unwinds: one stop, one line)
    _stop = signum
    raise Terminated(signum)


_installed = False


def install() -> None:
    """SIGINT, SIGTERM and SIGHUP -> Terminated (in place of ``early``'s handlers), unless
    the parent made them ignored (``nohup``); and a signal's exception that Python could
    not raise is not lost (``_unraisable``). Only the console script calls it: the
    process is cmhash's. (Not ``KeyboardInterrupt`` for SIGINT: click's main answers
    that with a blank line on stderr, there for a terminal, also on a pipe.)"""
    global _installed, _stop
    _installed, _stop = True, None
    for sig in HELD:
        if signal.getsignal(sig) is not signal.SIG_IGN:
            signal.signal(sig, _raise)
    sys.unraisablehook = _unraisable


def _unraisable(info: Any) -> None:
    """``sys.unraisablehook`` of the run: a handler runs wherever Python is when the
    signal comes, and the exception it raises inside a weakref callback or a ``__del__``
    cannot propagate: Python prints it ("Exception ignored in ...", a traceback) and goes
    on, the signal lost (a Ctrl-C while a command's modules are imported: the import
    system's module locks free themselves through a weakref callback). Such a signal is
    sent again when the next Python function starts, where its exception propagates
    (or, held, waits for the poll). Anything else: Python's own report."""
    global _stop
    exc = info.exc_value
    if isinstance(exc, KeyboardInterrupt):
        again = int(signal.SIGINT)
    elif isinstance(exc, Terminated):
        again = exc.signum
    else:
        sys.__unraisablehook__(info)
        return
    _stop = None  # (it stopped nothing: the one sent again is the stop)
    previous = sys.gettrace()

    def resend(frame: FrameType, event: str, arg: object) -> None:
        sys.settrace(previous)
        os.kill(os.getpid(), again)  # (the handler runs as this new frame starts)

    sys.settrace(resend)


def release() -> None:
    """The run is over (its exit code known): in the console script's process, a signal
    from now on ends it at once with one line (``early``), instead of an exception that
    nothing is left to catch. After a stop on a signal, a further one changes nothing
    (its line is said)."""
    if _installed and _stop is None:
        from cmhash.runtime import early

        early.install()


def wrote(files: int) -> None:
    """An in-place write is done (its last rename, signals still held): a signal from now
    on still ends the run with its code, and its one line says the files were written
    (``cmhash: interrupted after writing: 1 file updated``), the run's and ``early``'s."""
    from cmhash.runtime import early

    early.after = f" after writing: {files} file{'' if files == 1 else 's'} updated"


def after_write() -> str:
    """What a signal's line adds once an in-place write is done (``wrote``), or ""."""
    from cmhash.runtime import early

    return early.after


def reset_in_child() -> None:
    """In forked workers: the parent handles signals; a worker just stops."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    for sig in HANDLED:
        signal.signal(sig, signal.SIG_DFL)


class RolledBack(_Signalled):
    """A held signal stopped a commit, which rolled everything back: ``cli`` says so and
    exits with 128 + ``signum`` (not a :class:`Terminated`: its handlers do not catch it)."""


def _stopping() -> list[int]:
    """The held signals that wait and would stop the run: an ignored one (``nohup``, a
    background job's SIGINT) stops nothing. Blocked, the kernel keeps even an ignored
    signal pending (it drops it at the unblock): it is no stop."""
    pending = signal.sigpending()
    return [s for s in HELD if s in pending and signal.getsignal(s) is not signal.SIG_IGN]


class Pending:
    """Inside :func:`held`: whether a held signal has arrived."""

    def check(self) -> None:
        """Raise (to start the roll-back) when a held signal waits."""
        waiting = _stopping()
        if waiting:
            raise _Stop(waiting[0])


class _Stop(_Signalled):
    """A held signal, raised by ``Pending.check`` to start the roll-back."""


@contextmanager
def held() -> Iterator[Pending]:
    """Block SIGINT, SIGTERM and SIGHUP for the body: no exception can land between two
    of its steps. The body polls ``Pending.check()`` between steps; on a signal it
    raises, the body rolls back, and leaving the block raises :class:`RolledBack` for
    that signal (taken from the pending ones, with any other that waits: one stop, one
    line). A signal that comes after the body's last check is delivered as usual when
    the block ends (``KeyboardInterrupt`` or ``Terminated``); inside another ``held``
    block, when that one ends."""
    global _stop
    old = signal.pthread_sigmask(signal.SIG_BLOCK, HELD)
    try:
        yield Pending()
    except _Stop as stop:
        _stop = stop.signum  # (a signal from now on: the same stop)
        for s in _stopping():
            signal.sigwait({s})  # (pending: returns at once) taken, not delivered
        raise RolledBack(stop.signum) from None
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)

"""Signals: SIGTERM and SIGHUP end a run like Ctrl-C does, and a commit step can hold
every one of them off until it is done or rolled back.

``timeout``, CI cancellation and container shutdown send SIGTERM; a closed terminal
sends SIGHUP. Each becomes a :class:`Terminated` exception (like ``KeyboardInterrupt``
for SIGINT, a ``BaseException``: no ``except Exception`` swallows it), so the same
clean-up runs and ``cli`` exits with 128 + the signal number and one line.
"""

from __future__ import annotations

import signal
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType

HANDLED = (signal.SIGTERM, signal.SIGHUP)
HELD = (signal.SIGINT, *HANDLED)


class Terminated(BaseException):
    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum

    @property
    def name(self) -> str:
        return signal.Signals(self.signum).name


def _raise(signum: int, frame: FrameType | None) -> None:
    raise Terminated(signum)


_installed = False


def install() -> None:
    """SIGTERM/SIGHUP -> Terminated, SIGINT -> KeyboardInterrupt (Python's own handler,
    in place of ``early``'s), unless the parent made them ignored (``nohup``). Only the
    console script calls it: the process is cmhash's."""
    global _installed
    _installed = True
    if signal.getsignal(signal.SIGINT) is not signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    for sig in HANDLED:
        if signal.getsignal(sig) is not signal.SIG_IGN:
            signal.signal(sig, _raise)


def release() -> None:
    """The run is over (its exit code known): in the console script's process, a signal
    from now on ends it at once with one line (``early``), instead of an exception that
    nothing is left to catch."""
    if _installed:
        from cmhash.runtime import early

        early.install()


def reset_in_child() -> None:
    """In forked workers: the parent handles signals; a worker just stops."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    for sig in HANDLED:
        signal.signal(sig, signal.SIG_DFL)


class Pending:
    """Inside :func:`held`: whether a held signal has arrived."""

    def arrived(self) -> bool:
        return bool(signal.sigpending() & set(HELD))

    def check(self) -> None:
        """Raise (to start the roll-back) when a held signal waits."""
        if self.arrived():
            raise _Stop


class _Stop(BaseException):
    pass


@contextmanager
def held() -> Iterator[Pending]:
    """Block SIGINT, SIGTERM and SIGHUP for the body: no exception can land between two
    of its steps. The body polls ``Pending.check()`` between steps; on a signal it
    raises, the body rolls back, and on leaving the block the signal is delivered
    (KeyboardInterrupt or Terminated, raised from here)."""
    old = signal.pthread_sigmask(signal.SIG_BLOCK, HELD)
    try:
        yield Pending()
    except _Stop:
        pass  # rolled back; the unblock below delivers the signal
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)

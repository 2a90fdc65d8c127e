"""What a run's objects cost after the run: nothing, when the process ends with it.

``cli.entry`` leaves with ``os._exit`` once the output is flushed. Freeing a big run's
summaries, plans and index object by object before that, as the functions holding them
return, costs about 4 % of a 5,000-app run that no one waits for. So when the process
ends with the run (``hold_until_exit``, called by ``cli.entry`` only), what a run built
is held here to the end. Anything that calls ``main`` in-process, such as the tests,
keeps the normal lifetimes."""

from __future__ import annotations

_held: list[object] | None = None


def hold_until_exit() -> None:
    """From now on, ``keep`` holds what it is given until the process ends."""
    global _held
    _held = []


def keep(obj: object) -> None:
    """Hold ``obj`` to the end of the process, when it ends with the run (else nothing)."""
    if _held is not None:
        _held.append(obj)

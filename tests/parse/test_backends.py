"""The event machinery is loaded when a document first needs it: a signal that lands
while it loads (Ctrl-C, CI cancellation a fraction of a second into a run) is that
signal, never a bug report (exit 3 "AttributeError" at the ``except`` that names the
parser's error class)."""

from __future__ import annotations

import signal
from collections.abc import Callable

import pytest

from cmhash.parse import events
from cmhash.parse.backends import Backend, ruamel_parts
from cmhash.runtime.signals import Terminated

DOC = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata: {k: !!str v}\n"


def interrupted_once(exc: BaseException) -> Callable[[], object]:
    """A loader the signal interrupts the first time, as Python raises it mid-import."""
    calls: list[int] = []

    def load() -> object:
        calls.append(1)
        if len(calls) == 1:
            raise exc
        return ruamel_parts()

    return load


@pytest.mark.parametrize(
    "exc", [KeyboardInterrupt(), Terminated(signal.SIGTERM)], ids=["int", "term"]
)
def test_a_signal_while_the_parser_loads_is_the_signal(exc: BaseException) -> None:
    be = Backend("exact", interrupted_once(exc))  # type: ignore[arg-type]
    with pytest.raises(type(exc)) as raised:
        events._parse(DOC, 0, be)
    assert raised.value is exc
    assert raised.value.__context__ is None  # (no AttributeError raised on the way)
    # loaded on the next use, not left half-set
    (root,) = events._parse(DOC, 0, be)
    assert root.kind == "map" and be.loaded

"""Progress on stderr for long runs, at a terminal only.

Shown when stderr is a terminal, ``-q`` is not given, and the run is neither a Helm
post-renderer nor a KRM function (their stderr is not a person's); and only once a run
has taken a second, so short runs stay silent. click's own progress bar draws it
(percent, ETA) with the bytes and documents done and the number of workers beside it,
from its first frame on, and erases it when the work is done.
"""

from __future__ import annotations

import os
import sys
import time
from typing import Any

DELAY = 1.0  # seconds before anything is drawn
EVERY = 0.2  # seconds between redraws (drawing on every document costs ~10 %)


def wanted(*, quiet: bool) -> bool:
    if quiet or os.environ.get("HELM_PLUGIN_NAME"):  # Helm 4 runs plugins with it set
        return False
    try:
        return sys.stderr.isatty()
    except (AttributeError, ValueError):
        return False


class Progress:
    """``advance(bytes, documents)`` after each piece of work; ``close()`` at the end."""

    def __init__(
        self, total_bytes: int, total_docs: int | None, workers: int, enabled: bool
    ) -> None:
        self.total_bytes = max(total_bytes, 1)
        self.total_docs = total_docs
        self.workers = workers
        self.enabled = enabled
        self.start = time.monotonic()
        self.done_bytes = 0
        self.done_docs = 0
        self._bar: Any = None
        self._shown = 0
        self._next = self.start + DELAY

    def advance(self, nbytes: int, ndocs: int) -> None:
        self.done_bytes += nbytes
        self.done_docs += ndocs
        if not self.enabled:
            return
        now = time.monotonic()
        if now < self._next:
            return
        self._next = now + EVERY
        if self._bar is None:
            self._open()
        self._bar.update(self.done_bytes - self._shown)
        self._shown = self.done_bytes

    def _open(self) -> None:
        import click

        docs = f"/{self.total_docs:,}" if self.total_docs else ""
        workers = f", {self.workers} workers" if self.workers > 1 else ""

        unit, scale = ("MB", 1e6) if self.total_bytes >= 1e6 else ("kB", 1e3)
        total = f"{self.total_bytes / scale:.1f}"

        def detail(_: Any) -> str:
            size = f"{self.done_bytes / scale:.1f}/{total} {unit}"
            return f"{size}, {self.done_docs:,}{docs} documents{workers}"

        self._bar = click.progressbar(
            length=self.total_bytes,
            label="cmhash: analyzing",
            file=sys.stderr,
            show_eta=True,
            show_percent=True,
            item_show_func=detail,
            width=24,
        )
        # the first frame shows the work done so far (a bar opened after a second of
        # work must not read 0 %): the position is set before the bar first draws
        self._bar.pos = self._shown = self.done_bytes
        self._bar.__enter__()

    def close(self) -> None:
        if self._bar is not None:
            # erase the bar and show the cursor again: stderr is for messages after it
            sys.stderr.write("\r\033[K\033[?25h")
            sys.stderr.flush()
            self._bar = None

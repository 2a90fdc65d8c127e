"""Where messages go: stderr, and the CMHASH_LOG file when set (Helm 4 drops stderr)."""

from __future__ import annotations

import os
import sys
import time

LOG_ENV = "CMHASH_LOG"


def err(line: str) -> None:
    try:
        sys.stderr.write(line + "\n")
        sys.stderr.flush()
    except (BrokenPipeError, OSError):  # pragma: no cover - stderr closed
        pass
    log(line)


def log(line: str) -> None:
    path = os.environ.get(LOG_ENV)
    if not path:
        return
    try:
        with open(path, "a", encoding="utf-8") as fh:
            fh.write(f"{time.strftime('%Y-%m-%dT%H:%M:%S')} cmhash[{os.getpid()}] {line}\n")
    except OSError:  # a log that cannot be written must not break the run
        pass


def unified_diff(old: str, new: str, path: str) -> str:
    """A git-style unified diff with fixed a/ b/ labels and no timestamps."""
    a = old.splitlines(keepends=True)
    b = new.splitlines(keepends=True)
    out = []
    import difflib  # only --diff needs it; start-up time matters for hooks

    for line in difflib.unified_diff(a, b, fromfile=f"a/{path}", tofile=f"b/{path}", n=3):
        if line.endswith("\n"):
            out.append(line)
        else:
            out.append(line + "\n\\ No newline at end of file\n")
    return "".join(out)

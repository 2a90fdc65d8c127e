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


def unified_diff(old: str, new: str, path: str, hidden: set[int] | frozenset[int] = frozenset()
                 ) -> str:
    """A git-style unified diff with fixed a/ b/ labels and no timestamps.

    ``hidden``: 1-based lines of ``old`` that must not be shown (Secret data). Our edits
    never touch them, so they could only appear as context; when they would, the file's
    hunks are written with no context lines (still a valid patch)."""
    import difflib  # only --diff needs it; start-up time matters for hooks

    a = old.splitlines(keepends=True)
    b = new.splitlines(keepends=True)
    context = 3
    if hidden:
        matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
        for group in matcher.get_grouped_opcodes(context):
            if any(tag == "equal" and hidden.intersection(range(i1 + 1, i2 + 1))
                   for tag, i1, i2, _, _ in group):
                context = 0
                break
    out = []
    for line in difflib.unified_diff(a, b, fromfile=f"a/{path}", tofile=f"b/{path}",
                                     n=context):
        if line.endswith("\n"):
            out.append(line)
        else:
            out.append(line + "\n\\ No newline at end of file\n")
    return "".join(out)

"""Where output goes: data to stdout (encoded a piece at a time), messages to stderr and
to the CMHASH_LOG file when set (Helm 4 drops stderr). Only this module and cli.py
write to the standard streams."""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Iterable, Sequence
from contextlib import suppress
from typing import TYPE_CHECKING

from cmhash.errors import CmhashError, OutputClosed

if TYPE_CHECKING:
    from cmhash.findings import Finding

LOG_ENV = "CMHASH_LOG"


def plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def err(line: str) -> None:
    """One message on stderr (and CMHASH_LOG); control and bidi characters a name from
    the input carries are shown as escapes (visible.py), never sent to the terminal."""
    from cmhash.visible import visible

    line = visible(line, lines=True)
    if sys.stderr is not None:  # (None: started with descriptor 2 closed, ``2>&-``)
        with suppress(OSError):  # stderr closed since
            sys.stderr.write(line + "\n")
            sys.stderr.flush()
    log(line)


def log(line: str) -> None:
    path = os.environ.get(LOG_ENV)
    if not path:
        return
    # (a log that cannot be written must not break the run)
    with suppress(OSError), open(path, "a", encoding="utf-8", errors="backslashreplace") as fh:
        fh.write(f"{time.strftime('%Y-%m-%dT%H:%M:%S')} cmhash[{os.getpid()}] {line}\n")


def report_notes(notes: Sequence[str], *, quiet: bool) -> None:
    """What the run decided on the user's behalf (stderr, and CMHASH_LOG under Helm 4)."""
    if not quiet:
        for line in notes:
            err(f"cmhash: note: {line}")


def report_findings(findings: Sequence[Finding], *, quiet: bool) -> None:
    """Print findings on stderr (errors only with --quiet)."""
    from cmhash.model import Level

    for f in findings:
        if not quiet or f.level is Level.ERROR:
            err(f.format())


def write_stdout(text: str | bytes | Iterable[str], *, bom: bool = False) -> None:
    """UTF-8, encoded a piece (at most about 1 MiB) at a time: a big stream is never
    held twice (as str and bytes). Bytes are UTF-8 already, and written as they are.
    A reader that left ends the run quietly (OutputClosed); an output that cannot be
    written (closed, a full disk) is one line and exit 2, as a file that cannot be."""
    if sys.stdout is None:  # started with descriptor 1 closed (``cmhash x.yaml >&-``)
        raise CmhashError("cannot write the output: standard output is closed")
    out = sys.stdout.buffer
    pieces: Iterable[str | bytes] = (
        (text[i : i + (1 << 20)] for i in range(0, len(text), 1 << 20))
        if isinstance(text, str)
        else [text]
        if isinstance(text, bytes)
        else text
    )
    try:
        if bom:
            out.write(b"\xef\xbb\xbf")
        for piece in pieces:
            out.write(piece if isinstance(piece, bytes) else piece.encode("utf-8"))
        out.flush()
    except BrokenPipeError:
        raise OutputClosed from None
    except OSError as exc:  # ENOSPC (/dev/full, a full disk), EBADF, EIO
        raise CmhashError(f"cannot write the output: {exc.strerror or exc}") from None

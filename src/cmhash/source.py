"""Reading inputs: bytes -> SourceText (encoding, BOM, newline), and atomic write-back."""

from __future__ import annotations

import bisect
import os
import re
import stat
import sys
from array import array
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import BinaryIO

from cmhash.errors import InputError, UsageError

STDIN = "-"
MANIFEST_SUFFIXES = (".yaml", ".yml", ".json")
_UTF8_BOM = b"\xef\xbb\xbf"
_OTHER_BOMS = {
    b"\x00\x00\xfe\xff": "UTF-32",
    b"\xff\xfe\x00\x00": "UTF-32",
    b"\xfe\xff": "UTF-16",
    b"\xff\xfe": "UTF-16",
}
_NEWLINE = re.compile(r"\n")


@dataclass
class SourceText:
    """One input: a file or stdin, decoded. ``text`` excludes the BOM."""

    path: str
    text: str
    had_bom: bool = False
    _line_starts: array[int] | None = field(default=None, repr=False)

    @property
    def is_stdin(self) -> bool:
        return self.path == STDIN

    @property
    def display(self) -> str:
        return "<stdin>" if self.is_stdin else self.path

    def position(self, offset: int) -> tuple[int, int]:
        """1-based (line, column) of a character offset."""
        if self._line_starts is None:
            # 8 bytes a line (a list of ints costs 36): big inputs have a million lines
            starts = array("q", [0])
            starts.extend(m.end() for m in _NEWLINE.finditer(self.text))
            self._line_starts = starts
        i = bisect.bisect_right(self._line_starts, offset) - 1
        return i + 1, offset - self._line_starts[i] + 1

    def error(self, message: str, offset: int | None) -> InputError:
        if offset is None:
            return InputError(message, path=self.display)
        line, col = self.position(offset)
        return InputError(message, path=self.display, line=line, column=col)

    def encode(self, text: str) -> bytes:
        data = text.encode("utf-8")
        return _UTF8_BOM + data if self.had_bom else data


def _byte_position(data: bytes, offset: int) -> tuple[int, int]:
    line = data.count(b"\n", 0, offset) + 1
    start = data.rfind(b"\n", 0, offset) + 1
    col = len(data[start:offset].decode("utf-8", errors="replace")) + 1
    return line, col


def decode(path: str, data: bytes, *, max_bytes: int) -> SourceText:
    """Decode UTF-8 (optional BOM); refuse other encodings, NUL bytes, oversize input."""
    display = "<stdin>" if path == STDIN else path
    if len(data) > max_bytes:
        raise InputError(
            f"input is {len(data)} bytes, over the limit of {max_bytes} bytes "
            "(raise it with --max-input-bytes)", path=display)
    for bom, name in _OTHER_BOMS.items():
        if data.startswith(bom):
            raise InputError(f"{name} input is not supported; convert the file to UTF-8",
                             path=display, line=1, column=1)
    had_bom = data.startswith(_UTF8_BOM)
    if had_bom:
        data = data[len(_UTF8_BOM):]
    nul = data.find(b"\x00")
    if nul >= 0:
        line, col = _byte_position(data, nul)
        raise InputError("NUL byte in input; is this a binary or UTF-16 file?",
                         path=display, line=line, column=col)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line, col = _byte_position(data, exc.start)
        raise InputError("invalid UTF-8; manifests must be UTF-8 text",
                         path=display, line=line, column=col) from None
    return SourceText(path=path, text=text, had_bom=had_bom)


def _walk(root: str) -> list[str]:
    found: list[str] = []
    for dirpath, dirnames, filenames in os.walk(root, onerror=_raise_walk_error):
        # Hidden directories (.git, .github, ...) never hold rendered manifests.
        dirnames[:] = [d for d in dirnames if not d.startswith(".")]
        for name in filenames:
            if not name.startswith(".") and name.endswith(MANIFEST_SUFFIXES):
                path = os.path.join(dirpath, name)
                try:
                    regular = stat.S_ISREG(os.stat(path).st_mode)
                except OSError:
                    regular = True  # broken link or loop: reading it reports the problem
                if not regular:  # a FIFO would block the run forever
                    raise InputError("not a regular file (a FIFO, socket or device?); "
                                     "name it explicitly or remove it from the tree",
                                     path=path)
                found.append(path)
    return sorted(found)


def _raise_walk_error(exc: OSError) -> None:
    raise InputError(f"cannot read directory: {exc.strerror}", path=exc.filename)


def expand_paths(paths: Sequence[str]) -> list[str]:
    """Files as given, directories walked recursively (sorted), '-' for stdin."""
    if not paths:
        return [STDIN]
    if STDIN in paths and len(paths) > 1:
        raise UsageError("'-' (stdin) cannot be combined with other paths")
    out: list[str] = []
    seen: set[str] = set()
    for p in paths:
        if p == STDIN:
            out.append(p)
            continue
        if os.path.isdir(p):
            files = _walk(p)
        elif os.path.lexists(p):
            files = [p]
        else:
            raise InputError("no such file or directory", path=p)
        for f in files:
            key = os.path.realpath(f)
            if key not in seen:  # the same file named twice is read once
                seen.add(key)
                out.append(f)
    return out


_READ_STEP = 1 << 20


def read_limited(stream: BinaryIO, max_bytes: int, display: str) -> bytes:
    """Read to the end, or stop with an error as soon as more than ``max_bytes`` came:
    memory stays bounded by the limit, whatever is piped in."""
    buf = bytearray()
    while True:
        piece = stream.read(min(_READ_STEP, max_bytes + 1 - len(buf)))
        if not piece:
            return bytes(buf)
        buf += piece
        if len(buf) > max_bytes:
            raise InputError(f"input is over the limit of {max_bytes} bytes "
                             "(raise it with --max-input-bytes)", path=display)


def read_sources(paths: Iterable[str], *, max_bytes: int) -> list[SourceText]:
    sources = []
    for path in paths:
        if path == STDIN:
            data = read_limited(sys.stdin.buffer, max_bytes, "<stdin>")
        else:
            try:
                with open(path, "rb") as fh:
                    size = os.fstat(fh.fileno()).st_size
                    if size > max_bytes:
                        raise InputError(f"input is {size} bytes, over the limit of "
                                         f"{max_bytes} bytes (raise it with "
                                         "--max-input-bytes)", path=path)
                    data = read_limited(fh, max_bytes, path)
            except OSError as exc:
                raise InputError(f"cannot read file: {exc.strerror}", path=path) from None
        sources.append(decode(path, data, max_bytes=max_bytes))
    return sources

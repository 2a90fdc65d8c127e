"""Reading inputs: bytes -> SourceText (encoding, BOM), with a size limit."""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import TYPE_CHECKING, BinaryIO

from cmhash.errors import InputError, printable
from cmhash.record import Record

if TYPE_CHECKING:
    from array import array

STDIN = "-"
_UTF8_BOM = b"\xef\xbb\xbf"
_OTHER_BOMS = {
    b"\x00\x00\xfe\xff": "UTF-32",
    b"\xff\xfe\x00\x00": "UTF-32",
    b"\xfe\xff": "UTF-16",
    b"\xff\xfe": "UTF-16",
}


class SourceText(Record):
    """One input: a file or stdin, decoded. ``text`` excludes the BOM."""

    __slots__ = ("_line_starts", "had_bom", "helm_output", "path", "text")

    def __init__(self, path: str, text: str, had_bom: bool = False) -> None:
        self.path = path
        self.text = text
        self.had_bom = had_bom
        self._line_starts: LineIndex | None = None
        self.helm_output: bool | None = None  # helm.is_helm_source

    def __repr__(self) -> str:
        return f"SourceText(path={self.path!r}, {len(self.text)} characters)"

    @property
    def is_stdin(self) -> bool:
        return self.path == STDIN

    @property
    def display(self) -> str:
        return "<stdin>" if self.is_stdin else printable(self.path)

    def lines(self, offsets: Iterable[int]) -> dict[int, int]:
        """The 1-based line of each offset (at least 0), in one pass over the text in
        offset order: ``position`` for many offsets at once (explain's thousands), str.count
        between them (a C copy of this pass saved nothing measurable: ARCHITECTURE.md)."""
        out = {}
        line, at = 1, 0
        for offset in sorted(set(offsets)):
            line += self.text.count("\n", at, offset)
            out[offset] = line
            at = offset
        return out

    def position(self, offset: int) -> tuple[int, int]:
        """1-based (line, column) of a character offset."""
        index = self._line_starts
        if index is None:
            index = self._line_starts = _line_index(self.text)
        lines, last = index
        text = self.text
        block = min(offset // _BLOCK, len(lines) - 1)
        start = block * _BLOCK
        line = lines[block] + text.count("\n", start, offset)
        nl = text.rfind("\n", start, offset)
        line_start = (nl if nl >= 0 else last[block]) + 1
        return line + 1, offset - line_start + 1

    def error(self, message: str, offset: int | None) -> InputError:
        if offset is None:
            return InputError(message, path=self.display)
        line, col = self.position(offset)
        return InputError(message, path=self.display, line=line, column=col)

    def encode(self, text: str) -> bytes:
        data = text.encode("utf-8")
        return _UTF8_BOM + data if self.had_bom else data


_BLOCK = 4096  # characters per entry of a SourceText's line index
LineIndex = tuple["array[int]", "array[int]"]


def _line_index(text: str) -> LineIndex:
    """Per block of ``_BLOCK`` characters: how many line breaks come before it, and where
    the last of them is (-1: none). A few thousand entries even for a big input, counted
    by str.count and str.rfind (C); position() then counts within one block. (A list of
    every line start cost a Python step per line: most of explain's line numbers.)"""
    from array import array  # (a position asked for: findings, errors, explain)

    lines, last = array("q"), array("q")
    count, prev = 0, -1
    for start in range(0, len(text) + 1, _BLOCK):
        lines.append(count)
        last.append(prev)
        end = start + _BLOCK
        count += text.count("\n", start, end)
        nl = text.rfind("\n", start, end)
        if nl >= 0:
            prev = nl
    return lines, last


def newline_at(text: str, pos: int = 0, default: str = "\n") -> str:
    """The newline of the line holding ``pos`` (its first line by default): ``\r\n`` or
    ``\n``; ``default`` when that line has none (the last line, no final newline).
    The one rule for every line cmhash writes."""
    nl = text.find("\n", pos)
    if nl < 0:
        return default
    return "\r\n" if nl > 0 and text[nl - 1] == "\r" else "\n"


def _byte_error(message: str, display: str, data: bytes, offset: int) -> InputError:
    """``message`` about the byte at ``offset`` of ``data``, at its line and column."""
    line = data.count(b"\n", 0, offset) + 1
    start = data.rfind(b"\n", 0, offset) + 1
    col = len(data[start:offset].decode("utf-8", errors="replace")) + 1
    return InputError(message, path=display, line=line, column=col)


def decode(path: str, data: bytes, *, max_bytes: int) -> SourceText:
    """Decode UTF-8 (optional BOM); refuse other encodings, NUL bytes, oversize input."""
    display = "<stdin>" if path == STDIN else path
    if len(data) > max_bytes:
        raise InputError(
            f"input is {len(data)} bytes, over the limit of {max_bytes} bytes "
            "(raise it with --max-input-bytes)",
            path=display,
        )
    for bom, name in _OTHER_BOMS.items():
        if data.startswith(bom):
            raise InputError(
                f"{name} input is not supported; convert the file to UTF-8",
                path=display,
                line=1,
                column=1,
            )
    had_bom = data.startswith(_UTF8_BOM)
    if had_bom:
        data = data[len(_UTF8_BOM) :]
    nul = data.find(b"\x00")
    if nul >= 0:
        raise _byte_error("NUL byte in input; is this a binary or UTF-16 file?", display, data, nul)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        message = "invalid UTF-8; manifests must be UTF-8 text"
        raise _byte_error(message, display, data, exc.start) from None
    return SourceText(path=path, text=text, had_bom=had_bom)


_READ_STEP = 1 << 20


def read_limited(stream: BinaryIO, max_bytes: int, display: str, head: bytes = b"") -> bytes:
    """Read to the end, or stop with an error as soon as more than ``max_bytes`` came:
    memory stays bounded by the limit, whatever is piped in. (``head``: read already.)"""
    buf = bytearray(head)
    while len(buf) <= max_bytes:
        piece = stream.read(min(_READ_STEP, max_bytes + 1 - len(buf)))
        if not piece:
            return bytes(buf)
        buf += piece
    raise InputError(
        f"input is over the limit of {max_bytes} bytes (raise it with --max-input-bytes)",
        path=display,
    )


def read_file(path: str, max_bytes: int) -> bytes:
    try:
        with open(path, "rb") as fh:
            size = os.fstat(fh.fileno()).st_size
            if size > max_bytes:
                raise InputError(
                    f"input is {size} bytes, over the limit of {max_bytes} bytes "
                    "(raise it with --max-input-bytes)",
                    path=path,
                )
            # a regular file in one read of its size, so no copy; one that grew since
            # opening is read on, within the limit
            head = fh.read(size) if size else b""  # (size <= max_bytes: checked above)
            if head:
                more = fh.read(1) if len(head) == size else b""
                if not more:
                    return head
                head += more
            return read_limited(fh, max_bytes, path, head)
    except OSError as exc:
        raise InputError(f"cannot read file: {exc.strerror}", path=path) from None

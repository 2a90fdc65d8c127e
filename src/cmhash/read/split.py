"""Split a YAML stream into document chunks by its marker lines, without parsing.

A ``---`` line always starts a document and a ``...`` line always ends one (a
marker at column 0 is never content, not even inside a block scalar), so each
chunk can be parsed alone and skipped when irrelevant. A ``%`` line is a directive
only where YAML allows one: at the stream start or after a ``...``, before any content
of the next document; anywhere else it is text (e.g. a line of a quoted multi-line
scalar), and the splitter never cuts inside a scalar. Directives stay with the
document they introduce. Chunks cover the text exactly: joining their slices gives
back every byte.
"""

# No "from __future__ import annotations": typing compiles string NamedTuple fields at import

import functools
import itertools
import re
from collections.abc import Callable, Iterable, Iterator
from typing import NamedTuple

from cmhash.native import cext

# A marker: '---' or '...' followed by a blank, a line break or the end of the text; or
# '%'. At the text's start, or matched from the line break before it: a pattern that
# starts with a literal lets the regex engine jump from line break to line break instead
# of trying every character (most of the split's time on a big stream). Compiled by re's
# cache on first use: with the C scan (native/_ctree.c) a run never needs them.
_FIRST = r"(?:---|\.\.\.)(?=[ \t\r\n]|\Z)|%"
_MARKER = r"\n(?:(?:---|\.\.\.)(?=[ \t\r\n]|\Z)|%)"


class Chunk(NamedTuple):
    start: int
    end: int


_chunk = functools.partial(tuple.__new__, Chunk)  # Chunk((start, end)) with no Python frame


def only_comments(text: str) -> bool:
    """Whether ``text`` has nothing but blank lines and comments."""
    for line in text.splitlines():
        s = line.strip()
        if s and not s.startswith("#"):
            return False
    return True


def _py_markers(text: str) -> Iterator[int]:
    """Where each marker line starts, in order. (The reference for native/_ctree.c's scan
    in ``cuts``.)"""
    if re.match(_FIRST, text):
        yield 0
    for m in re.finditer(_MARKER, text):
        yield m.start() + 1


_markers: Callable[[str], Iterable[int]] = _py_markers  # (a C copy saved under 1 %)


def _py_cuts(text: str) -> list[int]:
    """Where each document starts, then the text's length: strictly increasing, so
    consecutive cuts are the chunks. (``cuts``: this, or the same in C from
    native/_ctree.c.)"""
    out = [0]

    def cut(at: int) -> None:
        if out[-1] != at:  # (cuts never go back: only an equal one is left out)
            out.append(at)

    prefix_from: int | None = 0  # where a document prefix (directives allowed) began
    directive_open = False
    for start in _markers(text):
        tok = text[start]
        if tok == "%":
            if directive_open:
                continue  # another directive of the same document (%TAG after %YAML)
            if prefix_from is not None and only_comments(text[prefix_from:start]):
                cut(start)
                directive_open = True
            else:
                prefix_from = None  # content came first: this '%' is text, and so are later
            continue
        if tok == "-":
            if not directive_open:
                cut(start)
            directive_open = False
            prefix_from = None
        else:  # "..." ends the document: the cut goes after its line
            nl = text.find("\n", start + 3)
            end = len(text) if nl < 0 else nl + 1
            cut(end)
            prefix_from = end
            directive_open = False
    cut(len(text))
    return out


_C_CUTS: Callable[[str, Callable[[str], bool]], list[int]] | None = cext.function("cuts")


def cuts(text: str) -> list[int]:
    """Where each document of ``text`` starts, then its length (``chunk`` makes document
    ``i``'s Chunk): what a big input's batches are planned on, without a Chunk each."""
    return _py_cuts(text) if _C_CUTS is None else _C_CUTS(text, only_comments)


def chunk(cut_list: list[int], i: int) -> Chunk:
    """Document ``i``'s Chunk, from its text's ``cuts``."""
    return _chunk((cut_list[i], cut_list[i + 1]))


def split_chunks(text: str) -> list[Chunk]:
    return [_chunk(pair) for pair in itertools.pairwise(cuts(text))]

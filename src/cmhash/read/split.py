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

from __future__ import annotations

import itertools
import re
from typing import NamedTuple

_MARKER = re.compile(r"^(?:---|\.\.\.)(?=[ \t\r\n]|$)|^%", re.MULTILINE)


class Chunk(NamedTuple):
    start: int
    end: int


def only_comments(text: str) -> bool:
    """Whether ``text`` has nothing but blank lines and comments."""
    for line in text.splitlines():
        s = line.strip()
        if s and not s.startswith("#"):
            return False
    return True


def split_chunks(text: str) -> list[Chunk]:
    cuts = [0]
    prefix_from: int | None = 0  # where a document prefix (directives allowed) began
    directive_open = False
    for m in _MARKER.finditer(text):
        tok = text[m.start()]
        if tok == "%":
            if directive_open:
                continue  # another directive of the same document (%TAG after %YAML)
            if prefix_from is not None and only_comments(text[prefix_from : m.start()]):
                cuts.append(m.start())
                directive_open = True
            else:
                prefix_from = None  # content came first: this '%' is text, and so are later
            continue
        if tok == "-":
            if not directive_open:
                cuts.append(m.start())
            directive_open = False
            prefix_from = None
        else:  # "..." ends the document: the cut goes after its line
            nl = text.find("\n", m.end())
            end = len(text) if nl < 0 else nl + 1
            cuts.append(end)
            prefix_from = end
            directive_open = False
    cuts.append(len(text))
    return [Chunk(a, b) for a, b in itertools.pairwise(cuts) if b > a]

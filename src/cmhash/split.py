"""Split a YAML stream into document chunks by its marker lines, without parsing.

A ``---`` line always starts a document and a ``...`` line always ends one (a
marker at column 0 is never content, not even inside a block scalar), so each
chunk can be parsed alone and skipped when irrelevant. Directives (``%YAML``)
stay with the document they introduce. Chunks cover the text exactly: joining
their slices gives back every byte.
"""

from __future__ import annotations

import re
from typing import NamedTuple

_MARKER = re.compile(r"^(?:---|\.\.\.)(?=[ \t\r\n]|$)|^%", re.MULTILINE)


class Chunk(NamedTuple):
    start: int
    end: int


def split_chunks(text: str) -> list[Chunk]:
    cuts = [0]
    after_end = True  # at stream start, a directive may begin a document
    directive_open = False
    for m in _MARKER.finditer(text):
        tok = text[m.start()]
        if tok == "%":
            if after_end and not directive_open:
                cuts.append(m.start())
                directive_open = True
            continue
        if tok == "-":
            if not directive_open:
                cuts.append(m.start())
            directive_open = False
            after_end = False
        else:  # "..." ends the document: the cut goes after its line
            nl = text.find("\n", m.end())
            cuts.append(len(text) if nl < 0 else nl + 1)
            after_end = True
            directive_open = False
    cuts.append(len(text))
    chunks = []
    for a, b in zip(cuts, cuts[1:]):
        if b > a:
            chunks.append(Chunk(a, b))
    return chunks

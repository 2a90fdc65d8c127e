"""Split a YAML stream into document chunks by its marker lines, without parsing.

A ``---`` line always starts a document and a ``...`` line always ends one (a marker at
column 0 is never content, not even inside a block scalar), so each chunk can be parsed
alone and skipped when irrelevant. A ``%`` line is a directive only where YAML allows
one: at the stream start or after a ``...``, before any content of the next document;
anywhere else it is text (a line of a quoted multi-line scalar: never cut). Directives
stay with the document they introduce. Chunks cover the text exactly: joining their
slices gives back every byte.

And, on the text alone, the same for both parsers: which chunks need a parser at all,
which characters the two parsers would read differently, and which chunks may hold a
Secret (whose text no message may quote).
"""

# No "from __future__ import annotations": typing compiles string NamedTuple fields at import

import functools
import itertools
import re
from collections.abc import Callable, Iterable, Iterator
from typing import NamedTuple

from cmhash.errors import NodeError
from cmhash.knowledge.kinds import KindTable
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


def only_comments(text: str, *, markers: bool = False) -> bool:
    """Whether ``text`` has nothing but blank lines and comments (``markers``: and
    document markers, alone or followed by a comment)."""
    for line in text.splitlines():
        s = line.strip()
        if markers and (s in ("---", "...") or s.startswith(("--- ", "... "))):
            s = s[4:].lstrip()
        if s and not s.startswith("#"):
            return False
    return True


def _py_markers(text: str) -> Iterator[int]:
    """Where each marker line starts, in order (native/_ctree.c's scan in ``cuts``)."""
    if re.match(_FIRST, text):
        yield 0
    for m in re.finditer(_MARKER, text):
        yield m.start() + 1


_markers: Callable[[str], Iterable[int]] = _py_markers  # (a C copy saved under 1 %)


def _py_cuts(text: str) -> list[int]:
    """Where each document starts, then the text's length: strictly increasing, so
    consecutive cuts are the chunks (``cuts``: this, or its copy in native/_ctree.c)."""
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


_VALUE_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789./-")


def _py_top_level(text: str, key: str) -> list[str] | None:
    """Values of column-0 ``key:`` lines; None if one is not a simple (optionally quoted)
    value with at most a trailing comment (native/_ctree.c's copy reads ASCII text)."""
    head = key + ":"
    needle = "\n" + head
    found = []
    pos = 0 if text.startswith(head) else text.find(needle)
    while pos >= 0:
        start = pos + (len(head) if pos == 0 and text.startswith(head) else len(needle))
        eol = text.find("\n", start)
        line = text[start : len(text) if eol < 0 else eol]
        value = line.split("#", 1)[0].strip() if " #" in line or "\t#" in line else line.strip()
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
            value = value[1:-1]
        if not value or not _VALUE_CHARS.issuperset(value):
            return None
        found.append(value)
        pos = text.find(needle, start)
    return found


# native/_ctree.c's top_level: _py_top_level over ASCII text (NotImplemented for the rest)
_C_TOP_LEVEL: Callable[[str, str], list[str] | None] | None = cext.function("top_level")


def _top_level(text: str, key: str) -> list[str] | None:
    if _C_TOP_LEVEL is not None:
        found = _C_TOP_LEVEL(text, key)
        if found is not NotImplemented:
            return found
    return _py_top_level(text, key)


def relevant_kind(text: str, table: KindTable) -> bool | None:
    """True/False when the top-level kind is certain from the text alone, None when unsure."""
    # (the C scan straight away for ASCII text, the common case: two calls less a chunk)
    top = _C_TOP_LEVEL if _C_TOP_LEVEL is not None and text.isascii() else _top_level
    kinds = top(text, "kind")
    if not kinds or len(kinds) != 1:
        return None
    apis = top(text, "apiVersion")
    if not apis or len(apis) != 1:
        return None
    return table.reads(apis[0], kinds[0])


def classify(text: str, table: KindTable) -> bool | None:
    """Whether a chunk must be parsed: False for a document that is certainly irrelevant
    (passed through unread by both parsers), None for one with no content at all."""
    rel = relevant_kind(text, table)
    if rel is False:
        return False
    if rel is None and only_comments(text, markers=True):
        return None
    return True


# Characters the two parsers read differently (libyaml and Kubernetes' go-yaml take NEL,
# LS and PS as line breaks, ruamel does not; libyaml refuses a BOM that starts a later
# document): refused in the documents cmhash reads, so both parsers always agree. (Compiled
# by re's cache on first use: a text that is not ASCII.)
_AMBIGUOUS = "[\ufeff\x85\u2028\u2029]"
_AMBIGUOUS_NAMES = {
    "\ufeff": ("U+FEFF (a byte order mark)", "\\uFEFF"),
    "\x85": ("U+0085 (NEL)", "\\N"),
    "\u2028": ("U+2028 (LS)", "\\L"),
    "\u2029": ("U+2029 (PS)", "\\P"),
}


def refuse_ambiguous(text: str, base: int) -> None:
    if text.isascii():  # (O(1) on a str; all four are non-ASCII)
        return
    m = re.search(_AMBIGUOUS, text)
    if m is not None:
        name, escape = _AMBIGUOUS_NAMES[m.group()]
        raise NodeError(
            f"character {name} in a manifest: YAML parsers disagree on what it means; "
            f"remove it, or write it as {escape} in a double-quoted string",
            base + m.start(),
        )


# a tag where a node may start: after the text's start, a blank or a flow indicator
_TAG_START = r"(?:\A|[\s\ufeff\[\]{},:])!"


def may_hold_secret(text: str) -> bool:
    """Whether a document's text could hold a Secret, conservatively, on the text alone
    (its messages then quote nothing of it). YAML writes the kind ``Secret`` only with
    the word itself (plain, quoted, tagged ``!!str Secret``, a block scalar, an anchor a
    ``kind: *alias`` repeats, under a key spelled otherwise), with escapes, which need a
    backslash (``"\\x53ecret"``, ``"\\u0053ecret"``, ``"Secr\\`` and a line break), or
    with the one tag that decodes text into other text, ``!!binary`` (``U2VjcmV0``),
    however it is spelled: its name, or a ``%`` (``!<tag:yaml.org,2002:%62inary>``, a
    ``%TAG`` handle), and a ``!`` where a node starts. The YAML decoders kubectl and cmhash
    use read each of those as ``Secret``. (Another tag, ``!vault``, is no Secret's spelling:
    its message may name it.)"""
    return (
        "Secret" in text
        or "\\" in text
        or (
            ("binary" in text or "%" in text)
            and "!" in text
            and re.search(_TAG_START, text) is not None
        )
    )

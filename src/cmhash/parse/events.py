"""Parsing: YAML text -> the yamltree of each document, with character offsets.

Two event sources (backends.py) feed the same builder (builder.py):

* ``exact``: ruamel.yaml's pure-Python parser, the reference path;
* ``fast``: libyaml through PyYAML's C binding (about 50x faster), in front of it the
  C tree builder (native/_ctree.c) for the common case.

Both report character offsets into the chunk, so the rest of cmhash works on one tree
type and a differential test can compare the two paths. This module picks a run's
backend (``backend``), routes a chunk to the parser that reads it as Kubernetes does
(``route``, ``parse_chunk``: what libyaml misreads or refuses goes to the reference),
retries ruamel past a separating tab and turns the parsers' errors into NodeErrors.

What the parsers' errors become: a NodeError with a message and a place a user can act
on (``syntax_error``: an unclosed quote or bracket where it opens, a tab's hint, what
the parser quoted left out of the public text; ``control_character``), and the tab that
ruamel refuses between tokens where libyaml and Kubernetes read a separator
(``separating_tab``, read again as a space: ``spaced``).
"""

from __future__ import annotations

import functools
import re

from cmhash.errors import NodeError
from cmhash.parse import libyaml
from cmhash.parse.backends import Backend, exact_backend, fast_backend
from cmhash.parse.builder import Misread, Roots, build

_QUOTED = r"'[^']*'|\"[^\"]*\""  # (compiled by re's cache on an error)


def _at_end(text: str, index: int) -> bool:
    """Whether a parser's error mark is at the end of the input (past its last
    non-blank character): the construct it was reading never ended."""
    return index >= len(text.rstrip(" \t\r\n"))


# ruamel's scanner takes only spaces between tokens on a line; YAML's s-separate-in-line,
# libyaml and Kubernetes' parser (go-yaml) take tabs too: ``name:\tvalue``, ``value\t# note``.
# A tab where ruamel looked for the next token, after the line's indentation, is such a
# separator: the reference reads it as a space (one character for one: the offsets stay),
# so that both parsers read the same documents. A bounded number per chunk.
_TAB_PROBLEM = "found character '\\t' that cannot start any token"
TAB_RETRIES = 64


def separating_tab(text: str, exc: BaseException) -> int | None:
    """Where ruamel's error ``exc`` stopped at a tab that separates tokens, or None."""
    mark = getattr(exc, "problem_mark", None)
    if mark is None or getattr(exc, "problem", None) != _TAB_PROBLEM:
        return None
    index: int = mark.index
    line_start = text.rfind("\n", 0, index) + 1
    if text[index : index + 1] != "\t" or not text[line_start:index].strip(" \t"):
        return None  # indentation: refused, as by every parser
    return index


def spaced(text: str, index: int) -> str:
    """``text`` with the separating tab at ``index`` read as a space."""
    return f"{text[:index]} {text[index + 1 :]}"


def syntax_error(
    exc: BaseException, text: str, base: int, error: type[NodeError] = NodeError
) -> NodeError:
    """The parser's error ``exc`` on ``text`` (offsets shifted by ``base``) as ``error``."""
    mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
    problem = getattr(exc, "problem", None) or "invalid YAML"
    # ruamel writes a flow token's id as a tuple: "but found ('{',)"
    problem = re.sub(r"\('([^']*)',\)", r"'\1'", problem)
    context = getattr(exc, "context", None)
    msg = f"YAML syntax error: {problem}" + (f" ({context})" if context else "")
    opened = getattr(exc, "context_mark", None)
    if context and opened is not None and mark is not None and _at_end(text, mark.index):
        # an unclosed quote, [ or {: where it opens, not the end of the input
        mark = opened
        what = context.removeprefix("while scanning ").removeprefix("while parsing ")
        msg = f"YAML syntax error: {what} that starts here is never closed ({problem})"
    index = mark.index if mark is not None else 0
    tab = _tab_hint(text, index)
    # parsers quote what they found ("found undefined alias 'x'"): never in a Secret
    public = re.sub(_QUOTED, "'…'", msg)
    return error(msg + tab, base + index, public=public + tab)


def control_character(text: str, base: int) -> NodeError:
    """The parser's reader refused a character of ``text``: which one, and where."""
    bad = _non_printable().search(text)
    index = bad.start() if bad else 0
    char = f"U+{ord(bad.group()):04X}" if bad else "a character"
    return NodeError(
        f"control character {char} is not allowed in YAML; remove it, or "
        "write it as an escape in a double-quoted string",
        base + index,
    )


def _tab_hint(text: str, index: int) -> str:
    """What to do about a tab the parser stopped at: in the indentation, or after
    something on its line (``k: v<TAB>``, ``k: a<TAB>b``: parse/libyaml.py)."""
    if text[index : index + 1] != "\t":
        return ""
    if text[text.rfind("\n", 0, index) + 1 : index].strip(" \t"):
        return "; write a space instead of the tab (tabs are not read as spaces here)"
    return "; YAML does not allow tabs for indentation"


# What YAML 1.1 (5.1) allows in a stream; libyaml and ruamel refuse the rest. Compiled on
# first use only: this pattern alone takes 3-5 ms to compile, and only errors need it.
@functools.cache
def _non_printable() -> re.Pattern[str]:
    return re.compile("[^\x09\x0a\x0d\x20-\x7e\x85\xa0-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


_BACKENDS: dict[str, Backend] = {}


def ctree_available() -> bool:
    """Whether the fast backend builds its trees in C (native/_ctree.c)."""
    return backend("fast").ctree is not None


def backend(name: str) -> Backend:
    """``fast`` (libyaml; falls back to ``exact`` when libyaml is missing) or ``exact``."""
    b = _BACKENDS.get(name)
    if b is None:
        b = _BACKENDS[name] = (fast_backend() if name == "fast" else None) or exact_backend()
    return b


def route(text: str, be: Backend) -> Backend:
    """The backend that reads ``text``: ``be``, or the reference parser (``exact``) for a
    text that libyaml's releases read differently (parse/libyaml.py)."""
    if be.name == "fast" and libyaml.misread(text):
        return backend("exact")
    return be


class _LibyamlLimit(Exception):
    """libyaml's own nesting limit came before ours (parse/libyaml.py)."""


class _Refused(NodeError):
    """The fast path's parser refused the text (parse_chunk asks the reference)."""


def parse_chunk(text: str, base: int, be: Backend) -> Roots:
    """Parse one chunk; return its document root nodes (offsets shifted by ``base``)."""
    be = route(text, be)
    if be.ctree is not None:
        built = be.ctree(text, base)
        if built is not None:
            return Roots(built)
    if be.name != "fast":
        return _parse(text, base, be)
    try:
        return _parse_fast(text, base, be)
    except Misread:
        # a single-pair mapping in a flow sequence (``[[]:]``): the reference's reading
        # or refusal, with its message, as on the exact path
        return _exactly(text, base)
    except _Refused:
        pass
    # what libyaml refuses, the reference may read (``{:}``, ``[:a]``: a ``:`` next to a
    # flow indicator, YAML 1.2): its reading, so that both parsers agree; refused by both,
    # the reference's message and place, as on the exact path (libyaml words the same
    # error otherwise, and may place it elsewhere: ``: z`` then `` b: y`` is at the first
    # line for libyaml, the second for ruamel). Errors only: no cost on a valid chunk.
    return _exactly(text, base)


def _exactly(text: str, base: int) -> Roots:
    """The fast path's chunk read by the reference parser; the self-check of its edit
    reads with it too (``Roots.exact``)."""
    roots = _parse(text, base, backend("exact"))
    roots.exact = True
    return roots


def _parse_fast(text: str, base: int, be: Backend) -> Roots:
    try:
        return _parse(text, base, be)
    except _LibyamlLimit:  # cmhash's limits decide, whatever libyaml is installed
        with libyaml.lifted_limit() as lifted:
            if lifted:
                try:
                    return _parse(text, base, be)
                except _LibyamlLimit:
                    pass
        return _parse(text, base, backend("exact"))


def _parse(text: str, base: int, be: Backend) -> Roots:
    """The chunk through the event path; parser errors as NodeError. A tab that ruamel
    refuses between tokens is read again as a space (``separating_tab``), at most
    TAB_RETRIES times."""
    # looked up before the ``try``: a signal that lands while the machinery loads is no
    # parse error, and an ``except`` clause must not load it while that signal propagates
    run, error, reader_error = be.run, be.error, be.reader_error
    retries = TAB_RETRIES if be.name == "exact" else 0
    while True:
        try:
            return build(run(text), base, be, text)
        except error as exc:
            if be.name == "fast" and libyaml.is_limit(exc):
                raise _LibyamlLimit from None
            at = separating_tab(text, exc) if retries else None
            if at is None:
                fail = _Refused if be.name == "fast" else NodeError
                raise syntax_error(exc, text, base, fail) from None
        except reader_error:
            raise control_character(text, base) from None
        text = spaced(text, at)
        retries -= 1

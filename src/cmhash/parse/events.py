"""Parsing: YAML text -> the yamltree of each document, with character offsets.

Two event sources (backends.py) feed the same builder (builder.py):

* ``exact``: ruamel.yaml's pure-Python parser, the reference path;
* ``fast``: libyaml through PyYAML's C binding (about 50x faster), in front of it the
  C tree builder (native/_ctree.c) for the common case.

Both report character offsets into the chunk, so the rest of cmhash works on one tree
type and a differential test can compare the two paths. This module picks a run's
backend (``backend``), routes a chunk to the parser that reads it as Kubernetes does
(``route``, ``parse_chunk``: what libyaml misreads or refuses goes to the reference),
retries ruamel past a separating tab and turns the parsers' errors into NodeErrors
(syntax.py).
"""

from __future__ import annotations

from cmhash.errors import NodeError
from cmhash.parse import libyaml
from cmhash.parse.backends import Backend, exact_backend, fast_backend
from cmhash.parse.builder import Misread, Roots, build
from cmhash.parse.syntax import (
    TAB_RETRIES,
    control_character,
    separating_tab,
    spaced,
    syntax_error,
)

_BACKENDS: dict[str, Backend] = {}


def ctree_available() -> bool:
    """Whether the fast backend builds its trees in C (native/_ctree.c)."""
    return backend("fast").ctree is not None


def backend(name: str) -> Backend:
    """``fast`` (libyaml; falls back to ``exact`` when libyaml is missing) or ``exact``."""
    b = _BACKENDS.get(name)
    if b is None:
        b = fast_backend() if name == "fast" else None
        if b is None:
            b = exact_backend()
        _BACKENDS[name] = b
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


class _SeparatingTab(Exception):
    def __init__(self, index: int) -> None:
        self.index = index


def _parse(text: str, base: int, be: Backend) -> Roots:
    """The chunk through the event path; parser errors as NodeError."""
    for _ in range(TAB_RETRIES):
        try:
            return _parse_once(text, base, be, be.name == "exact")
        except _SeparatingTab as tab:
            text = spaced(text, tab.index)
    return _parse_once(text, base, be, False)


def _parse_once(text: str, base: int, be: Backend, tabs: bool) -> Roots:
    """``tabs``: a separating tab raises _SeparatingTab (ruamel's, read again as a space)."""
    try:
        return build(be.run(text), base, be, text)
    except be.error as exc:
        if be.name == "fast" and libyaml.is_limit(exc):
            raise _LibyamlLimit from None
        if tabs and (at := separating_tab(text, exc)) is not None:
            raise _SeparatingTab(at) from None
        raise syntax_error(exc, text, base, _Refused if be.name == "fast" else NodeError) from None
    except be.reader_error:
        raise control_character(text, base) from None

"""Where libyaml reads YAML otherwise than the reference parser (ruamel) or than another
libyaml release, and how cmhash reads the same YAML on every path whatever libyaml is
installed: the system's, which ``native/_ctree.c`` links, or the one PyYAML's wheel
bundles (0.2.5 in PyYAML 6.0.3, 0.2.6 in 6.0.4). Found by running libyaml 0.2.5, 0.2.6
and ruamel over generated flow texts and comparing their events
(``tests/test_libyaml.py`` holds the generator):

* **an explicit key ``?`` in a flow sequence followed by ``]``, ``,`` or ``:``**:
  libyaml's ``yaml_parser_parse_flow_sequence_entry_mapping_key`` (``src/parser.c``)
  skips that token. 0.2.5 refuses ``[ ? ]`` and takes ``[ ? ] ]`` (exit 0 with a checksum
  where the other paths exit 2); 0.2.6 fixed the ``]`` (commits 588eabf, 840b65c) but
  still takes ``[? :]`` and ``[? , a]`` otherwise than ruamel. :func:`misread` finds
  these on the text alone, conservatively (not inside a plain scalar such as ``(?:``,
  but inside quotes too), and such a chunk is read by the reference parser on every
  path, the self-check included: a false match costs one chunk read in Python (none of
  the 801 documents of the corpus matches); the test costs a ``?`` search per chunk.
* **a ``:`` right after a JSON-like key in a flow sequence** (``[[]:]``, ``[{}:a]``,
  ``["a":]``, ``['a':"b"]``, ``[?"a":]``): libyaml takes any ``:`` in flow context as a
  value indicator (``src/scanner.c`` 968-970 at libyaml 840b65c,
  ``yaml_parser_fetch_next_token``), ruamel only one followed by a blank inside ``[...]``
  (``scanner.py`` 757-760 in ruamel.yaml 0.19.1, ``check_value``) and refuses
  these. Every libyaml reading of them is a single-pair mapping inside a flow sequence,
  which no text test finds cheaply (``":`` is everywhere in JSON), but the events do:
  such a mapping starts at its key or at a ``?``, not at a ``{`` (``src/parser.c``
  1015-1018, ``yaml_parser_parse_flow_sequence_entry``). :func:`single_pair` tells, in
  the C tree builder (which then hands the chunk back) and on the event path, on flow
  mappings only, and the chunk is read by the reference parser: its reading or its
  refusal and message, as on the exact path. (``[a: b]`` itself reads alike; it is rare
  enough in manifests to go to the reference too.)
* **a tab between tokens or inside a plain scalar**: libyaml skips a tab wherever a
  simple key cannot start (``src/scanner.c`` 1946, ``yaml_parser_scan_to_next_token``:
  after a scalar, ``]``, an anchor: ``k: v<TAB>``, ``k: [a]<TAB>``) and keeps one inside
  a plain scalar (``k: a<TAB>b``, ``[a<TAB>b]``); ruamel skips tabs between tokens in
  flow context only and ends a plain scalar at a tab (``scanner.py`` 830,
  ``scan_to_next_token``, and 1589, ``scan_plain_spaces``), refusing the rest ("found
  character '\\t' that cannot start any token"). Which tab is which depends on the
  scanner's state, so :func:`misread` sends every chunk with a tab to the reference
  parser (a ``memchr``: none of the 801 corpus documents holds one; a tab inside a
  quoted or block scalar is read alike, only more slowly). There, a tab ruamel refuses
  after the line's indentation is read as a space (``events.separating_tab``), as
  libyaml and Kubernetes read it; one inside a plain scalar becomes a space too.
* **NEL, LINE SEPARATOR, PARAGRAPH SEPARATOR** (U+0085, U+2028, U+2029): line breaks in
  YAML 1.1, which libyaml reads, not in YAML 1.2, which ruamel reads (``reader.py``,
  ``scanner.py``'s ``_THE_END``): ``k: a<U+2028>b`` is refused by libyaml and read by
  ruamel, ``k: a<U+0085>b`` read as ``a b`` by ruamel, and a mutated corpus document
  gave two trees. :func:`misread` sends every chunk with one of them to the reference
  parser (an ASCII text, most of them, is not even searched: ``str.isascii`` is a flag).
* **an anchor or alias name followed by ``:``** (``*x: c``, ``{*x: d}``, ``{&x: b}``),
  or by ``?``, ``%``, ``@`` or a backquote (``*x?``, ``&y-?a``): libyaml's names are
  ``[0-9A-Za-z_-]``, ended by a blank, ``?``, ``:``, ``,``, ``]``, ``}``, ``%``, ``@``
  or a backquote (``src/scanner.c``, ``yaml_parser_scan_anchor``), so ``*x:`` is the
  alias ``x`` then a value indicator, as kubectl's go-yaml reads it; YAML 1.2's names
  take any character but blanks and flow indicators, so ruamel reads the alias ``x:``
  ("undefined alias", or a simple key never closed), ``*x?`` the alias ``x?``.
  :func:`misread` sends a chunk where such a name starts a token to the reference
  parser (a ``find`` from one ``&`` or ``*`` to the next: none of the corpus's
  documents is routed).
* **a ``%YAML`` directive**: ruamel reads the document in the version it names, and its
  YAML 1.1 is neither libyaml's nor its own 1.2 (under ``%YAML 1.1``, ``{? a ? b}`` is a
  plain ``a ? b`` for libyaml, refused by ruamel); ``%YAML 1.0`` or ``1.3``, which
  libyaml refuses, ruamel's version setter asserts on (``backends.ruamel_parts`` turns
  that into libyaml's refusal). :func:`misread` sends a chunk with ``%YAML`` to the
  reference parser (no manifest of the corpus has a directive).
* **what libyaml refuses and ruamel reads** (a ``:`` next to a flow indicator, ``{:}``,
  ``[:a]``: YAML 1.2): the fast path asks the reference parser on a refusal
  (``events.parse_chunk``), so both parsers agree; refused by both, the reference's
  message and place, as on the exact path (libyaml words and may place an error otherwise).
* **nesting**: 0.2.6 stops at its own limit of 1000 levels, counted otherwise than
  ``tree.MAX_DEPTH`` (a block document exactly 1000 levels deep is refused, a flow one
  is not) and with its own message; 0.2.5 has no limit. cmhash's limits decide: on
  libyaml's limit error the chunk is read again with libyaml's limit lifted above ours
  (:func:`lifted_limit`, where PyYAML offers it), else by the reference parser.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from cmhash.parse.tree import MAX_DEPTH

_SKIP = r"(?:\s|\ufeff|#[^\n\r]*(?=[\n\r]|\Z))*"  # what may stand between two tokens
# ``?`` then ``]``, ``,`` or ``:`` (``_key_starts``: where a token may start)
_KEY = r"\?" + _SKIP + r"[\],:]"  # (compiled by re's cache when a text has "?")
_BREAKS = ("\x85", "\u2028", "\u2029")  # line breaks in YAML 1.1 only
# an anchor's or alias's name for libyaml, then a character that ends it there but not in
# YAML 1.2 (after a ``&`` or ``*``: ``_named_colon``)
_NAME_COLON = re.compile(r"[0-9A-Za-z_-]+[:?%@`]")
_TOKEN_END = frozenset(" \t\r\n\x85\u2028\u2029\ufeff[]{},:\"'")
_LIMIT = r"nesting (?:depth|level)"  # (case-insensitive; compiled by re's cache on an error)
# libyaml's scanner reads ahead while a simple key is possible, at most 1024 characters
# (scanner.c, yaml_parser_stale_simple_keys): lifted this far above MAX_DEPTH, libyaml's
# limit cannot come before ours.
LIFTED = MAX_DEPTH + 1024 + 16


def misread(text: str) -> bool:
    """Whether libyaml may read ``text`` otherwise than the reference parser, on the text
    alone (:func:`single_pair` finds the rest on the events)."""
    return (
        "\t" in text
        or (not text.isascii() and any(c in text for c in _BREAKS))
        or "%YAML" in text
        or ("*" in text and _named_colon(text, "*"))  # (most texts have neither sigil)
        or ("&" in text and _named_colon(text, "&"))
        or ("?" in text and any(_key_starts(text, m.start()) for m in re.finditer(_KEY, text)))
    )


def single_pair(text: str, start: int, end: int) -> bool:
    """Whether libyaml opened a flow mapping, marked ``start`` to ``end`` in ``text``,
    without a ``{``: a single-pair mapping in a flow sequence (``[a: b]``, ``[? a]``).
    An implicit one is marked at its key, start and end alike; libyaml's marks do not
    count a leading byte-order mark. (``_ctree.c``'s ``single_pair`` is the same test.)"""
    at = start + (text[:1] == "\ufeff")
    return start == end or text[at : at + 1] != "{"


def _key_starts(text: str, at: int) -> bool:
    """Whether a token may start at ``at``: first, after a blank, a flow indicator, a
    quote, or an anchor or alias name (``*a?``); not inside a plain scalar (``(?:``)."""
    i = at
    while i > 0 and (text[i - 1].isalnum() or text[i - 1] in "-_"):
        i -= 1
    if i < at:
        return i > 0 and text[i - 1] in "&*"
    return at == 0 or text[at - 1] in _TOKEN_END


def _named_colon(text: str, sigil: str) -> bool:
    """Whether an alias (``sigil`` ``*``) or an anchor (``&``) whose name ends at a ``:``
    starts a token: first, or after a blank, a flow indicator or a quote (not ``a*b:``,
    ``?x=1&y:``). A ``find`` from one sigil to the next: a regular expression starting
    with a class would test every character of every chunk."""
    at = text.find(sigil)
    while at >= 0:
        if (at == 0 or text[at - 1] in _TOKEN_END) and _NAME_COLON.match(text, at + 1):
            return True
        at = text.find(sigil, at + 1)
    return False


def is_limit(exc: BaseException) -> bool:
    """Whether a parser error is libyaml's own nesting limit (0.2.6: "exceeded maximum
    nesting depth" from the scanner, "Maximum nesting level reached" from the parser)."""
    problem = str(getattr(exc, "problem", None) or "")
    return re.search(_LIMIT, problem, re.IGNORECASE) is not None


def _pyyaml_limit() -> tuple[Any, Any] | None:
    """PyYAML's getter and setter of its libyaml's limit (PyYAML 6.0.4 and later), or
    None."""
    try:
        from yaml import _yaml
    except ImportError:
        return None
    get = getattr(_yaml, "_get_max_nest_level", None)
    put = getattr(_yaml, "_set_max_nest_level", None)
    return None if get is None or put is None else (get, put)


@contextmanager
def lifted_limit() -> Iterator[bool]:
    """PyYAML's libyaml limit above ours for the block (it is global to the process;
    restored after); yields whether it could be lifted."""
    calls = _pyyaml_limit()
    if calls is None:
        yield False
        return
    get, put = calls
    before = get()
    if before < 0:  # a libyaml without the limit: nothing to lift
        yield False
        return
    put(max(before, LIFTED))
    try:
        yield True
    finally:
        put(before)

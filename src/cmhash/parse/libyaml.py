"""Where libyaml's releases read YAML differently, and how cmhash reads the same YAML
whatever libyaml is installed: the system's, which ``parse/_ctree.c`` links, or the one
PyYAML's wheel bundles (0.2.5 in PyYAML 6.0.3, 0.2.6 in 6.0.4). Found by running both
releases over generated flow and block texts and comparing their events (0.2.5 -> 0.2.6
changed two things in the parser, yaml/libyaml ``src/parser.c`` and ``src/scanner.c``):

* **an explicit key ``?`` in a flow sequence followed by the closing ``]``**: 0.2.5 drops
  that ``]`` (it refuses ``[ ? ]`` and takes ``[ ? ] ]``: exit 0 with a checksum where
  the other paths exit 2); 0.2.6 and ruamel end the sequence there
  (``yaml_parser_parse_flow_sequence_entry_mapping_key``, libyaml commits 588eabf and
  840b65c). :func:`misread` finds the shape on the text alone, conservatively (a ``?``,
  then only blanks, line breaks or comments, then ``]``, quoted or not), and such a chunk
  is read by the reference parser (ruamel) on every path: a false match costs one
  chunk read in Python, and ``?`` next to ``]`` is rare in manifests.
* **nesting**: 0.2.6 stops at its own limit of 1000 levels, counted otherwise than
  ``limits.MAX_DEPTH`` (a block document exactly 1000 levels deep is refused, a flow one
  is not) and with its own message; 0.2.5 has no limit. cmhash's limits decide: on
  libyaml's limit error the chunk is read again with libyaml's limit lifted above ours
  (:func:`lifted_limit`, where PyYAML offers it), else by the reference parser.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from cmhash.parse.limits import MAX_DEPTH

_MISREAD = re.compile(r"\?(?:\s|\ufeff|#[^\n\r]*(?=[\n\r]|\Z))*\]")
_LIMIT = re.compile(r"nesting (?:depth|level)", re.IGNORECASE)
# libyaml's scanner reads ahead while a simple key is possible, at most 1024 characters
# (scanner.c, yaml_parser_stale_simple_keys): lifted this far above MAX_DEPTH, libyaml's
# limit cannot come before ours.
LIFTED = MAX_DEPTH + 1024 + 16


def misread(text: str) -> bool:
    """Whether libyaml's releases may read ``text`` differently (``?`` then ``]``)."""
    return "?" in text and _MISREAD.search(text) is not None


def is_limit(exc: BaseException) -> bool:
    """Whether a parser error is libyaml's own nesting limit (0.2.6: "exceeded maximum
    nesting depth" from the scanner, "Maximum nesting level reached" from the parser)."""
    return _LIMIT.search(str(getattr(exc, "problem", None) or "")) is not None


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

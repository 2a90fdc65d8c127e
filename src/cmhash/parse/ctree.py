"""native/_ctree.c's entry points over our tree, bound for our ``Node`` class and limits
(the extension says whether they are there: native/cext.py): ``build`` (the fast
backend's trees, backends.py), ``check_edit`` (the self-check, edit/verify.py) and
``collect`` (the reference-site walk, analyze/refs.py). Each is None when the extension
was not built or is turned off, and its Python reference does the work."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from cmhash.native import cext
from cmhash.parse.tree import MAP, MAX_DEPTH, MAX_SCALAR, SCALAR, SEQ, Node

KINDS = (SCALAR, SEQ, MAP)  # what the C code reads a node's kind by


def ctree_build() -> Callable[[str, int], list[Node] | None] | None:
    """native/_ctree.c's ``build`` for our Node class and limits: (text, base) -> the
    roots, or None to parse on the event path. None when the extension was not built (no
    C compiler or libyaml headers at install) or ``CMHASH_CTREE=0``."""
    c_build = cext.function("build")
    if c_build is None:
        return None
    return lambda text, base: c_build(text, base, Node, KINDS, MAX_DEPTH, MAX_SCALAR)


CheckEdit = Callable[[Node, str, tuple[str, ...], str, str], bool | None]


@functools.cache
def ctree_check_edit() -> CheckEdit | None:
    """native/_ctree.c's ``check_edit`` for our Node class: (original root, edited text,
    template path, key, value) -> True when the edited text's events are the original
    tree plus our annotation, None when it cannot tell (edit/verify.py). None without
    the extension."""
    c_check = cext.function("check_edit")
    if c_check is None:
        return None
    return lambda old, text, path, key, value: c_check(old, text, Node, KINDS, path, key, value)


Found = list[list[tuple[Node, str]]]  # per reference site: (node, field path)
Collect = Callable[[Node, Any, str, int], Found | None]


@functools.cache
def ctree_collect() -> Collect | None:
    """native/_ctree.c's ``collect`` for our Node class: analyze/refs.py's walk of a trie
    of reference sites, over trees the C builder made (None from it: walk in Python).
    None without the extension."""
    c_collect = cext.function("collect")
    if c_collect is None:
        return None
    return lambda node, trie, field, count: c_collect(node, trie, field, count, Node, KINDS)

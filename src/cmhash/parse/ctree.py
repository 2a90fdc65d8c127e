"""native/_ctree.c's entry points over our tree, bound for our ``Node`` class and limits
(the extension says whether they are there: native/cext.py): ``build`` (the fast
backend's trees, backends.py), ``check_edit`` (the self-check, edit/treecheck.py) and
``collect`` (the reference-site walk, analyze/refs.py). Each is None when the extension
was not built or is turned off, and its Python reference does the work."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from cmhash.native import cext
from cmhash.parse.limits import MAX_DEPTH, MAX_SCALAR
from cmhash.parse.tree import MAP, SCALAR, SEQ, Node


def ctree_build() -> Callable[[str, int], list[Node] | None] | None:
    """native/_ctree.c's ``build`` for our Node class and limits: (text, base) -> the
    roots, or None to parse on the event path. None when the extension was not built (no
    C compiler or libyaml headers at install) or ``CMHASH_CTREE=0``."""
    _ctree = cext.ctree()
    if _ctree is None or cext.off("build"):
        return None
    c_build = _ctree.build
    kinds = (SCALAR, SEQ, MAP)

    def build(text: str, base: int) -> list[Node] | None:
        built: list[Node] | None = c_build(text, base, Node, kinds, MAX_DEPTH, MAX_SCALAR)
        return built

    return build


CheckEdit = Callable[[Node, str, tuple[str, ...], str, str], bool | None]


@functools.cache
def ctree_check_edit() -> CheckEdit | None:
    """native/_ctree.c's ``check_edit`` for our Node class: (original root, edited text,
    template path, key, value) -> True when the edited text's events are the original
    tree plus our annotation, None when it cannot tell (edit/treecheck.py). None without
    the extension."""
    _ctree = cext.ctree()
    if _ctree is None or cext.off("check_edit"):
        return None
    c_check = _ctree.check_edit
    kinds = (SCALAR, SEQ, MAP)

    def check_edit(
        old: Node, text: str, path: tuple[str, ...], key: str, value: str
    ) -> bool | None:
        same: bool | None = c_check(old, text, Node, kinds, path, key, value)
        return same

    return check_edit


Found = list[list[tuple[Node, str]]]  # per reference site: (node, field path)
Collect = Callable[[Node, Any, str, int], Found | None]


@functools.cache
def ctree_collect() -> Collect | None:
    """native/_ctree.c's ``collect`` for our Node class: analyze/refs.py's walk of a trie
    of reference sites, over trees the C builder made (None from it: walk in Python).
    None without the extension."""
    _ctree = cext.ctree()
    if _ctree is None or cext.off("collect"):
        return None
    c_collect = _ctree.collect
    kinds = (SCALAR, SEQ, MAP)

    def collect(node: Node, trie: Any, field: str, count: int) -> Found | None:
        found: Found | None = c_collect(node, trie, field, count, Node, kinds)
        return found

    return collect

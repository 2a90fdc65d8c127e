"""The event builder: one parser's events (backends.py) -> a chunk's document roots
(``Roots``), each node with its character offsets. It enforces the resource bounds
(depth, scalar size, alias expansion: tree.py), refuses tags it cannot interpret and
escapes that name no character, reads a tagged scalar as kubectl does (k8syaml.py: a
``!!binary`` one decoded, any other checked; the non-specific ``!`` kept on a scalar,
where it makes a string), and hands a libyaml single-pair flow mapping to the
reference parser (``Misread``: libyaml.py). ``build`` is the hot loop of the event path
(native/_ctree.c builds the same tree in C for the common case, and hands anything
tagged to it)."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any

from cmhash.errors import NodeError
from cmhash.parse import libyaml
from cmhash.parse.backends import Backend
from cmhash.parse.k8syaml import NON_SPECIFIC, TagError, decode_tagged
from cmhash.parse.tree import ALIAS, MAP, MAX_DEPTH, MAX_SCALAR, SCALAR, SEQ, Node, check_expansion

_STANDARD_TAGS = frozenset(
    f"tag:yaml.org,2002:{t}"
    for t in ("str", "int", "float", "bool", "null", "map", "seq", "binary", "timestamp", "merge")
)


class Roots(list[Node]):
    """A chunk's document roots, plus each (anchored node, alias) pair where an alias
    repeats a node: an edit inside such a node would change the copy too. (No pairs by
    default: ``Roots(nodes)`` is list's own constructor, no Python frame per chunk.)"""

    aliased: Sequence[tuple[Node, Node]] = ()
    exact = False  # read by the reference parser on the fast path (parse_chunk)


class Misread(Exception):
    """libyaml opened a mapping the reference parser may read otherwise
    (``libyaml.single_pair``): parse_chunk asks the reference."""


def _tag_before(text: str, at: int) -> int:
    """The start of the tag before the anchor at ``at`` (``!!str &x``, ``!<tag:...> &x``),
    else ``at``: a verbatim tag, or a shorthand one (no blank, no flow indicator)."""
    end = at
    while end > 0 and text[end - 1] in " \t\r\n":
        end -= 1
    if text[end - 1 : end] == ">":
        i = text.rfind("!<", 0, end)
    else:
        i = end
        while i > 0 and text[i - 1] not in " \t\r\n,[]{}":
            i -= 1
    return i if 0 <= i < end < at and text[i] == "!" else at


# (both compiled by re's cache on first use: a double-quoted scalar that is not ASCII)
_SURROGATE = "[\ud800-\udfff]"
# an escape in a double-quoted scalar (re.DOTALL); group 1: one naming a surrogate, from
# its u or U
_ESCAPE = r"\\(u[dD][89a-fA-F][0-9a-fA-F]{2}|U0000[dD][89a-fA-F][0-9a-fA-F]{2})|\\."
_BAD_ESCAPE = (
    "YAML syntax error: found invalid Unicode character escape code (while parsing a quoted scalar)"
)


def is_json(text: str) -> bool:
    """Whether kubectl reads ``text`` as JSON (apimachinery yaml.NewYAMLOrJSONDecoder:
    it starts with "{" after white space)."""
    return text.lstrip(" \t\r\n").startswith("{")


def json_pairs(value: str) -> str:
    """Escaped UTF-16 surrogate pairs as the one character each is in JSON (Go's
    encoding/json, RFC 8259 section 7); a lone one stays (and is refused)."""
    return value.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "surrogatepass")


class _Builder:
    """The tree under construction: open collections, anchors, the aliases seen."""

    __slots__ = ("aliased", "anchors", "base", "fast", "json", "roots", "ruamel", "stack", "text")

    def __init__(self, base: int, text: str, fast: bool, ruamel: bool) -> None:
        self.base = base
        self.text = text
        self.fast = fast  # libyaml's events: single-pair flow mappings go to the reference
        self.ruamel = ruamel  # ruamel's events: a node's start mark is moved (start)
        # JSON, as kubectl decides (apimachinery yaml.NewYAMLOrJSONDecoder: the stream
        # starts with "{" after white space): read by Go's encoding/json, where an
        # escaped UTF-16 surrogate pair is one character (RFC 8259 section 7)
        self.json = is_json(text)
        self.aliased: list[tuple[Node, Node]] = []
        self.roots = Roots()
        self.roots.aliased = self.aliased
        self.stack: list[tuple[Node, list[Node]]] = []
        self.anchors: dict[str, Node] = {}

    def start(self, ev: Any) -> int:
        """Where a node starts: at its first property, as libyaml marks it. ruamel marks
        a node with a tag, then an anchor (``!!seq &x [a]``) at the anchor."""
        at: int = ev.start_mark.index
        if self.ruamel and ev.anchor is not None and ev.tag is not None:
            at = _tag_before(self.text, at)
        return self.base + at

    def scalar(self, ev: Any) -> Node:
        value = ev.value
        start = self.base + ev.start_mark.index if ev.anchor is None else self.start(ev)
        if len(value) > MAX_SCALAR:
            raise NodeError(
                f"a scalar of {len(value)} characters is over the limit of "
                f"{MAX_SCALAR} (Kubernetes objects are at most 1.5 MiB)",
                start,
            )
        if ev.style == '"' and not value.isascii() and re.search(_SURROGATE, value):
            if self.json:  # (``"\\ud83d\\ude00"``, as Python's json.dumps writes 😀)
                value = json_pairs(value)
            if re.search(_SURROGATE, value):
                self.lone_surrogate(ev)
        tag = ev.tag
        if tag is not None and tag != NON_SPECIFIC:  # (``! 3``: the string "3", kept "!")
            self.check_tag(tag, start)
            try:
                value = decode_tagged(tag, value)
            except TagError as exc:
                raise NodeError(exc.message, start, public=exc.public) from None
        node = Node(
            SCALAR,
            start,
            self.base + ev.end_mark.index,
            value,
            ev.style or None,
            tag,
            ev.anchor,
        )
        if ev.anchor is not None:
            self.anchors[ev.anchor] = node
        return node

    def check_tag(self, tag: str, start: int) -> None:
        """An unknown tag is refused; on libyaml's events, by the reference parser, whose
        reading of an odd tag (``!!se!!binary``: an undefined handle ``!se!``) libyaml's
        releases and PyYAML do not share: one message whatever path read it."""
        if tag not in _STANDARD_TAGS:
            if self.fast:
                raise Misread
            then = (
                "Kubernetes cannot tell what it means and neither can cmhash (an unrendered "
                "placeholder?); render the value first"
            )
            raise NodeError(f"unknown tag '{tag}': {then}", start, public=f"unknown tag: {then}")

    def lone_surrogate(self, ev: Any) -> None:
        """A double-quoted escape named a UTF-16 surrogate (``"\\ud800"``): no character.
        libyaml refuses it; ruamel makes a lone surrogate of it, which no UTF-8 output can
        hold. Refused here with libyaml's words, at libyaml's place (the escape's digits)."""
        at = ev.start_mark.index
        escapes = re.compile(_ESCAPE, re.DOTALL)
        for m in escapes.finditer(self.text, at, ev.end_mark.index):
            if m.group(1) is not None:
                at = m.start(1) + 1  # (libyaml marks the first digit)
                break
        raise NodeError(_BAD_ESCAPE, self.base + at)

    def open(self, ev: Any, kind: str, append: Callable[[Node], None]) -> Callable[[Node], None]:
        """A mapping or sequence starts: where its children go."""
        if (
            self.fast
            and kind == MAP
            and ev.flow_style
            and libyaml.single_pair(self.text, ev.start_mark.index, ev.end_mark.index)
        ):
            raise Misread
        start = self.start(ev)
        tag = None if ev.tag == NON_SPECIFIC else ev.tag
        if tag is not None:
            self.check_tag(tag, start)
        node = Node(kind, start, -1, None, bool(ev.flow_style), tag, ev.anchor)
        if ev.anchor is not None:
            self.anchors[ev.anchor] = node
        append(node)
        if len(self.stack) >= MAX_DEPTH:
            raise NodeError(f"nesting deeper than {MAX_DEPTH} levels", node.start)
        children: list[Node] = []
        self.stack.append((node, children))
        return children.append

    def close(self, ev: Any) -> Callable[[Node], None]:
        """The open collection ends: where the next node goes."""
        node, children = self.stack.pop()
        node.end = self.base + ev.end_mark.index
        node.value = (
            list(zip(children[0::2], children[1::2], strict=True)) if node.kind == MAP else children
        )
        return self.stack[-1][1].append if self.stack else self.roots.append

    def alias(self, ev: Any) -> Node:
        target = self.anchors.get(ev.anchor)
        if target is None:
            raise NodeError(
                f"undefined alias '*{ev.anchor}'",
                self.base + ev.start_mark.index,
                public="undefined alias",
            )
        alias = Node(
            ALIAS,
            self.base + ev.start_mark.index,
            self.base + ev.end_mark.index,
            target,
            None,
            None,
            ev.anchor,
        )
        self.aliased.append((target, alias))
        return alias

    def unlink(self) -> None:
        """Aliases let go of their targets: a recursive alias (refused) closes a cycle,
        which only the cyclic collector would free, and the console script runs with it
        off."""
        for _, alias in self.aliased:
            alias.value = None


def build(next_event: Callable[[], Any], base: int, be: Backend, text: str) -> Roots:
    b = _Builder(base, text, be.name == "fast", be.mstart.__module__.startswith("ruamel"))
    append = b.roots.append  # where the next node goes: the open collection, or the roots
    scalar_cls, mstart, sstart, mend, send, alias_cls = (
        be.scalar,
        be.mstart,
        be.sstart,
        be.mend,
        be.send,
        be.alias,
    )
    scalar = b.scalar
    try:
        while (ev := next_event()) is not None:
            cls = ev.__class__
            if cls is scalar_cls:  # the common case first, with as few lookups as possible
                append(scalar(ev))
            elif cls is mstart:
                append = b.open(ev, MAP, append)
            elif cls is sstart:
                append = b.open(ev, SEQ, append)
            elif cls is mend or cls is send:
                append = b.close(ev)
            elif cls is alias_cls:
                append(b.alias(ev))
        if b.roots.aliased:
            for root in b.roots:
                check_expansion(root)
    except BaseException:
        b.unlink()  # (no tree is returned: one with a recursive alias must not linger)
        raise
    return b.roots

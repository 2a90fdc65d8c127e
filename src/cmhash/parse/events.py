"""Parsing: YAML text -> the yamltree of each document, with character offsets.

Two event sources feed the same builder:

* ``exact``: ruamel.yaml's pure-Python parser, the reference path;
* ``fast``: libyaml through PyYAML's C binding (about 50x faster).

Both report character offsets into the chunk, so the rest of cmhash works on one tree
type and a differential test can compare the two paths. The builder enforces the
resource bounds and refuses tags it cannot interpret.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Sequence
from typing import Any

from cmhash.errors import NodeError
from cmhash.native import cext
from cmhash.parse import libyaml
from cmhash.parse.limits import MAX_DEPTH, MAX_SCALAR, check_expansion
from cmhash.parse.tree import ALIAS, MAP, SCALAR, SEQ, Node

_STANDARD_TAGS = frozenset(
    f"tag:yaml.org,2002:{t}"
    for t in ("str", "int", "float", "bool", "null", "map", "seq", "binary", "timestamp", "merge")
)


_Parts = tuple[Callable[[str], Any], Any, type[BaseException], type[BaseException]]


class _Backend:
    """Event classes of one parser library, and how to run it. ``load`` returns them:
    (run, events module, error, reader error); it is called on first use, so a run
    whose documents the C tree builder all builds never imports the event parser."""

    run: Callable[[str], Any]  # text -> a zero-argument callable: the next event or None
    error: type[BaseException]
    reader_error: type[BaseException]
    scalar: type
    mstart: type
    sstart: type
    mend: type
    send: type
    alias: type
    framing: frozenset[type]

    def __init__(
        self,
        name: str,
        load: Callable[[], _Parts],
        ctree: Callable[[str, int], list[Node] | None] | None = None,
        check_edit: CheckEdit | None = None,
    ) -> None:
        self.name = name
        self.ctree = ctree  # (text, base) -> roots built in C (native/_ctree.c), or None
        self.check_edit = check_edit  # the self-check in C on those trees (treecheck.py)
        self._load: Callable[[], _Parts] | None = load

    def __getattr__(self, attr: str) -> Any:
        """The event machinery, loaded when first asked for."""
        load = self.__dict__.get("_load")
        if load is None or attr.startswith("__"):
            raise AttributeError(attr)
        self._load = None
        run, module, self.error, self.reader_error = load()
        self.run = run
        self.scalar = module.ScalarEvent
        self.mstart = module.MappingStartEvent
        self.sstart = module.SequenceStartEvent
        self.mend = module.MappingEndEvent
        self.send = module.SequenceEndEvent
        self.alias = module.AliasEvent
        self.framing = frozenset(
            (
                module.StreamStartEvent,
                module.StreamEndEvent,
                module.DocumentStartEvent,
                module.DocumentEndEvent,
            )
        )
        return getattr(self, attr)


_BACKENDS: dict[str, _Backend] = {}


def _libyaml_parts() -> _Parts | None:
    try:
        import yaml
        from yaml import events

        loader_cls = yaml.CSafeLoader
    except (ImportError, AttributeError):  # PyYAML without libyaml
        return None

    def run(text: str) -> Callable[[], Any]:
        return loader_cls(text).get_event

    return run, events, yaml.MarkedYAMLError, yaml.reader.ReaderError


def _fast_backend() -> _Backend | None:
    ctree = _ctree_build()
    if ctree is not None:
        # PyYAML is imported only for a document the C builder hands back (or for
        # verify.py); without libyaml in PyYAML, those take ruamel's events
        return _Backend(
            "fast", lambda: _libyaml_parts() or _ruamel_parts(), ctree, ctree_check_edit()
        )
    parts = _libyaml_parts()
    return None if parts is None else _Backend("fast", lambda: parts)


def ctree_available() -> bool:
    """Whether the fast backend builds its trees in C (native/_ctree.c)."""
    return backend("fast").ctree is not None


def _ctree_build() -> Callable[[str, int], list[Node] | None] | None:
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


# a %YAML directive: its version (what ruamel's scanner reads: digits, a dot, digits)
_DIRECTIVE = re.compile(r"^%YAML[ \t]+([0-9]+)\.([0-9]+)", re.MULTILINE)


def _ruamel_parts() -> _Parts:
    from ruamel.yaml import YAML, events
    from ruamel.yaml.error import MarkedYAMLError, StreamMark
    from ruamel.yaml.parser import ParserError
    from ruamel.yaml.reader import ReaderError
    from ruamel.yaml.scanner import Scanner

    class _Scanner(Scanner):
        def scan_block_scalar_indentation(self) -> Any:
            """ruamel's, without its refusal of a first blank line shorter than the next
            one (``|``, a line of 4 spaces, then ``      x``: exit 0 on the fast path, 2
            here): YAML 1.2 (8.1.1.1) refuses only a leading empty line longer than the
            first non-empty one, which ends the scalar in libyaml and here alike."""
            peek, forward = self.reader.peek, self.reader.forward
            chunks = []
            max_indent = 0
            end_mark = self.reader.get_mark()
            while peek() in " \r\n\x85\u2028\u2029":
                if peek() != " ":
                    chunks.append(self.scan_line_break())
                    end_mark = self.reader.get_mark()
                else:
                    forward()
                    max_indent = max(max_indent, self.reader.column)
            return chunks, max_indent, end_mark

    def run(text: str) -> Callable[[], Any]:
        reader = YAML(typ="safe", pure=True)
        reader.Scanner = _Scanner
        events = iter(reader.parse(text))

        def next_event() -> Any:
            try:
                return next(events, None)
            except AssertionError:
                # ruamel asserts on ``%YAML 1.0`` or ``1.3`` (its version setter takes 1.1
                # and 1.2 only); libyaml refuses them: an error at the directive
                bad = next((m for m in _DIRECTIVE.finditer(text) if _unread(m)), None)
                if bad is None:
                    raise
                at = bad.start()
                line = text.count("\n", 0, at)
                mark = StreamMark("<text>", at, line, at - (text.rfind("\n", 0, at) + 1))
                raise ParserError(
                    None, None, "found incompatible YAML document (version 1.* is required)", mark
                ) from None

        return next_event

    return run, events, MarkedYAMLError, ReaderError


def _unread(directive: re.Match[str]) -> bool:
    """Whether a ``%YAML`` directive names a version ruamel does not read (1.1, 1.2)."""
    return int(directive.group(1)) == 1 and int(directive.group(2)) not in (1, 2)


def _exact_backend() -> _Backend:
    return _Backend("exact", _ruamel_parts)


def backend(name: str) -> _Backend:
    """``fast`` (libyaml; falls back to ``exact`` when libyaml is missing) or ``exact``."""
    b = _BACKENDS.get(name)
    if b is None:
        b = _fast_backend() if name == "fast" else None
        if b is None:
            b = _exact_backend()
        _BACKENDS[name] = b
    return b


class Roots(list[Node]):
    """A chunk's document roots, plus each (anchored node, alias) pair where an alias
    repeats a node: an edit inside such a node would change the copy too. (No pairs by
    default: ``Roots(nodes)`` is list's own constructor, no Python frame per chunk.)"""

    aliased: Sequence[tuple[Node, Node]] = ()
    exact = False  # read by the reference parser on the fast path (parse_chunk)


_QUOTED = re.compile(r"'[^']*'|\"[^\"]*\"")


def _at_end(text: str, index: int) -> bool:
    """Whether a parser's error mark is at the end of the input (past its last
    non-blank character): the construct it was reading never ended."""
    return index >= len(text.rstrip(" \t\r\n"))


def route(text: str, be: _Backend) -> _Backend:
    """The backend that reads ``text``: ``be``, or the reference parser (``exact``) for a
    text that libyaml's releases read differently (parse/libyaml.py)."""
    if be.name == "fast" and libyaml.misread(text):
        return backend("exact")
    return be


class _Misread(Exception):
    """libyaml opened a mapping the reference parser may read otherwise
    (``libyaml.single_pair``): parse_chunk asks the reference."""


class _LibyamlLimit(Exception):
    """libyaml's own nesting limit came before ours (parse/libyaml.py)."""


class _Refused(NodeError):
    """The fast path's parser refused the text (parse_chunk asks the reference)."""


def parse_chunk(text: str, base: int, be: _Backend) -> Roots:
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
    except _Misread:
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


def _parse_fast(text: str, base: int, be: _Backend) -> Roots:
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


# ruamel's scanner takes only spaces between tokens on a line; YAML's s-separate-in-line,
# libyaml and Kubernetes' parser (go-yaml) take tabs too: ``name:\tvalue``, ``value\t# note``.
# A tab where ruamel looked for the next token, after the line's indentation, is such a
# separator: the reference reads it as a space (one character for one: the offsets stay),
# so that both parsers read the same documents. A bounded number per chunk.
_TAB_PROBLEM = "found character '\\t' that cannot start any token"
TAB_RETRIES = 64


class _SeparatingTab(Exception):
    def __init__(self, index: int) -> None:
        self.index = index


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


def _parse(text: str, base: int, be: _Backend) -> Roots:
    """The chunk through the event path; parser errors as NodeError."""
    for _ in range(TAB_RETRIES):
        try:
            return _parse_once(text, base, be, be.name == "exact")
        except _SeparatingTab as tab:
            text = spaced(text, tab.index)
    return _parse_once(text, base, be, False)


def _parse_once(text: str, base: int, be: _Backend, tabs: bool) -> Roots:
    """``tabs``: a separating tab raises _SeparatingTab (ruamel's, read again as a space)."""
    try:
        return _build(be.run(text), base, be, text)
    except be.error as exc:
        if be.name == "fast" and libyaml.is_limit(exc):
            raise _LibyamlLimit from None
        if tabs and (at := separating_tab(text, exc)) is not None:
            raise _SeparatingTab(at) from None
        mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
        problem = getattr(exc, "problem", None) or "invalid YAML"
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
        public = _QUOTED.sub("'…'", msg)
        error = _Refused if be.name == "fast" else NodeError
        raise error(msg + tab, base + index, public=public + tab) from None
    except be.reader_error:
        bad = _non_printable().search(text)
        index = bad.start() if bad else 0
        char = f"U+{ord(bad.group()):04X}" if bad else "a character"
        raise NodeError(
            f"control character {char} is not allowed in YAML; remove it, or "
            "write it as an escape in a double-quoted string",
            base + index,
        ) from None


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


def _check_tag(tag: str, offset: int) -> None:
    if tag not in _STANDARD_TAGS:
        then = (
            "Kubernetes cannot tell what it means and neither can cmhash (an unrendered "
            "placeholder?); render the value first"
        )
        raise NodeError(f"unknown tag '{tag}': {then}", offset, public=f"unknown tag: {then}")


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


_SURROGATE = re.compile("[\ud800-\udfff]")
# an escape in a double-quoted scalar; group 1: one naming a surrogate, from its u or U
_ESCAPE = re.compile(
    r"\\(u[dD][89a-fA-F][0-9a-fA-F]{2}|U0000[dD][89a-fA-F][0-9a-fA-F]{2})|\\.", re.DOTALL
)
_BAD_ESCAPE = (
    "YAML syntax error: found invalid Unicode character escape code (while parsing a quoted scalar)"
)


class _Builder:
    """The tree under construction: open collections, anchors, the aliases seen."""

    __slots__ = ("aliased", "anchors", "base", "fast", "roots", "ruamel", "stack", "text")

    def __init__(self, base: int, text: str, fast: bool, ruamel: bool) -> None:
        self.base = base
        self.text = text
        self.fast = fast  # libyaml's events: single-pair flow mappings go to the reference
        self.ruamel = ruamel  # ruamel's events: a node's start mark is moved (start)
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

    def tag(self, ev: Any, start: int) -> str | None:
        tag: str | None = ev.tag
        if tag is None or tag == "!":
            return None
        _check_tag(tag, start)
        return tag

    def scalar(self, ev: Any) -> Node:
        value = ev.value
        start = self.base + ev.start_mark.index if ev.anchor is None else self.start(ev)
        if len(value) > MAX_SCALAR:
            raise NodeError(
                f"a scalar of {len(value)} characters is over the limit of "
                f"{MAX_SCALAR} (Kubernetes objects are at most 1.5 MiB)",
                start,
            )
        if ev.style == '"' and not value.isascii() and _SURROGATE.search(value):
            self.lone_surrogate(ev)
        tag = self.tag(ev, start) if ev.tag is not None else None
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

    def lone_surrogate(self, ev: Any) -> None:
        """A double-quoted escape named a UTF-16 surrogate (``"\\ud800"``): no character.
        libyaml refuses it; ruamel makes a lone surrogate of it, which no UTF-8 output can
        hold. Refused here with libyaml's words, at libyaml's place (the escape's digits)."""
        at = ev.start_mark.index
        for m in _ESCAPE.finditer(self.text, at, ev.end_mark.index):
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
            raise _Misread
        start = self.start(ev)
        node = Node(kind, start, -1, None, bool(ev.flow_style), self.tag(ev, start), ev.anchor)
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
        and the C Node is not tracked by the cyclic collector, which would never free
        it."""
        for _, alias in self.aliased:
            alias.value = None


def _build(next_event: Callable[[], Any], base: int, be: _Backend, text: str) -> Roots:
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

"""The two event sources the builder reads (builder.py), and how to run each:

* ``exact``: ruamel.yaml's pure-Python parser, the reference path;
* ``fast``: libyaml through PyYAML's C binding (about 50x faster), with the C tree
  builder (native/_ctree.c) in front of it when it was compiled.

A backend's event machinery is loaded on first use (``Backend``); events.py picks and
caches the backend of a run (``backend``).

And native/_ctree.c's entry points over our tree, bound for our ``Node`` class and limits
(the extension says whether they are there: native/cext.py): ``build`` (the fast
backend's trees) and ``check_edit`` (the self-check, edit/treecheck.py). Each is None
when the extension was not built or is turned off, and its Python reference does the
work.
"""

from __future__ import annotations

import functools
import re
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
    tree plus our annotation, None when it cannot tell (edit/treecheck.py). None without
    the extension."""
    c_check = cext.function("check_edit")
    if c_check is None:
        return None
    return lambda old, text, path, key, value: c_check(old, text, Node, KINDS, path, key, value)


_Parts = tuple[Callable[[str], Any], Any, type[BaseException], type[BaseException]]


class Backend:
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

    @property
    def loaded(self) -> bool:
        """Whether the event machinery was loaded: something read on the event path."""
        return "_load" in self.__dict__ and self.__dict__["_load"] is None

    def __getattr__(self, attr: str) -> Any:
        """The event machinery, loaded when first asked for."""
        load = self.__dict__.get("_load")
        if load is None or attr.startswith("__"):
            raise AttributeError(attr)
        # (loaded first, marked after: a signal that lands inside ``load`` leaves it to load
        # again, never a half-set backend whose ``error`` an ``except`` clause then misses)
        run, module, self.error, self.reader_error = load()
        self._load = None
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


def libyaml_parts() -> _Parts | None:
    try:
        import yaml
        from yaml import events

        loader_cls = yaml.CSafeLoader
    except (ImportError, AttributeError):  # PyYAML without libyaml
        return None

    def run(text: str) -> Callable[[], Any]:
        return loader_cls(text).get_event

    return run, events, yaml.MarkedYAMLError, yaml.reader.ReaderError


def libyaml_releases() -> tuple[str, str | None] | None:
    """(the libyaml release native/_ctree.c links, the one PyYAML's ``_yaml`` reads
    with: None when PyYAML has none); None without the C tree builder. Imports PyYAML."""
    ctree = cext.ctree()
    if ctree is None:
        return None
    try:
        from yaml import _yaml

        theirs: str | None = _yaml.get_version_string()
    except (ImportError, AttributeError):
        theirs = None
    return str(ctree.LIBYAML_VERSION), theirs


def _events_behind_ctree() -> _Parts:
    """The events of what the C builder hands back (tags, anchors, errors) and of
    verify.py's self-check: PyYAML's libyaml when it is the release the C builder links,
    so that one libyaml reads a run by construction; another release (the system's and
    PyYAML's wheel's need not be the same: parse/libyaml.py), or none, and ruamel's: the
    reference, the path parse/libyaml.py routes what the releases read differently to."""
    releases = libyaml_releases()
    if releases is not None and releases[0] == releases[1]:
        parts = libyaml_parts()
        if parts is not None:
            return parts
    return ruamel_parts()


def fast_backend() -> Backend | None:
    ctree = ctree_build()
    if ctree is not None:
        # PyYAML is imported only for a document the C builder hands back (or for
        # verify.py), and its libyaml used only when it is the C builder's release
        return Backend("fast", _events_behind_ctree, ctree, ctree_check_edit())
    parts = libyaml_parts()
    return None if parts is None else Backend("fast", lambda: parts)


# a %YAML directive (a line's start: re.MULTILINE): its version (what ruamel's scanner reads:
# digits, a dot, digits). Compiled by re's cache on the error that needs it.
_DIRECTIVE = r"^%YAML[ \t]+([0-9]+)\.([0-9]+)"


def ruamel_parts() -> _Parts:
    from ruamel.yaml import YAML, events
    from ruamel.yaml.error import MarkedYAMLError, StreamMark
    from ruamel.yaml.parser import ParserError
    from ruamel.yaml.reader import ReaderError
    from ruamel.yaml.scanner import Scanner, ScannerError

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

        def scan_flow_scalar_non_spaces(self, double: Any, start_mark: Any) -> Any:
            """ruamel's, with an escape beyond U+10FFFF (``"\\U00110000"``: its ``chr``
            raises) refused as libyaml refuses it, at the escape's first digit."""
            try:
                return super().scan_flow_scalar_non_spaces(double, start_mark)
            except (ValueError, OverflowError):
                raise ScannerError(
                    "while parsing a quoted scalar",
                    start_mark,
                    "found invalid Unicode character escape code",
                    self.reader.get_mark(),
                ) from None

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
                directives = re.finditer(_DIRECTIVE, text, re.MULTILINE)
                bad = next((m for m in directives if _unread(m)), None)
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


def exact_backend() -> Backend:
    return Backend("exact", ruamel_parts)

"""Every check that an edit changed nothing but our annotation (black's equivalence
check): the edited document is re-parsed and must equal the original apart from it.

The edited text's parser events are matched, one by one, against the original
document's tree, with a *slot* at each place where the annotation may appear (the
annotations mapping, or a level that did not exist or was null). Everything else must
be identical: values, plain-or-quoted, tags, anchors, aliases, the order of entries.
Streaming the events instead of building a second tree halves the cost of the check.
"""

from __future__ import annotations

import sys
from typing import Any

from cmhash.errors import NodeError
from cmhash.knowledge.kinds import WorkloadKind
from cmhash.parse.builder import is_json, json_pairs
from cmhash.parse.events import TAB_RETRIES, backend, route, separating_tab, spaced
from cmhash.parse.k8syaml import BINARY_TAG, TagError, decode_tagged
from cmhash.parse.resources import document_resources, pod_template
from cmhash.parse.tree import ALIAS, MAP, SCALAR, SEQ, Node, own
from cmhash.read.source import SourceText


class _Mismatch(Exception):
    pass


Pairs = dict[str, tuple[str, str | None]]


class Slot:
    """What one mapping (or null/missing level) of the original may gain: ``pairs`` of
    key -> (value, style: ``'"'`` or None for plain), in that mapping (``levels`` empty)
    or in the missing levels ``levels`` (``("annotations",)``,
    ``("metadata", "annotations")``) that hold them."""

    __slots__ = ("levels", "pairs", "seen")

    def __init__(self, levels: tuple[str, ...], pairs: Pairs) -> None:
        self.levels = levels
        self.pairs = pairs
        self.seen: set[str] = set()

    @property
    def used(self) -> bool:
        return len(self.seen) == len(self.pairs)


ANY_STYLE = "any"  # a pair whose value may be written in any style


def add_slots(
    slots: dict[int, Slot],
    skip: set[int],
    target: Node,
    pairs: Pairs,
    level: tuple[str, ...] = ("metadata", "annotations"),
) -> None:
    """``pairs`` land in ``target`` below ``level`` (created where missing or null): their
    slot into ``slots`` by id(old node), the ids of old key nodes they replace into
    ``skip``."""
    node = target
    for depth, name in enumerate(level):
        found = own(node, name)
        if found is None or found[1].is_null:  # "metadata:" with no value: the whole shape
            where = node if found is None else found[1]
            slots[id(where)] = Slot(level[depth:], pairs)
            return
        node = found[1]
    for key in pairs:
        old = own(node, key) if node.kind == MAP else None
        if old is not None:
            skip.add(id(old[0]))
    slots[id(node)] = Slot((), pairs)


class _Events:
    """The node events of a text, with one event of look-ahead."""

    def __init__(self, text: str, be: Any) -> None:
        self.be: Any = route(text, be)  # (the reader parse_chunk took for the original)
        self.next_event = self.be.run(text)
        self.framing = self.be.framing  # stream and document start/end: not nodes
        self.ahead: Any = None
        self.json = is_json(text)  # (its escaped surrogate pairs read as the builder reads them)

    def peek(self) -> Any:
        if self.ahead is None:
            self.ahead = self._next()
        return self.ahead

    def _next(self) -> Any:
        next_event, framing = self.next_event, self.framing
        ev = next_event()
        while ev is not None and ev.__class__ in framing:
            ev = next_event()
        if self.json and ev is not None and ev.__class__ is self.be.scalar:
            value = ev.value
            if ev.style == '"' and not value.isascii():
                ev.value = json_pairs(value)
        if ev is not None and ev.__class__ is self.be.scalar and ev.tag == BINARY_TAG:
            try:  # (the tree keeps a !!binary value decoded, as kubectl sends it: builder.py)
                ev.value = decode_tagged(ev.tag, ev.value)
            except TagError:
                pass  # (then it differs: the original's was valid base64)
        return ev

    def take(self) -> Any:
        ev = self.ahead
        if ev is not None:
            self.ahead = None
            return ev
        ev = self._next()
        if ev is None:
            raise _Mismatch("the edited document ends early")
        return ev


def _tag(ev: Any) -> str | None:
    return None if ev.tag == "!" else ev.tag


def _bare(ev: Any, cls: Any) -> bool:
    """Whether ``ev`` is a ``cls`` event without a tag or an anchor (as we write them)."""
    return ev is not None and ev.__class__ is cls and _tag(ev) is None and ev.anchor is None


class _Matcher:
    def __init__(
        self,
        events: _Events,
        slots: dict[int, Slot],
        skip: set[int],
        renames: dict[int, str] | None = None,
    ) -> None:
        self.ev = events
        self.be = events.be
        self.slots = slots
        self.skip = skip
        self.renames = renames or {}

    def node(self, node: Node) -> None:
        slot = self.slots.get(id(node))
        if slot is not None and node.kind == SCALAR:  # a null level, filled in
            self.shape(slot, slot.levels)
            return
        be, ev = self.be, self.ev.take()
        cls = ev.__class__
        if node.kind == SCALAR:
            if (
                cls is not be.scalar
                or ev.value != self.renames.get(id(node), node.value)
                or (ev.style is None or ev.style == "") != (node.style is None)
                or _tag(ev) != node.tag
                or ev.anchor != node.anchor
            ):
                raise _Mismatch("a value changed")
        elif node.kind == ALIAS:
            if cls is not be.alias or ev.anchor != node.anchor:
                raise _Mismatch("an alias changed")
        elif node.kind == SEQ:
            if cls is not be.sstart or _tag(ev) != node.tag or ev.anchor != node.anchor:
                raise _Mismatch("a sequence changed")
            for child in node.value:
                self.node(child)
            if self.ev.take().__class__ is not be.send:
                raise _Mismatch("a sequence grew")
        else:
            if cls is not be.mstart or _tag(ev) != node.tag or ev.anchor != node.anchor:
                raise _Mismatch("a mapping changed")
            self.mapping(node, slot)

    def mapping(self, node: Node, slot: Slot | None) -> None:
        be = self.be
        for k, v in node.value:
            if slot is not None:
                self.maybe_slot(slot)
            if id(k) in self.skip:  # the old value of our key: the slot replaces it
                continue
            self.node(k)
            self.node(v)
        if slot is not None:
            self.maybe_slot(slot)
            if not slot.used:
                raise _Mismatch("the annotation is missing")
        if self.ev.take().__class__ is not be.mend:
            raise _Mismatch("a mapping grew")

    def maybe_slot(self, slot: Slot) -> None:
        """Take what the slot lets in here (the pairs of a slot without levels in any
        order)."""
        while not slot.used:
            ev = self.ev.peek()
            if not _bare(ev, self.be.scalar):
                return
            if not slot.levels:
                if ev.value not in slot.pairs or ev.value in slot.seen:
                    return
                self.ev.take()
                self.value(slot, ev.value)
                continue
            if ev.value != slot.levels[0]:
                return
            self.ev.take()
            self.shape(slot, slot.levels)

    def shape(self, slot: Slot, levels: tuple[str, ...]) -> None:
        """The value of a created level: {annotations: {pairs}} or {pairs}."""
        for name in levels[1:]:
            self.plain_mapping_start()
            ev = self.ev.take()
            if not _bare(ev, self.be.scalar) or ev.value != name:
                raise _Mismatch(f"expected the key {name!r}")
        self.plain_mapping_start()
        while not slot.used:
            ev = self.ev.take()
            if ev.__class__ is not self.be.scalar or ev.value not in slot.pairs:
                raise _Mismatch("a created level holds more than the annotation")
            if ev.value in slot.seen or _tag(ev) is not None or ev.anchor is not None:
                raise _Mismatch("a created level repeats a key")
            self.value(slot, ev.value)
        for _ in levels:
            if self.ev.take().__class__ is not self.be.mend:
                raise _Mismatch("a created level holds more than the annotation")

    def plain_mapping_start(self) -> None:
        if not _bare(self.ev.take(), self.be.mstart):
            raise _Mismatch("a created level is not a plain mapping")

    def value(self, slot: Slot, key: str) -> None:
        slot.seen.add(key)
        value, style = slot.pairs[key]
        ev = self.ev.take()
        if (
            not _bare(ev, self.be.scalar)
            or ev.value != value
            or (style != ANY_STYLE and (ev.style or None) != style)
        ):
            raise _Mismatch("the annotation does not carry the planned value")


def verify_edits(
    src: SourceText,
    doc: int,
    base: int,
    old_roots: list[Node],
    new_text: str,
    edited: list[tuple[int, WorkloadKind, str]],
    key: str,
    be: Any,
) -> None:
    """``edited``: (resource position in the document, kind, value written)."""
    slots: dict[int, Slot] = {}
    skip: set[int] = set()
    resources = document_resources(src, doc, old_roots)
    for pos, kind, value in edited:
        template = pod_template(resources[pos], kind)[0] if pos < len(resources) else None
        if template is None or template.kind != MAP:
            raise NodeError(f"a {kind.kind} pod template is gone", base)
        add_slots(slots, skip, template, {key: (value, '"')}, kind.level)
    check_document(base, old_roots, new_text, slots, skip, be)


def check_document(
    base: int,
    old_roots: list[Node],
    new_text: str,
    slots: dict[int, Slot],
    skip: set[int],
    be: Any,
    renames: dict[int, str] | None = None,
    tabs: int = TAB_RETRIES,
) -> None:
    """The edited text must parse to ``old_roots`` with the ``slots`` filled in and the
    scalars of ``renames`` (id of the old scalar -> new value) renamed; nothing else.
    ``tabs``: how many more separating tabs the reference may read as spaces
    (parse/events.py ``separating_tab``)."""
    events = _Events(new_text, be)
    be = events.be
    matcher = _Matcher(events, slots, skip, renames)
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 5000))  # one frame a level; documents nest <= 1000
    error = be.error  # (before the ``try``: see parse/events.py ``_parse``)
    try:
        for root in old_roots:
            matcher.node(root)
        if events.peek() is not None:
            raise _Mismatch("the number of documents changed")
    except _Mismatch as exc:
        raise NodeError(f"the document changed beyond the annotation ({exc})", base) from None
    except error as exc:
        for s in slots.values():  # checked again from the start
            s.seen.clear()
        if be.name == "fast":  # read as parse_chunk read the original: by the reference
            check_document(base, old_roots, new_text, slots, skip, backend("exact"), renames)
            return
        at = separating_tab(new_text, exc) if tabs else None
        if at is not None:  # as parse_chunk read the original
            check_document(
                base, old_roots, spaced(new_text, at), slots, skip, be, renames, tabs - 1
            )
            return
        raise NodeError(
            f"the edited document does not parse ({exc})",
            base,
            public="the edited document does not parse",
        ) from None
    finally:
        sys.setrecursionlimit(limit)
    if not all(s.used for s in slots.values()):
        raise NodeError("an annotation is missing after the edit", base)


def count_check(before: int, after: int, added: int, what: str) -> None:
    """A splice that adds ``added`` entries (KRM results) must add exactly those."""
    if after != before + added:
        raise NodeError(f"could not add {what} safely", 0)

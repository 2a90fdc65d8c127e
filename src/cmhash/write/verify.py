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

from cmhash.analyze.kinds import WorkloadKind
from cmhash.analyze.resources import document_resources, pod_template
from cmhash.errors import NodeError
from cmhash.parse.tree import ALIAS, MAP, SCALAR, SEQ, Node, own
from cmhash.read.source import SourceText

# What a slot lets through: our pair in an existing mapping, or the missing levels.
PAIR, NEW_ANNOTATIONS, NEW_METADATA = "pair", "annotations", "metadata"


class _Mismatch(Exception):
    pass


class _Slot:
    __slots__ = ("key", "shape", "used", "value")

    def __init__(self, shape: str, key: str, value: str) -> None:
        self.shape = shape
        self.key = key
        self.value = value
        self.used = False


def _slots(template: Node, key: str, value: str) -> tuple[dict[int, _Slot], set[int]]:
    """Slots keyed by id(old node), and the ids of old key nodes our edit replaces."""
    skip: set[int] = set()
    meta = own(template, "metadata")
    if meta is None:
        return {id(template): _Slot(NEW_METADATA, key, value)}, skip
    if meta[1].is_null:  # "metadata:" with no value: replaced by the whole shape
        return {id(meta[1]): _Slot(NEW_METADATA, key, value)}, skip
    ann = own(meta[1], "annotations")
    if ann is None:
        return {id(meta[1]): _Slot(NEW_ANNOTATIONS, key, value)}, skip
    if ann[1].is_null:
        return {id(ann[1]): _Slot(NEW_ANNOTATIONS, key, value)}, skip
    old = own(ann[1], key) if ann[1].kind == MAP else None
    if old is not None:
        skip.add(id(old[0]))
    return {id(ann[1]): _Slot(PAIR, key, value)}, skip


class _Events:
    """The node events of a text, with one event of look-ahead."""

    def __init__(self, text: str, be: Any) -> None:
        self.be = be
        self.next_event = be.run(text)
        self.framing = be.framing  # stream and document start/end: not nodes
        self.ahead: Any = None

    def peek(self) -> Any:
        if self.ahead is None:
            self.ahead = self._next()
        return self.ahead

    def _next(self) -> Any:
        next_event, framing = self.next_event, self.framing
        ev = next_event()
        while ev is not None and ev.__class__ in framing:
            ev = next_event()
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


class _Matcher:
    def __init__(self, events: _Events, slots: dict[int, _Slot], skip: set[int]) -> None:
        self.ev = events
        self.be = events.be
        self.slots = slots
        self.skip = skip

    def node(self, node: Node) -> None:
        slot = self.slots.get(id(node))
        if slot is not None and node.kind == SCALAR:  # a null level, filled in
            self.shape(slot)
            return
        be, ev = self.be, self.ev.take()
        cls = ev.__class__
        if node.kind == SCALAR:
            if (
                cls is not be.scalar
                or ev.value != node.value
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

    def mapping(self, node: Node, slot: _Slot | None) -> None:
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

    def maybe_slot(self, slot: _Slot) -> None:
        ev = self.ev.peek()
        if slot.used or ev is None or ev.__class__ is not self.be.scalar:
            return
        wanted = {PAIR: slot.key, NEW_ANNOTATIONS: "annotations", NEW_METADATA: "metadata"}[
            slot.shape
        ]
        if ev.value != wanted or _tag(ev) is not None or ev.anchor is not None:
            return
        self.ev.take()
        if slot.shape == PAIR:
            self.value(slot)
        else:
            self.shape(slot)

    def shape(self, slot: _Slot) -> None:
        """The value a created level holds: {annotations: {key: value}} or {key: value}."""
        slot.used = True
        self.plain_mapping_start()
        if slot.shape == NEW_METADATA:
            self.key("annotations")
            self.plain_mapping_start()
        self.key(slot.key)
        self.value(slot)
        if slot.shape == NEW_METADATA and self.ev.take().__class__ is not self.be.mend:
            raise _Mismatch("the annotations level holds more than the annotation")
        if self.ev.take().__class__ is not self.be.mend:
            raise _Mismatch("a created level holds more than the annotation")

    def plain_mapping_start(self) -> None:
        ev = self.ev.take()
        if ev.__class__ is not self.be.mstart or _tag(ev) is not None or ev.anchor is not None:
            raise _Mismatch("a created level is not a plain mapping")

    def key(self, name: str) -> None:
        ev = self.ev.take()
        if (
            ev.__class__ is not self.be.scalar
            or ev.value != name
            or _tag(ev) is not None
            or ev.anchor is not None
        ):
            raise _Mismatch(f"expected the key {name!r}")

    def value(self, slot: _Slot) -> None:
        slot.used = True
        ev = self.ev.take()
        if (
            ev.__class__ is not self.be.scalar
            or ev.value != slot.value
            or ev.style != '"'
            or _tag(ev) is not None
            or ev.anchor is not None
        ):
            raise _Mismatch("the annotation does not carry the planned value")


def _templates(
    src: SourceText, doc: int, roots: list[Node], edited: list[tuple[int, WorkloadKind, str]]
) -> list[Node | None]:
    resources = document_resources(src, doc, roots)
    return [
        pod_template(resources[pos], kind)[0] if pos < len(resources) else None
        for pos, kind, _ in edited
    ]


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
    slots: dict[int, _Slot] = {}
    skip: set[int] = set()
    for (_, kind, value), template in zip(
        edited, _templates(src, doc, old_roots, edited), strict=True
    ):
        if template is None or template.kind != MAP:
            raise NodeError(f"a {kind.kind} pod template is gone", base)
        s, k = _slots(template, key, value)
        slots.update(s)
        skip |= k
    events = _Events(new_text, be)
    matcher = _Matcher(events, slots, skip)
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 5000))  # one frame a level; documents nest <= 1000
    try:
        for root in old_roots:
            matcher.node(root)
        if events.peek() is not None:
            raise _Mismatch("the number of documents changed")
    except _Mismatch as exc:
        raise NodeError(f"the document changed beyond the annotation ({exc})", base) from None
    except be.error as exc:
        raise NodeError(
            f"the edited document does not parse ({exc})",
            base,
            public="the edited document does not parse",
        ) from None
    finally:
        sys.setrecursionlimit(limit)
    if not all(s.used for s in slots.values()):
        raise NodeError("an annotation is missing after the edit", base)


def recheck(
    src: SourceText,
    doc: int,
    base: int,
    old_text: str,
    new_text: str,
    edited: list[tuple[int, WorkloadKind, str]],
    key: str,
    parser: str,
) -> None:
    """Verify a document again, from its text, when only some of its candidate edits
    were applied: ``edited`` holds (resource offset, kind, value) of those."""
    from cmhash.parse.events import backend, parse_chunk

    be = backend(parser)
    roots = parse_chunk(old_text, base, be)
    position = {r.node.start: i for i, r in enumerate(document_resources(src, doc, roots))}
    verify_edits(
        src,
        doc,
        base,
        roots,
        new_text,
        [(position[offset], kind, value) for offset, kind, value in edited],
        key,
        be,
    )


def count_check(before: int, after: int, added: int, what: str) -> None:
    """A splice that adds ``added`` entries (KRM results) must add exactly those."""
    if after != before + added:
        raise NodeError(f"could not add {what} safely", 0)

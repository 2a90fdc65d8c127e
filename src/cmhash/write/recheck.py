"""Verifying a document again from its text, after the reduce stage: when only some of
its candidate edits were applied, or when versioned names and the keep/immutable marks
changed it too (plan/versioning/)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import NamedTuple

from cmhash.analyze.annotations import read_annotations
from cmhash.analyze.versioned import keep_values
from cmhash.edit.verify import ANY_STYLE, Pairs, Slot, add_slots, check_document
from cmhash.errors import NodeError
from cmhash.knowledge.kinds import WorkloadKind
from cmhash.knowledge.versioning import KeepRule
from cmhash.parse.k8syaml import plain_bool
from cmhash.parse.resources import Resource, document_resources, pod_template
from cmhash.parse.tree import MAP, SCALAR, SEQ, Node, own
from cmhash.read.source import SourceText


class Marked(NamedTuple):
    """A versioned ConfigMap/Secret whose keep/immutable edits were made."""

    offset: int
    keep: tuple[KeepRule, ...]  # the keep rules written on it
    immutable: bool


def _scalars(node: Node) -> Iterator[Node]:
    stack = [node]
    while stack:
        n = stack.pop()
        if n.kind == SCALAR:
            yield n
        elif n.kind == SEQ:
            stack.extend(n.value)
        elif n.kind == MAP:
            stack.extend(x for pair in n.value for x in pair)


def _config_slots(slots: dict[int, Slot], skip: set[int], res: Resource, mark: Marked) -> None:
    if mark.keep:
        values = keep_values(read_annotations(res.annotations(), "metadata.annotations"), mark.keep)
        add_slots(slots, skip, res.node, {k: (v, ANY_STYLE) for k, v in values.items()})
    if mark.immutable:
        current = own(res.node, "immutable")
        kept = current is not None and current[1].style is None and current[1].tag is None
        value = str(current[1].value) if current is not None and kept else "true"
        if plain_bool(value) is not True:
            value = "true"
        add_slots(slots, skip, res.node, {"immutable": (value, None)}, level=())


def recheck(
    src: SourceText,
    doc: int,
    base: int,
    old_text: str,
    new_text: str,
    edited: list[tuple[int, WorkloadKind, str]],
    key: str,
    parser: str,
    marked: list[Marked] | None = None,
    renames: Mapping[int, str] | None = None,
    annotated: list[tuple[int, Pairs]] | None = None,
    inserted: list[tuple[int, tuple[str, ...], str]] | None = None,
) -> None:
    """Verify a document from its text: ``edited`` holds (resource offset, kind, value)
    of the workloads annotated, ``marked`` the versioned objects given keep/immutable
    marks, ``renames`` the offsets of renamed scalars and their new values, ``inserted``
    the names sources now write (resource offset, path, value)."""
    from cmhash.parse.events import backend, parse_chunk

    be = backend(parser)
    roots = parse_chunk(old_text, base, be)
    resources = {r.node.start: r for r in document_resources(src, doc, roots)}
    slots: dict[int, Slot] = {}
    skip: set[int] = set()
    for offset, kind, value in edited:
        template = pod_template(resources[offset], kind)[0]
        if template is None or template.kind != MAP:
            raise NodeError(f"a {kind.kind} pod template is gone", base)
        add_slots(slots, skip, template, {key: (value, '"')}, kind.level)
    for mark in marked or ():
        _config_slots(slots, skip, resources[mark.offset], mark)
    for offset, pairs in annotated or ():  # an object's own annotations (a renamed Job's)
        add_slots(slots, skip, resources[offset].node, pairs)
    for offset, path, value in inserted or ():  # a name a source now writes
        add_slots(slots, skip, resources[offset].node, {path[-1]: (value, '"')}, path[:-1])
    by_id: dict[int, str] = {}
    if renames:
        wanted = dict(renames)
        for root in roots:
            for node in _scalars(root):
                if node.start in wanted:
                    by_id[id(node)] = wanted.pop(node.start)
        if wanted:
            raise NodeError("a renamed name is gone", base)
    check_document(base, roots, new_text, slots, skip, be, by_id)

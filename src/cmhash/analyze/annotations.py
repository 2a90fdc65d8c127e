"""A workload's or object's annotations as cmhash reads them: one mapping at a time,
with where each value is written, and the few helpers every reader shares; and its
labels, as they are written.

And where a name is written in the source (``Spot``), for the edits that rename it in place
(versioned names, --jobs=rename), and why one cannot be renamed (an alias, a block scalar,
an anchor, a tag, a node an alias repeats).
"""

# No "from __future__ import annotations": typing compiles string NamedTuple fields at import

from collections.abc import Sequence
from typing import NamedTuple

from cmhash.edit.splice import Edit
from cmhash.parse.tree import ALIAS, MAP, SCALAR, Node, entries, scalar


class Spot(NamedTuple):
    """Where a name is written (a scalar's span and style), for renaming it in place
    (versioned names); ``problem`` says why it cannot be."""

    start: int
    end: int
    style: str | None
    problem: str | None = None

    def renamed(self, name: str) -> Edit:
        """The edit that writes ``name`` in place, in the quotes the old one had."""
        quote = self.style if self.style in ("'", '"') else ""
        return Edit(self.start, self.end, f"{quote}{name}{quote}")


def spot_of(raw: Node | None) -> Spot | None:
    """The spot of a name's scalar as written (``raw``: not through an alias)."""
    if raw is None:
        return None
    problem = None
    if raw.kind == ALIAS:
        problem = "the name is an alias; write the name out in full"
    elif raw.kind != SCALAR:
        return None
    elif raw.style in ("|", ">"):
        problem = "the name is a block scalar; write it on one line"
    elif raw.anchor is not None:
        problem = "the name carries an anchor that aliases may repeat; write the name out in full"
    elif raw.tag is not None:
        problem = "the name has an explicit tag; remove it"
    return Spot(raw.start, raw.end, raw.style, problem)


def aliased_spot(spot: Spot | None, aliased: Sequence[tuple[Node, Node]]) -> Spot | None:
    """A spot inside a node an alias repeats (or a ``<<`` merge pulls in) cannot be
    renamed: the copy would change too."""
    if spot is None or spot.problem is not None:
        return spot
    if any(target.start <= spot.start < target.end for target, _ in aliased):
        return spot._replace(
            problem="the name is inside a node an alias repeats; write that part out in full"
        )
    return spot


TRUE = "true"
METADATA = "metadata.annotations"


class Annotations(NamedTuple):
    """One ``annotations`` mapping of a workload: where it is, and its values."""

    field: str  # e.g. "metadata.annotations" or "spec.template.metadata.annotations"
    values: dict[str, tuple[str, int]]  # key -> (value, offset of the value)
    spots: dict[str, Spot | None]  # key -> where its value is written (renames)


def read_annotations(node: Node | None, field: str) -> Annotations | None:
    if node is None or node.kind != MAP:
        return None
    values = {}
    spots = {}
    for key, (_, v) in entries(node).items():
        text = scalar(v)
        if text is not None:
            values[key] = (text, v.start)
            spots[key] = spot_of(v)
    return Annotations(field, values, spots)


def gate_on(compat: str | None, enabled: frozenset[str]) -> bool:
    return compat is None or compat in enabled


def metadata(annotations: list[Annotations]) -> Annotations | None:
    return next((a for a in annotations if a.field == METADATA), None)


def template(annotations: list[Annotations]) -> Annotations | None:
    return next((a for a in annotations if a.field != METADATA), None)


def text_of(ann: Annotations | None, key: str) -> str:
    hit = ann.values.get(key) if ann is not None else None
    return hit[0] if hit is not None else ""


def labels_of(node: Node | None) -> tuple[tuple[str, str], ...]:
    pairs = entries(node).items() if node is not None and node.kind == MAP else ()
    return tuple((k, value) for k, (_, v) in pairs if (value := scalar(v)) is not None)

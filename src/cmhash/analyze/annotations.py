"""A workload's or object's annotations as cmhash reads them: one mapping at a time,
with where each value is written, and the few helpers every reader shares; and its
labels, as they are written."""

# No "from __future__ import annotations": typing compiles string NamedTuple fields at import

from typing import NamedTuple

from cmhash.analyze.spots import Spot, spot_of
from cmhash.parse.tree import MAP, Node, entries, scalar

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
    out = []
    for key, (_, v) in entries(node).items() if node is not None and node.kind == MAP else ():
        value = scalar(v)
        if value is not None:
            out.append((key, value))
    return tuple(out)

"""Annotations written where the tool that defines them does not read them (a Wave
annotation on the pod template, a Reloader ``ignore`` on a Deployment, cmhash's own
``skip`` on the pod template): they do nothing there, for that tool and for cmhash,
which reads each where its tool does (knowledge/placement.py). One finding per
workload names them all, with where each is read (``misplaced-annotation``: a note,
a warning with ``--strict``). Imported only for a workload with an annotation of one of
these tools (knowledge/compat.py ``PLACED_PARTS``)."""

from __future__ import annotations

from cmhash.analyze.annotations import METADATA, Annotations, gate_on, metadata
from cmhash.analyze.declared import Skipped, reloader_source
from cmhash.findings import Code
from cmhash.knowledge.compat import RELOADER_AUTO, RELOADER_KINDS, RELOADER_SEARCH, ReloaderKind
from cmhash.knowledge.placement import TEMPLATE, WORKLOAD, Placement, placement


def _keys(rk: ReloaderKind) -> tuple[str, ...]:
    return (rk.reload, RELOADER_AUTO, rk.typed_auto, RELOADER_SEARCH)


def _read(row: Placement, kind: str) -> str:
    """Where ``row``'s tool reads it on a workload, as the message says it."""
    if TEMPLATE in row.read:
        return f"the {kind}'s metadata.annotations or its pod template's"
    if WORKLOAD in row.read:
        return f"the {kind}'s own metadata.annotations"
    return "a ConfigMap's or Secret's own metadata.annotations, never a workload's"


def _why(
    row: Placement, place: str, key: str, annotations: list[Annotations], kind: str
) -> str | None:
    """Why ``key`` does nothing where it is written (None: it is read there)."""
    if row.kinds and kind not in row.kinds:
        handled = ", ".join(f"{k}s" for k in row.kinds[:-1]) + f" and {row.kinds[-1]}s"
        return f"{row.who} handles only {handled}, not a {kind}, wherever it is written"
    if place not in row.read:
        return f"{row.who} reads it on {_read(row, kind)}"
    if row.shadowed and place == TEMPLATE:
        meta = metadata(annotations)
        # the kinds for which Reloader reads ``key`` on the workload's metadata, not its
        # pod template's, because the metadata has one of that kind's four keys
        kinds = [
            rk
            for rk in RELOADER_KINDS
            if key in _keys(rk) and reloader_source(annotations, rk) is meta
        ]
        if kinds and meta is not None:
            names = " and ".join(f"{rk.kind}s" for rk in kinds)
            said = next(k for rk in kinds for k in _keys(rk) if k in meta.values)
            return (
                f"the {kind}'s metadata.annotations has {said}, so {row.who} reads its "
                f"annotations about {names} there only"
            )
    return None


def misplaced(annotations: list[Annotations], compat: frozenset[str], kind: str) -> Skipped | None:
    """One finding for every annotation of the workload (of kind ``kind``) that its
    tool does not read where it is written, at the first of them; None when none is."""
    found: list[tuple[int, str]] = []
    movable = False  # (one the tool reads elsewhere on this kind: "move it")
    for ann in annotations:
        place = WORKLOAD if ann.field == METADATA else TEMPLATE
        written = f"the {kind}'s metadata.annotations" if place == WORKLOAD else ann.field
        for key, (_, offset) in ann.values.items():
            row = placement(key)
            if row is None or not gate_on(row.tool, compat):
                continue
            why = _why(row, place, key, annotations, kind)
            if why is not None:
                found.append((offset, f"{key} in {written} does nothing there: {why}"))
                movable = movable or not row.kinds or kind in row.kinds
    if not found:
        return None
    found.sort()
    return Skipped(
        found[0][0],
        "; ".join(text for _, text in found)
        + ("; move it where it is read" if movable else "; remove it"),
        Code.MISPLACED_ANNOTATION.value,
    )

"""The edits of versioned names (decision.py decides them): each renamed object's name
(or, for a produced Secret, the names its source writes), and every pod-spec reference
to it, a declaring annotation's item included (a Reloader pattern that still matches
the new name is left as it is)."""

from __future__ import annotations

import re

from cmhash.analyze import patterns
from cmhash.analyze.annotations import Spot
from cmhash.edit.splice import Edit
from cmhash.errors import InputError
from cmhash.plan import source_versions
from cmhash.plan.versioning.decision import Renamed, Versioning
from cmhash.plan.workplan import Resolved, WorkloadPlan
from cmhash.read.source import SourceText


def _spot_error(src: SourceText, spot: Spot | None, offset: int, what: str) -> InputError:
    why = spot.problem if spot is not None and spot.problem else "its name cannot be located"
    return src.error(f"cannot rename {what}: {why}", spot.start if spot is not None else offset)


def edits(versioning: Versioning, plans: list[WorkloadPlan]) -> None:
    """The rename edits of every renamed object and of every reference to it, and the
    keep/immutable edits of every versioned object."""
    for r in versioning.renamed.values():
        e, info = r.entry, r.entry.info
        if info.version_error is not None:
            raise e.source.error(info.version_error[0], info.version_error[1])
        for edit in info.version_edits:
            versioning.add(e.source, info.doc, edit)
        if r.new == r.old:
            continue
        if info.producer is not None:  # a source's Secret: its source's fields
            for edit, value, inserted in source_versions.edits_of(e, r.old, r.new):
                versioning.add(e.source, info.doc, edit, value)
                if inserted:
                    versioning.inserted.setdefault((id(e.source), info.doc), []).append(
                        (info.offset, inserted, r.new)
                    )
            continue
        spot = info.name_spot
        if spot is None or spot.problem is not None:
            raise _spot_error(e.source, spot, info.offset, f"{info.kind} {info.name!r}")
        versioning.add(e.source, info.doc, spot.renamed(r.new), r.new)
    by_spot: dict[tuple[int, int], tuple[WorkloadPlan, Spot, list[tuple[Resolved, Renamed]]]] = {}
    for plan in plans:
        for res in plan.resolved:
            if res.entry is None or res.entry.id not in versioning.renamed:
                continue
            renamed = versioning.renamed[res.entry.id]
            if renamed.new == renamed.old:
                continue
            spot = res.ref.spot
            if spot is None or spot.problem is not None:
                raise _spot_error(
                    plan.source, spot, res.ref.offset, f"the reference to {renamed.old!r}"
                )
            key = (id(plan.source), spot.start)
            by_spot.setdefault(key, (plan, spot, []))[2].append((res, renamed))
    for plan, spot, hits in by_spot.values():
        _reference_edit(versioning, plan, spot, hits)


def _reference_edit(
    versioning: Versioning,
    plan: WorkloadPlan,
    spot: Spot,
    hits: list[tuple[Resolved, Renamed]],
) -> None:
    src = plan.source
    first = hits[0][0].ref
    if first.how != "declared":
        new = hits[0][1].new
        versioning.add(src, plan.info.doc, spot.renamed(new), new)
        return
    raw = src.text[spot.start : spot.end]
    quote = spot.style if spot.style in ("'", '"') else ""
    inner = raw[1:-1] if quote else raw
    escaped = {'"': "\\", "'": "''"}.get(quote)  # what would need unescaping
    if "\n" in inner or (escaped is not None and escaped in inner):
        raise src.error(
            f"cannot rewrite {first.declared_by} for versioned names: write it as a "
            "one-line string without escapes",
            spot.start,
        )
    items = inner.split(",")
    regex = first.pattern or bool(first.declared_by and first.declared_by.endswith("/reload"))
    for _, renamed in hits:
        items = [_rename_item(src, spot, plan, renamed, item, regex) for item in items]
    if quote == '"' and any("\\" in item for item in items):
        raise src.error(
            f"cannot rewrite {first.declared_by} for versioned names: a double-quoted "
            "regular expression would need its backslashes doubled; write it unquoted or "
            "single-quoted",
            spot.start,
        )
    text = quote + ",".join(items) + quote
    if text != raw:
        value = ",".join(items)
        versioning.add(src, plan.info.doc, Edit(spot.start, spot.end, text), value)


_LITERAL = re.compile(r"[a-z0-9-]+(?:\\\.[a-z0-9-]+)*")  # a name, dots escaped


def _rename_item(
    src: SourceText, spot: Spot, plan: WorkloadPlan, renamed: Renamed, item: str, regex: bool
) -> str:
    """One comma-separated item of a declaring annotation, with the object renamed when
    the item names it (in its namespace)."""
    core = item.strip()
    lead = item[: len(item) - len(item.lstrip())]
    trail = item[len(item.rstrip()) :]
    if not regex:  # in another namespace than the workload's: only as namespace/name
        ns, _, name = core.rpartition("/")
        home = renamed.entry.namespace
        if name != renamed.old or ns not in ((home,) if home != plan.namespace else ("", home)):
            return item
        return lead + (f"{ns}/" if ns else "") + renamed.new + trail
    if renamed.entry.namespace != plan.namespace:
        return item  # Reloader matches in the workload's namespace only
    try:  # as Reloader reads it (analyze/patterns.py)
        if not patterns.matches(core, renamed.old) or patterns.matches(core, renamed.new):
            return item
    except patterns.PatternError:
        return item
    # a literal name (only dots escaped) matches that one object: follow it
    if _LITERAL.fullmatch(core) and core.replace("\\.", ".") == renamed.old:
        return lead + renamed.new.replace(".", "\\.") + trail
    widened = "(" + core + ")(-.*)?"
    raise src.error(
        f"cannot version {renamed.entry.info.kind} {renamed.old!r}: "
        f"the Reloader pattern {core!r} names it but would not match {renamed.new!r}; "
        f"widen it (for example {widened!r}, or escape the dots of a literal name) or opt "
        "the object out",
        spot.start,
    )

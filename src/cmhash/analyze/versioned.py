"""The map side of versioned names (plan/versioning/decision.py decides): what a ConfigMap or
Secret says about being versioned, where its name is written, and the candidate edits
that ``--versioned-keep`` and ``--versioned-immutable`` would make to it."""

from __future__ import annotations

from cmhash.analyze.annotations import Annotations, Spot, spot_of
from cmhash.analyze.options import AnalyzeOptions
from cmhash.edit.splice import Edit, annotations_edits, pair_edit
from cmhash.errors import NodeError
from cmhash.knowledge.versioning import (
    PEER_ANNOTATIONS,
    WINDOW_ANNOTATIONS,
    KeepRule,
    keep_rules,
    peer_says,
)
from cmhash.parse.resources import Resource
from cmhash.parse.tree import entries

VERSIONED = "cmhash.io/versioned"


def version_window(annotations: Annotations | None) -> tuple[str, str, int] | None:
    """(annotation, value, offset) of the first window annotation given, unread: only
    ``--keep-versions`` runs read it (a deploy by kapp or Spinnaker itself must not fail
    on cmhash's reading)."""
    given = annotations.values if annotations is not None else {}
    key = next((r.annotation for r in WINDOW_ANNOTATIONS if r.annotation in given), None)
    return None if key is None else (key, *given[key])


def versioned_flag(annotations: Annotations | None) -> bool | None:
    """Whether the object asks to be versioned: ``cmhash.io/versioned`` (True, False),
    else the peers' annotations as each tool reads them; None when none is given."""
    if annotations is None:
        return None
    if VERSIONED in annotations.values:
        value, offset = annotations.values[VERSIONED]
        low = value.strip().lower()
        if low not in ("true", "false"):
            raise NodeError(f'{VERSIONED} must be "true" or "false"', offset)
        return low == "true"
    if peer_keep_original(annotations) is not None:
        return False
    said = [
        peer_says(row, annotations.values[row.annotation][0])
        for row in PEER_ANNOTATIONS
        if not row.keep_original and row.annotation in annotations.values
    ]
    return any(said) if said else None


def peer_keep_original(annotations: Annotations | None) -> str | None:
    """The annotation that asks for an original-named copy beside the versioned one
    (which cmhash cannot make), unless ``cmhash.io/versioned`` decides; else None."""
    if annotations is None or VERSIONED in annotations.values:
        return None
    given = annotations.values
    rows = PEER_ANNOTATIONS
    return next((r.annotation for r in rows if r.keep_original and r.annotation in given), None)


def name_spot(res: Resource) -> Spot | None:
    """Where the object's ``metadata.name`` is written (renamed with it), if it is."""
    meta = entries(res.node).get("metadata")
    if meta is None:
        return None
    name = entries(meta[1]).get("name") if meta[1].kind == "map" else None
    return spot_of(name[1]) if name else None


def _merged(annotations: Annotations | None, key: str, option: str) -> str:
    """``option`` (``Name=value``) added to a comma list of options, replacing its name."""
    current = ""
    if annotations is not None and key in annotations.values:
        current = annotations.values[key][0].strip()
    name = option.partition("=")[0]
    items = [o.strip() for o in current.split(",") if o.strip()]
    if option in items:
        return current  # already there: left exactly as written
    return ",".join([o for o in items if o.partition("=")[0] != name] + [option])


def keep_values(annotations: Annotations | None, rules: tuple[KeepRule, ...]) -> dict[str, str]:
    """The annotations ``rules`` write: a plain value, or an option merged into the
    object's other options (left exactly as written when it is already there)."""
    out: dict[str, str] = {}
    for rule in rules:
        if not rule.merged:
            out[rule.annotation] = rule.value
            continue
        if rule.annotation in out:  # a second option for the same annotation
            items = [o for o in out[rule.annotation].split(",") if o]
            name = rule.value.partition("=")[0]
            kept = [o for o in items if o.partition("=")[0] != name]
            out[rule.annotation] = ",".join([*kept, rule.value])
        else:
            out[rule.annotation] = _merged(annotations, rule.annotation, rule.value)
    return out


def version_edits(
    res: Resource, annotations: Annotations | None, options: AnalyzeOptions, default_nl: str
) -> tuple[Edit, ...]:
    """The candidate edits of a ConfigMap/Secret that may be versioned (NodeError when
    they cannot be made safely)."""
    edits = keep_marks(res, annotations, options, default_nl)
    if options.versioned_immutable:
        edit = pair_edit(res.source.text, res.node, "immutable", "true", default_nl)
        if edit is not None:
            edits.append(edit)
    return tuple(edits)


def keep_marks(
    res: Resource, annotations: Annotations | None, options: AnalyzeOptions, nl: str
) -> list[Edit]:
    """The engines' keep marks (knowledge/versioning.py KEEP_RULES) the options ask for,
    as edits of the object's annotations (NodeError when they cannot be made safely)."""
    rules = keep_rules(options.versioned_keep, options.keep_versions)
    if not rules:
        return []
    values = keep_values(annotations, rules)
    text = res.source.text
    return annotations_edits(text, res.node, None, values, nl, what="the object", any_style=True)

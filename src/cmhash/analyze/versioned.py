"""The map side of versioned names (plan/versioning.py decides): what a ConfigMap or
Secret says about being versioned, where its name is written, and the candidate edits
that ``--versioned-keep`` and ``--versioned-immutable`` would make to it."""

from __future__ import annotations

from cmhash.analyze.declared import Annotations
from cmhash.analyze.refs import Spot, spot_of
from cmhash.analyze.resources import Resource
from cmhash.errors import NodeError
from cmhash.parse.tree import entries
from cmhash.settings import Settings
from cmhash.write.edit import Edit, annotations_edits, pair_edit

VERSIONED = "cmhash.io/versioned"
RESOURCE_POLICY = "helm.sh/resource-policy"
SYNC_OPTIONS = "argocd.argoproj.io/sync-options"
PRUNE_FALSE = "Prune=false"


def versioned_flag(annotations: Annotations | None) -> bool | None:
    """``cmhash.io/versioned``: True, False, or None when absent."""
    if annotations is None or VERSIONED not in annotations.values:
        return None
    value, offset = annotations.values[VERSIONED]
    low = value.strip().lower()
    if low not in ("true", "false"):
        raise NodeError(f'{VERSIONED} must be "true" or "false"', offset)
    return low == "true"


def name_spot(res: Resource) -> Spot | None:
    meta = entries(res.node).get("metadata")
    if meta is None:
        return None
    name = entries(meta[1]).get("name") if meta[1].kind == "map" else None
    return spot_of(name[1]) if name else None


def keep_values(annotations: Annotations | None) -> dict[str, str]:
    """What keeps the previous versions: Helm never deletes a ``keep`` object, Argo CD
    never prunes a ``Prune=false`` one (added to the object's other sync options)."""
    options = ""
    if annotations is not None and SYNC_OPTIONS in annotations.values:
        options = annotations.values[SYNC_OPTIONS][0].strip()
    items = [o.strip() for o in options.split(",") if o.strip()]
    items = [o for o in items if not o.startswith("Prune=")] + [PRUNE_FALSE]
    return {RESOURCE_POLICY: "keep", SYNC_OPTIONS: ",".join(items)}


def version_edits(
    res: Resource, annotations: Annotations | None, settings: Settings, default_nl: str
) -> tuple[Edit, ...]:
    """The candidate edits of a ConfigMap/Secret that may be versioned (NodeError when
    they cannot be made safely)."""
    text = res.source.text
    edits: list[Edit] = []
    if settings.versioned_keep:
        edits += annotations_edits(
            text, res.node, None, keep_values(annotations), default_nl, what="the object"
        )
    if settings.versioned_immutable:
        edit = pair_edit(text, res.node, "immutable", "true", default_nl)
        if edit is not None:
            edits.append(edit)
    return tuple(edits)

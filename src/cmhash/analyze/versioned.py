"""The map side of versioned names (plan/versioning.py decides): what a ConfigMap or
Secret says about being versioned, where its name is written, and the candidate edits
that ``--versioned-keep`` and ``--versioned-immutable`` would make to it."""

from __future__ import annotations

from cmhash.analyze.annotations import Annotations
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
COMPARE_OPTIONS = "argocd.argoproj.io/compare-options"
IGNORE_EXTRANEOUS = "IgnoreExtraneous"


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


def keep_values(annotations: Annotations | None) -> dict[str, str]:
    """What keeps the previous versions: Helm never deletes a ``keep`` object, Argo CD
    never prunes a ``Prune=false`` one, and ``IgnoreExtraneous`` keeps those it leaves
    from marking the app OutOfSync (added to the object's other options)."""
    return {
        RESOURCE_POLICY: "keep",
        SYNC_OPTIONS: _merged(annotations, SYNC_OPTIONS, PRUNE_FALSE),
        COMPARE_OPTIONS: _merged(annotations, COMPARE_OPTIONS, IGNORE_EXTRANEOUS),
    }


def version_edits(
    res: Resource, annotations: Annotations | None, settings: Settings, default_nl: str
) -> tuple[Edit, ...]:
    """The candidate edits of a ConfigMap/Secret that may be versioned (NodeError when
    they cannot be made safely)."""
    text = res.source.text
    edits: list[Edit] = []
    if settings.versioned_keep:
        edits += annotations_edits(
            text,
            res.node,
            None,
            keep_values(annotations),
            default_nl,
            what="the object",
            any_style=True,
        )
    if settings.versioned_immutable:
        edit = pair_edit(text, res.node, "immutable", "true", default_nl)
        if edit is not None:
            edits.append(edit)
    return tuple(edits)

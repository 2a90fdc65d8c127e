"""The map side of versioned names (plan/versioning.py decides): what a ConfigMap or
Secret says about being versioned, where its name is written, and the candidate edits
that ``--versioned-keep`` and ``--versioned-immutable`` would make to it."""

from __future__ import annotations

from typing import NamedTuple

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
COMPARE_OPTIONS = "argocd.argoproj.io/compare-options"
FLUX_PRUNE = "kustomize.toolkit.fluxcd.io/prune"


class KeepRule(NamedTuple):
    """One engine's annotation that keeps an earlier version (or orders its deletion)."""

    engine: str  # helm | argocd | flux
    annotation: str
    value: str  # the value; for a ``merged`` one, the ``Name=value`` option
    merged: bool  # an option added to the object's comma-separated list of them
    when: str  # "keep": --versioned-keep (never deleted); "window": --keep-versions
    source: str  # where the engine defines it


KEEP_RULES: tuple[KeepRule, ...] = (
    # Helm never deletes a resource with this policy, not on upgrade nor uninstall
    # (helm/helm pkg/kube/resource_policy.go: KeepPolicy = "keep")
    KeepRule("helm", RESOURCE_POLICY, "keep", False, "keep", "helm pkg/kube/resource_policy.go"),
    # Argo CD never prunes it, and an extraneous object does not make the app OutOfSync
    # (argo-cd docs/user-guide/sync-options.md "No Prune Resources",
    # compare-options.md "Ignoring Resources That Are Extraneous")
    KeepRule("argocd", SYNC_OPTIONS, "Prune=false", True, "keep", "argo-cd sync-options.md"),
    KeepRule(
        "argocd", COMPARE_OPTIONS, "IgnoreExtraneous", True, "keep", "argo-cd compare-options.md"
    ),
    # Flux's garbage collection skips it (fluxcd/kustomize-controller docs/spec/v1
    # kustomizations.md "Prune": kustomize.toolkit.fluxcd.io/prune: disabled)
    KeepRule(
        "flux", FLUX_PRUNE, "disabled", False, "keep", "kustomize-controller kustomizations.md"
    ),
    # a bounded history: Argo CD deletes a version that left the window last, after the
    # rest of the sync is applied and healthy (sync-options.md "Prune Last"; per resource
    # since argoproj/argo-cd#5199: prune tasks of such resources get a last sync wave)
    KeepRule("argocd", SYNC_OPTIONS, "PruneLast=true", True, "window", "argo-cd sync-options.md"),
)


def keep_rules(settings: Settings) -> tuple[KeepRule, ...]:
    """The rules this run writes on versioned objects."""
    when = {"keep"} if settings.versioned_keep else set()
    if settings.keep_versions:
        when.add("window")
    return tuple(r for r in KEEP_RULES if r.when in when)


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
    res: Resource, annotations: Annotations | None, settings: Settings, default_nl: str
) -> tuple[Edit, ...]:
    """The candidate edits of a ConfigMap/Secret that may be versioned (NodeError when
    they cannot be made safely)."""
    text = res.source.text
    edits: list[Edit] = []
    rules = keep_rules(settings)
    if rules:
        edits += annotations_edits(
            text,
            res.node,
            None,
            keep_values(annotations, rules),
            default_nl,
            what="the object",
            any_style=True,
        )
    if settings.versioned_immutable:
        edit = pair_edit(text, res.node, "immutable", "true", default_nl)
        if edit is not None:
            edits.append(edit)
    return tuple(edits)

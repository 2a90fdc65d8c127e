"""The map side of versioned names (plan/versioning/decision.py decides): what a ConfigMap or
Secret says about being versioned, where its name is written, and the candidate edits
that ``--versioned-keep`` and ``--versioned-immutable`` would make to it."""

from __future__ import annotations

from typing import NamedTuple

from cmhash.analyze.annotations import Annotations
from cmhash.analyze.options import AnalyzeOptions
from cmhash.analyze.spots import Spot, spot_of
from cmhash.edit.splice import Edit, annotations_edits, pair_edit
from cmhash.errors import NodeError
from cmhash.parse.resources import Resource
from cmhash.parse.tree import entries

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


def keep_rules(versioned_keep: bool, keep_versions: int | None) -> tuple[KeepRule, ...]:
    """The rules this run writes on versioned objects."""
    when = {"keep"} if versioned_keep else set()
    if keep_versions:
        when.add("window")
    return tuple(r for r in KEEP_RULES if r.when in when)


class PeerAnnotation(NamedTuple):
    """Another tool's annotation on a ConfigMap/Secret that says whether to version it,
    read as that tool reads it. ``cmhash.io/versioned``, when given, wins."""

    tool: str
    annotation: str
    reads: str  # "present": any value (even "") means versioned; "true": only "true" does,
    # any other value means not versioned
    keep_original: bool  # the tool also keeps an original-named copy (cmhash cannot)
    source: str  # where the tool defines it


PEER_ANNOTATIONS: tuple[PeerAnnotation, ...] = (
    # kustomize hashes a resource whose needs-hash annotation is "true" and nothing else
    # (kustomize api/resource/resource.go NeedHashSuffix; the annotation is
    # kustomize.config.k8s.io/needs-hash, api/internal/plugins/fnplugin/fnplugin.go
    # HashAnnotation) -- but only on a generator's output: on a plain ConfigMap/Secret it
    # is ignored (kubernetes-sigs/kustomize#4833). cmhash honours it on any object.
    PeerAnnotation(
        "kustomize",
        "kustomize.config.k8s.io/needs-hash",
        "true",
        False,
        "kustomize api/resource/resource.go NeedHashSuffix",
    ),
    # kapp: "Value is ignored" (carvel-dev/kapp pkg/kapp/diff/change_set_with_versioned_rs.go
    # versionedResAnnKey; docs/diff.md "Versioned Resources")
    PeerAnnotation(
        "kapp",
        "kapp.k14s.io/versioned",
        "present",
        False,
        "kapp pkg/kapp/diff/change_set_with_versioned_rs.go",
    ),
    # kapp: with versioned, also keeps the original-named resource, updated on every
    # change (same file, versionedResOrigAnnKey, "Value is ignored"; docs/diff.md: "to have
    # the original resource ... along with versioned resource"). cmhash edits the
    # document in place and writes one object per document: it cannot emit both, so the
    # object keeps its name (outside readers of that name keep working) and a
    # not-versioned finding says why.
    PeerAnnotation(
        "kapp",
        "kapp.k14s.io/versioned-keep-original",
        "present",
        True,
        "kapp pkg/kapp/diff/change_set_with_versioned_rs.go",
    ),
    # Spinnaker: given, versioned only when the value is "true" (spinnaker.io
    # reference/providers/kubernetes-v2 "Strategy"; homedepot/go-clouddriver
    # pkg/kubernetes IsVersioned: annotations[strategy.spinnaker.io/versioned] == "true").
    # Spinnaker versions ConfigMaps/Secrets by default; cmhash only under --versioned.
    PeerAnnotation(
        "spinnaker",
        "strategy.spinnaker.io/versioned",
        "true",
        False,
        "spinnaker.io/docs/reference/providers/kubernetes-v2 (strategy)",
    ),
)


class WindowAnnotation(NamedTuple):
    """Another tool's annotation that bounds how many versions of the object exist,
    the current one included: ``--keep-versions`` for that object when ``--previous``
    is given (plan/history.py)."""

    tool: str
    annotation: str
    source: str


WINDOW_ANNOTATIONS: tuple[WindowAnnotation, ...] = (
    # kapp keeps this many versions, the current one included (default 5; carvel-dev/kapp
    # pkg/kapp/diff/change_set_with_versioned_rs.go versionedResNumVersAnnKey, parsed
    # with strconv.Atoi; docs/diff.md "kapp.k14s.io/num-versions=int")
    WindowAnnotation(
        "kapp", "kapp.k14s.io/num-versions", "kapp pkg/kapp/diff/change_set_with_versioned_rs.go"
    ),
    # Spinnaker keeps at most this many versions in the cluster, the newest included
    # (spinnaker.io reference/providers/kubernetes-v2 "Strategy":
    # strategy.spinnaker.io/max-version-history)
    WindowAnnotation(
        "spinnaker",
        "strategy.spinnaker.io/max-version-history",
        "spinnaker.io/docs/reference/providers/kubernetes-v2 (strategy)",
    ),
)


def version_window(annotations: Annotations | None) -> tuple[str, str, int] | None:
    """(annotation, value, offset) of the first window annotation given, unread: only
    ``--keep-versions`` runs read it (a deploy by kapp or Spinnaker itself must not fail
    on cmhash's reading)."""
    if annotations is None:
        return None
    for row in WINDOW_ANNOTATIONS:
        if row.annotation in annotations.values:
            value, offset = annotations.values[row.annotation]
            return row.annotation, value, offset
    return None


def _peer_says(row: PeerAnnotation, value: str) -> bool:
    return True if row.reads == "present" else value == "true"


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
        _peer_says(row, annotations.values[row.annotation][0])
        for row in PEER_ANNOTATIONS
        if not row.keep_original and row.annotation in annotations.values
    ]
    return any(said) if said else None


def peer_keep_original(annotations: Annotations | None) -> str | None:
    """The annotation that asks for an original-named copy beside the versioned one
    (which cmhash cannot make), unless ``cmhash.io/versioned`` decides; else None."""
    if annotations is None or VERSIONED in annotations.values:
        return None
    for row in PEER_ANNOTATIONS:
        if row.keep_original and row.annotation in annotations.values:
            return row.annotation
    return None


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
    res: Resource, annotations: Annotations | None, options: AnalyzeOptions, default_nl: str
) -> tuple[Edit, ...]:
    """The candidate edits of a ConfigMap/Secret that may be versioned (NodeError when
    they cannot be made safely)."""
    text = res.source.text
    edits: list[Edit] = []
    rules = keep_rules(options.versioned_keep, options.keep_versions)
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
    if options.versioned_immutable:
        edit = pair_edit(text, res.node, "immutable", "true", default_nl)
        if edit is not None:
            edits.append(edit)
    return tuple(edits)

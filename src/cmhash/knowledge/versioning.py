"""What other deploy tools say about versioned ConfigMaps and Secrets, as data: the
annotations that keep an earlier version or order its deletion (Helm, Argo CD, Flux;
``--versioned-keep``, ``--keep-versions``), the annotations by which another tool asks
for an object to be versioned (kustomize, kapp, Spinnaker), and those that bound how
many versions exist (kapp, Spinnaker). Each row cites where its tool defines it; read by
analyze/versioned.py and written by write/."""

# No "from __future__ import annotations": typing compiles string NamedTuple fields at import

from typing import NamedTuple

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


def peer_says(row: PeerAnnotation, value: str) -> bool:
    """Whether ``value`` of the row's annotation asks for versioning, as its tool reads it."""
    return True if row.reads == "present" else value == "true"


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

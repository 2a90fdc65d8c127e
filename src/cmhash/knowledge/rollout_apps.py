"""Rollout rules of Kubernetes' Deployment controller (apps/v1); and first, for every
apps workload, what the API server refuses: a selector that does not match the
template's labels, and the fields it refuses to change (knowledge/defaults.py FIXED),
unless its engine deletes and re-creates it (knowledge/rollout_tools.py RECREATE). The
StatefulSet and DaemonSet controllers' rules are in knowledge/rollout_sets.py;
knowledge/rollout.py puts them in RULES; each row cites where Kubernetes defines the
behaviour."""

from __future__ import annotations

from collections.abc import Mapping

from cmhash.knowledge.engines import RECREATE_SOURCE
from cmhash.knowledge.labels import is_empty, selector_matches
from cmhash.knowledge.podrequests import NEGATIVE_SOURCE, negative_quantity
from cmhash.knowledge.rollout_holds import HOLDS, RELEASED, released_only
from cmhash.knowledge.rollout_rule import (
    DEPLOYMENT,
    ZERO,
    Outcome,
    Rule,
    Workload,
    always,
    no_pod,
    refused_strategy_rule,
    scaled,
    scales_from_zero,
    scales_to_zero,
    starts,
    stops,
)
from cmhash.knowledge.strategy import Invalid, as_int32

K8S_DEPLOYMENT = "https://kubernetes.io/docs/concepts/workloads/controllers/deployment/"


def _strategy(c: Workload) -> str:
    if c.spec("strategy", "type") == "Recreate":
        return "Recreate: every old pod stops before new ones start"
    return "rolling update"


def selector_mismatch(c: Workload) -> bool:
    """The API server refuses the object: its selector does not select its template's
    labels (ValidatePodTemplateSpecForReplicaSet, ForStatefulSet: an empty selector is
    not checked; ValidateDaemonSetSpec: always). Judged when the manifest gives both the
    selector and the template's labels: one that leaves either out is taken as partial
    (a patch, an excerpt; apps/v1 refuses an absent selector as "Required value",
    extensions/v1beta1 defaulted it to the template's labels)."""
    selector = c.spec("selector")
    labels = c.spec("template", "metadata", "labels")
    if selector is None or labels is None:
        return False
    if c.id.kind != "DaemonSet" and is_empty(selector):
        return False
    return selector_matches(selector, labels) is False


MISMATCH = "`selector` does not match template `labels`"


def _mismatch_text(c: Workload) -> str:
    out = (
        f"{MISMATCH}: the API server refuses the {c.id.kind} (spec.template.metadata."
        "labels must carry what spec.selector selects)"
    )
    fixed = c.fixed()
    if fixed:
        out += (
            f"; and {', '.join(fixed)} cannot change: the API server refuses the update "
            "for that too"
        )
    forced = c.forced()
    if forced:
        out += (
            f"; with {forced}, the live {c.id.kind} is deleted first and the new one is "
            "refused all the same: its pods stop"
        )
    return out


def _recreated_text(c: Workload) -> str:
    out = (
        f"{', '.join(c.fixed())} cannot change, and {c.forced()} deletes the {c.id.kind} "
        "and creates it again: every pod stops and new ones start, all at once (no "
        "rolling update)"
    )
    if c.id.kind == "StatefulSet":
        out += "; its PersistentVolumeClaims stay"
    return out


APPS_WORKLOADS = (
    ("apps", "Deployment"),
    ("apps", "DaemonSet"),
    ("apps", "StatefulSet"),
    ("apps", "ReplicaSet"),
)
SELECTOR_KINDS = (
    *APPS_WORKLOADS,
    ("extensions", "Deployment"),
    ("extensions", "DaemonSet"),
    ("extensions", "ReplicaSet"),
)
APPS_VALIDATION = "kubernetes/kubernetes pkg/apis/apps/validation/validation.go"

SELECTOR_RULES = (
    Rule(
        "selector-mismatch",
        SELECTOR_KINDS,
        selector_mismatch,
        "spec.selector and spec.template.metadata.labels given, and the one does not "
        "select the other (an empty selector selects everything, and only a DaemonSet's "
        "is checked then)",
        Outcome.REFUSED,
        _mismatch_text,
        f"{APPS_VALIDATION} ValidatePodTemplateSpecForReplicaSet (Deployment, ReplicaSet), "
        "ValidatePodTemplateSpecForStatefulSet, ValidateDaemonSetSpec: field.Invalid("
        f'spec.template.metadata.labels, "{MISMATCH}"); apimachinery pkg/apis/meta/v1/'
        "helpers.go LabelSelectorAsSelector (nil: labels.Nothing(), empty: "
        "labels.Everything()); pkg/apis/extensions/v1beta1/defaults.go (an absent selector "
        "is the template's labels)",
    ),
)


def _bad_replicas(c: Workload) -> str | None:
    """spec.replicas negative, or no int32 (k8s.io/api apps/v1 types.go) kubectl's JSON
    decodes into it; a DaemonSet has no such field."""
    if c.id.kind == "DaemonSet":
        return None
    n = as_int32(c.spec("replicas"))
    if isinstance(n, Invalid):
        return f"spec.replicas {n.value!r} is no int32"
    return f"spec.replicas {n} is negative" if n is not None and n < 0 else None


def _negative(c: Workload) -> str | None:
    """A spec.replicas or quantity of the pod template the API server refuses (negative,
    beyond its type, no quantity), in the manifest's words."""
    bad = _bad_replicas(c)
    if bad:
        return bad
    pod = c.spec("template", "spec")
    got = negative_quantity(pod) if isinstance(pod, Mapping) else None
    return f"spec.template.spec.{got}" if got else None


NEGATIVE_RULES = (
    Rule(
        "negative-count",
        SELECTOR_KINDS,
        lambda c: _negative(c) is not None,
        "spec.replicas, or a request, limit or overhead of the pod template, below 0 (or no "
        "number or quantity the API server reads)",
        Outcome.REFUSED,
        lambda c: f"{_negative(c)}: the API server refuses the {c.id.kind}, so nothing rolls",
        f"{APPS_VALIDATION} ValidateDeploymentSpec, ValidateStatefulSetSpec, "
        "ValidateReplicaSetSpec (ValidateNonnegativeField on spec.replicas); "
        f"{NEGATIVE_SOURCE}",
    ),
)

RECREATE_RULES = (
    Rule(
        "recreated",
        APPS_WORKLOADS,
        lambda c: c.forced() is not None and bool(c.fixed()),
        "an immutable field changed (as immutable-field below), and its engine deletes "
        "and re-creates it: Flux's kustomize.toolkit.fluxcd.io/force: enabled, Argo CD's "
        "sync-options Force=true",
        Outcome.RECREATED,
        _recreated_text,
        RECREATE_SOURCE,
    ),
)

IMMUTABLE_RULES = (
    Rule(
        "immutable-field",
        APPS_WORKLOADS,
        lambda c: bool(c.fixed()),
        "spec.selector changed (apps/v1), or a StatefulSet's spec outside replicas, "
        "ordinals, template, updateStrategy, revisionHistoryLimit, "
        "persistentVolumeClaimRetentionPolicy, minReadySeconds (volumeClaimTemplates...)",
        Outcome.REFUSED,
        lambda c: (
            f"{', '.join(c.fixed())} cannot change: the API server refuses the update "
            f"(kubectl apply fails); delete and re-create the {c.id.kind}"
            + (
                " (kubectl delete --cascade=orphan keeps its pods and volumes)"
                if c.id.kind == "StatefulSet"
                else ""
            )
        ),
        "kubernetes/kubernetes pkg/registry/apps/{deployment,daemonset}/strategy.go "
        "ValidateUpdate (ValidateImmutableField on spec.selector from apps/v1); "
        "pkg/apis/apps/validation/validation.go ValidateStatefulSetUpdate (updates to "
        "statefulset spec for fields other than 'replicas', 'ordinals', 'template', "
        "'updateStrategy', 'revisionHistoryLimit', 'persistentVolumeClaimRetentionPolicy' "
        "and 'minReadySeconds' are forbidden)",
    ),
)

DEPLOYMENT_RULES = (
    refused_strategy_rule("deployment-strategy-refused", DEPLOYMENT),
    Rule(
        "deployment-paused",
        DEPLOYMENT,
        lambda c: c.true(c.spec("paused")),
        "spec.paused: true",
        Outcome.NONE,
        lambda c: "the Deployment is paused: nothing rolls until it is resumed",
        f"{K8S_DEPLOYMENT}#pausing-and-resuming-a-deployment; kubernetes/kubernetes "
        "pkg/controller/deployment/deployment_controller.go syncDeployment (if "
        "d.Spec.Paused: dc.sync, scaling only, no rollout)",
    ),
    Rule(
        "deployment-scale-from-zero",
        DEPLOYMENT,
        scales_from_zero,
        "replicas 0 in OLD, not 0 in NEW",
        Outcome.STARTS,
        starts,
        "kubernetes/kubernetes pkg/controller/deployment/deployment_controller.go "
        "isScalingEvent (only active ReplicaSets, replicas > 0), rolling.go rolloutRolling "
        "(NewRSNewReplicas: the new ReplicaSet straight to spec.replicas; "
        "reconcileOldReplicaSets: no old pod to scale down)",
    ),
    Rule(
        "deployment-scale-to-zero",
        DEPLOYMENT,
        scales_to_zero,
        "replicas 0 in NEW, not 0 in OLD",
        Outcome.STOPS,
        stops,
        "kubernetes/kubernetes pkg/controller/deployment/sync.go sync, scale "
        "(FindActiveOrLatest: the active ReplicaSet to 0, no new pod)",
    ),
    Rule(
        "deployment-zero-replicas",
        DEPLOYMENT,
        lambda c: c.replicas().exact == 0,
        ZERO,
        Outcome.NONE,
        lambda c: f"{no_pod(c)}; new pods get the new template",
        f"{K8S_DEPLOYMENT}#scaling-a-deployment; pkg/controller/deployment/rolling.go "
        "(the new ReplicaSet is scaled to spec.replicas)",
    ),
    Rule(
        "deployment-resumed",
        DEPLOYMENT,
        released_only,
        "spec.paused true in OLD, not in NEW, the template unchanged",
        Outcome.ROLLS,
        lambda c: (
            f"{RELEASED}resumed (spec.paused true → false): the pods on an older template, "
            "if any (template changes made while it was paused), roll" + scaled(c)
        ),
        f"{K8S_DEPLOYMENT}#pausing-and-resuming-a-deployment; {HOLDS[0].source}",
    ),
    Rule(
        "deployment-rolls",
        DEPLOYMENT,
        always,
        "otherwise (RollingUpdate or Recreate)",
        Outcome.ROLLS,
        lambda c: _strategy(c) + scaled(c),
        f"{K8S_DEPLOYMENT}#updating-a-deployment (a rollout is triggered if and only if "
        ".spec.template is changed)",
    ),
)

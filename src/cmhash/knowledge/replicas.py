"""How many pods a workload runs, as far as the manifests say: its ``spec.replicas``, or
the range an autoscaler of the input gives it, or unknown offline. One place, read by
every rollout rule that needs the number (report/rollout.py ``Context.replicas``), as a
``Replicas`` that may be a number, a range or unknown, so that what builds on it (a
partition's ordinals, a scale from zero, how many pods a rollout replaces) carries the
range or the unknown through instead of guessing.

The autoscalers are rows of ``AUTOSCALERS``, each citing where its controller reads the
fields:

- **HorizontalPodAutoscaler** (autoscaling/v1, v2, v2beta1, v2beta2): it owns the count
  of the workload its ``spec.scaleTargetRef`` names (kind, name, and the group of its
  ``apiVersion``: the controller maps ``schema.ParseGroupVersion(apiVersion).Group``
  and the kind, so an omitted apiVersion is the core group) in its own namespace, between
  ``minReplicas`` (default 1) and ``maxReplicas`` (required). A workload whose
  ``spec.replicas`` is 0 turns it off ("scaling is disabled since the replica count of
  the target is zero"): then the count is 0.
- **KEDA ScaledObject** (keda.sh/v1alpha1): its ``spec.scaleTargetRef`` defaults to kind
  Deployment, apiVersion apps/v1; KEDA scales to ``minReplicaCount`` (default 0: scale
  to zero when idle), or ``idleReplicaCount`` while no trigger is active, and up to
  ``maxReplicaCount`` (default 100); ``autoscaling.keda.sh/paused-replicas: N`` holds
  the target at N, ``autoscaling.keda.sh/paused: "true"`` leaves it at its live count.

Without an autoscaler, an absent ``spec.replicas`` is **unknown offline**, never 1:
``kubectl apply`` of a manifest without the field keeps the live count (the API
server's default 1 applies to a new object only; Kubernetes' HPA documentation advises
leaving the field out for exactly this reason).

Unless OLD had it (``REMOVED_SOURCE``): what was applied before set the field (kubectl's
last-applied annotation, Helm's previous manifest, server-side apply's field owner), so
applying NEW without it deletes it, and the API server defaults it to 1 (apps/v1
``SetDefaults_Deployment``/``StatefulSet``/``ReplicaSet``): the count drops to 1, and an
autoscaler scales it back from there.
"""

# No "from __future__ import annotations": typing compiles string NamedTuple fields at import

from collections.abc import Mapping
from typing import Any, NamedTuple

from cmhash.knowledge.defaults import path_get
from cmhash.knowledge.strategy import whole
from cmhash.model import ResourceId

HPA_SOURCE = (
    "kubernetes/kubernetes pkg/controller/podautoscaler/horizontal.go reconcileAutoscaler "
    "(scaleTargetRef: schema.ParseGroupVersion(apiVersion).Group and kind, in the HPA's "
    "namespace; minReplicas nil: 1; currentReplicas == 0 && minReplicas != 0: "
    '"scaling is disabled since the replica count of the target is zero"); '
    "pkg/apis/autoscaling/v2/defaults.go SetDefaults_HorizontalPodAutoscaler (minReplicas 1)"
)
KEDA_SOURCE = (
    'kedacore/keda apis/keda/v1alpha1/gvkr.go ParseGVKR (apiVersion "": apps/v1, kind '
    '"": Deployment); scaledobject_types.go GetHPAMaxReplicas (maxReplicaCount nil: 100), '
    "PausedReplicasAnnotation, PausedAnnotation; pkg/scaling/executor/"
    'scale_scaledobjects.go RequestScale ("if scaledObject.Spec.MinReplicaCount is not '
    'set, then set the default value (0)"; idleReplicaCount while inactive)'
)
# the HPA docs' advice, and why an absent field is the live count
ABSENT_SOURCE = (
    "https://kubernetes.io/docs/concepts/workloads/autoscaling/horizontal-pod-autoscale/"
    "#migrating-deployments-and-statefulsets-to-horizontal-autoscaling (remove "
    "spec.replicas from the manifest); https://kubernetes.io/docs/tasks/"
    "manage-kubernetes-objects/declarative-config/#merge-patch-calculation (a field the "
    "configuration file does not set keeps its live value)"
)

# OLD's spec.replicas gone from NEW: apply deletes it, the server defaults it to 1
REMOVED_SOURCE = (
    "https://kubernetes.io/docs/tasks/manage-kubernetes-objects/declarative-config/"
    "#merge-patch-calculation (fields present in last-applied-configuration and missing "
    "from the configuration file are deleted); https://kubernetes.io/docs/concepts/"
    "workloads/autoscaling/horizontal-pod-autoscale/#migrating-deployments-and-"
    "statefulsets-to-horizontal-autoscaling (the removal of spec.replicas may incur a "
    "one-time degradation of Pod counts as the default value of this key is 1); "
    "kubernetes/kubernetes pkg/apis/apps/v1/defaults.go (Replicas nil: 1)"
)


class Replicas(NamedTuple):
    """A workload's pod count: ``low == high`` a number, ``low < high`` a range, both
    None unknown offline; ``source`` says what gives it."""

    low: int | None
    high: int | None
    source: str  # "spec.replicas", "HorizontalPodAutoscaler/web", or why it is unknown

    @property
    def known(self) -> bool:
        return self.low is not None and self.high is not None

    @property
    def exact(self) -> int | None:
        """The number, when there is one."""
        return self.low if self.known and self.low == self.high else None

    @property
    def scaled(self) -> bool:
        """Whether an autoscaler gives it (a range, or its paused count)."""
        return self.source != SPEC and self.known

    def text(self) -> str:
        """``3``, ``3..10``, ``unknown``."""
        if not self.known:
            return "unknown"
        return str(self.low) if self.low == self.high else f"{self.low}..{self.high}"

    def said(self) -> str:
        """Which value a rule used, in words: ``replicas 3``, ``replicas 3..10 from
        HorizontalPodAutoscaler/web``, ``replicas unknown offline: ...``."""
        if not self.known:
            return f"replicas unknown offline: {self.source}"
        if self.source == SPEC:
            return f"replicas {self.text()}"
        return f"replicas {self.text()} from {self.source}"


SPEC = "spec.replicas"
UNKNOWN = Replicas(
    None,
    None,
    "spec.replicas is absent and no autoscaler in the input targets it: kubectl apply "
    "keeps the live count",
)


class Autoscaler(NamedTuple):
    """One kind of object that owns another workload's replica count."""

    group: str
    kind: str
    low: str  # spec field of the lower bound
    low_default: int
    high: str  # spec field of the upper bound
    high_default: int | None  # None: required
    target_kind: str | None  # scaleTargetRef.kind when absent (None: required)
    target_api: str | None  # scaleTargetRef.apiVersion when absent (None: the core group)
    zero_stops: bool  # a target at 0 replicas turns it off (the HPA's maintenance mode)
    idle: str | None = None  # spec field of the count while idle (KEDA)
    paused_replicas: str | None = None  # annotation that holds the target at N
    paused: str | None = None  # annotation that stops it scaling (the live count stays)
    source: str = ""


AUTOSCALERS: tuple[Autoscaler, ...] = (
    Autoscaler(
        "autoscaling",
        "HorizontalPodAutoscaler",
        "minReplicas",
        1,
        "maxReplicas",
        None,
        None,
        None,
        zero_stops=True,
        source=HPA_SOURCE,
    ),
    Autoscaler(
        "keda.sh",
        "ScaledObject",
        "minReplicaCount",
        0,
        "maxReplicaCount",
        100,
        "Deployment",
        "apps/v1",
        zero_stops=False,
        idle="idleReplicaCount",
        paused_replicas="autoscaling.keda.sh/paused-replicas",
        paused="autoscaling.keda.sh/paused",
        source=KEDA_SOURCE,
    ),
)
BY_KIND = {(a.group, a.kind): a for a in AUTOSCALERS}
# the kinds' names, to find their documents in a stream cheaply before parsing any
KIND_NAMES = tuple(sorted({a.kind for a in AUTOSCALERS}))


class Scaling(NamedTuple):
    """One autoscaler of the input, read: what it targets and the count it gives."""

    name: str  # "HorizontalPodAutoscaler/web"
    target: tuple[str, str, str]  # (group, kind, name) of the workload it scales
    namespace: str | None  # as written
    replicas: Replicas
    row: Autoscaler


def _refused_range(row: Autoscaler, low: int, high: int | None) -> str:
    """Why the range is no count (``RANGE_SOURCE``): a bound below 0, an HPA's
    maxReplicas below 1 or below its minReplicas; "" when it is one."""
    if low < 0:
        return f"{row.low} {low} is negative"
    if high is not None and high < 0:
        return f"{row.high} {high} is negative"
    if row.zero_stops and high is not None and high < 1:
        return f"{row.high} {high}: must be greater than 0"
    if high is not None and high < low:
        return f"{row.high} {high} is below {row.low} {low}"
    return ""


RANGE_SOURCE = (
    "kubernetes/kubernetes pkg/apis/autoscaling/validation/validation.go "
    "ValidateHorizontalPodAutoscalerSpec (minReplicas at least 1, or 0 with "
    'HPAScaleToZero; maxReplicas "must be greater than 0" and not below '
    "minReplicas); kedacore/keda apis/keda/v1alpha1/scaledobject_webhook.go "
    "(minReplicaCount not above maxReplicaCount)"
)


def read_autoscaler(group: str, kind: str, obj: Mapping[str, Any]) -> Scaling | None:
    """An autoscaler object (plain data) as a ``Scaling``; None for another kind or one
    that names no target."""
    row = BY_KIND.get((group, kind))
    if row is None:
        return None
    ref = path_get(obj, ("spec", "scaleTargetRef"))
    name = path_get(ref, ("name",))
    target_kind = path_get(ref, ("kind",)) or row.target_kind
    if not isinstance(name, str) or not name or not isinstance(target_kind, str):
        return None
    api = path_get(ref, ("apiVersion",)) or row.target_api or ""
    target_group = api.rpartition("/")[0] if isinstance(api, str) else ""
    own = f"{kind}/{path_get(obj, ('metadata', 'name'))}"
    annotations = path_get(obj, ("metadata", "annotations"))
    annotations = annotations if isinstance(annotations, dict) else {}
    held = str(annotations.get(row.paused_replicas, "")) if row.paused_replicas else ""
    if held.isdigit():
        count = int(held)
        replicas = Replicas(count, count, f"{own}, {row.paused_replicas}")
    elif row.paused and str(annotations.get(row.paused, "")).lower() == "true":
        replicas = Replicas(None, None, f"{own} is paused ({row.paused}): the live count stays")
    else:
        low = whole(path_get(obj, ("spec", row.low)))
        low = row.low_default if low is None else low
        idle = whole(path_get(obj, ("spec", row.idle))) if row.idle else None
        high = whole(path_get(obj, ("spec", row.high)))
        high = row.high_default if high is None else high
        if idle is not None:
            low = min(low, idle)
        refused = _refused_range(row, low, high)
        if refused:
            replicas = Replicas(None, None, f"{own} is refused ({refused}): the count is unknown")
        elif high is not None:
            replicas = Replicas(low, high, own)
        else:
            replicas = Replicas(None, None, own)
    namespace = path_get(obj, ("metadata", "namespace"))
    return Scaling(
        own,
        (target_group, target_kind, name),
        namespace if isinstance(namespace, str) and namespace else None,
        replicas,
        row,
    )


def defaulted(why: str, scaling: Scaling | None) -> Replicas:
    """The API server's default 1, set because ``why``; an autoscaler scales it back."""
    said = f"the API server's default ({why})"
    if scaling is None or scaling.replicas.low is None or scaling.replicas.high is None:
        return Replicas(1, 1, said)
    low, high = scaling.replicas.low, scaling.replicas.high
    return Replicas(min(1, low), max(1, high), f"{said}, then {scaling.name} ({low}..{high})")


def replicas_of(
    spec_replicas: Any, scaling: Scaling | None, old: Any = None, replaced: bool = False
) -> Replicas:
    """A workload's count: its autoscaler's range (an HPA off at ``spec.replicas: 0``:
    0), else ``spec.replicas``, else 1 when OLD's ``old`` field is removed (the default
    apply leaves: ``REMOVED_SOURCE``) or the object is ``replaced`` whole (Argo CD's
    Replace=true: rollout_tools.py REPLACE_SOURCE), else unknown offline."""
    own = whole(spec_replicas)
    if own is None and replaced:
        why = "spec.replicas is absent and Argo CD's Replace=true replaces the whole object"
        return defaulted(why, scaling)
    if own is None and whole(old) is not None:
        why = f"OLD's spec.replicas {old} is removed: apply deletes the field"
        return defaulted(why, scaling)
    if own is not None and own < 0:  # ValidateNonnegativeField: refused
        return Replicas(None, None, f"spec.replicas {own} is negative: the API server refuses it")
    if scaling is not None:
        if own == 0 and scaling.row.zero_stops:
            return Replicas(0, 0, f"{SPEC}; {scaling.name} does not scale a workload at 0")
        return scaling.replicas
    if own is None:
        return UNKNOWN
    return Replicas(own, own, SPEC)


def target_key(scaling: Scaling, namespace: str) -> ResourceId:
    """The workload ``scaling`` names, in ``namespace``."""
    group, kind, name = scaling.target
    return ResourceId(group, kind, namespace, name)

"""What a rollout costs while it runs, by the controllers' own arithmetic: how many pods
it adds above the workload's count (surge), how many it takes down at once, the fewest
left available, in how many waves, and whether every pod is down at some point
(downtime). One function per strategy, for one pod count; the report (report/capacity.py)
runs it over an autoscaler's range and adds the requests (knowledge/podrequests.py).

``CAPACITY_RULES`` is the table the documentation shows (``decides-capacity``), each
row citing where Kubernetes defines it; ``tests/knowledge`` pins the numbers.

Decisions where upstream leaves a choice:

- StatefulSet ``maxUnavailable`` is modelled as Kubernetes 1.35 and later run it (the
  ``MaxUnavailableStatefulSet`` gate beta and on by default): up to maxUnavailable pods
  deleted at once (a percentage rounded **down**, at least 1, as
  ``getStatefulSetMaxUnavailable`` does, although the API documentation says up), under
  either ``podManagementPolicy`` (``updateStatefulSetAfterInvariantEstablished`` does not
  look at it; ``OrderedReady`` then re-creates them one by one, which the API calls
  "might not be effective"). Before 1.35 the field is ignored and every StatefulSet
  updates one pod at a time: fewer pods down and a longer rollout, so the figures given
  stay an upper bound of what is down and the duration a lower bound.
- A DaemonSet's percentages are of the nodes that should run its pod, unknown offline:
  ``--nodes N`` gives the number; without it only an absolute ``maxSurge`` /
  ``maxUnavailable`` (or 0) gives a figure.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Any, NamedTuple

from cmhash.knowledge.defaults import path_get
from cmhash.knowledge.strategy import whole

DEPLOY = "kubernetes/kubernetes pkg/controller/deployment/util/deployment_util.go"
INTSTR = (
    "kubernetes/apimachinery pkg/util/intstr/intstr.go GetScaledValueFromIntOrPercent "
    "(a percentage: math.Ceil when rounding up, math.Floor otherwise)"
)
DISRUPTIONS = (
    "https://kubernetes.io/docs/concepts/workloads/pods/disruptions/#pod-disruption-budgets "
    '("workload resources (such as Deployment and StatefulSet) are not limited by PDBs '
    'when doing rolling upgrades"; a PDB limits evictions through the Eviction API)'
)


class CapacityRule(NamedTuple):
    name: str
    kinds: str
    rule: str
    source: str


CAPACITY_RULES: tuple[CapacityRule, ...] = (
    CapacityRule(
        "deployment-fenceposts",
        "Deployment (RollingUpdate)",
        "maxSurge and maxUnavailable default to 25%; a percentage of the replicas: surge "
        "rounds up, unavailable rounds down; both 0 → unavailable 1; unavailable at most "
        "the replicas; replicas 0 → unavailable 0",
        f"{DEPLOY} ResolveFenceposts, MaxUnavailable, MaxSurge; {INTSTR}; "
        "pkg/apis/apps/v1/defaults.go SetDefaults_Deployment (25%, 25%)",
    ),
    CapacityRule(
        "deployment-rolling",
        "Deployment (RollingUpdate)",
        "at most replicas + surge pods (the surge at most the replicas), at least replicas "
        "minus unavailable available; waves "
        "≥ ceil(replicas / (surge + unavailable)); every pod down at some point when "
        "unavailable ≥ replicas",
        f"{DEPLOY} NewRSNewReplicas (maxTotalPods = replicas + maxSurge; scaleUpCount "
        "at most replicas - newRS.replicas: 'Do not exceed the number of desired "
        "replicas'); "
        "pkg/controller/deployment/rolling.go reconcileOldReplicaSets "
        "(minAvailable = replicas - maxUnavailable)",
    ),
    CapacityRule(
        "deployment-recreate",
        "Deployment (Recreate)",
        "every old pod stops before a new one starts: no surge, all unavailable, one "
        "wave, downtime",
        "kubernetes/kubernetes pkg/controller/deployment/recreate.go rolloutRecreate, "
        'oldPodsRunning ("Do not process a deployment when it has old pods running")',
    ),
    CapacityRule(
        "statefulset-rolling",
        "StatefulSet (RollingUpdate)",
        "the pods with ordinal ≥ partition, highest first, no surge; maxUnavailable at "
        "once (default 1; a percentage rounds down, at least 1; Kubernetes 1.35 and "
        "later, one at a time before); downtime when every pod is updated at once (one "
        "replica, or maxUnavailable ≥ replicas); a partition lowered alone updates only "
        "the ordinals it held back (those below the old partition)",
        "kubernetes/kubernetes pkg/controller/statefulset/stateful_set_control.go "
        "updateStatefulSet, updateStatefulSetAfterInvariantEstablished (only pods whose "
        "revision is not the update revision are deleted); "
        'stateful_set_utils.go getStatefulSetMaxUnavailable ("round down to at least 1"); '
        "pkg/features/kube_features.go MaxUnavailableStatefulSet (beta, on, 1.35)",
    ),
    CapacityRule(
        "daemonset-rolling",
        "DaemonSet (RollingUpdate)",
        "maxUnavailable (default 1) and maxSurge (default 0) of the nodes that should "
        "run the pod, both rounded up; both 0 → unavailable 1; the node count is "
        "unknown offline (--nodes N)",
        "kubernetes/kubernetes pkg/controller/daemon/util/daemonset_util.go SurgeCount, "
        "UnavailableCount; pkg/controller/daemon/update.go updatedDesiredNodeCounts; "
        "pkg/apis/apps/v1/defaults.go SetDefaults_DaemonSet",
    ),
    CapacityRule(
        "recreated-by-engine",
        "any (Flux force, Argo CD Force=true)",
        "the object is deleted and created again: every pod stops; the new ones may be "
        "scheduled while the old ones still terminate (counted as surge: the worst "
        "case), except a StatefulSet's or a bare Pod's, which take the old pods' names "
        "and wait for them to go; downtime",
        "fluxcd/pkg ssa/manager_apply.go Apply (delete with background propagation, "
        "then create); argoproj/gitops-engine pkg/sync/sync_context.go (kubectl "
        "replace --force)",
    ),
    CapacityRule(
        "bare-pod-in-place",
        "Pod",
        "the kubelet restarts the container in place: the one pod is not ready "
        "meanwhile (downtime), no surge",
        "kubernetes/kubernetes pkg/kubelet/kuberuntime/kuberuntime_manager.go "
        "computePodActions (a changed container is killed and started again)",
    ),
    CapacityRule(
        "autoscaled-range",
        "any with an HPA / KEDA ScaledObject",
        "each figure at every count of the range: the peak of surge, unavailable and "
        "waves, the fewest available; downtime if at any count",
        "knowledge/replicas.py (the autoscalers' ranges)",
    ),
    CapacityRule(
        "downtime-not-pdb",
        "any",
        "a PodDisruptionBudget does not prevent a rollout's downtime: the controller "
        "deletes its own pods, which no budget limits",
        DISRUPTIONS,
    ),
)


def scaled(value: Any, total: int, round_up: bool) -> int | None:
    """``GetScaledValueFromIntOrPercent``: an int as is, ``"p%"`` of ``total`` rounded
    up or down; None for anything the API server refuses (a string without %, a
    negative number)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, float):
        value = whole(value)  # 2.0 is the 2 kubectl sends; 1.5 is refused
        if value is None:
            return None
    if isinstance(value, int):
        return value if value >= 0 else None
    if isinstance(value, str):
        m = re.fullmatch(r"([0-9]+)%", value)
        if m is None:
            return None
        exact = int(m.group(1)) * total
        return -(-exact // 100) if round_up else exact // 100
    return None


def percent_or_int(value: Any) -> bool:
    """Whether the value depends on the count (a percentage)."""
    return isinstance(value, str) and value.endswith("%")


class Figures(NamedTuple):
    """A rollout at one pod count (None: unknown offline)."""

    surge: int | None
    unavailable: int | None
    min_available: int | None
    waves: int | None
    downtime: bool | None
    why: str = ""  # what makes it a downtime, in the manifest's words
    fix: str = ""  # the fix that helps this case (else the strategy's FIX)


def _full(value: Any) -> bool:
    """A percentage of 100 or more: it scales with the count, so more replicas never
    bring it below the count."""
    return percent_or_int(value) and (scaled(value, 100, False) or 0) >= 100


def resolve_fenceposts(max_surge: Any, max_unavailable: Any, desired: int) -> tuple[int, int]:
    """``ResolveFenceposts``: (surge, unavailable); an absent value is 0 here (the API
    server's defaults come first: ``deployment``). ValueError where upstream errs."""
    surge = scaled(0 if max_surge is None else max_surge, desired, True)
    unavailable = scaled(0 if max_unavailable is None else max_unavailable, desired, False)
    if surge is None or unavailable is None:
        raise ValueError("invalid type: string is not a percentage")
    if surge == 0 and unavailable == 0:
        unavailable = 1  # "on the theory that surge might not work due to quota"
    return surge, unavailable


def deployment(spec: Mapping[str, Any], n: int) -> Figures | None:
    """A RollingUpdate Deployment of ``n`` replicas (None: a value the API refuses)."""
    rolling = path_get(spec, ("strategy", "rollingUpdate")) or {}
    ms, mu = path_get(rolling, ("maxSurge",)), path_get(rolling, ("maxUnavailable",))
    ms, mu = ("25%" if ms is None else ms), ("25%" if mu is None else mu)  # the defaults
    try:
        surge, unavailable = resolve_fenceposts(ms, mu, n)
    except ValueError:
        return None
    unavailable = 0 if n == 0 else min(unavailable, n)  # MaxUnavailable
    # NewRSNewReplicas: "Do not exceed the number of desired replicas" (the new
    # ReplicaSet), and the old pods are never more than the replicas: at most +n
    surge = min(surge, n)
    waves = math.ceil(n / (surge + unavailable)) if n and surge + unavailable else 0
    down = n >= 1 and unavailable >= n
    why = ""
    if down:
        why = (
            f"replicas {n}, maxSurge {ms} and maxUnavailable {mu} resolve to "
            f"+{surge} / -{unavailable}: every pod may stop before a new one is ready"
        )
    fix = FIX_PERCENT if down and _full(mu) else ""
    return Figures(surge, unavailable, n - unavailable, waves, down, why, fix)


def recreate(n: int) -> Figures:
    why = "strategy Recreate stops every pod before a new one starts" if n else ""
    return Figures(0, n, 0, 1 if n else 0, n >= 1, why)


def recreated(n: int, engine: str, same_names: bool = False) -> Figures:
    """Deleted (background propagation) and created again: the new pods may start while
    the old ones still terminate, and hold their requests meanwhile, except where a new
    pod takes an old one's name (a StatefulSet's, a bare Pod): it waits for it to go."""
    why = f"{engine} deletes and re-creates it: every pod stops" if n else ""
    return Figures(0 if same_names else n, n, 0, 1 if n else 0, n >= 1, why)


def statefulset(spec: Mapping[str, Any], n: int, held: int | None = None) -> Figures | None:
    """A RollingUpdate StatefulSet of ``n`` replicas: the pods at or above the partition;
    below ``held`` only (the partition before it was lowered, the template unchanged:
    the ordinals at or above it already run the update revision, and the controller
    deletes only pods whose revision is not the update revision)."""
    rolling = path_get(spec, ("updateStrategy", "rollingUpdate")) or {}
    partition = whole(path_get(rolling, ("partition",))) or 0  # 3.0, 1e3: kubectl's integer
    top = n if held is None else min(n, held)
    updated = max(0, top - max(partition, 0))
    mu = path_get(rolling, ("maxUnavailable",))
    got = scaled(1 if mu is None else mu, n, False)
    if got is None:
        return None
    batch = max(got, 1)  # "round down to at least 1"
    unavailable = min(batch, updated)
    waves = math.ceil(updated / batch) if updated else 0
    down = n >= 1 and updated >= 1 and unavailable >= n
    why = fix = ""
    if down:
        why = (
            f"replicas {n}: its only pod is replaced"
            if n == 1
            else f"replicas {n} and maxUnavailable {batch}: every pod is replaced at once"
        )
        if n == 1:
            fix = FIX_STATEFULSET_ONE
        elif _full(mu):
            fix = FIX_STATEFULSET_PERCENT
    return Figures(0, unavailable, n - unavailable, waves, down, why, fix)


def daemonset(spec: Mapping[str, Any], nodes: int | None) -> Figures | None:
    """A RollingUpdate DaemonSet on ``nodes`` nodes (None: unknown offline)."""
    rolling = path_get(spec, ("updateStrategy", "rollingUpdate")) or {}
    ms, mu = path_get(rolling, ("maxSurge",)), path_get(rolling, ("maxUnavailable",))
    ms, mu = (0 if ms is None else ms), (1 if mu is None else mu)  # the defaults
    if nodes is None:
        surge = None if percent_or_int(ms) and scaled(ms, 100, True) else scaled(ms, 0, True)
        if percent_or_int(mu):
            unavailable = None if scaled(mu, 100, True) else 0
        else:
            unavailable = scaled(mu, 0, True)
        if surge == 0 and unavailable == 0:
            unavailable = 1
        down = True if mu == "100%" else None
        why = "maxUnavailable 100%: every node's pod stops at once" if down else ""
        return Figures(surge, unavailable, None, None, down, why)
    surge, unavailable = scaled(ms, nodes, True), scaled(mu, nodes, True)
    if surge is None or unavailable is None:
        return None
    if surge == 0 and unavailable == 0 and nodes > 0:
        unavailable = 1
    surge, unavailable = min(surge, nodes), min(unavailable, nodes)
    per = surge + unavailable
    waves = math.ceil(nodes / per) if nodes and per else 0
    down = nodes >= 1 and unavailable >= nodes
    why = f"{nodes} nodes and maxUnavailable {mu}: every node's pod stops at once" if down else ""
    return Figures(surge, unavailable, nodes - unavailable, waves, down, why)


def in_place() -> Figures:
    return Figures(0, 1, 0, 1, True, "a bare Pod's container restarts in place")


FIX = (
    "set maxSurge: 1 (and maxUnavailable: 0) so that a new pod is ready before an old "
    "one stops, or run more replicas; a PodDisruptionBudget is not the fix: it limits "
    "evictions (a node drain), not the controller deleting its own pods in a rollout"
)
FIX_RECREATE = (
    "use strategy RollingUpdate with maxSurge: 1 and maxUnavailable: 0 if two versions "
    "may run side by side (Recreate is often chosen because they may not: a "
    "ReadWriteOnce volume, a schema migration); a PodDisruptionBudget is not the fix: "
    "it limits evictions, not the rollout's own deletions"
)
FIX_PERCENT = (
    "set maxSurge: 1 (and maxUnavailable: 0) so that a new pod is ready before an old "
    "one stops, or a maxUnavailable below 100% (a percentage scales with the replicas: "
    "more replicas do not help); a PodDisruptionBudget is not the fix: it limits "
    "evictions (a node drain), not the controller deleting its own pods in a rollout"
)
FIX_STATEFULSET = (
    "set a maxUnavailable below the replicas (or run more replicas than it); a "
    "PodDisruptionBudget is not the fix: it limits evictions, not the StatefulSet "
    "controller deleting its pods"
)
FIX_STATEFULSET_ONE = (
    "run more replicas (a StatefulSet has no surge, and maxUnavailable is at least 1: "
    "with one replica its pod always stops); a PodDisruptionBudget is not the fix: it "
    "limits evictions, not the StatefulSet controller deleting its pods"
)
FIX_STATEFULSET_PERCENT = (
    "set a maxUnavailable below 100% (a percentage scales with the replicas: more "
    "replicas do not help); a PodDisruptionBudget is not the fix: it limits evictions, "
    "not the StatefulSet controller deleting its pods"
)
FIX_DAEMONSET = (
    "set maxSurge: 1 with maxUnavailable: 0 (the new pod starts before the old one "
    "stops) or a lower maxUnavailable; a PodDisruptionBudget is not the fix: it limits "
    "evictions, not the DaemonSet controller's own deletions"
)
FIX_RECREATED = (
    "let the engine apply the change without deleting the object (remove the force "
    "option, or the immutable change that needs it); a PodDisruptionBudget is not the "
    "fix: deleting the object deletes its pods without eviction"
)
FIX_POD = (
    "run it from a Deployment with more than one replica; a PodDisruptionBudget is not "
    "the fix: the kubelet restarts the container without eviction"
)

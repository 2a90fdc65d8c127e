"""Rollout rules of Kubernetes' StatefulSet and DaemonSet controllers (apps/v1):
OnDelete, partitions (which ordinals, at a count that may be an autoscaler's range or
unknown offline), maxUnavailable, scaling from and to zero, and the changes that release
pods held back (knowledge/rollout_holds.py). knowledge/rollout.py puts them in RULES;
each row cites where Kubernetes defines the behaviour."""

from __future__ import annotations

from cmhash.knowledge.rollout_holds import (
    HOLDS,
    RELEASED,
    old_field,
    ordinals,
    released_only,
)
from cmhash.knowledge.rollout_rule import (
    DAEMONSET,
    STATEFULSET,
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
from cmhash.knowledge.strategy import whole

K8S_STS = "https://kubernetes.io/docs/concepts/workloads/controllers/statefulset/"
STS_VALIDATION = (
    "kubernetes/kubernetes pkg/apis/apps/validation/validation.go ValidateStatefulSetSpec"
)


def _partition(c: Workload) -> int:
    return whole(c.spec("updateStrategy", "rollingUpdate", "partition")) or 0


def _partition_text(c: Workload) -> str:
    p, n = _partition(c), c.replicas()
    out = f"rollingUpdate.partition {p}: only pods with ordinal ≥ {p} are updated"
    if n.exact is None:  # a range or unknown: which ordinals exist depends on it
        out += f", {ordinals(p, n)}"
    return out + _max_unavailable(c)


def _partition_all(c: Workload) -> bool:
    n = c.replicas()
    return n.known and n.high is not None and _partition(c) >= n.high


def _released_partition(c: Workload) -> str | None:
    """Which pods a StatefulSet change that leaves the template alone releases."""
    old_type = old_field(c, "spec", "updateStrategy", "type")
    q = _partition(c)
    if old_type == "OnDelete" and c.spec("updateStrategy", "type") != "OnDelete":
        return (
            f"updateStrategy OnDelete → RollingUpdate: the pods not deleted since an "
            f"earlier template change (if any) are updated, {ordinals(q, c.replicas())}"
        )
    p = whole(old_field(c, "spec", "updateStrategy", "rollingUpdate", "partition")) or 0
    if p <= q:
        return None
    return (
        f"rollingUpdate.partition lowered from {p} to {q}: the pods it held back on an "
        f"older template (if any) are updated, {ordinals(q, c.replicas(), p)}" + _max_unavailable(c)
    )


def _max_unavailable(c: Workload) -> str:
    """rollingUpdate.maxUnavailable: how many pods may be replaced at once, where the
    cluster honours it (Kubernetes 1.35+, or the MaxUnavailableStatefulSet gate)."""
    m = c.spec("updateStrategy", "rollingUpdate", "maxUnavailable")
    if m is None or m == 1 or isinstance(m, bool):
        return ""
    return (
        f", up to {m} pods at a time (maxUnavailable; Kubernetes 1.35+, or earlier "
        "with the MaxUnavailableStatefulSet feature gate: else one at a time)"
    )


STATEFULSET_RULES = (
    Rule(
        "statefulset-on-delete-rolling-update",
        STATEFULSET,
        lambda c: (
            c.spec("updateStrategy", "type") == "OnDelete"
            and c.spec("updateStrategy", "rollingUpdate") is not None
        ),
        "updateStrategy.type: OnDelete with a rollingUpdate block (a partition...)",
        Outcome.REFUSED,
        lambda c: (
            "updateStrategy.rollingUpdate is only allowed with type RollingUpdate: the API "
            "server refuses the StatefulSet; drop rollingUpdate or use RollingUpdate"
        ),
        f'{STS_VALIDATION} (case OnDeleteStatefulSetStrategyType: rollingUpdate "only '
        "allowed for updateStrategy 'RollingUpdate'\")",
    ),
    Rule(
        "statefulset-negative-partition",
        STATEFULSET,
        lambda c: _partition(c) < 0,
        "rollingUpdate.partition < 0",
        Outcome.REFUSED,
        lambda c: (
            f"rollingUpdate.partition {_partition(c)} is negative: the API server refuses "
            "the StatefulSet (0 updates every pod)"
        ),
        f"{STS_VALIDATION} (ValidateNonnegativeField on rollingUpdate.partition)",
    ),
    refused_strategy_rule("statefulset-strategy-refused", STATEFULSET),
    Rule(
        "statefulset-on-delete",
        STATEFULSET,
        lambda c: c.spec("updateStrategy", "type") == "OnDelete",
        "updateStrategy.type: OnDelete",
        Outcome.NONE,
        lambda c: "updateStrategy OnDelete: pods pick up the change only when deleted",
        f"{K8S_STS}#on-delete; kubernetes/kubernetes pkg/controller/statefulset/"
        'stateful_set_control.go ("for the OnDelete strategy we short circuit")',
    ),
    Rule(
        "statefulset-scale-from-zero",
        STATEFULSET,
        scales_from_zero,
        "replicas 0 in OLD, not 0 in NEW",
        Outcome.STARTS,
        starts,
        f"{K8S_STS}#scaling-a-statefulset; kubernetes/kubernetes pkg/controller/"
        "statefulset/stateful_set_utils.go newVersionedStatefulSetPod (a pod created at "
        "an ordinal ≥ the partition gets the update revision)",
    ),
    Rule(
        "statefulset-scale-to-zero",
        STATEFULSET,
        scales_to_zero,
        "replicas 0 in NEW, not 0 in OLD",
        Outcome.STOPS,
        stops,
        f"{K8S_STS}#scaling-a-statefulset (pods are deleted, highest ordinal first)",
    ),
    Rule(
        "statefulset-zero-replicas",
        STATEFULSET,
        lambda c: c.replicas().exact == 0,
        ZERO,
        Outcome.NONE,
        no_pod,
        f"{K8S_STS}#scaling-a-statefulset",
    ),
    Rule(
        "statefulset-partition-all",
        STATEFULSET,
        _partition_all,
        "rollingUpdate.partition ≥ replicas (every count an autoscaler allows)",
        Outcome.NONE,
        lambda c: (
            f"rollingUpdate.partition {_partition(c)} ≥ {c.replicas().said()}: no pod is "
            "updated until the partition is lowered (or a pod is deleted)"
        ),
        f"{K8S_STS}#partitions (if a partition is greater than .spec.replicas, updates "
        "to .spec.template will not be propagated to its Pods); kubernetes/kubernetes "
        "pkg/controller/statefulset/stateful_set_control.go (pods are updated from the "
        "highest ordinal down to updateMin, the partition)",
    ),
    Rule(
        "statefulset-released",
        STATEFULSET,
        released_only,
        "rollingUpdate.partition lowered, or updateStrategy OnDelete → RollingUpdate, "
        "the template unchanged",
        Outcome.PARTIAL,
        lambda c: RELEASED + str(_released_partition(c)),
        f"{K8S_STS}#partitions (lower the partition to roll out the rest); {HOLDS[1].source}",
    ),
    Rule(
        "statefulset-partition",
        STATEFULSET,
        lambda c: _partition(c) > 0,
        "rollingUpdate.partition > 0",
        Outcome.PARTIAL,
        _partition_text,
        f"{K8S_STS}#partitions (pods with an ordinal greater than or equal to the "
        "partition are updated)",
    ),
    Rule(
        "statefulset-rolls",
        STATEFULSET,
        always,
        "otherwise",
        Outcome.ROLLS,
        lambda c: "rolling update, highest ordinal first" + _max_unavailable(c) + scaled(c),
        f"{K8S_STS}#rolling-updates; {K8S_STS}#maximum-unavailable-pods (the "
        "MaxUnavailableStatefulSet feature gate: alpha in 1.24, on by default from 1.35 "
        "(pkg/features/kube_features.go); without it one pod at a time)",
    ),
)

DAEMONSET_RULES = (
    refused_strategy_rule("daemonset-strategy-refused", DAEMONSET),
    Rule(
        "daemonset-on-delete",
        DAEMONSET,
        lambda c: c.spec("updateStrategy", "type") == "OnDelete",
        "updateStrategy.type: OnDelete",
        Outcome.NONE,
        lambda c: "updateStrategy OnDelete: pods pick up the change only when deleted",
        "https://kubernetes.io/docs/tasks/manage-daemon/update-daemon-set/"
        "#daemonset-update-strategy",
    ),
    Rule(
        "daemonset-released",
        DAEMONSET,
        released_only,
        "updateStrategy OnDelete → RollingUpdate, the template unchanged",
        Outcome.ROLLS,
        lambda c: (
            f"{RELEASED}updateStrategy OnDelete → RollingUpdate: the pods not deleted "
            "since an earlier template change (if any) are replaced, node by node"
        ),
        "https://kubernetes.io/docs/tasks/manage-daemon/update-daemon-set/"
        f"#daemonset-update-strategy; {HOLDS[2].source}",
    ),
    Rule(
        "daemonset-rolls",
        DAEMONSET,
        always,
        "otherwise",
        Outcome.ROLLS,
        lambda c: "rolling update, node by node",
        "https://kubernetes.io/docs/tasks/manage-daemon/update-daemon-set/",
    ),
)

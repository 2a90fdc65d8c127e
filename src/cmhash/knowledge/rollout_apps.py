"""Rollout rules of Kubernetes' rolling controllers (apps/v1): Deployment, StatefulSet,
DaemonSet; and first, for every apps/v1 workload, the fields the API server refuses to
change (knowledge/defaults.py FIXED). knowledge/rollout.py puts them in RULES; each row cites
where Kubernetes defines the behaviour."""

from __future__ import annotations

from cmhash.knowledge.rollout_rule import (
    DAEMONSET,
    DEPLOYMENT,
    STATEFULSET,
    Outcome,
    Rule,
    Workload,
    always,
    replicas,
)

K8S_DEPLOYMENT = "https://kubernetes.io/docs/concepts/workloads/controllers/deployment/"
K8S_STS = "https://kubernetes.io/docs/concepts/workloads/controllers/statefulset/"
STS_VALIDATION = (
    "kubernetes/kubernetes pkg/apis/apps/validation/validation.go ValidateStatefulSetSpec"
)


def _strategy(c: Workload) -> str:
    t = c.spec("strategy", "type")
    return (
        "Recreate: every old pod stops before new ones start"
        if t == "Recreate"
        else ("rolling update")
    )


def _partition(c: Workload) -> int:
    p = c.spec("updateStrategy", "rollingUpdate", "partition")
    return p if isinstance(p, int) else 0


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


IMMUTABLE_RULES = (
    Rule(
        "immutable-field",
        (
            ("apps", "Deployment"),
            ("apps", "DaemonSet"),
            ("apps", "StatefulSet"),
            ("apps", "ReplicaSet"),
        ),
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
        "deployment-zero-replicas",
        DEPLOYMENT,
        lambda c: replicas(c) == 0,
        "spec.replicas: 0",
        Outcome.NONE,
        lambda c: "spec.replicas is 0: no pod runs; new pods get the new template",
        f"{K8S_DEPLOYMENT}#scaling-a-deployment; pkg/controller/deployment/rolling.go "
        "(the new ReplicaSet is scaled to spec.replicas)",
    ),
    Rule(
        "deployment-rolls",
        DEPLOYMENT,
        always,
        "otherwise (RollingUpdate or Recreate)",
        Outcome.ROLLS,
        _strategy,
        f"{K8S_DEPLOYMENT}#updating-a-deployment (a rollout is triggered if and only if "
        ".spec.template is changed)",
    ),
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
        "statefulset-zero-replicas",
        STATEFULSET,
        lambda c: replicas(c) == 0,
        "spec.replicas: 0",
        Outcome.NONE,
        lambda c: "spec.replicas is 0: no pod runs",
        f"{K8S_STS}#scaling-a-statefulset",
    ),
    Rule(
        "statefulset-partition-all",
        STATEFULSET,
        lambda c: isinstance(replicas(c), int) and _partition(c) >= replicas(c),
        "rollingUpdate.partition ≥ spec.replicas",
        Outcome.NONE,
        lambda c: (
            f"rollingUpdate.partition {_partition(c)} ≥ replicas {replicas(c)}: no pod is "
            "updated until the partition is lowered (or a pod is deleted)"
        ),
        f"{K8S_STS}#partitions (if a partition is greater than .spec.replicas, updates "
        "to .spec.template will not be propagated to its Pods); kubernetes/kubernetes "
        "pkg/controller/statefulset/stateful_set_control.go (pods are updated from the "
        "highest ordinal down to updateMin, the partition)",
    ),
    Rule(
        "statefulset-partition",
        STATEFULSET,
        lambda c: _partition(c) > 0,
        "rollingUpdate.partition > 0",
        Outcome.PARTIAL,
        lambda c: (
            f"rollingUpdate.partition {_partition(c)}: only pods with ordinal "
            f"≥ {_partition(c)} are updated" + _max_unavailable(c)
        ),
        f"{K8S_STS}#partitions (pods with an ordinal greater than or equal to the "
        "partition are updated)",
    ),
    Rule(
        "statefulset-rolls",
        STATEFULSET,
        always,
        "otherwise",
        Outcome.ROLLS,
        lambda c: "rolling update, highest ordinal first" + _max_unavailable(c),
        f"{K8S_STS}#rolling-updates; {K8S_STS}#maximum-unavailable-pods (the "
        "MaxUnavailableStatefulSet feature gate: alpha in 1.24, on by default from 1.35 "
        "(pkg/features/kube_features.go); without it one pod at a time)",
    ),
)

DAEMONSET_RULES = (
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
        "daemonset-rolls",
        DAEMONSET,
        always,
        "otherwise",
        Outcome.ROLLS,
        lambda c: "rolling update, node by node",
        "https://kubernetes.io/docs/tasks/manage-daemon/update-daemon-set/",
    ),
)

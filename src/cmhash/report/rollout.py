"""report: what Kubernetes (or the controller that owns a kind) does when a workload's pod
template changes, as one table of rules: per kind, conditions on the NEW object tried in
order, the first that holds decides. Each row cites where the behaviour is defined.

A rule sees the workload's object (plain data), the template causes (podtemplate.py),
and the Argo Rollouts in NEW that take over a Deployment through ``workloadRef``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, NamedTuple

from cmhash.knowledge.hooks import HOOK_ANNOTATIONS
from cmhash.model import ResourceId, TextEnum
from cmhash.report.objects import path_get
from cmhash.report.podtemplate import CONTAINERS, TemplateCause
from cmhash.report.podupdate import VALIDATION as POD_VALIDATION
from cmhash.report.podupdate import Effect, classify, describe


class Outcome(TextEnum):
    ROLLS = "rolls"  # every pod is replaced
    PARTIAL = "partial"  # some pods are replaced (a StatefulSet partition)
    IN_PLACE = "in place"  # a bare Pod's containers restart with a new image
    NONE = "none"  # applied, but no pod is replaced
    NEXT_RUN = "next run"  # a CronJob: the next Job uses it
    REFUSED = "refused"  # the API server refuses the change: kubectl apply fails


RESTARTS = frozenset({Outcome.ROLLS, Outcome.PARTIAL, Outcome.IN_PLACE})


class Takeover(NamedTuple):
    """The Argo Rollout that runs a workload's template (``spec.workloadRef``)."""

    name: str  # "Rollout/name (strategy)"
    obj: Mapping[str, Any]  # the Rollout (plain data): whether it is paused, its replicas

    def spec(self, *path: str) -> Any:
        return path_get(self.obj, ("spec", *path))


class Context(NamedTuple):
    obj: Mapping[str, Any]  # the NEW object
    causes: tuple[TemplateCause, ...]  # template changes other than the checksum
    rollouts: Mapping[ResourceId, Takeover]  # Deployment -> the Rollout taking it over
    id: ResourceId
    runs_again_as: str | None = None  # --jobs=rename: the Job's new name (analyze/jobs.py)
    old: Mapping[str, Any] | None = None  # the OLD object (a bare Pod's update is judged on both)
    # the name in OLD, when it is not ``id``'s: a --jobs=rename Job in cmhash's own
    # output on both sides (report/workloads.py pair_key)
    was: str | None = None

    @property
    def old_name(self) -> str:
        return self.was if self.was is not None else self.id.name

    def spec(self, *path: str) -> Any:
        return path_get(self.obj, ("spec", *path))


class Rule(NamedTuple):
    name: str  # stable id (JSON "rule")
    kinds: tuple[tuple[str, str], ...]  # (group, kind)
    when: Callable[[Context], bool]
    condition: str  # ``when`` in words (docs/report.md)
    outcome: Outcome
    text: Callable[[Context], str]
    source: str  # where Kubernetes (or the controller) defines it


def _true(value: Any) -> bool:
    """A boolean field as kubectl's YAML reads it (``true``, ``yes``, ``on``...: the
    report reads objects as plain data, where those are still strings)."""
    from cmhash.parse.k8syaml import TRUE_WORDS

    return value is True or (isinstance(value, str) and value in TRUE_WORDS)


def _replicas(c: Context) -> Any:
    r = c.spec("replicas")
    return 1 if r is None else r


def _always(c: Context) -> bool:
    return True


def _strategy(c: Context) -> str:
    t = c.spec("strategy", "type")
    return (
        "Recreate: every old pod stops before new ones start"
        if t == "Recreate"
        else ("rolling update")
    )


def _partition(c: Context) -> int:
    p = c.spec("updateStrategy", "rollingUpdate", "partition")
    return p if isinstance(p, int) else 0


def _max_unavailable(c: Context) -> str:
    """rollingUpdate.maxUnavailable: how many pods may be replaced at once, where the
    cluster honours it (Kubernetes 1.35+, or the MaxUnavailableStatefulSet gate)."""
    m = c.spec("updateStrategy", "rollingUpdate", "maxUnavailable")
    if m is None or m == 1 or isinstance(m, bool):
        return ""
    return (
        f", up to {m} pods at a time (maxUnavailable; Kubernetes 1.35+, or earlier "
        "with the MaxUnavailableStatefulSet feature gate: else one at a time)"
    )


def _argo_strategy(c: Context) -> str:
    if c.spec("strategy", "blueGreen") is not None:
        auto = c.spec("strategy", "blueGreen", "autoPromotionEnabled")
        how = "promoted by hand (autoPromotionEnabled: false)" if auto is False else "then promoted"
        return f"blue-green: a preview ReplicaSet comes up, {how}"
    steps = c.spec("strategy", "canary", "steps")
    if c.spec("strategy", "canary") is not None:
        n = len(steps) if isinstance(steps, list) else 0
        return f"canary in {n} step{'' if n == 1 else 's'}" if n else "canary"
    return "rolling update"


def _triggers_without_config_change(c: Context) -> bool:
    triggers = c.spec("triggers")
    if not isinstance(triggers, list):
        return False  # absent: the ConfigChange trigger is the default
    return not any(isinstance(t, dict) and t.get("type") == "ConfigChange" for t in triggers)


def _no_latest_traffic(c: Context) -> bool:
    traffic = c.spec("traffic")
    if not isinstance(traffic, list):
        return False  # no traffic block: 100% to the latest revision
    return not any(
        isinstance(t, dict) and t.get("latestRevision") is True and t.get("percent", 0) != 0
        for t in traffic
    )


def _kept_revision_name(c: Context) -> str | None:
    """A Knative Service's own revision name (spec.template.metadata.name), when OLD
    had the same: a template change under it is refused."""
    path = ("spec", "template", "metadata", "name")
    name = path_get(c.obj, path)
    if not isinstance(name, str) or not name or c.old is None:
        return None
    return name if path_get(c.old, path) == name else None


def _pod(c: Context) -> tuple[Effect, str]:
    """A bare Pod's update, field by field (podupdate.py POD_FIELDS)."""
    return describe(classify((c.old or {}, c.obj), c.causes))


def _is_hook(c: Context) -> bool:
    annotations = path_get(c.obj, ("metadata", "annotations"))
    return isinstance(annotations, dict) and any(annotations.get(k) for k in HOOK_ANNOTATIONS)


DEPLOYMENT = (("apps", "Deployment"), ("extensions", "Deployment"))
DAEMONSET = (("apps", "DaemonSet"), ("extensions", "DaemonSet"))
STATEFULSET = (("apps", "StatefulSet"),)
REPLICASET = (("apps", "ReplicaSet"), ("extensions", "ReplicaSet"), ("", "ReplicationController"))
ROLLOUT = (("argoproj.io", "Rollout"),)
DEPLOYMENTCONFIG = (("apps.openshift.io", "DeploymentConfig"), ("", "DeploymentConfig"))
KNATIVE = (("serving.knative.dev", "Service"),)
K8S_DEPLOYMENT = "https://kubernetes.io/docs/concepts/workloads/controllers/deployment/"
K8S_STS = "https://kubernetes.io/docs/concepts/workloads/controllers/statefulset/"
STS_VALIDATION = (
    "kubernetes/kubernetes pkg/apis/apps/validation/validation.go ValidateStatefulSetSpec"
)
ARGO = "https://argoproj.github.io/argo-rollouts/"
OPENSHIFT_DC = (
    "https://docs.openshift.com/container-platform/4.14/applications/deployments/"
    "managing-deployment-processes.html (triggers); openshift/api apps/v1 types.go"
)


def _taken(c: Context) -> Takeover | None:
    return c.rollouts.get(c.id)


TAKEN_OVER = (*DEPLOYMENT, ("apps", "ReplicaSet"), ("", "PodTemplate"))
WORKLOAD_REF = (
    f"{ARGO}migrating/ (workloadRef); argoproj/argo-rollouts rollout/templateref.go "
    "(Resolve: the template of the Deployment, ReplicaSet or PodTemplate; a change of "
    "it bumps the Rollout's workload-generation annotation)"
)


def _fixed(c: Context) -> list[str]:
    """The immutable fields of the object that changed (immutable.py)."""
    from cmhash.report.immutable import changed

    return [f for f, _, _ in changed((c.id.group, c.id.kind), c.old, c.obj)]


RULES: tuple[Rule, ...] = (
    Rule(
        "immutable-field",
        (
            ("apps", "Deployment"),
            ("apps", "DaemonSet"),
            ("apps", "StatefulSet"),
            ("apps", "ReplicaSet"),
        ),
        lambda c: bool(_fixed(c)),
        "spec.selector changed (apps/v1), or a StatefulSet's spec outside replicas, "
        "ordinals, template, updateStrategy, revisionHistoryLimit, "
        "persistentVolumeClaimRetentionPolicy, minReadySeconds (volumeClaimTemplates...)",
        Outcome.REFUSED,
        lambda c: (
            f"{', '.join(_fixed(c))} cannot change: the API server refuses the update "
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
    # a workload taken over by a Rollout rolls as that Rollout does (rollout-paused,
    # rollout-zero-replicas below): its own paused or replicas no longer count
    Rule(
        "workload-ref-paused",
        TAKEN_OVER,
        lambda c: (t := _taken(c)) is not None and _true(t.spec("paused")),
        "an Argo Rollout's spec.workloadRef names it, and that Rollout is paused",
        Outcome.NONE,
        lambda c: (
            f"taken over by Argo {c.rollouts[c.id].name} (workloadRef), which is paused: "
            "nothing rolls until it is resumed"
        ),
        f"{WORKLOAD_REF}; {ARGO}features/specification/ (spec.paused)",
    ),
    Rule(
        "workload-ref-zero-replicas",
        TAKEN_OVER,
        lambda c: (t := _taken(c)) is not None and t.spec("replicas") == 0,
        "an Argo Rollout's spec.workloadRef names it, and that Rollout has spec.replicas: 0",
        Outcome.NONE,
        lambda c: (
            f"taken over by Argo {c.rollouts[c.id].name} (workloadRef), whose "
            "spec.replicas is 0: no pod runs"
        ),
        f"{WORKLOAD_REF}; {ARGO}features/specification/ (spec.replicas)",
    ),
    Rule(
        "workload-ref",
        TAKEN_OVER,
        lambda c: c.id in c.rollouts,
        "an Argo Rollout's spec.workloadRef names it",
        Outcome.ROLLS,
        lambda c: f"rolled out by Argo {c.rollouts[c.id].name} (workloadRef)",
        WORKLOAD_REF,
    ),
    Rule(
        "deployment-paused",
        DEPLOYMENT,
        lambda c: _true(c.spec("paused")),
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
        lambda c: _replicas(c) == 0,
        "spec.replicas: 0",
        Outcome.NONE,
        lambda c: "spec.replicas is 0: no pod runs; new pods get the new template",
        f"{K8S_DEPLOYMENT}#scaling-a-deployment; pkg/controller/deployment/rolling.go "
        "(the new ReplicaSet is scaled to spec.replicas)",
    ),
    Rule(
        "deployment-rolls",
        DEPLOYMENT,
        _always,
        "otherwise (RollingUpdate or Recreate)",
        Outcome.ROLLS,
        _strategy,
        f"{K8S_DEPLOYMENT}#updating-a-deployment (a rollout is triggered if and only if "
        ".spec.template is changed)",
    ),
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
        lambda c: _replicas(c) == 0,
        "spec.replicas: 0",
        Outcome.NONE,
        lambda c: "spec.replicas is 0: no pod runs",
        f"{K8S_STS}#scaling-a-statefulset",
    ),
    Rule(
        "statefulset-partition-all",
        STATEFULSET,
        lambda c: isinstance(_replicas(c), int) and _partition(c) >= _replicas(c),
        "rollingUpdate.partition ≥ spec.replicas",
        Outcome.NONE,
        lambda c: (
            f"rollingUpdate.partition {_partition(c)} ≥ replicas {_replicas(c)}: no pod is "
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
        _always,
        "otherwise",
        Outcome.ROLLS,
        lambda c: "rolling update, highest ordinal first" + _max_unavailable(c),
        f"{K8S_STS}#rolling-updates; {K8S_STS}#maximum-unavailable-pods (the "
        "MaxUnavailableStatefulSet feature gate: alpha in 1.24, on by default from 1.35 "
        "(pkg/features/kube_features.go); without it one pod at a time)",
    ),
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
        _always,
        "otherwise",
        Outcome.ROLLS,
        lambda c: "rolling update, node by node",
        "https://kubernetes.io/docs/tasks/manage-daemon/update-daemon-set/",
    ),
    Rule(
        "replicaset-no-rollout",
        REPLICASET,
        _always,
        "always",
        Outcome.NONE,
        lambda c: f"a {c.id.kind} has no rollout: only pods created later get the new template",
        "https://kubernetes.io/docs/concepts/workloads/controllers/replicaset/ (use a "
        "Deployment for updates); pkg/controller/replicaset/replica_set.go only counts pods",
    ),
    Rule(
        "cronjob-next-run",
        (("batch", "CronJob"),),
        _always,
        "always",
        Outcome.NEXT_RUN,
        lambda c: "the next Job uses the new template; a running Job keeps its own",
        "https://kubernetes.io/docs/concepts/workloads/controllers/cron-jobs/"
        "#modifying-a-cronjob (changes apply to new Jobs only)",
    ),
    Rule(
        "hook-recreated",
        (("batch", "Job"), ("", "Pod")),
        _is_hook,
        "a Helm or Argo CD hook (helm.sh/hook, argocd.argoproj.io/hook)",
        Outcome.NEXT_RUN,
        lambda c: (
            "a hook: Helm or Argo CD deletes and re-creates it when it runs next "
            "(hook delete policy before-hook-creation by default)"
        ),
        "https://helm.sh/docs/topics/charts_hooks/#hook-deletion-policies; "
        "argoproj/gitops-engine pkg/sync/hook/delete_policy.go (no policy: "
        "BeforeHookCreation)",
    ),
    Rule(
        "job-runs-again",
        (("batch", "Job"),),
        lambda c: c.runs_again_as is not None and c.runs_again_as != c.old_name,
        "--jobs=rename gives it a new name",
        Outcome.NEXT_RUN,
        lambda c: (
            f"--jobs=rename: it will run again as {c.runs_again_as} (a new Job; the old one"
            f"{', ' + c.old_name + ',' if c.old_name != c.id.name else ''} stays until Helm, "
            "Argo CD or a prune removes it)"
        ),
        "a Job of another name is another object: created, and run by the Job controller "
        "(https://kubernetes.io/docs/concepts/workloads/controllers/job/); cmhash "
        "docs/concepts/jobs.md",
    ),
    Rule(
        "job-immutable",
        (("batch", "Job"),),
        _always,
        "always",
        Outcome.REFUSED,
        lambda c: (
            "a Job's spec.template is immutable: kubectl apply is refused while the Job "
            "exists; delete and re-create it (or give it a new name)"
        ),
        "kubernetes/kubernetes pkg/apis/batch/validation/validation.go ValidateJobSpecUpdate "
        "(ValidateImmutableField on spec.template; narrow exceptions for suspended Jobs, "
        "KEP-2926)",
    ),
    Rule(
        "pod-refused",
        (("", "Pod"),),
        lambda c: _pod(c)[0] is Effect.REFUSED,
        "a spec field other than those ValidatePodUpdate allows changed (see the bare-Pod table)",
        Outcome.REFUSED,
        lambda c: _pod(c)[1],
        f"{POD_VALIDATION} (pod updates may not change fields other than updatablePodSpecFields)",
    ),
    Rule(
        "pod-restarts-container",
        (("", "Pod"),),
        lambda c: _pod(c)[0] is Effect.RESTARTS,
        "an image of a container (or of a sidecar init container) changed",
        Outcome.IN_PLACE,
        lambda c: _pod(c)[1],
        f"{POD_VALIDATION} (images may change); kubernetes/kubernetes pkg/kubelet/"
        "kuberuntime/kuberuntime_manager.go computePodActions (containerChanged: the "
        "container is killed and started again in the same Pod)",
    ),
    Rule(
        "pod-updated",
        (("", "Pod"),),
        _always,
        "otherwise: metadata, an init container's image, activeDeadlineSeconds, added "
        "tolerations, removed scheduling gates",
        Outcome.NONE,
        lambda c: _pod(c)[1],
        f"{POD_VALIDATION}; kubernetes/kubernetes pkg/kubelet/kuberuntime/"
        "kuberuntime_container.go computeInitContainerActions (a completed init container "
        "is not run again)",
    ),
    Rule(
        "podtemplate-runs-nothing",
        (("", "PodTemplate"),),
        _always,
        "always",
        Outcome.NONE,
        lambda c: "a PodTemplate runs nothing itself",
        "https://kubernetes.io/docs/concepts/workloads/pods/#pod-templates",
    ),
    Rule(
        "rollout-paused",
        ROLLOUT,
        lambda c: _true(c.spec("paused")),
        "spec.paused: true",
        Outcome.NONE,
        lambda c: "the Rollout is paused: nothing rolls until it is resumed",
        f"{ARGO}features/specification/ (spec.paused)",
    ),
    Rule(
        "rollout-zero-replicas",
        ROLLOUT,
        lambda c: _replicas(c) == 0,
        "spec.replicas: 0",
        Outcome.NONE,
        lambda c: "spec.replicas is 0: no pod runs",
        f"{ARGO}features/specification/ (spec.replicas)",
    ),
    Rule(
        "rollout-rolls",
        ROLLOUT,
        _always,
        "otherwise (canary, blueGreen)",
        Outcome.ROLLS,
        _argo_strategy,
        f"{ARGO}features/canary/, {ARGO}features/bluegreen/ (a change of spec.template "
        "starts an update)",
    ),
    Rule(
        "deploymentconfig-paused",
        DEPLOYMENTCONFIG,
        lambda c: _true(c.spec("paused")),
        "spec.paused: true",
        Outcome.NONE,
        lambda c: "the DeploymentConfig is paused: nothing rolls until it is resumed",
        OPENSHIFT_DC,
    ),
    Rule(
        "deploymentconfig-no-config-trigger",
        DEPLOYMENTCONFIG,
        _triggers_without_config_change,
        "spec.triggers given, none of type ConfigChange",
        Outcome.NONE,
        lambda c: (
            "spec.triggers has no ConfigChange trigger: a template change rolls "
            "nothing (oc rollout latest does)"
        ),
        OPENSHIFT_DC,
    ),
    Rule(
        "deploymentconfig-rolls",
        DEPLOYMENTCONFIG,
        _always,
        "otherwise (triggers absent, or a ConfigChange trigger)",
        Outcome.ROLLS,
        lambda c: "a new deployment (ConfigChange trigger)",
        OPENSHIFT_DC,
    ),
    Rule(
        "knative-revision-name-kept",
        KNATIVE,
        lambda c: _kept_revision_name(c) is not None,
        "spec.template.metadata.name given and the same as in OLD",
        Outcome.REFUSED,
        lambda c: (
            f"spec.template.metadata.name {_kept_revision_name(c)} is kept: Knative refuses "
            "a template change without a new revision name; rename the revision (or drop "
            "the name and let Knative generate one)"
        ),
        "knative/serving pkg/apis/serving/v1/revision_validation.go VerifyNameChange "
        '("Saw the following changes without a name change"), called by Service.Validate '
        "on update (service_validation.go)",
    ),
    Rule(
        "knative-pinned-traffic",
        KNATIVE,
        _no_latest_traffic,
        "spec.traffic given, no latestRevision entry with a percent",
        Outcome.NONE,
        lambda c: "a new Revision is created, but spec.traffic sends it no traffic",
        "https://knative.dev/docs/serving/traffic-management/ (latestRevision: true "
        "follows new Revisions; a revisionName pins one)",
    ),
    Rule(
        "knative-new-revision",
        KNATIVE,
        _always,
        "otherwise",
        Outcome.ROLLS,
        lambda c: "a new Revision, and traffic moves to it",
        "https://knative.dev/docs/serving/traffic-management/",
    ),
)

# a kind from workloadKinds: its row's ``rolls`` says
OTHER_ROLLS = Rule(
    "other-kind",
    (),
    _always,
    "always",
    Outcome.ROLLS,
    lambda c: "pod template changed",
    "workloadKinds",
)
OTHER_NONE = Rule(
    "other-kind-no-rollout",
    (),
    _always,
    "always",
    Outcome.NONE,
    lambda c: "its workloadKinds row says a template change rolls nothing",
    "workloadKinds",
)

_BY_KIND: dict[tuple[str, str], list[Rule]] = {}
for _rule in RULES:
    for _k in _rule.kinds:
        _BY_KIND.setdefault(_k, []).append(_rule)


class Decision(NamedTuple):
    outcome: Outcome
    rule: str
    text: str


def decide(ctx: Context, rolls: bool = True) -> Decision:
    """The first rule of the workload's kind that holds."""
    rules = _BY_KIND.get((ctx.id.group, ctx.id.kind)) or [OTHER_ROLLS if rolls else OTHER_NONE]
    rule = next(r for r in rules if r.when(ctx))
    return Decision(rule.outcome, rule.name, rule.text(ctx))


WORKLOAD_REF_GROUPS = {"Deployment": "apps", "ReplicaSet": "apps", "PodTemplate": ""}


def rollouts_by_workload(objects: Mapping[ResourceId, Any]) -> dict[ResourceId, Takeover]:
    """Workloads an Argo Rollout of ``objects`` takes over with ``workloadRef`` (the kinds
    argo-rollouts resolves: rollout/templateref.go infoByGroupKind)."""
    out: dict[ResourceId, Takeover] = {}
    for key, obj in objects.items():
        if (key.group, key.kind) not in ROLLOUT:
            continue
        ref = path_get(obj, ("spec", "workloadRef"))
        if not isinstance(ref, dict) or ref.get("kind") not in WORKLOAD_REF_GROUPS:
            continue
        ctx = Context(obj, (), {}, key)
        kind = str(ref["kind"])
        target = ResourceId(WORKLOAD_REF_GROUPS[kind], kind, key.namespace, str(ref.get("name")))
        out[target] = Takeover(f"Rollout/{key.name} ({_argo_strategy(ctx)})", obj)
    return out


__all__ = [
    "CONTAINERS",
    "RESTARTS",
    "RULES",
    "Context",
    "Decision",
    "Outcome",
    "Takeover",
    "decide",
]

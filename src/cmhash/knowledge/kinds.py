"""Which kinds carry a pod template, and where: one row per kind.

Kinds match on (API group, kind), never kind alone: a CRD may reuse a name such
as ``Deployment`` or ``Service``. Extra rows come from the config file.

``OPT_IN``: the kinds cmhash leaves alone unless a setting opts in, and what it tells the
user about one that uses in-stream configuration: one row per gated policy, read by the
plan stage (plan/workload.py). ``option`` names the plan option that opts in (a field of
plan/options.py ``PlanOptions``, set by ``--jobs`` or ``--pods``); ``skip`` names the
reason the workload is left alone (a member of analyze/summaries.py ``SkipReason``). And
what the API server allows of a Job, for ``--jobs=rename`` (analyze/jobs.py): the spec
fields that may change on an existing Job, and how long its name may be.
"""

# No "from __future__ import annotations": typing compiles string NamedTuple fields at import

import enum
from typing import NamedTuple

from cmhash.findings import Code
from cmhash.knowledge.operators import OPERATOR_PROFILES
from cmhash.knowledge.podspec import Site
from cmhash.knowledge.sources import BUILTIN_SOURCES, SecretSource


class Policy(enum.Enum):
    ANNOTATE = "annotate"  # template changes roll the pods
    JOB = "job"  # template immutable: only with --jobs
    POD = "pod"  # annotation on the Pod itself: only with --pods


class WorkloadKind(NamedTuple):
    group: str
    kind: str
    template_path: tuple[str, ...]  # () = the object itself is the pod (bare Pod)
    policy: Policy = Policy.ANNOTATE
    # a workload that still rolls nothing when its template changes (for findings)
    rolls: bool = True
    # rolls only when spec.triggers (if given) holds a ConfigChange trigger (OpenShift)
    trigger_gated: bool = False
    # -- what an operator's resource adds (operators.py); a pod template's defaults
    # the mappings below the template that hold the pods' annotations
    level: tuple[str, ...] = ("metadata", "annotations")
    # the pod-spec-like block (containers, initContainers, volumes), from the object's
    # root; None: the template's ``spec``
    spec_path: tuple[str, ...] | None = None
    # other fields that name ConfigMaps/Secrets (sites.Site rows, paths from the root)
    sites: tuple[Site, ...] = ()
    # the operator that copies the annotation to the pods (None: a built-in controller)
    operator: str | None = None
    # (field, target kind, name) when the field is absent: the object the operator reads
    # then ("alertmanager-{name}": {name} is the resource's own name)
    defaults: tuple[tuple[str, str, str], ...] = ()
    # one pod group of a resource that runs several (a VMCluster's vminsert, vmselect and
    # vmstorage): its name; each group is a row of its own, with its own annotations,
    # references and checksum (None: the resource's pods are one group)
    component: str | None = None
    # (field, how) of the references whose objects the operator's own reloader applies
    # without a restart: left out of the checksum unless --hash-live-reloaded
    live: tuple[tuple[str, str], ...] = ()

    # a field naming another workload whose template this one uses (Argo Rollout's
    # spec.workloadRef): when it is set the kind is never annotated, template or not
    template_ref: tuple[str, ...] = ()

    @property
    def pod_spec_path(self) -> tuple[str, ...]:
        return self.spec_path if self.spec_path is not None else (*self.template_path, "spec")

    @property
    def annotation_field(self) -> str:
        return ".".join((*self.template_path, *self.level))


def _row(
    group: str,
    kind: str,
    path: str,
    policy: Policy = Policy.ANNOTATE,
    rolls: bool = True,
    trigger_gated: bool = False,
) -> WorkloadKind:
    return WorkloadKind(
        group, kind, tuple(path.split(".")) if path else (), policy, rolls, trigger_gated
    )


BUILTIN_KINDS: tuple[WorkloadKind, ...] = (
    _row("apps", "Deployment", "spec.template"),
    _row("extensions", "Deployment", "spec.template"),
    _row("apps", "StatefulSet", "spec.template"),
    _row("apps", "DaemonSet", "spec.template"),
    _row("extensions", "DaemonSet", "spec.template"),
    _row("apps", "ReplicaSet", "spec.template", rolls=False),
    _row("extensions", "ReplicaSet", "spec.template", rolls=False),
    _row("", "ReplicationController", "spec.template", rolls=False),
    _row("", "PodTemplate", "template"),  # runs nothing itself: no restart warning
    _row("batch", "CronJob", "spec.jobTemplate.spec.template"),
    _row("batch", "Job", "spec.template", Policy.JOB),
    _row("", "Pod", "", Policy.POD, rolls=False),
    # Argo rejects a Rollout with both workloadRef and a template holding labels or
    # annotations ("template must be empty for workload reference rollout":
    # argoproj/argo-rollouts pkg/apis/rollouts/validation/validation.go:127, RolloutSpec.
    # EmptyTemplate in pkg/apis/rollouts/v1alpha1/types.go:98), so an annotation there
    # would break it: the Deployment it references is the one to annotate
    _row("argoproj.io", "Rollout", "spec.template")._replace(template_ref=("spec", "workloadRef")),
    _row("apps.openshift.io", "DeploymentConfig", "spec.template", trigger_gated=True),
    # OpenShift 3 served it as apiVersion v1
    _row("", "DeploymentConfig", "spec.template", trigger_gated=True),
    _row("serving.knative.dev", "Service", "spec.template"),
)

# Documents that wrap others in ``items``: only core ``v1`` ``List``, the ``*List`` kinds
# that the Kubernetes API groups serve (``ConfigMapList``, ``apps/v1`` ``DeploymentList``)
# and the KRM ``ResourceList``. A custom resource whose kind merely ends in ``List``
# (``IPAllowList``) is an ordinary object: its ``items`` mean what its CRD says.
_KRM_LIST = ("config.kubernetes.io", "ResourceList")


def group_of(api_version: str) -> str:
    return api_version.rpartition("/")[0] if "/" in api_version else ""


def is_kubernetes_group(group: str) -> bool:
    """The API groups of Kubernetes itself: core (""), the dot-less built-in groups
    (apps, batch, autoscaling, policy, extensions) and ``*.k8s.io``."""
    return "." not in group or group.endswith(".k8s.io")


def is_list(api_version: str, kind: str) -> bool:
    if not kind.endswith("List"):  # (every list kind below does: most calls stop here)
        return False
    if kind == "List":
        return api_version in ("v1", "")  # without apiVersion kubectl refuses it anyway
    group = group_of(api_version)
    if (group, kind) == _KRM_LIST:
        return True
    return kind.endswith("List") and bool(api_version) and is_kubernetes_group(group)


class KindTable:
    """The kinds cmhash reads: workloads (with their pod template) and the sources of
    Secrets/ConfigMaps (sources.py)."""

    def __init__(
        self, rows: tuple[WorkloadKind, ...], sources: tuple[SecretSource, ...] = BUILTIN_SOURCES
    ) -> None:
        # (group, kind) -> its rows: one, or one per pod group (WorkloadKind.component)
        self._groups: dict[tuple[str, str], tuple[WorkloadKind, ...]] = {}
        for r in rows:
            self._groups[(r.group, r.kind)] = (*self._groups.get((r.group, r.kind), ()), r)
        self._rows = {key: rows_[0] for key, rows_ in self._groups.items()}
        self.kind_names = frozenset(r.kind for r in rows)
        self._sources: dict[tuple[str, str], list[SecretSource]] = {}
        for s in sources:
            self._sources.setdefault((s.group, s.kind), []).insert(0, s)  # later rows win
        self._read: dict[tuple[str, str], bool] = {}  # (apiVersion, kind) -> ``reads``

    def reads(self, api_version: str, kind: str) -> bool:
        """Whether a document of this apiVersion and kind is read at all: a list, a
        ConfigMap or Secret, a workload or a source. (Each pair decided once: a stream
        repeats a few of them in every document.)"""
        pair = (api_version, kind)
        known = self._read.get(pair)
        if known is None:
            known = self._read[pair] = (
                is_list(api_version, kind)
                or (api_version == "v1" and kind in ("ConfigMap", "Secret"))
                or self.lookup(api_version, kind) is not None
                or self.source(api_version, kind) is not None
            )
        return known

    def lookup(self, api_version: str, kind: str) -> WorkloadKind | None:
        """The kind's row (its first pod group's, for a kind with several)."""
        return self._rows.get((group_of(api_version), kind))

    def groups(self, api_version: str, kind: str) -> tuple[WorkloadKind, ...]:
        """Every row of the kind: one per pod group (empty: not a workload kind)."""
        return self._groups.get((group_of(api_version), kind), ())

    def source(self, api_version: str, kind: str) -> SecretSource | None:
        """The source row for this apiVersion and kind (its version must be one the row
        reads: another version's schema may put things elsewhere)."""
        rows = self._sources.get((group_of(api_version), kind))
        version = api_version.rpartition("/")[2]
        for row in rows or ():
            if not row.versions or version in row.versions:
                return row
        return None

    @property
    def sources(self) -> tuple[SecretSource, ...]:
        return tuple(s for rows in self._sources.values() for s in reversed(rows))

    def with_extra(
        self, rows: tuple[WorkloadKind, ...], sources: tuple[SecretSource, ...] = ()
    ) -> "KindTable":
        """This table with ``rows`` (the config file's): a row for a kind this table has
        replaces all of that kind's rows (settings.py refuses built-in kinds)."""
        replaced = {(r.group, r.kind) for r in rows}
        kept = tuple(r for key, g in self._groups.items() if key not in replaced for r in g)
        return KindTable(kept + rows, self.sources + sources)


# operators' resources (operators.py)
OPERATOR_KINDS = tuple(WorkloadKind(**row) for row in OPERATOR_PROFILES)

DEFAULT_TABLE = KindTable(BUILTIN_KINDS + OPERATOR_KINDS)


class OptIn(NamedTuple):
    """A kind left alone unless a setting opts in, and what to tell the user."""

    option: str  # the PlanOptions field that opts in
    skip: str  # the SkipReason's name
    code: Code
    message: str
    hook_message: str | None = None  # for a Helm or Argo CD hook, which its tool re-creates


OPT_IN: dict[Policy, OptIn] = {
    # a Job's spec.template is immutable: kubernetes/kubernetes pkg/apis/batch/validation/
    # validation.go ValidateJobSpecUpdate (ValidateImmutableField on spec.template); a hook
    # is deleted and created again by its tool: https://helm.sh/docs/topics/charts_hooks/
    # #hook-deletion-policies, argoproj/gitops-engine pkg/sync/hook/delete_policy.go (no
    # policy: BeforeHookCreation)
    Policy.JOB: OptIn(
        "jobs",
        "JOB",
        Code.JOB_NOT_ANNOTATED,
        "uses in-stream config but is not annotated: a Job's pod template is "
        "immutable and kubectl apply would fail (--jobs to opt in)",
        "uses in-stream config but is not annotated: a Helm or Argo CD hook is deleted and "
        "created again by its tool, and reads the configuration it finds then (--jobs to "
        "annotate it anyway)",
    ),
    # a Pod's metadata may change, and the kubelet restarts a container only when its spec
    # changes: kubernetes/kubernetes pkg/apis/core/validation/validation.go ValidatePodUpdate,
    # pkg/kubelet/kuberuntime/kuberuntime_manager.go computePodActions
    Policy.POD: OptIn(
        "pods",
        "POD",
        Code.POD_NOT_ANNOTATED,
        "uses in-stream config; a bare Pod is not annotated because an annotation "
        "does not restart it (--pods to opt in)",
    ),
}

# Job spec fields the API server lets change on an existing Job (k8s.io/kubernetes
# pkg/apis/batch/validation/validation.go ValidateJobSpecUpdate): a change to them is
# applied to the Job, it is no reason to run it again
MUTABLE = ("parallelism", "suspend", "activeDeadlineSeconds", "ttlSecondsAfterFinished")

# the Job controller puts the Job's name in its pods' job-name label, whose values are
# limited to 63 characters (k8s.io/apimachinery pkg/util/validation IsValidLabelValue,
# LabelValueMaxLength)
MAX_NAME = 63

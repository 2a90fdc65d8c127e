"""The rollout rules: what Kubernetes (or the controller that owns a kind) does when a
workload's pod template changes, as one table ``RULES``: per kind, conditions on the NEW
object tried in order, the first that holds decides (report/rollout.py ``decide``).
Each row cites where the behaviour is defined; what a row is and what it reads:
knowledge/rollout_rule.py. docs/report.md lists RULES (tests/test_report_plan.py
writes the list).

Here the kinds that have no rollout of their own (ReplicaSet, CronJob, Job, bare Pod,
PodTemplate); the rolling controllers of apps/v1 in knowledge/rollout_apps.py
(Deployment, and what the API server refuses of every apps workload) and
knowledge/rollout_sets.py (StatefulSet, DaemonSet), other controllers' and engines'
(Argo Rollouts, Helm and Argo CD hooks, Flux's and Argo CD's re-creation, OpenShift,
Knative) in knowledge/rollout_tools.py.
"""

from __future__ import annotations

from cmhash.knowledge.kinds import Policy
from cmhash.knowledge.podupdate import VALIDATION as POD_VALIDATION
from cmhash.knowledge.podupdate import Effect
from cmhash.knowledge.rollout_apps import (
    DEPLOYMENT_RULES,
    IMMUTABLE_RULES,
    NEGATIVE_RULES,
    RECREATE_RULES,
    SELECTOR_RULES,
)
from cmhash.knowledge.rollout_rule import REPLICASET, Outcome, Rule, always
from cmhash.knowledge.rollout_sets import DAEMONSET_RULES, STATEFULSET_RULES
from cmhash.knowledge.rollout_tools import (
    ARGO_ROLLOUT_RULES,
    DEPLOYMENTCONFIG_RULES,
    FORCE_RULES,
    HOOK_RULES,
    KNATIVE_RULES,
    SKIP_RULES,
    WORKLOAD_REF_RULES,
)

NO_ROLLOUT_RULES = (
    Rule(
        "replicaset-no-rollout",
        REPLICASET,
        always,
        "always",
        Outcome.NONE,
        lambda c: f"a {c.id.kind} has no rollout: only pods created later get the new template",
        "https://kubernetes.io/docs/concepts/workloads/controllers/replicaset/ (use a "
        "Deployment for updates); pkg/controller/replicaset/replica_set.go only counts pods",
    ),
    Rule(
        "cronjob-next-run",
        (("batch", "CronJob"),),
        always,
        "always",
        Outcome.NEXT_RUN,
        lambda c: "the next Job uses the new template; a running Job keeps its own",
        "https://kubernetes.io/docs/concepts/workloads/controllers/cron-jobs/"
        "#modifying-a-cronjob (changes apply to new Jobs only)",
    ),
)

JOB_RULES = (
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
        always,
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
)

POD_RULES = (
    Rule(
        "pod-refused",
        (("", "Pod"),),
        lambda c: c.pod()[0] is Effect.REFUSED,
        "a spec field other than those ValidatePodUpdate allows changed (see the bare-Pod table)",
        Outcome.REFUSED,
        lambda c: c.pod()[1],
        f"{POD_VALIDATION} (pod updates may not change fields other than updatablePodSpecFields)",
    ),
    Rule(
        "pod-restarts-container",
        (("", "Pod"),),
        lambda c: c.pod()[0] is Effect.RESTARTS,
        "an image of a container (or of a sidecar init container) changed",
        Outcome.IN_PLACE,
        lambda c: c.pod()[1],
        f"{POD_VALIDATION} (images may change); kubernetes/kubernetes pkg/kubelet/"
        "kuberuntime/kuberuntime_manager.go computePodActions (containerChanged: the "
        "container is killed and started again in the same Pod)",
    ),
    Rule(
        "pod-updated",
        (("", "Pod"),),
        always,
        "otherwise: metadata, an init container's image, activeDeadlineSeconds, added "
        "tolerations, removed scheduling gates",
        Outcome.NONE,
        lambda c: c.pod()[1],
        f"{POD_VALIDATION}; kubernetes/kubernetes pkg/kubelet/kuberuntime/"
        "kuberuntime_container.go computeInitContainerActions (a completed init container "
        "is not run again)",
    ),
    Rule(
        "podtemplate-runs-nothing",
        (("", "PodTemplate"),),
        always,
        "always",
        Outcome.NONE,
        lambda c: "a PodTemplate runs nothing itself",
        "https://kubernetes.io/docs/concepts/workloads/pods/#pod-templates",
    ),
)

# kinds whose pods an annotation never restarts, even when cmhash writes it (--jobs, --pods):
# job-immutable and pod-updated above
NEVER_ROLLS: dict[Policy, str] = {
    Policy.JOB: (
        "annotated (--jobs), but a Job is never restarted: only a re-created Job "
        "runs with the new configuration"
    ),
    Policy.POD: ("annotated (--pods), but a bare Pod is never restarted: delete and re-create it"),
}

# per kind, the first rule that holds decides (the rules for every kind first): an Argo
# CD Skip is never applied; an object the API server refuses is refused, unless its
# engine re-creates it; a workload taken over by an Argo Rollout rolls as the Rollout
# does, a hook is re-created whatever else holds
RULES: tuple[Rule, ...] = (
    *SKIP_RULES,
    *SELECTOR_RULES,
    *NEGATIVE_RULES,
    *RECREATE_RULES,
    *IMMUTABLE_RULES,
    *WORKLOAD_REF_RULES,
    *DEPLOYMENT_RULES,
    *STATEFULSET_RULES,
    *DAEMONSET_RULES,
    *NO_ROLLOUT_RULES,
    *HOOK_RULES,
    *FORCE_RULES,
    *JOB_RULES,
    *POD_RULES,
    *ARGO_ROLLOUT_RULES,
    *DEPLOYMENTCONFIG_RULES,
    *KNATIVE_RULES,
)

# a kind from workloadKinds: its row's ``rolls`` says
OTHER_ROLLS = Rule(
    "other-kind",
    (),
    always,
    "always",
    Outcome.ROLLS,
    lambda c: "pod template changed",
    "workloadKinds",
)
OTHER_NONE = Rule(
    "other-kind-no-rollout",
    (),
    always,
    "always",
    Outcome.NONE,
    lambda c: "its workloadKinds row says a template change rolls nothing",
    "workloadKinds",
)

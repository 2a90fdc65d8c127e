"""Rollout rules of the controllers other than Kubernetes' own (knowledge/rollout.py puts
them in RULES): Argo Rollouts (a Rollout, and the workloads it takes over with
``workloadRef``), Helm and Argo CD hooks, OpenShift DeploymentConfigs, Knative Services.
Each row cites where the controller defines the behaviour.

What the deployment engines do with an object beyond ``kubectl apply`` (Flux's and Argo
CD's force, Argo CD's Replace and Skip) is engines.py.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from cmhash.knowledge.defaults import path_get
from cmhash.knowledge.engines import IGNORE_SOURCE, RECREATE_SOURCE, SKIP_SOURCE
from cmhash.knowledge.helm import ARGOCD_HOOK
from cmhash.knowledge.podupdate import Effect
from cmhash.knowledge.rollout_holds import HOLDS, RELEASED, released_only
from cmhash.knowledge.rollout_rule import (
    DEPLOYMENT,
    DEPLOYMENTCONFIG,
    EVERY_KIND,
    KNATIVE,
    ROLLOUT,
    ZERO,
    Outcome,
    Rule,
    Takeover,
    Workload,
    always,
    no_pod,
)

ARGO = "https://argoproj.github.io/argo-rollouts/"
OPENSHIFT_DC = (
    "https://docs.openshift.com/container-platform/4.14/applications/deployments/"
    "managing-deployment-processes.html (triggers); openshift/api apps/v1 types.go"
)
TAKEN_OVER = (*DEPLOYMENT, ("apps", "ReplicaSet"), ("", "PodTemplate"))
WORKLOAD_REF = (
    f"{ARGO}migrating/ (workloadRef); argoproj/argo-rollouts rollout/templateref.go "
    "(Resolve: the template of the Deployment, ReplicaSet or PodTemplate; a change of "
    "it bumps the Rollout's workload-generation annotation)"
)
# the kinds a workloadRef may name, and their group (rollout/templateref.go infoByGroupKind)
WORKLOAD_REF_GROUPS = {"Deployment": "apps", "ReplicaSet": "apps", "PodTemplate": ""}


def argo_strategy(rollout: Mapping[str, Any]) -> str:
    """How an Argo Rollout rolls, in words (its spec.strategy)."""

    def spec(*path: str) -> Any:
        return path_get(rollout, ("spec", *path))

    if spec("strategy", "blueGreen") is not None:
        auto = spec("strategy", "blueGreen", "autoPromotionEnabled")
        how = "promoted by hand (autoPromotionEnabled: false)" if auto is False else "then promoted"
        return f"blue-green: a preview ReplicaSet comes up, {how}"
    steps = spec("strategy", "canary", "steps")
    if spec("strategy", "canary") is not None:
        n = len(steps) if isinstance(steps, list) else 0
        return f"canary in {n} step{'' if n == 1 else 's'}" if n else "canary"
    return "rolling update"


def _taken(c: Workload) -> Takeover | None:
    return c.rollouts.get(c.id)


def _triggers_without_config_change(c: Workload) -> bool:
    triggers = c.spec("triggers")
    if not isinstance(triggers, list):
        return False  # absent: the ConfigChange trigger is the default
    return not any(isinstance(t, dict) and t.get("type") == "ConfigChange" for t in triggers)


def _no_latest_traffic(c: Workload) -> bool:
    traffic = c.spec("traffic")
    if not isinstance(traffic, list):
        return False  # no traffic block: 100% to the latest revision
    return not any(
        isinstance(t, dict) and t.get("latestRevision") is True and t.get("percent", 0) != 0
        for t in traffic
    )


def _kept_revision_name(c: Workload) -> str | None:
    """A Knative Service's own revision name (spec.template.metadata.name), when OLD
    had the same: a template change under it is refused."""
    path = ("spec", "template", "metadata", "name")
    name = path_get(c.obj, path)
    if not isinstance(name, str) or not name or c.old is None:
        return None
    return name if path_get(c.old, path) == name else None


# a workload taken over by a Rollout rolls as that Rollout does (rollout-paused,
# rollout-zero-replicas below): its own paused or replicas no longer count
WORKLOAD_REF_RULES = (
    Rule(
        "workload-ref-paused",
        TAKEN_OVER,
        lambda c: (t := _taken(c)) is not None and c.true(t.spec("paused")),
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
)

SKIP_RULES = (
    Rule(
        "argocd-skip",
        EVERY_KIND,
        lambda c: c.skipped() is not None,
        f"{ARGOCD_HOOK}: Skip (its only hook type), or a value that names no hook type of a "
        "sync and no Helm hook (Argo CD ignores the object)",
        Outcome.NONE,
        lambda c: c.skipped() or "",
        f"{SKIP_SOURCE}; {IGNORE_SOURCE}",
    ),
)

HOOK_RULES = (
    Rule(
        "hook-recreated",
        (("batch", "Job"), ("", "Pod")),
        lambda c: c.hook(),
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
)
FORCE_RULES = (
    Rule(
        "job-recreated",
        (("batch", "Job"),),
        lambda c: c.forced() is not None and c.runs_again_as in (None, c.old_name),
        "its engine deletes and re-creates it (Flux's kustomize.toolkit.fluxcd.io/force: "
        "enabled, Argo CD's sync-options Force=true)",
        Outcome.NEXT_RUN,
        lambda c: (
            f"a Job's spec.template is immutable, and {c.forced()} deletes the Job and "
            "creates it again: it runs again with the new template"
        ),
        RECREATE_SOURCE,
    ),
    Rule(
        "pod-recreated",
        (("", "Pod"),),
        lambda c: c.forced() is not None and c.pod()[0] is Effect.REFUSED,
        "a change ValidatePodUpdate refuses (as pod-refused), and its engine deletes and "
        "re-creates it",
        Outcome.RECREATED,
        lambda c: (
            f"the API server refuses this update of a bare Pod, and {c.forced()} deletes "
            "the Pod and creates it again: its containers stop and new ones start"
        ),
        RECREATE_SOURCE,
    ),
)

# a hook Job or Pod its tool re-creates each time (hook-recreated above): it reads the
# changed configuration when it runs next, annotated or not
HOOK_RUNS_AGAIN = (
    "a hook: Helm or Argo CD re-creates it when it runs next, and it reads the changed "
    "configuration then"
)

ARGO_ROLLOUT_RULES = (
    Rule(
        "rollout-paused",
        ROLLOUT,
        lambda c: c.true(c.spec("paused")),
        "spec.paused: true",
        Outcome.NONE,
        lambda c: "the Rollout is paused: nothing rolls until it is resumed",
        f"{ARGO}features/specification/ (spec.paused)",
    ),
    Rule(
        "rollout-zero-replicas",
        ROLLOUT,
        lambda c: c.replicas().exact == 0,
        ZERO,
        Outcome.NONE,
        no_pod,
        f"{ARGO}features/specification/ (spec.replicas)",
    ),
    Rule(
        "rollout-resumed",
        ROLLOUT,
        released_only,
        "spec.paused true in OLD, not in NEW, the template unchanged",
        Outcome.ROLLS,
        lambda c: (
            f"{RELEASED}resumed (spec.paused true → false): an update held at its step, if "
            f"any (a template changed while it was paused), goes on ({argo_strategy(c.obj)})"
        ),
        f"{ARGO}features/specification/ (spec.paused); "
        + next(h.source for h in HOLDS if h.kinds == ROLLOUT),
    ),
    Rule(
        "rollout-rolls",
        ROLLOUT,
        always,
        "otherwise (canary, blueGreen)",
        Outcome.ROLLS,
        lambda c: argo_strategy(c.obj),
        f"{ARGO}features/canary/, {ARGO}features/bluegreen/ (a change of spec.template "
        "starts an update)",
    ),
)

DEPLOYMENTCONFIG_RULES = (
    Rule(
        "deploymentconfig-paused",
        DEPLOYMENTCONFIG,
        lambda c: c.true(c.spec("paused")),
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
        always,
        "otherwise (triggers absent, or a ConfigChange trigger)",
        Outcome.ROLLS,
        lambda c: "a new deployment (ConfigChange trigger)",
        OPENSHIFT_DC,
    ),
)

KNATIVE_RULES = (
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
        always,
        "otherwise",
        Outcome.ROLLS,
        lambda c: "a new Revision, and traffic moves to it",
        "https://knative.dev/docs/serving/traffic-management/",
    ),
)

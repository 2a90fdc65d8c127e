"""Rollout rules of the controllers other than Kubernetes' own (knowledge/rollout.py puts
them in RULES): Argo Rollouts (a Rollout, and the workloads it takes over with
``workloadRef``), Helm and Argo CD hooks, OpenShift DeploymentConfigs, Knative Services.
Each row cites where the controller defines the behaviour.

And what the deployment engines do with an object beyond ``kubectl apply``:

- ``RECREATE``: the marks by which Flux and Argo CD delete an object and create it again
  when the API server refuses to update it (an immutable field: a Job's template, a
  selector, a bare Pod's spec). Flux's kustomize-controller forces when the object (as
  applied or as it is live) has the label or annotation
  ``kustomize.toolkit.fluxcd.io/force: enabled`` (compared with ``strings.EqualFold``)
  and the server-side apply fails as Invalid or Conflict; Argo CD replaces with
  ``kubectl replace --force`` (``Replace=true,Force=true``) or applies with ``--force``
  (``Force=true``), both a delete and a create. ``Replace=true`` alone is a PUT: refused
  like an apply. ``Force=true`` with ``ServerSideApply=true`` is not counted (kubectl
  does not combine ``--force`` with ``--server-side``). A Flux ``spec.force: true`` on
  the Kustomization is not in the manifests: cmhash cannot see it.
- Argo CD's ``hook: Skip`` (as the only hook type): the object is never applied.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from cmhash.knowledge.defaults import path_get
from cmhash.knowledge.podupdate import Effect
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
    replicas,
)

# fluxcd/kustomize-controller internal/controller/kustomization_controller.go apply
# (applyOpts.ForceSelector = {"<group>/force": EnabledValue}); api/v1 EnabledValue
FLUX_FORCE = "kustomize.toolkit.fluxcd.io/force"
FLUX_ENABLED = "enabled"
# argoproj/gitops-engine pkg/sync/common/types.go AnnotationSyncOptions, SyncOptionReplace,
# SyncOptionForce, SyncOptionServerSideApply
ARGOCD_SYNC_OPTIONS = "argocd.argoproj.io/sync-options"
ARGOCD_FORCE = "Force=true"
ARGOCD_REPLACE = "Replace=true"
ARGOCD_SSA = "ServerSideApply=true"
# argoproj/gitops-engine pkg/sync/common/types.go AnnotationKeyHook, HookType*
ARGOCD_HOOK = "argocd.argoproj.io/hook"
ARGOCD_HOOK_TYPES = frozenset(("PreSync", "Sync", "PostSync", "SyncFail", "PostDelete", "Skip"))

RECREATE_SOURCE = (
    "fluxcd/kustomize-controller internal/controller/kustomization_controller.go apply "
    "(ForceSelector kustomize.toolkit.fluxcd.io/force: enabled); fluxcd/pkg ssa/"
    "manager_apply.go shouldForceApply (an immutable or invalid error, and the selector "
    "on the object as applied or as live: delete, wait, apply again), ssa/utils "
    "AnyInMetadata (strings.EqualFold); argoproj/gitops-engine pkg/sync/sync_context.go "
    "(Replace=true: ReplaceResource with force; else ApplyResource with force), "
    "pkg/utils/kube/resource_ops.go (DeleteOptions.ForceDeletion = force); kubectl "
    "pkg/cmd/replace/replace.go forceReplace, pkg/cmd/apply/patcher.go deleteAndCreate"
)
SKIP_SOURCE = (
    "argoproj/gitops-engine pkg/sync/hook/hook.go Skip (true when Skip is the only hook "
    "type), pkg/sync/sync_phase.go syncPhases (no phase for it: no sync task, never "
    "applied)"
)


def _metadata(obj: Mapping[str, Any], field: str) -> Mapping[str, Any]:
    value = path_get(obj, ("metadata", field))
    return value if isinstance(value, dict) else {}


def _csv(value: Any) -> list[str]:
    """An Argo CD annotation's items (resource.GetAnnotationCSVs: split on commas,
    trimmed)."""
    if not isinstance(value, str):
        return []
    return [item.strip() for item in value.split(",") if item.strip()]


def forced_by(obj: Mapping[str, Any]) -> str | None:
    """The engine that deletes and re-creates ``obj`` (plain data) when the API server
    refuses its update, in words; None: none does."""
    for field in ("labels", "annotations"):
        value = _metadata(obj, field).get(FLUX_FORCE)
        if isinstance(value, str) and value.casefold() == FLUX_ENABLED:
            return f"Flux ({FLUX_FORCE}: {value})"
    options = _csv(_metadata(obj, "annotations").get(ARGOCD_SYNC_OPTIONS))
    if ARGOCD_FORCE in options and ARGOCD_SSA not in options:
        said = ",".join(o for o in options if o in (ARGOCD_REPLACE, ARGOCD_FORCE))
        return f"Argo CD ({ARGOCD_SYNC_OPTIONS}: {said})"
    return None


def skipped_by_argocd(obj: Mapping[str, Any]) -> bool:
    """``argocd.argoproj.io/hook: Skip`` as its only hook type: never applied."""
    types = _csv(_metadata(obj, "annotations").get(ARGOCD_HOOK))
    return [t for t in types if t in ARGOCD_HOOK_TYPES] == ["Skip"]


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

SKIPPED = (
    f"{ARGOCD_HOOK}: Skip: Argo CD never applies it, so no pod is replaced (with kubectl "
    "apply, Helm or Flux the annotation means nothing)"
)
SKIP_RULES = (
    Rule(
        "argocd-skip",
        EVERY_KIND,
        lambda c: c.skipped(),
        f"{ARGOCD_HOOK}: Skip (its only hook type)",
        Outcome.NONE,
        lambda c: SKIPPED,
        SKIP_SOURCE,
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
        lambda c: replicas(c).exact == 0,
        ZERO,
        Outcome.NONE,
        no_pod,
        f"{ARGO}features/specification/ (spec.replicas)",
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

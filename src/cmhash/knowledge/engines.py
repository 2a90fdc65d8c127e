"""What the deployment engines do with an object beyond ``kubectl apply`` (read by the
report's rollout rules, knowledge/rollout_tools.py):

- ``RECREATE``: the marks by which Flux and Argo CD delete an object and create it again
  when the API server refuses to update it (an immutable field: a Job's template, a
  selector, a bare Pod's spec). Flux's kustomize-controller forces when the object (as
  applied or as it is live) has the label or annotation
  ``kustomize.toolkit.fluxcd.io/force: enabled`` (compared with ``strings.EqualFold``)
  and the server-side apply fails as Invalid or Conflict; Argo CD replaces with
  ``kubectl replace --force`` (``Replace=true,Force=true``) or applies with ``--force``
  (``Force=true``), both a delete and a create. ``Replace=true`` alone is a PUT: refused
  like an apply. ``Force=true`` with ``ServerSideApply=true`` is not counted (kubectl
  does not combine ``--force`` with ``--server-side``), unless ``Replace=true`` makes it
  a replace. Both engines read their mark on the live object too (OLD's, as it was
  applied): Flux's ``shouldForceApply`` on the existing object, Argo CD's ``force`` and
  ``shouldReplace`` on ``t.liveObj`` (from v3.4.0). A Flux ``spec.force: true`` on the
  Kustomization is not in the manifests: cmhash cannot see it.
- Argo CD's ``hook: Skip`` (as the only hook type): the object is never applied.
- Argo CD's ``Replace=true`` (``REPLACE_SOURCE``): a sync replaces the live object with
  NEW's (``kubectl replace``, a PUT of the whole object), so a ``spec.replicas`` NEW
  leaves out is the API server's default 1, at every sync, until an autoscaler scales it
  back; read on the object as synced or as live (Argo CD from v3.4.0).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from cmhash.knowledge.defaults import path_get
from cmhash.knowledge.helm import ARGOCD_HOOK, HELM_HOOK

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
# argoproj/argo-cd gitops-engine/pkg/sync/common/types.go AnnotationKeyHook, NewHookType:
# the hook types a sync knows, case-sensitive (PostDelete is not one: the application
# controller runs it when the application is deleted, controller/hook.go)
ARGOCD_HOOK_TYPES = frozenset(("PreSync", "Sync", "PostSync", "SyncFail", "Skip"))
# gitops-engine/pkg/sync/hook/helm/type.go NewType: the Helm hooks Argo CD maps to its own
HELM_HOOK_TYPES = frozenset(("pre-install", "pre-upgrade", "post-upgrade", "post-install"))

RECREATE_SOURCE = (
    "fluxcd/kustomize-controller internal/controller/kustomization_controller.go apply "
    "(ForceSelector kustomize.toolkit.fluxcd.io/force: enabled); fluxcd/pkg ssa/"
    "manager_apply.go shouldForceApply (an immutable or invalid error, and the selector "
    "on the object as applied or as live: delete, wait, apply again), ssa/utils "
    "AnyInMetadata (strings.EqualFold) on desiredObject or existingObject; "
    "argoproj/argo-cd gitops-engine/pkg/sync/sync_context.go applyObject (force := "
    "sc.force || HasAnnotationOption(t.targetObj, ..., SyncOptionForce) || (t.liveObj != "
    "nil && HasAnnotationOption(t.liveObj, ...)), since v3.4.0, commit 4d66a209; "
    "Replace=true: ReplaceResource with force; else ApplyResource with force; "
    "shouldUseServerSideApply(t.targetObj)), "
    "pkg/utils/kube/resource_ops.go (DeleteOptions.ForceDeletion = force); kubectl "
    "pkg/cmd/replace/replace.go forceReplace, pkg/cmd/apply/patcher.go deleteAndCreate"
)
REPLACE_SOURCE = (
    "argoproj/argo-cd gitops-engine/pkg/sync/sync_context.go applyObject (shouldReplace "
    ":= sc.replace || HasAnnotationOption(t.targetObj, ..., SyncOptionReplace) || "
    "(t.liveObj != nil && HasAnnotationOption(t.liveObj, ...)), since v3.4.0, commit "
    "4d66a209; a live object: ReplaceResource, kubectl replace); kubernetes/kubernetes "
    "pkg/apis/apps/v1/defaults.go (Replicas nil: 1)"
)
IGNORE_SOURCE = (
    "argoproj/argo-cd gitops-engine/pkg/sync/ignore/ignore.go Ignore (hook.IsHook(obj) && "
    "len(hook.Types(obj)) == 0), pkg/sync/hook/hook.go IsHook (the annotation key "
    "present and not Skip), Types (NewHookType of each item, else the Helm hook's), "
    "pkg/sync/reconcile.go splitHooks (an ignored object is left out of the targets)"
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


def _sync_options(obj: Mapping[str, Any] | None) -> list[str]:
    return _csv(_metadata(obj or {}, "annotations").get(ARGOCD_SYNC_OPTIONS))


def forced_by(obj: Mapping[str, Any], live: Mapping[str, Any] | None = None) -> str | None:
    """The engine that deletes and re-creates ``obj`` (plain data) when the API server
    refuses its update, in words; None: none does. ``live``: OLD's object, as the cluster
    holds it: both engines read their mark on it too (RECREATE_SOURCE)."""
    objs = [o for o in (obj, live) if o is not None]
    for o in objs:
        for field in ("labels", "annotations"):
            value = _metadata(o, field).get(FLUX_FORCE)
            if isinstance(value, str) and value.casefold() == FLUX_ENABLED:
                return f"Flux ({FLUX_FORCE}: {value}{'' if o is obj else ', on the live object'})"

    def marks(o: Mapping[str, Any] | None) -> list[str]:
        return [opt for opt in _sync_options(o) if opt in (ARGOCD_REPLACE, ARGOCD_FORCE)]

    synced = marks(obj)
    live_only = [m for m in marks(live) if m not in synced]
    both = synced + live_only
    # server-side apply is read on the object as synced only (shouldUseServerSideApply)
    ssa = ARGOCD_SSA in _sync_options(obj)
    if ARGOCD_FORCE in both and (ARGOCD_REPLACE in both or not ssa):
        said = ",".join(synced) + ("; " if synced and live_only else "")
        said += f"{','.join(live_only)} on the live object" if live_only else ""
        return f"Argo CD ({ARGOCD_SYNC_OPTIONS}: {said})"
    return None


def replaced_by_argocd(obj: Mapping[str, Any], live: Mapping[str, Any] | None) -> bool:
    """Whether Argo CD syncs ``obj`` by replacing the live object (``REPLACE_SOURCE``);
    ``live``: OLD's object, as the cluster holds it (None: none)."""
    return any(ARGOCD_REPLACE in _sync_options(o) for o in (obj, live))


SKIPPED = (
    f"{ARGOCD_HOOK}: Skip: Argo CD never applies it, so no pod is replaced (with kubectl "
    "apply, Helm or Flux the annotation means nothing)"
)


def skipped_by_argocd(obj: Mapping[str, Any]) -> str | None:
    """Why Argo CD never applies ``obj`` in a sync, or None: ``hook: Skip`` as its only
    hook type (SKIP_SOURCE), or a hook annotation that names no hook type a sync knows
    (a typo, another case, PostDelete) and no Helm hook: ignored (IGNORE_SOURCE)."""
    annotations = _metadata(obj, "annotations")
    if ARGOCD_HOOK not in annotations:
        return None
    value = annotations[ARGOCD_HOOK]
    types = [t for t in _csv(value) if t in ARGOCD_HOOK_TYPES]
    if types == ["Skip"]:
        return SKIPPED
    if types or any(t in HELM_HOOK_TYPES for t in _csv(annotations.get(HELM_HOOK))):
        return None
    known = ", ".join(sorted(ARGOCD_HOOK_TYPES))
    return (
        f"{ARGOCD_HOOK}: {value} names no hook type of a sync ({known}; case matters): "
        "Argo CD ignores the object and never applies it in a sync, so no pod is replaced "
        "(with kubectl apply, Helm or Flux the annotation means nothing)"
    )

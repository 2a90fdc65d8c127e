"""Helm's and Argo CD's hooks: the annotation that makes an object a hook, and the
phases that run before the release's other objects are applied. A hook is deleted and
created again by its tool (both tools' default delete policy), so it reads the
configuration it finds then; analyze/workload.py tells a hook's phase."""

from __future__ import annotations

# helm/helm pkg/release/v1/hook.go (Helm 3: pkg/release/hook.go) HookAnnotation
HELM_HOOK = "helm.sh/hook"
# argoproj/gitops-engine pkg/sync/common/types.go AnnotationKeyHook
ARGOCD_HOOK = "argocd.argoproj.io/hook"
HOOK_ANNOTATIONS = (HELM_HOOK, ARGOCD_HOOK)

# the phases that run before the release's other objects are applied: Helm's
# HookPreInstall, HookPreUpgrade, HookPreRollback, HookPreDelete (hook.go), Argo CD's
# HookTypePreSync (gitops-engine pkg/sync/common/types.go)
PRE_HOOKS = frozenset(("pre-install", "pre-upgrade", "pre-rollback", "pre-delete", "PreSync"))

"""What Helm's output looks like: the comment before each document of ``helm template``,
the annotation Helm 4 puts on each document it hands a post-renderer, the order it
prints one render's manifests in, the label that names the release, and the variable
that holds the release namespace. Read by plan/renders.py and plan/helm.py.

And Helm's and Argo CD's hooks: the annotation that makes an object a hook, and the
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

# helm pkg/action/action.go renderResources: each document of a render follows
# "---\n# Source: <chart>/<path in the chart>"
SOURCE_COMMENT = "# Source: "

# Helm 4 annotates each document it hands a postrenderer/v1 plugin with its file (helm
# pkg/action/action.go filenameAnnotation, annotateAndMerge)
POSTRENDER_FILENAME = "postrenderer.helm.sh/postrender-filename"

# Helm's standard label for the release name (Kubernetes' recommended labels; ``helm
# create``'s templates/_helpers.tpl selectorLabels: {{ .Release.Name }})
INSTANCE_LABEL = "app.kubernetes.io/instance"

# the release namespace a helm command reads when -n is not given (helm pkg/cli/
# environment.go New: HELM_NAMESPACE; ``helm help``, "Environment variables")
NAMESPACE_ENV = "HELM_NAMESPACE"

# helm pkg/release/v1/util/kind_sorter.go InstallOrder
INSTALL_ORDER = (
    "PriorityClass",
    "Namespace",
    "NetworkPolicy",
    "ResourceQuota",
    "LimitRange",
    "PodSecurityPolicy",
    "PodDisruptionBudget",
    "ServiceAccount",
    "Secret",
    "SecretList",
    "ConfigMap",
    "StorageClass",
    "PersistentVolume",
    "PersistentVolumeClaim",
    "CustomResourceDefinition",
    "ClusterRole",
    "ClusterRoleList",
    "ClusterRoleBinding",
    "ClusterRoleBindingList",
    "Role",
    "RoleList",
    "RoleBinding",
    "RoleBindingList",
    "Service",
    "DaemonSet",
    "Pod",
    "ReplicationController",
    "ReplicaSet",
    "Deployment",
    "HorizontalPodAutoscaler",
    "StatefulSet",
    "Job",
    "CronJob",
    "IngressClass",
    "Ingress",
    "APIService",
    "MutatingWebhookConfiguration",
    "ValidatingWebhookConfiguration",
)

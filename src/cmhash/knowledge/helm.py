"""What Helm's output looks like: the comment before each document of ``helm template``,
the annotation Helm 4 puts on each document it hands a post-renderer, the order it
prints one render's manifests in, the label that names the release, the labels that
say a chart rendered an object, and the variable that holds the release namespace.
Read by plan/renders.py, plan/helm.py and plan/workload.py.

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

# The labels by which an object says a chart rendered it, wherever its text went since
# (kustomize's helmCharts / --enable-helm, a re-serialising tool: no '# Source:' line is
# left): label -> the value that says so (None: any). ``helm create``'s scaffold
# (helm pkg/chart/v2/util/create.go, Helm 3 pkg/chartutil/create.go: _helpers.tpl's
# "<chart>.labels" sets helm.sh/chart and app.kubernetes.io/managed-by: {{ .Release.Service
# }}), and the heritage label of older charts (kube-prometheus-stack's "labels" helper
# still sets it); .Release.Service is always "Helm" (helm pkg/chart/common/util/values.go,
# Helm 3 pkg/chartutil/values.go ToRenderValues: "Service": "Helm").
RENDERED_LABELS: dict[str, str | None] = {
    "helm.sh/chart": None,
    "app.kubernetes.io/managed-by": "Helm",
    "heritage": "Helm",
}

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

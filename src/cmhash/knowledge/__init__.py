"""What cmhash knows about Kubernetes and the tools around it, as data: tables the stages
read, each row with its upstream citation beside it. A row changes here and nowhere else.
This package imports only its own modules and the vocabulary below it.

- ``kinds``: the kinds that carry a pod template, and where (k8s.io/api apps, batch, core
  v1; Argo Rollouts, OpenShift DeploymentConfig, Knative Service); those left alone
  unless a setting opts in (Jobs, bare Pods); a Job's mutable spec fields and name limit
  (kubernetes pkg/apis/batch/validation ValidateJobSpecUpdate; apimachinery
  IsValidLabelValue)
- ``podspec``: the ``Site`` row type, and a PodSpec's reference sites (k8s.io/api core/v1
  types.go; the Secrets Store CSI driver's nodeserver.go)
- ``operators``: operators' resources that run pods without a pod template (Prometheus
  operator, VictoriaMetrics operator, OpenTelemetry operator: their CRDs, vendored in
  tests/crds)
- ``sources``: objects that produce a Secret (sealed-secrets, external-secrets, Secrets
  Store CSI driver types)
- ``namesites``: fields outside pod specs read by name (k8s.io/api rbac/v1, networking/v1,
  core/v1; Gateway API, Flux, cert-manager, Istio, Traefik, ingress-nginx); RBAC resources,
  read verbs, built-in ClusterRoles, ServiceAccount user names (kubernetes
  bootstrappolicy/policy.go; apiserver serviceaccount)
- ``compat``: Reloader's and Wave's decisions and annotations (stakater/Reloader
  pkg/common ShouldReload, options/flags.go; wave-k8s/wave pkg/core); the annotations
  that declare dependencies or exclude an object (cmhash's own, Reloader, Wave
  pkg/core/types.go, kapp explicit_versioned_ref.go)
- ``versioning``: keep and prune rules, peers' versioned annotations, version windows
  (Helm resource_policy.go, Argo CD sync and compare options, Flux prune, kustomize
  needs-hash, kapp, Spinnaker)
- ``helm``: Helm's output: ``# Source:`` comments, the post-renderer annotation, the
  instance label, HELM_NAMESPACE, InstallOrder (helm pkg/action/action.go,
  pkg/release/v1/util/kind_sorter.go); Helm's and Argo CD's hook annotations and
  pre-install phases (helm pkg/release hook.go; argoproj/gitops-engine
  pkg/sync/common/types.go)
"""

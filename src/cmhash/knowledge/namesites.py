"""Fields outside pod specs that name a ConfigMap or Secret: who reads it by its name.

A pod spec reference is rewritten when ``--versioned`` renames the object; these are not
(their objects are not versioned, and old pods may still need the old name). Each row
says where the name is written and cites where the field is defined; plan/byname.py
finds every one in the input. An object any of them names is read by name
(plan/byname.py): ``--versioned`` leaves it alone unless the object opts in with
``cmhash.io/versioned: "true"``, and then each of these references gets an
``unknown-reference`` warning instead of a silent break.

And what Kubernetes RBAC says about reading ConfigMaps and Secrets: the resources that
mean them, the verbs that read, the ClusterRoles every cluster has, and the user and
group names the API server gives ServiceAccounts. Read by plan/byname.py (a Role's
``resourceNames``) and plan/byname.py (who may read an object through the API).
"""

from __future__ import annotations

from typing import NamedTuple

ANNOTATIONS = ("metadata", "annotations")

# the kind an RBAC rule's resource means (the core group's REST resources, as
# ``kubectl api-resources`` lists them; k8s.io/api rbac/v1 PolicyRule.Resources)
RBAC_RESOURCES = {"configmaps": "ConfigMap", "secrets": "Secret"}

# the verbs that read an object ("*": rbac/v1 VerbAll; k8s.io/kubernetes
# plugin/pkg/auth/authorizer/rbac/rbac.go RuleAllows, VerbMatches)
READ_VERBS = frozenset(("get", "list", "watch", "*"))

# the ClusterRoles every cluster has (Kubernetes' default RBAC, plugin/pkg/auth/authorizer/
# rbac/bootstrappolicy/policy.go): view reads ConfigMaps (not Secrets), edit and admin
# read both, cluster-admin everything; bound by name, they are not in the input
BUILTIN_CLUSTER_ROLES = {
    "view": ["ConfigMap"],
    "edit": ["ConfigMap", "Secret"],
    "admin": ["ConfigMap", "Secret"],
    "cluster-admin": ["ConfigMap", "Secret"],
}

# a ServiceAccount's user name is system:serviceaccount:NS:NAME, and it is in the groups
# system:serviceaccounts:NS and system:serviceaccounts (k8s.io/apiserver
# pkg/authentication/serviceaccount/util.go ServiceAccountUsernamePrefix,
# ServiceAccountGroupPrefix, AllServiceAccountsGroup)
SERVICE_ACCOUNT_USER_PREFIX = "system:serviceaccount:"
SERVICE_ACCOUNT_GROUP_PREFIX = "system:serviceaccounts:"
ALL_SERVICE_ACCOUNTS_GROUP = "system:serviceaccounts"


class Site(NamedTuple):
    """One field of one kind that names a ConfigMap or Secret."""

    groups: tuple[str, ...]  # the referring object's API group ("" core; "*" any)
    kinds: tuple[str, ...]  # its kinds ("*" any)
    path: tuple[str, ...]  # to the item ("*": each item of a list)
    name: str  # the item's field that holds the name ("field[]": a list of names)
    target: str  # ConfigMap | Secret | "kind" (the item's kind field) | "resources" (RBAC)
    default_kind: str | None = None  # for target "kind": when the item names none
    namespace: str | None = None  # the item's field naming another namespace
    cite: str = ""  # where the field is defined
    qualified: bool = False  # the value is ``namespace/name``
    default: str | None = None  # the name read when the field is absent ({name}: the
    # referring object's own name)


SITES: tuple[Site, ...] = (
    # RBAC: a rule limited to named objects (k8s.io/api rbac/v1 types.go PolicyRule)
    Site(
        ("rbac.authorization.k8s.io",),
        ("Role", "ClusterRole"),
        ("rules", "*"),
        "resourceNames[]",
        "resources",
        cite="k8s.io/api rbac/v1 PolicyRule.ResourceNames",
    ),
    # the ingress controller reads the TLS Secret by name (networking/v1 IngressTLS)
    Site(
        ("networking.k8s.io", "extensions"),
        ("Ingress",),
        ("spec", "tls", "*"),
        "secretName",
        "Secret",
        cite="k8s.io/api networking/v1 IngressTLS.SecretName",
    ),
    # token and pull Secrets of a ServiceAccount (core/v1 ServiceAccount)
    Site(("",), ("ServiceAccount",), ("secrets", "*"), "name", "Secret", cite="core/v1 Secrets"),
    Site(
        ("",),
        ("ServiceAccount",),
        ("imagePullSecrets", "*"),
        "name",
        "Secret",
        cite="core/v1 ServiceAccount.ImagePullSecrets",
    ),
    # Gateway API: listener certificates and backend CA bundles (apis/v1
    # gateway_types.go GatewayTLSConfig.CertificateRefs, SecretObjectReference: kind
    # defaults to Secret; backendtlspolicy_types.go CACertificateRefs)
    Site(
        ("gateway.networking.k8s.io",),
        ("Gateway",),
        ("spec", "listeners", "*", "tls", "certificateRefs", "*"),
        "name",
        "kind",
        "Secret",
        "namespace",
        cite="gateway-api apis/v1 gateway_types.go GatewayTLSConfig.CertificateRefs",
    ),
    Site(
        ("gateway.networking.k8s.io",),
        ("BackendTLSPolicy",),
        ("spec", "validation", "caCertificateRefs", "*"),
        "name",
        "kind",
        cite="gateway-api apis/v1 backendtlspolicy_types.go CACertificateRefs",
    ),
    # Flux: values and substitutions read from objects (helm-controller api/v2
    # ValuesReference, kustomize-controller api/v1 SubstituteReference: kind required)
    Site(
        ("helm.toolkit.fluxcd.io",),
        ("HelmRelease",),
        ("spec", "valuesFrom", "*"),
        "name",
        "kind",
        cite="fluxcd/helm-controller api/v2 reference_types.go ValuesReference",
    ),
    Site(
        ("kustomize.toolkit.fluxcd.io",),
        ("Kustomization",),
        ("spec", "postBuild", "substituteFrom", "*"),
        "name",
        "kind",
        cite="fluxcd/kustomize-controller api/v1 kustomization_types.go SubstituteReference",
    ),
    Site(
        ("kustomize.toolkit.fluxcd.io",),
        ("Kustomization",),
        ("spec", "decryption", "secretRef"),
        "name",
        "Secret",
        cite="fluxcd/kustomize-controller api/v1 Decryption.SecretRef",
    ),
    Site(
        ("kustomize.toolkit.fluxcd.io", "helm.toolkit.fluxcd.io"),
        ("Kustomization", "HelmRelease"),
        ("spec", "kubeConfig", "secretRef"),
        "name",
        "Secret",
        cite="fluxcd/pkg apis/meta KubeConfigReference.SecretRef",
    ),
    Site(
        ("source.toolkit.fluxcd.io",),
        ("GitRepository", "HelmRepository", "OCIRepository", "Bucket"),
        ("spec", "secretRef"),
        "name",
        "Secret",
        cite="fluxcd/source-controller api/v1 GitRepositorySpec.SecretRef",
    ),
    Site(
        ("source.toolkit.fluxcd.io",),
        ("GitRepository", "HelmRepository", "OCIRepository", "Bucket"),
        ("spec", "certSecretRef"),
        "name",
        "Secret",
        cite="fluxcd/source-controller api/v1 GitRepositorySpec.CertSecretRef",
    ),
    # cert-manager writes the certificate's Secret by name (Certificate.spec.secretName)
    Site(
        ("cert-manager.io",),
        ("Certificate",),
        ("spec",),
        "secretName",
        "Secret",
        cite="cert-manager pkg/apis/certmanager/v1 CertificateSpec.SecretName",
    ),
    # cert-manager's CA injector copies ca.crt of a named Secret into a webhook
    # configuration, APIService or CRD (cainjector: the inject-ca-from-secret annotation,
    # value namespace/name)
    Site(
        ("*",),
        ("*",),
        ANNOTATIONS,
        "cert-manager.io/inject-ca-from-secret",
        "Secret",
        cite="cert-manager docs/reference/cainjector.rst (inject-ca-from-secret)",
        qualified=True,
    ),
    # Istio's gateway reads the TLS Secret named by credentialName (networking/v1
    # ServerTLSSettings.credentialName)
    Site(
        ("networking.istio.io",),
        ("Gateway",),
        ("spec", "servers", "*", "tls"),
        "credentialName",
        "Secret",
        cite="istio.io/api networking/v1 ServerTLSSettings.credential_name",
    ),
    # Istio's sidecar or gateway reads the client TLS Secret named by a DestinationRule's
    # credentialName through SDS (networking/v1 ClientTLSSettings.credential_name), at
    # the traffic policy, its port-level settings, and each subset's
    *(
        Site(
            ("networking.istio.io",),
            ("DestinationRule",),
            path,
            "credentialName",
            "Secret",
            cite="istio.io/api networking/v1 ClientTLSSettings.credential_name",
        )
        for path in (
            ("spec", "trafficPolicy", "tls"),
            ("spec", "trafficPolicy", "portLevelSettings", "*", "tls"),
            ("spec", "subsets", "*", "trafficPolicy", "tls"),
            ("spec", "subsets", "*", "trafficPolicy", "portLevelSettings", "*", "tls"),
        )
    ),
    # Traefik's IngressRoute TLS Secret (traefik.io/v1alpha1 TLS.SecretName)
    Site(
        ("traefik.io", "traefik.containo.us"),
        ("IngressRoute", "IngressRouteTCP"),
        ("spec", "tls"),
        "secretName",
        "Secret",
        cite="traefik pkg/provider/kubernetes/crd/traefikio/v1alpha1 TLS.SecretName",
    ),
    # the external-secrets controller reads templateFrom's objects by name, in the
    # ExternalSecret's namespace (apis/externalsecrets/v1 externalsecret_types.go
    # TemplateFrom.ConfigMap/Secret: TemplateRef.Name)
    *(
        Site(
            ("external-secrets.io",),
            ("ExternalSecret",),
            ("spec", "target", "template", "templateFrom", "*", field),
            "name",
            kind,
            cite=f"external-secrets apis/externalsecrets/v1 TemplateFrom.{kind}",
        )
        for field, kind in (("configMap", "ConfigMap"), ("secret", "Secret"))
    ),
    # the Prometheus operator mounts these at /etc/prometheus/secrets/<name> and
    # /etc/alertmanager/{secrets,configmaps}/<name>, and reads an Alertmanager's
    # configuration Secret by name, alertmanager-<name> when none is given
    # (prometheus-operator 6adcebc5076c pkg/apis/monitoring/v1 prometheus_types.go:481,487
    # CommonPrometheusFields.Secrets/ConfigMaps, alertmanager_types.go:127,133,147
    # AlertmanagerSpec.Secrets/ConfigMaps/ConfigSecret; pkg/alertmanager/statefulset.go
    # defaultConfigSecretName)
    *(
        Site(
            ("monitoring.coreos.com",),
            ("Prometheus", "PrometheusAgent", "Alertmanager"),
            ("spec",),
            f"{field}[]",
            kind,
            cite=f"prometheus-operator CommonPrometheusFields/AlertmanagerSpec.{go}",
        )
        for field, kind, go in (
            ("secrets", "Secret", "Secrets"),
            ("configMaps", "ConfigMap", "ConfigMaps"),
        )
    ),
    Site(
        ("monitoring.coreos.com",),
        ("Alertmanager",),
        ("spec",),
        "configSecret",
        "Secret",
        cite="prometheus-operator AlertmanagerSpec.ConfigSecret (defaultConfigSecretName)",
        default="alertmanager-{name}",
    ),
    # ingress-nginx reads these Secrets by name, namespace/name or name
    # (docs/user-guide/nginx-configuration/annotations.md)
    *(
        Site(
            ("networking.k8s.io", "extensions"),
            ("Ingress",),
            ANNOTATIONS,
            f"nginx.ingress.kubernetes.io/{key}",
            "Secret",
            cite=f"ingress-nginx annotations.md ({key})",
            qualified=True,
        )
        for key in ("auth-secret", "auth-tls-secret", "proxy-ssl-secret")
    ),
)

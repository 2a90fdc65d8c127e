"""Objects that produce a Secret (or ConfigMap) in the cluster: a data table of source
kinds, like the workload kinds (kinds.py) and reference sites (podspec.py).

In a GitOps repository the Secret is rarely in the stream; the object a controller turns
into it is (a SealedSecret, an ExternalSecret, a SecretProviderClass). A source stands in
for what it produces: references to the produced name resolve to it, and its *content* is
the fields that decide what the controller writes (never its metadata). cmhash cannot see
the values behind them (a secret store, a cloud vault): a change there rolls nothing
offline.

Each row says where the produced names are (default: the source's own name), which fields
are its content, and whether pods reference the source object itself (a CSI volume names
its SecretProviderClass). More rows come from ``secretSources`` in the config file.
"""

# No "from __future__ import annotations": typing compiles string NamedTuple fields at import

from typing import Any, NamedTuple

Path = tuple[str, ...]


class Dependency(NamedTuple):
    """Objects a source copies content from (ExternalSecret ``templateFrom``): each item at
    ``path`` names one by ``name`` under one of ``kinds``' fields, optionally only some
    of its keys."""

    path: Path  # the items ("*" fans out)
    kinds: tuple[tuple[str, str], ...]  # (field of an item, the kind it names)
    name: str = "name"
    keys: Path = ("items", "*", "key")  # none listed: the whole object


# external-secrets apis/externalsecrets/v1/externalsecret_types.go: TemplateFrom
# {configMap, secret: TemplateRef{name, items: [{key, templateAs}]}, target, literal};
# the controller reads the listed keys of those objects, in the ExternalSecret's own
# namespace, and renders them into the Secret: their change is the Secret's change
TEMPLATE_FROM = Dependency(
    ("spec", "target", "template", "templateFrom", "*"),
    (("configMap", "ConfigMap"), ("secret", "Secret")),
)

# (kind, name, keys or None for all) of one object a source copies from
Depends = tuple[tuple[str, str, tuple[str, ...] | None], ...]


class Pin(NamedTuple):
    """Items of a source that read a value from a store: pinned when ``field`` is set
    (``None``: such an item can never be pinned)."""

    path: Path  # the items ("*" fans out)
    field: str | None


# external-secrets apis/externalsecrets/v1/externalsecret_types.go:
# ExternalSecretDataRemoteRef.Version ("Used to select a specific version of the
# Provider value, if supported"), used by spec.data[].remoteRef and
# spec.dataFrom[].extract; spec.dataFrom[].find (ExternalSecretFind) has no version:
# whatever matches at refresh time is written
EXTERNAL_SECRET_PINS = (
    Pin(("spec", "data", "*", "remoteRef"), "version"),
    Pin(("spec", "dataFrom", "*", "extract"), "version"),
    Pin(("spec", "dataFrom", "*", "find"), None),
)


class Restarts(NamedTuple):
    """The workloads a source's operator restarts itself when what it produces changes
    (Vault Secrets Operator's ``rolloutRestartTargets``): items at ``path``, each a
    ``kind`` (one of ``kinds``' names, -> (group, kind)) and a ``name`` in the source's
    namespace; none when the field at ``off[0]`` reads as ``off[1]`` (``off[2]``: its
    value when absent)."""

    path: Path
    kinds: tuple[tuple[str, tuple[str, str]], ...]
    operator: str
    off: tuple[Path, bool, bool] | None = None


class SecretSource(NamedTuple):
    group: str
    kind: str
    versions: tuple[str, ...]  # the served versions whose schema this row reads; () = any
    produces: str  # "Secret" | "ConfigMap"
    names: Path | None  # where the produced name(s) are ("*" fans out); None: own name
    own_name_default: bool  # no name at ``names``: the source's own name
    content: tuple[Path, ...]
    referenced: bool = False  # pods reference the source object itself (by its kind)
    # (path, values): a row that produces nothing when the field holds one of the values
    produces_nothing: tuple[Path, tuple[str, ...]] | None = None
    depends: Dependency | None = None  # objects whose content it copies in
    # the produced object's annotations as the source writes them (its template's): a
    # Reloader match/ignore there is the produced Secret's
    template_annotations: Path | None = None
    # store reads that a version may pin (an unpinned one changes with no Git change)
    pins: tuple[Pin, ...] = ()
    # how --versioned names what it produces (analyze/versioned_sources.py): "target",
    # "names", "sealed"; "": never versioned
    versioning: str = ""
    # (path, values): the produced Secret is not the source's own (not renamed)
    not_owned: tuple[Path, tuple[str, ...]] | None = None
    # workloads the operator restarts itself when the produced object changes
    restarts: Restarts | None = None

    @property
    def label(self) -> str:
        return f"{self.group}/{self.kind}" if self.group else self.kind


def dotted(text: str) -> Path:
    """``a.b.c`` as the path ``("a", "b", "c")``."""
    return tuple(text.split("."))


def source_row(
    group: str,
    kind: str,
    content: list[str],
    *,
    versions: tuple[str, ...] = (),
    produces: str = "Secret",
    name: str | None = None,
    own_name_default: bool = True,
    referenced: bool = False,
) -> SecretSource:
    return SecretSource(
        group,
        kind,
        versions,
        produces,
        dotted(name) if name else None,
        own_name_default,
        tuple(dotted(c) for c in content),
        referenced,
    )


# hashicorp/vault-secrets-operator api/v1beta1 (GroupVersion secrets.hashicorp.com/v1beta1,
# groupversion_info.go:16). Every kind writes the Secret spec.destination.name (common.go:17
# Destination.Name, `json:"name"`, required: no default name) in its own namespace; what
# it writes is decided by the store coordinates below and destination.type and
# .transformation (templates, includes, excludes, excludeRaw); destination.labels and
# .annotations are the Secret's metadata (common.go:27-33). The values in Vault are
# invisible offline: `cmhash lock` records what the operator says it synced (the lock).
# spec.rolloutRestartTargets (common.go:48 RolloutRestartTarget{kind, name}, kind one of
# Deployment, DaemonSet, StatefulSet, argo.Rollout; helpers/rollout_restart.go:94-106
# RolloutRestart switches on exactly these and patches the pod template's
# vso.secrets.hashicorp.com/restartedAt)
VSO_RESTARTS = Restarts(
    ("spec", "rolloutRestartTargets", "*"),
    (
        ("Deployment", ("apps", "Deployment")),
        ("DaemonSet", ("apps", "DaemonSet")),
        ("StatefulSet", ("apps", "StatefulSet")),
        ("argo.Rollout", ("argoproj.io", "Rollout")),
    ),
    "Vault Secrets Operator",
)
_VSO_DESTINATION = ["spec.destination.type", "spec.destination.transformation"]
VAULT_SOURCES: tuple[SecretSource, ...] = tuple(
    source_row(
        "secrets.hashicorp.com",
        kind,
        [*(f"spec.{c}" for c in content), *_VSO_DESTINATION],
        versions=("v1beta1",),
        name="spec.destination.name",
        own_name_default=False,
    )._replace(
        template_annotations=dotted("spec.destination.annotations"),
        restarts=restarts,
    )
    for kind, content, restarts in (
        # vaultstaticsecret_types.go VaultStaticSecretSpec (+ VaultStaticSecretCommon,
        # inlined): "All configured targets will be ignored if HMACSecretData is set to
        # false" (:35; controllers/vaultstaticsecret_controller.go:246 "Ignoring
        # RolloutRestartTargets"); hmacSecretData defaults to true (:29)
        (
            "VaultStaticSecret",
            ("vaultAuthRef", "namespace", "mount", "path", "version", "type"),
            VSO_RESTARTS._replace(off=(("spec", "hmacSecretData"), False, True)),
        ),
        # vaultdynamicsecret_types.go VaultDynamicSecretSpec
        (
            "VaultDynamicSecret",
            (
                "vaultAuthRef",
                "namespace",
                "mount",
                "requestHTTPMethod",
                "path",
                "params",
                "allowStaticCreds",
            ),
            VSO_RESTARTS,
        ),
        # vaultpkisecret_types.go VaultPKISecretSpec: the certificate request
        (
            "VaultPKISecret",
            (
                "vaultAuthRef",
                "namespace",
                "mount",
                "role",
                "issuerRef",
                "commonName",
                "altNames",
                "ipSans",
                "uriSans",
                "otherSans",
                "userIDs",
                "ttl",
                "format",
                "privateKeyFormat",
                "notAfter",
                "excludeCNFromSans",
            ),
            VSO_RESTARTS,
        ),
        # hcpvaultsecretsapp_types.go HCPVaultSecretsAppSpec
        ("HCPVaultSecretsApp", ("appName", "hcpAuthRef"), VSO_RESTARTS),
    )
)


BUILTIN_SOURCES: tuple[SecretSource, ...] = (
    # The controller names the Secret after the SealedSecret, in its namespace, whatever
    # spec.template.metadata says; re-sealing changes encryptedData, so it rolls the users.
    # spec.data is the deprecated whole-Secret form (bitnami-labs/sealed-secrets
    # pkg/apis/sealedsecrets/v1alpha1/sealedsecret_types.go: "Data is deprecated"), still
    # unsealed by the controller: content too.
    source_row(
        "bitnami.com",
        "SealedSecret",
        ["spec.encryptedData", "spec.data", "spec.template.type", "spec.template.data"],
        versions=("v1alpha1",),
    )._replace(
        # sealedsecret_expansion.go Unseal: the Secret's ObjectMeta is spec.template's
        template_annotations=dotted("spec.template.metadata.annotations"),
        versioning="sealed",
    ),
    # spec.target.name, default its own name; creationPolicy None writes no Secret.
    # The values in the backing store are invisible offline (refreshInterval, or a
    # runtime reloader, is what picks those up).
    *(
        source_row(
            "external-secrets.io",
            "ExternalSecret",
            ["spec.data", "spec.dataFrom", "spec.target.template", "spec.secretStoreRef"],
            versions=(version,),
            name="spec.target.name",
        )._replace(
            produces_nothing=(dotted("spec.target.creationPolicy"), ("None",)),
            depends=TEMPLATE_FROM,
            # ExternalSecretTemplateMetadata: the annotations the Secret is written with
            template_annotations=dotted("spec.target.template.metadata.annotations"),
            pins=EXTERNAL_SECRET_PINS,
            versioning="target",
            # externalsecret_controller.go Reconcile: Merge patches a Secret that must
            # exist, None writes nothing; only Owner (the default) and Orphan create it
            not_owned=(dotted("spec.target.creationPolicy"), ("Merge", "None")),
        )
        for version in ("v1", "v1beta1")
    ),
    # Pods name it in a CSI volume (volumeAttributes.secretProviderClass); its
    # secretObjects are synced into Secrets that env references may use.
    source_row(
        "secrets-store.csi.x-k8s.io",
        "SecretProviderClass",
        ["spec.parameters", "spec.secretObjects"],
        versions=("v1", "v1alpha1"),
        name="spec.secretObjects.*.secretName",
        own_name_default=False,
        referenced=True,
    )._replace(versioning="names"),
    *VAULT_SOURCES,
)


# sealed-secrets pkg/apis/sealedsecrets/v1alpha1/sealedsecret_types.go
# (SealedSecretNamespaceWideAnnotation, SealedSecretClusterWideAnnotation, annoNs
# "sealedsecrets.bitnami.com/"); sealedsecret_expansion.go SecretScope: either one
# "true" lifts the name binding of the strict scope (EncryptionLabel: the label is the
# namespace only, or empty), so a SealedSecret may be renamed (versioning "sealed":
# analyze/versioned_sources.py)
SEALED_WIDE = ("sealedsecrets.bitnami.com/cluster-wide", "sealedsecrets.bitnami.com/namespace-wide")


def secret_kinds(rows: tuple[SecretSource, ...]) -> frozenset[str]:
    """The kinds a pod references that are Secrets or stand for them (--exclude-secrets):
    Secret, and each source object pods reference by its own kind when it produces
    Secrets (a SecretProviderClass in a CSI volume)."""
    return frozenset(("Secret", *(r.kind for r in rows if r.referenced and r.produces == "Secret")))


def sources_from_config(data: list[dict[str, Any]]) -> tuple[SecretSource, ...]:
    """``secretSources`` entries of the config file (schema-validated) -> rows."""
    rows = []
    for k in data:
        api = str(k.get("apiVersion", ""))
        group = str(k["group"]) if "group" in k else api.rpartition("/")[0]
        version = api.rpartition("/")[2] if api else ""
        rows.append(
            source_row(
                group,
                str(k["kind"]),
                list(k["content"]),
                versions=(version,) if version and "group" not in k else (),
                produces=str(k.get("produces", "Secret")),
                name=k.get("name"),
                own_name_default=bool(k.get("ownNameDefault", True)),
            )
        )
    return tuple(rows)

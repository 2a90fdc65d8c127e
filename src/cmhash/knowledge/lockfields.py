"""Where each operator keeps a fingerprint of what it wrote into the cluster, as data:
the rows ``cmhash lock`` reads an export with (analyze/fingerprint.py), each citing the
operator's own types and controllers (the line numbers are those of the commits named
in the comments).

Render-time checksums cannot see a value rotated in a secret store: the operator writes
the new value into the Secret and nothing in Git moves. What can be seen offline, from
``kubectl get -o yaml``, is a field the operator changes exactly when it writes new data
(and not, say, on every refresh). A row names that field, the object it is the
fingerprint of (a Secret, or a SecretProviderClass for the CSI driver), where that
object's name is, and when the row applies; never a field that moves without a data
change (VSO's ``lastRenewalTime`` and ``lastGeneration``, ESO's ``refreshTime`` and
``syncedResourceVersion``, a VaultDynamicSecret lease's ``requestID``).
"""

# No "from __future__ import annotations": typing compiles string NamedTuple fields at import

import hashlib
from collections.abc import Mapping
from typing import Any, NamedTuple

from cmhash.knowledge.sources import Path, dotted

# external-secrets apis/externalsecrets/v1/externalsecret_types.go:764-770 (commit
# cc5bfbc2): AnnotationDataHash, "all secrets managed by an ExternalSecret have this
# annotation with the hash of their data", and LabelManaged ("... will have this label
# equal to true"); set together when ESO writes the Secret
# (pkg/controllers/externalsecret/externalsecret_controller.go:506-507)
DATA_HASH = "reconcile.external-secrets.io/data-hash"
ESO_MANAGED = "reconcile.external-secrets.io/managed"


def _go_map_text(data: Mapping[str, bytes]) -> bytes:
    """Go's ``fmt.Sprintf("%+v", data)`` for a ``map[string][]byte``: ``map[k:[b b b] ...]``,
    keys sorted, each byte in decimal (what ESO's ``ObjectHash`` hashes)."""
    text = " ".join(f"{k}:[{' '.join(str(b) for b in v)}]" for k, v in sorted(data.items()))
    return f"map[{text}]".encode()


def eso_data_hash(data: Mapping[str, bytes]) -> str:
    """ESO's ``esutils.ObjectHash(secret.Data)`` (runtime/esutils/utils.go:426-429): the
    hex SHA3-224 of Go's ``fmt.Sprintf("%+v", data)``. Offline, so the lock can tell a
    Secret edited behind ESO's back (the controller's own drift check,
    externalsecret_controller.go:1299: annotation != ObjectHash(Data))."""
    return hashlib.sha3_224(_go_map_text(data)).hexdigest()


def eso_hash_matches(annotation: str, data: Mapping[str, bytes]) -> bool:
    """Whether ESO's data-hash annotation is the hash of ``data`` as some release of ESO
    writes it: SHA3-224 (56 hex digits) since external-secrets PR #4696 ("Update md5
    hashing algorithim to sha3", merged 2025-04-22), the hex MD5 of the same text (32
    hex digits) in every release before it (pkg/utils/utils.go ``ObjectHash``:
    ``md5.Sum([]byte(fmt.Sprintf("%+v", object)))``). A release after the switch
    writes the new form on its next reconcile; until then, the old one is no drift."""
    if len(annotation) == 32:
        return annotation == hashlib.md5(_go_map_text(data), usedforsecurity=False).hexdigest()
    return annotation == eso_data_hash(data)


class StoreField(NamedTuple):
    """One place an operator's fingerprint is kept. A row applies to an object of
    (group, kind, one of versions) when ``when`` holds; the fingerprint is over
    ``fields`` (those set), of the object itself or, with ``on_target``, of the object
    it produced (that must be in the export too). Rows of one kind are tried in order:
    the first that applies decides; if its fields are unset, ``note`` says why."""

    group: str
    kind: str
    versions: tuple[str, ...]
    target: str  # the kind of the object the fingerprint is for
    name: Path | None  # where the target's name is (None: the object itself)
    fields: tuple[Path, ...]
    note: str  # why a row that applies gives nothing ({what}: the object)
    own_name_default: bool = False  # no name at ``name``: the object's own
    # (path, the boolean it must read as, its value when absent)
    when: tuple[Path, bool, bool] | None = None
    nothing: tuple[Path, tuple[str, ...]] | None = None  # (path, values): no target
    on_target: bool = False
    # one fingerprint per target over every object that names it (the CSI driver's
    # per-pod status): the set of the first field's items
    per_target: bool = False
    label: str = ""  # how ``per_target`` entries say what they were read from


_VSO = "secrets.hashicorp.com"
_DESTINATION = dotted("spec.destination.name")  # api/v1beta1/common.go:17-20, required
_MAC = dotted("status.secretMAC")
_NO_SYNC = "{what}: {field} is not set (not synced yet?): not locked"


def _vso(kind: str, fields: tuple[Path, ...], note: str = _NO_SYNC, **more: Any) -> StoreField:
    """A Vault Secrets Operator kind's row: the Secret it writes at spec.destination.name."""
    return StoreField(_VSO, kind, ("v1beta1",), "Secret", _DESTINATION, fields, note, **more)


FIELDS: tuple[StoreField, ...] = (
    # hashicorp/vault-secrets-operator (commit 9b840a5a) api/v1beta1: status.secretMAC is
    # the base64 HMAC-SHA256 of json.Marshal of the data VSO writes (helpers/hmac.go:71,
    # 386), under the operator's own key: opaque offline, and it changes exactly when
    # the data does (vaultstaticsecret_controller.go:241-244 syncs only when the MACs
    # differ). VaultStaticSecretStatus.SecretMAC (vaultstaticsecret_types.go:87) is set
    # only with spec.hmacSecretData, which defaults to true (:24-30; controller :215).
    _vso("VaultStaticSecret", (_MAC,), when=(dotted("spec.hmacSecretData"), True, True)),
    _vso(
        "VaultStaticSecret",
        (),
        "{what}: spec.hmacSecretData is false, so the operator keeps no MAC of the Secret "
        "it writes: export that Secret (with its data) to lock it",
    ),
    # vaultdynamicsecret_types.go:95-96 "SecretMAC will only be stored when
    # VaultDynamicSecretSpec.AllowStaticCreds is true" (controller :541)
    _vso("VaultDynamicSecret", (_MAC,), when=(dotted("spec.allowStaticCreds"), True, False)),
    # otherwise a new lease is new credentials: status.secretLease.id
    # (vaultdynamicsecret_types.go:82,107; controller getVaultSecretLease :720-726). A
    # renewal keeps the ID ("lease ID changed after renewal ... should never happen",
    # controller :259-262) but writes lastRenewalTime and a new requestID (:275-276):
    # neither is a fingerprint of the data
    _vso("VaultDynamicSecret", (dotted("status.secretLease.id"),)),
    # vaultpkisecret_types.go:122,135: secretMAC and serialNumber, both set on each
    # issuance (vaultpkisecret_controller.go:276, 321); VSO releases before the MAC
    # (controller :116-125 "schemaEpoch") have the serial only
    _vso("VaultPKISecret", (_MAC, dotted("status.serialNumber"))),
    # hcpvaultsecretsapp_types.go:80 (always computed: hcpvaultsecretsapp_controller.go:239-255)
    _vso("HCPVaultSecretsApp", (_MAC,)),
    # External Secrets: no status field follows the data (ExternalSecretStatus
    # refreshTime moves on every refresh, syncedResourceVersion is the ExternalSecret's
    # own generation and metadata: externalsecret_controller.go:770, pkg/controllers/util/
    # util.go:30-45); the fingerprint is the data-hash annotation on the Secret it
    # writes, named spec.target.name, else the ExternalSecret's own name
    # (externalsecret_types.go:246, controller :295-299); creationPolicy None writes
    # no Secret (controller :513)
    *(
        StoreField(
            "external-secrets.io",
            "ExternalSecret",
            (version,),
            "Secret",
            dotted("spec.target.name"),
            (("metadata", "annotations", DATA_HASH),),
            "{what}: its Secret is not in the export, or has no " + DATA_HASH + " annotation "
            "yet: export the Secrets too (their metadata is enough)",
            own_name_default=True,
            nothing=(dotted("spec.target.creationPolicy"), ("None",)),
            on_target=True,
        )
        for version in ("v1", "v1beta1")
    ),
    # ... and a Secret ESO manages carries it whether or not its ExternalSecret is
    # exported (LabelManaged: "true")
    StoreField(
        "",
        "Secret",
        ("v1",),
        "Secret",
        None,
        (("metadata", "annotations", DATA_HASH),),
        "",
        when=(("metadata", "labels", ESO_MANAGED), True, False),
    ),
    # cert-manager (commit 2d0d7f7f) pkg/apis/certmanager/v1/types_certificate.go:247
    # spec.secretName, :694 status.revision, set once per issuance right after the Secret
    # is written (pkg/controller/certificates/issuing/issuing_controller.go:472). The
    # Secret's own annotations (cert-manager.io/common-name, ...) describe the spec and
    # do not change on re-issuance.
    StoreField(
        "cert-manager.io",
        "Certificate",
        ("v1",),
        "Secret",
        dotted("spec.secretName"),
        (dotted("status.revision"),),
        "{what}: {field} is not set (no certificate issued yet): not locked",
    ),
    # kubernetes-sigs/secrets-store-csi-driver (commit 0aad886f) apis/v1/
    # secretproviderclasspodstatus_types.go:29-41: one per pod that mounts a class
    # (named <pod>-<namespace>-<class>, pkg/secrets-store/utils.go:105), status.objects
    # [{id, version}] of what the provider mounted (sorted by id, :110); Reloader hashes
    # the same (internal/pkg/util/util.go:62-70). The lock holds the set of every pod's
    # versions for the class: while a rotation has reached only some pods, both versions.
    *(
        StoreField(
            "secrets-store.csi.x-k8s.io",
            "SecretProviderClassPodStatus",
            (version,),
            "SecretProviderClass",
            dotted("status.secretProviderClassName"),
            (dotted("status.objects"),),
            "{what}: {field} is not set (nothing mounted yet?): not locked",
            per_target=True,
            label="status.objects of its SecretProviderClassPodStatuses",
        )
        for version in ("v1", "v1alpha1")
    ),
)


# What to export for an object a checksum takes a fingerprint of (``cmhash lock
# --print-kinds``): by its producer's kind (the operator's resource the field is on, as
# kubectl names it: plural.group, each CRD's spec.names.plural), or, for one made outside
# Git, its own. An ExternalSecret's fingerprint is on the Secret it writes; a CSI class's
# on its pods' SecretProviderClassPodStatuses.
EXPORTS: dict[str, str] = {
    "VaultStaticSecret": "vaultstaticsecrets.secrets.hashicorp.com",
    "VaultDynamicSecret": "vaultdynamicsecrets.secrets.hashicorp.com",
    "VaultPKISecret": "vaultpkisecrets.secrets.hashicorp.com",
    "HCPVaultSecretsApp": "hcpvaultsecretsapps.secrets.hashicorp.com",
    "ExternalSecret": "secrets",
    # a Secret a Certificate of the manifests issues: its status.revision suffices (the
    # row above, cert-manager types_certificate.go status.revision), never the Secret
    "Certificate": "certificates.cert-manager.io",
    "SecretProviderClass": "secretproviderclasspodstatuses.secrets-store.csi.x-k8s.io",
    "Secret": "secrets",
    "ConfigMap": "configmaps",
}


# The kinds the lock reads are namespaced: core v1 ConfigMap and Secret (kubernetes
# pkg/registry/core/{configmap,secret}/strategy.go NamespaceScoped() true), and each
# operator's CRD declares ``scope: Namespaced`` (VSO config/crd/bases/
# secrets.hashicorp.com_*.yaml, ESO config/crds/bases/external-secrets.io_externalsecrets.yaml,
# cert-manager deploy/crds/crd-certificates.yaml, secrets-store-csi-driver
# config/crd/bases/secrets-store.csi.x-k8s.io_secretproviderclasspodstatuses.yaml):
# kubectl get writes metadata.namespace on every one.
NAMESPACED: frozenset[tuple[str, str]] = frozenset(
    {("", "ConfigMap"), ("", "Secret")} | {(r.group, r.kind) for r in FIELDS}
)


# What the API server accepts (kubernetes/apimachinery pkg/util/validation/
# validation.go): a namespace is a DNS-1123 label (dns1123LabelFmt, at most 63); an
# object's name a DNS-1123 subdomain (dns1123SubdomainFmt, at most 253; what ConfigMaps,
# Secrets and the operators' kinds require); a ConfigMap's or Secret's key
# configMapKeyFmt (IsConfigMapKey, at most 253, not "." or ".." nor starting with
# ".."). An export names nothing else: anything else is not what the cluster holds.
DNS_LABEL = (r"[a-z0-9]([-a-z0-9]*[a-z0-9])?", 63)
DNS_SUBDOMAIN = (r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*", 253)
CONFIG_KEY = (r"[-._a-zA-Z0-9]+", 253)


def valid(text: str, rule: tuple[str, int]) -> bool:
    import re  # (compiled by re's cache: a lock run only)

    if rule is CONFIG_KEY and (text in (".", "..") or text.startswith("..")):
        return False
    return len(text) <= rule[1] and re.fullmatch(rule[0], text) is not None


def field_rows(group: str, kind: str, version: str) -> tuple[StoreField, ...]:
    """The rows for an object of this apiVersion and kind, in order."""
    return tuple(r for r in FIELDS if r.group == group and r.kind == kind and version in r.versions)


def shown(path: Path) -> str:
    """A field path as the lock and messages write it (an annotation's key in brackets)."""
    if len(path) == 3 and path[:2] in (("metadata", "annotations"), ("metadata", "labels")):
        return f"{path[0]}.{path[1]}[{path[2]}]"
    return ".".join(path)

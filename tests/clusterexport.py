"""An export of a cluster, as ``kubectl get ... -o yaml`` writes it (a ``List``, keys
sorted, what the API server adds: resourceVersion, uid, creationTimestamp, managed
labels), holding what the operators of tests/fixtures/lock/manifests wrote: their
custom resources with the status fields of their Go types, the Secrets they produced
(with the labels and annotations each writes), a Secret and a ConfigMap made outside
Git. ``export(**changes)`` gives it with some values rotated, so a test can move one
thing and see what moves. Every Secret value is in ``VALUES`` (tests grep every output
for them)."""

from __future__ import annotations

import base64
import copy
import json
from typing import Any

import yaml

# every Secret value of the export, as the pods read them
VALUES = {
    "db-creds": {"password": "VALUE-vault-db-password", "username": "VALUE-vault-db-user"},
    "pg-creds": {"password": "VALUE-vault-pg-password", "username": "VALUE-vault-pg-user"},
    "pki-tls": {"certificate": "VALUE-pki-certificate", "private_key": "VALUE-pki-private-key"},
    "hvs-app": {"api_key": "VALUE-hcp-api-key"},
    "secret-to-be-created": {
        "secret-key-to-be-managed": "VALUE-eso-managed",
        "other-key": "VALUE-eso-other",
    },
    "web-tls": {"tls.crt": "VALUE-cm-tls-crt", "tls.key": "VALUE-cm-tls-key"},
    "foosecret": {"username": "VALUE-csi-username"},
    "legacy": {"token": "VALUE-legacy-token", "extra": "VALUE-legacy-extra"},
}

_META = {"creationTimestamp": "2026-05-04T09:12:31Z", "namespace": "shop"}
_VSO_LABELS = {  # vault-secrets-operator helpers/secrets.go OwnerLabels
    "app.kubernetes.io/component": "secret-sync",
    "app.kubernetes.io/managed-by": "hashicorp-vso",
    "app.kubernetes.io/name": "vault-secrets-operator",
}


def _b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


def eso_hash(data: dict[str, str]) -> str:
    """ESO's ObjectHash of the Secret's data, as the controller writes it: the hex
    SHA3-224 of Go's fmt "%+v" of a map[string][]byte (runtime/esutils/utils.go:426)."""
    import hashlib

    text = " ".join(
        f"{k}:[{' '.join(str(b) for b in v.encode())}]" for k, v in sorted(data.items())
    )
    return hashlib.sha3_224(f"map[{text}]".encode()).hexdigest()


def _meta(name: str, rv: int, **extra: Any) -> dict[str, Any]:
    return {**_META, "name": name, "resourceVersion": str(rv), "uid": f"uid-{name}", **extra}


def _secret(
    name: str, values: dict[str, str], rv: int, kind: str = "Opaque", **meta: Any
) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": _meta(name, rv, **meta),
        "type": kind,
        "data": {k: _b64(v) for k, v in values.items()},
    }


def _vso(kind: str, name: str, spec: dict[str, Any], status: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": "secrets.hashicorp.com/v1beta1",
        "kind": kind,
        "metadata": _meta(
            name, 4100, generation=1, finalizers=[f"{kind.lower()}.secrets.hashicorp.com/finalizer"]
        ),
        "spec": spec,
        "status": {"lastGeneration": 1, **status},
    }


def objects(values: dict[str, dict[str, str]], status: dict[str, Any]) -> list[dict[str, Any]]:
    """The export's objects, with these Secret values and these status fields."""
    vso_secret_meta = {"labels": {**_VSO_LABELS, "secrets.hashicorp.com/vso-ownerRefUID": "u"}}
    eso_data = values["secret-to-be-created"]
    legacy = values["legacy"]
    return [
        _vso(
            "VaultStaticSecret",
            "db",
            {
                "vaultAuthRef": "vaultauth-sample",
                "mount": "kvv2",
                "type": "kv-v2",
                "path": "shop/db",
                "refreshAfter": "30s",
                "hmacSecretData": True,
                "destination": {"name": "db-creds", "create": True},
                "rolloutRestartTargets": [{"kind": "Deployment", "name": "worker"}],
            },
            {
                "secretMAC": status["db"],
                "vaultClientMeta": {"cacheKey": "kubernetes-7f1c", "id": "5a0c"},
            },
        ),
        _vso(
            "VaultDynamicSecret",
            "pg",
            {
                "vaultAuthRef": "vaultauth-sample",
                "mount": "db",
                "path": "creds/shop",
                "destination": {"name": "pg-creds", "create": True},
            },
            {
                "lastRenewalTime": status["pg-renewal"],
                "secretLease": {
                    "id": status["pg"],
                    "duration": 3600,
                    "renewable": True,
                    "requestID": status["pg-request"],
                },
                "staticCredsMetaData": {"lastVaultRotation": 0, "rotationPeriod": 0, "ttl": 0},
            },
        ),
        _vso(
            "VaultPKISecret",
            "pki",
            {
                "vaultAuthRef": "vaultauth-sample",
                "mount": "pki",
                "role": "default",
                "destination": {"name": "pki-tls", "create": True},
                "commonName": "consul.example.com",
                "format": "pem",
                "expiryOffset": "5s",
                "ttl": "15s",
            },
            {
                "serialNumber": status["pki"],
                "expiration": 1778000000,
                "lastRotation": 1777990000,
                "secretMAC": status["pki-mac"],
                "valid": True,
                "error": "",
            },
        ),
        _vso(
            "HCPVaultSecretsApp",
            "hvs",
            {"appName": "shop", "hcpAuthRef": "default", "destination": {"name": "hvs-app"}},
            {"secretMAC": status["hvs"]},
        ),
        *(
            _secret(name, values[name], 4200 + i, **copy.deepcopy(vso_secret_meta))
            for i, name in enumerate(("db-creds", "pg-creds", "pki-tls", "hvs-app"))
        ),
        {
            "apiVersion": "external-secrets.io/v1",
            "kind": "ExternalSecret",
            "metadata": _meta("example", 4300, generation=1),
            "spec": {
                "refreshInterval": "1h0m0s",
                "secretStoreRef": {"name": "secretstore-sample", "kind": "SecretStore"},
                "target": {"name": "secret-to-be-created", "creationPolicy": "Owner"},
                "data": [
                    {"secretKey": "secret-key-to-be-managed", "remoteRef": {"key": "provider-key"}},
                    {"secretKey": "other-key", "remoteRef": {"key": "provider-other"}},
                ],
            },
            "status": {
                # what moves on every refresh, data change or not
                "refreshTime": status["eso-refresh"],
                "syncedResourceVersion": "1-8d4f7a0c1b2e3f4a5b6c7d8e9f0a1b2c",
                "binding": {"name": "secret-to-be-created"},
                "conditions": [{"type": "Ready", "status": "True", "reason": "SecretSynced"}],
            },
        },
        _secret(
            "secret-to-be-created",
            eso_data,
            4301,
            labels={"reconcile.external-secrets.io/managed": "true"},
            annotations={"reconcile.external-secrets.io/data-hash": eso_hash(eso_data)},
        ),
        {
            "apiVersion": "cert-manager.io/v1",
            "kind": "Certificate",
            "metadata": _meta("web-tls", 4400, generation=1),
            "spec": {
                "secretName": "web-tls",
                "dnsNames": ["shop.example.com"],
                "issuerRef": {"name": "letsencrypt", "kind": "ClusterIssuer"},
            },
            "status": {
                "revision": status["cert"],
                "notAfter": "2026-08-02T09:12:31Z",
                "notBefore": "2026-05-04T09:12:31Z",
                "renewalTime": "2026-07-03T09:12:31Z",
                "conditions": [{"type": "Ready", "status": "True"}],
            },
        },
        _secret(
            "web-tls",
            values["web-tls"],
            4401,
            "kubernetes.io/tls",
            labels={"controller.cert-manager.io/fao": "true"},
            annotations={
                "cert-manager.io/certificate-name": "web-tls",
                "cert-manager.io/common-name": "shop.example.com",
                "cert-manager.io/alt-names": "shop.example.com",
                "cert-manager.io/ip-sans": "",
                "cert-manager.io/uri-sans": "",
                "cert-manager.io/issuer-kind": "ClusterIssuer",
                "cert-manager.io/issuer-name": "letsencrypt",
            },
        ),
        *(
            {
                "apiVersion": "secrets-store.csi.x-k8s.io/v1",
                "kind": "SecretProviderClassPodStatus",
                "metadata": _meta(
                    f"{pod}-shop-azure-sync",
                    4500 + i,
                    labels={"internal.secrets-store.csi.k8s.io/node-name": "node-1"},
                    ownerReferences=[{"apiVersion": "v1", "kind": "Pod", "name": pod, "uid": pod}],
                ),
                "status": {
                    "mounted": True,
                    "podName": pod,
                    "secretProviderClassName": "azure-sync",
                    "targetPath": f"/var/lib/kubelet/pods/{pod}/volumes/csi/mount",
                    "objects": [{"id": "secret/shop-secret", "version": status[f"csi-{i}"]}],
                },
            }
            for i, pod in enumerate(
                ("busybox-deployment-7f9c-abcde", "busybox-deployment-7f9c-fghij")
            )
        ),
        _secret(
            "foosecret",
            values["foosecret"],
            4510,
            labels={"secrets-store.csi.k8s.io/managed": "true"},
        ),
        _secret(
            "legacy",
            legacy,
            4600,
            # kubectl apply keeps the whole object here: values in an annotation
            annotations={
                "kubectl.kubernetes.io/last-applied-configuration": json.dumps(
                    {
                        "apiVersion": "v1",
                        "kind": "Secret",
                        "metadata": {"name": "legacy", "namespace": "shop"},
                        "stringData": legacy,
                    }
                )
            },
        ),
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": _meta("outside", 4700),
            "data": {"level": status["outside"]},
        },
    ]


STATUS = {
    "db": "3q2+7wAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=",
    "pg": "database/creds/shop/9d0f3c1e-5b7a-4c2d-8e1f-0a9b8c7d6e5f",
    "pg-renewal": 1777990000,
    "pg-request": "3b9d8c7a-0000-4000-8000-000000000001",
    "pki": "39:dd:2e:90:b7:23:1f:8d",
    "pki-mac": "q1w2e3r4t5y6u7i8o9p0AAAAAAAAAAAAAAAAAAAAAAA=",
    "hvs": "zZ9y8X7w6V5u4T3s2R1q0PAAAAAAAAAAAAAAAAAAAAA=",
    "eso-refresh": "2026-05-04T09:12:31Z",
    "cert": 3,
    "csi-0": "7f1c2b3a",
    "csi-1": "7f1c2b3a",
    "outside": "info",
}


def export(values: dict[str, dict[str, str]] | None = None, **status: Any) -> str:
    """The export's text (``values``: Secret values by name, overriding ``VALUES``;
    ``status``: ``STATUS`` fields overridden)."""
    merged = {**copy.deepcopy(VALUES), **(values or {})}
    items = objects(merged, {**STATUS, **status})
    doc = {"apiVersion": "v1", "items": items, "kind": "List", "metadata": {"resourceVersion": ""}}
    return yaml.safe_dump(doc, sort_keys=True, default_flow_style=False, width=1 << 20)

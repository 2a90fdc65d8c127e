"""The operators' fingerprint fields as data (knowledge/lockfields.py): ESO's hash
against its own test vector, every row citing its upstream, the rows read for each
kind in their order, and the Vault Secrets Operator rows of the Secret sources."""

from __future__ import annotations

import inspect

import pytest

from cmhash.knowledge import lockfields, sources
from cmhash.knowledge.lockfields import FIELDS, eso_data_hash, eso_hash_matches, field_rows


def test_eso_object_hash_matches_its_upstream_test_vector() -> None:
    # external-secrets runtime/esutils/utils_test.go TestObjectHash "map also works"
    assert (
        eso_data_hash({"foo": b"value1", "bar": b"value2"})
        == "1bed8bcbcb4547ffe19a19cd47d9078e84aa6598266d86b99f992d64"
    )


def test_both_forms_of_eso_data_hash_are_read() -> None:
    # releases before external-secrets PR #4696 wrote MD5: pkg/utils/utils_test.go
    # TestObjectHash "map also works" of those releases; since, SHA3-224 (the vector above)
    data = {"foo": b"value1", "bar": b"value2"}
    assert eso_hash_matches("caa0155759a6a9b3b6ada5a6883ee2bb", data)
    assert eso_hash_matches("1bed8bcbcb4547ffe19a19cd47d9078e84aa6598266d86b99f992d64", data)
    assert not eso_hash_matches("caa0155759a6a9b3b6ada5a6883ee2bc", data)
    assert not eso_hash_matches("caa0155759a6a9b3b6ada5a6883ee2bb", {"foo": b"value1"})


def test_every_row_cites_its_upstream() -> None:
    text = inspect.getsource(lockfields)
    for operator in (
        "hashicorp/vault-secrets-operator",
        "external-secrets",
        "cert-manager",
        "secrets-store-csi-driver",
    ):
        assert operator in text
    for row in FIELDS:
        assert row.fields or row.note  # a row reads something, or says why not


@pytest.mark.parametrize(
    ("group", "kind", "version", "fields"),
    [
        ("secrets.hashicorp.com", "VaultStaticSecret", "v1beta1", [["status.secretMAC"], []]),
        (
            "secrets.hashicorp.com",
            "VaultDynamicSecret",
            "v1beta1",
            [["status.secretMAC"], ["status.secretLease.id"]],
        ),
        (
            "secrets.hashicorp.com",
            "VaultPKISecret",
            "v1beta1",
            [["status.secretMAC", "status.serialNumber"]],
        ),
        ("cert-manager.io", "Certificate", "v1", [["status.revision"]]),
        ("secrets-store.csi.x-k8s.io", "SecretProviderClassPodStatus", "v1", [["status.objects"]]),
        ("secrets.hashicorp.com", "VaultStaticSecret", "v1", []),  # no such version
    ],
)
def test_the_rows_of_each_kind(
    group: str, kind: str, version: str, fields: list[list[str]]
) -> None:
    rows = field_rows(group, kind, version)
    assert [[".".join(p) for p in r.fields] for r in rows] == fields
    for row in rows:  # never a field that moves without new data
        for path in row.fields:
            assert path[-1] not in ("lastGeneration", "lastRenewalTime", "requestID", "refreshTime")


def test_vault_kinds_are_secret_sources_named_by_their_destination() -> None:
    rows = {r.kind: r for r in sources.VAULT_SOURCES}
    assert set(rows) == {
        "VaultStaticSecret",
        "VaultDynamicSecret",
        "VaultPKISecret",
        "HCPVaultSecretsApp",
    }
    for row in rows.values():
        assert row.group == "secrets.hashicorp.com" and row.versions == ("v1beta1",)
        assert row.names == ("spec", "destination", "name") and not row.own_name_default
        assert row.restarts is not None
        assert dict(row.restarts.kinds) == {
            "Deployment": ("apps", "Deployment"),
            "DaemonSet": ("apps", "DaemonSet"),
            "StatefulSet": ("apps", "StatefulSet"),
            "argo.Rollout": ("argoproj.io", "Rollout"),
        }
        # the Secret's metadata is not its content
        assert ("spec", "destination", "labels") not in row.content
        assert ("spec", "destination", "annotations") not in row.content
        assert ("spec", "rolloutRestartTargets") not in row.content
    assert rows["VaultStaticSecret"].restarts.off == (("spec", "hmacSecretData"), False, True)  # type: ignore[union-attr]

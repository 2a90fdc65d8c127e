"""The lock in the checksums (plan/lock.py): an export of the operators' real object
shapes (tests/clusterexport.py, from their samples and Go types) over the manifests
that use them (tests/fixtures/lock/manifests). One rotation in the store moves exactly
the checksums of the workloads that use the object (key-level where the export holds
the data); what moves without a data change (a lease renewal, ESO's refresh time)
leaves the lock byte-identical; without --lock every checksum is what it was."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from clusterexport import STATUS, VALUES, export
from conftest import TESTS, run_cmhash

MANIFESTS = TESTS / "fixtures" / "lock" / "manifests"
WORKLOADS = {
    "api",
    "worker",
    "pgbouncer",
    "consul",
    "hvs-reader",
    "eso-one",
    "eso-other",
    "web",
    "busybox-deployment",
    "legacy-user",
    "legacy-all",
    "plain",
}


def _lock(tmp: Path, text: str, *args: str) -> bytes:
    (tmp / "export.yaml").write_text(text)
    res = run_cmhash(["lock", "export.yaml", "--for", str(MANIFESTS), "-q", *args], cwd=tmp)
    assert res.code == 0, res.stderr
    return res.stdout


def _checksums(tmp: Path, lock: bytes | None, *args: str) -> dict[str, str | None]:
    extra: list[str] = []
    if lock is not None:
        (tmp / "cmhash.lock").write_bytes(lock)
        extra = ["--lock", "cmhash.lock"]
    res = run_cmhash(["explain", "--format", "json", "-q", *extra, *args, str(MANIFESTS)], cwd=tmp)
    assert res.code == 0, res.stderr
    data = json.loads(res.stdout)
    return {w["name"]: w["checksum"] for w in data["workloads"]}


def _values(**changed: dict[str, str]) -> dict[str, dict[str, str]]:
    return {name: {**VALUES[name], **vals} for name, vals in changed.items()}


# (what rotates: new Secret values and the status the operator writes with them) ->
# exactly the workloads whose checksum moves
ROTATIONS: list[tuple[str, dict[str, Any], set[str]]] = [
    # VaultStaticSecret: a new MAC and new data; api reads only `password`
    (
        "vault-static-password",
        {
            "values": _values(**{"db-creds": {"password": "VALUE-vault-db-password-2"}}),
            "db": "4q2+7wAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=",
        },
        {"api", "worker"},
    ),
    (
        "vault-static-username",
        {
            "values": _values(**{"db-creds": {"username": "VALUE-vault-db-user-2"}}),
            "db": "5q2+7wAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=",
        },
        {"worker"},  # the target VSO restarts reads it whole; api only `password`
    ),
    (
        "vault-dynamic-new-lease",
        {
            "values": _values(**{"pg-creds": {"password": "VALUE-vault-pg-password-2"}}),
            "pg": "database/creds/shop/00000000-1111-4222-8333-444444444444",
        },
        {"pgbouncer"},
    ),
    (
        "vault-pki-reissued",
        {
            "values": _values(**{"pki-tls": {"certificate": "VALUE-pki-certificate-2"}}),
            "pki": "11:22:33:44:55:66:77:88",
            "pki-mac": "r1w2e3r4t5y6u7i8o9p0AAAAAAAAAAAAAAAAAAAAAAA=",
        },
        {"consul"},
    ),
    (
        "hcp-vault-secrets",
        {
            "values": _values(**{"hvs-app": {"api_key": "VALUE-hcp-api-key-2"}}),
            "hvs": "aZ9y8X7w6V5u4T3s2R1q0PAAAAAAAAAAAAAAAAAAAAA=",
        },
        {"hvs-reader"},
    ),
    (
        "external-secrets-one-key",
        {"values": _values(**{"secret-to-be-created": {"other-key": "VALUE-eso-other-2"}})},
        {"eso-other"},  # key-level: eso-one reads the other key
    ),
    (
        "cert-manager-renewal",
        {"values": _values(**{"web-tls": {"tls.crt": "VALUE-cm-tls-crt-2"}}), "cert": 4},
        {"web"},
    ),
    (
        "csi-new-version",
        {
            "values": _values(foosecret={"username": "VALUE-csi-username-2"}),
            "csi-0": "8a2d",
            "csi-1": "8a2d",
        },
        {"busybox-deployment"},
    ),
    # the versions the pods mounted (what the CSI volume holds; no synced Secret moves)
    ("csi-mounted-version-only", {"csi-0": "8a2d", "csi-1": "8a2d"}, {"busybox-deployment"}),
    ("csi-one-pod-so-far", {"csi-1": "8a2d"}, {"busybox-deployment"}),
    (
        "outside-secret-one-key",
        {"values": _values(legacy={"extra": "VALUE-legacy-extra-2"})},
        {"legacy-all"},  # legacy-user reads `token` only
    ),
    (
        "outside-secret-token",
        {"values": _values(legacy={"token": "VALUE-legacy-token-2"})},
        {"legacy-user", "legacy-all"},
    ),
    ("outside-configmap", {"outside": "debug"}, {"legacy-all"}),
]


@pytest.mark.parametrize(("name", "change", "moved"), ROTATIONS, ids=[r[0] for r in ROTATIONS])
def test_one_rotation_moves_exactly_its_consumers(
    tmp_path: Path, name: str, change: dict[str, Any], moved: set[str]
) -> None:
    before = _checksums(tmp_path, _lock(tmp_path, export()))
    values = change.pop("values", None)
    lock = _lock(tmp_path, export(values, **change))
    after = _checksums(tmp_path, lock)
    assert set(before) == WORKLOADS
    assert {w for w in WORKLOADS if before[w] != after[w]} == moved


@pytest.mark.parametrize(
    "noise",
    [
        {"pg-renewal": 1777999999, "pg-request": "3b9d8c7a-0000-4000-8000-000000000002"},
        {"eso-refresh": "2026-05-04T10:12:31Z"},
    ],
    ids=["vault-lease-renewal", "eso-refresh"],
)
def test_what_moves_without_new_data_leaves_the_lock_byte_identical(
    tmp_path: Path, noise: dict[str, Any]
) -> None:
    assert _lock(tmp_path, export(**noise)) == _lock(tmp_path, export())


def test_no_rotation_no_change_and_no_lock_no_change(tmp_path: Path) -> None:
    first = _lock(tmp_path, export())
    # another run, other resourceVersions and timestamps of unrelated objects: the same bytes
    other = export().replace('resourceVersion: "4700"', 'resourceVersion: "9999"')
    assert _lock(tmp_path, other) == first
    without = _checksums(tmp_path, None)
    # workloads that use nothing of the lock keep their checksum with it
    with_lock = _checksums(tmp_path, first)
    assert with_lock["plain"] is None
    assert without["plain"] is None
    # those the lock covers get one (outside-Git objects: a checksum they had not)
    assert without["legacy-user"] is None and with_lock["legacy-user"] is not None
    assert without["api"] != with_lock["api"]


def test_status_fields_are_what_the_operator_changes_on_new_data() -> None:
    """The rows read the fields the rotations above change, never lastGeneration or
    lastRenewalTime (pinned on the export: they are there)."""
    text = export()
    for field in ("lastGeneration", "lastRenewalTime", "requestID", "refreshTime"):
        assert field in text
    assert str(STATUS["cert"]) in text


def test_secret_key_keys_the_fingerprints(tmp_path: Path) -> None:
    env = {"LOCK_KEY": "k" * 32}
    plain = _lock(tmp_path, export())
    res = run_cmhash(
        ["lock", "export.yaml", "--for", str(MANIFESTS), "--secret-key-env", "LOCK_KEY"],
        cwd=tmp_path,
        env=env,
    )
    assert res.code == 0, res.stderr
    assert json.loads(res.stdout)["keyed"] is True and json.loads(plain)["keyed"] is False

    def secrets(lock: bytes) -> set[str]:  # (a ConfigMap is hashed as checksums hash it: unkeyed)
        return {o["fingerprint"] for o in json.loads(lock)["objects"] if o["kind"] != "ConfigMap"}

    assert not secrets(res.stdout) & secrets(plain)
    assert "not keyed" not in res.stderr


def test_a_class_no_pod_mounts_now_keeps_its_entry_from_the_lock_it_replaces(
    tmp_path: Path,
) -> None:
    """A SecretProviderClassPodStatus exists only while a pod mounts the class: with no
    pod (scaled to zero, a CronJob between runs) the export shows no value, and the
    lock at -o keeps the class's entry; nothing moves, and when pods mount it again
    with the same versions the lock is byte-identical (no flapping)."""
    full = export()
    items = yaml.safe_load(full)
    items["items"] = [i for i in items["items"] if i["kind"] != "SecretProviderClassPodStatus"]
    zero = yaml.safe_dump(items, sort_keys=True, default_flow_style=False, width=1 << 20)
    first = _lock(tmp_path, full)
    (tmp_path / "cmhash.lock").write_bytes(first)

    def again(text: str) -> tuple[bytes, str]:
        (tmp_path / "export.yaml").write_text(text)
        args = ["lock", "export.yaml", "--for", str(MANIFESTS), "-o", "cmhash.lock"]
        res = run_cmhash(args, cwd=tmp_path)
        assert res.code == 0, res.stderr
        return (tmp_path / "cmhash.lock").read_bytes(), res.stderr

    kept, err = again(zero)
    assert kept == first
    assert "SecretProviderClass shop/azure-sync: no pod mounts it now" in err
    assert "its entry is kept from cmhash.lock" in err
    assert again(full)[0] == first
    # a rotation while no pod mounts it shows when one does
    assert again(export(**{"csi-0": "v2", "csi-1": "v2"}))[0] != first
    # with no lock to replace (stdout), nothing is kept: said as before
    (tmp_path / "export.yaml").write_text(zero)
    res = run_cmhash(["lock", "export.yaml", "--for", str(MANIFESTS)], cwd=tmp_path)
    assert "azure-sync" not in res.stdout.decode()


# A Secret defined in Git that an operator fills: External Secrets with creationPolicy
# Merge keeps its keys and merges the store's in (externalsecret_controller_template.go
# ApplyTemplate: "existing secret keys (if CreationPolicy is Merge)"); Vault Secrets
# Operator writes into an existing Secret with destination.create false, its default
# (api/v1beta1/common.go Destination.Create "+kubebuilder:default=false": "If the
# Secret already exists this should be set to false")
FILLED = {
    "eso-merge": (
        "apiVersion: v1\nkind: Secret\nmetadata: {name: app, namespace: shop}\n"
        "stringData: {LOG_LEVEL: info}\n---\n"
        "apiVersion: external-secrets.io/v1\nkind: ExternalSecret\n"
        "metadata: {name: app-store, namespace: shop}\n"
        "spec:\n  secretStoreRef: {name: vault, kind: ClusterSecretStore}\n"
        "  target: {name: app, creationPolicy: Merge}\n"
        "  data:\n  - secretKey: DB_PASSWORD\n    remoteRef: {key: shop/app, property: password}\n",
        "secrets",
    ),
    "vso-create-false": (
        "apiVersion: v1\nkind: Secret\nmetadata: {name: app, namespace: shop}\ntype: Opaque\n---\n"
        "apiVersion: secrets.hashicorp.com/v1beta1\nkind: VaultStaticSecret\n"
        "metadata: {name: app-store, namespace: shop}\n"
        "spec: {mount: kv, path: shop/app, type: kv-v2, destination: {name: app}}\n",
        "vaultstaticsecrets.secrets.hashicorp.com",
    ),
}
USER = (
    "---\napiVersion: apps/v1\nkind: Deployment\nmetadata: {name: api, namespace: shop}\n"
    "spec:\n  selector: {matchLabels: {app: a}}\n  template:\n    metadata: {labels: {app: a}}\n"
    "    spec:\n      containers: [{name: c, image: x, envFrom: [{secretRef: {name: app}}]}]\n"
)


def _filled_export(case: str, password: str) -> str:
    import base64

    from clusterexport import eso_hash

    data = {"DB_PASSWORD": password, "LOG_LEVEL": "info"}
    if case == "eso-merge":
        item: dict[str, Any] = {
            "apiVersion": "v1",
            "kind": "Secret",
            "type": "Opaque",
            "data": {k: base64.b64encode(v.encode()).decode() for k, v in data.items()},
            "metadata": {
                "name": "app",
                "namespace": "shop",
                "resourceVersion": "3",
                "annotations": {"reconcile.external-secrets.io/data-hash": eso_hash(data)},
            },
        }
    else:
        item = {
            "apiVersion": "secrets.hashicorp.com/v1beta1",
            "kind": "VaultStaticSecret",
            "metadata": {"name": "app-store", "namespace": "shop", "resourceVersion": "3"},
            "spec": {
                "mount": "kv",
                "path": "shop/app",
                "type": "kv-v2",
                "destination": {"name": "app"},
            },
            "status": {"secretMAC": base64.b64encode(password.encode() * 2).decode()},
        }
    doc = {"apiVersion": "v1", "kind": "List", "items": [item], "metadata": {"resourceVersion": ""}}
    return json.dumps(doc)


@pytest.mark.parametrize("case", sorted(FILLED))
def test_a_secret_in_git_that_an_operator_fills_is_locked(tmp_path: Path, case: str) -> None:
    """Its cluster copy is Git's and the store's: what to export is printed, the lock
    holds its entry, and a rotation in the store moves its users (with Git's content
    still in the checksum)."""
    manifests, kinds = FILLED[case]
    (tmp_path / "m.yaml").write_text(manifests + USER)
    res = run_cmhash(["lock", "--print-kinds", "--for", "m.yaml"], cwd=tmp_path)
    assert res.code == 0 and res.stdout.decode().strip() == kinds, res.stderr

    def checksum(password: str) -> str:
        (tmp_path / "export.yaml").write_text(_filled_export(case, password))
        res = run_cmhash(
            ["lock", "export.yaml", "--for", "m.yaml", "-o", "cmhash.lock", "-q"], cwd=tmp_path
        )
        assert res.code == 0, res.stderr
        assert json.loads((tmp_path / "cmhash.lock").read_text())["objects"], "nothing locked"
        res = run_cmhash(["--no-config", "--lock", "cmhash.lock", "-q", "m.yaml"], cwd=tmp_path)
        assert res.code == 0, res.stderr
        (value,) = re.findall(r'checksum/config": "([0-9a-f]{64})"', res.stdout.decode())
        return str(value)

    one = checksum("pw-one")
    assert checksum("pw-two") != one
    assert checksum("pw-one") == one

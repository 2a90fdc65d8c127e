"""The lock file as a run reads it (plan/lockfile.py, plan/lock.py): --lock and lock: in
.cmhash.yaml (relative to the config file), a bad lock refused at file:line:col, notes
for the entries that enter no checksum, no missing-reference warning for an object the
lock holds, explain's fields valid against its schema, --check and --print-kinds."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest
from clusterexport import export
from conftest import ROOT, TESTS, run_cmhash

MANIFESTS = TESTS / "fixtures" / "lock" / "manifests"


@pytest.fixture
def locked(tmp_path: Path) -> Path:
    (tmp_path / "export.yaml").write_text(export())
    res = run_cmhash(["lock", "export.yaml", "-o", "cmhash.lock", "-q"], cwd=tmp_path)
    assert res.code == 0, res.stderr
    return tmp_path


def test_lock_in_the_config_file_is_relative_to_it(locked: Path) -> None:
    (locked / "deploy").mkdir()
    (locked / "deploy" / ".cmhash.yaml").write_text("lock: ../cmhash.lock\n")
    by_option = run_cmhash(
        ["-q", "--no-config", "--lock", "cmhash.lock", str(MANIFESTS)], cwd=locked
    )
    by_config = run_cmhash(["-q", str(MANIFESTS)], cwd=locked / "deploy")
    plain = run_cmhash(["-q", "--no-config", str(MANIFESTS)], cwd=locked)
    assert by_option.code == by_config.code == 0, by_config.stderr
    assert by_option.stdout == by_config.stdout != plain.stdout


def test_notes_for_entries_that_enter_no_checksum(locked: Path) -> None:
    """The lock of everything exported holds objects no workload uses, and objects the
    manifests do not know at all: each a note (never an error), once."""
    res = run_cmhash(["--no-config", "--lock", "cmhash.lock", str(MANIFESTS)], cwd=locked)
    assert res.code == 0, res.stderr
    notes = [line for line in res.stderr.splitlines() if "note: cmhash.lock" in line]
    assert notes == []  # every entry of this lock is used
    extra = json.loads((locked / "cmhash.lock").read_text())
    extra["objects"].append({**extra["objects"][0], "kind": "Secret", "name": "nobody-uses"})
    extra["objects"].append({**extra["objects"][0], "kind": "ConfigMap", "name": "shared"})
    (locked / "more.lock").write_text(json.dumps(extra))
    res = run_cmhash(["--no-config", "--lock", "more.lock", str(MANIFESTS)], cwd=locked)
    assert res.code == 0, res.stderr
    assert (
        "cmhash: note: more.lock: Secret shop/nobody-uses is in the lock and not in the "
        "manifests (neither defined, produced nor referenced)"
    ) in res.stderr
    assert (
        "cmhash: note: more.lock: ConfigMap shop/shared is defined in the manifests: what they "
        "say is hashed, not its lock entry"
    ) in res.stderr
    # what the lock holds is no missing reference
    assert "missing-reference" not in res.stderr
    plain = run_cmhash(["--no-config", str(MANIFESTS)], cwd=locked)
    assert "Secret 'legacy', which is not in the input" in plain.stderr


@pytest.mark.parametrize(
    ("text", "where", "message"),
    [
        ("[]", ":1:1:", "not a cmhash lock file (a JSON object)"),
        ('{"cmhashLock": 2, "objects": []}', ":1:16:", "not a cmhash lock file of format 1"),
        ('{"cmhashLock": 1, "objects": {}}', ":1:30:", "objects must be a list"),
        (
            '{"cmhashLock": 1, "objects": [{"kind": "Pod", "namespace": "a", "name": "b", '
            '"from": "x", "field": "y", "fingerprint": "' + "0" * 64 + '"}]}',
            ":1:40:",
            "kind must be one of ConfigMap, Secret, SecretProviderClass",
        ),
        (
            '{"cmhashLock": 1, "objects": [{"kind": "Secret", "namespace": "a", "name": "b", '
            '"from": "x", "field": "y", "fingerprint": "12"}]}',
            ":1:123:",
            "fingerprint must be 64 lower-case hex digits",
        ),
        ('{"cmhashLock": 1, "objects": [], "objects": []}', ":1:34:", "duplicate key 'objects'"),
        ('{"cmhashLock": 1, "objects": [', ":1:31:", "YAML syntax error"),
    ],
    ids=["list", "format", "objects", "kind", "fingerprint", "duplicate", "syntax"],
)
def test_a_bad_lock_is_refused_at_its_place(
    tmp_path: Path, text: str, where: str, message: str
) -> None:
    (tmp_path / "bad.lock").write_text(text)
    (tmp_path / "a.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n")
    res = run_cmhash(["--no-config", "--lock", "bad.lock", "a.yaml"], cwd=tmp_path)
    assert res.code == 2
    assert f"cmhash: bad.lock{where} " in res.stderr and message in res.stderr, res.stderr
    assert res.stdout == b""
    res = run_cmhash(["--no-config", "--lock", "nope.lock", "a.yaml"], cwd=tmp_path)
    assert res.code == 2 and "nope.lock: cannot read file" in res.stderr


def test_explain_shows_the_lock_and_validates(locked: Path) -> None:
    res = run_cmhash(
        ["explain", "--no-config", "--format", "json", "--lock", "cmhash.lock", str(MANIFESTS)],
        cwd=locked,
    )
    data = json.loads(res.stdout)
    schema = json.loads((ROOT / "src/cmhash/schemas/explain.schema.json").read_text())
    jsonschema.validate(data, schema)
    refs = {(w["name"], r["name"]): r for w in data["workloads"] for r in w["references"]}
    assert refs[("api", "db-creds")]["lockedBy"] == "VaultStaticSecret shop/db status.secretMAC"
    assert refs[("legacy-user", "legacy")]["target"] == "in-lock"
    assert refs[("legacy-user", "legacy")]["lockedBy"] == "Secret shop/legacy data"
    text = run_cmhash(
        ["explain", "--no-config", "--lock", "cmhash.lock", str(MANIFESTS)], cwd=locked
    ).out
    assert "Secret/legacy via env (keys token): in-lock (locked: Secret shop/legacy data)" in text


def test_check_and_print_kinds(locked: Path) -> None:
    args = ["lock", "export.yaml", "--for", str(MANIFESTS), "-o", "for.lock", "-q"]
    assert run_cmhash(args, cwd=locked).code == 0
    assert run_cmhash([*args, "--check"], cwd=locked).code == 0
    (locked / "export.yaml").write_text(export(cert=7))
    res = run_cmhash([*args, "--check"], cwd=locked)
    assert res.code == 1 and "for.lock would change" in res.stderr
    assert run_cmhash(["lock", "export.yaml", "--check"], cwd=locked).code == 2  # needs -o
    res = run_cmhash(["lock", "--print-kinds", "--for", str(MANIFESTS)], cwd=locked)
    assert res.out.strip().split(",") == [
        "certificates.cert-manager.io",  # (for the Secret its Certificate issues)
        "configmaps",
        "hcpvaultsecretsapps.secrets.hashicorp.com",
        "secretproviderclasspodstatuses.secrets-store.csi.x-k8s.io",
        "secrets",
        "vaultdynamicsecrets.secrets.hashicorp.com",
        "vaultpkisecrets.secrets.hashicorp.com",
        "vaultstaticsecrets.secrets.hashicorp.com",
    ]
    assert run_cmhash(["lock"], cwd=locked).code == 2

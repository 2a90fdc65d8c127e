"""report's two causes for what Git does not show (report/workloads.py): a fingerprint of
the lock that changed, ``rotated in the store (<what it was read from>)``, and
``restart requested: <reason>``; both restarts, counted by --max-restarts, shown in
every format, valid against the report's schema."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
from clusterexport import VALUES, export
from conftest import ROOT, TESTS, report_json, run_cmhash

MANIFESTS = TESTS / "fixtures" / "lock" / "manifests"
SCHEMA = json.loads((ROOT / "src" / "cmhash" / "schemas" / "report.schema.json").read_text())


def _lock(tmp: Path, name: str, text: str) -> None:
    (tmp / f"{name}.yaml").write_text(text)
    res = run_cmhash(
        ["lock", f"{name}.yaml", "--for", str(MANIFESTS), "-o", f"{name}.lock", "-q"], cwd=tmp
    )
    assert res.code == 0, res.stderr


def _manifests() -> bytes:
    return b"".join(p.read_bytes() + b"\n---\n" for p in sorted(MANIFESTS.glob("*.yaml")))


def test_a_rotation_is_the_cause_and_counts_as_a_restart(tmp_path: Path) -> None:
    _lock(tmp_path, "old", export())
    rotated = {"db-creds": {**VALUES["db-creds"], "password": "VALUE-vault-db-password-2"}}
    _lock(tmp_path, "new", export(rotated, db="4q2+7wAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA="))
    text = _manifests()
    data = report_json(tmp_path, text, text, "--old-lock", "old.lock", "--lock", "new.lock")
    jsonschema.validate(data, SCHEMA)
    causes = {w["name"]: w["causes"] for w in data["restart"]}
    assert set(causes) == {"api", "worker"}
    assert causes["api"] == [
        {
            "type": "config",
            "kind": "Secret",
            "name": "db-creds",
            "change": "rotated in the store (VaultStaticSecret shop/db)",
            "keys": ["password"],
        }
    ]
    assert causes["worker"][0]["change"] == (
        "rotated in the store (VaultStaticSecret shop/db; Vault Secrets Operator restarts it too)"
    )
    # the same lock on both sides: nothing
    same = report_json(tmp_path, text, text, "--old-lock", "new.lock", "--lock", "new.lock")
    assert same["restart"] == []
    res = run_cmhash(
        [
            "report",
            "--no-config",
            "old.yaml",
            "new.yaml",
            "--old-lock",
            "old.lock",
            "--lock",
            "new.lock",
            "--max-restarts",
            "1",
            "--format",
            "markdown",
        ],
        cwd=tmp_path,
    )
    assert res.code == 1
    assert "_rotated in the store (VaultStaticSecret shop/db)_" in res.out
    assert "2 workloads restart (budget 1)" in res.stderr


DEP = """apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: shop{ann}
spec:
  selector:
    matchLabels: {{app: web}}
  template:
    metadata:
      labels: {{app: web}}
    spec:
      containers:
      - name: web
        image: web:1
"""


def test_a_restart_requested_is_the_cause_and_counts(tmp_path: Path) -> None:
    old = DEP.format(ann="").encode()
    new = DEP.format(ann='\n  annotations:\n    cmhash.io/restart: "pick up the new CA"').encode()
    data = report_json(tmp_path, old, new)
    jsonschema.validate(data, SCHEMA)
    [web] = data["restart"]
    assert {
        "type": "checksum",
        "kind": None,
        "name": None,
        "change": "restart requested: pick up the new CA",
        "keys": [],
    } in web["causes"]
    res = run_cmhash(
        [
            "report",
            "--no-config",
            "old.yaml",
            "new.yaml",
            "--max-restarts",
            "0",
            "--format",
            "text",
        ],
        cwd=tmp_path,
    )
    assert res.code == 1
    assert "(restart requested: pick up the new CA)" in res.out
    # the same reason on both sides restarts nothing
    assert report_json(tmp_path, new, new)["restart"] == []


def test_a_new_reason_on_a_configmap_is_one_cause(tmp_path: Path) -> None:
    def side(reason: str | None) -> bytes:
        ann = f'  annotations:\n    cmhash.io/restart: "{reason}"\n' if reason else ""
        cm = f"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: pool\n  namespace: shop\n{ann}"
        app = DEP.format(ann="").replace(
            "        image: web:1\n",
            "        image: web:1\n        envFrom:\n        - configMapRef: {name: pool}\n",
        )
        return (cm + 'data:\n  size: "1"\n---\n' + app).encode()

    [web] = report_json(tmp_path, side("first"), side("resize"))["restart"]
    assert [c["change"] for c in web["causes"]] == ["restart requested: ConfigMap pool: resize"]
    [web] = report_json(tmp_path, side("resize"), side(None))["restart"]
    assert [c["change"] for c in web["causes"]] == [
        "restart no longer requested: ConfigMap pool: resize"
    ]

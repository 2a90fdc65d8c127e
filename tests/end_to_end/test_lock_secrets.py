"""No value from an exported Secret anywhere: not in the lock, not in the output, the
explanation, the report (every format), nor any message, a warning or an error; each
value looked for as the pod reads it and as the export writes it (base64)."""

from __future__ import annotations

import base64
from pathlib import Path

import pytest
from clusterexport import VALUES, export
from conftest import TESTS, run_cmhash

MANIFESTS = TESTS / "fixtures" / "lock" / "manifests"


def _forms() -> list[str]:
    out = []
    for values in VALUES.values():
        for value in values.values():
            out += [value, base64.b64encode(value.encode()).decode()]
    return out


def _rotated() -> str:
    return export(
        {name: {k: v + "-2" for k, v in values.items()} for name, values in VALUES.items()},
        db="Zq2+7wAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=",
        pg="database/creds/shop/rotated",
        pki="99:88",
        cert=9,
        **{"csi-0": "v2", "csi-1": "v2"},
    )


def _assert_clean(*outputs: bytes | str) -> None:
    forms = _forms() + [f + "-2" for f in _forms()]
    for out in outputs:
        text = out.decode() if isinstance(out, bytes) else out
        for form in forms:
            assert form not in text, form


@pytest.mark.parametrize("key", [None, "LOCK_KEY"])
def test_no_exported_value_in_any_output(tmp_path: Path, key: str | None) -> None:
    env = {"LOCK_KEY": "a-key-of-the-ci-job"}
    keyed = ["--secret-key-env", key] if key else []
    outputs: list[bytes | str] = []
    for name, text in (("old", export()), ("new", _rotated())):
        (tmp_path / f"{name}.yaml").write_text(text)
        res = run_cmhash(
            ["lock", f"{name}.yaml", "--for", str(MANIFESTS), "-o", f"{name}.lock", *keyed],
            cwd=tmp_path,
            env=env,
        )
        assert res.code == 0, res.stderr
        outputs += [res.stderr, (tmp_path / f"{name}.lock").read_text()]
        res = run_cmhash(["lock", f"{name}.yaml", *keyed], cwd=tmp_path, env=env)  # everything
        outputs += [res.stdout, res.stderr]
    lock = ["--lock", "new.lock", *keyed]
    for args in (
        [str(MANIFESTS), *lock],
        ["--diff", str(MANIFESTS), *lock],
        ["explain", "--format", "text", str(MANIFESTS), *lock],
        ["explain", "--format", "json", str(MANIFESTS), *lock],
        ["explain", "--format", "mermaid", str(MANIFESTS), *lock],
        *(
            [
                "report",
                str(MANIFESTS),
                str(MANIFESTS),
                "--old-lock",
                "old.lock",
                *lock,
                "--format",
                f,
            ]
            for f in ("markdown", "json", "text", "codequality")
        ),
    ):
        res = run_cmhash(args, cwd=tmp_path, env=env)
        assert res.code == 0, (args, res.stderr)
        outputs += [res.stdout, res.stderr]
    report = run_cmhash(
        [
            "report",
            str(MANIFESTS),
            str(MANIFESTS),
            "--old-lock",
            "old.lock",
            *lock,
            "--format",
            "text",
        ],
        cwd=tmp_path,
        env=env,
    ).stdout.decode()
    assert "rotated in the store (VaultStaticSecret shop/db)" in report
    _assert_clean(*outputs)


def test_no_value_in_errors_about_an_export(tmp_path: Path) -> None:
    bad = export().replace("resourceVersion: '4600'", "generation: 1")
    bad = bad.replace(base64.b64encode(b"VALUE-legacy-token").decode(), "VALUE-legacy-token==")
    (tmp_path / "bad.yaml").write_text(bad)
    res = run_cmhash(["lock", "bad.yaml"], cwd=tmp_path)
    assert res.code == 2
    _assert_clean(res.stdout, res.stderr)


def _same_value_in(namespace: str, name: str) -> str:
    return f"""- apiVersion: v1
  data:
    password: aHVudGVyMg==
  kind: Secret
  metadata:
    name: {name}
    namespace: {namespace}
    resourceVersion: '1'
  type: Opaque
- apiVersion: secrets.hashicorp.com/v1beta1
  kind: VaultStaticSecret
  metadata:
    name: {name}
    namespace: {namespace}
    resourceVersion: '1'
  spec:
    destination:
      create: true
      name: {name}-vso
    hmacSecretData: true
    mount: kvv2
    path: app/{name}
    type: kv-v2
  status:
    secretMAC: q1M7zS0cRk3U5l9ZtJmKVHn1fQh2bXo6yWcA8dPe4Ls=
"""


@pytest.mark.parametrize("key", [None, "lock-key"])
def test_equal_values_in_two_objects_give_unrelated_fingerprints(
    tmp_path: Path, key: str | None
) -> None:
    """prod's and staging's Secret db hold the same value (and VSO the same MAC): the lock
    must not say so, keyed or not; the same object gives the same fingerprint again."""
    import json

    items = "".join(
        _same_value_in(ns, name)
        for ns, name in (("prod", "db"), ("prod", "db2"), ("staging", "db"))
    )
    (tmp_path / "e.yaml").write_text(f"apiVersion: v1\nkind: List\nitems:\n{items}")
    args = ["lock", "e.yaml", "-q"] + (["--secret-key-env", "K"] if key else [])
    runs = [run_cmhash(args, cwd=tmp_path, env={"K": key or ""}) for _ in range(2)]
    assert runs[0].code == 0, runs[0].stderr
    assert runs[0].stdout == runs[1].stdout
    objects = json.loads(runs[0].stdout)["objects"]
    assert len(objects) == 6
    prints = [o["fingerprint"] for o in objects]
    assert len(set(prints)) == 6
    keys = [o["keys"]["password"] for o in objects if "keys" in o]
    assert len(set(keys)) == 3


def test_manifests_without_a_namespace_are_warned_of_and_n_locks_them(tmp_path: Path) -> None:
    """helm template writes no namespace: what such manifests use matches nothing in the
    export (objects in `shop`) until -n gives the deploy's namespace."""
    from conftest import ROOT

    examples = ROOT / "examples" / "lock"
    text = (examples / "manifests.yaml").read_text()
    (tmp_path / "m.yaml").write_text(text.replace("  namespace: shop\n", ""))
    args = ["lock", str(examples / "cluster.yaml"), "--for", "m.yaml", "--secret-key-env", "K"]
    res = run_cmhash(args, cwd=tmp_path, env={"K": "k"})
    assert res.code == 0, res.stderr
    assert b'"objects": []' in res.stdout
    assert "use have no namespace" in res.stderr and "-n" in res.stderr
    res = run_cmhash([*args, "-n", "shop"], cwd=tmp_path, env={"K": "k"})
    assert res.code == 0 and b'"objects": []' not in res.stdout, res.stderr
    assert "no namespace" not in res.stderr


def test_print_kinds_asks_for_the_certificate_not_the_secret_it_issues(tmp_path: Path) -> None:
    """A Secret a Certificate of the manifests issues: its status.revision suffices, so
    the narrow RBAC (no Secrets) the lock page describes is enough."""
    (tmp_path / "m.yaml").write_text(
        """apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: shop}
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - name: c
        image: x
        envFrom: [{secretRef: {name: web-tls}}]
---
apiVersion: cert-manager.io/v1
kind: Certificate
metadata: {name: web, namespace: shop}
spec:
  secretName: web-tls
  dnsNames: [web.example]
  issuerRef: {kind: ClusterIssuer, name: le}
"""
    )
    res = run_cmhash(["lock", "--print-kinds", "--for", "m.yaml"], cwd=tmp_path)
    assert res.code == 0, res.stderr
    assert res.stdout == b"certificates.cert-manager.io\n"

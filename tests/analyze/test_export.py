"""Exports as kubectl writes them, and what it never writes (analyze/export.py): a List,
a stream, JSON all read alike; anything else refused with file:line:col, exit 2,
nothing written, and no text from inside a Secret in the message."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
import yaml
from clusterexport import VALUES, export
from conftest import run_cmhash

SECRET = """apiVersion: v1
kind: Secret
metadata:
  name: s
  namespace: shop
  resourceVersion: "7"
data:
  token: SElEREVOLVZBTFVF
"""
HIDDEN = "HIDDEN-VALUE"  # SElEREVOLVZBTFVF


def lock(tmp: Path, text: str | bytes, *args: str) -> tuple[int, str, str]:
    path = tmp / "export.yaml"
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text)
    res = run_cmhash(["lock", "export.yaml", "-o", "cmhash.lock", *args], cwd=tmp)
    out = (tmp / "cmhash.lock").read_text() if (tmp / "cmhash.lock").exists() else ""
    return res.code, res.stderr, out


def test_a_list_a_stream_and_json_give_one_lock(tmp_path: Path) -> None:
    text = export()
    code, err, as_list = lock(tmp_path, text)
    assert code == 0, err
    items = yaml.safe_load(text)["items"]
    stream = "".join("---\n" + yaml.safe_dump(i, sort_keys=True) for i in items)
    (tmp_path / "cmhash.lock").unlink()
    assert lock(tmp_path, stream)[2] == as_list
    (tmp_path / "cmhash.lock").unlink()
    as_json = json.dumps(yaml.safe_load(text), indent=4)  # kubectl get -o json
    assert lock(tmp_path, as_json)[2] == as_list
    # the header names the export, never a time
    assert json.loads(as_list)["exports"] == ["export.yaml"]


def test_an_empty_list_is_an_empty_lock_and_an_empty_file_an_error(tmp_path: Path) -> None:
    code, err, text = lock(
        tmp_path, 'apiVersion: v1\nitems: []\nkind: List\nmetadata:\n  resourceVersion: ""\n'
    )
    assert code == 0, err
    assert json.loads(text)["objects"] == []
    (tmp_path / "cmhash.lock").unlink()
    code, err, text = lock(tmp_path, "# nothing\n")
    assert code == 2 and text == ""
    assert "export.yaml:1:1: the export is empty" in err


LIST_IN_LIST = "apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: List\n  items: []\n"


@pytest.mark.parametrize(
    ("text", "where", "message"),
    [
        ("- a\n- b\n", ":1:1:", "not an object (a mapping)"),
        (LIST_IN_LIST, ":4:3:", "a List inside a List: kubectl never writes one"),
        (
            SECRET + "---\n" + SECRET,
            ":10:1:",
            "Secret shop/s is in the export twice (also at export.yaml:1)",
        ),
        (
            SECRET.replace("metadata:", "metadata: &m"),
            ":3:11:",
            "an anchor: kubectl never writes one",
        ),
        (
            SECRET
            + "---\n"
            + SECRET.replace("name: s", "name: t").replace(
                "data:\n  token: SElEREVOLVZBTFVF", "data: !!map {token: SElEREVOLVZBTFVF}"
            ),
            ":16:7:",
            "a tag: kubectl never writes one",
        ),
        (
            SECRET.replace('resourceVersion: "7"\n', ""),
            ":4:3:",
            "an object with no metadata.resourceVersion: not what the cluster holds (a manifest from Git?)",
        ),
        (SECRET.replace("kind: Secret\n", ""), ":1:1:", "an object with no kind"),
        (
            SECRET.replace("SElEREVOLVZBTFVF", "SElEREVOLVZBTFVF!"),
            ":8:10:",
            "Secret data key 'token' is not valid base64",
        ),
        (
            SECRET.replace("token: SElEREVOLVZBTFVF", "token: [SElEREVOLVZBTFVF]"),
            ":8:10:",
            "Secret 'data.token' must be a string",
        ),
        (
            "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems: []\n",
            ":1:1:",
            "an object with no metadata",
        ),
        (
            SECRET.replace("name: s", "name: HIDDEN-VALUE"),
            ":4:9:",
            "metadata.name is not a name the API server accepts",
        ),
        (
            SECRET.replace("namespace: shop", "namespace: 'HIDDEN VALUE'"),
            ":5:14:",
            "metadata.namespace is not a name the API server accepts",
        ),
        (
            SECRET.replace("  namespace: shop\n", ""),
            ":4:3:",
            "a Secret with no metadata.namespace: kubectl get writes the namespace",
        ),
        (
            SECRET.replace("name: s", "name: 12345"),
            ":4:9:",
            "metadata.name is not a string (kubectl get writes it quoted)",
        ),
        (
            SECRET.replace('resourceVersion: "7"', "resourceVersion: 7"),
            ":6:20:",
            "metadata.resourceVersion is not a string (kubectl get writes it quoted)",
        ),
        (
            "apiVersion: secrets.hashicorp.com/v1beta1\nkind: VaultStaticSecret\n"
            "metadata: {name: v, resourceVersion: '8'}\n"
            "spec: {destination: {name: s}}\nstatus: {secretMAC: x}\n",
            ":3:11:",
            "a VaultStaticSecret with no metadata.namespace",
        ),
        (
            SECRET.replace("  token:", "  'HIDDEN VALUE':"),
            ":1:1:",
            "Secret shop/s: a key of its data is not a key the API server accepts",
        ),
        (
            "apiVersion: secrets.hashicorp.com/v1beta1\nkind: VaultStaticSecret\n"
            "metadata: {name: v, namespace: shop, resourceVersion: '1'}\n"
            "spec: {destination: {name: HIDDEN-VALUE}}\nstatus: {secretMAC: x}\n",
            ":4:28:",
            "VaultStaticSecret shop/v: the name of its Secret is not a name the API server accepts",
        ),
        (
            SECRET.replace(
                "  token: SElEREVOLVZBTFVF", "  token: SElEREVOLVZBTFVF\n  token: SElEREVOLVZBTFVF"
            ),
            ":9:3:",
            "duplicate key 'token'",
        ),
    ],
    ids=[
        "not-a-mapping",
        "list-in-list",
        "twice",
        "anchor",
        "tag",
        "a-manifest",
        "no-kind",
        "bad-base64",
        "not-a-string",
        "resource-list",
        "bad-name",
        "bad-namespace",
        "no-namespace",
        "int-name",
        "int-resource-version",
        "operator-no-namespace",
        "bad-key",
        "bad-target-name",
        "duplicate-key",
    ],
)
def test_what_kubectl_never_writes_is_refused(
    tmp_path: Path, text: str, where: str, message: str
) -> None:
    code, err, out = lock(tmp_path, text)
    assert code == 2, err
    assert f"export.yaml{where} {message}" in err, err
    assert out == "" and not (tmp_path / "cmhash.lock").exists()
    assert HIDDEN not in err and "SElEREVOLVZBTFVF" not in err


def test_an_alias_is_refused(tmp_path: Path) -> None:
    text = (
        "apiVersion: v1\nkind: List\nitems:\n- &s\n"
        + "".join("  " + line + "\n" for line in SECRET.splitlines())
        + "- *s\n"
    )
    code, err, _ = lock(tmp_path, text)
    assert code == 2
    assert "export.yaml:4:3: an anchor: kubectl never writes one" in err


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"\xff\xfeapiVersion: v1\n", "UTF-16"),
        (SECRET.encode().replace(b"name: s", b"name: s\xe9"), "export.yaml:4:10: invalid UTF-8"),
        (SECRET.encode() + b"\x00", "NUL byte"),
    ],
    ids=["utf-16", "latin-1", "nul"],
)
def test_what_is_not_utf8_text_is_refused(tmp_path: Path, data: bytes, message: str) -> None:
    code, err, _ = lock(tmp_path, data)
    assert code == 2 and message in err


def test_secret_values_in_unexpected_places_never_come_out(tmp_path: Path) -> None:
    """Values where kubectl puts them (last-applied-configuration), and where a hostile
    export may (labels, annotations, status, a key's name of another object): none in
    the lock or any message, whatever the lock reads."""
    hostile = (
        SECRET.replace(
            "metadata:\n",
            "metadata:\n  labels:\n    leak: HIDDEN-VALUE\n  annotations:\n"
            "    reconcile.external-secrets.io/data-hash: HIDDEN-VALUE\n"
            "    cert-manager.io/certificate-name: HIDDEN-VALUE\n",
        ).replace("namespace: shop", "namespace: shop\n  labels2: {x: HIDDEN-VALUE}")
        + "status:\n  secretMAC: HIDDEN-VALUE\n"
    )
    vso = (
        "---\napiVersion: secrets.hashicorp.com/v1beta1\nkind: VaultStaticSecret\n"
        "metadata: {name: v, namespace: shop, resourceVersion: '8'}\n"
        "spec: {destination: {name: s}}\nstatus: {secretMAC: HIDDEN-VALUE}\n"
    )
    code, err, out = lock(tmp_path, hostile + vso)
    assert code == 0, err
    assert HIDDEN not in out and HIDDEN not in err
    # ESO's annotation that is no hash of the data: said, without the value
    assert "its data is not what its reconcile.external-secrets.io/data-hash annotation says" in err
    for values in VALUES.values():
        for value in values.values():
            assert value not in out


def test_a_secret_written_by_eso_before_its_sha3_switch_is_no_drift(tmp_path: Path) -> None:
    """ESO releases before PR #4696 write the data-hash as MD5 (32 hex digits) of the
    same text: read as such, it is no edit behind ESO's back; a wrong one still is."""
    managed = SECRET.replace(
        "metadata:\n",
        "metadata:\n  annotations:\n    reconcile.external-secrets.io/data-hash: HASH\n"
        "  labels:\n    reconcile.external-secrets.io/managed: 'true'\n",
    )
    md5 = "6c1b1bff7a2bb2f6f8bcbb0a0b6e1e0b"  # (a wrong one, of the same form)
    code, err, _ = lock(tmp_path, managed.replace("HASH", md5))
    assert code == 0, err
    assert "changed outside External Secrets" in err
    go = "map[token:[" + " ".join(str(b) for b in HIDDEN.encode()) + "]]"  # %+v of Data
    right = hashlib.md5(go.encode(), usedforsecurity=False).hexdigest()
    code, err, _ = lock(tmp_path, managed.replace("HASH", right))
    assert code == 0, err
    assert "changed outside External Secrets" not in err, err


def test_huge_exports_are_refused_past_the_limit(tmp_path: Path) -> None:
    big = "apiVersion: v1\nkind: List\nitems:\n" + "".join(
        "- " + SECRET.replace("name: s", f"name: s{i}").replace("\n", "\n  ").rstrip() + "\n"
        for i in range(2000)
    )
    code, err, out = lock(tmp_path, big)
    assert code == 0, err
    assert len(json.loads(out)["objects"]) == 2000
    code, err, _ = lock(tmp_path, big, "--max-input-bytes", "1000")
    assert code == 2 and "over the limit of 1000 bytes" in err

"""Which files a walk, --check, --diff and -i read as manifests (read/manifests.py): a
document written in flow style after a comment or ``---`` (kubectl and kustomize read
it) is one, by its top-level keys; a flow-style file whose ``kind`` is deeper down is not."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from cmhash.read.manifests import is_manifest_text

CM = "{apiVersion: v1, kind: ConfigMap, metadata: {name: app}, data: {a: b}}\n"
DEPLOY = (
    "{apiVersion: apps/v1, kind: Deployment, metadata: {name: web}, spec: {template: "
    "{spec: {containers: [{name: c, image: i, envFrom: [{configMapRef: {name: app}}]}]}}}}\n"
)


@pytest.mark.parametrize(
    ("text", "manifest"),
    [
        ("# c\n" + CM, True),
        ("---\n" + CM, True),
        ("--- " + CM, True),
        ("# c\n" + CM + "---\n" + DEPLOY, True),
        ("# c\n{a: {kind: x, apiVersion: y}}\n", False),  # not at the top level
        ("# c\n[1, 2]\n", False),
        ("# c\n{kind: ConfigMap, a: [\n", True),  # broken: stays an error
        ("# c\n{a: [\n", False),
        ("a: b\n", False),
    ],
)
def test_flow_style_documents(text: str, manifest: bool) -> None:
    assert is_manifest_text(text) is manifest


@pytest.mark.parametrize(
    ("mode", "code", "said"), [("--check", 1, "Deployment/web"), ("--diff", 0, "+")]
)
def test_a_flow_style_file_is_checked(tmp_path: Path, mode: str, code: int, said: str) -> None:
    (tmp_path / "app.yaml").write_text("# rendered\n" + CM + "---\n" + DEPLOY)
    (tmp_path / "other.yaml").write_text("# c\n{a: {kind: x}}\n")
    res = subprocess.run(
        [sys.executable, "-m", "cmhash", mode, str(tmp_path)], capture_output=True, text=True
    )
    assert res.returncode == code, res.stderr
    assert said in res.stdout + res.stderr and "app.yaml" in res.stdout + res.stderr


def test_a_flow_style_file_is_annotated_in_place(tmp_path: Path) -> None:
    f = tmp_path / "app.yaml"
    f.write_text("# rendered\n" + CM + "---\n" + DEPLOY)
    res = subprocess.run([sys.executable, "-m", "cmhash", "-i", str(tmp_path)], capture_output=True)
    assert res.returncode == 0, res.stderr
    assert "checksum/config" in f.read_text()


@pytest.mark.parametrize(
    "text",
    [
        "# c\n!!map " + CM,
        "# c\n!<tag:yaml.org,2002:map> " + CM,
        "# c\n&a " + CM,
        "--- !!map " + CM,
        "# c\n!!map &x\n  " + CM,
    ],
)
def test_a_flow_document_with_node_properties(text: str) -> None:
    assert is_manifest_text(text)


def test_a_broken_flow_manifest_is_an_error_not_skipped(tmp_path: Path) -> None:
    """Indented by a tab (kubectl refuses it too): read, and refused with one line."""
    (tmp_path / "app.yaml").write_text("# c\n\t" + DEPLOY)
    res = subprocess.run(
        [sys.executable, "-m", "cmhash", "--check", str(tmp_path)], capture_output=True, text=True
    )
    assert res.returncode == 2, res.stderr
    assert len(res.stderr.strip().splitlines()) == 1 and "app.yaml:" in res.stderr

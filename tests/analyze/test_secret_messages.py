"""A message about a document that may hold a Secret (read/split.py may_hold_secret: it
names the kind) quotes nothing of it: its public form. The map stage asks only when there
is a message (analyze/chunk.py, analyze/configs.py): the same messages either way."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from cmhash.analyze.chunk import analyze_chunk
from cmhash.analyze.options import AnalyzeOptions
from cmhash.analyze.summaries import DocInfo
from cmhash.knowledge.kinds import DEFAULT_TABLE
from cmhash.read.source import SourceText
from cmhash.read.split import Chunk

ANCHORED = "the-anchor-name"
FULL = f"cannot add the annotation: metadata carries an anchor (&{ANCHORED}) that other"
PUBLIC = "cannot add the annotation: metadata carries an anchor that other nodes may share"


def _analyze(text: str, options: AnalyzeOptions) -> DocInfo:
    src = SourceText("x.yaml", text)
    return analyze_chunk(src, 0, Chunk(0, len(text)), DEFAULT_TABLE, options, "\n")


@pytest.mark.parametrize("secret", [False, True])
def test_a_workloads_edit_error(secret: bool) -> None:
    text = (
        "apiVersion: apps/v1\nkind: Deployment\n"
        + ("# kind: Secret (a document that may hold one)\n" if secret else "")
        + f"metadata: {{name: app}}\nspec:\n  template:\n    metadata: &{ANCHORED}\n"
        "      labels: {a: b}\n    spec:\n      containers:\n      - name: c\n"
        "        envFrom: [{configMapRef: {name: cm}}]\n"
    )
    (w,) = _analyze(text, AnalyzeOptions()).workloads
    assert w.edit is None and w.edit_error is not None
    assert w.edit_error.message.startswith(PUBLIC if secret else FULL)
    assert ANCHORED not in w.edit_error.public


@pytest.mark.parametrize("secret", [False, True])
def test_a_versioned_objects_edit_error(secret: bool) -> None:
    text = (
        "apiVersion: v1\nkind: ConfigMap\n"
        + ("# kind: Secret (a document that may hold one)\n" if secret else "")
        + f"metadata: &{ANCHORED}\n  name: cm\ndata: {{a: b}}\n"
    )
    (c,) = _analyze(text, AnalyzeOptions(versioned=True, versioned_keep=True)).configs
    assert c.version_error is not None
    assert c.version_error[0].startswith(PUBLIC if secret else FULL)


# The kind ``Secret`` as YAML spells it without the word after ``kind:`` (each one read as
# a Secret by kubectl's decoder and by cmhash's): the message names the position only.
KIND_SPELLINGS = [
    "kind: !!str Secret",
    "kind: !<tag:yaml.org,2002:str> Secret",
    'kind: "\\x53ecret"',
    'kind: "\\u0053ecret"',
    'kind: "\\U00000053ecret"',
    'kind: "Secr\\\n  et"',
    "kind: >-\n  Secret",
    "x: &k Secret\nkind: *k",
    '"\\x6bind": Secret',
    "kind: !!binary U2VjcmV0",
    "kind: !!binary |\n  U2Vj\n  cmV0",
    "kind: !<tag:yaml.org,2002:%62inary> U2VjcmV0",
    "x: &k !!binary U2VjcmV0\nkind: *k",
    "!!binary a2luZA==: !!binary U2VjcmV0",
]


@pytest.mark.parametrize("kind", KIND_SPELLINGS)
def test_a_secret_spelled_otherwise_is_a_secret_document(kind: str) -> None:
    from cmhash.read.split import may_hold_secret

    assert may_hold_secret(f"apiVersion: v1\n{kind}\nmetadata: {{name: s}}\n")


@pytest.mark.parametrize("kind", KIND_SPELLINGS)
def test_no_message_quotes_a_secret_spelled_otherwise(tmp_path: Path, kind: str) -> None:
    f = tmp_path / "s.yaml"
    f.write_text(f"apiVersion: v1\n{kind}\nmetadata: {{name: s}}\nstringData:\n  pw: !LEAKME x\n")
    res = subprocess.run([sys.executable, "-m", "cmhash", str(f)], capture_output=True, text=True)
    assert res.returncode == 2, res.stderr
    assert "LEAKME" not in res.stderr + res.stdout and "unknown tag" in res.stderr


def test_a_secret_kind_through_a_tag_handle(tmp_path: Path) -> None:
    f = tmp_path / "s.yaml"
    f.write_text(
        "%TAG !y! tag:yaml.org,2002:\n---\napiVersion: v1\nkind: !y!binary U2VjcmV0\n"
        "metadata: {name: s}\nstringData:\n  pw: !LEAKME x\n"
    )
    res = subprocess.run([sys.executable, "-m", "cmhash", str(f)], capture_output=True, text=True)
    assert res.returncode == 2, res.stderr
    assert "LEAKME" not in res.stderr + res.stdout

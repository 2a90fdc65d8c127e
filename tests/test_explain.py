"""cmhash explain: text and JSON compared exactly with goldens, JSON validated by its
schema, Mermaid checked for shape; nothing is written and no Secret value shows."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest
from conftest import ROOT, run_cmhash

CASE = ROOT / "tests" / "fixtures" / "explain"


def explain(fmt: str) -> str:
    cwd = os.getcwd()
    os.chdir(CASE)  # file names in the output are as given: relative
    try:
        res = run_cmhash(["explain", "--no-config", "--format", fmt, "input.yaml"])
    finally:
        os.chdir(cwd)
    assert res.code == 0, res.stderr
    assert "s3cr3t" not in res.out
    return res.out


@pytest.mark.parametrize("fmt", ["text", "json", "mermaid"])
def test_golden(fmt: str, update_goldens: bool) -> None:
    out, expected = explain(fmt), CASE / f"expected.{fmt}"
    if update_goldens:
        expected.write_text(out)
    assert out == expected.read_text()


def test_json_follows_its_schema_and_tells_each_state() -> None:
    import jsonschema

    data = json.loads(explain("json"))
    schema = json.loads((ROOT / "src" / "cmhash" / "schemas" / "explain.schema.json")
                        .read_text())
    jsonschema.validate(data, schema)
    db, job = data["workloads"]
    assert db["status"] == "annotated" and len(db["checksum"]) == 64
    assert "OnDelete" in db["noRestart"]
    assert [r["target"] for r in db["references"]] == ["in-stream", "in-stream",
                                                       "optional-absent", "missing"]
    assert job["status"] == "skipped" and len(job["checksum"]) == 64  # what --jobs would write
    assert job["references"][0]["missingKeys"] == ["nope"]
    assert {c["name"]: c["keys"] for c in data["configs"]} == {"cfg": ["a", "b"],
                                                               "creds": ["password"]}
    assert {f["code"] for f in data["findings"]} == {"no-restart", "missing-reference",
                                                     "job-not-annotated", "missing-key"}


def test_value_equals_what_inject_writes() -> None:
    data = json.loads(explain("json"))
    res = run_cmhash(["--no-config", "-q", str(CASE / "input.yaml")])
    assert f'checksum/config: "{data["workloads"][0]["checksum"]}"'.encode() in res.stdout


def test_mermaid_shape() -> None:
    lines = explain("mermaid").splitlines()
    assert lines[0] == "graph LR"
    node = re.compile(r'^  \w+(\["[^"]+"\]|\[\("[^"]+"\)\]|>"[^"]+"\])$')
    edge = re.compile(r'^  \w+ (-->|-\.->)\|"[^"]+"\| \w+$')
    assert all(node.match(line) or edge.match(line) for line in lines[1:]), lines
    assert sum(1 for line in lines if edge.match(line)) == 5


def test_explain_writes_nothing(tmp_path: Path) -> None:
    f = tmp_path / "in.yaml"
    f.write_bytes((CASE / "input.yaml").read_bytes())
    before = f.read_bytes()
    assert run_cmhash(["explain", "--no-config", str(f)]).code == 0
    assert f.read_bytes() == before


def test_mermaid_labels_cannot_break_out() -> None:
    from cmhash.explain import to_mermaid

    data = {"workloads": [{"kind": "Deployment", "name": 'w"x', "namespace": "",
                           "references": [{"kind": "ConfigMap", "name": 'c"d',
                                           "namespace": "", "how": "env", "keys": ['k"'],
                                           "target": "in-stream"}]}]}
    out = to_mermaid(data)
    assert out.count('"') % 2 == 0 and "w#quot;x" in out and "c#quot;d" in out

"""``acknowledge:`` in .cmhash.yaml: one known finding (a code on one object) becomes
info with its reason, so that ``--strict`` and ``report --fail-on warning`` pass, while
every other finding still counts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from conftest import ROOT, run_cmhash

from cmhash.findings import Code

APP = """\
apiVersion: apps/v1
kind: Deployment
metadata: {{name: {name}, namespace: shop}}
spec:
  template:
    spec:
      containers:
      - name: c
        envFrom:
        - secretRef: {{name: runtime-token}}
"""
ACK = (
    "acknowledge:\n  - code: missing-reference\n    kind: Deployment\n    name: web\n"
    "    reason: the operator creates runtime-token at install\n"
)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    for side in ("old", "new"):
        (tmp_path / side).mkdir()
        (tmp_path / side / "app.yaml").write_text(
            APP.format(name="web") + "---\n" + APP.format(name="api")
        )
    return tmp_path


def test_without_it_the_findings_fail(repo: Path) -> None:
    assert run_cmhash(["report", "old", "new", "--fail-on", "warning"], cwd=repo).code == 1
    assert run_cmhash(["--strict", "new"], cwd=repo).code == 2


def test_one_acknowledged_finding_is_info_and_the_other_still_counts(repo: Path) -> None:
    (repo / ".cmhash.yaml").write_text(ACK)
    res = run_cmhash(["report", "old", "new", "--fail-on", "warning", "--format", "json"], cwd=repo)
    assert res.code == 1  # Deployment/api's finding is not acknowledged
    findings = {f["message"].split(" ")[0]: f for f in json.loads(res.stdout)["findings"]}
    assert findings["Deployment/web"]["level"] == "info"
    assert findings["Deployment/web"]["message"].endswith(
        "(acknowledged in acknowledge[0]: the operator creates runtime-token at install)"
    )
    assert findings["Deployment/api"]["level"] == "warning"


def test_acknowledging_both_lets_report_and_strict_pass(repo: Path) -> None:
    (repo / ".cmhash.yaml").write_text(ACK.replace("name: web", "name: '*'"))
    assert run_cmhash(["report", "old", "new", "--fail-on", "warning"], cwd=repo).code == 0
    res = run_cmhash(["--strict", "new"], cwd=repo)
    assert res.code == 0, res.stderr
    assert res.stderr.count(": info: ") == 2


@pytest.mark.parametrize(
    "change",
    [
        ("name: web", "name: webx"),
        ("kind: Deployment", "kind: StatefulSet"),
        ("code: missing-reference", "code: missing-key"),
        ("    reason", "    namespace: x\n    reason"),
    ],
)
def test_an_entry_for_another_object_or_code_acknowledges_nothing(
    repo: Path, change: tuple[str, str]
) -> None:
    (repo / ".cmhash.yaml").write_text(ACK.replace(*change))
    res = run_cmhash(["new"], cwd=repo)
    assert res.stderr.count(": warning: ") == 2 and "acknowledged" not in res.stderr


def test_in_krm_results(repo: Path) -> None:
    items = list(yaml.safe_load_all((repo / "new" / "app.yaml").read_text()))
    fc = yaml.safe_load(ACK) | {
        "apiVersion": "cmhash.io/v1",
        "kind": "CmhashTransformer",
        "metadata": {"name": "x"},
    }
    rl = {
        "apiVersion": "config.kubernetes.io/v1",
        "kind": "ResourceList",
        "items": items,
        "functionConfig": fc,
    }
    res = run_cmhash(["--no-config"], stdin=json.dumps(rl).encode())
    results = yaml.safe_load(res.stdout)["results"]
    assert sorted(r["severity"] for r in results) == ["info", "warning"]


def test_an_unknown_code_is_a_config_error_with_its_position(repo: Path) -> None:
    (repo / ".cmhash.yaml").write_text(ACK.replace("missing-reference", "missing-refrence"))
    res = run_cmhash(["new"], cwd=repo)
    assert res.code == 2
    assert res.stderr.startswith(
        f"cmhash: {repo / '.cmhash.yaml'}:2:11: invalid configuration at acknowledge/0/code:"
    )
    # the closest code named, not the whole list
    assert "'missing-refrence' is not a known name (did you mean 'missing-reference'?)" in (
        res.stderr
    )
    assert "empty-input" not in res.stderr
    (repo / ".cmhash.yaml").write_text(ACK.replace("missing-reference", "zzzzzz"))
    res = run_cmhash(["new"], cwd=repo)
    assert f"'zzzzzz' is not a known name (none of the {len(Code)} known is close)" in res.stderr


def test_the_schema_knows_every_code() -> None:
    schema = json.loads((ROOT / "src" / "cmhash" / "schemas" / "config.schema.json").read_text())
    codes = schema["properties"]["acknowledge"]["items"]["properties"]["code"]["enum"]
    assert codes == [c.value for c in Code]


ANNOTATED = APP.replace(
    "metadata: {{name: {name}, namespace: shop}}",
    "metadata:\n  name: {name}\n  namespace: shop\n  annotations:\n"
    "    cmhash.io/acknowledge: {codes}",
)


def test_the_annotation_acknowledges_its_workloads_codes(tmp_path: Path) -> None:
    f = tmp_path / "app.yaml"
    f.write_text(
        ANNOTATED.format(name="web", codes="'missing-key, missing-reference'")
        + "---\n"
        + ANNOTATED.format(name="api", codes="missing-key")  # another code: still counts
    )
    res = run_cmhash(["--no-config", "--strict", str(f)])
    assert res.code == 2
    assert "Deployment/web -n shop references" in res.stderr
    assert "(acknowledged by cmhash.io/acknowledge) [missing-reference]" in res.stderr
    assert ": error: Deployment/api -n shop" in res.stderr


def test_an_unknown_code_in_the_annotation_is_exit_2_at_its_value(tmp_path: Path) -> None:
    f = tmp_path / "app.yaml"
    f.write_text(ANNOTATED.format(name="web", codes="'missing-reference, typo'"))
    res = run_cmhash(["--no-config", str(f)])
    assert res.code == 2
    assert res.stderr == (
        f"cmhash: {f}:7:28: cmhash.io/acknowledge takes finding codes, comma-separated "
        "(the findings reference); 'typo' is none\n"
    )

"""KRM function mode: a ResourceList in, the same ResourceList out with items annotated,
options from functionConfig and findings as results."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml
from conftest import ROOT, cmhash_command, run_cmhash

ITEMS = """items:
- apiVersion: v1
  kind: ConfigMap
  metadata:
    name: cfg
    annotations:
      config.kubernetes.io/path: 'cm.yaml'
  data:
    a: "1"
- apiVersion: apps/v1
  kind: Deployment
  metadata:
    name: app
    namespace: shop
    annotations:
      internal.config.kubernetes.io/path: 'deploy.yaml'
      internal.config.kubernetes.io/index: '2'
  spec:
    template:
      spec:
        containers:
        - name: main
          envFrom:
          - configMapRef: {name: cfg}
          - secretRef: {name: missing}
"""
HEAD = "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\n"
FC = """functionConfig:
  apiVersion: cmhash.io/v1
  kind: CmhashTransformer
  metadata: {name: cmhash}
  namespace: shop
"""


def _run(text: str, *args: str) -> tuple[int, dict, str]:  # type: ignore[type-arg]
    res = run_cmhash(["--no-config", *args], stdin=text.encode())
    return res.code, yaml.safe_load(res.stdout) if res.stdout else {}, res.stdout.decode()


def _annotation(out: dict) -> str | None:  # type: ignore[type-arg]
    dep = out["items"][1]
    return ((dep["spec"]["template"].get("metadata") or {}).get("annotations") or {}).get(
        "checksum/config"
    )


def test_items_annotated_and_results_written() -> None:
    code, out, text = _run(HEAD + ITEMS + FC)
    assert code == 0
    assert _annotation(out) is not None  # namespace 'shop' from functionConfig made it match
    assert text.startswith(HEAD + ITEMS.split("    template:")[0])  # untouched before the edit
    (result,) = out["results"]
    assert result["severity"] == "warning" and result["tags"] == {"code": "missing-reference"}
    assert result["resourceRef"] == {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "name": "app",
        "namespace": "shop",
    }
    assert result["field"] == {"path": "spec.template.spec.containers[0].envFrom[1].secretRef"}
    assert result["file"] == {"path": "deploy.yaml", "index": 2}
    assert out["functionConfig"]["kind"] == "CmhashTransformer"


def test_a_reference_dropped_across_namespaces_fails_the_function() -> None:
    """Without the namespace the ConfigMap (none) and the Deployment (shop) do not meet:
    the reference would drop out of the checksum, and kustomize shows no warning and
    reads no results unless the function fails: an error result and exit 2."""
    code, out, _ = _run(HEAD + ITEMS)
    assert code == 2 and _annotation(out) is None  # items as they came
    levels = {r["tags"]["code"]: r["severity"] for r in out["results"]}
    assert levels == {"missing-reference": "warning", "namespace-mismatch": "error"}
    message = next(r["message"] for r in out["results"] if r["severity"] == "error")
    assert "an error as kustomize's KRM function, whose warnings kustomize does not show" in (
        message
    )
    # acknowledged: info, and the function succeeds (the checksum leaves the ConfigMap out)
    ack = (
        "functionConfig:\n  apiVersion: cmhash.io/v1\n  kind: CmhashTransformer\n"
        "  metadata: {name: cmhash}\n  acknowledge:\n  - code: namespace-mismatch\n"
        "    kind: Deployment\n    name: app\n    reason: the ConfigMap is another team's\n"
    )
    code, out, _ = _run(HEAD + ITEMS + ack)
    assert code == 0
    levels = {r["tags"]["code"]: r["severity"] for r in out["results"]}
    assert levels == {"missing-reference": "warning", "namespace-mismatch": "info"}


def test_findings_point_at_the_users_file_or_the_item() -> None:
    """kpt and ``kustomize fn run`` say where an item came from (path and per-file
    index): messages point there; ``kustomize build`` says nothing: the item's place
    in the ResourceList, never a line of it."""
    res = run_cmhash(["--no-config"], stdin=(HEAD + ITEMS + FC).encode())
    assert res.stderr.splitlines() == [
        "deploy.yaml (document 3): warning: Deployment/app -n shop references Secret "
        "'missing', which is not in the input (add it, mark the reference optional, or "
        "ignore this if it lives elsewhere) [missing-reference]"
    ]
    bare = ITEMS.replace(
        "    annotations:\n      internal.config.kubernetes.io/path: 'deploy.yaml'\n"
        "      internal.config.kubernetes.io/index: '2'\n",
        "",
    )
    res = run_cmhash(["--no-config"], stdin=(HEAD + bare + FC).encode())
    assert res.stderr.splitlines()[0].startswith("<stdin>: items[1]: warning: Deployment/app")


def test_configmap_function_config_like_kpt() -> None:
    fc = (
        "functionConfig:\n  apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: fc}\n"
        "  data:\n    namespace: shop\n    annotationKey: example.com/h\n    strict: 'false'\n"
    )
    code, out, _ = _run(HEAD + ITEMS + fc)
    assert code == 0
    ann = out["items"][1]["spec"]["template"]["metadata"]["annotations"]
    assert list(ann) == ["example.com/h"]
    assert out["functionConfig"]["kind"] == "ConfigMap"  # never mistaken for an item


def test_invalid_function_config_is_an_error_result() -> None:
    fc = FC + "  bogus: 1\n"
    code, out, _ = _run(HEAD + ITEMS + fc)
    assert code == 2
    (result,) = out["results"]
    assert result["severity"] == "error" and "bogus" in result["message"]
    assert _annotation(out) is None  # items unchanged


def test_strict_findings_fail_with_error_results() -> None:
    code, out, _ = _run(HEAD + ITEMS + FC + "  strict: true\n")
    assert code == 2
    assert [r["severity"] for r in out["results"]] == ["error"]


def test_existing_results_are_kept_and_extended() -> None:
    prior = "results:\n- message: from an earlier function\n  severity: info\n"
    code, out, _text = _run(HEAD + ITEMS + prior + FC)
    assert code == 0
    assert next(r["message"] for r in out["results"]) == "from an earlier function"
    assert len(out["results"]) == 2
    flow = "results: [{message: earlier, severity: info}]\n"
    code, out, _ = _run(HEAD + ITEMS + flow + FC)
    assert code == 0 and len(out["results"]) == 2


def test_json_resource_list() -> None:
    doc = yaml.safe_load(HEAD + ITEMS + FC)
    text = json.dumps(doc)
    code, out, raw = _run(text)
    assert code == 0 and _annotation(out) is not None
    assert json.loads(raw)["results"][0]["severity"] == "warning"  # still JSON


def test_quiet_drops_warnings_from_results() -> None:
    code, out, _ = _run(HEAD + ITEMS + FC, "--quiet")
    assert code == 0 and "results" not in out


def test_a_plain_list_is_not_a_resource_list() -> None:
    text = "apiVersion: v1\nkind: List\n" + ITEMS
    res = run_cmhash(["--no-config", "-q"], stdin=text.encode())
    assert res.code == 0 and b"results" not in res.stdout


@pytest.mark.integration
def test_kpt_fn_eval_exec(tmp_path: Path) -> None:
    """Cross-check with kpt when it is installed (it is not a CI dependency)."""
    kpt = shutil.which("kpt")
    if kpt is None:
        pytest.skip("kpt is not installed (optional cross-check, never in CI)")
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    docs = yaml.safe_load(HEAD + ITEMS)["items"]
    for i, d in enumerate(docs):
        d["metadata"].pop("annotations", None)
        d["metadata"]["namespace"] = "shop"
        (pkg / f"r{i}.yaml").write_text(yaml.safe_dump(d))
    script = tmp_path / "fn.sh"
    script.write_text(f"#!/bin/sh\nexec {' '.join(cmhash_command())} --no-config\n")
    script.chmod(0o755)
    proc = subprocess.run(
        [kpt, "fn", "eval", str(pkg), "--exec", str(script), "-o", "unwrap"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert "checksum/config" in proc.stdout


def test_subpath_mount_is_an_info_result() -> None:
    items = ITEMS.replace(
        "          - secretRef: {name: missing}\n",
        "          volumeMounts:\n"
        "          - {name: conf, mountPath: /etc/a, subPath: a}\n"
        "        volumes:\n        - name: conf\n"
        "          configMap: {name: cfg}\n",
    )
    code, out, _ = _run(HEAD + items + FC)
    assert code == 0
    (result,) = out["results"]
    assert result["severity"] == "info" and result["tags"] == {"code": "subpath-mount"}
    assert result["field"] == {"path": "spec.template.spec.containers[0].volumeMounts[0]"}
    assert "the checksum annotation restarts the pods" in result["message"]


def test_a_reference_field_cmhash_cannot_read_fails_the_function() -> None:
    """reference-shape: the field counts for nothing in the checksum; an error here,
    with what to do, and the other findings keep their level."""
    docs = [
        d
        for d in yaml.safe_load_all(
            (ROOT / "tests/cases/op-reference-shape/input.yaml").read_text()
        )
        if d
    ]
    rl = {"apiVersion": "config.kubernetes.io/v1", "kind": "ResourceList", "items": docs}
    code, out, _ = _run(yaml.safe_dump(rl))
    assert code == 2
    shapes = [r for r in out["results"] if r["tags"]["code"] == "reference-shape"]
    assert len(shapes) == 7 and {r["severity"] for r in shapes} == {"error"}
    assert shapes[0]["message"].endswith(
        "an error as kustomize's KRM function, whose warnings kustomize does not show: "
        "write the field as its operator reads it, or accept it with acknowledge: in "
        "cmhash's config [reference-shape]"
    )

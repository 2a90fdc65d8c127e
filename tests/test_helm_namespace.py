"""Helm output and the release namespace (helm.py): HELM_NAMESPACE when exported, else
the one namespace the objects that name one all name; ambiguous: no guess, the usual
warning; -n always wins. With the real helm 3 and helm 4 on a chart whose Deployment
says ``namespace: {{ .Release.Namespace }}`` and whose ConfigMap says nothing."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
import yaml
from conftest import ROOT, run_cmhash, tool, tool_env

from cmhash.plan.helm import infer, named_namespaces

CHART = ROOT / "tests" / "fixtures" / "chart-ns"
SRC = "---\n# Source: demo/templates/{name}.yaml\n"
CM = SRC.format(name="cm") + (
    "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cfg\ndata:\n  a: b\n"
)
DEP = SRC.format(name="dep") + (
    "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n{ns}spec:\n"
    "  template:\n    spec:\n      containers:\n      - name: c\n        envFrom:\n"
    "        - configMapRef: {{name: cfg}}\n"
)
SVC = SRC.format(name="svc") + "apiVersion: v1\nkind: Service\nmetadata:\n  name: s\n{ns}"


def test_named_namespaces_reads_top_level_metadata_only() -> None:
    text = (
        "metadata:\n  labels:\n    namespace: not-this\n  namespace: shop\n---\n"
        "metadata:\n    name: x\n    namespace: 'quoted'\nspec:\n  namespace: nor-this\n"
        "---\nkind: Namespace\nmetadata:\n  name: other\n"
    )
    assert named_namespaces(text) == {"shop", "quoted"}


@pytest.mark.parametrize(
    ("text", "env", "want"),
    [
        (CM + DEP.format(ns="  namespace: shop\n"), {}, "shop"),
        (CM + DEP.format(ns="") + SVC.format(ns="  namespace: shop\n"), {}, "shop"),
        (
            CM + DEP.format(ns="  namespace: shop\n") + SVC.format(ns="  namespace: other\n"),
            {},
            None,
        ),
        (CM + DEP.format(ns=""), {}, None),
        (CM + DEP.format(ns=""), {"HELM_NAMESPACE": "from-env"}, "from-env"),
        ((CM + DEP.format(ns="  namespace: shop\n")).replace("# Source: ", "# "), {}, None),
    ],
)
def test_infer(text: str, env: dict[str, str], want: str | None) -> None:
    got = infer([text], env)
    assert (got.namespace if got else None) == want


def test_inferred_namespace_matches_and_is_noted() -> None:
    text = CM + DEP.format(ns="  namespace: shop\n")
    res = run_cmhash(["--no-config", "-"], stdin=text.encode())
    assert res.code == 0
    assert "checksum/config" in res.out
    assert res.stderr.strip() == (
        "cmhash: note: Helm output: objects without a namespace are taken to be in 'shop', "
        "the only namespace the other objects name (the release namespace; -n overrides)"
    )
    # -n wins: here it sends the ConfigMap elsewhere, so nothing matches
    res = run_cmhash(["--no-config", "-n", "other", "-"], stdin=text.encode())
    assert "checksum/config" not in res.out and "namespace-mismatch" in res.stderr
    # -q: no note
    assert run_cmhash(["--no-config", "-q", "-"], stdin=text.encode()).stderr == ""


def test_ambiguous_is_no_guess() -> None:
    text = CM + DEP.format(ns="  namespace: shop\n") + SVC.format(ns="  namespace: other\n")
    res = run_cmhash(["--no-config", "-"], stdin=text.encode())
    assert "checksum/config" not in res.out
    assert "namespace-mismatch" in res.stderr and "note:" not in res.stderr


def test_plain_manifests_are_not_helm_output() -> None:
    text = (CM + DEP.format(ns="  namespace: shop\n")).replace("# Source: ", "# file: ")
    res = run_cmhash(["--no-config", "-"], stdin=text.encode(), env={"HELM_NAMESPACE": "shop"})
    assert "checksum/config" not in res.out and "namespace-mismatch" in res.stderr


def _docs(text: str) -> dict[str, dict]:  # type: ignore[type-arg]
    return {d["kind"]: d for d in yaml.safe_load_all(text) if d}


@pytest.mark.integration
@pytest.mark.parametrize("binary", ["helm", "helm3"])
def test_real_helm_release_namespace(tmp_path: Path, binary: str) -> None:
    env = tool_env(
        HELM_CONFIG_HOME=str(tmp_path / "c"),
        HELM_DATA_HOME=str(tmp_path / "d"),
        HELM_CACHE_HOME=str(tmp_path / "k"),
    )
    if binary == "helm":
        plugins = Path(run_cmhash(["helm-plugin-dir"]).stdout.decode().strip()).parent
        env["HELM_PLUGINS"] = str(plugins)
    log = tmp_path / "cmhash.log"
    env["CMHASH_LOG"] = str(log)
    out = subprocess.run(
        [tool(binary), "template", "rel", str(CHART), "-n", "shop", "--post-renderer", "cmhash"],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    assert out.returncode == 0, out.stderr
    dep = _docs(out.stdout)["Deployment"]
    assert dep["metadata"]["namespace"] == "shop"
    assert len(dep["spec"]["template"]["metadata"]["annotations"]["checksum/config"]) == 64
    assert "taken to be in 'shop'" in log.read_text()
    assert "namespace-mismatch" not in log.read_text()

"""The Argo CD CMP's generate command, run the way the sidecar runs it: bash -c in the
application directory, ARGOCD_* environment, helm or kubectl kustomize on PATH."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
import yaml
from conftest import ROOT, tool, tool_env

pytestmark = pytest.mark.integration
PLUGIN = yaml.safe_load((ROOT / "ci-templates" / "argocd" / "plugin.yaml").read_text())


def generate(app: Path, **env: str) -> subprocess.CompletedProcess[str]:
    spec = PLUGIN["spec"]["generate"]
    base = {
        "ARGOCD_APP_NAME": "web",
        "ARGOCD_APP_NAMESPACE": "shop",
        "HELM_CONFIG_HOME": str(app.parent / "hc"),
        "HELM_DATA_HOME": str(app.parent / "hd"),
        "HELM_CACHE_HOME": str(app.parent / "hx"),
    }
    return subprocess.run(
        [*spec["command"], *spec["args"]],
        cwd=app,
        capture_output=True,
        text=True,
        env=tool_env(**base, **env),
        check=False,
    )


def test_plugin_file_shape() -> None:
    assert PLUGIN["apiVersion"] == "argoproj.io/v1alpha1"
    assert PLUGIN["kind"] == "ConfigManagementPlugin"
    assert PLUGIN["spec"]["discover"]["fileName"] == ".cmhash.yaml"
    assert "pipefail" in PLUGIN["spec"]["generate"]["args"][0]


def test_helm_chart(tmp_path: Path) -> None:
    tool("helm")
    app = tmp_path / "app"
    shutil.copytree(ROOT / "tests" / "fixtures" / "chart", app)
    out = generate(
        app,
        ARGOCD_ENV_CMHASH_ARGS="--annotation-key example.com/h",
        ARGOCD_ENV_HELM_ARGS="--set logLevel=debug",
    )
    assert out.returncode == 0, out.stderr
    docs = {d["kind"]: d for d in yaml.safe_load_all(out.stdout) if d}
    ann = docs["Deployment"]["spec"]["template"]["metadata"]["annotations"]
    assert len(ann["example.com/h"]) == 64
    assert docs["ConfigMap"]["data"]["LOG_LEVEL"] == "debug"


def test_kustomization(tmp_path: Path) -> None:
    tool("kubectl")
    app = tmp_path / "app"
    shutil.copytree(ROOT / "ci-templates" / "kustomize" / "legacy", app)
    kust = app / "kustomization.yaml"
    kust.write_text(kust.read_text().replace("transformers:\n  - cmhash-transformer.yaml\n", ""))
    out = generate(app)
    assert out.returncode == 0, out.stderr
    assert "checksum/config" in out.stdout


def test_render_failure_fails_generation(tmp_path: Path) -> None:
    """pipefail: a broken chart must not reach Argo CD as an empty (pruning) stream."""
    tool("helm")
    app = tmp_path / "app"
    shutil.copytree(ROOT / "tests" / "fixtures" / "chart", app)
    (app / "templates" / "broken.yaml").write_text("{{ .Values.nope.deeper }}\n")
    out = generate(app)
    assert out.returncode != 0 and out.stdout == ""


def test_neither_chart_nor_kustomization(tmp_path: Path) -> None:
    app = tmp_path / "app"
    app.mkdir()
    out = generate(app)
    assert out.returncode == 1 and "no Chart.yaml or kustomization.yaml" in out.stderr

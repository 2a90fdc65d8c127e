"""kustomize with the real kubectl (v1.35.2, kustomize v5.7.1 embedded): the legacy
exec transformer works; exec KRM functions are silently skipped (documented)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
import yaml
from conftest import ROOT, run_cmhash, tool, tool_env

EXAMPLES = ROOT / "ci-templates" / "kustomize"
pytestmark = pytest.mark.integration


def kustomize(directory: Path, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([tool("kubectl"), "kustomize", "--enable-alpha-plugins",
                           str(directory)], capture_output=True, text=True,
                          env=tool_env(**env), check=False)


def by_kind(text: str) -> dict[str, dict]:  # type: ignore[type-arg]
    return {d["kind"]: d for d in yaml.safe_load_all(text) if d}


@pytest.fixture
def plugin_home(tmp_path: Path) -> Path:
    home = tmp_path / "plugin-home"  # absolute, as kustomize requires
    res = run_cmhash(["install-kustomize-plugin", "--plugin-home", str(home)])
    assert res.code == 0, res.stderr
    exe = home / "cmhash.io" / "v1" / "cmhashtransformer" / "CmhashTransformer"
    assert exe.is_file() and exe.stat().st_mode & 0o111
    return home


def test_legacy_transformer(tmp_path: Path, plugin_home: Path) -> None:
    app = tmp_path / "app"
    shutil.copytree(EXAMPLES / "legacy", app)
    out = kustomize(app, KUSTOMIZE_PLUGIN_HOME=str(plugin_home))
    assert out.returncode == 0, out.stderr
    objs = by_kind(out.stdout)
    value = objs["Deployment"]["spec"]["template"]["metadata"]["annotations"]["checksum/config"]
    assert len(value) == 64
    # kustomize added its hash suffix after cmhash ran and rewrote the reference
    cm_name = objs["ConfigMap"]["metadata"]["name"]
    assert cm_name.startswith("web-config-")
    ref = objs["Deployment"]["spec"]["template"]["spec"]["containers"][0]["envFrom"][0]
    assert ref["configMapRef"]["name"] == cm_name
    assert "internal.config.kubernetes.io" not in out.stdout

    # the config file's options apply; a change of the literal changes the value
    (app / "cmhash-transformer.yaml").write_text(
        (app / "cmhash-transformer.yaml").read_text()
        .replace("annotationKey: checksum/config", "annotationKey: example.com/h"))
    (app / "kustomization.yaml").write_text(
        (app / "kustomization.yaml").read_text().replace("LOG_LEVEL=info", "LOG_LEVEL=debug"))
    again = by_kind(kustomize(app, KUSTOMIZE_PLUGIN_HOME=str(plugin_home)).stdout)
    other = again["Deployment"]["spec"]["template"]["metadata"]["annotations"]["example.com/h"]
    assert other != value


def test_legacy_transformer_invalid_config_fails_the_build(tmp_path: Path,
                                                           plugin_home: Path) -> None:
    app = tmp_path / "app"
    shutil.copytree(EXAMPLES / "legacy", app)
    cfg = app / "cmhash-transformer.yaml"
    cfg.write_text(cfg.read_text() + "bogusOption: 1\n")
    out = kustomize(app, KUSTOMIZE_PLUGIN_HOME=str(plugin_home))
    assert out.returncode != 0
    assert "bogusOption" in out.stderr


def test_kubectl_silently_skips_exec_krm_functions(tmp_path: Path) -> None:
    """Why the README tells kubectl users to use the legacy plugin or a pipe."""
    app = tmp_path / "app"
    shutil.copytree(EXAMPLES / "krm", app)
    fn = app / "cmhash-fn.yaml"
    fn.write_text(fn.read_text().replace("/usr/local/bin/cmhash",
                                         str(Path(tool_env()["PATH"].split(":")[0]) / "cmhash")))
    out = kustomize(app)
    assert out.returncode == 0, out.stderr
    assert "checksum/config" not in out.stdout  # the function never ran


def test_pipe_from_kubectl_kustomize(tmp_path: Path) -> None:
    app = tmp_path / "app"
    shutil.copytree(EXAMPLES / "legacy", app)
    (app / "kustomization.yaml").write_text(
        (app / "kustomization.yaml").read_text().replace("transformers:\n  - "
                                                        "cmhash-transformer.yaml\n", ""))
    rendered = kustomize(app)
    assert rendered.returncode == 0, rendered.stderr
    res = run_cmhash(["--no-config", "-"], stdin=rendered.stdout.encode())
    assert res.code == 0 and b"checksum/config" in res.stdout

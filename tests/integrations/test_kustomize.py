"""kustomize with the real kubectl (v1.35.2, kustomize v5.7.1 embedded): the legacy
exec transformer works; exec KRM functions are silently skipped (documented). The KRM
example runs with the real standalone kustomize (v4.5.4)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml
from conftest import ROOT, cmhash_command, kustomize, kustomize_build, run_cmhash

EXAMPLES = ROOT / "ci-templates" / "kustomize"
pytestmark = pytest.mark.integration


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
        (app / "cmhash-transformer.yaml")
        .read_text()
        .replace("annotationKey: checksum/config", "annotationKey: example.com/h")
    )
    (app / "kustomization.yaml").write_text(
        (app / "kustomization.yaml").read_text().replace("LOG_LEVEL=info", "LOG_LEVEL=debug")
    )
    again = by_kind(kustomize(app, KUSTOMIZE_PLUGIN_HOME=str(plugin_home)).stdout)
    other = again["Deployment"]["spec"]["template"]["metadata"]["annotations"]["example.com/h"]
    assert other != value


def test_legacy_transformer_invalid_config_fails_the_build(
    tmp_path: Path, plugin_home: Path
) -> None:
    app = tmp_path / "app"
    shutil.copytree(EXAMPLES / "legacy", app)
    cfg = app / "cmhash-transformer.yaml"
    cfg.write_text(cfg.read_text() + "bogusOption: 1\n")
    out = kustomize(app, KUSTOMIZE_PLUGIN_HOME=str(plugin_home))
    assert out.returncode != 0
    assert "bogusOption" in out.stderr


def test_krm_function_with_standalone_kustomize(tmp_path: Path) -> None:
    """The shipped example as is (``exec.path: cmhash``, found on PATH), run from
    elsewhere with a relative DIR: the Deployment gets the checksum, and kustomize's
    generator suffix and the renamed reference are intact."""
    app = tmp_path / "app"
    shutil.copytree(EXAMPLES / "krm", app)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    out = kustomize_build("../app", cwd=elsewhere)
    assert out.returncode == 0, out.stderr
    objs = by_kind(out.stdout)
    assert set(objs) == {"ConfigMap", "Deployment"}  # the function config is not output
    value = objs["Deployment"]["spec"]["template"]["metadata"]["annotations"]["checksum/config"]
    assert len(value) == 64
    cm_name = objs["ConfigMap"]["metadata"]["name"]
    assert cm_name.startswith("web-config-") and len(cm_name) > len("web-config-")
    ref = objs["Deployment"]["spec"]["template"]["spec"]["containers"][0]["envFrom"][0]
    assert ref["configMapRef"]["name"] == cm_name
    assert "internal.config.kubernetes.io" not in out.stdout
    assert "config.kubernetes.io/function" not in out.stdout
    # the function ran before the suffix was added: its value is what cmhash gives on
    # the build without the function, with the generated name as the generator had it
    kust = app / "kustomization.yaml"
    kust.write_text(kust.read_text().replace("transformers:\n  - cmhash-fn.yaml\n", ""))
    plain = kustomize_build(app, cwd=tmp_path)
    assert plain.returncode == 0 and "checksum/config" not in plain.stdout, plain.stderr
    assert cm_name in plain.stdout  # same content, same suffix
    res = run_cmhash(
        ["--no-config", "-q", "-"], stdin=plain.stdout.replace(cm_name, "web-config").encode()
    )
    assert f'checksum/config: "{value}"'.encode() in res.stdout


def test_krm_exec_path_is_looked_up_on_path(tmp_path: Path) -> None:
    """A bare ``exec.path`` is a PATH lookup (not a file in the kustomization dir): with
    no cmhash on PATH the build fails loudly; a path with a slash is relative to the
    kustomization directory, wherever kustomize runs."""
    app = tmp_path / "app"
    shutil.copytree(EXAMPLES / "krm", app)
    out = kustomize_build(app, cwd=tmp_path, PATH="/usr/bin:/bin")
    assert out.returncode != 0
    assert 'exec: "cmhash": executable file not found in $PATH' in out.stderr
    (app / "bin").mkdir()
    wrapper = app / "bin" / "cmhash"
    wrapper.write_text(f'#!/bin/sh\nexec {" ".join(cmhash_command())} "$@"\n')
    wrapper.chmod(0o755)
    fn = app / "cmhash-fn.yaml"
    fn.write_text(fn.read_text().replace("path: cmhash", "path: ./bin/cmhash"))
    out = kustomize_build(app, cwd=tmp_path, PATH="/usr/bin:/bin")
    assert out.returncode == 0, out.stderr
    assert "checksum/config" in out.stdout


def test_kubectl_silently_skips_exec_krm_functions(tmp_path: Path) -> None:
    """Why the README tells kubectl users to use the legacy plugin or a pipe: the same
    example that works with standalone kustomize, cmhash on PATH, never runs."""
    app = tmp_path / "app"
    shutil.copytree(EXAMPLES / "krm", app)
    out = kustomize(app)
    assert out.returncode == 0, out.stderr
    assert "checksum/config" not in out.stdout  # the function never ran
    assert by_kind(out.stdout)["ConfigMap"]["metadata"]["name"].startswith("web-config-")


def test_pipe_from_kubectl_kustomize(tmp_path: Path) -> None:
    app = tmp_path / "app"
    shutil.copytree(EXAMPLES / "legacy", app)
    (app / "kustomization.yaml").write_text(
        (app / "kustomization.yaml")
        .read_text()
        .replace("transformers:\n  - cmhash-transformer.yaml\n", "")
    )
    rendered = kustomize(app)
    assert rendered.returncode == 0, rendered.stderr
    res = run_cmhash(["--no-config", "-"], stdin=rendered.stdout.encode())
    assert res.code == 0 and b"checksum/config" in res.stdout


ORIGIN_APP = """\
apiVersion: v1
kind: ConfigMap
metadata:
  name: cfg
data:
  a: "1"
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: shop
spec:
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
        - name: web
          image: nginx
          envFrom:
            - configMapRef: {name: cfg}
"""


@pytest.mark.parametrize("origins", [True, False])
def test_transformer_messages_name_the_origin_file(
    tmp_path: Path, plugin_home: Path, origins: bool
) -> None:
    """With buildMetadata: [originAnnotations] kustomize writes each object's file on
    what it hands the plugin: the message names it, not a line of that stream."""
    app = tmp_path / "app"
    shutil.copytree(EXAMPLES / "legacy", app, ignore=shutil.ignore_patterns("*.yaml"))
    shutil.copy(EXAMPLES / "legacy" / "cmhash-transformer.yaml", app)
    (app / "app.yaml").write_text(ORIGIN_APP)
    meta = "buildMetadata: [originAnnotations]\n" if origins else ""
    (app / "kustomization.yaml").write_text(
        f"resources:\n  - app.yaml\ntransformers:\n  - cmhash-transformer.yaml\n{meta}"
    )
    out = kustomize(app, KUSTOMIZE_PLUGIN_HOME=str(plugin_home))
    assert out.returncode != 0  # namespace-mismatch fails the build
    if origins:
        assert "app.yaml (Deployment/web): error: Deployment/web -n shop" in out.stderr
        assert "<stdin>" not in out.stderr
    else:
        assert "<stdin>:" in out.stderr and "[namespace-mismatch]" in out.stderr

"""Helm 4 post-renderer plugin, with the real helm binary (v4.1.4)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
import yaml
from conftest import ROOT, run_cmhash, tool, tool_env

CHART = ROOT / "tests" / "fixtures" / "chart"
pytestmark = pytest.mark.integration


def plugin_dir() -> Path:
    res = run_cmhash(["helm-plugin-dir"])
    assert res.code == 0
    path = Path(res.stdout.decode().strip())
    assert (path / "plugin.yaml").is_file()
    return path


def helm(args: list[str], tmp: Path, **env: str) -> subprocess.CompletedProcess[str]:
    isolated = {
        "HELM_CONFIG_HOME": str(tmp / "config"),
        "HELM_DATA_HOME": str(tmp / "data"),
        "HELM_CACHE_HOME": str(tmp / "cache"),
    }
    return subprocess.run(
        [tool("helm"), *args],
        capture_output=True,
        text=True,
        env=tool_env(**isolated, **env),
        check=False,
    )


def docs(text: str) -> dict[str, dict]:  # type: ignore[type-arg]
    return {d["kind"]: d for d in yaml.safe_load_all(text) if d}


def test_plugin_via_helm_plugins_path(tmp_path: Path) -> None:
    out = helm(
        ["template", "rel", str(CHART), "--post-renderer", "cmhash"],
        tmp_path,
        HELM_PLUGINS=str(plugin_dir().parent),
    )
    assert out.returncode == 0, out.stderr
    objs = docs(out.stdout)
    ann = objs["Deployment"]["spec"]["template"]["metadata"]["annotations"]
    assert len(ann["checksum/config"]) == 64
    # Helm 4 sends hooks too: the Job is left alone (immutable template)
    assert "metadata" not in objs["Job"]["spec"]["template"]
    # Helm strips its postrender-filename annotation again, so the result is clean
    assert "postrenderer.helm.sh" not in out.stdout
    # and the value is exactly what cmhash computes on helm's own plain render
    plain = helm(["template", "rel", str(CHART)], tmp_path)
    direct = run_cmhash(["--no-config", "-q", "-"], stdin=plain.stdout.encode())
    assert (
        ann["checksum/config"]
        == docs(direct.stdout.decode())["Deployment"]["spec"]["template"]["metadata"][
            "annotations"
        ]["checksum/config"]
    )


def test_installed_plugin_and_post_renderer_args(tmp_path: Path) -> None:
    # installs a symlink under $HELM_DATA_HOME/plugins (isolated here)
    inst = helm(["plugin", "install", str(plugin_dir())], tmp_path)
    assert inst.returncode == 0, inst.stderr
    listed = helm(["plugin", "list"], tmp_path)
    assert "cmhash" in listed.stdout and "postrenderer/v1" in listed.stdout
    out = helm(
        [
            "template",
            "rel",
            str(CHART),
            "--post-renderer",
            "cmhash",
            "--post-renderer-args=--annotation-key",
            "--post-renderer-args=example.com/config-hash",
            "--post-renderer-args=--jobs",
        ],
        tmp_path,
    )
    assert out.returncode == 0, out.stderr
    objs = docs(out.stdout)
    assert (
        "example.com/config-hash"
        in objs["Deployment"]["spec"]["template"]["metadata"]["annotations"]
    )
    assert "example.com/config-hash" in objs["Job"]["spec"]["template"]["metadata"]["annotations"]


def test_failure_is_diagnosable_through_the_log_file(tmp_path: Path) -> None:
    """Helm 4 throws the plugin's stderr away: the exit code fails the render, and
    CMHASH_LOG keeps the reason."""
    log = tmp_path / "cmhash.log"
    out = helm(
        [
            "template",
            "rel",
            str(CHART),
            "--post-renderer",
            "cmhash",
            "--post-renderer-args=--strict",
            "--set",
            "password=s3cr3t-value",
            "--set",
            "extraSecretRef=not-rendered-here",
        ],
        tmp_path,
        HELM_PLUGINS=str(plugin_dir().parent),
        CMHASH_LOG=str(log),
    )
    assert out.returncode != 0
    assert "post render" in out.stderr or "post-render" in out.stderr, out.stderr
    text = log.read_text()
    assert "missing-reference" in text and "error" in text
    assert "exit 2" in text
    assert "s3cr3t-value" not in text


STAND_IN = """\
# a comment the post-renderer wrote
apiVersion: v1
kind: ConfigMap
metadata:
    name: rel-config      # four-space indentation, a spaced comment
    annotations:
        postrenderer.helm.sh/postrender-filename: "demo/templates/configmap.yaml"

data:
    LOG_LEVEL: "info"
    motd: >-
        folded
        over two lines
"""


def test_helm4_reserialises_what_the_post_renderer_printed(tmp_path: Path) -> None:
    """Helm 4 parses the post-renderer's stdout and writes it out again: what a
    post-renderer prints is not what `helm template` prints (so no post-renderer can keep
    a chart's formatting under Helm 4). Its stderr is dropped even on success and with
    --debug. A stand-in plugin that prints a fixed stream shows both."""
    script = tmp_path / "stand-in.sh"
    script.write_text(
        f"#!/bin/sh\ncat >/dev/null\ncat <<'YAML'\n{STAND_IN}YAML\n"
        "echo 'stand-in stderr line' >&2\n"
    )
    script.chmod(0o755)
    plugins = tmp_path / "plugins" / "standin"
    plugins.mkdir(parents=True)
    (plugins / "plugin.yaml").write_text(
        "apiVersion: v1\ntype: postrenderer/v1\nname: standin\nversion: 0.1.0\n"
        f"runtime: subprocess\nruntimeConfig:\n  platformCommand:\n    - command: {script}\n"
    )
    out = helm(
        ["template", "rel", str(CHART), "--post-renderer", "standin", "--debug"],
        tmp_path,
        HELM_PLUGINS=str(plugins.parent),
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout == (
        "---\n# Source: demo/templates/configmap.yaml\n"
        "# a comment the post-renderer wrote\n"
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n"
        "  name: rel-config # four-space indentation, a spaced comment\n"
        "data:\n"
        '  LOG_LEVEL: "info"\n'
        "  motd: >-\n    folded over two lines\n"
    )
    assert "stand-in stderr line" not in out.stdout + out.stderr

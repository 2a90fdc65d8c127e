"""Helm 3 post-renderer, with the real helm v3.19.0 binary (``helm3``): ``--post-renderer``
takes any executable, so the ``cmhash`` console script on PATH is the post-renderer. Also
what differs from Helm 4 (tests/integrations/test_helm.py), measured with both binaries."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml
from conftest import ROOT, run_cmhash, tool, tool_env

CHART = ROOT / "tests" / "fixtures" / "chart"
STYLE_CHART = ROOT / "tests" / "fixtures" / "chart-style"
pytestmark = pytest.mark.integration


def helm_env(tmp: Path, **env: str) -> dict[str, str]:
    """Isolated helm homes, and the venv's bin dir (the ``cmhash`` script) first on PATH."""
    isolated = {
        "HELM_CONFIG_HOME": str(tmp / "config"),
        "HELM_DATA_HOME": str(tmp / "data"),
        "HELM_CACHE_HOME": str(tmp / "cache"),
        "HELM_PLUGINS": str(tmp / "plugins"),
    }
    return tool_env(**{**isolated, **env})


def helm3(
    args: list[str], tmp: Path, cwd: Path | None = None, **env: str
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [tool("helm3"), *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=helm_env(tmp, **env),
        check=False,
    )


def docs(text: str) -> dict[str, dict]:  # type: ignore[type-arg]
    return {d["kind"]: d for d in yaml.safe_load_all(text) if d}


def chart_copy(tmp: Path, src: Path = CHART) -> Path:
    """The chart as ``./chart`` in a fresh directory, to run the README's command as is."""
    work = tmp / "work"
    shutil.copytree(src, work / "chart")
    return work


def test_it_is_helm_3(tmp_path: Path) -> None:
    out = helm3(["version", "--short"], tmp_path)
    assert out.returncode == 0 and out.stdout.startswith("v3."), out  # CI: v3.19.0


def test_readme_recipe(tmp_path: Path) -> None:
    """``helm template web ./chart --post-renderer cmhash``: the console script, found on
    PATH, gets helm's own stream (``# Source:`` comments and all) and its output is what
    helm prints."""
    work = chart_copy(tmp_path)
    out = helm3(["template", "web", "./chart", "--post-renderer", "cmhash"], tmp_path, cwd=work)
    assert out.returncode == 0, out.stderr
    value = docs(out.stdout)["Deployment"]["spec"]["template"]["metadata"]["annotations"][
        "checksum/config"
    ]
    assert re.fullmatch(r"[0-9a-f]{64}", value)
    sources = re.findall(r"^# Source: (.+)$", out.stdout, re.MULTILINE)
    assert sources == [
        f"demo/templates/{n}.yaml"
        for n in ("secret", "configmap", "service", "deployment", "migrate-job")
    ]
    # byte for byte what cmhash writes for helm's own plain render piped in
    plain = helm3(["template", "web", "./chart"], tmp_path, cwd=work)
    assert plain.returncode == 0, plain.stderr
    assert "checksum/config" not in plain.stdout
    direct = run_cmhash(["--no-config", "-"], stdin=plain.stdout.encode())
    assert direct.code == 0, direct.stderr
    assert out.stdout == direct.out


def test_not_on_path_is_a_flag_error(tmp_path: Path) -> None:
    env = {"PATH": "/usr/bin:/bin"}
    out = helm3(["template", "web", str(CHART), "--post-renderer", "cmhash"], tmp_path, **env)
    assert out.returncode != 0
    assert 'exec: "cmhash": executable file not found in $PATH' in out.stderr


def test_post_renderer_args(tmp_path: Path) -> None:
    out = helm3(
        [
            "template",
            "web",
            str(CHART),
            "--post-renderer",
            "cmhash",
            "--post-renderer-args=--annotation-key",
            "--post-renderer-args=example.com/config-hash",
        ],
        tmp_path,
    )
    assert out.returncode == 0, out.stderr
    ann = docs(out.stdout)["Deployment"]["spec"]["template"]["metadata"]["annotations"]
    assert list(ann) == ["example.com/config-hash"] and len(ann["example.com/config-hash"]) == 64


def test_hooks_are_not_post_rendered(tmp_path: Path) -> None:
    """The pre-install/pre-upgrade hook Job never reaches the post-renderer in Helm 3:
    even with ``--jobs`` it comes out exactly as helm rendered it (Helm 4 sends it)."""
    out = helm3(
        ["template", "web", str(CHART), "--post-renderer", "cmhash", "--post-renderer-args=--jobs"],
        tmp_path,
    )
    assert out.returncode == 0, out.stderr
    job = docs(out.stdout)["Job"]
    assert job["metadata"]["annotations"]["helm.sh/hook"] == "pre-install,pre-upgrade"
    assert "metadata" not in job["spec"]["template"]
    hook = out.stdout[out.stdout.index("# Source: demo/templates/migrate-job.yaml") :]
    plain = helm3(["template", "web", str(CHART)], tmp_path).stdout
    assert plain.endswith(hook)  # the hook's text as rendered, untouched
    # had cmhash seen it, --jobs would have annotated it
    direct = run_cmhash(["--no-config", "-q", "--jobs", "-"], stdin=plain.encode())
    assert (
        "checksum/config" in docs(direct.out)["Job"]["spec"]["template"]["metadata"]["annotations"]
    )


def test_strict_failure_shows_cmhash_stderr(tmp_path: Path) -> None:
    """Helm 3 prints the post-renderer's stderr when it fails (Helm 4 discards it)."""
    out = helm3(
        [
            "template",
            "web",
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
    )
    assert out.returncode == 1
    assert out.stdout == ""
    assert (
        "Error: error while running post render on files: error while running command "
        in out.stderr
    )
    assert (
        "error: Deployment/web-web references Secret 'not-rendered-here', which is not in the input"
    ) in out.stderr
    assert "[missing-reference]\ncmhash: 1 error; nothing written\n: exit status 2" in out.stderr
    assert "s3cr3t-value" not in out.stderr


def test_warnings_on_success_only_reach_the_log(tmp_path: Path) -> None:
    """Helm 3 shows the post-renderer's stderr only when it fails: a warning on a
    successful render is dropped, so CMHASH_LOG (or --strict) is the way to see it."""
    log = tmp_path / "cmhash.log"
    out = helm3(
        [
            "template",
            "web",
            str(CHART),
            "--post-renderer",
            "cmhash",
            "--set",
            "extraSecretRef=not-rendered-here",
        ],
        tmp_path,
        CMHASH_LOG=str(log),
    )
    assert out.returncode == 0 and "checksum/config" in out.stdout
    assert out.stderr == ""
    assert "warning: Deployment/web-web references Secret 'not-rendered-here'" in log.read_text()


def test_helm4_plugin_breaks_helm3(tmp_path: Path) -> None:
    """Why the README says not to install the Helm 4 plugin into Helm 3: Helm 3 cannot
    read a ``postrenderer/v1`` plugin.yaml, complains on every command, and cannot
    uninstall it; ``--post-renderer cmhash`` still runs the executable."""
    plugin = Path(run_cmhash(["helm-plugin-dir"]).out.strip())
    bad = (
        'failed to load plugins: failed to load plugin at "{}": error unmarshaling JSON: '
        'while decoding JSON: json: unknown field "apiVersion"'
    )
    inst = helm3(["plugin", "install", str(plugin)], tmp_path)
    assert inst.returncode == 1
    installed = tmp_path / "plugins" / "cmhash"
    assert installed.is_symlink()  # left behind although helm3 says it failed
    assert "Error: plugin is installed but unusable" in inst.stderr
    version = helm3(["version", "--short"], tmp_path)
    assert version.returncode == 0
    assert bad.format(installed / "plugin.yaml") in version.stderr
    assert helm3(["plugin", "uninstall", "cmhash"], tmp_path).returncode == 1
    out = helm3(["template", "web", str(CHART), "--post-renderer", "cmhash"], tmp_path)
    assert out.returncode == 0 and "checksum/config" in out.stdout
    assert bad.format(installed / "plugin.yaml") in out.stderr


def test_formatting_survives_helm3_not_helm4(tmp_path: Path) -> None:
    """The byte-fidelity promise holds through Helm 3 only: Helm 4 re-serialises the
    stream around its post-renderer (indentation, comment spacing, blank lines, folded
    scalars), so its output keeps the data but not the chart's formatting."""
    plain = helm3(["template", "web", str(STYLE_CHART)], tmp_path)
    assert plain.returncode == 0, plain.stderr
    three = helm3(["template", "web", str(STYLE_CHART), "--post-renderer", "cmhash"], tmp_path)
    assert three.returncode == 0, three.stderr
    plugin_dir = Path(run_cmhash(["helm-plugin-dir"]).out.strip()).parent
    four = subprocess.run(
        [tool("helm"), "template", "web", str(STYLE_CHART), "--post-renderer", "cmhash"],
        capture_output=True,
        text=True,
        env=helm_env(tmp_path, HELM_PLUGINS=str(plugin_dir)),
        check=False,
    )
    assert four.returncode == 0, four.stderr

    # Helm 3: exactly cmhash's output, so exactly the chart's text plus the annotation
    assert three.stdout == run_cmhash(["--no-config", "-"], stdin=plain.stdout.encode()).out
    kept = [
        "    name: web-config    # four-space indentation, aligned comment\n\n",
        "    motd: >-\n        folded\n        over two lines\n",
        "        - name: web\n",
    ]
    for text in kept:
        assert text in plain.stdout and text in three.stdout
        assert text not in four.stdout
    # Helm 4: the same data and the same checksum, re-serialised
    for text in [
        "  name: web-config # four-space indentation, aligned comment\ndata:\n",
        "  motd: >-\n    folded over two lines\n",
        "      - name: web\n",
    ]:
        assert text in four.stdout
    assert list(yaml.safe_load_all(three.stdout)) == list(yaml.safe_load_all(four.stdout))

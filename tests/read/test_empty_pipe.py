"""The empty-pipe rule, at every entry point (README "Using cmhash in a repository",
``read/inputs.py``): in the stream mode a pipe is the input even when empty (empty in,
empty out, a warning; ``--strict`` an error), so a failed or empty render never turns
into the repository's manifests; ``--check``, ``--diff`` and ``-i`` without PATH read
the config's ``paths`` on an empty pipe (pre-commit hands hooks one); a terminal,
``/dev/null`` or a closed stdin means nothing is given. Helm 3 renders a chart whose
non-hook output is empty (it failed with exit 2 before)."""

from __future__ import annotations

import os
import pty
import shutil
import subprocess
import time
from pathlib import Path

import pytest
import yaml
from conftest import (
    ROOT,
    cmhash_command,
    helm_env,
    kustomize,
    kustomize_build,
    run_cmhash,
    tool,
    write_tree,
)
from test_config_vs_stdin import REPO_CM as CM
from test_config_vs_stdin import REPO_DEP as DEP

WARNING = "<stdin>:1:1: warning: no Kubernetes objects in the input"


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    files = {"k8s/app.yaml": CM + "---\n" + DEP, ".cmhash.yaml": "paths: [k8s/]\n"}
    return write_tree(tmp_path / "repo", files)


def run(
    args: list[str], cwd: Path, stdin: bytes | int | None = b"", shell_stdin: str = ""
) -> subprocess.CompletedProcess[str]:
    if shell_stdin:  # e.g. '<&-' (closed): only a shell can start a process so
        command = " ".join([*cmhash_command(), *args, shell_stdin])
        return subprocess.run(
            ["bash", "-c", command], cwd=cwd, capture_output=True, text=True, check=False
        )
    kwargs = {"input": stdin.decode()} if isinstance(stdin, bytes) else {"stdin": stdin}
    return subprocess.run(
        [*cmhash_command(), *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=False,
        **kwargs,  # type: ignore[call-overload]
    )


# ------------------------------------------------------------------ the stream mode


@pytest.mark.parametrize("args", [[], ["-"], ["--namespace", "x"]])
def test_stream_empty_pipe_is_the_input_not_the_config_paths(repo: Path, args: list[str]) -> None:
    proc = run(args, repo)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == ""  # never the repository's manifests
    assert proc.stderr.startswith(WARNING) and proc.stderr.count("\n") == 1


def test_stream_empty_pipe_is_an_error_under_strict(repo: Path) -> None:
    proc = run(["--strict"], repo)
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr == (
        "cmhash: <stdin>:1:1: no Kubernetes objects in the input (it is empty or only comments)\n"
    )


def test_comment_only_pipe_passes_through_byte_for_byte(repo: Path) -> None:
    text = "---\n# Source: chart/templates/off.yaml\n---\n"
    proc = run([], repo, text.encode())
    assert proc.returncode == 0 and proc.stdout == text and WARNING in proc.stderr


def test_quiet_drops_the_warning(repo: Path) -> None:
    proc = run(["-q"], repo)
    assert proc.returncode == 0 and proc.stderr == "" and proc.stdout == ""


def test_explain_and_report_take_the_empty_pipe(repo: Path) -> None:
    text = run(["explain"], repo)
    assert text.returncode == 0 and WARNING in text.stderr and "repo-app" not in text.stdout
    js = run(["explain", "--format", "json"], repo)
    assert js.returncode == 0 and yaml.safe_load(js.stdout)["workloads"] == []
    (repo / "new.yaml").write_text(CM + "---\n" + DEP)
    rep = run(["report", "-", "new.yaml", "--format", "json"], repo)
    assert rep.returncode == 0, rep.stderr
    assert "repo-config" in rep.stdout  # everything in NEW is added to an empty OLD


@pytest.mark.parametrize("stdin", ["devnull", "closed"])
def test_stream_without_stdin_reads_the_config_paths(repo: Path, stdin: str) -> None:
    if stdin == "devnull":
        proc = run([], repo, subprocess.DEVNULL)
    else:
        proc = run([], repo, shell_stdin="<&-")
    assert proc.returncode == 0, proc.stderr
    assert "repo-app" in proc.stdout and "checksum/config" in proc.stdout


def test_a_terminal_reads_the_config_paths_or_says_it_waits(repo: Path, tmp_path: Path) -> None:
    """On a terminal the config's paths; without them, a hint that cmhash reads the
    terminal (it used to wait silently), then an empty input ends with the warning."""
    master, slave = pty.openpty()
    try:
        with_config = subprocess.run(
            cmhash_command(), stdin=slave, cwd=repo, capture_output=True, text=True, check=False
        )
        assert with_config.returncode == 0 and "repo-app" in with_config.stdout
        bare = tmp_path / "bare"
        bare.mkdir()
        proc = subprocess.Popen(
            cmhash_command(),
            stdin=slave,
            cwd=bare,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        time.sleep(1.0)
        os.write(master, b"\x04")  # Ctrl-D on an empty line: end of input
        out, err = proc.communicate(timeout=60)
    finally:
        os.close(master)
        os.close(slave)
    assert proc.returncode == 0, err
    assert err.splitlines()[0] == (
        "cmhash: reading manifests from the terminal: paste them and end with Ctrl-D, "
        "or name files or directories (cmhash --help)"
    )
    assert WARNING in err and out == ""


# ------------------------------------------------------------ the repository modes


@pytest.mark.parametrize(("flag", "code"), [("--check", 1), ("--diff", 0), ("-i", 0)])
def test_repository_modes_read_the_config_paths_on_an_empty_pipe(
    repo: Path, flag: str, code: int
) -> None:
    """What pre-commit does: an empty pipe on stdin, no file names."""
    proc = run([flag, "-v"], repo)
    assert proc.returncode == code, proc.stderr
    assert "stdin is empty: reading k8s (paths of .cmhash.yaml)" in proc.stderr
    if flag == "--diff":
        assert "+++ b/k8s/app.yaml" in proc.stdout
    if flag == "-i":
        assert "checksum/config" in (repo / "k8s" / "app.yaml").read_text()


@pytest.mark.parametrize(
    ("flag", "what"), [("--check", "check"), ("--diff", "read"), ("-i", "read")]
)
@pytest.mark.parametrize("stdin", [b"", subprocess.DEVNULL])
def test_repository_modes_without_config_paths_say_what_to_do(
    tmp_path: Path, flag: str, what: str, stdin: bytes | int
) -> None:
    proc = run([flag], tmp_path, stdin)
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.startswith(
        f"cmhash: nothing to {what}: no PATH given, no `paths:` in .cmhash.yaml, and stdin "
        "is empty; name the manifests"
    )
    assert proc.stderr.count("\n") == 1


def test_check_still_takes_a_non_empty_pipe(repo: Path) -> None:
    other = CM.replace("repo-config", "piped") + "---\n" + DEP.replace("repo-config", "piped")
    proc = run(["--check"], repo, other.encode())
    assert proc.returncode == 1 and "<stdin>" in proc.stderr


# ------------------------------------------------------------------ real tools

HOOK_JOB = """\
apiVersion: batch/v1
kind: Job
metadata:
  name: migrate
  annotations:
    "helm.sh/hook": pre-install
spec:
  template:
    spec:
      restartPolicy: Never
      containers:
      - name: m
        image: busybox
"""
OFF_CM = """\
{{- if .Values.on }}
apiVersion: v1
kind: ConfigMap
metadata:
  name: off
data:
  a: b
{{- end }}
"""


@pytest.fixture
def empty_chart(repo: Path) -> Path:
    """A chart whose non-hook output is empty: a hook and a template turned off."""
    chart = repo / "chart"
    (chart / "templates").mkdir(parents=True)
    (chart / "Chart.yaml").write_text("apiVersion: v2\nname: hooks\nversion: 0.1.0\n")
    (chart / "values.yaml").write_text("on: false\n")
    (chart / "templates" / "job.yaml").write_text(HOOK_JOB)
    (chart / "templates" / "off.yaml").write_text(OFF_CM)
    return chart


@pytest.mark.integration
@pytest.mark.parametrize("helm", ["helm3", "helm"])
def test_helm_renders_a_chart_whose_non_hook_output_is_empty(
    repo: Path, empty_chart: Path, tmp_path: Path, helm: str
) -> None:
    """Helm 3 pipes only the non-hook output (here nothing) to the post-renderer and
    failed the render on cmhash's exit 2; Helm 4's plugin gets the hooks too."""
    out = subprocess.run(
        [tool(helm), "template", "r", "./chart", "--post-renderer", "cmhash"],
        capture_output=True,
        text=True,
        cwd=repo,
        env=helm_env(tmp_path, helm),
        check=False,
    )
    assert out.returncode == 0, out.stderr
    assert "name: migrate" in out.stdout  # the hook, rendered
    assert "repo-app" not in out.stdout  # never the repository's manifests


@pytest.mark.integration
def test_kustomize_krm_function_and_legacy_plugin_on_nothing(repo: Path, tmp_path: Path) -> None:
    """A kustomization without resources: the KRM function (standalone kustomize) gets a
    ResourceList without items, the legacy exec transformer (kubectl) an empty pipe;
    both build an empty output, never the repository's manifests."""
    krm = repo / "krm"
    krm.mkdir()
    shutil.copy(ROOT / "ci-templates" / "kustomize" / "krm" / "cmhash-fn.yaml", krm)
    (krm / "kustomization.yaml").write_text("transformers:\n  - cmhash-fn.yaml\n")
    fn = kustomize_build(krm, cwd=repo)
    assert fn.returncode == 0, fn.stderr
    assert "repo-app" not in fn.stdout and fn.stdout.strip() in ("", "{}")

    home = tmp_path / "plugin-home"
    assert run_cmhash(["install-kustomize-plugin", "--plugin-home", str(home)]).code == 0
    legacy = repo / "legacy"
    legacy.mkdir()
    shutil.copy(ROOT / "ci-templates" / "kustomize" / "legacy" / "cmhash-transformer.yaml", legacy)
    (legacy / "kustomization.yaml").write_text("transformers:\n  - cmhash-transformer.yaml\n")
    tr = kustomize(legacy, cwd=repo, KUSTOMIZE_PLUGIN_HOME=str(home))
    assert tr.returncode == 0, tr.stderr
    assert "repo-app" not in tr.stdout and tr.stdout.strip() in ("", "{}")

"""A gate that checks nothing is no pass (read/inputs.py ``refusal``): a Helm chart's
source named itself is refused in every mode, with the command that renders it; a run
whose directories hold no manifest at all says so (exit 2), in ``--check`` and
``--diff`` as in the stream mode; only files named in a mode about files (pre-commit's
``pass_filenames``) may leave nothing to check (exit 0)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from conftest import ROOT, run_cmhash, tool, tool_env, write_tree

CHART = ROOT / "tests" / "fixtures" / "chart"  # a real chart source: Chart.yaml, templates/
CM = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cfg\ndata:\n  a: b\n"

MODES = {
    "stream": ([], "| cmhash\n"),
    "check": (["--check"], "| cmhash --check -\n"),
    "diff": (["--diff"], "| cmhash --diff -\n"),
    "check-diff": (["--check", "--diff"], "| cmhash --check --diff -\n"),
    "in-place": (["-i"], "| cmhash\n"),
}


@pytest.fixture
def chart(tmp_path: Path) -> Path:
    return Path(shutil.copytree(CHART, tmp_path / "mychart"))


@pytest.mark.parametrize("mode", MODES)
def test_a_chart_source_is_refused_in_every_mode(chart: Path, mode: str) -> None:
    """``cmhash --check CHART_DIR`` used to print "nothing to change" and exit 0: a CI
    gate pointed at a chart passed green while checking nothing."""
    flags, piped = MODES[mode]
    before = {p: p.read_bytes() for p in chart.rglob("*") if p.is_file()}
    res = run_cmhash([*flags, "mychart"], cwd=chart.parent)
    assert res.code == 2, (res.code, res.stderr)
    assert res.stdout == b""
    assert res.stderr == (
        "cmhash: mychart/: a Helm chart's source (Chart.yaml), not rendered manifests: "
        f"render it first: helm template RELEASE mychart/ {piped}"
    )
    assert {p: p.read_bytes() for p in chart.rglob("*") if p.is_file()} == before


def test_a_chart_named_with_a_manifest_directory_is_refused_too(
    chart: Path, tmp_path: Path
) -> None:
    write_tree(tmp_path, {"k8s/cm.yaml": CM})
    res = run_cmhash(["--check", "k8s", "mychart"], cwd=tmp_path)
    assert res.code == 2 and "mychart/: a Helm chart's source" in res.stderr


def test_a_chart_in_the_config_paths_is_refused(chart: Path) -> None:
    (chart / ".cmhash.yaml").write_text("paths: [.]\n")
    res = run_cmhash(["--check"], cwd=chart)
    assert res.code == 2
    assert "render it first: helm template RELEASE ./ | cmhash --check -" in res.stderr


def test_a_chart_below_a_walked_directory_is_still_skipped_with_a_note(
    chart: Path, tmp_path: Path
) -> None:
    """The repository case: a walk that meets a chart among manifests skips it (a -v
    note) and checks the rest, as before."""
    shutil.move(str(chart), str(tmp_path / "repo" / "charts" / "mychart"))
    write_tree(tmp_path, {"repo/k8s/cm.yaml": CM})
    res = run_cmhash(["--check", "-v", "repo"], cwd=tmp_path)
    assert res.code == 0, res.stderr
    assert "skipped repo/charts/mychart/: a Helm chart source" in res.stderr


@pytest.mark.parametrize("mode", MODES)
def test_a_directory_without_any_manifest_is_refused_in_every_mode(
    tmp_path: Path, mode: str
) -> None:
    write_tree(tmp_path, {"conf/values.yaml": "replicas: 2\n", "conf/mkdocs.yml": "x: 1\n"})
    res = run_cmhash([*MODES[mode][0], "conf"], cwd=tmp_path)
    assert res.code == 2, (res.code, res.stderr)
    assert res.stderr.startswith("cmhash: no Kubernetes manifests in the input: 2 paths skipped")


def test_a_walk_that_finds_only_a_chart_says_to_render_it(chart: Path, tmp_path: Path) -> None:
    shutil.move(str(chart), str(tmp_path / "charts" / "mychart"))
    res = run_cmhash(["--check", "charts"], cwd=tmp_path)
    assert res.code == 2
    assert "charts/mychart/: a Helm chart source (render it" in res.stderr


def test_files_named_in_a_mode_about_files_may_leave_nothing(tmp_path: Path) -> None:
    """pre-commit's pass_filenames names whatever YAML changed: a commit that touched
    only values.yaml and a chart template has nothing to check, and passes."""
    write_tree(tmp_path, {"values.yaml": "replicas: 2\n"})
    write_tree(tmp_path, {"charts/c/Chart.yaml": "apiVersion: v2\nname: c\nversion: 0.1.0\n"})
    write_tree(tmp_path, {"charts/c/templates/cm.yaml": "kind: ConfigMap\n"})
    files = ["values.yaml", "charts/c/templates/cm.yaml"]
    for flags in (["--check"], ["--diff"], ["-i"]):
        res = run_cmhash([*flags, *files], cwd=tmp_path)
        assert res.code == 0, (flags, res.stderr)


def test_the_hint_renders_with_the_real_helm(chart: Path) -> None:
    """What the refusal says to run works: the render piped into ``cmhash --check -``."""
    env = tool_env(HELM_CONFIG_HOME=str(chart.parent / "c"), HELM_CACHE_HOME=str(chart.parent))
    render = subprocess.run(
        [tool("helm"), "template", "demo", "mychart/"],
        cwd=chart.parent,
        capture_output=True,
        check=True,
        env=env,
    )
    res = run_cmhash(["--check", "-"], stdin=render.stdout, cwd=chart.parent)
    assert res.code == 1, res.stderr  # a real check: the render's workloads need checksums
    assert "would update" in res.stderr


KUSTOMIZATION = "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: {kind}\n"
PATCH = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cfg\ndata:\n  a: c\n"


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(
    ("kind", "body"),
    [
        ("Kustomization", "resources: [../base]\npatches:\n- path: cm.yaml\n"),
        ("Component", "patches:\n- path: cm.yaml\n"),
    ],
)
def test_a_kustomization_with_its_kind_is_nothing_to_check(
    tmp_path: Path, mode: str, kind: str, body: str
) -> None:
    """An overlay or a Component whose kustomization file says its apiVersion and kind
    (as ``kustomize edit fix`` writes it): the file is kustomize's build configuration,
    no object, so the directory holds nothing to check (it passed, "nothing to
    change", with only the kustomization file read as a manifest)."""
    write_tree(
        tmp_path,
        {"ovl/kustomization.yaml": KUSTOMIZATION.format(kind=kind) + body, "ovl/cm.yaml": PATCH},
    )
    flags, _ = MODES[mode]
    res = run_cmhash([*flags, "ovl"], cwd=tmp_path)
    assert res.code == 2, (res.code, res.stderr)
    assert "no Kubernetes manifests in the input" in res.stderr
    (tmp_path / ".cmhash.yaml").write_text("paths: [.]\n")
    res = run_cmhash(["--check"], cwd=tmp_path)
    assert res.code == 2 and "no Kubernetes manifests in the input" in res.stderr, res.stderr


@pytest.mark.parametrize("mode", MODES)
def test_a_directory_inside_a_chart_is_refused_like_the_chart(chart: Path, mode: str) -> None:
    """``cmhash -i mychart/templates`` rewrote a template (a checksum frozen at today's
    render in chart source) while each of its files named alone is skipped."""
    (chart / "templates" / "static.yaml").write_text(CM)  # a template with no template code
    flags, piped = MODES[mode]
    before = {p: p.read_bytes() for p in chart.rglob("*") if p.is_file()}
    res = run_cmhash([*flags, "mychart/templates"], cwd=chart.parent)
    assert res.code == 2, (res.code, res.stderr)
    assert res.stderr == (
        "cmhash: mychart/templates/: inside the Helm chart source mychart/ (Chart.yaml), not "
        f"rendered manifests: render the chart first: helm template RELEASE mychart/ {piped}"
    )
    assert {p: p.read_bytes() for p in chart.rglob("*") if p.is_file()} == before

"""Several Helm releases of one chart in one stream (``helmfile template`` writes each
release's ``helm template`` output to stdout one after the other, nothing between them:
helmfile ``pkg/helmexec/exec.go`` ``TemplateRelease``): each release is its own unit of
the release-namespace inference (plan/renders.py, plan/helm.py), told apart by Helm's
output order (helm ``pkg/release/v1/util/kind_sorter.go`` InstallOrder, hooks after the
manifests: ``pkg/cmd/template.go``) and the ``app.kubernetes.io/instance`` label. Where
they cannot be told apart, cmhash says so instead of guessing.

Streams are built from real ``helm template`` renders (helm 4 and helm 3 in .tools/bin)
of the charts under tests/fixtures/: chart-ns (no labels, the Deployment names the
release namespace, the ConfigMap none) and chart-release (Helm's standard labels, a
pre-install hook Job, ``fullnameOverride`` to give two releases the same object
names)."""

from __future__ import annotations

import glob
import subprocess
from pathlib import Path

import pytest
import yaml
from conftest import ROOT, run_cmhash, tool, tool_env

from cmhash.plan.renders import Renders

FIXTURES = ROOT / "tests" / "fixtures"


def _helm(binary: str, tmp_path: Path, *args: str) -> str:
    env = tool_env(
        HELM_CONFIG_HOME=str(tmp_path / "c"),
        HELM_DATA_HOME=str(tmp_path / "d"),
        HELM_CACHE_HOME=str(tmp_path / "k"),
    )
    out = subprocess.run(
        [tool(binary), "template", *args], capture_output=True, text=True, env=env, check=True
    )
    return out.stdout


def _checksums(text: str) -> dict[tuple[str, str, str], str | None]:
    out = {}
    for d in yaml.safe_load_all(text):
        if d and d["kind"] in ("Deployment", "Job"):
            ann = d["spec"]["template"].get("metadata", {}).get("annotations") or {}
            meta = d["metadata"]
            out[(d["kind"], meta.get("namespace", ""), meta["name"])] = ann.get("checksum/config")
    return out


@pytest.mark.integration
@pytest.mark.parametrize("binary", ["helm", "helm3"])
def test_two_releases_of_a_chart_without_labels(tmp_path: Path, binary: str) -> None:
    """chart-ns twice, in shop and cache: each release's unnamespaced ConfigMap is in its
    own namespace, each Deployment gets the checksum it gets on its render alone (the
    stream was exit 2 "cannot be told" before)."""
    one = _helm(binary, tmp_path, "a", str(FIXTURES / "chart-ns"), "-n", "shop")
    two = _helm(binary, tmp_path, "b", str(FIXTURES / "chart-ns"), "-n", "cache")
    res = run_cmhash(["--no-config", "-"], stdin=(one + two).encode())
    assert res.code == 0, res.stderr
    got = _checksums(res.out)
    alone = {**_checksums(run_cmhash(["--no-config", "-"], stdin=one.encode()).out)}
    alone.update(_checksums(run_cmhash(["--no-config", "-"], stdin=two.encode()).out))
    assert got == alone and all(v and len(v) == 64 for v in got.values()), got
    said = "objects without a namespace are taken to be in"
    assert f"(chart nsdemo, render 1 of 2): {said} 'shop'" in res.stderr
    assert f"(chart nsdemo, render 2 of 2): {said} 'cache'" in res.stderr
    assert "namespace-mismatch" not in res.stderr and "duplicate-object" not in res.stderr


@pytest.mark.integration
@pytest.mark.parametrize("binary", ["helm", "helm3"])
def test_two_releases_with_the_same_names_and_a_hook(tmp_path: Path, binary: str) -> None:
    """chart-release as x in shop and y in cache, both with fullnameOverride=app: the same
    object names, told apart by the instance label and Helm's order (a hook Job ends each
    render). A config change in y rolls y's Deployment and hook, never x's."""
    chart = str(FIXTURES / "chart-release")
    common = ["--set", "fullnameOverride=app"]
    x = _helm(binary, tmp_path, "x", chart, "-n", "shop", *common)
    y = _helm(binary, tmp_path, "y", chart, "-n", "cache", *common)
    y2 = _helm(binary, tmp_path, "y", chart, "-n", "cache", *common, "--set", "logLevel=debug")
    res = run_cmhash(["--no-config", "--jobs", "-"], stdin=(x + y).encode())
    assert res.code == 0, res.stderr
    assert "(chart relapp, render 1 of 2 (release x))" in res.stderr
    assert "(chart relapp, render 2 of 2 (release y))" in res.stderr
    got = _checksums(res.out)
    assert len(got) == 4 and all(v and len(v) == 64 for v in got.values()), got
    assert got[("Deployment", "shop", "app")] == got[("Job", "shop", "app-migrate")]
    # (the same content in both releases: the same checksum; what differs is below)
    changed = _checksums(run_cmhash(["--no-config", "--jobs", "-"], stdin=(x + y2).encode()).out)
    assert changed[("Deployment", "shop", "app")] == got[("Deployment", "shop", "app")]
    assert changed[("Job", "shop", "app-migrate")] == got[("Job", "shop", "app-migrate")]
    assert changed[("Deployment", "cache", "app")] != got[("Deployment", "cache", "app")]
    assert changed[("Job", "cache", "app-migrate")] != got[("Job", "cache", "app-migrate")]
    alone = _checksums(run_cmhash(["--no-config", "--jobs", "-"], stdin=y.encode()).out)
    assert all(got[k] == v for k, v in alone.items())


@pytest.mark.integration
def test_the_order_alone_tells_releases_apart(tmp_path: Path) -> None:
    """Without the instance label (stripped), the hook at the end of x's render and the
    ServiceAccount that starts y's still separate them."""
    chart = str(FIXTURES / "chart-release")
    x = _helm("helm", tmp_path, "x", chart, "-n", "shop", "--set", "fullnameOverride=app")
    y = _helm("helm", tmp_path, "y", chart, "-n", "cache", "--set", "fullnameOverride=app")
    text = "".join(
        line
        for line in (x + y).splitlines(keepends=True)
        if "app.kubernetes.io/instance" not in line
    ).replace("matchLabels:\n", "matchLabels: {}\n")
    res = run_cmhash(["--no-config", "--jobs", "-"], stdin=text.encode())
    assert res.code == 0, res.stderr
    assert "render 1 of 2" in res.stderr and "render 2 of 2" in res.stderr


REAL = sorted(
    [str(FIXTURES / "helm-renders" / "kube-prometheus-stack.yaml")]
    + [
        f
        for f in glob.glob(str(ROOT / "tests" / "corpus" / "**" / "*.yaml"), recursive=True)
        if "# Source: " in Path(f).read_text(encoding="utf-8", errors="replace")
    ]
)


@pytest.mark.parametrize("path", REAL, ids=lambda p: Path(p).name)
def test_a_real_render_is_one_release(path: str) -> None:
    """No real render (kube-prometheus-stack with its hooks and subcharts, redis-ha,
    istio's addons) is split: each is one release."""
    renders = Renders(Path(path).read_text(encoding="utf-8"))
    assert len(set(renders.units)) == 1, sorted(set(renders.units))
    assert not renders.several


SRC = "---\n# Source: demo/templates/{name}.yaml\n"
CM = (
    SRC.format(name="cm")
    + "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cfg\ndata:\n  a: b\n"
)
DEP = SRC.format(name="dep") + (
    "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {name}\n  namespace: {ns}\n"
    "spec:\n  template:\n    spec:\n      containers:\n      - name: c\n        envFrom:\n"
    "        - configMapRef: {{name: cfg}}\n"
)


def test_releases_that_cannot_be_told_apart_are_said_so() -> None:
    """One template gives two Deployments in two namespaces using one unnamespaced
    ConfigMap, and nothing in the order or labels separates them: two releases (helmfile)
    or one chart placing them so, cmhash cannot tell. Exit 2 naming both and saying why;
    with HELM_NAMESPACE exported, a helm-namespace warning instead of a silent choice."""
    text = CM + DEP.format(name="web", ns="shop") + DEP.format(name="api", ns="other")
    res = run_cmhash(["--no-config", "-"], stdin=text.encode())
    assert res.code == 2, res.stderr
    msg = res.stderr.strip()
    assert "the release namespace cannot be told" in msg
    assert "one template (demo/templates/dep.yaml) gives both" in msg
    assert "if this stream holds two releases of demo (helmfile template)" in msg
    res = run_cmhash(["--no-config", "-"], stdin=text.encode(), env={"HELM_NAMESPACE": "shop"})
    assert res.code == 0, res.stderr
    warn = [x for x in res.stderr.splitlines() if x.endswith("[helm-namespace]")]
    assert len(warn) == 1 and "cannot tell them apart" in warn[0], res.stderr
    assert ": warning: HELM_NAMESPACE='shop' is taken as the release namespace" in warn[0]


def test_two_renders_of_a_chart_by_hand_are_two_units() -> None:
    """The same, but each Deployment after its own ConfigMap (as two helm template runs
    print them): ConfigMap after Deployment breaks Helm's kind order, so two releases,
    each its own namespace, no error."""
    one = CM + DEP.format(name="web", ns="shop")
    two = CM + DEP.format(name="web", ns="other")
    res = run_cmhash(["--no-config", "-"], stdin=(one + two).encode())
    assert res.code == 0, res.stderr
    got = _checksums(res.out)
    assert got[("Deployment", "shop", "web")] and got[("Deployment", "other", "web")]
    assert "render 1 of 2" in res.stderr and "render 2 of 2" in res.stderr


UNNAMESPACED = SRC.format(name="dep") + (
    "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n"
    "spec:\n  template:\n    spec:\n      containers:\n      - name: c\n        envFrom:\n"
    "        - configMapRef: {name: cfg}\n"
)


@pytest.mark.parametrize("parser", ["fast", "exact"])
def test_releases_of_a_chart_that_names_no_namespace_use_their_own_objects(
    parser: str,
) -> None:
    """Most charts write no metadata.namespace: two releases of one (helmfile, the same
    release name in two namespaces) define ConfigMap cfg twice, and nothing says either
    release namespace. Each render's Deployment uses its own render's ConfigMap, as on its
    render alone; it got the last render's before (a duplicate-object warning and the
    other release's checksum)."""
    one = CM + UNNAMESPACED
    two = CM.replace("a: b", "a: other") + UNNAMESPACED
    res = run_cmhash(["--no-config", "--parser", parser, "-"], stdin=(one + two).encode())
    assert res.code == 0, res.stderr
    got = [v for d in yaml.safe_load_all(res.out) if d for v in _checksums(yaml.dump(d)).values()]
    alone = [
        v
        for text in (one, two)
        for v in _checksums(run_cmhash(["--no-config", "-"], stdin=text.encode()).out).values()
    ]
    assert got == alone and alone[0] != alone[1], (got, alone)
    assert "duplicate-object" not in res.stderr
    again = run_cmhash(["--no-config", "--check", "-"], stdin=res.stdout)
    assert again.code == 0, again.stderr
    versioned = run_cmhash(["--no-config", "--versioned", "-"], stdin=(one + two).encode())
    assert versioned.code == 2
    assert "(<stdin> (render demo#1) and <stdin> (render demo#2))" in versioned.stderr


@pytest.mark.parametrize("parser", ["fast", "exact"])
def test_committed_renders_in_one_directory_never_affect_each_other(
    tmp_path: Path, parser: str
) -> None:
    """rendered/dev.yaml and rendered/prod.yaml, one release's render each, the chart
    naming no namespace: each file's Deployment gets its own file's ConfigMap, as when
    the file is checked alone (dev's got prod's before: a duplicate-object warning, and
    `cmhash -i .` and `cmhash --check rendered/dev.yaml` disagreed forever)."""
    dev = CM + UNNAMESPACED
    prod = CM.replace("a: b", "a: prod") + UNNAMESPACED
    root = tmp_path / "rendered"
    root.mkdir()
    (root / "dev.yaml").write_text(dev)
    (root / "prod.yaml").write_text(prod)
    res = run_cmhash(["--no-config", "--parser", parser, "-i", "."], cwd=tmp_path)
    assert res.code == 0, res.stderr
    assert "duplicate-object" not in res.stderr
    for name in ("dev.yaml", "prod.yaml"):
        alone = run_cmhash(["--no-config", "--check", f"rendered/{name}"], cwd=tmp_path)
        assert alone.code == 0, alone.stderr
    assert run_cmhash(["--no-config", "--check", "."], cwd=tmp_path).code == 0


def test_a_vendored_file_with_a_source_url_comment_is_no_helm_render(tmp_path: Path) -> None:
    """ "# Source: https://..." heads many vendored manifests; Helm writes a chart path
    there, never a URL. Such a file is no render of its own: its ConfigMap beside another
    definition in the directory is a duplicate (warned, the later one used), not a
    silently separate place, and no release namespace is inferred for it."""
    cm = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cfg\ndata:\n  a: {v}\n"
    (tmp_path / "a-cm.yaml").write_text(cm.format(v="b"))
    (tmp_path / "b-vendored.yaml").write_text(
        "# Source: https://raw.githubusercontent.com/example/app/v1/cm.yaml\n" + cm.format(v="c")
    )
    (tmp_path / "dep.yaml").write_text(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  template:\n"
        "    spec:\n      containers:\n      - name: c\n        envFrom:\n"
        "        - configMapRef: {name: cfg}\n"
    )
    res = run_cmhash(["explain", "--no-config", "."], cwd=tmp_path)
    assert res.code == 0, res.stderr
    said = res.out + res.stderr
    assert "b-vendored.yaml:2:1: warning: ConfigMap 'cfg' is also defined at" in said
    assert "[duplicate-object]" in said and "Helm output" not in said


def test_another_chart_using_an_object_of_two_releases_is_a_tie() -> None:
    """A third render (another chart) uses cfg, which both releases of demo define and
    neither is nearer: exit 2, naming the two renders (not the file twice)."""
    other = UNNAMESPACED.replace("demo/templates/dep.yaml", "other/templates/dep.yaml")
    text = CM + UNNAMESPACED + CM.replace("a: b", "a: c") + UNNAMESPACED + other
    res = run_cmhash(["--no-config", "-"], stdin=text.encode())
    assert res.code == 2, res.stderr
    assert "which <stdin> (render demo#1) and <stdin> (render demo#2) both define" in res.stderr


@pytest.mark.integration
@pytest.mark.parametrize("binary", ["helm", "helm3"])
def test_one_release_name_in_two_namespaces_without_namespaces(tmp_path: Path, binary: str) -> None:
    """tests/fixtures/chart names no namespace at all: releases web in ns1 and in ns2
    (helmfile) each get the checksum of their own ConfigMap and Secret."""
    chart = str(FIXTURES / "chart")
    one = _helm(binary, tmp_path, "web", chart, "-n", "ns1", "--set", "logLevel=debug")
    two = _helm(binary, tmp_path, "web", chart, "-n", "ns2", "--set", "logLevel=warn")
    res = run_cmhash(["--no-config", "-"], stdin=(one + two).encode())
    assert res.code == 0, res.stderr
    got = [v for d in yaml.safe_load_all(res.out) if d for v in _checksums(yaml.dump(d)).values()]
    alone = [
        v
        for text in (one, two)
        for v in _checksums(run_cmhash(["--no-config", "-"], stdin=text.encode()).out).values()
    ]
    assert got == alone and alone[0] != alone[2], (got, alone)
    assert "duplicate-object" not in res.stderr


@pytest.mark.integration
def test_one_release_name_in_two_namespaces(tmp_path: Path) -> None:
    """helmfile releases may share a name across namespaces: the same instance label,
    the same object names; Helm's order (the hook Job ends a render) still splits them,
    and the messages number the renders."""
    chart = str(FIXTURES / "chart-release")
    one = _helm("helm", tmp_path, "rel", chart, "-n", "shop")
    two = _helm("helm", tmp_path, "rel", chart, "-n", "cache", "--set", "logLevel=debug")
    res = run_cmhash(["--no-config", "--jobs", "-"], stdin=(one + two).encode())
    assert res.code == 0, res.stderr
    assert "(chart relapp, render 1 of 2 (release rel))" in res.stderr
    assert "(chart relapp, render 2 of 2 (release rel))" in res.stderr
    got = _checksums(res.out)
    assert got[("Deployment", "shop", "rel-relapp")] != got[("Deployment", "cache", "rel-relapp")]
    assert "duplicate-object" not in res.stderr


@pytest.mark.integration
def test_crds_start_a_render_and_templated_crds_do_not(tmp_path: Path) -> None:
    """--include-crds prints each release's crds/ first: two renders, each its own
    namespace. A CRD templated under templates/crds/ is sorted among the manifests by
    kind and splits nothing."""
    chart = str(FIXTURES / "chart-release")
    x = _helm("helm", tmp_path, "x", chart, "-n", "shop", "--include-crds")
    y = _helm("helm", tmp_path, "y", chart, "-n", "cache", "--include-crds")
    assert x.startswith("---\n# Source: relapp/crds/widgets.yaml")
    res = run_cmhash(["--no-config", "--jobs", "-"], stdin=(x + y).encode())
    assert res.code == 0, res.stderr
    assert "render 2 of 2 (release y)): objects without a namespace are taken to be in 'cache'" in (
        res.stderr
    )
    templated = x.replace("relapp/crds/widgets.yaml", "relapp/templates/crds/widgets.yaml")
    crd_doc, rest = templated.split("\n---\n", 1)
    cm_at = rest.index("# Source: relapp/templates/deployment.yaml")
    text = "---\n" + rest[:cm_at] + crd_doc.removeprefix("---\n") + "\n---\n" + rest[cm_at:]
    res = run_cmhash(["--no-config", "--jobs", "-"], stdin=text.encode())
    assert res.code == 0, res.stderr
    assert "(chart relapp): objects without a namespace are taken to be in 'shop'" in res.stderr


def test_an_order_helm_does_not_print_is_not_cut_into_releases() -> None:
    """A Secret after a ConfigMap breaks Helm's kind order, but the part after it prints
    no template the part before printed: not the chart starting over, so one release
    (a hand-assembled or re-sorted stream is never cut into pieces): the CronJob's
    reference still shows the release namespace (found by the property tests)."""
    cm = SRC.format(name="configmap") + (
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: alpha\ndata:\n  k1: v\n"
    )
    secret = SRC.format(name="secret") + (
        "apiVersion: v1\nkind: Secret\nmetadata:\n  name: alpha\nstringData:\n  k: v\n"
    )
    job = SRC.format(name="cronjob") + (
        "apiVersion: batch/v1\nkind: CronJob\nmetadata:\n  name: alpha\n  namespace: ns1\n"
        "spec:\n  schedule: '* * * * *'\n  jobTemplate:\n    spec:\n      template:\n"
        "        spec:\n          containers:\n          - name: c\n            env:\n"
        "            - name: K\n              valueFrom:\n                configMapKeyRef:"
        " {name: alpha, key: k1}\n"
    )
    res = run_cmhash(["--no-config", "-"], stdin=(cm + secret + job).encode())
    assert res.code == 0, res.stderr
    assert "(chart demo): objects without a namespace are taken to be in 'ns1'" in res.stderr
    assert "render 1 of" not in res.stderr
    assert "checksum/config" in res.out


def test_mermaid_draws_each_release_apart() -> None:
    """Two releases in one stream each use their own ConfigMap cfg: the Mermaid graph has
    a node per definition (file and line), so each Deployment's edge comes from its own.
    Nodes were per file, and the two releases' ConfigMaps were one node with both
    Deployments' edges."""
    text = CM + UNNAMESPACED + CM.replace("a: b", "a: c") + UNNAMESPACED
    res = run_cmhash(["explain", "--no-config", "--format", "mermaid", "-"], stdin=text.encode())
    assert res.code == 0, res.stderr
    nodes = [x for x in res.out.splitlines() if '[("ConfigMap/cfg' in x]
    assert len(nodes) == 2, res.out
    edges = [x for x in res.out.splitlines() if "-->" in x]
    assert len(edges) == 2 and len({e.split()[0] for e in edges}) == 2, res.out
    assert len({e.split()[-1] for e in edges}) == 2, res.out

"""Every documented route gives the pipe's checksums, on real charts.

The reference is the pipe, ``helm template … | cmhash``. Each route is run with the real
tool on real chart renders (tests/fixtures/charts: kube-prometheus-stack with grafana and
the Prometheus operator's resources, loki-distributed, an OpenTelemetry collector; the
Helm renders of the vendored corpus for the routes that need no chart): the Helm 3
post-renderer, the Helm 4 plugin, ``cmhash patches RENDER``, the kustomize exec
transformer, the KRM function, and ``kustomize build DIR | cmhash patches -`` (the
kustomize-controller recipe).

A route may differ from the pipe only where the tool in front of cmhash changed the data
it hands on: Helm 4 re-serialises the templates before its post-renderer sees them. So a
workload whose checksum differs must reference a ConfigMap or Secret whose data, parsed,
differs between the plain render and what the route gave cmhash (captured), and cmhash on
that captured stream gives exactly the route's checksums.

The kustomize routes are run as the recipes say, with the release namespace given
(cmhash's ``namespace:``): kustomize drops Helm's ``# Source:`` lines, from which cmhash
otherwise reads it. Without it, a chart's ConfigMap without a namespace (grafana's
``grafana-extra-env``) falls out of the checksum of the workload in the release
namespace: the pipe warns (namespace-mismatch), and the routes whose warnings kustomize
does not show fail with the message instead of building.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any, NamedTuple

import pytest
import yaml
from conftest import (
    ROOT,
    SHARED_CORPUS,
    TESTS,
    helm_env,
    kustomize,
    kustomize_build,
    run_cmhash,
    shared_params,
    tool,
    tool_env,
)

# (about a minute on two busy cores: CI and --run-slow run it)
pytestmark = [pytest.mark.integration, pytest.mark.slow]
FIXTURES = TESTS / "fixtures" / "charts"
KEY = "checksum/config"


class Chart(NamedTuple):
    name: str
    release: str
    namespace: str
    package: str
    values: str | None

    def args(self) -> list[str]:
        values = ["-f", str(FIXTURES / self.values)] if self.values else []
        return [
            "template",
            self.release,
            str(FIXTURES / self.package),
            "-n",
            self.namespace,
            *values,
        ]


CHARTS = [
    Chart(
        "kube-prometheus-stack",
        "kps",
        "monitoring",
        "kube-prometheus-stack-88.5.3.tgz",
        "kube-prometheus-stack.values.yaml",
    ),
    Chart("loki-distributed", "loki", "loki", "loki-distributed-0.80.6.tgz", None),
    Chart(
        "opentelemetry-collector",
        "otel",
        "otel",
        "opentelemetry-collector-0.170.0.tgz",
        "opentelemetry-collector.values.yaml",
    ),
]
# Helm renders in the corpus (no chart: the routes after the render)
RENDERS = [
    TESTS / "corpus/argo-cd/manifests/ha/base/redis-ha/chart/upstream.yaml",
    *sorted((TESTS / "corpus/istio/samples/addons").glob("*.yaml")),
]
SHARED_RENDERS = shared_params(SHARED_CORPUS / "istio/prow/config/calico.yaml", "shared-calico")

Ident = tuple[str, str, str]  # kind, namespace, name


def _docs(text: str) -> list[dict[str, Any]]:
    return [d for d in yaml.safe_load_all(text) if isinstance(d, dict) and "kind" in d]


def _ident(d: dict[str, Any]) -> Ident:
    meta = d.get("metadata") or {}
    return (d["kind"], meta.get("namespace") or "", meta.get("name") or "")


def checksums(text: str) -> dict[Ident, dict[str, str]]:
    """Our annotation wherever an object carries it (a pod template, an operator's
    pod metadata): object -> field path -> value."""
    out: dict[Ident, dict[str, str]] = {}

    def walk(node: Any, path: str, found: dict[str, str]) -> None:
        if isinstance(node, dict):
            if path.endswith("annotations") and KEY in node:
                found[path] = node[KEY]
            for k, v in node.items():
                walk(v, f"{path}.{k}" if path else str(k), found)
        elif isinstance(node, list):
            for i, v in enumerate(node):
                walk(v, f"{path}[{i}]", found)

    for d in _docs(text):
        found: dict[str, str] = {}
        walk(d, "", found)
        if found:
            out[_ident(d)] = found
    return out


def _data(d: dict[str, Any]) -> Any:
    return {k: d.get(k) for k in ("data", "stringData", "binaryData", "type")}


def changed(plain: str, received: str, namespace: str = "") -> set[Ident]:
    """ConfigMaps and Secrets whose data, parsed, differ between the plain render and
    what a route handed cmhash (identities with the namespace they land in)."""

    def configs(text: str) -> dict[Ident, Any]:
        out = {}
        for d in _docs(text):
            if d["kind"] in ("ConfigMap", "Secret"):
                kind, ns, name = _ident(d)
                out[(kind, ns or namespace, name)] = _data(d)
        return out

    before, after = configs(plain), configs(received)
    return {i for i in before.keys() | after.keys() if before.get(i) != after.get(i)}


def references(plain: str, *args: str) -> dict[Ident, set[Ident]]:
    """What each workload references, as ``cmhash explain`` reads the plain render."""
    res = run_cmhash(["explain", "--no-config", "--format", "json", *args, "-"], plain.encode())
    data = json.loads(res.stdout)
    return {
        (w["kind"], w["namespace"] or "", w["name"]): {
            (r["kind"], r["namespace"] or "", r["name"]) for r in w["references"]
        }
        for w in data["workloads"]
    }


def assert_explained(
    pipe: dict[Ident, dict[str, str]],
    route: dict[Ident, dict[str, str]],
    refs: dict[Ident, set[Ident]],
    moved: set[Ident],
) -> list[Ident]:
    """The route annotates the same objects as the pipe, with the same values except
    where a referenced object's data changed on the way: the workloads that differ."""
    assert route.keys() == pipe.keys()
    differ = [i for i in pipe if route[i] != pipe[i]]
    for i in differ:
        assert refs.get(i, set()) & moved, f"{i}: another checksum, and no data it uses moved"
    return differ


def _helm(binary: str, args: list[str], tmp: Path, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [tool(binary), *args],
        capture_output=True,
        text=True,
        env=helm_env(tmp, binary, **env),
        check=False,
    )


def _pipe(text: str, *args: str) -> str:
    res = run_cmhash(["--no-config", "-q", *args, "-"], text.encode())
    assert res.code == 0, res.stderr
    return res.out


@pytest.fixture(scope="module", params=CHARTS, ids=lambda c: c.name)
def chart(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Any:
    """The chart, its plain render (helm 4's ``helm template``, the same bytes as Helm
    3's) and the pipe's output."""
    c: Chart = request.param
    tmp = tmp_path_factory.mktemp(c.release)
    plain = _helm("helm", c.args(), tmp)
    assert plain.returncode == 0, plain.stderr
    return c, plain.stdout, _pipe(plain.stdout), tmp


def test_helm3_post_renderer_is_the_pipe(chart: Any) -> None:
    c, _, pipe, tmp = chart
    out = _helm("helm3", [*c.args(), "--post-renderer", "cmhash"], tmp)
    assert out.returncode == 0, out.stderr
    assert checksums(out.stdout) == checksums(pipe) != {}
    # the objects too: Helm 3 prints what cmhash wrote, hooks moved after the rest
    assert sorted(map(_ident, _docs(out.stdout))) == sorted(map(_ident, _docs(pipe)))


# what Helm 4's round trip changed, measured: chart -> ConfigMaps/Secrets whose data moved
HELM4_MOVED = {
    # a block scalar's final newline dropped (config.yaml: `|` read back as `|-`)
    "loki-distributed": {("ConfigMap", "loki", "loki-loki-distributed")},
}


def test_helm4_plugin_differs_only_where_helm4_changed_the_data(chart: Any) -> None:
    c, plain, pipe, tmp = chart
    capture = tmp / "capture"
    (capture / "capture").mkdir(parents=True, exist_ok=True)
    (capture / "capture" / "plugin.yaml").write_text(
        "apiVersion: v1\ntype: postrenderer/v1\nname: capture\nversion: 0.1.0\n"
        "runtime: subprocess\nruntimeConfig:\n  platformCommand:\n"
        "    - command: ${HELM_PLUGIN_DIR}/capture.sh\n"
    )
    script = capture / "capture" / "capture.sh"
    script.write_text('#!/bin/sh\ntee "$CAPTURE"\n')
    script.chmod(0o755)
    received = tmp / "helm4-input.yaml"
    env = tool_env(HELM_PLUGINS=str(capture), CAPTURE=str(received))
    done = subprocess.run(
        [tool("helm"), *c.args(), "--post-renderer", "capture"],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    out = _helm("helm", [*c.args(), "--post-renderer", "cmhash"], tmp)
    assert out.returncode == 0, out.stderr
    route = checksums(out.stdout)
    # cmhash gives, on what Helm 4 handed it, exactly what Helm 4 printed
    assert route == checksums(_pipe(received.read_text()))
    moved = changed(plain, received.read_text(), c.namespace)
    assert moved == HELM4_MOVED.get(c.name, set())
    differ = assert_explained(checksums(pipe), route, references(plain), moved)
    assert bool(differ) == bool(moved)


def test_patches_of_the_render_are_the_pipe(chart: Any) -> None:
    _, plain, pipe, _ = chart
    made = run_cmhash(["patches", "--no-config", "-q", "-"], plain.encode())
    assert made.code == 0, made.stderr
    assert checksums(made.out) == checksums(pipe)


# -- the kustomize routes ----------------------------------------------------------------


def _kustomization(tmp: Path, render: str, transformer: str | None) -> Path:
    d = tmp / "k"
    if d.exists():
        shutil.rmtree(d)
    d.mkdir()
    (d / "render.yaml").write_text(render)
    text = "resources: [render.yaml]\n"
    if transformer is not None:
        (d / "cmhash.yaml").write_text(transformer)
        text += "transformers: [cmhash.yaml]\n"
    (d / "kustomization.yaml").write_text(text)
    return d


def _config(kind: str, namespace: str | None) -> str:
    """The shipped transformer or function config, with cmhash's namespace: as the
    kustomize recipes say."""
    name = "legacy/cmhash-transformer.yaml" if kind == "legacy" else "krm/cmhash-fn.yaml"
    text = (ROOT / "ci-templates/kustomize" / name).read_text()
    return text + (f"namespace: {namespace}\n" if namespace else "")


def _routes(render: str, namespace: str | None, tmp: Path, plugins: Path) -> dict[str, Any]:
    """Each kustomize route's output on ``render`` (with cmhash's namespace when given),
    and what kustomize handed on without cmhash (to tell what kustomize itself moved)."""
    plain_v5 = kustomize(_kustomization(tmp, render, None))
    plain_krm = kustomize_build(_kustomization(tmp, render, None))
    assert plain_v5.returncode == 0 and plain_krm.returncode == 0
    legacy = kustomize(
        _kustomization(tmp, render, _config("legacy", namespace)),
        KUSTOMIZE_PLUGIN_HOME=str(plugins),
    )
    krm = kustomize_build(_kustomization(tmp, render, _config("krm", namespace)))
    args = ["-n", namespace] if namespace else []
    patches = run_cmhash(["patches", "--no-config", *args, "-"], plain_v5.stdout.encode())
    return {
        "v5": plain_v5.stdout,
        "krm-input": plain_krm.stdout,
        "legacy": legacy,
        "krm": krm,
        "patches": patches,
    }


@pytest.fixture(scope="module")
def plugins(tmp_path_factory: pytest.TempPathFactory) -> Path:
    home = tmp_path_factory.mktemp("plugin-home")
    assert run_cmhash(["install-kustomize-plugin", "--plugin-home", str(home)]).code == 0
    return home


def _kustomize_routes_are_the_pipe(
    plain: str, pipe: str, namespace: str | None, tmp: Path, plugins: Path
) -> None:
    got = _routes(plain, namespace, tmp, plugins)
    refs = references(plain)
    expected = checksums(pipe)
    for name, received in (("legacy", got["v5"]), ("krm", got["krm-input"])):
        done = got[name]
        assert done.returncode == 0, f"{name}: {done.stderr}"
        moved = changed(plain, received, namespace or "")
        assert_explained(expected, checksums(done.stdout), refs, moved)
    assert got["patches"].code == 0, got["patches"].stderr
    assert checksums(got["patches"].out) == expected


def test_kustomize_routes_with_the_namespace_are_the_pipe(chart: Any, plugins: Path) -> None:
    c, plain, pipe, tmp = chart
    _kustomize_routes_are_the_pipe(plain, pipe, c.namespace, tmp, plugins)


@pytest.mark.parametrize("render", [*RENDERS, *SHARED_RENDERS], ids=lambda p: p.name)
def test_kustomize_routes_on_the_corpus_renders_are_the_pipe(
    render: Path, tmp_path: Path, plugins: Path
) -> None:
    """These renders name every namespace they use: no namespace to give."""
    plain = render.read_text()
    _kustomize_routes_are_the_pipe(plain, _pipe(plain), None, tmp_path, plugins)
    made = run_cmhash(["patches", "--no-config", "-q", str(render)])
    assert checksums(made.out) == checksums(_pipe(plain))


def test_without_the_namespace_a_dropped_reference_reaches_the_user(
    chart: Any, plugins: Path
) -> None:
    """kustomize took Helm's ``# Source:`` lines away: where that leaves a ConfigMap
    without a namespace apart from its workload (kube-prometheus-stack's grafana), the
    pipe of kustomize's output warns, and the routes that show no warning fail with the
    message; elsewhere they build as the pipe annotates."""
    c, plain, _, tmp = chart
    got = _routes(plain, None, tmp, plugins)
    seen = run_cmhash(["--no-config", "-"], got["v5"].encode())
    mismatch = "[namespace-mismatch]" in seen.stderr
    assert mismatch == (c.name == "kube-prometheus-stack")
    assert ("[namespace-mismatch]" in got["patches"].stderr) == mismatch  # on the command line
    for name in ("legacy", "krm"):
        done = got[name]
        if not mismatch:
            assert done.returncode == 0, done.stderr
            continue
        assert done.returncode != 0, f"{name} built, and nobody saw the warning"
        assert "references ConfigMap 'grafana-extra-env', which the input only has with " in (
            done.stderr
        )
        assert "[namespace-mismatch]" in done.stderr
        assert "give the namespace (namespace: in the kustomization, or in cmhash's config)" in (
            done.stderr
        )


def test_a_charts_own_checksum_through_kustomize_enable_helm_is_the_charts(
    tmp_path: Path,
) -> None:
    """kustomize's helmCharts renders loki-distributed, whose workloads carry the chart's
    own ``checksum/config: {{ … | sha256sum }}``; kustomize keeps none of Helm's
    ``# Source:`` lines, but the chart's labels: cmhash replaces each value and says so,
    as on ``helm template``'s output, instead of taking it for its own."""
    d = tmp_path / "k"
    (d / "charts").mkdir(parents=True)
    subprocess.run(
        ["tar", "xzf", str(FIXTURES / "loki-distributed-0.80.6.tgz"), "-C", str(d / "charts")],
        check=True,
    )
    (d / "kustomization.yaml").write_text(
        "helmCharts:\n- name: loki-distributed\n  releaseName: loki\n  namespace: loki\n"
        "helmGlobals:\n  chartHome: charts\n"
    )
    built = subprocess.run(
        [tool("kubectl"), "kustomize", "--enable-helm", "--helm-command", tool("helm3"), str(d)],
        capture_output=True,
        text=True,
        env=tool_env(),
        check=False,
    )
    assert built.returncode == 0, built.stderr
    assert "# Source:" not in built.stdout and built.stdout.count(f"{KEY}: ") == 5
    res = run_cmhash(["--no-config", "-"], built.stdout.encode())
    assert res.code == 0
    assert res.stderr.count("[replaced-annotation]") == 5
    assert checksums(res.out) == checksums(_pipe(_helm_plain(tmp_path, CHARTS[1])))


def _helm_plain(tmp: Path, c: Chart) -> str:
    done = _helm("helm", c.args(), tmp)
    assert done.returncode == 0, done.stderr
    return done.stdout

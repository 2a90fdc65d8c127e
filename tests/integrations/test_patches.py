"""``cmhash patches``: the annotations as kustomize strategic-merge patches, and the
copies kept current in a kustomization (``--kustomization``) and a Flux HelmRelease
(``--helmrelease``). The proof is kustomize itself: the real binaries build the render
with the patches into the same objects as cmhash's own output."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml
from conftest import ROOT, SHARED_CORPUS, Result, kustomize4, run_cmhash, tool

CASES = sorted(
    [
        *(ROOT / "tests" / "cases").glob("kind-*/input.yaml"),
        *(ROOT / "tests" / "cases").glob("op-*/input.yaml"),
    ]
)
CORPUS = ROOT / "tests" / "corpus"
# helm template renders of real charts (each has '# Source:' lines)
CHARTS = [
    CORPUS / "argo-cd/manifests/ha/base/redis-ha/chart/upstream.yaml",
    CORPUS / "istio/samples/addons/prometheus.yaml",
    CORPUS / "istio/samples/addons/loki.yaml",
    CORPUS / "istio/samples/addons/kiali.yaml",
    CORPUS / "istio/samples/addons/grafana.yaml",
]
SHARED_CHARTS = [SHARED_CORPUS / "istio/prow/config/calico.yaml"]


def _docs(text: str) -> list[Any]:
    return [d for d in yaml.safe_load_all(text) if d is not None]


def _merge(obj: Any, patch: Any) -> Any:
    """A strategic merge of a patch that holds only nested mappings (what cmhash writes)."""
    if not isinstance(obj, dict) or not isinstance(patch, dict):
        return patch
    out = dict(obj)
    for k, v in patch.items():
        out[k] = _merge(obj.get(k), v) if k in obj and obj[k] is not None else v
    return out


def _ident(d: dict[str, Any]) -> tuple[str, str, str, str]:
    meta = d.get("metadata") or {}
    return (d["apiVersion"], d["kind"], meta.get("namespace") or "", meta["name"])


def _args(case: Path) -> list[str]:
    args = case.parent / "args.txt"
    config = case.parent / "config.yaml"
    return [
        *(args.read_text().split() if args.exists() else []),
        *(["--config", str(config)] if config.exists() else []),
    ]


@pytest.mark.parametrize("case", CASES, ids=lambda p: p.parent.name)
@pytest.mark.parametrize("parser", ["fast", "exact"])
def test_patches_give_cmhash_output_for_every_kind(case: Path, parser: str) -> None:
    """Every kind's golden case: the input with the patches merged is cmhash's output,
    object by object; a workload cmhash leaves alone gets no patch."""
    extra = _args(case)
    base = [
        *([] if "--config" in extra else ["--no-config"]),
        "--parser",
        parser,
        *extra,
        str(case),
    ]
    out = run_cmhash(base)
    if out.code != 0:
        pytest.skip(f"the case is an error case ({out.stderr.strip()})")
    made = run_cmhash(["patches", *base])
    assert made.code == 0, made.stderr
    patches = {_ident(p): p for p in _docs(made.out)}
    inputs = [d for d in _docs(case.read_text()) if isinstance(d, dict) and "kind" in d]
    expected = [d for d in _docs(out.out) if isinstance(d, dict) and "kind" in d]
    merged = []
    for d in inputs:
        ident = _ident(d) if (d.get("metadata") or {}).get("name") else None
        merged.append(_merge(d, patches.pop(ident)) if ident in patches else d)
    assert merged == expected
    assert not patches, "a patch for an object that is not in the input"


def test_no_patch_for_what_cmhash_leaves_alone() -> None:
    """A Job (without --jobs) and a workload without in-stream config get none."""
    job = ROOT / "tests/cases/kind-job-default/input.yaml"
    made = run_cmhash(["patches", "--no-config", str(job)])
    assert made.code == 0
    assert _docs(made.out) == []


def test_order_is_stable_and_by_kind_namespace_name() -> None:
    made = run_cmhash(["patches", "--no-config", str(ROOT / "examples/app.yaml")])
    idents = [_ident(d) for d in _docs(made.out)]
    assert [i[1] for i in idents] == ["CronJob", "Deployment"]
    again = run_cmhash(["patches", "--no-config", str(ROOT / "examples/app.yaml")])
    assert again.out == made.out


def test_versioned_is_refused_with_the_reason() -> None:
    made = run_cmhash(["patches", "--no-config", "--versioned", str(ROOT / "examples/app.yaml")])
    assert made.code == 2
    assert "cannot express versioned names as patches" in made.stderr
    assert made.out == ""


ENV_CM = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app\ndata:\n  env: {env}\n"
ENV_APP = (
    "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: app\nspec:\n  template:\n"
    "    spec:\n      containers:\n      - name: c\n        image: x\n        envFrom:\n"
    "        - configMapRef: {name: app}\n"
)


def test_environments_with_different_checksums_are_refused(tmp_path: Path) -> None:
    """dev/ and prod/ each with Deployment app (no namespace): one patch file cannot hold
    both values. It held one patch with prod's value, which dev's overlay would apply;
    now exit 2 at the second, naming the first, and nothing written. The same value twice
    is one patch."""
    for env in ("dev", "prod"):
        (tmp_path / env).mkdir()
        (tmp_path / env / "cm.yaml").write_text(ENV_CM.format(env=env))
        (tmp_path / env / "app.yaml").write_text(ENV_APP)
    made = run_cmhash(["patches", "--no-config", "."], cwd=tmp_path)
    assert made.code == 2 and made.out == ""
    assert made.stderr.startswith("cmhash: ./prod/app.yaml:1:1: Deployment/app is annotated ")
    assert "and at ./dev/app.yaml:1 with different checksums" in made.stderr
    (tmp_path / "prod" / "cm.yaml").write_text(ENV_CM.format(env="dev"))
    same = run_cmhash(["patches", "--no-config", "."], cwd=tmp_path)
    assert same.code == 0, same.stderr
    assert len(_docs(same.out)) == 1
    alone = run_cmhash(["patches", "--no-config", "dev"], cwd=tmp_path)
    assert alone.out == same.out


# -- the real kustomize ----------------------------------------------------------------


def _unset_nulls(obj: Any) -> Any:
    """Map entries whose value is null dropped: kustomize 4.5.4 drops them from an object
    it patches (the prometheus render's ``rollingUpdate: null``), and the API server
    reads a null field as unset, so the two are the same object."""
    if isinstance(obj, dict):
        return {k: _unset_nulls(v) for k, v in obj.items() if v is not None}
    if isinstance(obj, list):
        return [_unset_nulls(v) for v in obj]
    return obj


def _build(binary: list[str], directory: Path) -> list[Any]:
    done = subprocess.run(
        [*binary, str(directory)], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    return sorted((_unset_nulls(d) for d in _docs(done.stdout)), key=lambda d: repr(_ident(d)))


def _kustomizations(render: Path, tmp: Path) -> tuple[Path, Path, Path, Path]:
    """Four directories: the render with the patch file under ``patches`` (kustomize
    v5) and under ``patchesStrategicMerge`` (v4 and v5), the render with the patches
    inline as Flux's helm-controller passes them (internal/postrender/kustomize.go:
    resources [helm-output.yaml] + patches [{patch, target}]), and cmhash's output."""
    made = run_cmhash(["patches", "--no-config", str(render)])
    assert made.code == 0, made.stderr
    out = run_cmhash(["--no-config", str(render)])
    assert out.code == 0, out.stderr
    with_file, psm, inline, plain = tmp / "file", tmp / "psm", tmp / "inline", tmp / "plain"
    for d in (with_file, psm, inline, plain):
        d.mkdir()
    shutil.copy(render, psm / "helm-output.yaml")
    (psm / "cmhash-patches.yaml").write_text(made.out)
    (psm / "kustomization.yaml").write_text(
        "resources: [helm-output.yaml]\npatchesStrategicMerge:\n- cmhash-patches.yaml\n"
    )
    shutil.copy(render, with_file / "helm-output.yaml")
    (with_file / "cmhash-patches.yaml").write_text(made.out)
    (with_file / "kustomization.yaml").write_text(
        "resources: [helm-output.yaml]\npatches:\n- path: cmhash-patches.yaml\n"
    )
    shutil.copy(render, inline / "helm-output.yaml")
    entries = "".join(
        "- patch: |\n" + "".join(f"    {line}\n" for line in yaml.safe_dump(p).splitlines())
        for p in _docs(made.out)
    )
    (inline / "kustomization.yaml").write_text(
        f"resources: [helm-output.yaml]\npatches:\n{entries}"
    )
    (plain / "out.yaml").write_text(out.out)
    (plain / "kustomization.yaml").write_text("resources: [out.yaml]\n")
    assert len(_docs(made.out)) >= 1
    return with_file, psm, inline, plain


@pytest.mark.integration
@pytest.mark.parametrize("render", CHARTS, ids=lambda p: p.parent.name + "/" + p.name)
def test_real_kustomize_builds_the_patches_into_cmhash_output(render: Path, tmp_path: Path) -> None:
    """Standalone kustomize 4.5.4 (patchesStrategicMerge, inline patches) and kubectl's
    kustomize v5 (every form)."""
    with_file, psm, inline, plain = _kustomizations(render, tmp_path)
    v4 = [kustomize4(), "build"]
    expected = _build(v4, plain)
    assert _build(v4, psm) == expected
    assert _build(v4, inline) == expected
    v5 = [tool("kubectl"), "kustomize"]
    expected = _build(v5, plain)
    for form in (with_file, psm, inline):
        assert _build(v5, form) == expected, form.name


@pytest.mark.integration
@pytest.mark.shared("corpus", "istio", "prow", "config", "calico.yaml")
@pytest.mark.parametrize("render", SHARED_CHARTS, ids=lambda p: p.name)
def test_real_kustomize_on_the_shared_chart_renders(render: Path, tmp_path: Path) -> None:
    with_file, psm, inline, plain = _kustomizations(render, tmp_path)
    v5 = [tool("kubectl"), "kustomize"]
    expected = _build(v5, plain)
    for form in (with_file, psm, inline):
        assert _build(v5, form) == expected, form.name


# -- --kustomization DIR ---------------------------------------------------------------

KUSTOMIZATION = """\
# the overlay of the shop
apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources:
  - app.yaml   # rendered by CI
patches:
  - path: replicas.yaml
    target: {kind: Deployment}
"""


def _overlay(tmp: Path, text: str = KUSTOMIZATION) -> Path:
    d = tmp / "overlay"
    d.mkdir()
    (d / "kustomization.yaml").write_text(text)
    shutil.copy(ROOT / "examples/app.yaml", d / "app.yaml")
    (d / "replicas.yaml").write_text(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  replicas: 3\n"
    )
    return d


def _keep(d: Path, *extra: str) -> Result:
    return run_cmhash(
        ["patches", "--no-config", str(d / "app.yaml"), "--kustomization", str(d), *extra]
    )


def test_kustomization_entry_and_file_kept_current(tmp_path: Path) -> None:
    d = _overlay(tmp_path)
    assert _keep(d, "--check").code == 1
    done = _keep(d)
    assert done.code == 0, done.stderr
    text = (d / "kustomization.yaml").read_text()
    assert text == KUSTOMIZATION.replace(
        "patches:\n", "patches:\n  - path: cmhash-patches.yaml\n"
    )  # one line in, every other byte as it was
    assert (d / "cmhash-patches.yaml").read_text().startswith("# Generated by cmhash patches")
    assert _keep(d, "--check").code == 0
    assert _keep(d).code == 0
    assert (d / "kustomization.yaml").read_text() == text  # idempotent


@pytest.mark.integration
def test_kustomization_builds_with_the_real_kustomize(tmp_path: Path) -> None:
    d = _overlay(tmp_path)
    assert _keep(d).code == 0
    built = _build([tool("kubectl"), "kustomize"], d)
    web = next(o for o in built if o["kind"] == "Deployment")
    assert web["spec"]["replicas"] == 3  # the user's own patch still applies
    out = _docs(run_cmhash(["--no-config", str(ROOT / "examples/app.yaml")]).out)
    ours = next(o for o in out if o["kind"] == "Deployment")
    assert web["spec"]["template"]["metadata"] == ours["spec"]["template"]["metadata"]


@pytest.mark.parametrize(
    ("before", "after"),
    [
        (
            "resources: [app.yaml]\n",
            "resources: [app.yaml]\npatches:\n- path: cmhash-patches.yaml\n",
        ),
        ("resources: [app.yaml]", "resources: [app.yaml]\npatches:\n- path: cmhash-patches.yaml\n"),
        (
            "resources: [app.yaml]\r\npatches:\r\n",
            "resources: [app.yaml]\r\npatches:\r\n- path: cmhash-patches.yaml\r\n",
        ),
        (
            "resources: [app.yaml]\npatches: []\n",
            "resources: [app.yaml]\npatches: [{path: cmhash-patches.yaml}]\n",
        ),
        (
            "resources: [app.yaml]\npatches: [{path: a.yaml}]\n",
            "resources: [app.yaml]\npatches: [{path: cmhash-patches.yaml}, {path: a.yaml}]\n",
        ),
        (
            "patches:\n- path: a.yaml\n- path: b.yaml\nresources: [app.yaml]\n",
            "patches:\n- path: cmhash-patches.yaml\n- path: a.yaml\n- path: b.yaml\nresources: [app.yaml]\n",
        ),
    ],
)
def test_kustomization_shapes(tmp_path: Path, before: str, after: str) -> None:
    d = _overlay(tmp_path, before)
    assert _keep(d).code == 0
    assert (d / "kustomization.yaml").read_bytes().decode() == after
    assert _keep(d, "--check").code == 0


@pytest.mark.parametrize(
    "text",
    [
        KUSTOMIZATION,
        "resources: [app.yaml]\npatches: [{path: a.yaml}]\n",
        "resources: [app.yaml]\n",
        "patches:\n- path: a.yaml\n- path: b.yaml\nresources: [app.yaml]\n",
    ],
)
def test_no_workload_to_patch_removes_entry_and_file(tmp_path: Path, text: str) -> None:
    """Back to the very bytes the user had (kustomize refuses an empty patch file)."""
    d = _overlay(tmp_path, text)
    assert _keep(d).code == 0
    (d / "app.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n")
    assert _keep(d, "--check").code == 1
    assert _keep(d).code == 0
    assert (d / "kustomization.yaml").read_text() == text
    assert not (d / "cmhash-patches.yaml").exists()
    assert _keep(d, "--check").code == 0


def test_foreign_patch_file_and_flow_kustomization_are_refused(tmp_path: Path) -> None:
    d = _overlay(tmp_path)
    (d / "cmhash-patches.yaml").write_text("apiVersion: v1\n")
    done = _keep(d)
    assert done.code == 2 and "not written by cmhash" in done.stderr
    e = tmp_path / "e"
    e.mkdir()
    (e / "kustomization.yaml").write_text('{"resources": ["app.yaml"]}\n')
    shutil.copy(ROOT / "examples/app.yaml", e / "app.yaml")
    done = _keep(e)
    assert done.code == 2
    assert "kustomization.yaml:1:1: " in done.stderr and "flow style" in done.stderr
    missing = run_cmhash(
        [
            "patches",
            "--no-config",
            str(ROOT / "examples/app.yaml"),
            "--kustomization",
            str(tmp_path / "nowhere"),
        ]
    )
    assert missing.code == 2 and "not a directory" in missing.stderr


def test_check_needs_a_place_to_compare() -> None:
    done = run_cmhash(["patches", "--check", str(ROOT / "examples/app.yaml")])
    assert done.code == 2 and "--check" in done.stderr


def test_reads_stdin_like_inject() -> None:
    text = (ROOT / "examples/app.yaml").read_text()
    piped = run_cmhash(["patches", "--no-config", "-"], stdin=text.encode())
    named = run_cmhash(["patches", "--no-config", str(ROOT / "examples/app.yaml")])
    assert piped.code == 0 and piped.out == named.out


# -- --helmrelease FILE ----------------------------------------------------------------

RELEASE = """\
# podinfo, as Flux installs it
apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata:
  name: shop
  namespace: shop
spec:
  interval: 10m
  chart:
    spec:
      chart: shop
      version: "1.4.2"   # pinned: CI renders this version
      sourceRef: {kind: HelmRepository, name: shop}
  values:
    replicas: 2
"""

USER_RENDERER = """\
  postRenderers:
    # the team's own patch
    - kustomize:
        patches:
          - target: {kind: Deployment, name: web}
            patch: |
              - op: add
                path: /spec/replicas
                value: 3
"""


def _release(tmp: Path, text: str = RELEASE) -> Path:
    f = tmp / "release.yaml"
    f.write_bytes(text.encode())
    return f


def _keep_release(f: Path, *args: str, render: Path = ROOT / "examples/app.yaml") -> Result:
    return run_cmhash(["patches", "--no-config", str(render), *args, "--helmrelease", str(f)])


def _flux_post_render(release: Path, render: Path, tmp: Path) -> list[Any]:
    """What helm-controller does with cmhash's post-renderer: a kustomization of the
    render with that item's patches (internal/postrender/kustomize.go), built by kubectl's
    kustomize (v5, as Flux links it)."""
    doc = next(d for d in _docs(release.read_text()) if d.get("kind") == "HelmRelease")
    ours = doc["spec"]["postRenderers"][0]["kustomize"]["patches"]
    d = tmp / "flux"
    d.mkdir()
    shutil.copy(render, d / "helm-output.yaml")
    (d / "kustomization.yaml").write_text(
        yaml.safe_dump({"resources": ["helm-output.yaml"], "patches": ours})
    )
    return _build([tool("kubectl"), "kustomize"], d)


def test_helmrelease_gets_cmhash_post_renderer_in_place(tmp_path: Path) -> None:
    f = _release(tmp_path)
    assert _keep_release(f, "--check").code == 1
    done = _keep_release(f)
    assert done.code == 0, done.stderr
    text = f.read_text()
    begin = text.index("  postRenderers:\n")
    end = text.index("# cmhash:end\n") + len("# cmhash:end\n")
    assert text[:begin] + text[end:] == RELEASE  # every other byte as it was
    assert text[begin:].startswith("  postRenderers:\n    # cmhash:begin generated by")
    assert _keep_release(f, "--check").code == 0
    assert _keep_release(f).code == 0 and f.read_text() == text  # idempotent


def test_helmrelease_keeps_the_users_post_renderers(tmp_path: Path) -> None:
    original = RELEASE + USER_RENDERER
    f = _release(tmp_path, original)
    assert _keep_release(f).code == 0
    text = f.read_text()
    start = text.index("    # cmhash:begin")
    end = text.index("# cmhash:end\n") + len("# cmhash:end\n")
    assert text[:start] + text[end:] == original
    doc = next(d for d in _docs(text) if d.get("kind") == "HelmRelease")
    assert len(doc["spec"]["postRenderers"]) == 2
    assert doc["spec"]["postRenderers"][1]["kustomize"]["patches"][0]["target"]["name"] == "web"


def test_helmrelease_follows_the_render_and_leaves_when_nothing_to_patch(tmp_path: Path) -> None:
    f = _release(tmp_path, RELEASE + USER_RENDERER)
    assert _keep_release(f).code == 0
    changed = tmp_path / "render.yaml"
    changed.write_text((ROOT / "examples/app.yaml").read_text().replace('"info"', '"debug"'))
    assert _keep_release(f, "--check", render=changed).code == 1
    assert _keep_release(f, render=changed).code == 0
    assert _keep_release(f, "--check", render=changed).code == 0
    empty = tmp_path / "none.yaml"
    empty.write_text("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n")
    assert _keep_release(f, render=empty).code == 0
    assert f.read_text() == RELEASE + USER_RENDERER


def test_helmrelease_without_post_renderers_is_restored_byte_for_byte(tmp_path: Path) -> None:
    f = _release(tmp_path)
    assert _keep_release(f).code == 0
    empty = tmp_path / "none.yaml"
    empty.write_text("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n")
    assert _keep_release(f, render=empty).code == 0
    assert f.read_text() == RELEASE


@pytest.mark.integration
def test_helmrelease_post_render_as_flux_does_is_cmhash_output(tmp_path: Path) -> None:
    render = CHARTS[4]  # the grafana chart's render
    f = _release(tmp_path)
    assert _keep_release(f, render=render).code == 0
    plain = tmp_path / "plain"
    plain.mkdir()
    (plain / "out.yaml").write_text(run_cmhash(["--no-config", str(render)]).out)
    (plain / "kustomization.yaml").write_text("resources: [out.yaml]\n")
    assert _flux_post_render(f, render, tmp_path) == _build([tool("kubectl"), "kustomize"], plain)


@pytest.mark.parametrize(
    ("version", "where"),
    [('"^1.4"', "12:16"), ('">=1.0.0"', "12:16"), ('"*"', "12:16"), ('"1.4.x"', "12:16")],
)
def test_helmrelease_refuses_a_chart_version_range(
    tmp_path: Path, version: str, where: str
) -> None:
    f = _release(tmp_path, RELEASE.replace('"1.4.2"', version))
    done = _keep_release(f)
    assert done.code == 2
    assert (
        f"release.yaml:{where}: spec.chart.spec.version must name one chart version" in done.stderr
    )
    assert f.read_text() == RELEASE.replace('"1.4.2"', version)


def test_helmrelease_refuses_values_from_objects_not_given(tmp_path: Path) -> None:
    text = RELEASE + "  valuesFrom:\n    - kind: ConfigMap\n      name: shop-values\n"
    f = _release(tmp_path, text)
    done = _keep_release(f)
    assert done.code == 2 and "spec.valuesFrom names ConfigMap/shop-values" in done.stderr
    values = tmp_path / "values.yaml"
    values.write_text(
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: shop-values\n  namespace: shop\n"
        "data:\n  values.yaml: 'replicas: 2'\n"
    )
    done = run_cmhash(
        [
            "patches",
            "--no-config",
            str(ROOT / "examples/app.yaml"),
            str(values),
            "--helmrelease",
            str(f),
        ]
    )
    assert done.code == 0, done.stderr


def test_helmrelease_file_must_hold_one_release(tmp_path: Path) -> None:
    f = _release(tmp_path, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n")
    done = _keep_release(f)
    assert done.code == 2 and "holds 0 Flux HelmReleases" in done.stderr
    crlf = _release(tmp_path, RELEASE.replace("\n", "\r\n"))
    assert _keep_release(crlf).code == 0
    assert "\n" not in crlf.read_bytes().decode().replace("\r\n", "")


@pytest.mark.integration
def test_argocd_helm_route_kustomize_helm_charts_with_the_patch_file(tmp_path: Path) -> None:
    """The Argo CD recipe: a kustomization that inflates the chart (helmCharts, built
    with --enable-helm as Argo CD's kustomize.buildOptions says) and lists cmhash's patch
    file. CI keeps it current from the kustomization's own build; the build then carries
    cmhash's annotations, and a second CI run finds it current."""
    app = tmp_path / "app"
    (app / "charts").mkdir(parents=True)
    shutil.copytree(ROOT / "tests/fixtures/chart", app / "charts" / "demo")
    (app / "kustomization.yaml").write_text(
        "helmCharts:\n  - name: demo\n    releaseName: shop\n    namespace: shop\n"
        "helmGlobals:\n  chartHome: charts\n"
    )
    # kustomize asks `helm version -c`, which Helm 4 no longer takes: Argo CD ships Helm 3
    build = [tool("kubectl"), "kustomize", "--enable-helm", "--helm-command", tool("helm3")]
    render = tmp_path / "render.yaml"
    render.write_text(
        subprocess.run([*build, str(app)], capture_output=True, text=True, check=True).stdout
    )
    done = run_cmhash(["patches", "--no-config", str(render), "--kustomization", str(app)])
    assert done.code == 0, done.stderr
    built = _build(build, app)
    ours = _docs(run_cmhash(["--no-config", str(render)]).out)
    expected = sorted((_unset_nulls(d) for d in ours), key=lambda d: repr(_ident(d)))
    assert built == expected
    again = tmp_path / "again.yaml"
    again.write_text(
        subprocess.run([*build, str(app)], capture_output=True, text=True, check=True).stdout
    )
    check = run_cmhash(
        ["patches", "--no-config", str(again), "--kustomization", str(app), "--check"]
    )
    assert check.code == 0, check.stderr


# -- what the hostile review found -------------------------------------------------------


@pytest.mark.parametrize("key", ["namespace: prod", "namePrefix: p-", "nameSuffix: -s"])
def test_kustomization_that_renames_is_refused(tmp_path: Path, key: str) -> None:
    d = _overlay(tmp_path, f"{key}\nresources: [app.yaml]\n")
    before = (d / "kustomization.yaml").read_text()
    done = _keep(d)
    assert done.code == 2 and "kustomize applies its patches before that" in done.stderr
    assert (d / "kustomization.yaml").read_text() == before
    assert not (d / "cmhash-patches.yaml").exists()


def test_kustomize_field_is_honoured(tmp_path: Path) -> None:
    d = _overlay(tmp_path, "resources: [app.yaml]\n")
    assert _keep(d, "--kustomize-field", "patchesStrategicMerge").code == 0
    assert (d / "kustomization.yaml").read_text() == (
        "resources: [app.yaml]\npatchesStrategicMerge:\n- cmhash-patches.yaml\n"
    )


@pytest.mark.parametrize(
    "text",
    [
        "resources: [app.yaml]\npatches: &p\n- path: a.yaml\n",
        "resources: [app.yaml]\npatches: !!seq\n- path: a.yaml\n",
        "resources: [app.yaml]\npatches: null\n",
        "resources: [app.yaml]\npatches: []\npatches: []\n",
    ],
)
def test_kustomization_shapes_it_cannot_edit_are_exit_2(tmp_path: Path, text: str) -> None:
    d = _overlay(tmp_path, text)
    done = _keep(d)
    assert done.code == 2, done.stderr
    assert (d / "kustomization.yaml").read_text() == text


def test_helmrelease_repeated_or_edited_markers_are_exit_2(tmp_path: Path) -> None:
    f = _release(tmp_path)
    assert _keep_release(f).code == 0
    text = f.read_text()
    block = text[text.index("    # cmhash:begin") : text.index("# cmhash:end\n") + 13]
    for broken in (
        text.replace(block, block + block),
        text.replace("# cmhash:begin generated", "# cmhash:begin"),
    ):
        f.write_text(broken)
        for args in ((), ("--check",)):
            done = _keep_release(f, *args)
            assert done.code == 2 and "repeated, edited" in done.stderr
            assert f.read_text() == broken


def test_helmrelease_leaves_hooks_out(tmp_path: Path) -> None:
    """Helm hands a post-renderer no hooks: a patch for a hook Job would match nothing
    and fail the release."""
    render = tmp_path / "render.yaml"
    render.write_text(
        (ROOT / "examples" / "migrate-job.yaml")
        .read_text()
        .replace(
            "  namespace: shop\nspec:\n  ttl",
            "  namespace: shop\n  annotations:\n    helm.sh/hook: pre-upgrade\nspec:\n  ttl",
        )
    )
    assert "helm.sh/hook" in render.read_text()
    f = _release(tmp_path)
    assert _keep_release(f, "--jobs", render=render).code == 0
    assert "kind: Job" not in f.read_text()
    printed = run_cmhash(["patches", "--no-config", "--jobs", str(render)])
    assert "kind: Job" in printed.out


def test_helmrelease_with_a_chart_ref_is_refused(tmp_path: Path) -> None:
    text = RELEASE.replace(
        '  chart:\n    spec:\n      chart: shop\n      version: "1.4.2"   # pinned: CI renders this version\n'
        "      sourceRef: {kind: HelmRepository, name: shop}\n",
        "  chartRef: {kind: OCIRepository, name: shop}\n",
    )
    assert "chartRef" in text
    f = _release(tmp_path, text)
    done = _keep_release(f)
    assert done.code == 2 and "spec.chartRef" in done.stderr and "release.yaml:9:" in done.stderr


# -- findings: reported exactly as inject reports them ---------------------------------

MISSING = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: shop}
spec:
  template:
    spec:
      containers:
        - name: c
          image: nginx
          envFrom:
            - configMapRef: {name: settings}
            - configMapRef: {name: missing}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: settings, namespace: shop}
data: {a: "1"}
"""


def _missing(tmp: Path) -> Path:
    f = tmp / "app.yaml"
    f.write_text(MISSING)
    return f


@pytest.mark.parametrize("flags", [[], ["-q"], ["-v"], ["--strict"], ["--strict", "-v"]])
def test_findings_are_reported_as_inject_reports_them(tmp_path: Path, flags: list[str]) -> None:
    """A render that references a missing ConfigMap: the same warning on stderr (none
    with -q), and under --strict the same error lines and exit 2, as the inject command."""
    f = _missing(tmp_path)
    inject = run_cmhash(["--no-config", *flags, str(f)])
    made = run_cmhash(["patches", "--no-config", *flags, str(f)])
    assert made.code == inject.code == (2 if "--strict" in flags else 0)
    assert made.stderr == inject.stderr
    if "-q" in flags:
        assert "missing-reference" not in made.stderr
    else:
        assert f"{f}:12:29: " in made.stderr and "[missing-reference]" in made.stderr
    if "--strict" in flags:
        assert made.stderr.endswith("cmhash: 1 error; nothing written\n") and made.out == ""
    else:
        assert "name: web" in made.out  # the patches are written all the same


def test_findings_go_to_cmhash_log(tmp_path: Path) -> None:
    f = _missing(tmp_path)
    log = tmp_path / "cmhash.log"
    done = run_cmhash(["patches", "--no-config", "--strict", str(f)], env={"CMHASH_LOG": str(log)})
    assert done.code == 2
    text = log.read_text()
    assert "[missing-reference]" in text and "cmhash: 1 error; nothing written" in text


def test_job_not_annotated_is_reported() -> None:
    done = run_cmhash(["patches", "--no-config", str(ROOT / "examples/migrate-job.yaml")])
    assert done.code == 0 and "[job-not-annotated]" in done.stderr


def test_acknowledged_finding_is_info_and_strict_passes(tmp_path: Path) -> None:
    _missing(tmp_path)
    (tmp_path / ".cmhash.yaml").write_text(
        "acknowledge:\n  - code: missing-reference\n    kind: Deployment\n    name: web\n"
        "    reason: made by the operator\n"
    )
    done = run_cmhash(["patches", "--strict", "app.yaml"], cwd=tmp_path)
    assert done.code == 0, done.stderr
    assert ": info: " in done.stderr and "(acknowledged in acknowledge[0]" in done.stderr
    assert run_cmhash(["--strict", "app.yaml"], cwd=tmp_path).stderr == done.stderr


def test_findings_with_kustomization_and_check(tmp_path: Path) -> None:
    d = _overlay(tmp_path)
    shutil.copy(_missing(tmp_path), d / "app.yaml")
    before = (d / "kustomization.yaml").read_text()
    for extra in (["--check"], []):
        done = _keep(d, *extra)
        assert "[missing-reference]" in done.stderr, extra
    assert done.code == 0 and "cmhash-patches.yaml" in (d / "kustomization.yaml").read_text()
    (d / "kustomization.yaml").write_text(before)
    for extra in (["--check"], []):
        done = _keep(d, "--strict", *extra)
        assert done.code == 2 and done.stderr.endswith("cmhash: 1 error; nothing written\n")
    assert (d / "kustomization.yaml").read_text() == before  # nothing written


def test_findings_with_helmrelease_and_check(tmp_path: Path) -> None:
    f = _release(tmp_path)
    render = _missing(tmp_path)
    for extra in (["--check"], []):
        done = _keep_release(f, *extra, render=render)
        assert "[missing-reference]" in done.stderr, extra
    f.write_text(RELEASE)
    for extra in (["--check"], []):
        done = _keep_release(f, "--strict", *extra, render=render)
        assert done.code == 2 and "1 error; nothing written" in done.stderr
    assert f.read_text() == RELEASE


def test_quiet_prints_errors_only_when_keeping_a_kustomization(tmp_path: Path) -> None:
    """-q: no `updated` or `note:` lines; the files are written all the same."""
    (tmp_path / "loud").mkdir()
    (tmp_path / "quiet").mkdir()
    loud = _keep(_overlay(tmp_path / "loud"))
    assert loud.code == 0 and "cmhash: updated " in loud.stderr
    d = _overlay(tmp_path / "quiet")
    quiet = _keep(d, "-q")
    assert (quiet.code, quiet.stderr) == (0, "")
    assert (d / "cmhash-patches.yaml").exists()
    assert _keep(d, "--check").code == 0


OVERLAY_APP = """\
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
PROD = """\
namespace: shop
resources:
  - ../base
patches:
  - patch: |
      apiVersion: v1
      kind: ConfigMap
      metadata:
        name: cfg
      data:
        a: "prod-value"
"""


@pytest.mark.integration
def test_patches_above_an_overlay_that_sets_a_namespace(tmp_path: Path) -> None:
    """The Flux page's layout: an overlay sets namespace: (cmhash refuses to keep its
    patches there) and patches config of its base; the patches go in a kustomization
    of their own above it (Flux's path:), built as Flux builds it. The overlay's config
    change then fails --check, and the patches made again move the checksum."""
    (tmp_path / "base").mkdir()
    (tmp_path / "base" / "app.yaml").write_text(OVERLAY_APP)
    (tmp_path / "base" / "kustomization.yaml").write_text("resources:\n  - app.yaml\n")
    (tmp_path / "prod").mkdir()
    (tmp_path / "prod" / "kustomization.yaml").write_text(PROD)
    flux = tmp_path / "flux"
    flux.mkdir()
    (flux / "kustomization.yaml").write_text("resources:\n  - ../prod\n")
    kubectl = [tool("kubectl"), "kustomize"]

    def keep(*extra: str) -> Result:
        built = subprocess.run([*kubectl, str(flux)], capture_output=True, check=True).stdout
        args = ["patches", "--no-config", "-", "--kustomization", str(flux), *extra]
        return run_cmhash(args, stdin=built)

    def checksum() -> str:
        web = next(d for d in _build(kubectl, flux) if d["kind"] == "Deployment")
        assert web["metadata"]["namespace"] == "shop"
        return str(web["spec"]["template"]["metadata"]["annotations"]["checksum/config"])

    refused = run_cmhash(
        [
            "patches",
            "--no-config",
            str(tmp_path / "base"),
            "--kustomization",
            str(tmp_path / "prod"),
        ]
    )
    assert refused.code == 2 and "a kustomization of their own above this one" in refused.stderr
    assert keep().code == 0
    first = checksum()
    assert keep("--check").code == 0
    prod = tmp_path / "prod" / "kustomization.yaml"
    prod.write_text(PROD.replace("prod-value", "prod-value-changed"))
    assert keep("--check").code == 1  # the overlay's config moved
    assert keep().code == 0
    assert checksum() != first

"""``cmhash patches --helmrelease FILE``: what the post-renderer was computed from is
kept beside it (the chart, its version, a digest of the values and valuesFrom), and
``--check`` names the field of the HelmRelease that changed since; a render of another
chart version than the HelmRelease's is refused."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
import yaml
from conftest import ROOT, Result, helm_env, run_cmhash, tool

CHART = ROOT / "tests" / "fixtures" / "chart-release"  # relapp 0.1.0, helm.sh/chart labels
APP = ROOT / "examples" / "app.yaml"

RELEASE = """\
apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata:
  name: shop
  namespace: shop
spec:
  interval: 10m
  chart:
    spec:
      chart: relapp
      version: "0.1.0"
      sourceRef: {kind: HelmRepository, name: charts}
  values:
    logLevel: debug
    password: hunter2-not-in-the-record
"""

VALUES_CM = """\
apiVersion: v1
kind: ConfigMap
metadata:
  name: shop-values
  namespace: shop
data:
  values.yaml: |
    logLevel: warn
  other: unrelated
"""


def _keep(release: Path, *inputs: Path | str, check: bool = False) -> Result:
    args = ["patches", "--no-config", *map(str, inputs), "--helmrelease", str(release)]
    return run_cmhash([*args, "--check"] if check else args)


def _record(text: str) -> dict[str, str]:
    lines = [line.strip() for line in text.splitlines() if "# cmhash:from " in line]
    return dict(line.removeprefix("# cmhash:from ").split(": ", 1) for line in lines)


def test_the_record_names_chart_and_version_and_hashes_the_values(tmp_path: Path) -> None:
    release = tmp_path / "release.yaml"
    release.write_text(RELEASE)
    assert _keep(release, APP).code == 0
    text = release.read_text()
    record = _record(text)
    assert record["spec.chart.spec.chart"] == '"relapp"'
    assert record["spec.chart.spec.version"] == '"0.1.0"'
    assert record["spec.values"].startswith("sha256:") and len(record["spec.values"]) == 71
    assert "spec.valuesFrom" not in record  # the release has none
    assert text.count("hunter2") == 1  # the values themselves, only where the user wrote them
    # the record lines sit between cmhash's markers, and the file still reads as before
    assert text.index("# cmhash:begin") < text.index("# cmhash:from") < text.index("# cmhash:end")
    doc = yaml.safe_load(text)
    assert doc["spec"]["values"] == yaml.safe_load(RELEASE)["spec"]["values"]
    assert _keep(release, APP, check=True).code == 0
    again = _keep(release, APP)
    assert again.code == 0 and release.read_text() == text  # idempotent


@pytest.mark.parametrize(
    ("edit", "field", "key"),
    [
        (("logLevel: debug", "logLevel: info"), "spec.values", "  values:"),
        (("    password: hunter2-not-in-the-record\n", ""), "spec.values", "  values:"),
        (('version: "0.1.0"', 'version: "0.1.1"'), "spec.chart.spec.version", "      version:"),
        (
            ("  interval: 10m\n", "  interval: 10m\n  targetNamespace: web\n"),
            "spec.targetNamespace",
            "  targetNamespace:",
        ),
        (
            ("  interval: 10m\n", "  interval: 10m\n  releaseName: web\n"),
            "spec.releaseName",
            "  releaseName:",
        ),
        # Flux names the release after the HelmRelease, in its namespace, when
        # spec.releaseName and spec.targetNamespace are not written
        (("  name: shop\n", "  name: shopx\n"), "metadata.name", "  name: shopx"),
        (("  namespace: shop\n", "  namespace: other\n"), "metadata.namespace", "  namespace:"),
    ],
)
def test_check_names_the_field_that_changed(
    tmp_path: Path, edit: tuple[str, str], field: str, key: str
) -> None:
    """The render (here the same file) does not change, so the patches do not either:
    only the record says the HelmRelease moved on without them; the message points at
    the field."""
    release = tmp_path / "release.yaml"
    release.write_text(RELEASE)
    assert _keep(release, APP).code == 0
    edited = release.read_text().replace(*edit, 1)
    release.write_text(edited)
    res = _keep(release, APP, check=True)
    assert res.code == 1
    line = next(i for i, text in enumerate(edited.splitlines(), 1) if text.startswith(key))
    column = len(key) - len(key.lstrip()) + 1
    assert res.stderr.splitlines() == [
        f"cmhash: stale: {release}:{line}:{column}: {field} is not what cmhash's "
        "post-renderer was computed from: render with the HelmRelease's chart, version and "
        "values, then run cmhash patches again"
    ]
    done = _keep(release, APP)
    assert done.code == 0 and f"({field} changed since)" in done.stderr
    assert _keep(release, APP, check=True).code == 0


def test_values_from_content_is_part_of_the_record(tmp_path: Path) -> None:
    release = tmp_path / "release.yaml"
    release.write_text(
        RELEASE.replace(
            "  values:\n",
            "  valuesFrom:\n    - kind: ConfigMap\n      name: shop-values\n  values:\n",
        )
    )
    cm = tmp_path / "values-cm.yaml"
    cm.write_text(VALUES_CM)
    assert _keep(release, APP, cm).code == 0
    assert _record(release.read_text())["spec.valuesFrom"].startswith("sha256:")
    assert "warn" not in release.read_text()  # the referenced values are never copied
    # another key of the ConfigMap: not what Flux reads (valuesKey: values.yaml)
    cm.write_text(VALUES_CM.replace("other: unrelated", "other: changed"))
    assert _keep(release, APP, cm, check=True).code == 0
    # the key Flux reads
    cm.write_text(VALUES_CM.replace("logLevel: warn", "logLevel: error"))
    res = _keep(release, APP, cm, check=True)
    assert res.code == 1 and "spec.valuesFrom is not what" in res.stderr


def test_a_post_renderer_written_without_a_record_is_stale(tmp_path: Path) -> None:
    release = tmp_path / "release.yaml"
    release.write_text(RELEASE)
    assert _keep(release, APP).code == 0
    text = release.read_text()
    old = "".join(line for line in text.splitlines(True) if "# cmhash:from " not in line)
    release.write_text(old)
    res = _keep(release, APP, check=True)
    assert res.code == 1
    assert "does not say what it was computed from (an earlier cmhash wrote it)" in res.stderr
    assert _keep(release, APP).code == 0 and release.read_text() == text


def _helm_template(tmp: Path, values: Path, *extra: str) -> bytes:
    out = subprocess.run(
        [tool("helm"), "template", "shop", str(CHART), "-n", "shop", "-f", str(values), *extra],
        capture_output=True,
        env=helm_env(tmp, "helm"),
        check=True,
    )
    return out.stdout


def _own_values(release: Path, tmp: Path) -> Path:
    """What ``yq '.spec.values // {}' RELEASE`` writes (the Flux recipe), as JSON."""
    values = tmp / "values.json"
    doc = yaml.safe_load(release.read_text())
    values.write_text(json.dumps(doc["spec"].get("values") or {}))
    return values


@pytest.mark.integration
def test_the_recipe_renders_with_the_releases_own_values(tmp_path: Path) -> None:
    """The Flux recipe: render with the HelmRelease's spec.values. A change to them
    fails --check; the recipe run again gives patches that follow it."""
    release = tmp_path / "release.yaml"
    release.write_text(RELEASE)
    render = _helm_template(tmp_path, _own_values(release, tmp_path))
    assert b'LOG_LEVEL: "debug"' in render
    keep = ["patches", "--no-config", "-", "--helmrelease", str(release)]
    assert run_cmhash(keep, stdin=render).code == 0
    first = release.read_text()
    release.write_text(first.replace("logLevel: debug", "logLevel: info"))
    stale = run_cmhash([*keep, "--check"], stdin=render)  # the old render, a new release
    assert stale.code == 1 and "spec.values is not what" in stale.stderr
    render = _helm_template(tmp_path, _own_values(release, tmp_path))
    assert run_cmhash([*keep, "--check"], stdin=render).code == 1  # the checksum moved
    assert run_cmhash(keep, stdin=render).code == 0
    assert run_cmhash([*keep, "--check"], stdin=render).code == 0
    checksums = [line for line in release.read_text().splitlines() if "checksum/config" in line]
    assert checksums and all(line not in first for line in checksums)


@pytest.mark.integration
def test_a_render_of_another_chart_version_is_refused(tmp_path: Path) -> None:
    """The render's helm.sh/chart label (relapp-0.1.0) against the HelmRelease's version."""
    release = tmp_path / "release.yaml"
    release.write_text(RELEASE.replace('version: "0.1.0"', 'version: "0.2.0"'))
    render = _helm_template(tmp_path, _own_values(release, tmp_path))
    res = run_cmhash(["patches", "--no-config", "-", "--helmrelease", str(release)], stdin=render)
    assert res.code == 2
    assert res.stderr.splitlines()[-1] == (
        f"cmhash: {release}:11:16: spec.chart.spec.version asks for 0.2.0, but the render's "
        "helm.sh/chart label says relapp-0.1.0: render the chart at the HelmRelease's "
        "version (--version 0.2.0)"
    )
    assert release.read_text() == RELEASE.replace('version: "0.1.0"', 'version: "0.2.0"')


@pytest.mark.parametrize(
    ("edit", "key"),
    [
        (("  interval: 10m\n", "  interval: 10m\n  interval: 5m\n"), "  interval: 5m"),
        (
            ("    logLevel: debug\n", "    logLevel: debug\n    logLevel: info\n"),
            "    logLevel: info",
        ),
    ],
)
@pytest.mark.parametrize("check", [False, True])
def test_a_duplicate_key_in_the_release_is_one_line_and_exit_2(
    tmp_path: Path, edit: tuple[str, str], key: str, check: bool
) -> None:
    release = tmp_path / "release.yaml"
    text = RELEASE.replace(*edit)
    release.write_text(text)
    res = _keep(release, APP, check=check)
    line = next(i for i, t in enumerate(text.splitlines(), 1) if t == key)
    column = len(key) - len(key.lstrip()) + 1
    name = key.strip().split(":")[0]
    assert (res.code, res.stderr) == (
        2,
        f"cmhash: {release}:{line}:{column}: duplicate key {name!r}\n",
    )
    assert release.read_text() == text


VALUES_SECRET = """\
apiVersion: v1
kind: Secret
metadata:
  name: shop-values
  namespace: shop
data:
  values.yaml: {}
"""


def _with_secret(tmp: Path, password: str) -> Path:
    import base64

    secret = tmp / "values-secret.yaml"
    body = base64.b64encode(f"password: {password}\n".encode()).decode()
    secret.write_text(VALUES_SECRET.format(body))
    return secret


def test_a_values_secret_is_fingerprinted_only_with_the_secret_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The HelmRelease is in Git: an unkeyed SHA-256 of a Secret's values there lets
    anyone confirm a guess of them. Without --secret-key-env only the reference is
    recorded (and a note says how to have more); with it, an HMAC under the key."""
    text = RELEASE.replace(
        "  values:\n", "  valuesFrom:\n    - kind: Secret\n      name: shop-values\n  values:\n"
    )
    release = tmp_path / "release.yaml"

    def valuesfrom(password: str, *key: str) -> tuple[str, str]:
        release.write_text(text)
        res = _keep(release, APP, _with_secret(tmp_path, password), *key)
        assert res.code == 0
        return _record(release.read_text())["spec.valuesFrom"], res.stderr

    monkeypatch.setenv("CMHASH_TEST_KEY", "some-ci-key")
    plain, stderr = valuesfrom("hunter2")
    assert valuesfrom("hunter3")[0] == plain  # nothing of the Secret's content
    assert "note: " in stderr and "Secret/shop-values: no fingerprint" in stderr
    assert "--secret-key-env VAR" in stderr and "hunter" not in stderr
    keyed, stderr = valuesfrom("hunter2", "--secret-key-env", "CMHASH_TEST_KEY")
    assert "note:" not in stderr and keyed != plain
    assert valuesfrom("hunter3", "--secret-key-env", "CMHASH_TEST_KEY")[0] != keyed
    monkeypatch.setenv("CMHASH_TEST_KEY", "another-key")
    assert valuesfrom("hunter2", "--secret-key-env", "CMHASH_TEST_KEY")[0] != keyed
    # --check compares keyed fingerprints: a changed Secret is stale, the same one is not
    monkeypatch.setenv("CMHASH_TEST_KEY", "some-ci-key")
    valuesfrom("hunter2", "--secret-key-env", "CMHASH_TEST_KEY")
    key = ("--secret-key-env", "CMHASH_TEST_KEY")
    same = _keep(release, APP, _with_secret(tmp_path, "hunter2"), *key, check=True)
    assert same.code == 0
    moved = _keep(release, APP, _with_secret(tmp_path, "hunter3"), *key, check=True)
    assert moved.code == 1 and "spec.valuesFrom is not what" in moved.stderr


USER_RENDERER = """\
  postRenderers:
    - kustomize:
        patches:
          - target: {kind: Deployment, name: web}
            patch: |
              - op: add
                path: /metadata/labels/team
                value: shop
"""

CONFIG_RENDERER = """\
  postRenderers:
    - kustomize:
        patches:
          - patch: |
              apiVersion: v1
              kind: ConfigMap
              metadata:
                name: app-config
              data:
                greeting: from-the-user-patch
"""


def test_the_users_own_post_renderers_are_part_of_the_record(tmp_path: Path) -> None:
    """helm-controller runs every post-renderer in turn on the render, cmhash's first:
    when the user's change, --check says so."""
    release = tmp_path / "release.yaml"
    release.write_text(RELEASE.replace("  values:\n", USER_RENDERER + "  values:\n"))
    assert _keep(release, APP).code == 0
    text = release.read_text()
    assert _record(text)["spec.postRenderers"].startswith("sha256:")
    assert _keep(release, APP, check=True).code == 0
    release.write_text(text.replace("value: shop", "value: web"))
    res = _keep(release, APP, check=True)
    assert res.code == 1 and "spec.postRenderers is not what" in res.stderr
    assert f"{release}:{text.splitlines().index('  postRenderers:') + 1}:3:" in res.stderr


@pytest.mark.parametrize("kind", ["ConfigMap", "Secret"])
def test_a_post_renderer_that_patches_config_is_refused(tmp_path: Path, kind: str) -> None:
    """What it changes is applied by Flux but not in the render cmhash hashed: no
    re-run would move the checksum, so the pods would never roll on it."""
    release = tmp_path / "release.yaml"
    text = RELEASE.replace(
        "  values:\n", CONFIG_RENDERER.replace("ConfigMap", kind) + "  values:\n"
    )
    release.write_text(text)
    for check in (False, True):
        res = _keep(release, APP, check=check)
        line = text.splitlines().index("          - patch: |") + 1
        assert res.code == 2 and res.stderr.startswith(
            f"cmhash: {release}:{line}:13: this post-renderer patches a {kind} after the render"
        )
        assert release.read_text() == text


def test_values_from_objects_are_the_ones_of_the_releases_namespace(tmp_path: Path) -> None:
    """helm-controller looks every valuesFrom reference up in the HelmRelease's own
    namespace: a same-named ConfigMap of another namespace is not what it reads,
    whichever order the inputs come in."""
    release = tmp_path / "release.yaml"
    release.write_text(
        RELEASE.replace(
            "  values:\n",
            "  valuesFrom:\n    - kind: ConfigMap\n      name: shop-values\n  values:\n",
        )
    )
    shop = tmp_path / "shop.yaml"
    shop.write_text(VALUES_CM)
    dev = tmp_path / "dev.yaml"
    dev.write_text(VALUES_CM.replace("namespace: shop", "namespace: dev"))
    other = tmp_path / "other.yaml"
    other.write_text(dev.read_text().replace("logLevel: warn", "logLevel: trace"))
    only_dev = _keep(release, APP, dev)
    assert only_dev.code == 2
    assert "ConfigMap/shop-values, which is not among the inputs in namespace shop" in (
        only_dev.stderr
    )
    assert _keep(release, APP, shop).code == 0
    assert _keep(release, APP, shop, other, check=True).code == 0  # dev's: not Flux's
    assert _keep(release, APP, other, shop, check=True).code == 0
    shop.write_text(VALUES_CM.replace("logLevel: warn", "logLevel: error"))
    assert _keep(release, APP, shop, dev, check=True).code == 1  # shop's changed
    # a values file that names no namespace is taken as the HelmRelease's
    bare = tmp_path / "bare.yaml"
    bare.write_text(VALUES_CM.replace("  namespace: shop\n", ""))
    assert _keep(release, APP, bare, check=True).code == 0


def test_metadata_is_not_recorded_where_the_spec_names_the_release(tmp_path: Path) -> None:
    """With spec.releaseName and spec.targetNamespace written, Flux renders with them:
    renaming or moving the HelmRelease itself changes nothing rendered."""
    release = tmp_path / "release.yaml"
    release.write_text(
        RELEASE.replace(
            "  interval: 10m\n", "  interval: 10m\n  releaseName: shop\n  targetNamespace: shop\n"
        )
    )
    assert _keep(release, APP).code == 0
    record = _record(release.read_text())
    assert "metadata.name" not in record and "metadata.namespace" not in record
    moved = release.read_text().replace("  name: shop\n", "  name: shopx\n", 1)
    release.write_text(moved.replace("  namespace: shop\n", "  namespace: other\n", 1))
    assert _keep(release, APP, check=True).code == 0


# the helm.sh/chart label as `helm create`'s scaffold writes it (the <CHARTNAME>.chart helper)
LABEL = (
    '{{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}'
)
LONG_CHART = """\
apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ .Release.Name }}-cfg
  labels:
    helm.sh/chart: LABEL
data:
  greeting: hi
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ .Release.Name }}-web
  labels:
    helm.sh/chart: LABEL
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
            - configMapRef: {name: {{ .Release.Name }}-cfg}
""".replace("LABEL", LABEL)


@pytest.mark.integration
@pytest.mark.parametrize(
    "version",
    [
        "1.4.2-main.20261128153012+git.8f3e2a1b9c4d7e6f0a1b",  # cut inside the build metadata
        "1.4.2-main.20261128153012+git.8f3e2a1b9c4d7e6-x9",  # cut right after a "-"
        "1.4.2",
    ],
)
def test_a_chart_label_cut_at_63_characters_is_the_charts(tmp_path: Path, version: str) -> None:
    """Helm's scaffold cuts the label at 63 characters (a label value's limit) and
    trims one trailing "-": the render of the HelmRelease's chart and version is
    accepted, whatever the cut."""
    from cmhash.integrations.hrorigin import chart_label

    chart = tmp_path / "checkout-service"
    (chart / "templates").mkdir(parents=True)
    (chart / "Chart.yaml").write_text(
        f"apiVersion: v2\nname: checkout-service\nversion: {version}\n"
    )
    (chart / "templates" / "all.yaml").write_text(LONG_CHART)
    render = subprocess.run(
        [tool("helm"), "template", "shop", str(chart), "-n", "shop"],
        capture_output=True,
        env=helm_env(tmp_path, "helm"),
        check=True,
    ).stdout
    label = next(d for d in yaml.safe_load_all(render))["metadata"]["labels"]["helm.sh/chart"]
    assert label == chart_label("checkout-service", version)
    release = tmp_path / "release.yaml"
    text = RELEASE.replace("relapp", "checkout-service").replace("0.1.0", version)
    release.write_text(text)
    res = run_cmhash(["patches", "--no-config", "-", "--helmrelease", str(release)], stdin=render)
    assert res.code == 0, res.stderr
    release.write_text(text.replace(version, "1.4.3"))
    other = run_cmhash(["patches", "--no-config", "-", "--helmrelease", str(release)], stdin=render)
    assert other.code == 2 and "asks for 1.4.3, but the render's helm.sh/chart" in other.stderr


def test_a_render_of_another_chart_at_the_releases_version_is_refused(tmp_path: Path) -> None:
    """examples/app.yaml is labelled by no chart; a render labelled shop-0.1.0 is not
    a render of chart relapp 0.1.0, the HelmRelease's."""
    render = tmp_path / "render.yaml"
    label = "\nmetadata:\n  labels:\n    helm.sh/chart: shop-0.1.0\n"
    render.write_text(APP.read_text().replace("\nmetadata:\n", label))
    release = tmp_path / "release.yaml"
    release.write_text(RELEASE)
    res = _keep(release, render)
    assert res.code == 2
    assert res.stderr.splitlines()[-1] == (
        f"cmhash: {release}:10:14: spec.chart.spec.chart is relapp, but the render's "
        "helm.sh/chart label says shop-0.1.0: render the HelmRelease's chart"
    )
    assert release.read_text() == RELEASE
    # a GitRepository chart path: its last element is the chart's name
    release.write_text(RELEASE.replace("chart: relapp", "chart: ./charts/shop"))
    assert _keep(release, render).code == 0


def test_quiet_prints_errors_only_when_keeping_a_helmrelease(tmp_path: Path) -> None:
    release = tmp_path / "release.yaml"
    release.write_text(
        RELEASE.replace(
            "  values:\n", "  valuesFrom:\n    - kind: Secret\n      name: shop-values\n  values:\n"
        )
    )
    res = _keep(release, APP, _with_secret(tmp_path, "hunter2"), "-q")
    assert (res.code, res.stderr) == (0, "")  # neither `updated` nor the Secret's note
    assert "# cmhash:begin" in release.read_text()
    release.write_text(release.read_text().replace("logLevel: debug", "logLevel: info"))
    stale = _keep(release, APP, _with_secret(tmp_path, "hunter2"), "-q", check=True)
    assert stale.code == 1 and "cmhash: stale: " in stale.stderr  # the answer stays

"""Helm output and the release namespace (helm.py): what the chart's own references
across the namespace boundary show, per render; HELM_NAMESPACE when there is no such
reference; disagreement: exit 2 unless -n or HELM_NAMESPACE says; -n always wins. With
the real helm 3 and helm 4 on a chart whose Deployment says
``namespace: {{ .Release.Namespace }}`` and whose ConfigMap says nothing, and on a real
kube-prometheus-stack render (tests/fixtures/helm-renders/), which also names
``kube-system``."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
import yaml
from conftest import ROOT, helm_env, run_cmhash, tool

CHART = ROOT / "tests" / "fixtures" / "chart-ns"
KPS = ROOT / "tests" / "fixtures" / "helm-renders" / "kube-prometheus-stack.yaml"
SRC = "---\n# Source: demo/templates/{name}.yaml\n"
CM = SRC.format(name="cm") + (
    "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cfg\n{ns}data:\n  a: b\n"
)
DEP = SRC.format(name="dep") + (
    "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n{ns}spec:\n"
    "  template:\n    spec:\n      containers:\n      - name: c\n        envFrom:\n"
    "        - configMapRef: {{name: cfg}}\n"
)
SVC = SRC.format(name="svc") + "apiVersion: v1\nkind: Service\nmetadata:\n  name: s\n{ns}"
SHOP = "  namespace: shop\n"
OTHER = "  namespace: other\n"


def _checksum(out: str, name: str = "web") -> str | None:
    for d in yaml.safe_load_all(out):
        if d and d["kind"] in ("Deployment", "StatefulSet") and d["metadata"]["name"] == name:
            ann = d["spec"]["template"].get("metadata", {}).get("annotations") or {}
            return ann.get("checksum/config")  # type: ignore[no-any-return]
    raise AssertionError(name)


def test_inferred_namespace_matches_and_is_noted() -> None:
    text = CM.format(ns="") + DEP.format(ns=SHOP)
    res = run_cmhash(["--no-config", "-"], stdin=text.encode())
    assert res.code == 0
    assert "checksum/config" in res.out
    assert res.stderr.strip() == (
        "cmhash: note: Helm output <stdin> (chart demo): objects without a namespace are "
        "taken to be in 'shop', the release namespace (Deployment/web -n shop uses "
        "ConfigMap 'cfg', which the render has without a namespace; -n overrides)"
    )
    # -n wins: here it sends the ConfigMap elsewhere, so nothing matches
    res = run_cmhash(["--no-config", "-n", "other", "-"], stdin=text.encode())
    assert "checksum/config" not in res.out and "namespace-mismatch" in res.stderr
    # -q: no note
    assert run_cmhash(["--no-config", "-q", "-"], stdin=text.encode()).stderr == ""


def test_an_object_placed_elsewhere_decides_nothing() -> None:
    """A Service in another namespace (kube-prometheus-stack's kube-system Services) is
    no evidence: the workload's reference still shows the release namespace."""
    text = CM.format(ns="") + DEP.format(ns=SHOP) + SVC.format(ns=OTHER)
    res = run_cmhash(["--no-config", "-"], stdin=text.encode())
    assert res.code == 0 and "checksum/config" in res.out
    assert "taken to be in 'shop'" in res.stderr and "namespace-mismatch" not in res.stderr


def test_a_same_named_object_elsewhere_does_not_collide() -> None:
    """The chart's unnamespaced ConfigMap and one it deliberately places in kube-system
    under the same name: two objects. A change to the chart's own rolls its workload
    (the old rule took 'kube-system', the only namespace named, and merged them)."""
    elsewhere = CM.format(ns="  namespace: kube-system\n").replace("a: b", "x: v1")
    base = CM.format(ns="") + DEP.format(ns="") + elsewhere
    changed = base.replace("a: b", "a: c", 1)
    one = run_cmhash(["--no-config", "-"], stdin=base.encode())
    two = run_cmhash(["--no-config", "-"], stdin=changed.encode())
    assert one.code == two.code == 0
    assert "duplicate-object" not in one.stderr
    assert _checksum(one.out) != _checksum(two.out)
    # and a change to the kube-system one rolls nothing here
    three = run_cmhash(["--no-config", "-"], stdin=base.replace("x: v1", "x: v2").encode())
    assert _checksum(three.out) == _checksum(one.out)


def test_no_evidence_no_guess() -> None:
    """Nothing references across the boundary: nothing is inferred, and objects without
    a namespace still match each other."""
    text = CM.format(ns="") + DEP.format(ns="") + SVC.format(ns=SHOP)
    res = run_cmhash(["--no-config", "-"], stdin=text.encode())
    assert res.code == 0 and "checksum/config" in res.out and "note:" not in res.stderr
    res = run_cmhash(["--no-config", "-"], stdin=text.encode(), env={"HELM_NAMESPACE": "env"})
    assert "objects without a namespace are in 'env' (from HELM_NAMESPACE" in res.stderr


def test_disagreeing_evidence_is_exit_2_unless_told() -> None:
    """Two workloads in two namespaces both use the render's unnamespaced ConfigMap: no
    release namespace makes both work. Exit 2 (Helm shows a post-renderer's failure even
    where it hides its stderr), naming both references; -n or HELM_NAMESPACE settle it."""
    dep2 = DEP.format(ns=OTHER).replace("name: web", "name: api")
    text = CM.format(ns="") + DEP.format(ns=SHOP) + dep2
    res = run_cmhash(["--no-config", "-"], stdin=text.encode())
    assert res.code == 2 and res.out == ""
    msg = res.stderr.strip()
    assert msg.startswith("cmhash: <stdin>:36:25: Helm output (chart demo): the release ")
    assert "Deployment/api -n other uses ConfigMap 'cfg'" in msg
    assert "Deployment/web -n shop uses ConfigMap 'cfg'" in msg and "(line 22)" in msg
    assert "pass -n NAMESPACE" in msg
    res = run_cmhash(["--no-config", "-n", "shop", "-"], stdin=text.encode())
    assert res.code == 0 and _checksum(res.out) is not None
    res = run_cmhash(["--no-config", "-"], stdin=text.encode(), env={"HELM_NAMESPACE": "shop"})
    assert res.code == 0 and _checksum(res.out) is not None and _checksum(res.out, "api") is None


def test_stale_helm_namespace_is_a_warning() -> None:
    text = CM.format(ns="") + DEP.format(ns=SHOP)
    res = run_cmhash(["--no-config", "-"], stdin=text.encode(), env={"HELM_NAMESPACE": "dflt"})
    assert res.code == 0 and _checksum(res.out) is not None
    assert "HELM_NAMESPACE='dflt' is not the release namespace of this render" in res.stderr
    assert "[helm-namespace]" in res.stderr


def test_per_render_not_per_walk(tmp_path: Path) -> None:
    """One Helm render in a repository walk: its inference stays in its file; the plain
    manifests next to it keep their own (none)."""
    (tmp_path / "rendered.yaml").write_text(CM.format(ns="") + DEP.format(ns=SHOP))
    plain = (CM.format(ns="") + DEP.format(ns=OTHER)).replace("# Source: ", "# file: ")
    (tmp_path / "plain").mkdir()
    (tmp_path / "plain" / "app.yaml").write_text(plain)
    res = run_cmhash(["--no-config", "--check", "."], cwd=tmp_path)
    assert "would update ./rendered.yaml" in res.stderr
    assert "would update plain" not in res.stderr
    assert "plain/app.yaml" in res.stderr and "namespace-mismatch" in res.stderr


def test_two_charts_in_one_stream_each_their_own() -> None:
    """helmfile-style: two releases' renders in one stream, in two namespaces."""
    one = CM.format(ns="") + DEP.format(ns=SHOP)
    two = (
        one.replace("demo/", "other/")
        .replace("name: web", "name: api")
        .replace("name: cfg", "name: cfg2")
        .replace("{name: cfg}", "{name: cfg2}")
        .replace(SHOP, OTHER)
    )
    res = run_cmhash(["--no-config", "-"], stdin=(one + two).encode())
    assert res.code == 0, res.stderr
    assert _checksum(res.out) and _checksum(res.out, "api")
    assert "(chart demo)" in res.stderr and "(chart other)" in res.stderr


def test_kube_prometheus_stack_names_two_namespaces() -> None:
    """The real render names 'monitoring' (46 objects) and 'kube-system' (5 control-plane
    Services): grafana's envFrom of its unnamespaced grafana-extra-env ConfigMap shows
    the release namespace, so the ConfigMap counts and a change to it rolls grafana."""
    text = KPS.read_text()
    assert "namespace: kube-system" in text and "namespace: monitoring" in text
    res = run_cmhash(["--no-config", "-"], stdin=text.encode())
    assert res.code == 0, res.stderr
    assert "namespace-mismatch" not in res.stderr
    assert "taken to be in 'monitoring'" in res.stderr
    changed = text.replace("GF_LOG_LEVEL: info", "GF_LOG_LEVEL: debug")
    assert changed != text
    res2 = run_cmhash(["--no-config", "-"], stdin=changed.encode())
    assert _checksum(res.out, "kps-grafana") != _checksum(res2.out, "kps-grafana")
    explain = run_cmhash(["explain", "--no-config", "-"], stdin=text.encode())
    assert "grafana-extra-env" in explain.out


def test_plain_manifests_are_not_helm_output() -> None:
    text = (CM.format(ns="") + DEP.format(ns=SHOP)).replace("# Source: ", "# file: ")
    res = run_cmhash(["--no-config", "-"], stdin=text.encode(), env={"HELM_NAMESPACE": "shop"})
    assert "checksum/config" not in res.out and "namespace-mismatch" in res.stderr


def _docs(text: str) -> dict[str, dict]:  # type: ignore[type-arg]
    return {d["kind"]: d for d in yaml.safe_load_all(text) if d}


@pytest.mark.integration
@pytest.mark.parametrize("binary", ["helm", "helm3"])
def test_real_helm_release_namespace(tmp_path: Path, binary: str) -> None:
    log = tmp_path / "cmhash.log"
    env = helm_env(tmp_path, binary, CMHASH_LOG=str(log))
    out = subprocess.run(
        [tool(binary), "template", "rel", str(CHART), "-n", "shop", "--post-renderer", "cmhash"],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    assert out.returncode == 0, out.stderr
    dep = _docs(out.stdout)["Deployment"]
    assert dep["metadata"]["namespace"] == "shop"
    assert len(dep["spec"]["template"]["metadata"]["annotations"]["checksum/config"]) == 64
    assert "taken to be in 'shop'" in log.read_text()
    assert "namespace-mismatch" not in log.read_text()


@pytest.mark.integration
@pytest.mark.parametrize("binary", ["helm", "helm3"])
def test_real_helm_ambiguous_release_namespace_fails_visibly(tmp_path: Path, binary: str) -> None:
    """A second Deployment placed (by a value) in another namespace, using the same
    unnamespaced ConfigMap: the render fails, so Helm shows it (Helm 3 prints the
    message; Helm 4 hides a post-renderer's stderr but not its failure, and the message
    is in CMHASH_LOG); -n settles it."""
    log = tmp_path / "cmhash.log"
    env = helm_env(tmp_path, binary, CMHASH_LOG=str(log))
    cmd = [tool(binary), "template", "rel", str(CHART), "-n", "shop", "--set", "mirror=other"]
    out = subprocess.run(
        [*cmd, "--post-renderer", "cmhash"], capture_output=True, text=True, env=env, check=False
    )
    assert out.returncode != 0
    assert "the release namespace cannot be told" in log.read_text()
    if binary == "helm3":
        assert "the release namespace cannot be told" in out.stderr
    else:
        assert "cmhash" in out.stderr
    told = "--post-renderer-args=--namespace=shop" if binary == "helm" else None
    if told is None:
        wrapper = tmp_path / "cmhash-shop"
        wrapper.write_text(f'#!/bin/sh\nexec "{tool_path_cmhash()}" --namespace=shop "$@"\n')
        wrapper.chmod(0o755)
        args = ["--post-renderer", str(wrapper)]
    else:
        args = ["--post-renderer", "cmhash", told]
    out = subprocess.run([*cmd, *args], capture_output=True, text=True, env=env, check=False)
    assert out.returncode == 0, out.stderr
    assert _checksum(out.stdout, "rel") is not None
    assert _checksum(out.stdout, "rel-mirror") is None


def tool_path_cmhash() -> str:
    import shutil
    import sys

    found = shutil.which("cmhash") or str(Path(sys.executable).with_name("cmhash"))
    return found

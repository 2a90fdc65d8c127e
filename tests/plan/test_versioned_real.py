"""--versioned on real renders: charts rendered here by the real helm (v4 and v3, and as
a Helm 4 post-renderer), and the Helm renders of the vendored corpus. The output is
re-parsed: every reference that found its object still finds it (renamed), and nothing
changed but names and our annotation."""

from __future__ import annotations

import difflib
import json
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest
from conftest import ROOT, run_cmhash, tool, tool_env
from manifests import load_objects

SUFFIX = re.compile(r"-[2456789bcdfghkmt]{10}(?=[\"',}\s]|$)")
ADDED = re.compile(r'^\s*(metadata:|annotations:|checksum/config: "[0-9a-f]{64}")\s*$')
CHART_CHECKSUM = re.compile(r"^\s*checksum/config:")  # a chart's own value, replaced
TEMPLATE = {  # kind -> path to the pod template
    "Deployment": ("spec", "template"),
    "StatefulSet": ("spec", "template"),
    "DaemonSet": ("spec", "template"),
    "ReplicaSet": ("spec", "template"),
    "Job": ("spec", "template"),
    "CronJob": ("spec", "jobTemplate", "spec", "template"),
}
SITES = (  # (container or pod list, path to the reference, kind, name field)
    ("env", ("valueFrom", "configMapKeyRef"), "ConfigMap", "name"),
    ("env", ("valueFrom", "secretKeyRef"), "Secret", "name"),
    ("envFrom", ("configMapRef",), "ConfigMap", "name"),
    ("envFrom", ("secretRef",), "Secret", "name"),
)


def _dig(node: Any, path: tuple[str, ...]) -> Any:
    for step in path:
        node = node.get(step) if isinstance(node, dict) else None
    return node


def references(obj: dict[str, Any]) -> list[tuple[str, str]]:
    template = _dig(obj, TEMPLATE[obj["kind"]])
    spec = (template or {}).get("spec") or {}
    out = []
    for list_name in ("initContainers", "containers"):
        for c in spec.get(list_name) or []:
            for field, path, kind, name_field in SITES:
                for item in c.get(field) or []:
                    ref = _dig(item, path)
                    if isinstance(ref, dict) and ref.get(name_field):
                        out.append((kind, ref[name_field]))
    for v in spec.get("volumes") or []:
        if (v.get("configMap") or {}).get("name"):
            out.append(("ConfigMap", v["configMap"]["name"]))
        if (v.get("secret") or {}).get("secretName"):
            out.append(("Secret", v["secret"]["secretName"]))
        for s in (v.get("projected") or {}).get("sources") or []:
            for sel, kind in (("configMap", "ConfigMap"), ("secret", "Secret")):
                if (s.get(sel) or {}).get("name"):
                    out.append((kind, s[sel]["name"]))
    return out


KEEP = re.compile(
    r'^\s*(helm\.sh/resource-policy: "keep"|argocd\.argoproj\.io/(sync|compare)-options: ".*"'
    r'|kustomize\.toolkit\.fluxcd\.io/prune: "disabled")$'
)


def check_closure(
    before: str, after: str, namespace: str = "", keep: bool = False, lines: bool = True
) -> int:
    """The checks (``lines``: also that only names and our lines changed); returns how
    many references were renamed (so a test can insist on some)."""
    old_objs, new_objs = load_objects(before), load_objects(after)
    assert len(old_objs) == len(new_objs)

    def configs(objs: list[dict[str, Any]]) -> set[tuple[str, str, str]]:
        return {
            (o["kind"], o["metadata"].get("namespace") or namespace, o["metadata"]["name"])
            for o in objs
            if o.get("kind") in ("ConfigMap", "Secret") and o.get("apiVersion") == "v1"
        }

    old_cfg, new_cfg = configs(old_objs), configs(new_objs)
    renamed = 0
    for old, new in zip(old_objs, new_objs, strict=True):
        assert old.get("kind") == new.get("kind")
        if old.get("kind") not in TEMPLATE:
            continue
        ns = old["metadata"].get("namespace") or namespace
        for (kind, name), (_, name2) in zip(references(old), references(new), strict=True):
            if (kind, ns, name) in old_cfg:
                assert (kind, ns, name2) in new_cfg, (kind, name, name2)
                renamed += name2 != name
            else:
                assert name2 == name
    if not lines:
        return renamed
    old_lines, new_lines = before.splitlines(), after.splitlines()
    diff = list(difflib.ndiff(old_lines, new_lines))
    removed = [x[2:] for x in diff if x.startswith("- ") and not CHART_CHECKSUM.match(x[2:])]
    added = [
        x[2:]
        for x in diff
        if x.startswith("+ ") and not ADDED.match(x[2:]) and not (keep and KEEP.match(x[2:]))
    ]
    assert sorted(SUFFIX.sub("", a) for a in added) == sorted(removed)
    return renamed


def _versioned(text: str, *args: str) -> str:
    res = run_cmhash(["--no-config", "-q", "--versioned", *args, "-"], stdin=text.encode())
    assert res.code == 0, res.stderr
    again = run_cmhash(["--no-config", "-q", "--versioned", *args, "-"], stdin=res.stdout)
    assert again.stdout == res.stdout  # idempotent
    return res.out


CORPUS_HELM = [
    "istio/samples/addons/prometheus.yaml",
    "istio/samples/addons/grafana.yaml",
    "istio/samples/addons/kiali.yaml",
    "istio/samples/addons/loki.yaml",
    "argo-cd/manifests/ha/base/redis-ha/chart/upstream.yaml",
]


@pytest.mark.parametrize("path", CORPUS_HELM)
def test_corpus_helm_renders(path: str) -> None:
    text = (ROOT / "tests" / "corpus" / path).read_text()
    out = _versioned(text)
    # objects a workload may read by name keep it (tests/plan/test_versioned_names.py pins which)
    pinned = json.loads((ROOT / "tests" / "fixtures" / "versioned-corpus.json").read_text())
    assert (check_closure(text, out) > 0) == bool(pinned[f"tests/{path}"]["renamed"])


@pytest.mark.integration
@pytest.mark.parametrize("helm_name", ["helm", "helm3"])
def test_chart_rendered_by_real_helm(helm_name: str, tmp_path: Path) -> None:
    chart = ROOT / "tests" / "fixtures" / "chart"
    env = {
        "HELM_CONFIG_HOME": str(tmp_path / "c"),
        "HELM_DATA_HOME": str(tmp_path / "d"),
        "HELM_CACHE_HOME": str(tmp_path / "k"),
    }
    rendered = subprocess.run(
        [tool(helm_name), "template", "rel", str(chart), "--namespace", "shop"],
        capture_output=True,
        text=True,
        env=tool_env(**env),
        check=False,
    )
    assert rendered.returncode == 0, rendered.stderr
    out = _versioned(rendered.stdout, "--versioned-keep")
    assert check_closure(rendered.stdout, out, namespace="shop", keep=True) >= 1
    assert 'helm.sh/resource-policy: "keep"' in out
    # the chart's pre-install/pre-upgrade hook Job reads rel-config: it runs before a new
    # version would exist, so that ConfigMap keeps its name
    assert "  name: rel-config\n" in out


@pytest.mark.integration
def test_helm4_post_renderer_with_versioned(tmp_path: Path) -> None:
    chart = ROOT / "tests" / "fixtures" / "chart"
    plugin = Path(run_cmhash(["helm-plugin-dir"]).stdout.decode().strip())
    env = {
        "HELM_CONFIG_HOME": str(tmp_path / "c"),
        "HELM_DATA_HOME": str(tmp_path / "d"),
        "HELM_CACHE_HOME": str(tmp_path / "k"),
        "HELM_PLUGINS": str(plugin.parent),
    }
    base = [tool("helm"), "template", "rel", str(chart)]
    plain = subprocess.run(base, capture_output=True, text=True, env=tool_env(**env), check=False)
    post = subprocess.run(
        [*base, "--post-renderer", "cmhash", "--post-renderer-args", "--versioned"],
        capture_output=True,
        text=True,
        env=tool_env(**env),
        check=False,
    )
    assert post.returncode == 0, post.stderr
    names = [o["metadata"]["name"] for o in load_objects(post.stdout) if o["kind"] == "Secret"]
    assert names and all(SUFFIX.search(n) for n in names)
    # Helm 4 re-serialises what a post-renderer receives: compare meaning, not lines
    assert check_closure(plain.stdout, post.stdout, lines=False) >= 1

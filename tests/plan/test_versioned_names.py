"""--versioned never renames what an application reads by name: declared dependencies
without a pod spec reference, objects named by fields outside pod specs (one test per
row of knowledge/namesites.py's table), objects a workload may read through the API (RBAC in
the input); names that only look versioned; names a kustomize generator made; and the
pinned list of what is and is not renamed on the real-manifest corpus."""

from __future__ import annotations

import base64
import json
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest
from conftest import CORPUS, SHARED_CORPUS, TESTS, report_json, run_cmhash, shared_params, tool
from manifests import load_objects

from cmhash.analyze.hashing import Content
from cmhash.knowledge.namesites import SITES, Site
from cmhash.parse.events import backend, parse_chunk
from cmhash.parse.resources import document_resources
from cmhash.plan import kustomized
from cmhash.plan.byname import references
from cmhash.read.source import SourceText

FORCE = '  annotations:\n    cmhash.io/versioned: "true"\n'


def cm(name: str = "cfg", meta: str = "", ns: str = "") -> str:
    namespace = f"  namespace: {ns}\n" if ns else ""
    return f"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\n{namespace}{meta}data:\n  k: v\n"


def secret(name: str = "tls", meta: str = "") -> str:
    return (
        f"apiVersion: v1\nkind: Secret\nmetadata:\n  name: {name}\n{meta}"
        "type: Opaque\ndata:\n  k: dg==\n"
    )


def dep(
    target: str = "cfg", kind: str = "ConfigMap", meta: str = "", sa: str = "", name: str = "app"
) -> str:
    ref = (
        f"        - configMapRef: {{name: {target}}}\n"
        if kind == "ConfigMap"
        else f"        - secretRef: {{name: {target}}}\n"
    )
    account = f"      serviceAccountName: {sa}\n" if sa else ""
    return (
        f"apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {name}\n{meta}spec:\n"
        f"  template:\n    spec:\n{account}      containers:\n      - name: c\n        image: i\n"
        f"        envFrom:\n{ref}"
    )


def stream(*docs: str) -> bytes:
    return "---\n".join(docs).encode()


def run(data: bytes, *args: str) -> Any:
    return run_cmhash(["--no-config", "--versioned", *args, "-"], stdin=data)


def names(out: bytes) -> set[str]:
    return {
        o["metadata"]["name"] for o in load_objects(out) if o["kind"] in ("ConfigMap", "Secret")
    }


# ------------------------------------------------------------- declared dependencies


def test_a_declared_dependency_the_pod_spec_does_not_use_keeps_its_name() -> None:
    """The README's own example: Argo CD's server reads argocd-cm through the API."""
    meta = '  annotations:\n    cmhash.io/extra-configmaps: "argocd-cm"\n'
    data = stream(cm("argocd-cm"), cm("other"), dep("other", meta=meta))
    res = run(data)
    assert res.code == 0, res.stderr
    assert "argocd-cm" in names(res.stdout)
    assert any(n.startswith("other-") for n in names(res.stdout))  # mounted: renamed
    assert "ConfigMap 'argocd-cm' is not versioned: Deployment/app declares it" in res.stderr
    assert "cmhash.io/extra-configmaps" in res.stderr and "[not-versioned]" in res.stderr
    # and the annotation still names it
    assert 'cmhash.io/extra-configmaps: "argocd-cm"' in res.out


def test_a_declared_dependency_the_pod_spec_also_uses_is_renamed_with_both() -> None:
    meta = "  annotations:\n    configmap.reloader.stakater.com/reload: cfg\n"
    res = run(stream(cm(), dep(meta=meta)))
    assert res.code == 0, res.stderr
    (new,) = names(res.stdout)
    assert new.startswith("cfg-") and f"reload: {new}" in res.out


def test_forcing_a_declared_dependency_renames_it() -> None:
    meta = '  annotations:\n    cmhash.io/extra-configmaps: "argocd-cm"\n'
    res = run(stream(cm("argocd-cm", FORCE), dep("argocd-cm", meta=meta).replace("envFrom", "x")))
    assert res.code == 0, res.stderr
    (new,) = names(res.stdout)
    assert new.startswith("argocd-cm-") and f'extra-configmaps: "{new}"' in res.out


# ------------------------------------------------------ fields outside pod specs


# one manifest per row of namesites.SITES, naming ConfigMap "cfg" or Secret "tls" in "ns"
SAMPLES: dict[tuple[str, tuple[str, ...], str], tuple[str, str]] = {
    ("Prometheus", ("spec",), "secrets[]"): (
        "apiVersion: monitoring.coreos.com/v1\nkind: Prometheus\nmetadata: {name: p, namespace: ns}\n"
        "spec:\n  secrets: [tls]\n",
        "Secret",
    ),
    ("Prometheus", ("spec",), "configMaps[]"): (
        "apiVersion: monitoring.coreos.com/v1\nkind: Prometheus\nmetadata: {name: p, namespace: ns}\n"
        "spec:\n  configMaps: [cfg]\n",
        "ConfigMap",
    ),
    ("Alertmanager", ("spec",), "configSecret"): (
        "apiVersion: monitoring.coreos.com/v1\nkind: Alertmanager\n"
        "metadata: {name: a, namespace: ns}\nspec:\n  configSecret: tls\n",
        "Secret",
    ),
    ("Role", ("rules", "*"), "resourceNames[]"): (
        "apiVersion: rbac.authorization.k8s.io/v1\nkind: Role\nmetadata: {name: r, namespace: ns}\n"
        "rules:\n- apiGroups: ['']\n  resources: [configmaps]\n  verbs: [get]\n"
        "  resourceNames:\n  - cfg\n",
        "ConfigMap",
    ),
    ("Ingress", ("spec", "tls", "*"), "secretName"): (
        "apiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata: {name: i, namespace: ns}\n"
        "spec:\n  tls:\n  - hosts: [a.example]\n    secretName: tls\n",
        "Secret",
    ),
    ("ServiceAccount", ("secrets", "*"), "name"): (
        "apiVersion: v1\nkind: ServiceAccount\nmetadata: {name: s, namespace: ns}\n"
        "secrets:\n- name: tls\n",
        "Secret",
    ),
    ("ServiceAccount", ("imagePullSecrets", "*"), "name"): (
        "apiVersion: v1\nkind: ServiceAccount\nmetadata: {name: s, namespace: ns}\n"
        "imagePullSecrets:\n- name: tls\n",
        "Secret",
    ),
    ("Gateway", ("spec", "listeners", "*", "tls", "certificateRefs", "*"), "name"): (
        "apiVersion: gateway.networking.k8s.io/v1\nkind: Gateway\nmetadata: {name: g, namespace: ns}\n"
        "spec:\n  gatewayClassName: x\n  listeners:\n  - name: https\n    port: 443\n"
        "    protocol: HTTPS\n    tls:\n      certificateRefs:\n      - name: tls\n",
        "Secret",
    ),
    ("BackendTLSPolicy", ("spec", "validation", "caCertificateRefs", "*"), "name"): (
        "apiVersion: gateway.networking.k8s.io/v1\nkind: BackendTLSPolicy\n"
        "metadata: {name: b, namespace: ns}\nspec:\n  validation:\n    caCertificateRefs:\n"
        "    - {group: '', kind: ConfigMap, name: cfg}\n    hostname: a.example\n",
        "ConfigMap",
    ),
    ("HelmRelease", ("spec", "valuesFrom", "*"), "name"): (
        "apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata: {name: h, namespace: ns}\n"
        "spec:\n  valuesFrom:\n  - kind: ConfigMap\n    name: cfg\n",
        "ConfigMap",
    ),
    ("Kustomization", ("spec", "postBuild", "substituteFrom", "*"), "name"): (
        "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\n"
        "metadata: {name: k, namespace: ns}\nspec:\n  postBuild:\n    substituteFrom:\n"
        "    - kind: Secret\n      name: tls\n",
        "Secret",
    ),
    ("Kustomization", ("spec", "decryption", "secretRef"), "name"): (
        "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\n"
        "metadata: {name: k, namespace: ns}\nspec:\n  decryption:\n    provider: sops\n"
        "    secretRef:\n      name: tls\n",
        "Secret",
    ),
    ("Kustomization", ("spec", "kubeConfig", "secretRef"), "name"): (
        "apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata: {name: h, namespace: ns}\n"
        "spec:\n  kubeConfig:\n    secretRef: {name: tls}\n",
        "Secret",
    ),
    ("GitRepository", ("spec", "secretRef"), "name"): (
        "apiVersion: source.toolkit.fluxcd.io/v1\nkind: GitRepository\n"
        "metadata: {name: g, namespace: ns}\nspec:\n  url: https://example.com/r\n"
        "  secretRef:\n    name: tls\n",
        "Secret",
    ),
    ("GitRepository", ("spec", "certSecretRef"), "name"): (
        "apiVersion: source.toolkit.fluxcd.io/v1\nkind: HelmRepository\n"
        "metadata: {name: g, namespace: ns}\nspec:\n  url: https://example.com/r\n"
        "  certSecretRef: {name: tls}\n",
        "Secret",
    ),
    ("Certificate", ("spec",), "secretName"): (
        "apiVersion: cert-manager.io/v1\nkind: Certificate\nmetadata: {name: c, namespace: ns}\n"
        "spec:\n  secretName: tls\n  dnsNames: [a.example]\n  issuerRef: {name: x}\n",
        "Secret",
    ),
    ("*", ("metadata", "annotations"), "cert-manager.io/inject-ca-from-secret"): (
        "apiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingWebhookConfiguration\n"
        "metadata:\n  name: w\n  annotations:\n    cert-manager.io/inject-ca-from-secret: ns/tls\n"
        "webhooks: []\n",
        "Secret",
    ),
    ("Gateway", ("spec", "servers", "*", "tls"), "credentialName"): (
        "apiVersion: networking.istio.io/v1\nkind: Gateway\nmetadata: {name: g, namespace: ns}\n"
        "spec:\n  servers:\n  - port: {number: 443, name: https, protocol: HTTPS}\n"
        "    hosts: [a.example]\n    tls:\n      mode: SIMPLE\n      credentialName: tls\n",
        "Secret",
    ),
    **{
        ("DestinationRule", path, "credentialName"): (
            "apiVersion: networking.istio.io/v1\nkind: DestinationRule\n"
            "metadata: {name: d, namespace: ns}\nspec:\n  host: a.ns.svc.cluster.local\n" + text,
            "Secret",
        )
        for path, text in (
            (
                ("spec", "trafficPolicy", "tls"),
                "  trafficPolicy:\n    tls: {mode: MUTUAL, credentialName: tls}\n",
            ),
            (
                ("spec", "trafficPolicy", "portLevelSettings", "*", "tls"),
                "  trafficPolicy:\n    portLevelSettings:\n    - port: {number: 443}\n"
                "      tls: {mode: SIMPLE, credentialName: tls}\n",
            ),
            (
                ("spec", "subsets", "*", "trafficPolicy", "tls"),
                "  subsets:\n  - name: v1\n    labels: {v: '1'}\n    trafficPolicy:\n"
                "      tls: {mode: MUTUAL, credentialName: tls}\n",
            ),
            (
                ("spec", "subsets", "*", "trafficPolicy", "portLevelSettings", "*", "tls"),
                "  subsets:\n  - name: v1\n    trafficPolicy:\n      portLevelSettings:\n"
                "      - port: {number: 443}\n        tls: {mode: SIMPLE, credentialName: tls}\n",
            ),
        )
    },
    ("IngressRoute", ("spec", "tls"), "secretName"): (
        "apiVersion: traefik.io/v1alpha1\nkind: IngressRoute\nmetadata: {name: r, namespace: ns}\n"
        "spec:\n  routes: []\n  tls:\n    secretName: tls\n",
        "Secret",
    ),
    **{
        ("ExternalSecret", ("spec", "target", "template", "templateFrom", "*", field), "name"): (
            "apiVersion: external-secrets.io/v1\nkind: ExternalSecret\n"
            "metadata: {name: e, namespace: ns}\nspec:\n  secretStoreRef: {name: s}\n"
            f"  target:\n    template:\n      templateFrom:\n      - {field}:\n"
            f"          name: {target}\n",
            kind,
        )
        for field, kind, target in (("configMap", "ConfigMap", "cfg"), ("secret", "Secret", "tls"))
    },
    **{
        ("Ingress", ("metadata", "annotations"), f"nginx.ingress.kubernetes.io/{key}"): (
            "apiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata:\n  name: i\n"
            f"  namespace: ns\n  annotations:\n    nginx.ingress.kubernetes.io/{key}: ns/tls\n"
            "spec:\n  rules: []\n",
            "Secret",
        )
        for key in ("auth-secret", "auth-tls-secret", "proxy-ssl-secret")
    },
}


def _row(site: Site) -> tuple[str, tuple[str, ...], str]:
    return (site.kinds[0], site.path, site.name)


def test_every_row_of_the_table_has_a_sample() -> None:
    assert {_row(s) for s in SITES} == set(SAMPLES)


def _parse(text: str) -> list[Any]:
    src = SourceText("sample.yaml", text)
    return document_resources(src, 0, parse_chunk(text, 0, backend("exact")))


@pytest.mark.parametrize("site", SITES, ids=lambda s: "-".join((s.kinds[0], *s.path, s.name)))
def test_each_row_finds_its_name(site: Site) -> None:
    text, kind = SAMPLES[_row(site)]
    (res,) = _parse(text)
    found = [r for r in references(res, "") if r.site is site]
    target = "cfg" if kind == "ConfigMap" else "tls"
    assert [(r.kind, r.namespace, r.name) for r in found] == [(kind, "ns", target)]
    assert re.match(rf"(ns/)?{target}\b", text[found[0].offset :])


@pytest.mark.parametrize("site", SITES, ids=lambda s: "-".join((s.kinds[0], *s.path, s.name)))
def test_each_row_keeps_its_object_from_being_renamed(site: Site) -> None:
    text, kind = SAMPLES[_row(site)]
    target = "cfg" if kind == "ConfigMap" else "tls"
    obj = cm(ns="ns") if kind == "ConfigMap" else secret(meta="  namespace: ns\n")
    workload = dep(target, kind, meta="  namespace: ns\n")
    res = run(stream(obj, workload, text))
    assert res.code == 0, res.stderr
    assert target in names(res.stdout)
    assert f"{kind} '{target}' is not versioned" in res.stderr and "names it" in res.stderr
    # forced: renamed, and the field that keeps the old name is a warning at its place
    forced = obj.replace("metadata:\n", "metadata:\n" + FORCE, 1)
    data = stream(forced, workload, text)
    res = run(data)
    assert res.code == 0, res.stderr
    assert target not in names(res.stdout)
    warned = [line for line in res.stderr.splitlines() if "[unknown-reference]" in line]
    assert len(warned) == 1 and "cmhash does not rewrite this field" in warned[0]
    line, col = (int(x) for x in warned[0].split(":")[1:3])
    at = data.decode().splitlines()[line - 1][col - 1 :]  # the input's line and column
    assert re.match(rf"(ns/)?{target}\b", at)


def test_a_field_of_another_namespace_or_kind_does_not_count() -> None:
    text = SAMPLES[("Ingress", ("spec", "tls", "*"), "secretName")][0]
    workload = dep("tls", "Secret", meta="  namespace: other\n")
    res = run(stream(secret(meta="  namespace: other\n"), workload, text))
    assert res.code == 0 and "not versioned" not in res.stderr
    role = SAMPLES[("Role", ("rules", "*"), "resourceNames[]")][0].replace("configmaps", "pods")
    res = run(stream(cm(ns="ns"), dep(meta="  namespace: ns\n"), role))
    assert res.code == 0 and "not versioned" not in res.stderr


# ------------------------------------------------------------- RBAC: read through the API

ROLE = (
    "apiVersion: rbac.authorization.k8s.io/v1\nkind: {kind}\nmetadata: {{name: reader{ns}}}\n"
    "rules:\n- apiGroups: ['{group}']\n  resources: [{resource}]\n  verbs: [{verbs}]\n"
)
BINDING = (
    "apiVersion: rbac.authorization.k8s.io/v1\nkind: {kind}\nmetadata: {{name: b{ns}}}\n"
    "roleRef: {{apiGroup: rbac.authorization.k8s.io, kind: {role}, name: reader}}\n"
    "subjects:\n- {{kind: ServiceAccount, name: {sa}, namespace: ns}}\n"
)


def _rbac(
    role: str = "Role",
    binding: str = "RoleBinding",
    sa: str = "app",
    resource: str = "configmaps",
    verbs: str = "get, list",
    group: str = "",
) -> str:
    ns = ", namespace: ns" if role == "Role" else ""
    bns = ", namespace: ns" if binding == "RoleBinding" else ""
    return (
        ROLE.format(kind=role, ns=ns, group=group, resource=resource, verbs=verbs)
        + "---\n"
        + (BINDING.format(kind=binding, ns=bns, role=role, sa=sa))
    )


@pytest.mark.parametrize(
    ("rbac", "sa", "kept"),
    [
        (_rbac(), "app", True),  # Role + RoleBinding to the workload's ServiceAccount
        (_rbac("ClusterRole", "ClusterRoleBinding"), "app", True),
        (_rbac("ClusterRole", "RoleBinding"), "app", True),
        (_rbac(resource="'*'"), "app", True),
        (_rbac(verbs="watch"), "app", True),
        (_rbac(group="*"), "app", True),
        (_rbac(sa="default"), "", True),  # no serviceAccountName: default
        (_rbac(), "other", False),  # bound to another ServiceAccount
        (_rbac(resource="pods"), "app", False),
        (_rbac(resource="secrets"), "app", False),  # a ConfigMap is not a Secret
        (_rbac(verbs="create, update"), "app", False),
        (_rbac(group="apps"), "app", False),
    ],
)
def test_a_workload_that_may_read_configmaps_through_the_api(
    rbac: str, sa: str, kept: bool
) -> None:
    res = run(stream(cm(ns="ns"), dep(meta="  namespace: ns\n", sa=sa), rbac))
    assert res.code == 0, res.stderr
    assert ("cfg" in names(res.stdout)) is kept
    if kept:
        assert "may read ConfigMaps through the API" in res.stderr
        assert 'cmhash.io/versioned: "true" on it renames it anyway' in res.stderr


def test_forcing_an_object_a_workload_may_read_through_the_api() -> None:
    res = run(stream(cm(ns="ns", meta=FORCE), dep(meta="  namespace: ns\n", sa="app"), _rbac()))
    assert res.code == 0 and "cfg" not in names(res.stdout) and "not versioned" not in res.stderr


# ------------------------------------------------------ names that only look versioned


def test_a_name_of_its_own_beside_its_lookalike_base_is_not_a_version() -> None:
    data = stream(
        cm("app-config"),
        cm("app-config-bbbbbbbbbb").replace("k: v", "k: w"),
        dep("app-config"),
        dep("app-config-bbbbbbbbbb", name="b"),
    )
    res = run(data)
    assert res.code == 0, res.stderr
    got = names(res.stdout)
    suffix = "[2456789bcdfghkmt]{10}"
    assert len(got) == 2
    assert any(re.fullmatch(f"app-config-{suffix}", n) for n in got)
    # its own name, suffixed (not re-suffixed as a version of app-config)
    assert any(re.fullmatch(f"app-config-bbbbbbbbbb-{suffix}", n) for n in got)
    again = run(res.stdout)  # idempotent
    assert again.code == 0 and again.stdout == res.stdout


def test_report_keeps_a_change_of_a_name_of_its_own(tmp_path: Path) -> None:
    def render(value: str) -> bytes:
        return stream(
            cm("app-config"),
            cm("app-config-bbbbbbbbbb").replace("k: v", f"k: {value}"),
            dep("app-config"),
            dep("app-config-bbbbbbbbbb", name="b"),
        )

    report = report_json(tmp_path, render("w"), render("x"), "--versioned")
    assert [w["name"] for w in report["restart"]] == ["b"]
    assert [c["name"] for c in report["configs"]] == ["app-config-bbbbbbbbbb"]


# ------------------------------------------------------ kustomize generator names


def _content(kind: str, entries: dict[str, bytes]) -> Content:
    return Content(kind, "x", entries, "Opaque" if kind == "Secret" else None)


@pytest.mark.parametrize(
    ("literals", "files"),
    [
        (["foo=bar"], {}),
        (["a=<b> & c", "b=line1\nline2", "c=ünïcode ✓", "d=tab\there", 'e=quote"back\\slash'], {}),
        (["t=text"], {"bin": b"\xff\x00\x01binary"}),  # not UTF-8: binaryData
    ],
)
def test_the_kustomize_suffix_is_kustomize_s_own(
    tmp_path: Path, literals: list[str], files: dict[str, bytes]
) -> None:
    """kustomize 4.5.4 (.tools/bin) generates; kustomized.suffixes finds its suffix."""
    lines = "".join(f"  - {json.dumps(lit)}\n" for lit in literals)
    listed = "".join(f"  - {name}\n" for name in files)
    for name, data in files.items():
        (tmp_path / name).write_bytes(data)
    more = f"  files:\n{listed}" if files else ""
    (tmp_path / "kustomization.yaml").write_text(
        f"configMapGenerator:\n- name: c\n  literals:\n{lines}{more}"
        f"secretGenerator:\n- name: s\n  literals:\n{lines}{more}"
    )
    out = subprocess.run(
        [tool("kustomize4"), "build", str(tmp_path)], check=True, capture_output=True
    ).stdout
    for obj in load_objects(out):
        name = obj["metadata"]["name"]
        if obj["kind"] == "ConfigMap":
            entries = {k: v.encode() for k, v in (obj.get("data") or {}).items()}
            entries |= {k: base64.b64decode(v) for k, v in (obj.get("binaryData") or {}).items()}
        else:
            entries = {k: base64.b64decode(v) for k, v in (obj.get("data") or {}).items()}
        assert name.rsplit("-", 1)[1] in kustomized.suffixes(_content(obj["kind"], entries))


def test_kustomize_generated_names_are_kept() -> None:
    path = CORPUS / "kustomize-rendered" / "argo-rollouts-docs-kustomize-example.yaml"
    data = path.read_bytes()
    res = run(data)
    assert res.code == 0, res.stderr
    assert names(res.stdout) == names(data)
    assert "my-rollouts-demo-cm-m2mg5mb749" in names(res.stdout)
    # edited in place after kustomize: no longer kustomize's hash, so cmhash's suffix
    obj = next(o for o in load_objects(data) if o["kind"] == "ConfigMap")
    key = next(iter(obj["data"]))
    changed = re.sub(rb"(\n  " + re.escape(key.encode()) + rb": ['\"]?)", rb"\1x", data, count=1)
    assert changed != data
    res = run(changed)
    assert res.code == 0, res.stderr
    renamed = [n for n in names(res.stdout) if n.startswith("my-rollouts-demo-cm-")]
    assert renamed and renamed != ["my-rollouts-demo-cm-m2mg5mb749"]
    assert not any(n.count("-") > 4 for n in renamed)  # replaced, never stacked


# ------------------------------------------------------ the corpus, pinned

PINNED = TESTS / "fixtures" / "versioned-corpus.json"
CONFIG = re.compile(rb"^\s*kind:\s*(ConfigMap|Secret)\s*$", re.M)
RENAME = re.compile(r"^would rename \S+: (ConfigMap|Secret) (\S+) -> ")
KEPT = re.compile(r": info: (ConfigMap|Secret) '([^']+)' is not versioned: (.*) \[not-versioned\]$")
WHY = (
    ("through the API", "reads-kind-through-api"),
    ("names it", "named-by-field"),
    ("declares it", "declared-not-mounted"),
)


def _files(root: Path) -> list[Path]:
    return sorted(
        p
        for p in root.rglob("*")
        if p.suffix in (".yaml", ".yml") and p.is_file() and CONFIG.search(p.read_bytes())
    )


def _params() -> list[Any]:
    out: list[Any] = [
        pytest.param(p, f"tests/{p.relative_to(CORPUS)}", id=f"tests/{p.relative_to(CORPUS)}")
        for p in _files(CORPUS)
    ]
    if SHARED_CORPUS.exists():
        for p in _files(SHARED_CORPUS):
            rel = f"shared/{p.relative_to(SHARED_CORPUS)}"
            out += shared_params(p, rel, p, rel)
    return out


def _outcome(path: Path) -> dict[str, Any]:
    res = run_cmhash(["--no-config", "--versioned", "--check", str(path)])
    assert res.code in (0, 1), res.stderr
    renamed, kept = [], {}
    for line in res.stdout.decode().splitlines() + res.stderr.splitlines():
        if m := RENAME.match(line):
            renamed.append(f"{m.group(1)}/{m.group(2)}")
        elif m := KEPT.search(line):
            why = next((code for text, code in WHY if text in m.group(3)), "left-alone")
            kept[f"{m.group(1)}/{m.group(2)}"] = why
    return {"renamed": sorted(renamed), "notRenamed": dict(sorted(kept.items()))}


@pytest.mark.parametrize(("path", "key"), _params())
def test_versioned_on_the_corpus_is_pinned(path: Path, key: str, update_goldens: bool) -> None:
    pinned = json.loads(PINNED.read_text()) if PINNED.exists() else {}
    got = _outcome(path)
    if update_goldens:
        pinned[key] = got
        PINNED.write_text(json.dumps(dict(sorted(pinned.items())), indent=2) + "\n")
        return
    assert got == pinned[key]


@pytest.mark.parametrize(
    "path",
    [
        CORPUS / "argo-cd" / "manifests" / "install.excerpt.yaml",
        *shared_params(SHARED_CORPUS / "argo-cd" / "manifests" / "install.yaml", "shared-install"),
        *shared_params(
            SHARED_CORPUS / "argo-cd" / "manifests" / "ha" / "install.yaml", "shared-ha"
        ),
    ],
)
def test_argo_cd_keeps_the_configmaps_it_reads_by_name(path: Path) -> None:
    got = _outcome(path)
    for name in ("argocd-cm", "argocd-cmd-params-cm", "argocd-tls-certs-cm"):
        assert f"ConfigMap/{name}" in got["notRenamed"]
        assert f"ConfigMap/{name}" not in got["renamed"]


@pytest.mark.parametrize(
    "binding",
    [
        "roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: view}\n"
        "subjects: [{kind: ServiceAccount, name: app, namespace: shop}]\n",
        "roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: edit}\n"
        "subjects: [{kind: Group, name: 'system:serviceaccounts:shop', apiGroup: rbac.authorization.k8s.io}]\n",
        "roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: admin}\n"
        "subjects: [{kind: User, name: 'system:serviceaccount:shop:app', apiGroup: rbac.authorization.k8s.io}]\n",
    ],
    ids=["builtin-view", "group", "user"],
)
def test_read_access_through_builtin_roles_groups_and_users(binding: str) -> None:
    """The ClusterRoles every cluster has (view, edit, admin, cluster-admin), and the
    ServiceAccount's user name and groups, grant read access too: the name is kept."""
    docs = [
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cfg, namespace: shop}\ndata: {k: v}\n",
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, namespace: shop}\nspec:\n"
        "  template:\n    spec:\n      serviceAccountName: app\n      containers:\n"
        "      - name: c\n        image: i\n        envFrom: [{configMapRef: {name: cfg}}]\n",
        "apiVersion: rbac.authorization.k8s.io/v1\nkind: RoleBinding\n"
        "metadata: {name: b, namespace: shop}\n" + binding,
    ]
    res = run_cmhash(["--no-config", "--versioned", "-"], stdin="---\n".join(docs).encode())
    assert res.code == 0, res.stderr
    assert "name: cfg," in res.out and "cfg-" not in res.out
    assert "may read ConfigMaps through the API" in res.stderr

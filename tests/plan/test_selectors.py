"""``--versioned`` and the objects a ``{name, key}`` selector outside pod specs names
(plan/selectors.py, knowledge/selectors.py, plan/byname.py): whatever reconciles the
referring resource reads them by name, so they keep it, with a ``not-versioned`` note at
the field.

* a real kube-prometheus-stack render (tests/fixtures/helm-renders) whose ServiceMonitor
  uses ``basicAuth`` and whose PodMonitor uses ``tlsConfig``: before, the Secret was
  renamed and the ServiceMonitor kept the old name, without a word;
* the prometheus-operator table is exactly what the published CRDs describe;
* a CRD in the input makes a selector certain (its kind, and a mapping with more keys);
* hostile shapes: a ``{name, key}`` in a ConfigMap's data, a pod spec's selectors,
  anchors and aliases, lists, another namespace, a mapping with one more key."""

from __future__ import annotations

import gzip
import re

import pytest
import yaml
from conftest import ROOT, run_cmhash

from cmhash.knowledge.selectors import GROUP, PROMETHEUS_OPERATOR, known
from cmhash.parse.events import backend, parse_chunk
from cmhash.parse.resources import document_resources
from cmhash.plan.selectors import schema_selectors
from cmhash.read.source import decode

RENDER = ROOT / "tests" / "fixtures" / "helm-renders" / "kube-prometheus-stack-selectors.yaml"
CRDS = ROOT / "tests" / "crds"
NOTE = re.compile(
    r"^(\S+?):(\d+):(\d+): info: (\w+) '([^']+)' is not versioned: (.*) \[not-versioned\]$"
)


def _run(text: str, *args: str) -> tuple[str, str]:
    res = run_cmhash(["--no-config", "--versioned", *args, "-"], stdin=text.encode())
    assert res.code == 0, res.stderr
    return res.out, res.stderr


def _objects(out: str) -> set[tuple[str, str]]:
    """(kind, name) of every ConfigMap and Secret of a stream."""
    found = set()
    for doc in yaml.safe_load_all(out):
        for item in (doc or {}).get("items", [doc]) if doc else ():
            if item and item.get("kind") in ("ConfigMap", "Secret"):
                found.add((item["kind"], item["metadata"]["name"]))
    return found


def _selectors(node: object, path: str = "") -> list[tuple[str, str]]:
    """(field, name) of every {name, key} mapping below ``node``."""
    out: list[tuple[str, str]] = []
    if isinstance(node, dict):
        if {"name", "key"} <= set(node) and set(node) <= {"name", "key", "optional"}:
            out.append((path, node["name"]))
        for k, v in node.items():
            out += _selectors(v, f"{path}.{k}")
    elif isinstance(node, list):
        for i, v in enumerate(node):
            out += _selectors(v, f"{path}[{i}]")
    return out


# -- the real render -------------------------------------------------------------------


def test_a_servicemonitors_basic_auth_secret_keeps_its_name() -> None:
    text = RENDER.read_text()
    out, said = _run(text)
    objects = _objects(out)
    # every selector outside pod specs in the output names an object the output has
    for doc in yaml.safe_load_all(out):
        for item in (doc or {}).get("items", [doc]) if doc else ():
            if not item or item["kind"] in ("Deployment", "DaemonSet", "StatefulSet", "Pod", "Job"):
                continue
            for field, name in _selectors(item.get("spec")):
                if name in {n for _, n in objects} or name.startswith("shop"):
                    assert any(n == name for _, n in objects), (item["kind"], field, name)
    assert {
        ("Secret", "shop-metrics-auth"),
        ("Secret", "shop-tls"),
        ("ConfigMap", "shop-ca"),
    } <= objects
    notes = {m.group(5): m for m in map(NOTE.match, said.splitlines()) if m}
    lines = text.splitlines()
    for name, field in (
        ("shop-metrics-auth", "ServiceMonitor/shop spec.endpoints[0].basicAuth.password"),
        ("shop-tls", "PodMonitor/shop-tls spec.podMetricsEndpoints[0].tlsConfig.cert.secret"),
        ("shop-ca", "PodMonitor/shop-tls spec.podMetricsEndpoints[0].tlsConfig.ca.configMap"),
    ):
        note = notes[name]
        assert note.group(6).startswith(f"{field} selects a key of it (a "), note.group(6)
        line, column = int(note.group(2)), int(note.group(3))
        assert lines[line - 1][column - 1 :] == name  # at the field, where the name is
    assert "prometheus-operator BasicAuth.Password" in notes["shop-metrics-auth"].group(6)
    again, _ = _run(out)
    assert again == out
    # the Deployment that reads them still rolls: by its checksum, as without --versioned
    plain = run_cmhash(["--no-config", "-"], stdin=text.encode()).out
    assert plain.count("checksum/config") == out.count("checksum/config")


def test_without_the_selectors_the_same_objects_are_renamed() -> None:
    """(what the rule changes: with the ServiceMonitor and PodMonitor gone, the Secret
    and the ConfigMap get versioned names and the Deployment follows)"""
    docs = RENDER.read_text().split("\n---\n")
    kept = [d for d in docs if "kind: ServiceMonitor\n    metadata:\n      name: shop\n" not in d]
    kept = [d for d in kept if "name: shop-tls\n      namespace" not in d]
    out, _ = _run("\n---\n".join(kept))
    names = {n for _, n in _objects(out)}
    assert "shop-metrics-auth" not in names and "shop-ca" not in names
    assert any(n.startswith("shop-metrics-auth-") for n in names)


# -- the table against the published CRDs ------------------------------------------------


def _crd(name: str):  # type: ignore[no-untyped-def]
    text = gzip.decompress((CRDS / f"monitoring.coreos.com_{name}.yaml.gz").read_bytes())
    src = decode(name, text, max_bytes=1 << 30)
    (res,) = document_resources(src, 0, parse_chunk(src.text, 0, backend("fast")))
    return res


# fields of the workloads' resources that are pod specs (their references are rewritten)
POD_FIELDS = ("containers", "initContainers", "volumes")

CRD_FILES = {
    "ServiceMonitor": "servicemonitors",
    "PodMonitor": "podmonitors",
    "Probe": "probes",
    "ScrapeConfig": "scrapeconfigs",
    "AlertmanagerConfig": "alertmanagerconfigs",
    "Prometheus": "prometheuses",
    "PrometheusAgent": "prometheusagents",
    "Alertmanager": "alertmanagers",
    "ThanosRuler": "thanosrulers",
}


@pytest.mark.parametrize("kind", list(PROMETHEUS_OPERATOR))
def test_the_table_is_what_the_published_crd_describes(kind: str) -> None:
    described = schema_selectors(_crd(CRD_FILES[kind]))
    table = {path: target for path, target, _ in known(GROUP, kind)}
    versions = [v for (g, v, k) in described if (g, k) == (GROUP, kind)]
    assert versions, described.keys()
    for version in versions:
        schema = {
            s.path: s.targets
            for s in described[(GROUP, version, kind)]
            if not (len(s.path) > 1 and s.path[1] in POD_FIELDS)
        }
        assert set(schema) == set(table), (version, set(schema) ^ set(table))
        for path, targets in schema.items():  # where the schema says the kind, it agrees
            assert targets in ((table[path],), ("ConfigMap", "Secret")), (path, targets)


def test_both_alertmanagerconfig_versions_are_described() -> None:
    described = schema_selectors(_crd("alertmanagerconfigs"))
    assert {v for (_, v, k) in described if k == "AlertmanagerConfig"} == {"v1alpha1", "v1beta1"}


# -- a CRD in the input ------------------------------------------------------------------

WIDGET_CRD = """apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
spec:
  group: example.com
  names: {kind: Widget, plural: widgets}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              token:
                description: a key of a Secret holding the token
                type: object
                properties:
                  name: {type: string}
                  key: {type: string}
                  version: {type: string}
                required: [key]
              settings:
                type: object
                properties:
                  name: {type: string}
                  key: {type: string}
"""
SHARED = """apiVersion: v1
kind: Secret
metadata: {name: shared}
stringData: {token: x}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: shared}
data: {token: x}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: settings}
data: {a: b}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: app}
spec:
  template:
    spec:
      containers:
      - name: app
        envFrom:
        - secretRef: {name: shared}
        - configMapRef: {name: shared}
        - configMapRef: {name: settings}
"""
WIDGET = """---
apiVersion: example.com/v1
kind: Widget
metadata: {name: w}
spec:
  token: {name: shared, key: token, version: "2"}
  settings: {name: settings, key: a}
"""


def _kept(said: str) -> set[tuple[str, str]]:
    return {(m.group(4), m.group(5)) for m in map(NOTE.match, said.splitlines()) if m}


def test_a_crd_in_the_input_makes_a_selector_certain() -> None:
    """Without the CRD, ``token`` (three keys) is no selector and ``settings`` (the
    shape) names nothing certain; with it, the schema says ``token`` selects a Secret's
    key (its description), even with a third key, and ``settings`` is no selector there
    (``key`` not required) but keeps the shape rule."""
    _, said = _run(SHARED + WIDGET)
    assert _kept(said) == {("ConfigMap", "settings")}
    _, said = _run(WIDGET_CRD + "---\n" + SHARED + WIDGET)
    assert _kept(said) == {("Secret", "shared"), ("ConfigMap", "settings")}
    assert "per the CRD widgets.example.com in the input" in said


def test_a_bare_selector_keeps_both_kinds_that_have_the_name() -> None:
    widget = WIDGET.replace(
        'token: {name: shared, key: token, version: "2"}', "token: {name: shared, key: token}"
    )
    _, said = _run(SHARED + widget)
    assert _kept(said) == {("Secret", "shared"), ("ConfigMap", "shared"), ("ConfigMap", "settings")}


# -- hostile shapes ----------------------------------------------------------------------

APP = """apiVersion: v1
kind: Secret
metadata: {name: creds, namespace: shop}
stringData: {password: x}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: app, namespace: shop}
spec:
  template:
    spec:
      containers:
      - name: app
        env:
        - name: P
          valueFrom: {secretKeyRef: {name: creds, key: password}}
"""


@pytest.mark.parametrize(
    ("case", "extra", "kept"),
    [
        (
            "a ConfigMap's data",
            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, namespace: shop}\n"
            "data: {name: creds, key: password}\n",
            False,
        ),
        (
            "a Secret's stringData",
            "apiVersion: v1\nkind: Secret\nmetadata: {name: s, namespace: shop}\n"
            "stringData: {name: creds, key: password}\n",
            False,
        ),
        (
            "a mapping with one more key",
            "apiVersion: example.com/v1\nkind: Thing\nmetadata: {name: t, namespace: shop}\n"
            "spec: {param: {name: creds, key: password, value: x}}\n",
            False,
        ),
        (
            "another namespace",
            "apiVersion: monitoring.coreos.com/v1\nkind: ServiceMonitor\n"
            "metadata: {name: m, namespace: other}\nspec:\n  endpoints:\n"
            "  - basicAuth: {password: {name: creds, key: password}}\n",
            False,
        ),
        (
            "metadata and status",
            "apiVersion: example.com/v1\nkind: Thing\nmetadata: {name: t, namespace: shop}\n"
            "status: {auth: {name: creds, key: password}}\n",
            False,
        ),
        (
            "an anchor and an alias",
            "apiVersion: monitoring.coreos.com/v1\nkind: ServiceMonitor\n"
            "metadata: {name: m, namespace: shop}\nspec:\n  endpoints:\n"
            "  - basicAuth:\n      password: &ref {name: creds, key: password}\n"
            "      username: *ref\n",
            True,
        ),
        (
            "a list of selectors under a map",
            "apiVersion: monitoring.coreos.com/v1\nkind: ServiceMonitor\n"
            "metadata: {name: m, namespace: shop}\nspec:\n  endpoints:\n"
            "  - proxyConnectHeader:\n      X-Token:\n      - {name: creds, key: password}\n",
            True,
        ),
        (
            "a merge key",
            "apiVersion: example.com/v1\nkind: Thing\nmetadata: {name: t, namespace: shop}\n"
            "spec:\n  base: &b {name: creds, key: password}\n  auth:\n    <<: *b\n",
            True,
        ),
        (
            "an Argo Rollouts AnalysisTemplate's argument",
            "apiVersion: argoproj.io/v1alpha1\nkind: AnalysisTemplate\n"
            "metadata: {name: a, namespace: shop}\nspec:\n  args:\n  - name: token\n"
            "    valueFrom: {secretKeyRef: {name: creds, key: password}}\n",
            True,
        ),
    ],
)
def test_hostile_shapes(case: str, extra: str, kept: bool) -> None:
    out, said = _run(APP + "---\n" + extra)
    assert (("Secret", "creds") in _kept(said)) == kept, said
    names = {n for _, n in _objects(out)}
    assert ("creds" in names) == kept
    if not kept:  # versioned, and the Deployment's own reference (a pod spec) follows
        (new,) = [n for n in names if n.startswith("creds-")]
        assert f"secretKeyRef: {{name: {new}, key: password}}" in out


def test_an_operator_resources_pod_spec_is_rewritten_not_kept() -> None:
    """A Prometheus' own containers are a pod spec: their selectors follow the rename;
    its remoteWrite basicAuth is the operator's read by name: kept."""
    text = (
        "apiVersion: v1\nkind: Secret\nmetadata: {name: env-creds}\nstringData: {k: v}\n---\n"
        "apiVersion: v1\nkind: Secret\nmetadata: {name: rw-creds}\nstringData: {k: v}\n---\n"
        "apiVersion: monitoring.coreos.com/v1\nkind: Prometheus\nmetadata: {name: p}\nspec:\n"
        "  containers:\n  - name: prometheus\n    env:\n    - name: X\n"
        "      valueFrom: {secretKeyRef: {name: env-creds, key: k}}\n"
        "  remoteWrite:\n  - url: https://x\n    basicAuth: {password: {name: rw-creds, key: k}}\n"
        "---\napiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\nspec:\n  template:\n"
        "    spec:\n      containers:\n      - name: c\n        envFrom: [{secretRef: {name: rw-creds}}]\n"
    )
    out, said = _run(text)
    assert _kept(said) == {("Secret", "rw-creds")}
    assert "name: env-creds-" in out and "secretKeyRef: {name: env-creds-" in out


def test_an_alertmanagers_default_configuration_secret_keeps_its_name() -> None:
    """No spec.configSecret: the operator reads alertmanager-<name>
    (defaultConfigSecretName), so that Secret keeps its name under --versioned."""
    text = (ROOT / "tests" / "cases" / "op-alertmanager" / "input.yaml").read_text()
    out, said = _run(text, "--hash-live-reloaded")
    assert "name: alertmanager-main\n" in out
    assert "Alertmanager/main spec.configSecret (absent: alertmanager-main) names it" in said, said


# the shapes of other operators' manifests, as their users write them (external-secrets
# docs: a ClusterSecretStore's aws.auth.secretRef names a namespace; cert-manager: an
# Issuer's route53 solver; k8up: a Schedule's backend)
OTHERS = """apiVersion: external-secrets.io/v1
kind: ClusterSecretStore
metadata:
  name: cluster-secret-store
spec:
  provider:
    aws:
      service: SecretsManager
      region: eu-west-1
      auth:
        secretRef:
          accessKeyIDSecretRef:
            name: aws-creds
            key: access-key-id
            namespace: eso
          secretAccessKeySecretRef:
            name: aws-creds
            key: secret-access-key
            namespace: eso
---
apiVersion: cert-manager.io/v1
kind: Issuer
metadata:
  name: letsencrypt-prod
  namespace: web
spec:
  acme:
    server: https://acme-v02.api.letsencrypt.org/directory
    privateKeySecretRef:
      name: letsencrypt-prod
    solvers:
    - dns01:
        route53:
          region: us-east-1
          accessKeyIDSecretRef:
            name: route53-creds
            key: aws_access_key_id
          secretAccessKeySecretRef:
            name: route53-creds
            key: aws_secret_access_key
---
apiVersion: backup.appuio.ch/v1alpha1
kind: Schedule
metadata:
  name: schedule-test
  namespace: web
spec:
  backend:
    repoPasswordSecretRef:
      name: backup-repo
      key: password
"""


def _user(name: str, ns: str) -> str:
    return (
        f"---\napiVersion: v1\nkind: Secret\nmetadata: {{name: {name}, namespace: {ns}}}\n"
        f"stringData: {{k: v}}\n---\napiVersion: apps/v1\nkind: Deployment\n"
        f"metadata: {{name: uses-{name}, namespace: {ns}}}\nspec:\n  template:\n    spec:\n"
        f"      containers:\n      - name: c\n        envFrom: [{{secretRef: {{name: {name}}}}}]\n"
    )


def test_other_operators_selectors_keep_their_secrets() -> None:
    """A selector with its own namespace (external-secrets' SecretKeySelector) names the
    object there, whatever namespace its resource is in (a cluster-scoped store)."""
    text = OTHERS + _user("aws-creds", "eso") + _user("route53-creds", "web")
    text += _user("backup-repo", "web") + _user("aws-creds", "other")
    out, said = _run(text)
    kept = {(m.group(5), m.group(1)) for m in map(NOTE.match, said.splitlines()) if m}
    assert {name for name, _ in kept} == {"aws-creds", "route53-creds", "backup-repo"}, said
    names = [
        (d["metadata"]["namespace"], d["metadata"]["name"])
        for d in yaml.safe_load_all(out)
        if d["kind"] == "Secret"
    ]
    assert ("eso", "aws-creds") in names and ("web", "route53-creds") in names
    assert ("other", "aws-creds") not in names  # another namespace's: versioned

"""Declared dependencies, the annotations of Reloader, Wave and kapp, and selection rules:
each form against what it must mean, explain and report saying why, and a real chart
whose server reads a ConfigMap through the API."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from conftest import CORPUS, ROOT, TESTS, report_json, run_cmhash

CM = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\n{meta}data:\n  k: {value}\n"
SECRET = "apiVersion: v1\nkind: Secret\nmetadata:\n  name: {name}\nstringData:\n  k: {value}\n"
DEP = (
    "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {name}\n{meta}spec:\n"
    "  template:\n    spec:\n      containers:\n      - name: c\n        image: i\n{spec}"
)
ENV_FROM = "        envFrom:\n        - configMapRef: {{name: {target}}}\n"


def ann(**values: str) -> str:
    return "  annotations:\n" + "".join(f"    {k}: {json.dumps(v)}\n" for k, v in values.items())


def stream(*docs: str) -> bytes:
    return "---\n".join(docs).encode()


def checksums(data: bytes, *args: str) -> dict[str, str | None]:
    """Deployment name -> its checksum after a run (None: not annotated)."""
    res = run_cmhash(["--no-config", "-q", *args, "-"], stdin=data)
    assert res.code == 0, res.stderr
    out: dict[str, str | None] = {}
    for doc in res.out.split("---\n"):
        m = re.search(r"kind: Deployment\nmetadata:\n  name: (\S+)", doc)
        if m:
            value = re.search(r'checksum/config: "([0-9a-f]{64})"', doc)
            out[m.group(1)] = value.group(1) if value else None
    return out


def one(data: bytes, *args: str) -> str | None:
    (value,) = checksums(data, *args).values()
    return value


def test_declared_equals_a_whole_object_reference() -> None:
    """A declared dependency hashes exactly like envFrom (every key) of the object."""
    cm = CM.format(name="cfg", meta="", value="v1")
    declared = one(
        stream(cm, DEP.format(name="d", meta=ann(**{"cmhash.io/extra-configmaps": "cfg"}), spec=""))
    )
    referenced = one(stream(cm, DEP.format(name="d", meta="", spec=ENV_FROM.format(target="cfg"))))
    assert declared is not None and declared == referenced


@pytest.mark.parametrize("where", ["metadata", "template"])
@pytest.mark.parametrize(
    ("annotation", "kind"),
    [
        ("cmhash.io/extra-configmaps", "ConfigMap"),
        ("cmhash.io/extra-secrets", "Secret"),
        ("configmap.reloader.stakater.com/reload", "ConfigMap"),
        ("secret.reloader.stakater.com/reload", "Secret"),
        ("wave.pusher.com/extra-configmaps", "ConfigMap"),
        ("wave.pusher.com/extra-secrets", "Secret"),
    ],
)
def test_every_declaration_moves_with_its_object(annotation: str, kind: str, where: str) -> None:
    """Each declaring annotation, on the workload or its pod template: a content change
    of the declared object moves the checksum; the same change elsewhere does not."""
    obj = CM if kind == "ConfigMap" else SECRET
    meta = ann(**{annotation: "target"})
    dep = (
        DEP.format(name="d", meta=meta, spec="")
        if where == "metadata"
        else DEP.format(name="d", meta="", spec="").replace(
            "  template:\n",
            "  template:\n    metadata:\n"
            + meta.replace("  ", "      ", 1).replace("\n    ", "\n        "),
        )
    )

    def run(target: str, other: str) -> str | None:
        return one(
            stream(
                obj.format(name="target", meta="", value=target),
                obj.format(name="other", meta="", value=other),
                dep,
            )
        )

    if annotation.startswith("wave.") and where == "template":
        # Wave reads the workload's own annotations only (wave-k8s/wave pkg/core/
        # children.go getChildNamesByType: obj.GetAnnotations())
        assert run("a", "a") is None
        return
    base = run("a", "a")
    assert base is not None
    assert run("b", "a") != base
    assert run("a", "b") == base
    # turned off with --compat none (cmhash's own annotations always count)
    off = one(stream(obj.format(name="target", meta="", value="a"), dep), "--compat", "none")
    assert (off is None) == (not annotation.startswith("cmhash.io/"))


def test_kapp_explicit_ref() -> None:
    cm = CM.format(name="cfg", meta="", value="v1")
    dep = DEP.format(
        name="d",
        meta="  annotations:\n    kapp.k14s.io/versioned-explicit-ref: |\n"
        "      apiVersion: v1\n      kind: ConfigMap\n      name: cfg\n",
        spec="",
    )
    value = one(stream(cm, dep))
    assert value == one(
        stream(cm, DEP.format(name="d", meta="", spec=ENV_FROM.format(target="cfg")))
    )
    assert one(stream(cm, dep), "--compat", "reloader,wave") is None


def test_cross_namespace_declaration() -> None:
    """``namespace/name`` reaches another namespace; the same name in the workload's own
    namespace is a different object (and hashes differently)."""
    shared = CM.format(name="ca", meta="  namespace: platform\n", value="v1")
    local = CM.format(name="ca", meta="  namespace: shop\n", value="v1")
    dep = DEP.format(
        name="d",
        meta="  namespace: shop\n" + ann(**{"cmhash.io/extra-configmaps": "platform/ca"}),
        spec="",
    )
    across = one(stream(shared, local, dep))
    here = one(stream(shared, local, dep.replace("platform/ca", "ca")))
    assert across is not None and here is not None and across != here
    # and "shop/ca" on a workload in shop is just "ca"
    assert one(stream(shared, local, dep.replace("platform/ca", "shop/ca"))) == here


def test_missing_declared_object_warns_and_strict_fails() -> None:
    data = stream(
        DEP.format(name="d", meta=ann(**{"cmhash.io/extra-configmaps": "gone"}), spec=""),
        CM.format(name="x", meta="", value="v"),
    )
    res = run_cmhash(["--no-config", "-"], stdin=data)
    assert res.code == 0 and "[missing-reference]" in res.stderr
    assert "declares a dependency on ConfigMap 'gone' (cmhash.io/extra-configmaps)" in res.stderr
    strict = run_cmhash(["--no-config", "--strict", "-"], stdin=data)
    assert strict.code == 2 and strict.stdout == b""


def test_reloader_patterns_are_anchored_regexes() -> None:
    objs = [CM.format(name=n, meta="", value="v") for n in ("app-a", "app-b", "xapp-c", "app")]
    dep = DEP.format(
        name="d", meta=ann(**{"configmap.reloader.stakater.com/reload": "app-.*"}), spec=""
    )
    by_pattern = one(stream(*objs, dep))
    by_names = one(
        stream(
            *objs,
            dep.replace("app-.*", "app-a,app-b").replace(
                "configmap.reloader.stakater.com/reload", "cmhash.io/extra-configmaps"
            ),
        )
    )
    assert by_pattern is not None and by_pattern == by_names


@pytest.mark.parametrize("value", ["app-(", "[z-a]", "a**"])
def test_invalid_regex_is_refused_with_its_position(value: str) -> None:
    data = stream(
        DEP.format(name="d", meta=ann(**{"configmap.reloader.stakater.com/reload": value}), spec="")
    )
    res = run_cmhash(["--no-config", "-"], stdin=data)
    assert res.code == 2 and res.stdout == b""
    assert res.stderr.startswith("cmhash: <stdin>:6:45: configmap.reloader.stakater.com/reload: ")
    assert "is not a valid regular expression" in res.stderr


@pytest.mark.parametrize("value", ["a/b/c", "UPPER", "with space"])
def test_invalid_declared_name_is_refused(value: str) -> None:
    data = stream(DEP.format(name="d", meta=ann(**{"cmhash.io/extra-configmaps": value}), spec=""))
    res = run_cmhash(["--no-config", "-"], stdin=data)
    assert res.code == 2 and "is not a name or namespace/name" in res.stderr


def test_opt_in_mode_and_its_selectors() -> None:
    cm = CM.format(name="cfg", meta="", value="v")
    deps = [
        DEP.format(
            name=name, meta=ann(**{key: "true"}) if key else "", spec=ENV_FROM.format(target="cfg")
        )
        for name, key in (
            ("plain", ""),
            ("enabled", "cmhash.io/enabled"),
            ("reloader", "reloader.stakater.com/auto"),
            ("typed", "secret.reloader.stakater.com/auto"),
            ("wave", "wave.pusher.com/update-on-config-change"),
        )
    ]
    got = checksums(stream(cm, *deps), "--opt-in")
    assert got["plain"] is None
    assert got["enabled"] and got["reloader"] and got["wave"]
    assert got["typed"] is None  # selected, but it counts Secrets only: nothing in-stream
    assert all(v is not None for k, v in checksums(stream(cm, *deps)).items() if k != "typed")
    compat_off = checksums(stream(cm, *deps), "--opt-in", "--compat", "none")
    assert [k for k, v in compat_off.items() if v] == ["enabled"]


def test_cmhash_sources_beats_typed_reloader_auto() -> None:
    """Reloader's typed auto counts its kind; in the every-workload mode (Reloader's
    --auto-reload-all) the other kinds count too, as their own auto annotations are
    empty (pkg/common/common.go ShouldReload: reloaderEnabledValue == "" &&
    typedAutoAnnotationEnabledValue == "" && AutoReloadAll); under --opt-in (Reloader's
    default) only that kind does. cmhash.io/sources restricts in both."""
    cm, secret = CM.format(name="c", meta="", value="v"), SECRET.format(name="s", value="v")
    spec = ENV_FROM.format(target="c") + "        - secretRef: {name: s}\n"
    typed = DEP.format(
        name="d", meta=ann(**{"configmap.reloader.stakater.com/auto": "true"}), spec=spec
    )
    both = DEP.format(
        name="d",
        meta=ann(**{"configmap.reloader.stakater.com/auto": "true", "cmhash.io/sources": "all"}),
        spec=spec,
    )
    plain = DEP.format(name="d", meta="", spec=spec)
    only_cm = DEP.format(
        name="d", meta=ann(**{"cmhash.io/enabled": "true"}), spec=ENV_FROM.format(target="c")
    )
    assert one(stream(cm, secret, both)) == one(stream(cm, secret, plain))
    assert one(stream(cm, secret, typed)) == one(stream(cm, secret, plain))
    assert one(stream(cm, secret, typed), "--opt-in") == one(stream(cm, secret, only_cm))
    sources = DEP.format(name="d", meta=ann(**{"cmhash.io/sources": "configmaps"}), spec=spec)
    assert one(stream(cm, secret, sources)) == one(stream(cm, secret, only_cm))
    bad = DEP.format(name="d", meta=ann(**{"cmhash.io/sources": "everything"}), spec=spec)
    res = run_cmhash(["--no-config", "-"], stdin=stream(cm, bad))
    assert res.code == 2 and "cmhash.io/sources must be configmaps, secrets or all" in res.stderr


def test_rules_in_a_krm_function_config() -> None:
    """The same keys from a KRM functionConfig, as an object and as kpt's ConfigMap data."""
    items = (
        "- "
        + CM.format(name="hot", meta="", value="v").replace("\n", "\n  ").rstrip()
        + "\n- "
        + DEP.format(name="d", meta="", spec=ENV_FROM.format(target="hot"))
        .replace("\n", "\n  ")
        .rstrip()
        + "\n"
    )
    head = "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n"
    as_object = (
        head
        + items
        + (
            "functionConfig:\n  apiVersion: cmhash.io/v1\n"
            "  kind: CmhashTransformer\n  ignore:\n    configs:\n"
            "    - {name: hot}\n"
        )
    )
    as_configmap = (
        head
        + items
        + (
            "functionConfig:\n  apiVersion: v1\n  kind: ConfigMap\n"
            "  metadata: {name: fn}\n  data:\n"
            "    ignore: '{configs: [{name: hot}]}'\n"
        )
    )
    plain = run_cmhash(["--no-config", "-"], stdin=(head + items).encode())
    assert b"checksum/config" in plain.stdout
    for text in (as_object, as_configmap):
        res = run_cmhash(["--no-config", "-"], stdin=text.encode())
        assert res.code == 0, res.stderr
        assert b"checksum/config" not in res.stdout  # its only config object is ignored


def valid_explain(text: str) -> dict:  # type: ignore[type-arg]
    """explain's JSON, checked against its schema (new fields included)."""
    import jsonschema

    schema = json.loads((ROOT / "src" / "cmhash" / "schemas" / "explain.schema.json").read_text())
    data = json.loads(text)
    jsonschema.validate(data, schema)
    return data  # type: ignore[no-any-return]


def test_explain_says_why(tmp_path: Path) -> None:
    cases = TESTS / "cases"
    res = run_cmhash(
        [
            "explain",
            "--no-config",
            "--format",
            "json",
            str(cases / "reloader-selection" / "input.yaml"),
        ]
    )
    data = valid_explain(res.out)
    refs = {(w["name"], r["name"]): r for w in data["workloads"] for r in w["references"]}
    assert refs[("uses-ignored", "hot-reloaded")]["target"] == "opted-out"
    assert refs[("uses-ignored", "hot-reloaded")]["excludedBecause"] == (
        'reloader.stakater.com/ignore: "true"'
    )
    # every-workload mode (Reloader's --auto-reload-all): typed auto restricts nothing
    assert refs[("configmaps-only", "token")]["target"] == "in-stream"
    # auto: "false" no longer drops the workload: its pod-spec references do not count
    assert refs[("auto-false", "settings")]["target"] == "excluded"
    assert (
        'reloader.stakater.com/auto: "false"'
        in (refs[("auto-false", "settings")]["excludedBecause"])
    )
    skipped = {w["name"]: w["skipReason"] for w in data["workloads"]}
    assert skipped["auto-false"] is None
    res = run_cmhash(
        [
            "explain",
            "--no-config",
            "--opt-in",
            "--format",
            "json",
            str(cases / "reloader-selection" / "input.yaml"),
        ]
    )
    refs = {
        (w["name"], r["name"]): r
        for w in valid_explain(res.out)["workloads"]
        for r in w["references"]
    }
    assert refs[("configmaps-only", "token")]["target"] == "excluded"
    assert (
        "Reloader would not reload on it" in refs[("configmaps-only", "token")]["excludedBecause"]
    )
    assert refs[("search-mode", "token")]["target"] == "excluded"
    assert refs[("search-mode", "settings")]["target"] == "in-stream"
    res = run_cmhash(
        [
            "explain",
            "--no-config",
            "--format",
            "json",
            str(cases / "declared-cmhash-extra" / "input.yaml"),
        ]
    )
    (w,) = valid_explain(res.out)["workloads"]
    declared = {r["name"]: (r["how"], r["declaredBy"], r["namespace"]) for r in w["references"]}
    assert declared["shared-ca"] == ("declared", "cmhash.io/extra-configmaps", "platform")
    assert declared["argocd-secret"] == ("declared", "cmhash.io/extra-secrets", "")


def test_report_names_declared_and_excluded_causes(tmp_path: Path) -> None:
    dep = DEP.format(name="server", meta=ann(**{"cmhash.io/extra-configmaps": "api-read"}), spec="")
    hot = DEP.format(name="loki", meta="", spec=ENV_FROM.format(target="runtime"))
    old = stream(
        CM.format(name="api-read", meta="", value="a"),
        CM.format(name="runtime", meta=ann(**{"reloader.stakater.com/ignore": "true"}), value="a"),
        dep,
        hot,
    )
    new = old.replace(b"k: a", b"k: b")
    data = report_json(tmp_path, old, new)
    (w,) = data["restart"]
    assert w["name"] == "server"
    assert w["causes"] == [
        {
            "type": "config",
            "kind": "ConfigMap",
            "name": "api-read",
            "change": "changed",
            "keys": ["k"],
        }
    ]
    (n,) = data["notRestarting"]
    assert n["name"] == "loki"
    assert n["reason"] == (
        'ConfigMap/runtime is left out of checksums (reloader.stakater.com/ignore: "true")'
    )


def test_real_chart_server_reads_its_configmap_through_the_api() -> None:
    """Argo CD's argocd-server reads argocd-cm through the API: a change of a key no pod
    spec reads rolls nothing, until the dependency is declared; then it rolls exactly
    argocd-server."""
    text = (CORPUS / "argo-cd" / "manifests" / "install.excerpt.yaml").read_text()
    anchor = (
        "kind: Deployment\nmetadata:\n  labels:\n    app.kubernetes.io/component: server\n"
        "    app.kubernetes.io/name: argocd-server\n    app.kubernetes.io/part-of: argocd\n"
        "  name: argocd-server\n"
    )
    assert text.count(anchor) == 1
    declared = text.replace(
        anchor,
        anchor.replace(
            "  name: argocd-server\n",
            "  name: argocd-server\n  annotations:\n    cmhash.io/extra-configmaps: argocd-cm\n",
        ),
    )

    def changed(src: str) -> str:  # a key of argocd-cm that no pod spec reads
        docs = src.split("\n---\n")
        (i,) = [
            n
            for n, d in enumerate(docs)
            if "kind: ConfigMap\n" in d and "\n  name: argocd-cm\n" in d + "\n"
        ]
        assert "\ndata:\n" in docs[i] and "users.anonymous.enabled" not in docs[i]
        docs[i] = docs[i].replace("\ndata:\n", "\ndata:\n  users.anonymous.enabled: 'true'\n", 1)
        return "\n---\n".join(docs)

    def all_values(src: str) -> dict[str, str | None]:
        res = run_cmhash(["--no-config", "-q", "-"], stdin=src.encode())
        assert res.code == 0, res.stderr
        out = {}
        for doc in res.out.split("\n---\n"):
            m = re.search(r"^kind: (\w+)\n(?:.*\n)*?  name: (\S+)", doc, re.MULTILINE)
            value = re.search(r'checksum/config: "([0-9a-f]{64})"', doc)
            if m and value:
                out[f"{m.group(1)}/{m.group(2)}"] = value.group(1)
        return out

    before, after = all_values(text), all_values(changed(text))
    assert before == after  # nothing reads that key through the pod spec
    d_before, d_after = all_values(declared), all_values(changed(declared))
    moved = {k for k in d_before if d_before[k] != d_after.get(k)}
    assert moved == {"Deployment/argocd-server"}
    assert {k: v for k, v in d_before.items() if k != "Deployment/argocd-server"} == {
        k: v for k, v in before.items() if k != "Deployment/argocd-server"
    }


def test_explain_says_what_selected_a_workload(tmp_path: Path) -> None:
    cm = CM.format(name="cfg", meta="", value="v")
    dep = DEP.format(
        name="d",
        meta="  labels: {app: loki}\n" + ann(**{"wave.pusher.com/update-on-config-change": "true"}),
        spec=ENV_FROM.format(target="cfg"),
    )
    (tmp_path / "in.yaml").write_bytes(stream(cm, dep))
    (tmp_path / "c.yaml").write_text(
        "optIn: true\ninclude:\n  workloads:\n  - {selector: app=loki}\n"
    )
    res = run_cmhash(["explain", "--config", "c.yaml", "--format", "json", "in.yaml"], cwd=tmp_path)
    (w,) = valid_explain(res.out)["workloads"]
    assert w["selectedBy"] == "include.workloads[0], wave.pusher.com/update-on-config-change"
    text = run_cmhash(["explain", "--config", "c.yaml", "in.yaml"], cwd=tmp_path).out
    assert "  selected by: include.workloads[0], wave.pusher.com/update-on-config-change\n" in text

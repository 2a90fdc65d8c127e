"""Versioned names (--versioned, cmhash.io/versioned): the rename closure (every
reference still resolves), content moves names and metadata does not, idempotence, both
parsers, the safety refusals, --check/--diff/-i, explain, report and KRM."""

from __future__ import annotations

import difflib
import json
import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from conftest import run_cmhash
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from manifests import Config, Stream, Style, load_objects, render, streams, styles, with_config

SUFFIX = re.compile(r"-[2456789bcdfghkmt]{10}\b")
ARGS = ["--no-config", "-q", "--versioned", "--jobs", "--pods"]
ADDED = re.compile(r'^\s*(metadata:|annotations:|checksum/config: "[0-9a-f]{64}")\s*$')
common = settings(
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    deadline=None,
)


def _run(data: bytes, *extra: str) -> bytes:
    res = run_cmhash([*ARGS, *extra, "-"], stdin=data)
    assert res.code == 0, res.stderr
    return res.stdout


def _pod_spec(obj: dict[str, Any]) -> dict[str, Any]:
    if obj["kind"] == "Pod":
        return obj.get("spec") or {}
    t = obj["spec"]
    if obj["kind"] == "CronJob":
        t = t["jobTemplate"]["spec"]
    return t["template"].get("spec") or {}


def references(obj: dict[str, Any]) -> list[tuple[str, str]]:
    """(kind, name) of every ConfigMap/Secret an output workload names."""
    spec = _pod_spec(obj)
    out = []
    for c in spec.get("containers") or []:
        for e in c.get("env") or []:
            for sel, kind in (("configMapKeyRef", "ConfigMap"), ("secretKeyRef", "Secret")):
                ref = (e.get("valueFrom") or {}).get(sel)
                if ref:
                    out.append((kind, ref["name"]))
        for e in c.get("envFrom") or []:
            for sel, kind in (("configMapRef", "ConfigMap"), ("secretRef", "Secret")):
                if e.get(sel):
                    out.append((kind, e[sel]["name"]))
    for v in spec.get("volumes") or []:
        if "configMap" in v:
            out.append(("ConfigMap", v["configMap"]["name"]))
        if "secret" in v:
            out.append(("Secret", v["secret"]["secretName"]))
        for s in (v.get("projected") or {}).get("sources") or []:
            for sel, kind in (("configMap", "ConfigMap"), ("secret", "Secret")):
                if sel in s:
                    out.append((kind, s[sel]["name"]))
    annotations = obj["metadata"].get("annotations") or {}
    for key, kind in (
        ("cmhash.io/extra-configmaps", "ConfigMap"),
        ("cmhash.io/extra-secrets", "Secret"),
    ):
        out.extend((kind, n.strip()) for n in annotations.get(key, "").split(",") if n.strip())
    return out


def _index(data: bytes, default_ns: str | None) -> tuple[set[tuple[str, str, str]], list[Any]]:
    configs, workloads = set(), []
    for obj in load_objects(data):
        ns = obj["metadata"].get("namespace") or default_ns or ""
        if obj["kind"] in ("ConfigMap", "Secret"):
            configs.add((obj["kind"], ns, obj["metadata"]["name"]))
        else:
            workloads.append((ns, obj))
    return configs, workloads


def _given(stream: Stream, style: Style) -> None:
    assume(stream.unique_under(style))


@common
@given(streams(), styles)
def test_rename_closure(stream: Stream, style: Style) -> None:
    """Every reference that found its object in the input finds it, renamed, in the
    output; nothing else changes but names and our annotation; a second run changes
    nothing; both parsers agree."""
    _given(stream, style)
    data = render(stream, style)
    out = _run(data)
    ns = stream.default_namespace(style)
    before, wl_before = _index(data, ns)
    after, wl_after = _index(out, ns)
    assert len(after) == len(before)
    for (wns, old), (_, new) in zip(wl_before, wl_after, strict=True):
        for (kind, name), (kind2, name2) in zip(references(old), references(new), strict=True):
            assert kind == kind2
            if (kind, wns, name) in before:  # it resolved: it still does, renamed
                assert (kind, wns, name2) in after
                assert SUFFIX.sub("", name2) == name
            else:
                assert name2 == name
    old_lines, new_lines = data.decode().splitlines(), out.decode().splitlines()
    removed = [x[1:] for x in difflib.ndiff(old_lines, new_lines) if x.startswith("- ")]
    added = [x[2:] for x in difflib.ndiff(old_lines, new_lines) if x.startswith("+ ")]
    renamed = [a for a in added if not ADDED.match(a)]
    assert sorted(SUFFIX.sub("", a) for a in renamed) == sorted(r[1:] for r in removed)
    assert _run(out) == out
    assert _run(data, "--parser", "exact") == out


@common
@given(streams(), styles, st.data())
def test_content_moves_names_metadata_does_not(stream: Stream, style: Style, data: Any) -> None:
    _given(stream, style)
    i = data.draw(st.integers(0, len(stream.configs) - 1))
    cfg = stream.configs[i]
    names = _names(_run(render(stream, style)))
    relabeled = with_config(stream, i, Config(**{**cfg.__dict__, "labels": {"app": "other"}}))
    assert _names(_run(render(relabeled, style))) == names
    changed_data = dict(cfg.data) | {"k-new": "vchanged"}
    changed = with_config(stream, i, Config(**{**cfg.__dict__, "data": changed_data}))
    after = _names(_run(render(changed, style)))
    key = (cfg.kind, cfg.namespace, cfg.name)
    if key in names and names[key] != cfg.name:  # it was versioned (referenced)
        assert after[key] != names[key]
    others = {k: v for k, v in names.items() if k != key}
    assert {k: v for k, v in after.items() if k != key} == others


def _names(out: bytes) -> dict[tuple[str, str | None, str], str]:
    """(kind, namespace, base name) -> the name in the output."""
    return {
        (o["kind"], o["metadata"].get("namespace"), SUFFIX.sub("", o["metadata"]["name"])): o[
            "metadata"
        ]["name"]
        for o in load_objects(out)
        if o["kind"] in ("ConfigMap", "Secret")
    }


# ------------------------------------------------------------------ examples

CM = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\n{meta}data:\n  k: {value}\n"
DEP = (
    "apiVersion: {api}\nkind: {kind}\nmetadata:\n  name: {name}\n{meta}spec:\n"
    "  template:\n    spec:\n      containers:\n      - name: c\n        image: i\n"
    "        envFrom:\n        - configMapRef: {{name: {target}}}\n"
)


def cm(name: str = "cfg", value: str = "v", meta: str = "") -> str:
    return CM.format(name=name, value=value, meta=meta)


def dep(name: str = "app", target: str = "cfg", meta: str = "", kind: str = "Deployment") -> str:
    api = "batch/v1" if kind == "Job" else "apps/v1"
    return DEP.format(api=api, kind=kind, name=name, target=target, meta=meta)


def stream(*docs: str) -> bytes:
    return "---\n".join(docs).encode()


def run(data: bytes, *args: str, cwd: Path | None = None) -> Any:
    return run_cmhash(["--no-config", *args, "-"], stdin=data, cwd=cwd)


def test_suffix_shape_and_stability() -> None:
    out = run(stream(cm(), dep()), "--versioned").out
    (name,) = re.findall(r"^  name: (cfg-\S+)$", out, re.M)
    assert re.fullmatch(r"cfg-[2456789bcdfghkmt]{10}", name)
    # metadata, key order and quoting do not move it; the data does
    same = run(stream(cm(value="'v'", meta="  labels: {a: b}\n"), dep()), "--versioned").out
    assert name in same
    assert name not in run(stream(cm(value="w"), dep()), "--versioned").out


def test_secret_suffix_follows_the_secret_key(tmp_path: Path) -> None:
    secret = "apiVersion: v1\nkind: Secret\nmetadata:\n  name: s\nstringData:\n  k: hunter2\n"
    d = dep(target="s").replace("configMapRef", "secretRef")
    plain = run(stream(secret, d), "--versioned").out
    keyed = run_cmhash(
        ["--no-config", "--versioned", "--secret-key-env", "K", "-"],
        stdin=stream(secret, d),
        env={"K": "k1"},
    ).out
    assert re.findall(r"^  name: (s-\S+)$", plain, re.M) != re.findall(
        r"^  name: (s-\S+)$", keyed, re.M
    )
    assert "hunter2" not in run(stream(secret, d), "--versioned", "--diff").out


def test_a_name_too_long_is_refused_at_its_position() -> None:
    long = "a" * 250
    res = run(stream(cm(name=long), dep(target=long)), "--versioned")
    assert res.code == 2
    assert res.stderr.startswith("cmhash: <stdin>:4:9: cannot version ConfigMap")  # the name
    assert "261 characters with its suffix, over Kubernetes' 253" in res.stderr


def test_a_name_taken_by_another_object_is_refused() -> None:
    first = run(stream(cm(), dep()), "--versioned").out
    (new,) = re.findall(r"^  name: (cfg-\S+)$", first, re.M)
    res = run(stream(cm(), cm(name=new, value="other"), dep()), "--versioned")
    assert res.code == 2
    assert f"the input already has a ConfigMap named {new!r}" in res.stderr


def test_opted_in_object_used_by_a_job_is_refused() -> None:
    meta = '  annotations:\n    cmhash.io/versioned: "true"\n'
    res = run(stream(cm(meta=meta), dep(kind="Job")))
    assert res.code == 2
    assert "Job/app references it and its pod template is immutable (--jobs" in res.stderr
    assert run(stream(cm(meta=meta), dep(kind="Job")), "--jobs").code == 0


def test_opted_out_workload_keeps_the_object_unversioned() -> None:
    skip = '  annotations:\n    cmhash.io/skip: "true"\n'
    res = run(stream(cm(), dep(), dep(name="legacy", meta=skip)), "--versioned")
    assert res.code == 0
    assert "name: cfg\n" in res.out
    assert "[not-versioned]" in res.stderr and "Deployment/legacy" in res.stderr


def test_image_pull_secrets_are_renamed_but_do_not_version() -> None:
    reg = "apiVersion: v1\nkind: Secret\nmetadata:\n  name: reg\n{meta}stringData:\n  k: v\n"
    pull = dep().replace(
        "      containers:", "      imagePullSecrets: [{name: reg}]\n      containers:"
    )
    # only pulled: rotating registry credentials rolls nothing
    out = run(stream(reg.format(meta=""), cm(), pull), "--versioned").out
    assert "name: reg\n" in out and "{name: reg}" in out
    # versioned for another reason: the pull reference follows
    meta = '  annotations:\n    cmhash.io/versioned: "true"\n'
    out = run(stream(reg.format(meta=meta), cm(), pull), "--versioned").out
    (new,) = re.findall(r"^  name: (reg-\S+)$", out, re.M)
    assert "{name: " + new + "}" in out


def test_check_diff_and_in_place(tmp_path: Path) -> None:
    f = tmp_path / "m.yaml"
    f.write_bytes(stream(cm(), dep()))
    args = ["--no-config", "--versioned"]
    assert run_cmhash([*args, "--check", str(f)]).code == 1
    diff = run_cmhash([*args, "--diff", str(f)])
    assert re.search(r"^-  name: cfg$", diff.out, re.M)
    assert re.search(r"^\+  name: cfg-[2456789bcdfghkmt]{10}$", diff.out, re.M)
    assert run_cmhash([*args, "-i", str(f)]).code == 0
    assert run_cmhash([*args, "--check", str(f)]).code == 0
    # data edited in place afterwards (a pre-commit flow): renamed again, not stacked
    f.write_text(f.read_text().replace("k: v", "k: w"))
    assert run_cmhash([*args, "-i", str(f)]).code == 0
    assert len(re.findall(r"cfg-[2456789bcdfghkmt]{10}", f.read_text())) == 2
    assert not re.search(r"cfg(-[2456789bcdfghkmt]{10}){2}", f.read_text())


def test_explain_shows_versioned_names() -> None:
    from test_declared import valid_explain

    res = run_cmhash(
        ["explain", "--no-config", "--versioned", "--format", "json", "-"],
        stdin=stream(cm(), dep()),
    )
    doc = valid_explain(res.out)
    (ref,) = doc["workloads"][0]["references"]
    assert ref["name"] == "cfg" and ref["versionedAs"].startswith("cfg-")
    assert doc["configs"][0]["versionedAs"] == ref["versionedAs"]
    text = run_cmhash(["explain", "--no-config", "--versioned", "-"], stdin=stream(cm(), dep()))
    assert f"ConfigMap/cfg -> {ref['versionedAs']} via envFrom" in text.out


@pytest.mark.parametrize("as_outputs", [False, True])
def test_report_says_the_new_name(tmp_path: Path, as_outputs: bool) -> None:
    """Renders (or cmhash's own outputs) on both sides: matched by base name."""
    old, new = stream(cm(), dep()), stream(cm(value="w"), dep())
    if as_outputs:
        old, new = run(old, "--versioned").stdout, run(new, "--versioned").stdout
    (tmp_path / "old.yaml").write_bytes(old)
    (tmp_path / "new.yaml").write_bytes(new)
    args = ["report", "--no-config", "--versioned", "old.yaml", "new.yaml"]
    res = run_cmhash([*args, "--format", "json"], cwd=tmp_path)
    assert res.code == 0, res.stderr
    data = json.loads(res.out)
    (w,) = data["restart"]
    (cause,) = w["causes"]
    assert (cause["name"], cause["change"], cause["keys"]) == ("cfg", "changed", ["k"])
    assert re.fullmatch(r"cfg-[2456789bcdfghkmt]{10}", cause["now"])
    (c,) = data["configs"]
    assert c["versionedAs"] == cause["now"]
    text = run_cmhash([*args, "--format", "text"], cwd=tmp_path).out
    assert f"because of ConfigMap/cfg is now {cause['now']} [k]" in text


def test_keep_marks_merge_existing_sync_options() -> None:
    meta = "  annotations:\n    argocd.argoproj.io/sync-options: Prune=true,Replace=true\n"
    out = run(stream(cm(meta=meta), dep()), "--versioned", "--versioned-keep").out
    assert 'argocd.argoproj.io/sync-options: "Replace=true,Prune=false"' in out
    assert 'helm.sh/resource-policy: "keep"' in out
    assert run(stream(cm(meta=meta), dep()), "--versioned").out.count("Prune=true") == 1


def test_immutable_replaces_false_and_keeps_true() -> None:
    immutable_false = cm().replace("\ndata:", "\nimmutable: false\ndata:")
    out = run(stream(immutable_false, dep()), "--versioned", "--versioned-immutable").out
    assert "immutable: true\n" in out and "immutable: false" not in out
    again = run(out.encode(), "--versioned", "--versioned-immutable").out
    assert again == out


@pytest.mark.parametrize("empty", ["immutable:", "immutable: ", "immutable: # unset"])
def test_immutable_written_after_an_empty_value(empty: str) -> None:
    """``immutable:`` with no value (null: the API server's default, false) gets ``true``
    written after its colon, the rest of the line kept."""
    data = stream(cm().replace("\ndata:", f"\n{empty}\ndata:"), dep())
    out = run(data, "--versioned", "--versioned-immutable").out
    assert out.replace(empty.replace("immutable:", "immutable: true", 1), "", 1) == (
        run(data, "--versioned").out.replace(empty, "", 1)
    )


def test_config_file_and_krm_function_config(tmp_path: Path) -> None:
    (tmp_path / ".cmhash.yaml").write_text("versioned: true\nversionedImmutable: true\n")
    res = run_cmhash(["-"], stdin=stream(cm(), dep()), cwd=tmp_path)
    assert re.search(r"name: cfg-[2456789bcdfghkmt]{10}\n", res.out)
    assert "immutable: true" in res.out
    resource_list = {
        "apiVersion": "config.kubernetes.io/v1",
        "kind": "ResourceList",
        "functionConfig": {"apiVersion": "v1", "kind": "ConfigMap", "data": {"versioned": "true"}},
        "items": [yaml.safe_load(cm()), yaml.safe_load(dep())],
    }
    res = run_cmhash(["-"], stdin=yaml.safe_dump(resource_list).encode(), cwd=tmp_path)
    assert res.code == 0, res.stderr
    assert re.search(r"name: cfg-[2456789bcdfghkmt]{10}\n", res.out)


def test_schema_refuses_a_non_boolean(tmp_path: Path) -> None:
    (tmp_path / ".cmhash.yaml").write_text("versioned: yes please\n")
    res = run_cmhash(["-"], stdin=stream(cm(), dep()), cwd=tmp_path)
    assert res.code == 2
    assert "invalid configuration at versioned" in res.stderr


def test_annotation_value_must_be_true_or_false() -> None:
    meta = '  annotations:\n    cmhash.io/versioned: "sometimes"\n'
    res = run(stream(cm(meta=meta), dep()))
    assert res.code == 2
    assert 'cmhash.io/versioned must be "true" or "false"' in res.stderr


@pytest.mark.parametrize(
    "hook", ["helm.sh/hook: post-install,post-upgrade", "argocd.argoproj.io/hook: PostSync"]
)
def test_post_hooks_are_created_anew_so_they_follow(hook: str) -> None:
    """Helm and Argo CD delete a hook before creating it again: its template may change."""
    job = dep(kind="Job", name="migrate", meta=f"  annotations:\n    {hook}\n")
    out = run(stream(cm(), job, dep()), "--versioned").out
    (new,) = re.findall(r"^  name: (cfg-\S+)$", out, re.M)
    assert out.count("{name: " + new + "}") == 2


@pytest.mark.parametrize(
    "hook", ["helm.sh/hook: pre-install,pre-upgrade", "argocd.argoproj.io/hook: PreSync"]
)
def test_pre_hooks_keep_the_object_unversioned(hook: str) -> None:
    """A pre-upgrade/PreSync hook runs before the new version would exist."""
    job = dep(kind="Job", name="migrate", meta=f"  annotations:\n    {hook}\n")
    res = run(stream(cm(), job, dep()), "--versioned")
    assert res.code == 0
    assert "name: cfg\n" in res.out and "cfg-" not in res.out
    assert "[not-versioned]" in res.stderr and "runs before the release" in res.stderr


# ------------------------------------------------------------------ review regressions


def test_declared_items_are_renamed_in_their_own_namespace_only() -> None:
    shared = (
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cfg, namespace: shared, "
        'annotations: {cmhash.io/versioned: "false"}}\ndata: {a: "1"}\n'
    )
    mine = (
        'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cfg, namespace: app}\ndata: {a: "2"}\n'
    )
    web = (
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, namespace: app, "
        'annotations: {cmhash.io/extra-configmaps: "shared/cfg, cfg"}}\n'
        "spec: {template: {spec: {containers: [{name: c, envFrom: [{configMapRef: {name: cfg}}]}]}}}\n"
    )
    out = run(stream(shared, mine, web), "--versioned").out
    m = re.search(r'extra-configmaps: "shared/cfg, (cfg-[2456789bcdfghkmt]{10})"', out)
    assert m is not None, out
    assert f"{{name: {m.group(1)}}}" in out
    assert run(out.encode(), "--versioned").out == out


def test_a_dotted_name_in_a_reloader_list() -> None:
    dotted = cm(name="app.cfg")
    for value, ok in (("app\\.cfg", True), ("'app\\.cfg'", True), ('"app.cfg"', False)):
        d = dep(
            target="app.cfg",
            meta=f"  annotations:\n    configmap.reloader.stakater.com/reload: {value}\n",
        )
        res = run(stream(dotted, d), "--versioned")
        assert res.code == (0 if ok else 2), (value, res.stderr)
        if ok:
            assert re.search(r"app\\\.cfg-[2456789bcdfghkmt]{10}", res.out)
            assert run(res.stdout, "--versioned").out == res.out
        else:  # a regex that also matches appxcfg: narrowing it is refused
            assert "would not match" in res.stderr


def test_a_tagged_name_is_refused_not_a_bug() -> None:
    for data in (
        stream(cm().replace("name: cfg", "name: !!str cfg"), dep()),
        stream(cm(), dep().replace("{name: cfg}", "{name: !!str cfg}")),
    ):
        res = run(data, "--versioned")
        assert res.code == 2 and "explicit tag" in res.stderr


def test_two_objects_that_would_share_a_name_are_refused() -> None:
    # two versions of cfg with the same content (no cfg itself: else each is its own
    # name, tests/plan/test_versioned_names.py)
    data = stream(
        cm(name="cfg-4444444444"),
        cm(name="cfg-2222222222"),
        dep(target="cfg-4444444444"),
        dep(name="b", target="cfg-2222222222"),
    )
    res = run(data, "--versioned")
    assert res.code == 2 and "both would be named" in res.stderr


def test_check_names_the_renames() -> None:
    meta = '  annotations:\n    cmhash.io/versioned: "true"\n'
    res = run(stream(cm(meta=meta)), "--check")
    assert res.code == 1
    assert "would rename <stdin>:4: ConfigMap cfg -> cfg-" in res.stderr
    assert "1 object renamed in 1 file would be updated" in res.stderr


def test_report_versioned_immutable_is_no_error(tmp_path: Path) -> None:
    old = stream(cm().replace("\ndata:", "\nimmutable: true\ndata:"), dep())
    (tmp_path / "old.yaml").write_bytes(old)
    (tmp_path / "new.yaml").write_bytes(old.replace(b"k: v", b"k: w"))
    args = ["report", "--no-config", "--fail-on", "error", "old.yaml", "new.yaml"]
    assert run_cmhash([*args, "--versioned"], cwd=tmp_path).code == 0
    assert run_cmhash(args, cwd=tmp_path).code == 1  # edited in place: refused


def test_report_never_shows_a_secret_suffix(tmp_path: Path) -> None:
    secret = "apiVersion: v1\nkind: Secret\nmetadata:\n  name: s\nstringData:\n  k: {v}\n"
    d = dep(target="s").replace("configMapRef", "secretRef")
    (tmp_path / "old.yaml").write_bytes(stream(secret.format(v="a"), d))
    (tmp_path / "new.yaml").write_bytes(stream(secret.format(v="b"), d))
    res = run_cmhash(
        ["report", "--no-config", "--versioned", "--format", "json", "old.yaml", "new.yaml"],
        cwd=tmp_path,
    )
    data = json.loads(res.out)
    assert data["restart"][0]["causes"][0]["now"] == "s-…"
    assert not re.search(r"s-[2456789bcdfghkmt]{10}", res.out)


def test_unknown_reference_scan_is_linear_and_precise() -> None:
    pairs = [
        s for i in range(400) for s in (cm(name=f"cfg{i}"), dep(name=f"app{i}", target=f"cfg{i}"))
    ]
    res = run(stream(*pairs), "--versioned")
    assert res.code == 0 and "unknown-reference" not in res.stderr
    volume = dep().replace(
        "        envFrom:\n        - configMapRef: {name: cfg}\n",
        "      volumes:\n      - configMap:\n          name: cfg\n        name: cfg\n",
    )
    declared = dep(name="b", meta="  annotations:\n    cmhash.io/extra-configmaps: cfg\n")
    res = run(stream(cm(), volume, declared), "--versioned")
    assert "unknown-reference" not in res.stderr, res.stderr
    sa = "apiVersion: v1\nkind: ServiceAccount\nmetadata: {name: sa}\nsecrets:\n- name: cfg\n"
    ing = "apiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata: {name: i}\nspec:\n  tls: [{secretName: cfg}]\n"
    res = run(stream(cm(), dep(), sa, ing), "--versioned")
    assert res.stderr.count("[unknown-reference]") == 2


def test_a_pod_spec_reference_to_another_namespaces_object_is_no_unknown_reference() -> None:
    """cmhash resolved it (to an object of the same name in its own namespace, not
    renamed): no warning to 'update' it to a name that namespace does not have."""
    kept = cm(meta='  namespace: b\n  annotations: {cmhash.io/versioned: "false"}\n')
    data = stream(
        cm(meta="  namespace: a\n"),
        dep(meta="  namespace: a\n"),
        kept,
        dep(meta="  namespace: b\n"),
    )
    res = run(data, "--versioned")
    assert res.code == 0 and "unknown-reference" not in res.stderr, res.stderr
    assert res.out.count("configMapRef: {name: cfg}") == 1


def test_keep_and_immutable_leave_correct_marks_alone() -> None:
    meta = (
        "  annotations:\n    helm.sh/resource-policy: keep\n"
        "    argocd.argoproj.io/sync-options: Prune=false, Replace=true\n"
        "    argocd.argoproj.io/compare-options: IgnoreExtraneous\n"
        "    kustomize.toolkit.fluxcd.io/prune: disabled\n"
    )
    data = stream(cm(meta=meta).replace("\ndata:", "\nimmutable: yes\ndata:"), dep())
    out = run(data, "--versioned", "--versioned-keep", "--versioned-immutable").out
    assert meta in out and "immutable: yes\n" in out


def test_newcomer_regressions(tmp_path: Path) -> None:
    from cmhash.cli.main import cli
    from cmhash.read.inputs import COMMANDS

    assert set(cli.commands) - {"inject"} == COMMANDS
    res = run_cmhash(["--no-config", "explain", "m.yaml"], cwd=tmp_path)
    assert res.code == 2 and "a command comes first: cmhash explain" in res.stderr
    # marks without anything versioned: said, not silent
    res = run(stream(cm(), dep()), "--versioned-keep")
    assert "note: --versioned-keep and --versioned-immutable mark versioned objects only" in (
        res.stderr
    )
    # a Secret's suffix never in findings
    # (opted in: a Secret an Ingress names is otherwise not versioned)
    secret = (
        "apiVersion: v1\nkind: Secret\nmetadata:\n  name: db\n  annotations:\n"
        '    cmhash.io/versioned: "true"\nstringData:\n  k: v\n'
    )
    d = dep(target="db").replace("configMapRef", "secretRef")
    ing = "apiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata: {name: i}\nspec:\n  tls: [{secretName: db}]\n"
    res = run(stream(secret, d, ing), "--versioned")
    assert "versioned as 'db-…'" in res.stderr
    assert not re.search(r"db-[2456789bcdfghkmt]{10}", res.stderr)


OPERATORS = Path(__file__).parent.parent / "fixtures" / "operators-by-name"


@pytest.mark.parametrize("name", sorted(p.name for p in OPERATORS.glob("*.yaml")))
def test_an_object_an_operators_resource_names_keeps_its_name(name: str) -> None:
    """Operators' resources (no CRDs in the input) naming Secrets and ConfigMaps a
    Deployment also uses: CloudNativePG's superuserSecret ({name}) and serverTLSSecret
    (a string), KEDA's secretTargetRef ({parameter, name, key}), Strimzi's secretName,
    External Secrets' PushSecret, cert-manager's Issuer (ca.secretName,
    acme.privateKeySecretRef), Istio's DestinationRule credentialName, Traefik,
    Contour, Argo Workflows, Kyverno, and pod templates inside Tekton, KEDA ScaledJob
    and Argo Workflows resources. Each controller reads the object by the name written
    there: each keeps its name, said at the field (was: renamed, with a warning at
    the very field that still named the old one)."""
    text = (OPERATORS / name).read_text()
    res = run_cmhash(["--no-config", "--versioned", "-"], stdin=text.encode())
    assert res.code == 0, res.stderr
    assert "[unknown-reference]" not in res.stderr, res.stderr

    def names(stream: str) -> list[tuple[str, str]]:
        docs = [d for d in yaml.safe_load_all(stream) if d]
        return [
            (d["kind"], d["metadata"]["name"]) for d in docs if d["kind"] in ("ConfigMap", "Secret")
        ]

    assert names(res.out) == names(text)
    kept = res.stderr.count("[not-versioned]")
    assert kept and kept == len([line for line in res.stderr.splitlines() if line])

"""cmhash report tells the truth where the plan used to be wrong with exit 0: replicas an
autoscaler owns (a range) or nobody says (unknown offline, never 1), a selector that
does not match the template's labels, changes that release held-back pods, scaling from
and to zero, objects their engine re-creates (Flux force, Argo CD Force=true) or never
applies (Argo CD Skip), Reloader restarting what cmhash does not annotate, and an empty
side. tests/fixtures/report-truth/{old,new}.yaml hold one workload per case (goldens
in every format); the rest are real shapes: a chart made by ``helm create`` with its
HorizontalPodAutoscaler, Kubernetes' MySQL StatefulSet rolled out in two merge requests,
a microservices-demo Deployment whose selector or labels are renamed."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml
from conftest import CORPUS, ROOT, run_cmhash
from test_report import assert_no_secret

CASE = ROOT / "tests" / "fixtures" / "report-truth"
GOLDENS = {"json": "expected.json", "markdown": "expected.md", "text": "expected.txt"}
SECRETS = ["truth-db-password-0001", "truth-db-password-0002"]


def report(*args: str, cwd: Path = CASE, stdin: bytes = b"") -> tuple[int, str, str]:
    res = run_cmhash(["report", "--no-config", *args], cwd=cwd, stdin=stdin)
    return res.code, res.out, res.stderr


def by_name(data: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {f"{w['kind']}/{w['name']}": w for g in ("restart", "notRestarting") for w in data[g]}


@pytest.fixture(scope="module")
def truth() -> dict[str, Any]:
    code, out, err = report("old.yaml", "new.yaml", "--format", "json")
    assert code == 0, err
    return json.loads(out)


@pytest.mark.parametrize("fmt", sorted(GOLDENS))
def test_golden(fmt: str, update_goldens: bool) -> None:
    code, out, err = report("old.yaml", "new.yaml", "--format", fmt)
    assert code == 0 and err == "", err
    expected = CASE / GOLDENS[fmt]
    if update_goldens:
        expected.write_text(out)
    assert out == expected.read_text()
    assert_no_secret(out, SECRETS)


def test_json_follows_the_schema(truth: dict[str, Any]) -> None:
    import jsonschema

    schema = json.loads((ROOT / "src" / "cmhash" / "schemas" / "report.schema.json").read_text())
    jsonschema.validate(truth, schema)


# ---------------------------------------------------- 1. replicas an autoscaler owns


def test_a_partition_reads_the_autoscalers_range_never_1(truth: dict[str, Any]) -> None:
    # the issue's case: partition 1, no spec.replicas, an HPA with minReplicas 3: pods
    # 1 and 2 (and up to 4 at the HPA's maximum) roll; with the absent field taken as 1
    # the report said "no pod is updated"
    pg = by_name(truth)["StatefulSet/pg"]
    assert (pg["rule"], pg["outcome"]) == ("statefulset-partition", "partial")
    assert pg in truth["restart"]
    assert "ordinals 1..4 at most (replicas 3..5 from HorizontalPodAutoscaler/pg)" in pg["how"]


def test_keda_defaults_a_range_from_zero(truth: dict[str, Any]) -> None:
    consumer = by_name(truth)["Deployment/consumer"]
    assert consumer["how"] == "rolling update (replicas 0..100 from ScaledObject/consumer)"


def test_nothing_says_the_count_is_unknown_offline(truth: dict[str, Any]) -> None:
    search = by_name(truth)["StatefulSet/search"]
    assert search["rule"] == "statefulset-partition"
    assert "ordinals ≥ 2 (replicas unknown offline: spec.replicas is absent" in search["how"]


def _helm() -> str:
    helm = shutil.which("helm") or str(ROOT / ".tools" / "bin" / "helm")
    if not Path(helm).exists():
        pytest.skip("helm is installed by scripts/get-tools.sh")
    return helm


def test_a_helm_create_chart_with_its_hpa(tmp_path: Path) -> None:
    """The chart ``helm create`` makes leaves spec.replicas out when autoscaling is on
    (as the HPA documentation advises) and renders an HPA 1..100 for it: the rollout
    names the range it used."""
    helm = _helm()
    subprocess.run([helm, "create", "shop"], cwd=tmp_path, check=True, capture_output=True)
    for name, tag in (("old.yaml", "1.26"), ("new.yaml", "1.27")):
        values = ["--set", "autoscaling.enabled=true", "--set", f"image.tag={tag}"]
        out = subprocess.run(
            [helm, "template", "shop", "./shop", *values],
            cwd=tmp_path,
            check=True,
            capture_output=True,
            text=True,
        ).stdout
        assert "kind: HorizontalPodAutoscaler" in out and "replicas:" not in out
        (tmp_path / name).write_text(out)
    code, out, err = report("old.yaml", "new.yaml", "--format", "json", cwd=tmp_path)
    assert code == 0, err
    (shop,) = json.loads(out)["restart"]
    assert (shop["kind"], shop["rule"]) == ("Deployment", "deployment-rolls")
    assert shop["how"] == "rolling update (replicas 1..100 from HorizontalPodAutoscaler/shop)"


# --------------------------------------------------------------------- 2. selectors


def test_a_label_renamed_alone_is_refused_with_the_api_servers_words(
    truth: dict[str, Any],
) -> None:
    frontend = by_name(truth)["Deployment/frontend"]
    assert (frontend["rule"], frontend["outcome"]) == ("selector-mismatch", "refused")
    assert frontend["reason"].startswith("`selector` does not match template `labels`: ")
    assert frontend in truth["notRestarting"]
    cart = by_name(truth)["Deployment/cart"]  # its selector changed too: both said
    assert cart["rule"] == "selector-mismatch"
    assert "and spec.selector cannot change" in cart["reason"]
    assert truth["summary"]["refused"] == 2


def _frontend(tmp_path: Path, *edits: tuple[str, str]) -> dict[str, Any]:
    """microservices-demo's frontend Deployment, edited in NEW."""
    docs = (CORPUS / "microservices-demo/release/kubernetes-manifests.yaml").read_text()
    doc = next(
        d for d in docs.split("\n---\n") if "kind: Deployment" in d and "name: frontend\n" in d
    )
    new = doc
    for a, b in edits:
        assert a in new, a
        new = new.replace(a, b)
    (tmp_path / "old.yaml").write_text(doc)
    (tmp_path / "new.yaml").write_text(new)
    code, out, err = report("old.yaml", "new.yaml", "--format", "json", cwd=tmp_path)
    assert code == 0, err
    return json.loads(out)


def test_a_selector_rename_on_a_real_deployment(tmp_path: Path) -> None:
    labels = (
        "    metadata:\n      labels:\n        app: frontend\n",
        "    metadata:\n      labels:\n        app: web\n",
    )
    selector = ("      app: frontend\n  template:", "      app: web\n  template:")
    # the template's label alone: the selector no longer matches it
    (w,) = _frontend(tmp_path, labels)["notRestarting"]
    assert (w["rule"], w["outcome"]) == ("selector-mismatch", "refused")
    # both renamed: they match, and the selector is immutable
    (w,) = _frontend(tmp_path, labels, selector)["notRestarting"]
    assert (w["rule"], w["outcome"]) == ("immutable-field", "refused")
    assert w["reason"].startswith("spec.selector cannot change")
    # both renamed under Flux's force: deleted and created again, every pod at once
    forced = (
        "  labels:\n    app: frontend\nspec:",
        "  labels:\n    app: frontend\n    kustomize.toolkit.fluxcd.io/force: enabled\nspec:",
    )
    data = _frontend(tmp_path, labels, selector, forced)
    (w,) = data["restart"]
    assert (w["rule"], w["outcome"]) == ("recreated", "re-created")
    assert "Flux (kustomize.toolkit.fluxcd.io/force: enabled) deletes the Deployment" in w["how"]


def test_selector_matching_as_apimachinery_decides() -> None:
    from cmhash.knowledge.labels import selector_matches

    labels = {"app": "web", "tier": "front"}
    cases = [
        ({"matchLabels": {"app": "web"}}, True),
        ({"matchLabels": {"app": "api"}}, False),
        ({"matchExpressions": [{"key": "tier", "operator": "In", "values": ["front"]}]}, True),
        ({"matchExpressions": [{"key": "tier", "operator": "NotIn", "values": ["front"]}]}, False),
        ({"matchExpressions": [{"key": "zone", "operator": "NotIn", "values": ["a"]}]}, True),
        ({"matchExpressions": [{"key": "app", "operator": "Exists"}]}, True),
        ({"matchExpressions": [{"key": "app", "operator": "DoesNotExist"}]}, False),
        ({"matchExpressions": [{"key": "app", "operator": "In", "values": []}]}, None),
        ({"matchExpressions": [{"key": "app", "operator": "Exists", "values": ["x"]}]}, None),
        ({"matchExpressions": [{"key": "app", "operator": "Gt", "values": ["1"]}]}, None),
        ({}, True),  # labels.Everything()
        (None, False),  # labels.Nothing()
    ]
    for selector, want in cases:
        assert selector_matches(selector, labels) is want, selector


# -------------------------------------------------- 3. changes that release pods


def test_a_staged_statefulset_rollout_over_two_merge_requests(tmp_path: Path) -> None:
    """Kubernetes' MySQL StatefulSet (3 replicas): the first merge request bumps the
    image behind partition 2 (ordinal 2 rolls); the second only lowers the partition to
    0: ordinals 0 and 1, held back on the old image, roll now. The report said "No
    workload will restart" for the second."""
    base = (
        CORPUS / "k8s-website/content/en/examples/application/mysql/mysql-statefulset.yaml"
    ).read_text()
    staged = base.replace(
        "  replicas: 3\n",
        "  replicas: 3\n  updateStrategy:\n    rollingUpdate:\n      partition: 2\n",
        1,
    ).replace("image: mysql:5.7", "image: mysql:8.0")
    released = staged.replace("      partition: 2\n", "      partition: 0\n")
    assert staged != base and released != staged
    for name, text in (("main.yaml", base), ("mr1.yaml", staged), ("mr2.yaml", released)):
        (tmp_path / name).write_text(text)
    code, out, _ = report("main.yaml", "mr1.yaml", "--format", "json", cwd=tmp_path)
    (mysql,) = json.loads(out)["restart"]
    assert (mysql["rule"], mysql["outcome"]) == ("statefulset-partition", "partial")
    code, out, _ = report("mr1.yaml", "mr2.yaml", "--format", "json", cwd=tmp_path)
    data = json.loads(out)
    (mysql,) = data["restart"]
    assert (mysql["rule"], mysql["outcome"]) == ("statefulset-released", "partial")
    assert "lowered from 2 to 0" in mysql["how"] and "ordinals 0..1 (replicas 3)" in mysql["how"]
    assert mysql["causes"] == [
        {
            "type": "released",
            "field": "spec.updateStrategy.rollingUpdate.partition",
            "change": "changed",
            "old": "2",
            "new": "0",
        }
    ]
    assert data["summary"]["text"].startswith("1 workload will restart")
    code, _, err = report("mr1.yaml", "mr2.yaml", "--max-restarts", "0", cwd=tmp_path)
    assert code == 1 and err == "cmhash: 1 workload restarts (budget 0)\n"


def test_released_rules(truth: dict[str, Any]) -> None:
    w = by_name(truth)
    assert w["StatefulSet/kafka"]["how"].endswith("ordinals 1..2 (replicas 5)")
    assert w["Deployment/reports"]["rule"] == "deployment-resumed"
    assert w["DaemonSet/node-agent"]["rule"] == "daemonset-released"
    for name in ("StatefulSet/kafka", "Deployment/reports", "DaemonSet/node-agent"):
        assert w[name] in truth["restart"]
        assert [c["type"] for c in w[name]["causes"]] == ["released"]


# ------------------------------------------------------ 4. scaling from and to zero


def test_scale_from_and_to_zero_are_no_restarts(truth: dict[str, Any]) -> None:
    w = by_name(truth)
    worker, archive = w["Deployment/worker"], w["StatefulSet/archive"]
    assert (worker["rule"], worker["outcome"]) == ("deployment-scale-from-zero", "starts")
    assert worker["reason"].startswith("scaled from 0 to replicas 3: starts 3 pods")
    assert (archive["rule"], archive["outcome"]) == ("statefulset-scale-to-zero", "stops")
    assert archive["reason"].startswith("scaled to 0 (was replicas 2): stops every pod")
    assert worker in truth["notRestarting"] and archive in truth["notRestarting"]


def test_the_budget_does_not_count_a_scale_from_zero(tmp_path: Path) -> None:
    def side(replicas: int, level: str) -> str:
        return (
            f"apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: cfg}}\ndata: {{LEVEL: {level}}}\n"
            "---\napiVersion: apps/v1\nkind: Deployment\nmetadata: {name: worker}\nspec:\n"
            f"  replicas: {replicas}\n  selector: {{matchLabels: {{app: w}}}}\n  template:\n"
            "    metadata: {labels: {app: w}}\n    spec:\n      containers:\n"
            "      - {name: w, image: w:1, envFrom: [{configMapRef: {name: cfg}}]}\n"
        )

    for old, new in ((0, 3), (3, 0)):
        (tmp_path / "o.yaml").write_text(side(old, "info"))
        (tmp_path / "n.yaml").write_text(side(new, "debug"))
        code, out, err = report("o.yaml", "n.yaml", "--max-restarts", "0", cwd=tmp_path)
        assert (code, err) == (0, ""), (old, new)
        assert out.startswith("### cmhash: No workload will restart")


# -------------------------------------------------- 5. re-created, never applied


def test_what_an_engine_recreates_or_skips(truth: dict[str, Any]) -> None:
    w = by_name(truth)
    assert (w["Deployment/gateway"]["outcome"], w["Deployment/gateway"]["rule"]) == (
        "re-created",
        "recreated",
    )
    assert w["Deployment/gateway"] in truth["restart"]  # every pod at once: counted
    job = w["Job/db-migrate"]
    assert (job["rule"], job["outcome"]) == ("job-recreated", "next run")
    assert "Argo CD (argocd.argoproj.io/sync-options: Replace=true,Force=true)" in job["reason"]
    pod = w["Pod/toolbox"]
    assert (pod["rule"], pod["outcome"]) == ("pod-recreated", "re-created")
    sandbox = w["Deployment/sandbox"]
    assert (sandbox["rule"], sandbox["outcome"]) == ("argocd-skip", "none")


def test_force_options_as_their_engines_read_them() -> None:
    from cmhash.knowledge.engines import forced_by, skipped_by_argocd

    def obj(**meta: Any) -> dict[str, Any]:
        return {"metadata": meta}

    assert forced_by(obj(annotations={"kustomize.toolkit.fluxcd.io/force": "ENABLED"}))
    assert forced_by(obj(labels={"kustomize.toolkit.fluxcd.io/force": "enabled"}))
    assert not forced_by(obj(annotations={"kustomize.toolkit.fluxcd.io/force": "true"}))
    sync = "argocd.argoproj.io/sync-options"
    assert forced_by(obj(annotations={sync: "Force=true"}))
    assert forced_by(obj(annotations={sync: " Replace=true , Force=true "}))
    assert not forced_by(obj(annotations={sync: "Replace=true"}))  # a PUT: refused too
    assert not forced_by(obj(annotations={sync: "Force=true,ServerSideApply=true"}))
    hook = "argocd.argoproj.io/hook"
    assert skipped_by_argocd(obj(annotations={hook: "Skip"}))
    assert not skipped_by_argocd(obj(annotations={hook: "Skip,PreSync"}))  # a PreSync hook
    assert skipped_by_argocd(obj(annotations={hook: "Skip,Unknown"}))  # (NewHookType drops it)


# ------------------------------------------------------------- 6. no Secret value


def test_a_secret_value_is_masked_in_every_form_a_reader_could_decode(tmp_path: Path) -> None:
    import base64

    def side(n: int) -> str:
        value = f"s3cr3t-value-{n:04}"
        cert = f"-----BEGIN KEY-----\nline-one-of-key-{n}\nline-two-of-key-{n}\n-----END KEY-----"
        raw, pem = value.encode(), cert.encode()
        forms = {
            "STD": base64.b64encode(raw).decode(),
            "URL": base64.urlsafe_b64encode(raw + b"\xfb\xff").decode(),
            "BARE": base64.b64encode(raw).decode().rstrip("="),
            "PLAIN": value,
        }
        binary = raw + b"\xfb\xff"
        data = "".join(f"  {k}: {json.dumps(v)}\n" for k, v in forms.items())
        wrapped = base64.b64encode(pem * 3).decode()
        lines = "\n".join(wrapped[i : i + 76] for i in range(0, len(wrapped), 76))
        body = "\n".join("    " + ln for ln in lines.splitlines())
        return (
            "apiVersion: v1\nkind: Secret\nmetadata: {name: creds}\ntype: Opaque\ndata:\n"
            f"  value: {base64.b64encode(raw).decode()}\n"
            f"  blob: {base64.b64encode(binary).decode()}\n"
            f"  cert: {base64.b64encode(pem * 3).decode()}\n"
            f"---\napiVersion: v1\nkind: ConfigMap\nmetadata: {{name: copies}}\ndata:\n{data}"
            f"  WRAPPED: |\n{body}\n"
            f"  LINE: {json.dumps('line-one-of-key-' + str(n))}\n"
            "---\napiVersion: apps/v1\nkind: Deployment\nmetadata: {name: app}\nspec:\n"
            "  selector: {matchLabels: {app: a}}\n  template:\n    metadata: {labels: {app: a}}\n"
            "    spec:\n      containers:\n      - name: app\n        image: app:1\n"
            f"        args: [--token={forms['URL']}]\n        env:\n"
            f"        - {{name: TOKEN, value: {json.dumps(forms['STD'])}}}\n"
            "        envFrom: [{configMapRef: {name: copies}}]\n"
        ), [value, *forms.values(), *lines.splitlines(), f"line-one-of-key-{n}"]

    (tmp_path / "o.yaml").write_text(side(1)[0])
    (tmp_path / "n.yaml").write_text(side(2)[0])
    leaks = side(1)[1] + side(2)[1]
    for fmt in ("json", "markdown", "text", "codequality"):
        code, out, err = report("o.yaml", "n.yaml", "--format", fmt, cwd=tmp_path)
        assert code == 0, err
        for leak in leaks:
            assert leak not in out and leak not in err, (fmt, leak)
    code, out, _ = report("o.yaml", "n.yaml", "--format", "json", cwd=tmp_path)
    data = json.loads(out)
    diffs = {c["name"]: c.get("valueDiffs") for c in data["configs"]}["copies"]
    assert diffs["STD"] == "-***\n+***" and diffs["URL"] == "-***\n+***"
    (app,) = data["restart"]
    env = [c for c in app["causes"] if c.get("type") in ("env", "args")]
    assert {c["new"] for c in env} == {"***", '["--token=***"]'}


# ------------------------------------------------------------------ 8. empty sides


@pytest.mark.parametrize("empty", [b"", b"# nothing rendered\n", b"---\n...\n"])
def test_an_empty_side_is_a_visible_warning(empty: bytes) -> None:
    code, out, err = report("old.yaml", "-", "--format", "json", stdin=empty)
    assert code == 0
    assert err == (
        "<stdin>:1:1: warning: no Kubernetes objects in NEW (it is empty or only comments: "
        "a failed render?): compared as a render of nothing; --strict makes this an error\n"
    )
    data = json.loads(out)
    assert data["summary"]["text"].startswith("NEW has no Kubernetes objects (a failed render?); ")
    assert data["summary"]["warnings"] == 1
    (f,) = [f for f in data["findings"] if f["code"] == "empty-input"]
    assert (f["file"], f["line"], f["level"]) == ("<stdin>", 1, "warning")
    code, _, _ = report("old.yaml", "-", "--fail-on", "warning", stdin=empty)
    assert code == 1
    code, out, err = report("old.yaml", "-", "--strict", stdin=empty)
    assert (code, out) == (2, "")
    assert (
        err
        == "cmhash: <stdin>:1:1: no Kubernetes objects in the input (it is empty or only comments)\n"
    )


def test_golden_of_an_empty_side(update_goldens: bool) -> None:
    # the text report of an empty OLD (a render of nothing, piped): its finding shown
    code, out, err = report("-", "new.yaml", "--format", "text", stdin=b"")
    assert code == 0 and err.startswith("<stdin>:1:1: warning: no Kubernetes objects in OLD")
    expected = CASE / "expected-empty-old.txt"
    if update_goldens:
        expected.write_text(out)
    assert out == expected.read_text()


def test_an_empty_old_file(tmp_path: Path) -> None:
    (tmp_path / "old.yaml").write_text("")
    shutil.copy(CASE / "new.yaml", tmp_path / "new.yaml")
    code, out, err = report("old.yaml", "new.yaml", "--format", "text", cwd=tmp_path)
    assert code == 0 and "old.yaml:1:1: warning: no Kubernetes objects in OLD" in err
    assert out.startswith(
        "OLD has no Kubernetes objects (a failed render?); no workload will restart"
    )
    assert "[empty-input]" in out


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [
        ("", "new.yaml", {"OLD": False}),  # OLD was empty before this change
        ("new.yaml", "", {"NEW": True}),  # this change empties NEW
        ("", "", {"OLD": False, "NEW": False}),  # NEW as empty as OLD was
    ],
)
def test_only_what_this_change_brings_is_new(
    tmp_path: Path, old: str, new: str, expected: dict[str, bool]
) -> None:
    for side, name in (("o.yaml", old), ("n.yaml", new)):
        (tmp_path / side).write_text((CASE / name).read_text() if name else "")
    code, out, _ = report("o.yaml", "n.yaml", "--format", "json", cwd=tmp_path)
    assert code == 0
    found = json.loads(out)["findings"]
    assert {f["message"].split()[4]: f["new"] for f in found if f["code"] == "empty-input"} == (
        expected
    )


@pytest.mark.parametrize(
    "empty",
    [
        b"apiVersion: v1\nkind: List\nitems: []\n",
        # kubectl get deployments -o yaml, nothing found
        b'apiVersion: v1\nitems: []\nkind: List\nmetadata:\n  resourceVersion: ""\n',
        b"apiVersion: v1\nkind: List\n",  # (no items at all)
        b"apiVersion: v1\nkind: ConfigMapList\nitems: null\n---\n# nothing\n",
    ],
)
def test_a_list_without_items_is_an_empty_side(empty: bytes) -> None:
    # kubectl flattens a List (cli-runtime resource/visitor.go FlattenListVisitor): one
    # without items applies nothing ("no objects passed to apply")
    code, out, err = report("old.yaml", "-", "--format", "json", stdin=empty)
    assert code == 0
    assert err == (
        "<stdin>:1:1: warning: no Kubernetes objects in NEW (only Lists without items: "
        "a failed render?): compared as a render of nothing; --strict makes this an error\n"
    )
    data = json.loads(out)
    assert data["summary"]["warnings"] == 1 and data["summary"]["removed"] > 0
    assert [f["code"] for f in data["findings"]] == ["empty-input"]
    code, out, err = report("old.yaml", "-", "--strict", stdin=empty)
    assert (code, out) == (2, "")
    assert err == (
        "cmhash: <stdin>:1:1: no Kubernetes objects in the input (only Lists without items)\n"
    )


def test_a_list_with_items_is_no_empty_side() -> None:
    listed = b"apiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: Service, metadata: {name: s}}\n"
    code, out, err = report("old.yaml", "-", "--format", "json", "--strict", stdin=listed)
    assert code == 0 and err == ""
    assert json.loads(out)["summary"]["warnings"] == 0


# ------------------------------------------------------------- 9. left open before


def test_an_opted_out_workload_reloader_restarts(truth: dict[str, Any]) -> None:
    billing = by_name(truth)["Deployment/billing"]
    assert billing in truth["restart"] and billing["rule"] == "deployment-rolls"
    assert billing["how"].startswith(
        "not annotated: opted out (cmhash.io/skip), but Reloader changes its pod template "
        "when ConfigMap settings is applied (reloader.stakater.com/auto"
    )


def test_reloader_in_its_own_default_mode_leaves_the_rest(tmp_path: Path) -> None:
    # without auto, a reload list or search, Reloader (opt-in by default) does nothing
    text = (CASE / "new.yaml").read_text()
    old = (CASE / "old.yaml").read_text()
    for side, body in (("o.yaml", old), ("n.yaml", text)):
        (tmp_path / side).write_text(body.replace('    reloader.stakater.com/auto: "true"\n', ""))
    code, out, _ = report("o.yaml", "n.yaml", "--format", "json", cwd=tmp_path)
    assert code == 0
    billing = by_name(json.loads(out))["Deployment/billing"]
    assert billing["reason"] == "not annotated: opted out (cmhash.io/skip)"


def test_the_truth_fixture_differs_only_where_each_case_is_meant() -> None:
    old = list(yaml.safe_load_all((CASE / "old.yaml").read_text()))
    new = list(yaml.safe_load_all((CASE / "new.yaml").read_text()))
    assert [(d["kind"], d["metadata"]["name"]) for d in old] == [
        (d["kind"], d["metadata"]["name"]) for d in new
    ]
    same = {d["metadata"]["name"] for d, e in zip(old, new, strict=True) if d == e}
    # (these change through the ConfigMap they read, and the autoscalers not at all)
    assert same == {"pg", "consumer", "search", "billing"}


def test_the_count_each_autoscaler_gives() -> None:
    from cmhash.knowledge.replicas import read_autoscaler, replicas_of

    def hpa(**spec: Any) -> Any:
        ref = {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"}
        obj = {"metadata": {"name": "web"}, "spec": {"scaleTargetRef": ref, **spec}}
        return read_autoscaler("autoscaling", "HorizontalPodAutoscaler", obj)

    def keda(annotations: dict[str, str] | None = None, **spec: Any) -> Any:
        obj = {
            "metadata": {"name": "w", "annotations": annotations or {}},
            "spec": {"scaleTargetRef": {"name": "web"}, **spec},
        }
        return read_autoscaler("keda.sh", "ScaledObject", obj)

    web = hpa(maxReplicas=10)
    assert web.target == ("apps", "Deployment", "web")
    assert replicas_of(None, web).text() == "1..10"  # minReplicas: 1
    assert replicas_of(4, web).text() == "1..10"  # the HPA owns it
    assert replicas_of(0, web).exact == 0  # at 0 the HPA stops scaling it
    assert not replicas_of(None, hpa(minReplicas=2)).known  # no maxReplicas: invalid
    core = read_autoscaler(
        "autoscaling",
        "HorizontalPodAutoscaler",
        {"spec": {"scaleTargetRef": {"kind": "Deployment", "name": "web"}, "maxReplicas": 3}},
    )
    assert core is not None and core.target == ("", "Deployment", "web")  # no apiVersion
    so = keda()
    assert so.target == ("apps", "Deployment", "web")
    assert replicas_of(None, so).text() == "0..100"
    assert replicas_of(0, so).text() == "0..100"  # KEDA scales from zero itself
    assert replicas_of(None, keda(minReplicaCount=2, maxReplicaCount=8)).text() == "2..8"
    assert replicas_of(None, keda(idleReplicaCount=0, minReplicaCount=2)).text() == "0..100"
    held = keda({"autoscaling.keda.sh/paused-replicas": "3"})
    assert replicas_of(None, held).exact == 3
    assert not replicas_of(None, keda({"autoscaling.keda.sh/paused": "true"})).known
    assert replicas_of(5, None).said() == "replicas 5"
    assert replicas_of(None, None).said().startswith("replicas unknown offline: ")


@pytest.mark.parametrize(
    ("kind", "extra", "said"),
    [
        ("Deployment", "", "; new pods get the new template"),
        ("StatefulSet", "  serviceName: web\n", ""),
    ],
)
def test_a_count_keda_holds_at_zero_is_named(
    tmp_path: Path, kind: str, extra: str, said: str
) -> None:
    # no spec.replicas: KEDA's paused-replicas "0" holds it at 0 (the rule says so, not
    # "spec.replicas is 0")
    def side(image: str) -> str:
        return (
            f"apiVersion: apps/v1\nkind: {kind}\nmetadata: {{name: web, namespace: shop}}\n"
            f"spec:\n{extra}  selector: {{matchLabels: {{app: web}}}}\n  template:\n"
            "    metadata: {labels: {app: web}}\n"
            f"    spec: {{containers: [{{name: c, image: '{image}'}}]}}\n---\n"
            "apiVersion: keda.sh/v1alpha1\nkind: ScaledObject\n"
            "metadata:\n  name: web\n  namespace: shop\n"
            "  annotations: {autoscaling.keda.sh/paused-replicas: '0'}\n"
            f"spec:\n  scaleTargetRef: {{kind: {kind}, name: web}}\n"
            "  minReplicaCount: 2\n  maxReplicaCount: 8\n"
            "  triggers: [{type: cpu, metricType: Utilization, metadata: {value: '60'}}]\n"
        )

    (tmp_path / "o.yaml").write_text(side("app:1"))
    (tmp_path / "n.yaml").write_text(side("app:2"))
    code, out, _ = report("o.yaml", "n.yaml", "--format", "json", cwd=tmp_path)
    (web,) = json.loads(out)["notRestarting"]
    assert (code, web["outcome"]) == (0, "none")
    assert web["reason"] == (
        "replicas 0 from ScaledObject/web, autoscaling.keda.sh/paused-replicas: no pod runs" + said
    )


@pytest.mark.parametrize(
    ("hpa_ns", "workload_ns", "args", "owned"),
    [
        ("", "", (), True),  # neither says: kubectl apply -n puts both in one
        ("shop", "shop", (), True),
        ("shop", "store", (), False),  # another namespace's HPA
        ("", "shop", ("--namespace", "shop"), True),  # -n: where the HPA goes
        ("", "shop", (), False),
    ],
)
def test_an_autoscaler_owns_a_workload_of_its_namespace(
    tmp_path: Path, hpa_ns: str, workload_ns: str, args: tuple[str, ...], owned: bool
) -> None:
    def ns(value: str) -> str:
        return f"  namespace: {value}\n" if value else ""

    def side(level: str) -> str:
        return (
            f"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cfg\n{ns(workload_ns)}"
            f"data: {{LEVEL: {level}}}\n---\napiVersion: apps/v1\nkind: StatefulSet\n"
            f"metadata:\n  name: db\n{ns(workload_ns)}spec:\n  serviceName: db\n"
            "  updateStrategy: {rollingUpdate: {partition: 1}}\n"
            "  selector: {matchLabels: {app: db}}\n  template:\n"
            "    metadata: {labels: {app: db}}\n    spec:\n      containers:\n"
            "      - {name: db, image: db:1, envFrom: [{configMapRef: {name: cfg}}]}\n"
            "---\napiVersion: autoscaling/v1\nkind: HorizontalPodAutoscaler\n"
            f"metadata:\n  name: db\n{ns(hpa_ns)}spec:\n"
            "  scaleTargetRef: {apiVersion: apps/v1, kind: StatefulSet, name: db}\n"
            "  minReplicas: 3\n  maxReplicas: 4\n"
        )

    (tmp_path / "o.yaml").write_text(side("info"))
    (tmp_path / "n.yaml").write_text(side("debug"))
    code, out, err = report("o.yaml", "n.yaml", "--format", "json", *args, cwd=tmp_path)
    assert code == 0, err
    (db,) = json.loads(out)["restart"]
    assert ("replicas 3..4 from HorizontalPodAutoscaler/db" in db["how"]) is owned
    assert ("replicas unknown offline" in db["how"]) is not owned

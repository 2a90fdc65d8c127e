"""cmhash report as a rollout plan: every pod-template cause, the rollout rules (one
fixture workload per row of knowledge/rollout.py RULES), ConfigMap value diffs, the restart
budget, and on real renders an independent check that the restart list is exactly the
set of workloads whose pod template (as applied, with cmhash's annotation) differs.

tests/fixtures/report-plan/{old,new}.yaml differ only where a cause or a rule is meant
to show."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml
from conftest import CORPUS, ROOT, SHARED_CORPUS, run_cmhash, shared_params
from test_report import assert_no_secret

from cmhash.knowledge.rollout import RULES
from cmhash.knowledge.rollout_rule import RESTARTS, Outcome

CASE = ROOT / "tests" / "fixtures" / "report-plan"
TRUTH = ROOT / "tests" / "fixtures" / "report-truth"
SECRETS = ["plan-old-password", "plan-new-password"]
GOLDENS = {"json": "expected.json", "markdown": "expected.md", "text": "expected.txt"}


def report(*args: str, cwd: Path = CASE) -> tuple[int, str, str]:
    res = run_cmhash(["report", "--no-config", *args], cwd=cwd)
    return res.code, res.out, res.stderr


@pytest.fixture(scope="module")
def plan() -> dict[str, Any]:
    code, out, err = report("old.yaml", "new.yaml", "--format", "json")
    assert code == 0, err
    return json.loads(out)


def _by_name(data: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {f"{w['kind']}/{w['name']}": w for g in ("restart", "notRestarting") for w in data[g]}


@pytest.mark.parametrize("fmt", sorted(GOLDENS))
def test_golden(fmt: str, update_goldens: bool) -> None:
    code, out, err = report("old.yaml", "new.yaml", "--format", fmt)
    assert code == 0 and err == "", err
    expected = CASE / GOLDENS[fmt]
    if update_goldens:
        expected.write_text(out)
    assert out == expected.read_text()


def test_json_follows_the_versioned_schema(plan: dict[str, Any]) -> None:
    import jsonschema

    schema = json.loads((ROOT / "src" / "cmhash" / "schemas" / "report.schema.json").read_text())
    jsonschema.validate(plan, schema)
    assert plan["version"] == 4 and schema["properties"]["version"] == {"const": 4}


def test_no_secret_value_in_any_format() -> None:
    out = ""
    for fmt in ("json", "markdown", "text", "codequality"):
        code, text, err = report("old.yaml", "new.yaml", "--format", fmt)
        assert code == 0, err
        out += text + err
    assert_no_secret(out, SECRETS)


# -------------------------------------------------------------------- 1. the causes


def _causes(w: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {c["field"]: c for c in w["causes"] if "field" in c}


def test_every_cause_type_is_named_with_its_field(plan: dict[str, Any]) -> None:
    w = _by_name(plan)
    api = _causes(w["Deployment/api"])
    assert api["spec.containers[api].image"] == {
        "type": "image",
        "field": "spec.containers[api].image",
        "change": "changed",
        "old": "api:1.0",
        "new": "api:1.1",
    }
    assert api["spec.containers[api].command"]["type"] == "command"
    assert api["spec.containers[api].args"]["new"] == '["--port","9090"]'
    # a plain env value is shown; one from a Secret by name and key only
    assert (
        api["spec.containers[api].env[MODE]"]["old"],
        api["spec.containers[api].env[MODE]"]["new"],
    ) == ("blue", "green")
    assert api["spec.containers[api].env[DB_USER]"]["new"] == "from Secret db key user"
    config = [c for c in w["Deployment/api"]["causes"] if c["type"] == "config"]
    assert {(c["kind"], c["name"]): c["keys"] for c in config} == {
        ("ConfigMap", "app-config"): ["LOG_LEVEL", "app.properties"],
        ("Secret", "db"): ["password"],
    }
    web = {c["type"] for c in _causes(w["Deployment/web"]).values()}
    assert web == {"resources", "probe", "securityContext", "volume", "envFrom"}
    sched = _causes(w["Deployment/sched"])
    assert {c["type"] for c in sched.values()} == {"scheduling", "reference", "other", "container"}
    assert {f for f, c in sched.items() if c["type"] == "scheduling"} == {
        "spec.nodeSelector",
        "spec.tolerations",
        "spec.affinity",
    }
    assert {f for f, c in sched.items() if c["type"] == "other"} == {
        "metadata.labels.tier",
        "spec.dnsPolicy",
    }
    assert sched["spec.containers[sidecar]"]["change"] == "added"


def test_unchanged_templates_are_not_listed(plan: dict[str, Any]) -> None:
    names = _by_name(plan)
    assert "Deployment/steady" not in names  # replicas and strategy changed, template not
    assert not any(n.startswith("Service/api") for n in names)  # a Service change


def test_cause_shapes() -> None:
    from cmhash.report.podtemplate import template_causes

    old = {
        "spec": {
            "containers": [{"name": "a", "image": "x:1", "env": [{"name": "K", "value": "1"}]}]
        }
    }
    new = {
        "spec": {
            "containers": [{"name": "a", "image": "x:1", "env": [{"name": "K", "value": "2"}]}]
        }
    }
    assert [c.type for c in template_causes(old, new, "checksum/config")] == ["env"]
    # our own annotation is the checksum cause, never an "other" one
    old_a = {"metadata": {"annotations": {"checksum/config": "a"}}}
    new_a = {"metadata": {"annotations": {"checksum/config": "b"}}}
    assert template_causes(old_a, new_a, "checksum/config") == []
    assert template_causes(old_a, new_a, "other/key")[0].type == "other"
    # a long value is cut once the report is masked (redact.py bound)
    from cmhash.report.redact import bound

    long = {"spec": {"nodeSelector": {"k": "v" * 500}}}
    cause = template_causes({}, long, "k")[0].as_dict()
    data = {"restart": [{"causes": [cause]}], "notRestarting": [], "configs": []}
    bound(data)
    shown = data["restart"][0]["causes"][0]["new"]
    assert len(shown) == 120 and shown.endswith("…")


# ---------------------------------------------------------------- 2. the rollout rules

# one fixture workload per rule (a rule without one here fails the test below)
RULE_CASES = {
    "immutable-field": None,  # and test_report_edges.py
    "workload-ref": "Deployment/frontend",
    "workload-ref-paused": "Deployment/frontend-held",
    "workload-ref-zero-replicas": "Deployment/frontend-off",
    "knative-revision-name-kept": "Service/hello-byo",
    "deployment-paused": "Deployment/paused",
    "deployment-zero-replicas": "Deployment/scaled-down",
    "deployment-rolls": "Deployment/recreate",
    "statefulset-on-delete-rolling-update": None,  # and test_report_edges.py
    "statefulset-negative-partition": None,
    "deployment-strategy-refused": None,
    "negative-count": None,
    "daemonset-strategy-refused": None,
    "statefulset-strategy-refused": None,
    "statefulset-on-delete": "StatefulSet/db-ondelete",
    "statefulset-zero-replicas": None,  # unit-tested below
    "statefulset-partition-all": "StatefulSet/db-partition-all",
    "statefulset-partition": "StatefulSet/db-partition",
    "statefulset-rolls": "StatefulSet/db",
    "daemonset-on-delete": "DaemonSet/agent",
    "daemonset-rolls": "DaemonSet/logger",
    "replicaset-no-rollout": "ReplicaSet/legacy-rs",
    "cronjob-next-run": "CronJob/nightly",
    "hook-recreated": "Job/seed",
    "job-runs-again": None,  # --jobs=rename: test_a_renamed_job_runs_again below
    "job-immutable": "Job/migrate",
    "pod-refused": "Pod/probe",
    "pod-restarts-container": "Pod/toolbox",
    "pod-updated": "Pod/debug",  # more bare-Pod cases: test_report_edges.py
    "podtemplate-runs-nothing": None,
    "rollout-paused": None,
    "rollout-zero-replicas": None,
    "rollout-resumed": None,  # and test_report_engines.py
    "rollout-rolls": "Rollout/checkout",
    "deploymentconfig-paused": None,
    "deploymentconfig-no-config-trigger": "DeploymentConfig/dc-image",
    "deploymentconfig-rolls": "DeploymentConfig/dc-auto",
    "knative-pinned-traffic": "Service/hello-pinned",
    "knative-new-revision": "Service/hello",
    # issue 37's rules: tests/fixtures/report-truth (test_report_truth.py)
    "argocd-skip": "truth:Deployment/sandbox",
    "selector-mismatch": "truth:Deployment/frontend",
    "recreated": "truth:Deployment/gateway",
    "deployment-scale-from-zero": "truth:Deployment/worker",
    "deployment-scale-to-zero": None,
    "deployment-resumed": "truth:Deployment/reports",
    "statefulset-scale-from-zero": None,
    "statefulset-scale-to-zero": "truth:StatefulSet/archive",
    "statefulset-released": "truth:StatefulSet/kafka",
    "daemonset-released": "truth:DaemonSet/node-agent",
    "job-recreated": "truth:Job/db-migrate",
    "pod-recreated": "truth:Pod/toolbox",
}
UNIT_CASES: dict[str, tuple[str, str, dict[str, Any]]] = {
    "statefulset-zero-replicas": ("apps", "StatefulSet", {"replicas": 0}),
    "statefulset-on-delete-rolling-update": (
        "apps",
        "StatefulSet",
        {"updateStrategy": {"type": "OnDelete", "rollingUpdate": {"partition": 1}}},
    ),
    "negative-count": ("apps", "Deployment", {"replicas": -1}),
    "deployment-strategy-refused": (
        "apps",
        "Deployment",
        {"strategy": {"rollingUpdate": {"maxSurge": 0, "maxUnavailable": 0}}},
    ),
    "daemonset-strategy-refused": (
        "apps",
        "DaemonSet",
        {"updateStrategy": {"rollingUpdate": {"maxSurge": 1}}},
    ),
    "statefulset-strategy-refused": (
        "apps",
        "StatefulSet",
        {"updateStrategy": {"rollingUpdate": {"maxUnavailable": 0}}},
    ),
    "statefulset-negative-partition": (
        "apps",
        "StatefulSet",
        {"updateStrategy": {"rollingUpdate": {"partition": -1}}},
    ),
    "podtemplate-runs-nothing": ("", "PodTemplate", {}),
    "rollout-paused": ("argoproj.io", "Rollout", {"paused": True}),
    "rollout-zero-replicas": ("argoproj.io", "Rollout", {"replicas": 0}),
    "rollout-resumed": ("argoproj.io", "Rollout", {}),
    "deploymentconfig-paused": ("apps.openshift.io", "DeploymentConfig", {"paused": True}),
    "job-runs-again": ("batch", "Job", {}),
}
UNIT_CASES["immutable-field"] = ("apps", "Deployment", {"selector": {"matchLabels": {"a": "2"}}})
UNIT_CASES["deployment-scale-to-zero"] = ("apps", "Deployment", {"replicas": 0})
UNIT_CASES["statefulset-scale-from-zero"] = ("apps", "StatefulSet", {"replicas": 2})
UNIT_RENAMES = {"job-runs-again": "x-f997g5h4h7"}
UNIT_OLD = {
    "immutable-field": {"spec": {"selector": {"matchLabels": {"a": "1"}}}},
    "deployment-scale-to-zero": {"spec": {"replicas": 3}},
    "statefulset-scale-from-zero": {"spec": {"replicas": 0}},
    "rollout-resumed": {"spec": {"paused": True}},
}
UNIT_RELEASED = {"rollout-resumed"}  # only the holding field changed, not the template


@pytest.fixture(scope="module")
def truth() -> dict[str, Any]:
    code, out, err = report("old.yaml", "new.yaml", "--format", "json", cwd=TRUTH)
    assert code == 0, err
    return json.loads(out)


@pytest.mark.parametrize("rule", RULES, ids=[r.name for r in RULES])
def test_rule(rule: Any, plan: dict[str, Any], truth: dict[str, Any]) -> None:
    assert rule.name in RULE_CASES, "every rule needs a case"
    assert rule.source, "every rule cites where Kubernetes defines it"
    where = RULE_CASES[rule.name]
    if where is None:
        from cmhash.model import ResourceId
        from cmhash.report.rollout import Context, decide

        group, kind, spec = UNIT_CASES[rule.name]
        rid = ResourceId(group, kind, "ns", "x")
        old = UNIT_OLD.get(rule.name)
        ctx = Context({"spec": spec}, (), {}, rid, UNIT_RENAMES.get(rule.name), old)
        got = decide(ctx._replace(template_changed=rule.name not in UNIT_RELEASED))
        assert (got.rule, got.outcome) == (rule.name, rule.outcome)
        return
    data = truth if where.startswith("truth:") else plan
    w = _by_name(data)[where.removeprefix("truth:")]
    assert (w["rule"], w["outcome"]) == (rule.name, rule.outcome)
    assert w in data["restart" if rule.outcome in RESTARTS else "notRestarting"]


def test_rule_details(plan: dict[str, Any]) -> None:
    w = _by_name(plan)
    assert w["Deployment/frontend"]["how"].startswith("rolled out by Argo Rollout/frontend")
    assert w["Rollout/checkout"]["how"] == "canary in 3 steps"
    assert "blue-green" in w["Rollout/payments"]["how"]
    assert "ordinal ≥ 2" in w["StatefulSet/db-partition"]["how"]
    assert "kubectl apply is refused" in w["Job/migrate"]["reason"]
    assert plan["summary"]["refused"] == 3  # the Job, the Pod whose env changed, hello-byo


# --------------------------------------------------------- 3. ConfigMap value diffs


def test_configmap_values_as_diffs_never_a_secrets(plan: dict[str, Any]) -> None:
    configs = {(c["kind"], c["name"]): c for c in plan["configs"]}
    diffs = configs["ConfigMap", "app-config"]["valueDiffs"]
    assert diffs["LOG_LEVEL"] == "-info\n+debug"
    lines = diffs["app.properties"].splitlines()
    assert "-cache.size=100" in lines and "+cache.size=200" in lines and "+retries=3" in lines
    assert " server.port=8080" in lines  # multi-line: context, not the whole value twice
    assert "valueDiffs" not in configs["Secret", "db"]


def test_no_values_hides_configmap_values() -> None:
    for fmt in ("json", "markdown", "text"):
        code, out, _ = report("old.yaml", "new.yaml", "--format", fmt, "--no-values")
        assert code == 0
        assert "cache.size=200" not in out and "+debug" not in out


def test_value_diffs_are_bounded(tmp_path: Path) -> None:
    def side(n: int) -> str:
        body = "".join(f"    line {i} {'x' * 300 if i == 0 else n}\n" for i in range(200))
        return "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: big}\ndata:\n  conf: |\n" + body

    (tmp_path / "o.yaml").write_text(side(1))
    (tmp_path / "n.yaml").write_text(side(2))
    code, out, err = report("o.yaml", "n.yaml", "--format", "json", cwd=tmp_path)
    assert code == 0, err
    diff = json.loads(out)["configs"][0]["valueDiffs"]["conf"]
    lines = diff.splitlines()
    assert len(lines) <= 41 and lines[-1].startswith("… ") and "more diff lines" in lines[-1]
    assert max(len(ln) for ln in lines) <= 201


def test_an_unannotated_hook_reads_the_change_when_it_runs_next(tmp_path: Path) -> None:
    # without --jobs a hook Job is not annotated, but Helm re-creates it each time: the
    # report says it runs with the new configuration, not "immutable (--jobs to opt in)"
    def side(v: str) -> str:
        return (
            f"apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: cfg}}\ndata: {{a: '{v}'}}\n"
            "---\napiVersion: batch/v1\nkind: Job\nmetadata:\n  name: migrate\n"
            "  annotations: {helm.sh/hook: pre-upgrade}\nspec:\n  template:\n    spec:\n"
            "      restartPolicy: Never\n      containers:\n      - name: m\n"
            "        image: m:1\n        envFrom: [{configMapRef: {name: cfg}}]\n"
        )

    (tmp_path / "o.yaml").write_text(side("1"))
    (tmp_path / "n.yaml").write_text(side("2"))
    code, out, err = report("o.yaml", "n.yaml", "--format", "json", cwd=tmp_path)
    assert code == 0, err
    (job,) = json.loads(out)["notRestarting"]
    assert job["name"] == "migrate"
    assert job["reason"].startswith("a hook: Helm or Argo CD re-creates it when it runs next")
    assert "--jobs" not in job["reason"]


def test_past_the_value_diff_limit_one_note_then_nothing(tmp_path: Path) -> None:
    # 300 ConfigMaps with a changed one-line key: 2 diff lines each, 400 in all, so
    # 200 are shown, one says the limit is reached, the other 99 add nothing (a note
    # per key grew such a report by a heading and a code fence each)
    def side(v: int) -> str:
        return "---\n".join(
            f"apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: c{i:03}}}\ndata: {{k: '{v}'}}\n"
            for i in range(300)
        )

    (tmp_path / "o.yaml").write_text(side(1))
    (tmp_path / "n.yaml").write_text(side(2))
    code, out, err = report("o.yaml", "n.yaml", "--format", "json", cwd=tmp_path)
    assert code == 0, err
    diffs = [c.get("valueDiffs") for c in json.loads(out)["configs"]]
    assert diffs[:200] == [{"k": "-1\n+2"}] * 200
    assert list(diffs[200]) == ["k"] and "limit of value diffs is reached" in diffs[200]["k"]
    assert diffs[201:] == [None] * 99
    code, md, err = report("o.yaml", "n.yaml", cwd=tmp_path)
    assert code == 0, err
    assert md.count("not shown") == 1 and md.count("```diff") == 201


def test_no_value_diffs_for_what_a_secret_source_produces(tmp_path: Path) -> None:
    def side(v: str) -> str:
        return (
            "apiVersion: bitnami.com/v1alpha1\nkind: SealedSecret\nmetadata: {name: s}\n"
            f"spec:\n  encryptedData:\n    k: {v}\n---\n"
            "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\nspec:\n  template:\n"
            "    spec:\n      containers:\n      - name: c\n        envFrom:\n"
            "        - secretRef: {name: s}\n"
        )

    (tmp_path / "o.yaml").write_text(side("AgBCIPHERONE"))
    (tmp_path / "n.yaml").write_text(side("AgBCIPHERTWO"))
    for fmt in ("json", "markdown", "text"):
        code, out, err = report("o.yaml", "n.yaml", "--format", fmt, cwd=tmp_path)
        assert code == 0, err
        assert "CIPHER" not in out


# ------------------------------------------------------------------- 4. the budget


def test_budget_total(tmp_path: Path) -> None:
    assert report("old.yaml", "new.yaml", "--max-restarts", "13")[0] == 0
    out = tmp_path / "plan.md"
    code, stdout, err = report("old.yaml", "new.yaml", "--max-restarts", "12", "-o", str(out))
    assert code == 1
    assert err == "cmhash: 13 workloads restart (budget 12)\n"
    assert out.read_text().startswith("### cmhash: 13 workloads will restart")  # still written
    code, stdout, err = report("old.yaml", "new.yaml", "--max-restarts", "0")
    assert code == 1 and stdout.startswith("### cmhash")


def test_budget_per_namespace() -> None:
    # plan: 11 restarts, edge: 2 (Deployment/recreate, DaemonSet/logger)
    assert report("old.yaml", "new.yaml", "--max-restarts-per-namespace", "11")[0] == 0
    code, _, err = report("old.yaml", "new.yaml", "--max-restarts-per-namespace", "10")
    assert (code, err) == (1, "cmhash: 11 workloads restart in namespace plan (budget 10)\n")
    code, _, err = report("old.yaml", "new.yaml", "--max-restarts-per-namespace", "1")
    assert err == ("cmhash: 11 workloads restart in namespace plan (budget 1; 2 namespaces over)\n")


def test_budget_refuses_a_negative_number() -> None:
    code, _, err = report("old.yaml", "new.yaml", "--max-restarts", "-1")
    assert code == 2 and "-1" in err


# ------------------------------------------- real renders: an independent check


TEMPLATE_PATHS = {
    "Deployment": ("spec", "template"),
    "StatefulSet": ("spec", "template"),
    "DaemonSet": ("spec", "template"),
    "Job": ("spec", "template"),
    "CronJob": ("spec", "jobTemplate", "spec", "template"),
}


def _templates(stream: str) -> dict[tuple[str, str, str], Any]:
    out = {}
    for doc in yaml.safe_load_all(stream):
        if not isinstance(doc, dict) or doc.get("kind") not in TEMPLATE_PATHS:
            continue
        node: Any = doc
        for step in TEMPLATE_PATHS[doc["kind"]]:
            node = node.get(step) or {}
        meta = doc.get("metadata") or {}
        out[doc["kind"], meta.get("namespace") or "", meta["name"]] = node
    return out


def _independent(old: Path, new: Path, cwd: Path) -> set[tuple[str, str, str]]:
    """Workloads in both sides whose pod template differs once cmhash annotated each side
    (what kubectl apply would send), read with PyYAML, nothing of report."""
    sides = []
    for p in (old, new):
        res = run_cmhash(["--no-config", p.name], cwd=cwd)
        assert res.code == 0, res.stderr
        sides.append(_templates(res.out))
    return {k for k in sides[0].keys() & sides[1].keys() if sides[0][k] != sides[1][k]}


def _restart_set(data: dict[str, Any]) -> set[tuple[str, str, str]]:
    return {(w["kind"], w["namespace"], w["name"]) for w in data["restart"]}


def _check_pair(old: Path, new: Path) -> dict[str, Any]:
    code, out, err = report(old.name, new.name, "--format", "json", cwd=old.parent)
    assert code == 0, err
    data = json.loads(out)
    differs = _independent(old, new, old.parent)
    assert differs, "the pair must change some pod template"
    assert _restart_set(data) == differs
    return data


def _microservices_pair(path: Path, tmp_path: Path) -> tuple[Path, Path]:
    """v0.10.6 and a next version: three images bumped, one env value changed."""
    text = path.read_text()
    new = text
    for svc in ("frontend", "adservice", "cartservice"):
        new = new.replace(f"/{svc}:v0.10.6", f"/{svc}:v0.10.7")
    new = new.replace('value: "Hello"', 'value: "Hi"', 1) if 'value: "Hello"' in new else new
    old_p, new_p = tmp_path / "old.yaml", tmp_path / "new.yaml"
    old_p.write_text(text)
    new_p.write_text(new)
    return old_p, new_p


MICROSERVICES = "microservices-demo/release/kubernetes-manifests.yaml"


@pytest.mark.parametrize(
    "manifests",
    [
        pytest.param(CORPUS / MICROSERVICES, id="vendored"),
        *shared_params(SHARED_CORPUS / MICROSERVICES, "shared"),
    ],
)
def test_real_pair_microservices_demo(manifests: Path, tmp_path: Path) -> None:
    old, new = _microservices_pair(manifests, tmp_path)
    data = _check_pair(old, new)
    assert {n for _, _, n in _restart_set(data)} == {"frontend", "adservice", "cartservice"}


def test_real_pair_helm_template_renders(tmp_path: Path) -> None:
    helm = shutil.which("helm") or str(ROOT / ".tools" / "bin" / "helm")
    if not Path(helm).exists():
        pytest.skip("helm is installed by scripts/get-tools.sh")
    chart = ROOT / "tests" / "fixtures" / "chart"
    for name, values in (("old.yaml", []), ("new.yaml", ["--set", "logLevel=debug"])):
        out = subprocess.run(
            [helm, "template", "shop", str(chart), *values],
            check=True,
            capture_output=True,
            text=True,
        ).stdout
        (tmp_path / name).write_text(out)
    data = _check_pair(tmp_path / "old.yaml", tmp_path / "new.yaml")
    assert data["restart"][0]["causes"][0]["keys"]  # the config keys that changed


ARGOCD = "argo-cd/manifests/install.yaml"


@pytest.mark.parametrize(
    "install",
    [
        pytest.param(CORPUS / "argo-cd" / "manifests" / "install.excerpt.yaml", id="excerpt"),
        *shared_params(SHARED_CORPUS / ARGOCD, "shared"),
    ],
)
def test_real_pair_argocd_install(install: Path, tmp_path: Path) -> None:
    """Argo CD's install manifests as two renders (test_report._argocd_pair: changed
    ConfigMaps and a Secret; the OnDelete StatefulSet is affected, not restarted)."""
    from test_report import _argocd_pair

    old, new = _argocd_pair(install, tmp_path)
    code, out, err = report(old.name, new.name, "--format", "json", cwd=tmp_path)
    assert code == 0, err
    data = json.loads(out)
    differs = _independent(old, new, tmp_path)
    not_rolling = {
        (w["kind"], w["namespace"], w["name"]) for w in data["notRestarting"] if "outcome" in w
    }
    assert _restart_set(data) | not_rolling == differs
    assert not_rolling == {("StatefulSet", "", "argocd-application-controller")}


def test_workload_ref_kinds_argo_resolves() -> None:
    """rollout/templateref.go resolves Deployments, ReplicaSets and PodTemplates: each
    rolls through its Rollout; another kind named there is not taken over."""
    from cmhash.model import ResourceId
    from cmhash.report.rollout import Context, decide, rollouts_by_workload

    objects = {
        ResourceId("argoproj.io", "Rollout", "ns", f"r{i}"): {
            "spec": {"workloadRef": {"kind": kind, "name": "w"}, "strategy": {"canary": {}}}
        }
        for i, kind in enumerate(("ReplicaSet", "PodTemplate", "StatefulSet"))
    }
    taken = rollouts_by_workload(objects)
    assert set(taken) == {
        ResourceId("apps", "ReplicaSet", "ns", "w"),
        ResourceId("", "PodTemplate", "ns", "w"),
    }
    rs = ResourceId("apps", "ReplicaSet", "ns", "w")
    got = decide(Context({"spec": {}}, (), taken, rs))
    assert (got.rule, got.outcome, got.text) == (
        "workload-ref",
        Outcome.ROLLS,
        "rolled out by Argo Rollout/r0 (canary) (workloadRef)",
    )
    alone = decide(Context({"spec": {}}, (), {}, rs))
    assert alone.rule == "replicaset-no-rollout"


def test_deeply_nested_templates_are_compared(tmp_path: Path) -> None:
    """As deep as the parser allows (tree.MAX_DEPTH): the change at the bottom is named,
    no recursion error, no crash."""

    def side(value: str) -> str:
        body = "".join(f"{'  ' * i}k{i}:\n" for i in range(980)) + f"{'  ' * 980}v: {value}\n"
        nested = "".join(" " * 8 + line + "\n" for line in body.splitlines())
        return (
            "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\nspec:\n  template:\n"
            "    spec:\n      containers:\n      - name: c\n        image: a\n      extra:\n"
            + nested
        )

    (tmp_path / "o.yaml").write_text(side("one"))
    (tmp_path / "n.yaml").write_text(side("two"))
    code, out, err = report("o.yaml", "n.yaml", "--format", "json", cwd=tmp_path)
    assert code == 0, err
    (cause,) = json.loads(out)["restart"][0]["causes"]
    assert cause["type"] == "other" and cause["field"].endswith(".k979.v")
    assert (cause["old"], cause["new"]) == ("one", "two")


def test_a_renamed_job_runs_again(tmp_path: Path) -> None:
    """--jobs=rename: a Job whose config changed is a new Job that runs, not a refused
    change (report says under which name)."""
    old = ROOT / "examples" / "migrate-job.yaml"
    new = tmp_path / "new.yaml"
    new.write_text(old.read_text().replace("TARGET: v42", "TARGET: v43"))
    res = run_cmhash(["report", "--jobs=rename", "--format", "json", str(old), str(new)])
    assert res.code == 0, res.stderr
    data = json.loads(res.out)
    (job,) = [w for w in data["notRestarting"] if w["kind"] == "Job"]
    assert job["rule"] == "job-runs-again" and job["outcome"] == "next run"
    assert "will run again as migrate-" in job["reason"]
    assert data["summary"].get("refused", 0) == 0
    plain = run_cmhash(["report", "--jobs", "--format", "json", str(old), str(new)])
    (job,) = [w for w in json.loads(plain.out)["notRestarting"] if w["kind"] == "Job"]
    assert job["rule"] == "job-immutable"


def _outputs(tmp: Path, *changes: tuple[str, str]) -> tuple[Path, Path]:
    """OLD and NEW as cmhash --jobs=rename outputs (a repository kept current by a
    pre-commit hook with -i): the Job already carries its new name on each side."""
    text = (ROOT / "examples" / "migrate-job.yaml").read_text()
    sides = []
    for side, new_text in (("old", text), ("new", _changed(text, changes))):
        res = run_cmhash(["--no-config", "--jobs=rename", "-"], stdin=new_text.encode())
        assert res.code == 0, res.stderr
        (tmp / side).mkdir()
        (tmp / side / "app.yaml").write_text(res.out)
        sides.append(tmp / side)
    return sides[0], sides[1]


def _changed(text: str, changes: tuple[tuple[str, str], ...]) -> str:
    for a, b in changes:
        assert a in text
        text = text.replace(a, b)
    return text


@pytest.mark.parametrize(
    "change",
    [("TARGET: v42", "TARGET: v43"), ("image: shop:1.0", "image: shop:1.1")],
    ids=["config", "template"],
)
def test_a_renamed_job_runs_again_on_cmhash_outputs(
    tmp_path: Path, change: tuple[str, str]
) -> None:
    """OLD's migrate-<a> and NEW's migrate-<b> are one Job, paired by their
    cmhash.io/job-base-name and namespace: it runs again, it is not added and removed."""
    old, new = _outputs(tmp_path, change)
    old_name = re.search(r"name: (migrate-\w{10})", (old / "app.yaml").read_text())
    new_name = re.search(r"name: (migrate-\w{10})", (new / "app.yaml").read_text())
    assert old_name and new_name and old_name[1] != new_name[1]
    res = run_cmhash(["report", "--jobs=rename", "--format", "json", str(old), str(new)])
    assert res.code == 0, res.stderr
    data = json.loads(res.out)
    assert data["added"] == [] and data["removed"] == []
    (job,) = [w for w in data["notRestarting"] if w["kind"] == "Job"]
    assert job["rule"] == "job-runs-again" and job["outcome"] == "next run"
    assert (
        f"will run again as {new_name[1]} (a new Job; the old one, {old_name[1]},"
        in (job["reason"])
    )


def test_an_unchanged_renamed_job_is_not_listed_on_cmhash_outputs(tmp_path: Path) -> None:
    old, new = _outputs(tmp_path, ("ttlSecondsAfterFinished: 3600", "ttlSecondsAfterFinished: 60"))
    res = run_cmhash(["report", "--jobs=rename", "--format", "json", str(old), str(new)])
    data = json.loads(res.out)
    assert res.code == 0 and data["summary"]["text"].startswith("No workload will restart")
    assert data["notRestarting"] == data["added"] == data["removed"] == []


def test_renamed_jobs_pair_within_their_namespace_only(tmp_path: Path) -> None:
    old, new = _outputs(tmp_path, ("TARGET: v42", "TARGET: v43"))
    moved = (new / "app.yaml").read_text().replace("namespace: shop", "namespace: store")
    (new / "app.yaml").write_text(moved)
    res = run_cmhash(["report", "--jobs=rename", "--format", "json", str(old), str(new)])
    data = json.loads(res.out)
    assert [w["namespace"] for w in data["added"]] == ["store"]
    assert [w["namespace"] for w in data["removed"]] == ["shop"]


def test_a_job_renamed_on_both_sides_runs_again(tmp_path: Path) -> None:
    """Both sides already cmhash's --jobs=rename output (a repository kept current by the
    pre-commit hook): migrate-<one> in OLD and migrate-<other> in NEW are one Job that
    runs again, not one added and one removed; unchanged, nothing is listed."""
    text = (ROOT / "examples" / "migrate-job.yaml").read_text()
    for name, body in (("old", text), ("new", text.replace("TARGET: v42", "TARGET: v43"))):
        res = run_cmhash(["--no-config", "--jobs=rename", "-"], stdin=body.encode())
        assert res.code == 0, res.stderr
        (tmp_path / f"{name}.yaml").write_bytes(res.stdout)
    res = run_cmhash(
        ["report", "--no-config", "--jobs=rename", "--format", "json", "old.yaml", "new.yaml"],
        cwd=tmp_path,
    )
    assert res.code == 0, res.stderr
    data = json.loads(res.out)
    assert data["added"] == [] and data["removed"] == [], data
    (job,) = [w for w in data["notRestarting"] if w["kind"] == "Job"]
    assert job["rule"] == "job-runs-again", job
    same = run_cmhash(
        ["report", "--no-config", "--jobs=rename", "--format", "json", "old.yaml", "old.yaml"],
        cwd=tmp_path,
    )
    quiet = json.loads(same.out)
    assert quiet["added"] == [] and quiet["removed"] == [] and quiet["notRestarting"] == []

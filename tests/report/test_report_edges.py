"""cmhash report on the odd cases a review found: bare Pods updated field by field
(knowledge/podupdate.py), init-container images, duplicate workloads in one render,
control characters in what the report prints, workloads renamed between OLD and NEW,
StatefulSet partitions and strategies. Each through the CLI, on manifests written here."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from conftest import run_cmhash


def _report(tmp_path: Path, old: str, new: str, *args: str) -> tuple[int, str, str]:
    (tmp_path / "old.yaml").write_text(old)
    (tmp_path / "new.yaml").write_text(new)
    res = run_cmhash(["report", "--no-config", "old.yaml", "new.yaml", *args], cwd=tmp_path)
    return res.code, res.out, res.stderr


def _plan(tmp_path: Path, old: str, new: str, *args: str) -> dict[str, Any]:
    code, out, err = _report(tmp_path, old, new, "--format", "json", *args)
    assert code == 0, err
    data: dict[str, Any] = json.loads(out)
    return data


def _workloads(data: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {f"{w['kind']}/{w['name']}": w for g in ("restart", "notRestarting") for w in data[g]}


# ------------------------------------------------------------------ 1, 2. bare Pods


def _pod(name: str, spec: str, meta: str = "") -> str:
    return f"apiVersion: v1\nkind: Pod\nmetadata:\n  name: {name}\n{meta}spec:\n{spec}---\n"


APP = "  containers:\n  - name: app\n    image: app:{v}\n"
INIT = "  initContainers:\n  - name: init\n    image: init:{v}\n{extra}"
TOL = "  tolerations:\n{items}"
T1 = "  - {key: a, operator: Exists, effect: NoSchedule}\n"
T2 = "  - {key: b, operator: Exists, effect: NoSchedule}\n"


# (old spec, new spec) -> (rule, outcome); kubernetes/kubernetes
# pkg/apis/core/validation/validation.go ValidatePodUpdate decides what may change
POD_CASES = {
    "toleration-added": (
        APP.format(v=1) + TOL.format(items=T1),
        APP.format(v=1) + TOL.format(items=T1 + T2),
        "pod-updated",
        "none",
    ),
    "toleration-removed": (
        APP.format(v=1) + TOL.format(items=T1 + T2),
        APP.format(v=1) + TOL.format(items=T2),
        "pod-refused",
        "refused",
    ),
    "deadline-set": (
        APP.format(v=1),
        APP.format(v=1) + "  activeDeadlineSeconds: 600\n",
        "pod-updated",
        "none",
    ),
    "deadline-lowered": (
        APP.format(v=1) + "  activeDeadlineSeconds: 600\n",
        APP.format(v=1) + "  activeDeadlineSeconds: 60\n",
        "pod-updated",
        "none",
    ),
    "deadline-raised": (
        APP.format(v=1) + "  activeDeadlineSeconds: 60\n",
        APP.format(v=1) + "  activeDeadlineSeconds: 600\n",
        "pod-refused",
        "refused",
    ),
    "deadline-zero": (  # ValidatePodSpec: activeDeadlineSeconds between 1 and MaxInt32
        APP.format(v=1) + "  activeDeadlineSeconds: 60\n",
        APP.format(v=1) + "  activeDeadlineSeconds: 0\n",
        "pod-refused",
        "refused",
    ),
    "deadline-removed": (
        APP.format(v=1) + "  activeDeadlineSeconds: 60\n",
        APP.format(v=1),
        "pod-refused",
        "refused",
    ),
    "image": (APP.format(v=1), APP.format(v=2), "pod-restarts-container", "in place"),
    "image-and-toleration": (
        APP.format(v=1),
        APP.format(v=2) + TOL.format(items=T1),
        "pod-restarts-container",
        "in place",
    ),
    "init-image": (
        APP.format(v=1) + INIT.format(v=1, extra=""),
        APP.format(v=1) + INIT.format(v=2, extra=""),
        "pod-updated",
        "none",
    ),
    "sidecar-image": (
        APP.format(v=1) + INIT.format(v=1, extra="    restartPolicy: Always\n"),
        APP.format(v=1) + INIT.format(v=2, extra="    restartPolicy: Always\n"),
        "pod-restarts-container",
        "in place",
    ),
    "gate-removed": (
        APP.format(v=1) + "  schedulingGates:\n  - name: wait\n",
        APP.format(v=1),
        "pod-updated",
        "none",
    ),
    "gate-added": (
        APP.format(v=1),
        APP.format(v=1) + "  schedulingGates:\n  - name: wait\n",
        "pod-refused",
        "refused",
    ),
    "resources": (
        APP.format(v=1),
        APP.format(v=1) + "    resources: {limits: {cpu: '1'}}\n",
        "pod-refused",
        "refused",
    ),
    "image-and-env": (
        APP.format(v=1),
        APP.format(v=2) + "    env: [{name: A, value: b}]\n",
        "pod-refused",
        "refused",
    ),
}


@pytest.mark.parametrize("case", sorted(POD_CASES))
def test_bare_pod_update(case: str, tmp_path: Path) -> None:
    old_spec, new_spec, rule, outcome = POD_CASES[case]
    data = _plan(tmp_path, _pod("p", old_spec), _pod("p", new_spec))
    w = _workloads(data)["Pod/p"]
    assert (w["rule"], w["outcome"]) == (rule, outcome), w
    assert w in data["restart" if outcome == "in place" else "notRestarting"]
    assert data["summary"]["refused"] == (outcome == "refused")


def test_bare_pod_metadata_only(tmp_path: Path) -> None:
    data = _plan(
        tmp_path,
        _pod("p", APP.format(v=1), "  labels: {tier: a}\n"),
        _pod("p", APP.format(v=1), "  labels: {tier: b}\n"),
    )
    w = _workloads(data)["Pod/p"]
    assert (w["rule"], w["outcome"]) == ("pod-updated", "none")
    assert "no container restarts" in w["reason"]


def test_bare_pod_texts_name_the_container_and_the_field(tmp_path: Path) -> None:
    code, out, err = _report(
        tmp_path,
        _pod("a", APP.format(v=1)) + _pod("b", APP.format(v=1) + "  activeDeadlineSeconds: 9\n"),
        _pod("a", APP.format(v=2)) + _pod("b", APP.format(v=1) + "  activeDeadlineSeconds: 99\n"),
        "--format",
        "text",
    )
    assert code == 0, err
    assert "the kubelet restarts container app in place" in out
    assert "spec.activeDeadlineSeconds cannot change" in out
    assert "1 change will be refused by the API server" in out


def _deployment(name: str, init: str, image: str) -> str:
    return (
        f"apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {name}\nspec:\n"
        "  template:\n    spec:\n      initContainers:\n      - name: init\n"
        f"        image: {init}\n      containers:\n      - name: app\n        image: {image}\n---\n"
    )


def test_an_init_image_rolls_a_deployment(tmp_path: Path) -> None:
    data = _plan(tmp_path, _deployment("d", "init:1", "app:1"), _deployment("d", "init:2", "app:1"))
    w = _workloads(data)["Deployment/d"]
    assert (w["rule"], w["outcome"]) == ("deployment-rolls", "rolls")
    assert w["causes"][0]["field"] == "spec.initContainers[init].image"


# ------------------------------------------------------------ 4. control characters

ESC, CR, BEL, RLO = "\x1b", "\r", "\x07", "\u202e"
EVIL = ESC + CR + BEL + RLO + "\x9b"  # \x9b: the C1 CSI


def _cm_and_deployment(value: str, image: str) -> str:
    # YAML double-quoted escapes carry the controls: \e ESC, \r CR, \a BEL, \u202E, \x9b
    name = r'"web\e[31m\r\a\u202E\x9b"'
    return (
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n"
        rf'  name: "cfg\e]0;title\a"'
        "\n"
        rf'  namespace: "ns\u202Eevil"'
        "\n"
        rf'data: {{"key\e[2J": "{value}"}}'
        "\n---\n"
        f"apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {name}\n"
        r'  namespace: "ns\u202Eevil"'
        "\n"
        "spec:\n  template:\n    metadata:\n"
        r'      labels: {"app\e[1m": "x\r\a"}'
        "\n"
        "    spec:\n      containers:\n      - name: c\n"
        f"        image: {image}\n"
        "        envFrom:\n"
        r'        - configMapRef: {name: "cfg\e]0;title\a"}'
        "\n---\n"
    )


@pytest.mark.parametrize("fmt", ["text", "markdown"])
def test_control_characters_are_escaped(fmt: str, tmp_path: Path) -> None:
    old = _cm_and_deployment(r"one\e[31m\r\a\u202Ered", '"app:1\\e[0m"')
    new = _cm_and_deployment(r"two\e[32m\u202E\x9b", '"app:2\\e[0m"')
    code, out, err = _report(
        tmp_path, old, new, "--format", fmt, "--max-restarts-per-namespace", "0"
    )
    assert code == 1  # the budget: its line names the namespace
    for ch in (ESC, CR, BEL, RLO, "\x9b"):
        assert ch not in out, (fmt, repr(ch))
        assert ch not in err, (fmt, repr(ch))
    assert "\\x1b" in out and "\\u202e" in out  # shown, not dropped
    assert "\\u202e" in err
    if fmt == "text":
        assert "web\\x1b[31m\\r\\x07\\u202e\\x9b" in out  # the workload's name
        assert "-one\\x1b[31m\\r\\x07\\u202ered" in out  # the ConfigMap value diff
        assert "key\\x1b[2J" in out  # the key


def test_control_characters_stay_data_in_json(tmp_path: Path) -> None:
    old = _cm_and_deployment("one", '"app:1"')
    new = _cm_and_deployment("two", '"app:2"')
    code, out, err = _report(tmp_path, old, new, "--format", "json")
    assert code == 0, err
    assert ESC not in out and "\\u001b" in out  # JSON escapes C0 itself
    data = json.loads(out)
    assert data["restart"][0]["name"] == "web\x1b[31m\r\x07\u202e\x9b"  # the real name


def test_control_characters_in_codequality(tmp_path: Path) -> None:
    from cmhash.report.render import to_codequality

    text = to_codequality(
        {
            "findings": [
                {
                    "message": f"bad {EVIL}",
                    "code": "x",
                    "fingerprint": "f",
                    "level": "error",
                    "file": "a.yaml",
                    "line": 1,
                }
            ]
        }
    )
    assert "\\u001b" not in text and "\\\\x1b" in text and RLO not in text


def test_visible_keeps_lines_only_where_asked() -> None:
    from cmhash.visible import visible, visible_data

    assert visible("a\nb\x1b") == "a\\nb\\x1b"
    assert visible("a\nb\x1b", lines=True) == "a\nb\\x1b"
    assert visible_data({"valueDiffs": {"k\n": "-a\n+b\r"}, "n": "x\ny"}) == {
        "valueDiffs": {"k\\n": "-a\n+b\\r"},
        "n": "x\\ny",
    }
    assert visible("plain ünïcode ✓") == "plain ünïcode ✓"


# ------------------------------------------------------- 3. a workload defined twice


def test_a_workload_defined_twice_counts_once(tmp_path: Path) -> None:
    old = _deployment("a", "init:1", "app:1")
    new = _deployment("a", "init:1", "app:2")
    code, out, err = _report(tmp_path, old, new + new, "--format", "json", "--max-restarts", "1")
    assert code == 0, err  # one restart: within the budget
    data = json.loads(out)
    assert data["summary"]["restart"] == 1 and len(data["restart"]) == 1
    assert data["restart"][0]["line"] > 1  # the later definition
    (dup,) = [f for f in data["findings"] if f["code"] == "duplicate-object"]
    assert dup["level"] == "warning" and "is also defined at new.yaml:1" in dup["message"]
    assert "counts it once" in dup["message"]
    # the last definition decides: back to OLD's template, nothing rolls
    data = _plan(tmp_path, old + old, new + old)
    assert data["restart"] == [] and data["summary"]["restart"] == 0


# --------------------------------------------- 5. a workload renamed between OLD and NEW


@pytest.mark.parametrize("fmt", ["text", "markdown"])
def test_a_renamed_workload_is_removed_and_added(fmt: str, tmp_path: Path) -> None:
    old = _deployment("a", "init:1", "app:1") + _deployment("keep", "init:1", "app:1")
    new = _deployment("b", "init:1", "app:2") + _deployment("keep", "init:1", "app:2")
    code, out, err = _report(tmp_path, old, new, "--format", fmt, "--max-restarts", "1")
    assert code == 0, err  # one restart (keep); b's pods are new pods, not restarts
    first = out.splitlines()[0]
    assert "1 workload will restart; 1 workload added and 1 removed" in first
    if fmt == "text":
        added = out.index("Added (new pods, not restarts):\n  Deployment/b")
        removed = out.index("Removed (their pods stop when the deployment tool prunes them):")
        assert added < removed and "Deployment/a" in out[removed:]
        assert "Deployment/a" not in out[: out.index("Added")]  # not in the restart list
    else:
        assert "| `Deployment/b` | — | \u2795 added | `new.yaml:1` |" in out
        assert "| `Deployment/a` | — | \u2796 removed | `old.yaml:1` |" in out


def test_renamed_workloads_in_json_and_the_budget(tmp_path: Path) -> None:
    old = _deployment("a", "init:1", "app:1")
    new = _deployment("b", "init:1", "app:2")
    data = _plan(tmp_path, old, new, "--max-restarts", "0")  # exit 0: no restart at all
    assert data["restart"] == [] and data["notRestarting"] == []
    assert [w["name"] for w in data["added"]] == ["b"]
    assert [w["name"] for w in data["removed"]] == ["a"]
    assert (data["summary"]["added"], data["summary"]["removed"]) == (1, 1)
    assert data["summary"]["restart"] == 0


# ------------------------------------------------------------ 6. StatefulSet odd cases


def _sts(image: str, strategy: str, replicas: int = 3) -> str:
    return (
        "apiVersion: apps/v1\nkind: StatefulSet\nmetadata:\n  name: db\nspec:\n"
        f"  replicas: {replicas}\n  serviceName: db\n{strategy}"
        "  template:\n    spec:\n      containers:\n      - name: db\n"
        f"        image: {image}\n---\n"
    )


# kubernetes/kubernetes pkg/apis/apps/validation/validation.go ValidateStatefulSetSpec;
# pkg/controller/statefulset/stateful_set_control.go
STS_CASES = {
    "partition-above-replicas": (
        "  updateStrategy: {rollingUpdate: {partition: 5}}\n",
        "statefulset-partition-all",
        "none",
        "partition 5 ≥ replicas 3: no pod is updated",
    ),
    "partition-equals-replicas": (
        "  updateStrategy: {type: RollingUpdate, rollingUpdate: {partition: 3}}\n",
        "statefulset-partition-all",
        "none",
        "no pod is updated",
    ),
    "negative-partition": (
        "  updateStrategy: {type: RollingUpdate, rollingUpdate: {partition: -1}}\n",
        "statefulset-negative-partition",
        "refused",
        "partition -1 is negative: the API server refuses",
    ),
    "on-delete-with-partition": (
        "  updateStrategy: {type: OnDelete, rollingUpdate: {partition: 1}}\n",
        "statefulset-on-delete-rolling-update",
        "refused",
        "only allowed with type RollingUpdate",
    ),
    "on-delete": (
        "  updateStrategy: {type: OnDelete}\n",
        "statefulset-on-delete",
        "none",
        "only when deleted",
    ),
    "max-unavailable": (
        "  updateStrategy: {rollingUpdate: {maxUnavailable: 2}}\n",
        "statefulset-rolls",
        "rolls",
        "up to 2 pods at a time (maxUnavailable; Kubernetes 1.35+",
    ),
    "max-unavailable-partition": (
        "  updateStrategy: {rollingUpdate: {partition: 1, maxUnavailable: 50%}}\n",
        "statefulset-partition",
        "partial",
        "ordinal ≥ 1 are updated, up to 50% pods at a time",
    ),
}


@pytest.mark.parametrize("case", sorted(STS_CASES))
def test_statefulset_odd_cases(case: str, tmp_path: Path) -> None:
    strategy, rule, outcome, text = STS_CASES[case]
    data = _plan(tmp_path, _sts("db:1", strategy), _sts("db:2", strategy))
    w = _workloads(data)["StatefulSet/db"]
    assert (w["rule"], w["outcome"]) == (rule, outcome)
    assert text in w.get("how", w.get("reason")), w
    restarts = outcome in ("rolls", "partial")
    assert data["summary"]["restart"] == restarts
    assert data["summary"]["refused"] == (outcome == "refused")


# ------------------------------------------------------------------ named lists reordered


def _moved(containers: str) -> str:
    return (
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: api}\nspec:\n"
        "  selector: {matchLabels: {app: api}}\n  template:\n"
        "    metadata: {labels: {app: api}}\n    spec:\n      containers:\n" + containers
    )


ENV_A = "        - {name: A, value: '1'}\n"
ENV_B = "        - {name: B, value: $(A)-x}\n"
APP_ENV = "      - name: app\n        image: app:1\n        env:\n{env}"
SIDECAR = "      - name: side\n        image: side:1\n"


def test_items_that_only_move_are_a_new_template(tmp_path: Path) -> None:
    # env entries (a $(VAR) reads only those before it) and containers in another order:
    # a new pod template, so the Deployment rolls; the report said nothing changed
    data = _plan(
        tmp_path,
        _moved(APP_ENV.format(env=ENV_A + ENV_B)),
        _moved(APP_ENV.format(env=ENV_B + ENV_A)),
    )
    (w,) = data["restart"]
    assert w["causes"] == [
        {
            "type": "env",
            "field": "spec.containers[app].env",
            "change": "changed",
            "old": "order A, B",
            "new": "order B, A",
        }
    ]
    app = APP_ENV.format(env=ENV_A)
    data = _plan(tmp_path, _moved(app + SIDECAR), _moved(SIDECAR + app))
    (w,) = data["restart"]
    assert [(c["type"], c["field"], c["old"], c["new"]) for c in w["causes"]] == [
        ("container", "spec.containers", "order app, side", "order side, app")
    ]
    assert w["outcome"] == "rolls"


# ------------------------------------------------------------------ the API server's defaults

BARE = """      - name: app
        image: app:1
        ports: [{containerPort: 80}]
        readinessProbe: {httpGet: {port: 80}}
        env:
        - name: POD
          valueFrom: {fieldRef: {fieldPath: metadata.name}}
        volumeMounts: [{name: cfg, mountPath: /cfg}]
      volumes: [{name: cfg, configMap: {name: cfg}}]
"""
SPELLED_OUT = """      - name: app
        image: app:1
        imagePullPolicy: IfNotPresent
        terminationMessagePath: /dev/termination-log
        terminationMessagePolicy: File
        ports: [{containerPort: 80, protocol: TCP}]
        readinessProbe:
          httpGet: {port: 80, path: /, scheme: HTTP}
          timeoutSeconds: 1
          periodSeconds: 10
          successThreshold: 1
          failureThreshold: 3
        env:
        - name: POD
          valueFrom: {fieldRef: {apiVersion: v1, fieldPath: metadata.name}}
        volumeMounts: [{name: cfg, mountPath: /cfg}]
      volumes: [{name: cfg, configMap: {name: cfg, defaultMode: 420}}]
      restartPolicy: Always
      dnsPolicy: ClusterFirst
      schedulerName: default-scheduler
      terminationGracePeriodSeconds: 30
      securityContext: {}
      enableServiceLinks: true
"""


def test_a_field_spelled_out_with_its_default_is_no_change(tmp_path: Path) -> None:
    # the API server stores both with the defaults filled in (core/v1 defaults.go): the
    # same pod template, the same ReplicaSet, nothing rolls; the report listed 19 causes
    data = _plan(tmp_path, _moved(BARE), _moved(SPELLED_OUT))
    assert (data["restart"], data["notRestarting"]) == ([], [])
    data = _plan(tmp_path, _moved(SPELLED_OUT), _moved(BARE))
    assert (data["restart"], data["notRestarting"]) == ([], [])
    # a value other than the default is a change: Always for a tagged image, 60 seconds
    pinned = SPELLED_OUT.replace("IfNotPresent", "Always").replace(": 30", ": 60")
    data = _plan(tmp_path, _moved(BARE), _moved(pinned))
    (w,) = data["restart"]
    assert [(c["field"], c.get("new")) for c in w["causes"]] == [
        ("spec.containers[app].imagePullPolicy", "Always"),
        ("spec.terminationGracePeriodSeconds", "60"),
    ]


def test_a_quantity_spelled_otherwise_is_no_change(tmp_path: Path) -> None:
    # the API server stores a quantity canonical (0.5 is 500m, 1024Mi is 1Gi): the same
    # template; a different amount is a change, and another format (1Gi, 1073741824) is
    # one for a StatefulSet only
    def side(cpu: str, memory: str) -> str:
        return _moved(
            "      - name: app\n        image: app:1\n        resources:\n"
            f"          requests: {{cpu: {cpu}, memory: {memory}}}\n"
            f"          limits: {{cpu: {cpu}, memory: {memory}}}\n"
        )

    data = _plan(tmp_path, side("0.5", "1Gi"), side("500m", "1024Mi"))
    assert (data["restart"], data["notRestarting"]) == ([], [])
    data = _plan(tmp_path, side("1", "1e9"), side("1000m", "1G"))
    assert data["restart"] == []
    # one amount in two formats: stored as two spellings, but the Deployment controller
    # compares templates with apiequality.Semantic (Quantity by Cmp): nothing rolls; a
    # StatefulSet's revision is the serialized template: it rolls
    data = _plan(tmp_path, side("1", "1Gi"), side("1", "1073741824"))
    assert data["restart"] == []
    data = _plan(tmp_path, side("1", "1Ki"), side("1", "1024"))
    assert data["restart"] == []
    sts = "apiVersion: apps/v1\nkind: StatefulSet"
    data = _plan(
        tmp_path,
        side("1", "1Gi").replace("apiVersion: apps/v1\nkind: Deployment", sts),
        side("1", "1073741824").replace("apiVersion: apps/v1\nkind: Deployment", sts),
    )
    assert [w["name"] for w in data["restart"]] == ["api"]
    data = _plan(tmp_path, side("0.5", "1Gi"), side("600m", "1Gi"))
    (w,) = data["restart"]
    assert [c["type"] for c in w["causes"]] == ["resources"]
    assert "600m" in w["causes"][0]["new"] and "0.5" in w["causes"][0]["old"]


# ------------------------------------------------------------------ immutable fields


def _sts_with(claims: str, policy: str = "", image: str = "db:1") -> str:
    return (
        "apiVersion: apps/v1\nkind: StatefulSet\nmetadata:\n  name: db\nspec:\n"
        f"  serviceName: db\n{policy}  selector: {{matchLabels: {{app: db}}}}\n"
        "  template:\n    metadata: {labels: {app: db}}\n    spec:\n      containers:\n"
        f"      - name: db\n        image: {image}\n  volumeClaimTemplates:\n{claims}"
    )


def _claim(size: str, extra: str = "") -> str:
    return (
        f"  - {extra}metadata: {{name: data}}\n    spec:\n      accessModes: [ReadWriteOnce]\n"
        f"      resources: {{requests: {{storage: {size}}}}}\n"
    )


def test_an_immutable_field_that_changes_is_refused(tmp_path: Path) -> None:
    # the volume grows, nothing else: ValidateStatefulSetUpdate refuses the update
    # ("updates to statefulset spec for fields other than ... are forbidden"); the report
    # said nothing at all
    data = _plan(tmp_path, _sts_with(_claim("10Gi")), _sts_with(_claim("20Gi")))
    (w,) = data["notRestarting"]
    assert (w["rule"], w["outcome"]) == ("immutable-field", "refused")
    assert w["reason"].startswith("spec.volumeClaimTemplates cannot change")
    assert [c["field"] for c in w["causes"]] == ["StatefulSet spec.volumeClaimTemplates"]
    assert data["summary"]["refused"] == 1
    # with a new image too: refused, not a rolling update
    data = _plan(tmp_path, _sts_with(_claim("10Gi")), _sts_with(_claim("20Gi"), image="db:2"))
    (w,) = data["notRestarting"]
    assert (w["rule"], data["summary"]["restart"]) == ("immutable-field", 0)
    # the same spec as the server stores it: defaults, apiVersion/kind/status, 10240Mi
    same = _sts_with(
        _claim("10240Mi", "apiVersion: v1\n    kind: PersistentVolumeClaim\n    ")
        + "    status: {phase: Pending}\n",
        "  podManagementPolicy: OrderedReady\n",
        image="db:2",
    )
    data = _plan(tmp_path, _sts_with(_claim("10Gi")), same)
    (w,) = data["restart"]
    assert w["rule"] == "statefulset-rolls"
    # a Deployment whose selector changes with its labels: refused, not rolled
    old = _moved(APP_ENV.format(env=ENV_A))
    new = old.replace("{app: api}", "{app: api2}")
    data = _plan(tmp_path, old, new)
    (w,) = data["notRestarting"]
    assert (w["rule"], w["outcome"]) == ("immutable-field", "refused")
    assert w["reason"].startswith("spec.selector cannot change")


@pytest.mark.parametrize(
    ("image", "policy"),
    [
        ("app:latest@sha256:0a1b", "Always"),
        ("app@sha256:0a1b", "IfNotPresent"),
        ("reg:5000/app", "Always"),
        ("reg:5000/app:2", "IfNotPresent"),
    ],
)
def test_the_pull_policy_default_follows_the_image(image: str, policy: str, tmp_path: Path) -> None:
    # SetDefaults_Container: Always for the tag latest (or no tag and no digest)
    def side(extra: str) -> str:
        return _moved(f"      - name: app\n        image: '{image}'\n{extra}")

    data = _plan(tmp_path, side(""), side(f"        imagePullPolicy: {policy}\n"))
    assert data["restart"] == []

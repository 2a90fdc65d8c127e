"""cmhash report says what a rollout costs while it runs: per restart its surge, pods
down at once, the fewest available, waves, requests, downtime and a duration floor
(report format 4), the totals per namespace and in all, and the capacity budget.

tests/fixtures/report-capacity/{old,new}.yaml hold one workload per rule, differing only
in their images; every number asserted here is worked by hand from the controllers' code
(knowledge/capacity.py cites it). Then real renders: Argo CD's HA install upgraded (every
image moves, as between two releases) and the chart ``helm create`` makes, with its HPA:
the totals are the sums of the per-workload figures."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from conftest import CORPUS, ROOT, SHARED_CORPUS, run_cmhash, shared_params
from test_report_truth import _helm

from cmhash.knowledge.quantity import canonical, parse, total

CASE = ROOT / "tests" / "fixtures" / "report-capacity"
GOLDENS = {"json": "expected.json", "markdown": "expected.md", "text": "expected.txt"}


def report(*args: str, cwd: Path = CASE) -> tuple[int, str, str]:
    res = run_cmhash(["report", "--no-config", *args], cwd=cwd)
    return res.code, res.out, res.stderr


@pytest.fixture(scope="module")
def costs() -> dict[str, Any]:
    code, out, err = report("old.yaml", "new.yaml", "--format", "json")
    assert code == 0, err
    return json.loads(out)


def _by_name(data: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {w["name"]: w["capacity"] for w in data["restart"]}


@pytest.mark.parametrize("fmt", sorted(GOLDENS))
def test_golden(fmt: str, update_goldens: bool) -> None:
    code, out, err = report("old.yaml", "new.yaml", "--format", fmt)
    assert code == 0 and err == "", err
    expected = CASE / GOLDENS[fmt]
    if update_goldens:
        expected.write_text(out)
    assert out == expected.read_text()


def test_json_follows_the_schema(costs: dict[str, Any]) -> None:
    import jsonschema

    schema = json.loads((ROOT / "src" / "cmhash" / "schemas" / "report.schema.json").read_text())
    jsonschema.validate(costs, schema)
    assert costs["version"] == 4


def _figures(c: dict[str, Any]) -> tuple[Any, ...]:
    keys = ("replicas", "surgePods", "unavailablePods", "minAvailable", "waves", "downtime")
    return tuple(c[k] for k in keys)


def test_every_rules_numbers(costs: dict[str, Any]) -> None:
    got = _by_name(costs)
    # 25%/25% of 10: ceil(2.5)=3 more, floor(2.5)=2 down, 8 left, ceil(10/5)=2 waves;
    # each wave at least 5 + (2-1)*10 s to ready, + minReadySeconds 10: 2 * 25 = 50 s
    assert _figures(got["web"]) == (10, 3, 2, 8, 2, False)
    assert got["web"]["durationAtLeastSeconds"] == 50
    assert got["web"]["requests"] == {"cpu": "100m", "memory": "128Mi"}
    assert got["web"]["surgeRequests"] == {"cpu": "300m", "memory": "384Mi"}
    # 1 replica, maxSurge 0, maxUnavailable 1: the only pod stops first
    assert _figures(got["single"]) == (1, 0, 1, 0, 1, True)
    # Recreate: every pod stops, then all start (its limits stand in for requests)
    assert _figures(got["legacy"]) == (2, 0, 2, 0, 1, True)
    assert got["legacy"]["requests"] == {"cpu": "1", "memory": "1Gi"}
    # partition 2 of 5: ordinals 4, 3, 2 one at a time
    assert _figures(got["db"]) == (5, 0, 1, 4, 3, False)
    # an init container of 2 CPU / 1Gi over an app of 100m / 64Mi: it is the floor
    assert got["migrator"]["requests"] == {"cpu": "2", "memory": "1Gi"}
    assert got["migrator"]["surgeRequests"] == {"cpu": "2", "memory": "1Gi"}
    assert _figures(got["migrator"]) == (2, 1, 0, 2, 2, False)
    # the HPA's 2..6: the most surge ceil(6*.25)=2, the most down floor(6*.25)=1, the
    # fewest available 2 (at 2: 1 more, 0 down), the most waves 3 (at 3: 1 more, 0 down)
    assert _figures(got["api"]) == ({"min": 2, "max": 6}, 2, 1, 2, 3, False)
    assert got["api"]["surgeRequests"] == {"cpu": "400m", "memory": "512Mi"}
    assert got["api"]["durationAtLeastSeconds"] is None  # no probe, no minReadySeconds
    # a one-replica StatefulSet: downtime
    assert _figures(got["cache"]) == (1, 0, 1, 0, 1, True)
    # a DaemonSet's nodes are unknown offline: the defaults still say +0 / 1 down
    assert _figures(got["agent"]) == (None, 0, 1, None, None, None)
    # maxSurge 100% of 3: 3 more at once, floor(.75)=0 down: one wave
    assert _figures(got["backup"]) == (3, 3, 0, 3, 1, False)


def test_downtime_is_a_warning_with_the_fix(costs: dict[str, Any]) -> None:
    found = [f for f in costs["findings"] if f["code"] == "rollout-downtime"]
    assert [(f["line"], f["level"]) for f in found] == [
        (27, "warning"),
        (49, "warning"),
        (146, "warning"),
    ]
    single = found[0]["message"]
    assert "set maxSurge: 1" in single and "PodDisruptionBudget is not the fix" in single
    assert "evictions" in single
    assert "Recreate" in found[1]["message"] and "run more replicas" in found[2]["message"]
    code, out, _ = report("old.yaml", "new.yaml", "--format", "codequality")
    assert code == 0
    assert sum(1 for i in json.loads(out) if i["check_name"] == "cmhash/rollout-downtime") == 3


def _assert_totals_are_the_sums(data: dict[str, Any]) -> None:
    caps = [w["capacity"] for w in data["restart"]]

    def summed(cs: list[dict[str, Any]]) -> dict[str, Any]:
        return {
            "surgePods": sum(c["surgePods"] or 0 for c in cs),
            "surgeRequests": {
                k: canonical(total(parse(c["surgeRequests"][k]) or parse("0") for c in cs))  # type: ignore[misc]
                for k in ("cpu", "memory")
            },
            "downtime": sum(1 for c in cs if c["downtime"]),
        }

    assert data["summary"]["capacity"] == summed(caps)
    per = data["summary"]["capacityByNamespace"]
    assert sorted(per) == sorted({w["namespace"] for w in data["restart"]})
    for ns, t in per.items():
        mine = [w["capacity"] for w in data["restart"] if w["namespace"] == ns]
        want = summed(mine)
        unknown = sum(
            1 for c in mine if c["surgePods"] is None or None in c["surgeRequests"].values()
        )
        if unknown:  # a namespace's +0 is not "costs nothing"
            want["unknown"] = unknown
        assert t == want


def test_totals_per_namespace_and_in_all(costs: dict[str, Any]) -> None:
    s = costs["summary"]
    # 3 + 0 + 0 + 0 + 1 + 2 + 0 + 0 + 3 pods; 300m + 2 + 400m + 30m; 384Mi + 1Gi + 512Mi + 48Mi
    assert s["capacity"] == {
        "surgePods": 9,
        "surgeRequests": {"cpu": "2730m", "memory": "1968Mi"},
        "downtime": 3,
    }
    assert s["capacityByNamespace"] == {
        "ops": {"surgePods": 3, "surgeRequests": {"cpu": "30m", "memory": "48Mi"}, "downtime": 0},
        "shop": {
            "surgePods": 6,
            "surgeRequests": {"cpu": "2700m", "memory": "1920Mi"},
            "downtime": 3,
        },
    }
    assert s["capacityUnknown"] == 0
    _assert_totals_are_the_sums(costs)


def test_nodes_give_a_daemonsets_figures() -> None:
    code, out, err = report("old.yaml", "new.yaml", "--format", "json", "--nodes", "4")
    assert code == 0, err
    # the defaults on 4 nodes: one node's pod at a time, 4 waves, 3 left
    assert _figures(_by_name(json.loads(out))["agent"]) == (4, 0, 1, 3, 4, False)
    code, out, err = report("old.yaml", "new.yaml", "--format", "json", "--nodes", "1")
    assert _by_name(json.loads(out))["agent"]["downtime"] is True


@pytest.mark.parametrize(
    ("args", "code", "says"),
    [
        (["--max-surge-cpu", "2730m"], 0, ""),
        (["--max-surge-cpu", "2.7"], 1, "request 2730m more cpu (--max-surge-cpu 2700m)"),
        (["--max-surge-memory", "2Gi"], 0, ""),
        (["--max-surge-memory", "1Gi"], 1, "request 1968Mi more memory (--max-surge-memory 1Gi)"),
        (["--no-downtime"], 1, "3 workloads have no pod available during their rollout"),
        (["--max-surge-cpu", "lots"], 2, "'lots' is not a Kubernetes quantity"),
        (["--max-surge-memory", "-1Gi"], 2, "is not a Kubernetes quantity"),
    ],
)
def test_the_capacity_budget(args: list[str], code: int, says: str) -> None:
    got, out, err = report("old.yaml", "new.yaml", "--format", "text", *args)
    assert got == code, err
    assert says in err
    if code == 1:
        assert out.startswith("9 workloads will restart")  # the report is still written


# ------------------------------------------------------------------- real renders


def _upgraded(install: Path, tmp_path: Path) -> tuple[Path, Path]:
    """Argo CD's install as a release upgrade changes it: every image tag moves."""
    text = install.read_text()
    assert "quay.io/argoproj/argocd:latest" in text
    old, new = tmp_path / "old.yaml", tmp_path / "new.yaml"
    old.write_text(text.replace("argocd:latest", "argocd:v3.1.0"))
    new.write_text(text.replace("argocd:latest", "argocd:v3.1.1"))
    return old, new


@pytest.mark.parametrize(
    "install",
    [
        pytest.param(CORPUS / "argo-cd" / "manifests" / "install.excerpt.yaml", id="excerpt"),
        *shared_params(SHARED_CORPUS / "argo-cd/manifests/ha/install.yaml", "shared-ha"),
        *shared_params(SHARED_CORPUS / "argo-cd/manifests/install.yaml", "shared"),
    ],
)
def test_argocd_upgraded(install: Path, tmp_path: Path) -> None:
    _upgraded(install, tmp_path)
    code, out, err = report("old.yaml", "new.yaml", "--format", "json", cwd=tmp_path)
    assert code == 0, err
    data = json.loads(out)
    _assert_totals_are_the_sums(data)
    got = {w["name"]: w["capacity"] for w in data["restart"]}
    # the application controller: a StatefulSet of 1 replica in the plain install
    controller = got["argocd-application-controller"]
    if controller["replicas"] == 1:
        assert controller["downtime"] is True
    # argocd-server: no replicas in the plain install (unknown), 2 in HA (25%/25% of 2:
    # ceil(.5)=1 more, floor(.5)=0 down, 2 waves)
    server = got["argocd-server"]
    if server["replicas"] == 2:
        assert _figures(server) == (2, 1, 0, 2, 2, False)
    else:
        assert server["replicas"] is None and server["surgePods"] is None


def test_a_helm_create_chart_with_its_hpa(tmp_path: Path) -> None:
    """``helm create``'s chart with autoscaling on (HPA 1..100) and requests set: at 100
    replicas 25% is 25 more pods, 25 x 100m CPU and 25 x 128Mi memory."""
    helm = _helm()
    subprocess.run([helm, "create", "shop"], cwd=tmp_path, check=True, capture_output=True)
    for name, tag in (("old.yaml", "1.26"), ("new.yaml", "1.27")):
        values = [
            "--set",
            "autoscaling.enabled=true",
            "--set",
            f"image.tag={tag}",
            "--set",
            "resources.requests.cpu=100m",
            "--set",
            "resources.requests.memory=128Mi",
        ]
        out = subprocess.run(
            [helm, "template", "shop", "./shop", *values],
            cwd=tmp_path,
            check=True,
            capture_output=True,
            text=True,
        ).stdout
        (tmp_path / name).write_text(out)
    code, out, err = report("old.yaml", "new.yaml", "--format", "json", cwd=tmp_path)
    assert code == 0, err
    data = json.loads(out)
    (shop,) = data["restart"]
    c = shop["capacity"]
    # 1..100: at 100, 25 more and 25 down; at 1, 1 more and 0 down (1 left); at 3,
    # 1 more and 0 down: 3 waves
    assert _figures(c) == ({"min": 1, "max": 100}, 25, 25, 1, 3, False)
    assert c["surgeRequests"] == {"cpu": "2500m", "memory": "3200Mi"}
    _assert_totals_are_the_sums(data)


def test_an_unknown_count_still_says_what_holds_at_every_count() -> None:
    """Recreate, or an object its engine re-creates, stops every pod whatever the
    count: downtime; a rolling update's downtime depends on the count: unknown."""
    from cmhash.knowledge.replicas import UNKNOWN, Replicas
    from cmhash.knowledge.rollout_rule import Outcome
    from cmhash.report.capacity import cost

    def deploy(strategy: dict[str, Any]) -> dict[str, Any]:
        return {"spec": {"strategy": strategy, "template": {"spec": {"containers": []}}}}

    key, path = ("apps", "Deployment"), ("spec", "template", "spec")
    recreate = cost(
        key, Outcome.ROLLS, "deployment-recreate", deploy({"type": "Recreate"}), path, UNKNOWN
    )
    assert _figures(recreate.data) == (None, 0, None, 0, 1, True)
    assert recreate.downtime is not None and "Recreate" in recreate.downtime.why
    forced = cost(key, Outcome.RECREATED, "recreated", deploy({}), path, UNKNOWN, "Flux")
    assert _figures(forced.data) == (None, None, None, 0, 1, True)
    rolling = deploy({"rollingUpdate": {"maxSurge": 0, "maxUnavailable": 1}})
    unknown = cost(key, Outcome.ROLLS, "deployment-rolls", rolling, path, UNKNOWN)
    assert _figures(unknown.data) == (None, None, None, None, None, None)
    # a wide range: the small counts are all evaluated (3 waves at 3 replicas), the top too
    wide = cost(key, Outcome.ROLLS, "deployment-rolls", deploy({}), path, Replicas(1, 10000, "HPA"))
    assert _figures(wide.data) == ({"min": 1, "max": 10000}, 2500, 2500, 1, 3, False)


def test_a_known_downtime_is_acknowledged(tmp_path: Path) -> None:
    """``cmhash.io/acknowledge: rollout-downtime`` on a workload (or an ``acknowledge:``
    entry) makes its downtime a notice: still shown, no longer failing --no-downtime."""
    new = (CASE / "new.yaml").read_text()
    for name in ("single", "legacy", "cache"):
        new = new.replace(
            f"  name: {name}\n  namespace: shop\n",
            f"  name: {name}\n  namespace: shop\n"
            "  annotations: {cmhash.io/acknowledge: rollout-downtime}\n",
        )
    (tmp_path / "new.yaml").write_text(new)
    (tmp_path / "old.yaml").write_text((CASE / "old.yaml").read_text())
    code, out, err = report(
        "old.yaml", "new.yaml", "--format", "json", "--no-downtime", cwd=tmp_path
    )
    assert code == 0, err
    data = json.loads(out)
    found = [f for f in data["findings"] if f["code"] == "rollout-downtime"]
    assert [f["level"] for f in found] == ["info", "info", "info"]
    assert all(f["message"].endswith("(acknowledged by cmhash.io/acknowledge)") for f in found)
    assert data["summary"]["capacity"]["downtime"] == 3  # the fact stays

"""The capacity figures and budgets where the controllers, the API server and admission
decide them, on the shapes an attack found wrong: a surge above the replicas, pod-level
limits, negative requests, a RuntimeClass's overhead."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from conftest import run_cmhash


def _pair(tmp_path: Path, new: str) -> None:
    (tmp_path / "new.yaml").write_text(new)
    (tmp_path / "old.yaml").write_text(new.replace("img:2", "img:1"))


def _run(tmp_path: Path, *args: str) -> tuple[int, dict[str, Any], str]:
    res = run_cmhash(
        ["report", "--no-config", "old.yaml", "new.yaml", "--format", "json", *args],
        cwd=tmp_path,
    )
    return res.code, json.loads(res.out) if res.out else {}, res.stderr


SURGE_OVER_REPLICAS = """apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: t}
spec:
  replicas: 2
  strategy: {rollingUpdate: {maxSurge: 200%, maxUnavailable: 0}}
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - {name: c, image: "img:2", resources: {requests: {cpu: "1", memory: 1Gi}}}
"""


def test_a_surge_above_the_replicas_is_capped_at_them(tmp_path: Path) -> None:
    """NewRSNewReplicas never scales the new ReplicaSet above spec.replicas: 200% of 2
    adds 2 pods, not 4, and a 2-CPU budget holds."""
    _pair(tmp_path, SURGE_OVER_REPLICAS)
    code, data, err = _run(tmp_path, "--max-surge-cpu", "2")
    assert code == 0, err
    cap = data["restart"][0]["capacity"]
    assert (cap["surgePods"], cap["surgeRequests"]) == (2, {"cpu": "2", "memory": "2Gi"})


POD_LEVEL_LIMIT = """apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: t}
spec:
  replicas: 2
  strategy: {rollingUpdate: {maxSurge: 1, maxUnavailable: 0}}
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      resources: {limits: {cpu: "2", memory: 1Gi}}
      containers:
      - {name: c, image: "img:2"}
"""


def test_pod_level_limits_are_the_pod_request(tmp_path: Path) -> None:
    """defaultPodRequests: no container requests cpu or memory, so the pod-level limits
    are the pod's requests: the surge is 2 CPU, over a 1-CPU budget."""
    _pair(tmp_path, POD_LEVEL_LIMIT)
    code, data, err = _run(tmp_path, "--max-surge-cpu", "1")
    assert code == 1 and "request 2 more cpu (--max-surge-cpu 1)" in err, err
    assert data["restart"][0]["capacity"]["requests"] == {"cpu": "2", "memory": "1Gi"}


NEGATIVE = """apiVersion: apps/v1
kind: Deployment
metadata: {name: big, namespace: t}
spec:
  replicas: 2
  strategy: {rollingUpdate: {maxSurge: 1, maxUnavailable: 0}}
  selector: {matchLabels: {app: big}}
  template:
    metadata: {labels: {app: big}}
    spec:
      containers:
      - {name: c, image: "img:2", resources: {requests: {cpu: "2", memory: 2Gi}}}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: typo, namespace: t}
spec:
  replicas: 2
  strategy: {rollingUpdate: {maxSurge: 1, maxUnavailable: 0}}
  selector: {matchLabels: {app: typo}}
  template:
    metadata: {labels: {app: typo}}
    spec:
      containers:
      - {name: c, image: "img:2", resources: {requests: {cpu: "-1", memory: -1Gi}}}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: minus, namespace: t}
spec:
  replicas: -1
  selector: {matchLabels: {app: minus}}
  template:
    metadata: {labels: {app: minus}}
    spec:
      containers:
      - {name: c, image: "img:2"}
"""


def test_negative_requests_and_replicas_are_refused_never_summed(tmp_path: Path) -> None:
    """ValidateResourceQuantityValue and ValidateNonnegativeField refuse them: nothing
    rolls, and ``typo`` no longer offsets ``big`` (+2 CPU, +2Gi: over both budgets)."""
    _pair(tmp_path, NEGATIVE)
    code, data, err = _run(tmp_path, "--max-surge-cpu", "1", "--max-surge-memory", "1Gi")
    assert code == 1, err
    assert [w["name"] for w in data["restart"]] == ["big"]
    refused = {w["name"]: w["reason"] for w in data["notRestarting"]}
    assert "requests.cpu -1 is negative" in refused["typo"]
    assert "spec.replicas -1 is negative" in refused["minus"]
    assert data["summary"]["capacity"]["surgeRequests"] == {"cpu": "2", "memory": "2Gi"}


def test_a_request_that_is_no_quantity_or_a_count_beyond_int32_is_refused(
    tmp_path: Path,
) -> None:
    """The API server cannot decode ``1.5.3`` into a Quantity, nor 10^11 into an int32
    spec.replicas: refused, nothing rolls, and the budget is no longer silently passed
    (``typo``'s surge was unknown, ``huge``'s count too)."""
    new = (
        NEGATIVE.replace('cpu: "-1", memory: -1Gi', 'cpu: "1.5.3", memory: 64Mi')
        .replace("replicas: -1", "replicas: 100000000000")
        .replace("name: minus", "name: huge")
    )
    _pair(tmp_path, new)
    code, data, err = _run(tmp_path, "--max-surge-cpu", "1")
    assert code == 1, err  # big alone: +2 CPU
    assert [w["name"] for w in data["restart"]] == ["big"]
    refused = {w["name"]: w["reason"] for w in data["notRestarting"]}
    assert "requests.cpu '1.5.3' is not a quantity" in refused["typo"]
    assert "spec.replicas 100000000000 is no int32" in refused["huge"]
    assert all(w["outcome"] == "refused" for w in data["notRestarting"])


RUNTIMECLASS = """apiVersion: node.k8s.io/v1
kind: RuntimeClass
metadata: {name: kata}
handler: kata
overhead:
  podFixed: {cpu: 250m, memory: 160Mi}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: t}
spec:
  replicas: 2
  strategy: {rollingUpdate: {maxSurge: 1, maxUnavailable: 0}}
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      runtimeClassName: kata
      containers:
      - {name: c, image: "img:2", resources: {requests: {cpu: 100m, memory: 64Mi}}}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: plain, namespace: t}
spec:
  replicas: 2
  strategy: {rollingUpdate: {maxSurge: 1, maxUnavailable: 0}}
  selector: {matchLabels: {app: plain}}
  template:
    metadata: {labels: {app: plain}}
    spec:
      runtimeClassName: runc
      containers:
      - {name: c, image: "img:2", resources: {requests: {cpu: 100m, memory: 64Mi}}}
"""


def test_a_runtime_classes_overhead_is_added(tmp_path: Path) -> None:
    """The RuntimeClass admission sets the pod's overhead from overhead.podFixed:
    100m/64Mi + 250m/160Mi; a RuntimeClass not in the input adds nothing."""
    _pair(tmp_path, RUNTIMECLASS)
    code, data, err = _run(tmp_path)
    assert code == 0, err
    got = {w["name"]: w["capacity"]["requests"] for w in data["restart"]}
    assert got == {
        "web": {"cpu": "350m", "memory": "224Mi"},
        "plain": {"cpu": "100m", "memory": "64Mi"},
    }


RELEASED = """apiVersion: apps/v1
kind: StatefulSet
metadata: {name: part, namespace: t}
spec:
  replicas: 5
  serviceName: x
  updateStrategy: {rollingUpdate: {partition: 1, maxUnavailable: 2}}
  selector: {matchLabels: {app: part}}
  template:
    metadata: {labels: {app: part}}
    spec:
      containers: [{name: c, image: "img:1", resources: {requests: {cpu: 100m}}}]
"""


def test_a_released_partition_counts_the_ordinals_it_held(tmp_path: Path) -> None:
    """Partition 3 → 1, the template unchanged: ordinals 1 and 2 roll, 2 at a time, in
    one wave (3 and 4 are already updated)."""
    (tmp_path / "new.yaml").write_text(RELEASED)
    (tmp_path / "old.yaml").write_text(RELEASED.replace("partition: 1", "partition: 3"))
    code, data, err = _run(tmp_path)
    assert code == 0, err
    cap = data["restart"][0]["capacity"]
    assert (cap["unavailablePods"], cap["minAvailable"], cap["waves"]) == (2, 3, 1)


def _hpa(kind: str, spec: str) -> str:
    api = "keda.sh/v1alpha1" if kind == "ScaledObject" else "autoscaling/v2"
    return f"""apiVersion: {api}
kind: {kind}
metadata: {{name: web, namespace: t}}
spec: {{scaleTargetRef: {{apiVersion: apps/v1, kind: Deployment, name: web}}, {spec}}}
"""


def test_no_negative_count_reaches_the_report(tmp_path: Path) -> None:
    """An HPA minReplicas -3, or 0..0 (refused: maxReplicas "must be greater than 0"), a
    KEDA minReplicaCount -1: no count, never a negative one in the schema'd JSON, and
    never "spec.replicas is 0" for a Deployment of 3."""
    import jsonschema
    from conftest import ROOT

    schema = json.loads((ROOT / "src" / "cmhash" / "schemas" / "report.schema.json").read_text())
    for kind, spec in (
        ("HorizontalPodAutoscaler", "minReplicas: -3, maxReplicas: 2"),
        ("HorizontalPodAutoscaler", "minReplicas: 0, maxReplicas: 0"),
        ("ScaledObject", "minReplicaCount: -1"),
    ):
        _pair(tmp_path, SURGE_OVER_REPLICAS + "---\n" + _hpa(kind, spec))
        code, data, err = _run(tmp_path)
        assert code == 0, err
        jsonschema.validate(data, schema)
        (w,) = data["restart"]
        assert w["capacity"]["replicas"] is None, (spec, w)


# Argo Rollouts' workloadRef example, as in the corpus' argo-rollouts render
WORKLOAD_REF = """apiVersion: apps/v1
kind: Deployment
metadata:
  name: rollout-ref-deployment
spec:
  replicas: 0
  selector:
    matchLabels:
      app: rollout-ref-deployment
  template:
    metadata:
      labels:
        app: rollout-ref-deployment
    spec:
      containers:
        - name: rollouts-demo
          image: img:2
---
apiVersion: argoproj.io/v1alpha1
kind: Rollout
metadata:
  name: rollout-ref-deployment
spec:
  replicas: 5
  workloadRef:
    apiVersion: apps/v1
    kind: Deployment
    name: rollout-ref-deployment
  strategy:
    canary:
      steps:
        - setWeight: 20
        - pause: {duration: 10s}
"""


def test_a_deployment_rolled_by_an_argo_rollout_has_the_rollouts_count(tmp_path: Path) -> None:
    """The Rollout scales the Deployment to 0 and runs its template at its own
    spec.replicas: 5, not the Deployment's 0."""
    _pair(tmp_path, WORKLOAD_REF)
    code, data, err = _run(tmp_path)
    assert code == 0, err
    (w,) = [w for w in data["restart"] if w["kind"] == "Deployment"]
    assert w["capacity"]["replicas"] == 5
    res = run_cmhash(
        ["report", "--no-config", "old.yaml", "new.yaml", "--format", "text"], cwd=tmp_path
    )
    assert "capacity: replicas 5: surge unknown" in res.out


def test_a_namespace_of_unknown_surge_says_so(tmp_path: Path) -> None:
    """Its +0 is not "costs nothing": the namespace's total counts its unknown ones."""
    unknown = SURGE_OVER_REPLICAS.replace("namespace: t", "namespace: u").replace(
        "  replicas: 2\n", ""
    )
    _pair(tmp_path, SURGE_OVER_REPLICAS + "---\n" + unknown)
    code, data, err = _run(tmp_path)
    assert code == 0, err
    by_ns = data["summary"]["capacityByNamespace"]
    assert by_ns["u"]["unknown"] == 1 and "unknown" not in by_ns["t"]
    res = run_cmhash(
        ["report", "--no-config", "old.yaml", "new.yaml", "--format", "text"], cwd=tmp_path
    )
    assert "namespace u: +0 pods (+0 CPU, +0 memory); 1 workload unknown" in res.out

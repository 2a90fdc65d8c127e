"""The rollout plan's arithmetic, pinned to the controllers' own: every number here is
worked by hand from the upstream function named beside it (knowledge/capacity.py,
knowledge/podrequests.py, knowledge/quantity.py), and where upstream has a table test
its rows are copied."""

from __future__ import annotations

from typing import Any

import pytest

from cmhash.knowledge.capacity import (
    CAPACITY_RULES,
    Figures,
    daemonset,
    deployment,
    recreate,
    recreated,
    resolve_fenceposts,
    scaled,
    statefulset,
)
from cmhash.knowledge.podrequests import pod_requests, ready_after
from cmhash.knowledge.quantity import canonical, parse, total


def _rolling(ms: Any = None, mu: Any = None) -> dict[str, Any]:
    rolling = {k: v for k, v in (("maxSurge", ms), ("maxUnavailable", mu)) if v is not None}
    return {"strategy": {"type": "RollingUpdate", "rollingUpdate": rolling}}


# k/k deployment_util_test.go TestResolveFenceposts: (maxSurge, maxUnavailable, desired)
@pytest.mark.parametrize(
    ("ms", "mu", "desired", "want"),
    [
        ("0%", "0%", 0, (0, 1)),
        ("39%", "39%", 10, (4, 3)),
        (None, "39%", 10, (0, 3)),
        ("39%", None, 10, (4, 0)),
        (None, None, 10, (0, 1)),
    ],
)
def test_resolve_fenceposts_as_upstreams_table(ms: Any, mu: Any, desired: int, want: Any) -> None:
    assert resolve_fenceposts(ms, mu, desired) == want


def test_a_string_that_is_no_percentage_is_an_error() -> None:
    with pytest.raises(ValueError, match="not a percentage"):
        resolve_fenceposts("oops", "39%", 10)
    assert deployment(_rolling("oops"), 10) is None


def test_get_scaled_value_rounds_as_asked() -> None:
    # intstr.GetScaledValueFromIntOrPercent: Ceil when rounding up, Floor otherwise
    assert (scaled("25%", 10, True), scaled("25%", 10, False)) == (3, 2)
    assert (scaled("10%", 5, True), scaled("10%", 5, False)) == (1, 0)
    assert scaled(7, 3, True) == 7 and scaled(-1, 3, True) is None and scaled(True, 3, True) is None


@pytest.mark.parametrize(
    ("spec", "n", "want"),
    [
        # 25%/25% of 10: ceil(2.5)=3 more, floor(2.5)=2 down: 13 pods at most, 8
        # available at least, ceil(10/5)=2 waves (a lab saw "max 13 / min ready 8")
        (_rolling(), 10, Figures(3, 2, 8, 2, False)),
        # the defaults with 1 replica: ceil(.25)=1, floor(.25)=0: surge first, no outage
        ({}, 1, Figures(1, 0, 1, 1, False)),
        # 1 replica, maxSurge 0, maxUnavailable 1: the old pod goes first: downtime
        (_rolling(0, 1), 1, Figures(0, 1, 0, 1, True)),
        # "0%"/"1%" of 1 resolve to 0 and 0: unavailable becomes 1: downtime
        (_rolling("0%", "1%"), 1, Figures(0, 1, 0, 1, True)),
        # 3 replicas, 0/1: one at a time, 3 waves
        (_rolling(0, 1), 3, Figures(0, 1, 2, 3, False)),
        # 4 replicas, 50%/0: 2 more at once, 2 waves
        (_rolling("50%", 0), 4, Figures(2, 0, 4, 2, False)),
        # maxUnavailable 10 of 5: MaxUnavailable caps it at 5: everything may go at once
        (_rolling(None, 10), 5, Figures(2, 5, 0, 1, True)),
        # maxSurge 200% of 2 resolves to 4, but the new ReplicaSet never exceeds the
        # replicas (NewRSNewReplicas) and the old pods are at most 2: +2 at most
        (_rolling("200%", 0), 2, Figures(2, 0, 2, 1, False)),
        # an int above the replicas likewise: 20 of 3 is +3
        (_rolling(20, 0), 3, Figures(3, 0, 3, 1, False)),
        # replicas 0: MaxUnavailable is 0; nothing rolls
        (_rolling(), 0, Figures(0, 0, 0, 0, False)),
    ],
)
def test_deployment_rolling_update(spec: dict[str, Any], n: int, want: Figures) -> None:
    got = deployment(spec, n)
    assert got is not None
    assert got[:5] == want[:5]
    assert bool(got.why) == bool(want.downtime)


def test_recreate_and_recreated() -> None:
    assert recreate(3)[:5] == (0, 3, 0, 1, True)
    # deleted and created again: a Deployment's new pods may overlap the terminating
    # ones; a StatefulSet's wait for the old names
    assert recreated(3, "Flux")[:5] == (3, 3, 0, 1, True)
    assert recreated(3, "Flux", same_names=True)[:5] == (0, 3, 0, 1, True)


def _sts(partition: int | None = None, mu: Any = None, parallel: bool = False) -> dict[str, Any]:
    rolling: dict[str, Any] = {}
    if partition is not None:
        rolling["partition"] = partition
    if mu is not None:
        rolling["maxUnavailable"] = mu
    spec: dict[str, Any] = {"updateStrategy": {"type": "RollingUpdate", "rollingUpdate": rolling}}
    if parallel:
        spec["podManagementPolicy"] = "Parallel"
    return spec


@pytest.mark.parametrize(
    ("spec", "n", "want"),
    [
        # 5 replicas, partition 2: ordinals 4, 3, 2, one at a time: 3 waves
        (_sts(2), 5, Figures(0, 1, 4, 3, False)),
        # partition 5 of 5: nothing updates
        (_sts(5), 5, Figures(0, 0, 5, 0, False)),
        # Parallel, maxUnavailable 50% of 5: floor(2.5)=2: {4,3} {2,1} {0}
        (_sts(None, "50%", True), 5, Figures(0, 2, 3, 3, False)),
        # 10% of 5: floor(.5)=0, "round down to at least 1"
        (_sts(None, "10%", True), 5, Figures(0, 1, 4, 5, False)),
        # OrderedReady: updateStatefulSetAfterInvariantEstablished deletes up to
        # maxUnavailable all the same (the policy re-creates them one by one)
        (_sts(None, 2), 3, Figures(0, 2, 1, 2, False)),
        # one replica: its only pod is replaced: downtime
        (_sts(), 1, Figures(0, 1, 0, 1, True)),
        # Parallel, maxUnavailable 100%: every pod at once
        (_sts(None, "100%", True), 3, Figures(0, 3, 0, 1, True)),
    ],
)
def test_statefulset_rolling_update(spec: dict[str, Any], n: int, want: Figures) -> None:
    got = statefulset(spec, n)
    assert got is not None
    assert got[:5] == want[:5]


def test_a_lowered_partition_updates_only_the_ordinals_it_held() -> None:
    """Partition 3 → 1 of 5, the template unchanged: ordinals 3 and 4 already run the
    update revision, only 1 and 2 are replaced: one wave of maxUnavailable 2, two of 1."""
    assert statefulset(_sts(1, 2), 5, held=3)[:5] == (0, 2, 3, 1, False)
    assert statefulset(_sts(1, 1), 5, held=3)[:5] == (0, 1, 4, 2, False)
    # an old partition above the replicas: every ordinal from the new one
    assert statefulset(_sts(1, 1), 5, held=9)[:5] == (0, 1, 4, 4, False)


def test_the_downtime_fix_is_one_that_helps() -> None:
    """A percentage of 100 scales with the replicas: more replicas do not help, a lower
    maxUnavailable does; a one-replica StatefulSet's maxUnavailable is at least 1: only
    more replicas help."""
    from cmhash.knowledge.capacity import (
        FIX_PERCENT,
        FIX_STATEFULSET_ONE,
        FIX_STATEFULSET_PERCENT,
    )

    d100 = deployment(_rolling(0, "100%"), 4)
    assert d100 is not None and d100.fix == FIX_PERCENT and "more replicas do not" in d100.fix
    d1 = deployment(_rolling(0, 1), 1)
    assert d1 is not None and d1.downtime and d1.fix == ""  # FIX: maxSurge 1, more replicas
    s100 = statefulset(_sts(None, "100%"), 4)
    assert s100 is not None and s100.fix == FIX_STATEFULSET_PERCENT
    one = statefulset(_sts(), 1)
    assert one is not None and one.fix == FIX_STATEFULSET_ONE
    assert "lower maxUnavailable" not in one.fix


def _ds(ms: Any = None, mu: Any = None) -> dict[str, Any]:
    rolling = {k: v for k, v in (("maxSurge", ms), ("maxUnavailable", mu)) if v is not None}
    return {"updateStrategy": {"type": "RollingUpdate", "rollingUpdate": rolling}}


@pytest.mark.parametrize(
    ("spec", "nodes", "want"),
    [
        # defaults: 1 down at a time, no surge: 10 waves over 10 nodes
        (_ds(), 10, Figures(0, 1, 9, 10, False)),
        # 30% of 10 nodes: 3 at a time, ceil(10/3)=4 waves
        (_ds(None, "30%"), 10, Figures(0, 3, 7, 4, False)),
        # 25% of 10: rounded UP for a DaemonSet: 3
        (_ds(None, "25%"), 10, Figures(0, 3, 7, 4, False)),
        # maxSurge 10% of 3 (maxUnavailable 0): ceil(.3)=1 new pod first per node
        (_ds("10%", 0), 3, Figures(1, 0, 3, 3, False)),
        # one node, the defaults: its pod stops before the new one starts
        (_ds(), 1, Figures(0, 1, 0, 1, True)),
        # nodes unknown offline: an absolute value still says something
        (_ds(), None, Figures(0, 1, None, None, None)),
        (_ds("10%", 0), None, Figures(None, 0, None, None, None)),
        (_ds(None, "100%"), None, Figures(0, None, None, None, True)),
    ],
)
def test_daemonset_rolling_update(spec: dict[str, Any], nodes: int | None, want: Figures) -> None:
    got = daemonset(spec, nodes)
    assert got is not None
    assert got[:5] == want[:5]


def test_every_rule_cites_upstream() -> None:
    names = [r.name for r in CAPACITY_RULES]
    assert len(names) == len(set(names))
    for r in CAPACITY_RULES:
        assert r.source and r.rule


# ---------------------------------------------------------------- PodRequests


def _c(name: str, **requests: str) -> dict[str, Any]:
    return {"name": name, "resources": {"requests": requests}}


def _text(requests: Any) -> dict[str, str]:
    return {k: canonical(q) for k, q in requests.items()}


def test_pod_requests_the_schedulers_way() -> None:
    """component-helpers PodRequests: containers summed; a sidecar added to the sum and
    to the sidecars started before a later init container; the largest init use a
    floor. C1 {100m, 128Mi} + C2 {200m} = {300m, 128Mi}; I1 {1}: use {1}; S1 {50m,
    64Mi}: sum {350m, 192Mi}, use {50m, 64Mi}; I2 {500m, 1Gi}: use {550m, 1088Mi};
    max per resource: cpu 1, memory 1088Mi."""
    spec = {
        "containers": [_c("c1", cpu="100m", memory="128Mi"), _c("c2", cpu="200m")],
        "initContainers": [
            _c("i1", cpu="1"),
            {**_c("s1", cpu="50m", memory="64Mi"), "restartPolicy": "Always"},
            _c("i2", cpu="500m", memory="1Gi"),
        ],
    }
    assert _text(pod_requests(spec)) == {"cpu": "1", "memory": "1088Mi"}
    # pod-level requests replace the computed value (cpu); memory stays
    assert _text(pod_requests({**spec, "resources": {"requests": {"cpu": "2"}}})) == {
        "cpu": "2",
        "memory": "1088Mi",
    }
    # the RuntimeClass overhead is added last
    with_overhead = {**spec, "overhead": {"cpu": "250m", "memory": "120Mi"}}
    assert _text(pod_requests(with_overhead)) == {"cpu": "1250m", "memory": "1208Mi"}


def test_an_init_container_larger_than_the_app_is_the_floor() -> None:
    spec = {
        "containers": [_c("app", cpu="100m", memory="64Mi")],
        "initContainers": [_c("migrate", cpu="2", memory="1Gi")],
    }
    assert _text(pod_requests(spec)) == {"cpu": "2", "memory": "1Gi"}


def test_a_limit_stands_in_for_a_missing_request() -> None:
    # SetDefaults_Pod: "If limits are specified, but requests are not, default requests
    # to limits", key by key
    spec = {
        "containers": [
            {"name": "a", "resources": {"limits": {"cpu": "1", "memory": "1Gi"}}},
            {"name": "b", "resources": {"limits": {"cpu": 2}, "requests": {"cpu": "500m"}}},
        ]
    }
    assert _text(pod_requests(spec)) == {"cpu": "1500m", "memory": "1Gi"}


def test_a_pod_level_limit_defaults_the_pod_level_request() -> None:
    """defaultPodRequests: "When no containers specify requests for a resource, the
    pod-level requests will default to match the pod-level limits" (the attacked shape:
    pod limits {2, 1Gi}, a container with no resources)."""
    pod_limits = {"resources": {"limits": {"cpu": "2", "memory": "1Gi"}}}
    spec = {"containers": [{"name": "app"}], **pod_limits}
    assert _text(pod_requests(spec)) == {"cpu": "2", "memory": "1Gi"}
    # a container requesting cpu keeps the containers' cpu; memory from the pod limit
    spec = {"containers": [_c("app", cpu="500m")], **pod_limits}
    assert _text(pod_requests(spec)) == {"cpu": "500m", "memory": "1Gi"}
    # a pod-level request wins over the pod-level limit
    both = {"resources": {"limits": {"cpu": "2"}, "requests": {"cpu": "1"}}}
    assert _text(pod_requests({"containers": [{"name": "app"}], **both})) == {"cpu": "1"}


def test_an_unreadable_quantity_makes_the_request_unknown() -> None:
    assert pod_requests({"containers": [_c("a", cpu="{{ .Values.cpu }}")]}) is None
    assert pod_requests({"containers": [{"name": "a"}]}) == {}


def test_ready_after_is_a_floor() -> None:
    probe = {"initialDelaySeconds": 5, "periodSeconds": 10, "successThreshold": 2}
    spec = {"containers": [{"name": "a", "readinessProbe": probe}, {"name": "b"}]}
    assert ready_after(spec) == 15  # 5 + (2 - 1) * 10
    assert ready_after({"containers": [{"name": "a", "readinessProbe": {}}]}) == 0
    startup = {"initialDelaySeconds": 30}
    both = {"containers": [{"name": "a", "readinessProbe": probe, "startupProbe": startup}]}
    # both delays run from the container's start (worker.go doProbe): the readiness
    # probe's first success no earlier than 30 s, the second 10 s later
    assert ready_after(both) == 40


def test_startup_and_readiness_delays_overlap() -> None:
    """Argo CD's redis-ha: redis startup 30 / readiness 30 is Ready at 30, not 60;
    sentinel startup 5 / readiness 30 with successThreshold 3, 15 s apart, at 60."""
    redis = {
        "name": "redis",
        "startupProbe": {"initialDelaySeconds": 30},
        "readinessProbe": {"initialDelaySeconds": 30},
    }
    sentinel = {
        "name": "sentinel",
        "startupProbe": {"initialDelaySeconds": 5},
        "readinessProbe": {"initialDelaySeconds": 30, "periodSeconds": 15, "successThreshold": 3},
    }
    assert ready_after({"containers": [redis]}) == 30
    assert ready_after({"containers": [redis, sentinel]}) == 60


# ------------------------------------------------------------------- Quantity


# apimachinery quantity_test.go TestQuantityString / TestQuantityParseEmit and the type's
# doc comment ("1.5 will be serialized as 1500m", "1.5Gi will be serialized as 1536Mi")
@pytest.mark.parametrize(
    ("text", "want"),
    [
        ("0.5", "500m"),
        (0.5, "500m"),
        ("1.5", "1500m"),
        ("1080m", "1080m"),
        ("1.08", "1080m"),
        ("1000m", "1"),
        ("1000M", "1G"),
        ("3k", "3k"),
        ("3e3", "3e3"),
        ("1Gi", "1Gi"),
        ("1024Mi", "1Gi"),
        ("1.5Gi", "1536Mi"),
        ("1500Mi", "1500Mi"),
        ("307200Ki", "300Mi"),
        (".001Ki", "1024m"),
        (".000000001Ki", "1024n"),
        (".000000000001Ki", "2n"),
        ("0", "0"),
        ("0Mi", "0"),
        (1, "1"),
        (1073741824, "1073741824"),
    ],
)
def test_quantity_canonical_form(text: Any, want: str) -> None:
    q = parse(text)
    assert q is not None
    assert canonical(q) == want


@pytest.mark.parametrize("text", ["x", "1.2.3", "{{ x }}", " 1", True, None, "1ki", "--1"])
def test_what_the_api_server_refuses_is_no_quantity(text: Any) -> None:
    assert parse(text) is None


def test_a_sum_keeps_the_first_terms_family() -> None:
    # Quantity.Add keeps the receiver's format unless it is zero
    assert canonical(total([parse("128Mi"), parse("128Mi")])) == "256Mi"  # type: ignore[list-item]
    assert canonical(total([parse("100m"), parse("1")])) == "1100m"  # type: ignore[list-item]
    q = parse("512Mi")
    assert q is not None and canonical(q.times(3)) == "1536Mi"

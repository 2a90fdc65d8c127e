"""report: what each restart costs while it rolls (knowledge/capacity.py: the
controllers' arithmetic; knowledge/podrequests.py: the pod's requests and readiness
floor), and the totals: per namespace and in all, the peak if every restart rolled at
once, which is what ``kubectl apply`` of the whole render does.

A restart entry's ``capacity`` (report format 4): ``replicas`` (a number, ``{min,
max}`` from an autoscaler, or null), ``surgePods``, ``unavailablePods``,
``minAvailable``, ``waves``, ``requests`` and ``surgeRequests`` (``cpu``, ``memory`` in
canonical form), ``downtime`` and ``durationAtLeastSeconds``; null where the manifests
do not say. Over an autoscaler's range each figure is its worst: the most surge, pods
down and waves, the fewest available, downtime if at any count; the duration's lower
bound is the one that holds at every count (the fewest waves)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, NamedTuple

from cmhash.knowledge import capacity as cap
from cmhash.knowledge.defaults import path_get
from cmhash.knowledge.podrequests import RESOURCES, pod_requests, ready_after
from cmhash.knowledge.quantity import ZERO, Quantity, canonical, parse, total
from cmhash.knowledge.replicas import Replicas
from cmhash.knowledge.rollout_rule import Outcome

_ALL_AT_ONCE = frozenset({Outcome.RECREATED, Outcome.IN_PLACE})
_RANGE_STEPS = 4096  # counts evaluated one by one; beyond, the two ends and a sample


class Downtime(NamedTuple):
    why: str
    fix: str


class Cost(NamedTuple):
    """One restart's capacity (the JSON object) and, when every pod is down at some
    point, why and the fix (a warning finding)."""

    data: dict[str, Any]
    downtime: Downtime | None


def _counts(r: Replicas) -> list[int]:
    assert r.low is not None
    assert r.high is not None
    if r.high - r.low <= _RANGE_STEPS:
        return list(range(r.low, r.high + 1))
    # the small counts one by one (most waves, downtime: where rounding bites), then a
    # sample up to the top (most surge)
    step = (r.high - r.low) // _RANGE_STEPS + 1
    return sorted({*range(r.low, r.low + 64), *range(r.low, r.high + 1, step), r.high})


def _strategy(
    key: tuple[str, str],
    outcome: str,
    rule: str,
    spec: Mapping[str, Any],
    engine: str | None,
    nodes: int | None,
    held: int | None = None,
) -> tuple[Any, str] | None:
    """(a function of the pod count giving ``Figures``, the fix) for the workload's
    strategy; None where no rule gives figures (an operator's kind, an Argo Rollout)."""
    if outcome == Outcome.RECREATED:
        same = key in (("apps", "StatefulSet"), ("", "Pod"))
        return (lambda n: cap.recreated(n, engine or "its engine", same)), cap.FIX_RECREATED
    if outcome == Outcome.IN_PLACE:
        return (lambda n: cap.in_place()), cap.FIX_POD
    if rule == "workload-ref":
        return None
    if key == ("apps", "Deployment"):
        if path_get(spec, ("strategy", "type")) == "Recreate":
            return cap.recreate, cap.FIX_RECREATE
        return (lambda n: cap.deployment(spec, n)), cap.FIX
    if key == ("apps", "StatefulSet"):
        return (lambda n: cap.statefulset(spec, n, held)), cap.FIX_STATEFULSET
    if key == ("apps", "DaemonSet"):
        return (lambda n: cap.daemonset(spec, nodes)), cap.FIX_DAEMONSET
    return None


def _replicas(r: Replicas) -> Any:
    if not r.known:
        return None
    return r.low if r.low == r.high else {"min": r.low, "max": r.high}


def _quantities(values: Mapping[str, Quantity | None] | None) -> dict[str, str | None]:
    if values is None:
        return dict.fromkeys(RESOURCES)
    return {k: None if (q := values.get(k)) is None else canonical(q) for k in RESOURCES}


def cost(
    key: tuple[str, str],
    outcome: str,
    rule: str,
    obj: Mapping[str, Any],
    pod_spec_path: tuple[str, ...],
    replicas: Replicas,
    engine: str | None = None,
    nodes: int | None = None,
    overhead: Mapping[str, Any] | None = None,
    held: int | None = None,
) -> Cost:
    """A restart's capacity figures (``key``: its group and kind; ``obj``: NEW's
    object; ``replicas``: its count, knowledge/replicas.py)."""
    spec = path_get(obj, ("spec",))
    spec = spec if isinstance(spec, Mapping) else {}
    pod = path_get(obj, pod_spec_path)
    pod = pod if isinstance(pod, Mapping) else {}
    if overhead is not None:  # its RuntimeClass's, set by admission (RUNTIMECLASS_SOURCE)
        pod = {**pod, "overhead": overhead}
    requests = pod_requests(pod)
    per_pod: dict[str, Quantity | None] | None = (
        None if requests is None else {k: requests.get(k, ZERO) for k in RESOURCES}
    )
    how = _strategy(key, outcome, rule, spec, engine, nodes, held)
    if key == ("", "Pod"):
        replicas = Replicas(1, 1, "a bare Pod")
    if key == ("apps", "DaemonSet"):
        replicas = Replicas(nodes, nodes, "--nodes" if nodes is not None else "")
    figures: list[cap.Figures | None] = []
    if how is not None:
        if replicas.known:
            figures = [how[0](n) for n in _counts(replicas)]
        elif key == ("apps", "DaemonSet"):
            figures = [how[0](None)]
        elif outcome in _ALL_AT_ONCE or path_get(spec, ("strategy", "type")) == "Recreate":
            one = how[0](1)  # whatever the count, every pod stops: downtime
            surge = 0 if one.surge == 0 else None
            figures = [cap.Figures(surge, None, 0, 1, True, one.why)]
    known = bool(figures) and all(f is not None for f in figures)
    fs = [f for f in figures if f is not None] if known else []

    def peak(values: Iterable[int | None], low: bool = False) -> int | None:
        got = list(values)
        if not got or any(v is None for v in got):
            return None
        return min(got) if low else max(got)  # type: ignore[type-var]

    surge = peak(f.surge for f in fs)
    waves = peak(f.waves for f in fs)
    downs = [f.downtime for f in fs]
    downtime: bool | None = None
    if fs and any(downs):
        downtime = True
    elif fs and all(d is False for d in downs):
        downtime = False
    duration = None
    fewest = peak((f.waves for f in fs), low=True)
    floor = ready_after(pod) + _min_ready(spec, key)
    if fewest and floor:
        duration = fewest * floor
    surge_requests: dict[str, Quantity | None] | None = None
    if per_pod is not None and surge is not None:
        surge_requests = {k: None if q is None else q.times(surge) for k, q in per_pod.items()}
    data = {
        "replicas": _replicas(replicas),
        "surgePods": surge,
        "unavailablePods": peak(f.unavailable for f in fs),
        "minAvailable": peak((f.min_available for f in fs), low=True),
        "waves": waves,
        "requests": _quantities(per_pod),
        "surgeRequests": _quantities(surge_requests if surge is not None else None),
        "downtime": downtime,
        "durationAtLeastSeconds": duration,
    }
    down = None
    if downtime and how is not None:
        first = next(f for f in fs if f.downtime)
        down = Downtime(first.why, first.fix or how[1])
    return Cost(data, down)


def _min_ready(spec: Mapping[str, Any], key: tuple[str, str]) -> int:
    if key == ("", "Pod"):
        return 0
    value = spec.get("minReadySeconds")
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


def _sum(entries: list[dict[str, Any]]) -> dict[str, Any]:
    caps = [w["capacity"] for w in entries if w.get("capacity")]
    requests: dict[str, str] = {}
    for k in RESOURCES:
        known = [c["surgeRequests"][k] for c in caps if c["surgeRequests"][k] is not None]
        requests[k] = canonical(total(q for q in map(parse, known) if q is not None))
    return {
        "surgePods": sum(c["surgePods"] for c in caps if c["surgePods"] is not None),
        "surgeRequests": requests,
        "downtime": sum(1 for c in caps if c["downtime"]),
    }


def unknown(restart: list[dict[str, Any]]) -> int:
    """The restarts whose surge (or its requests) the manifests do not give."""
    return sum(
        1
        for w in restart
        if w.get("capacity")
        and (w["capacity"]["surgePods"] is None or None in w["capacity"]["surgeRequests"].values())
    )


def totals(restart: list[dict[str, Any]]) -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
    """``summary.capacity`` (every restart rolling at once) and the same per namespace:
    the known figures summed, the workloads with downtime counted (per namespace, the
    workloads of unknown surge too: ``capacityUnknown`` counts them in all)."""
    by_ns: dict[str, list[dict[str, Any]]] = {}
    for w in restart:
        by_ns.setdefault(w["namespace"], []).append(w)
    per_ns = {}
    for ns, ws in sorted(by_ns.items()):
        per_ns[ns] = _sum(ws)
        if unknown(ws):  # its +0 is not "costs nothing"
            per_ns[ns]["unknown"] = unknown(ws)
    return _sum(restart), per_ns


def downtime_finding(w: Mapping[str, Any], down: Downtime) -> Any:
    """The warning for a restart whose every pod is down at some point, with the fix."""
    from cmhash.findings import Code, Finding
    from cmhash.model import Level, ResourceId

    group = w["apiVersion"].rpartition("/")[0] if "/" in w["apiVersion"] else ""
    what = f"{w['kind']} {w['name']!r}"
    has = "has no pod available during its rollout"
    if w["kind"] == "Pod":
        has = "is not ready during its restart"
    return Finding(
        w["file"],
        w["line"],
        1,
        Level.WARNING,
        Code.ROLLOUT_DOWNTIME,
        f"{what} {has} ({down.why}): {down.fix}",
        f"{w['kind']}/{w['name']}",
        ResourceId(group, w["kind"], w["namespace"], w["name"]),
        w["apiVersion"],
    )

"""A pod's effective CPU and memory request as the scheduler computes it, and the
shortest time a new pod can take to become available: the two per-pod numbers the
rollout plan multiplies (report/capacity.py).

**Requests** (component-helpers ``resource.PodRequests``, what the scheduler's
``computePodResourceRequest`` calls for a pod not yet scheduled), from the pod template:

1. each container's requests, a limit standing in for a request it lacks
   (``SetDefaults_Pod``: "If limits are specified, but requests are not, default
   requests to limits", containers and init containers, key by key);
2. the regular containers summed;
3. the init containers in order: a restartable one (``restartPolicy: Always``, a
   sidecar) is added to the sum and to the sidecars started so far; a regular one needs
   its own request plus the sidecars started before it; the largest of these is a floor
   (``max(sum, init peak)``, resource by resource);
4. pod-level ``spec.resources.requests`` (cpu, memory) replace the computed value
   (``PodLevelResources``, beta and on from Kubernetes 1.34); a pod-level limit stands
   in for a pod-level request where no container requests (or limits) that resource
   (``defaultPodRequests``: "When no containers specify requests for a resource, the
   pod-level requests will default to match the pod-level limits");
5. ``spec.overhead`` added.

A quantity the API server would refuse (an unrendered template, a word) makes the
request unknown. A LimitRange's defaults are not in the manifest: the figure is what the
manifest asks for.

**Readiness floor** (kubelet ``prober/worker.go doProbe``; ``IsPodAvailable``): a
readiness probe runs no earlier than ``initialDelaySeconds`` from the container's start
and needs ``successThreshold`` successes ``periodSeconds`` apart (defaults 0, 10, 1); a
startup probe holds the others until it succeeds, no earlier than its own delay, which
runs from the same start: the two delays overlap (the later counts), they do not add; a
pod is
available ``minReadySeconds`` after it is ready. Image pulls, scheduling and start-up
take time too, unknown offline: the result is a lower bound.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from cmhash.knowledge.quantity import Quantity, parse

RESOURCES = ("cpu", "memory")
REQUESTS_SOURCE = (
    "kubernetes/component-helpers resource/helpers.go PodRequests, "
    "aggregateContainerResourcesByFn (restartable init containers added cumulatively, "
    "the largest init container as a floor), addResourceList, maxResourceList; "
    "kubernetes/kubernetes pkg/apis/core/v1/defaults.go SetDefaults_Pod (limits as "
    "requests), defaultPodRequests (a pod-level limit as the pod-level request where no "
    "container requests the resource); pkg/scheduler/framework/plugins/noderesources/fit.go "
    "computePodResourceRequest"
)
DURATION_SOURCE = (
    "kubernetes/kubernetes pkg/kubelet/prober/worker.go doProbe (no probe before "
    "initialDelaySeconds; successThreshold successes periodSeconds apart); "
    "pkg/api/v1/pod/util.go IsPodAvailable (minReadySeconds after Ready); "
    "k8s.io/api core/v1 types.go Probe (defaults 0, 10, 1)"
)

Requests = dict[str, Quantity]


def _list(value: Any) -> list[Mapping[str, Any]]:
    return [c for c in value if isinstance(c, Mapping)] if isinstance(value, list) else []


def _parsed(values: Mapping[str, Any]) -> Requests | None:
    """The cpu and memory ``values`` give (None: one is no quantity)."""
    out: Requests = {}
    for key in RESOURCES:
        if key in values:
            q = parse(values[key])
            if q is None:
                return None
            out[key] = q
    return out


def _requests(container: Mapping[str, Any]) -> Requests | None:
    resources = container.get("resources")
    if resources is None:
        return {}
    if not isinstance(resources, Mapping):
        return None
    out: Requests = {}
    for field in ("limits", "requests"):  # a request set wins over the limit's default
        values = resources.get(field)
        if values is None:
            continue
        got = _parsed(values) if isinstance(values, Mapping) else None
        if got is None:
            return None
        out.update(got)
    return out


def _add(into: Requests, more: Requests) -> Requests:
    out = dict(into)
    for key, q in more.items():
        out[key] = out[key].add(q) if key in out else q
    return out


def _max(into: Requests, more: Requests) -> Requests:
    out = dict(into)
    for key, q in more.items():
        if key not in out or q.value > out[key].value:
            out[key] = q
    return out


def pod_requests(spec: Mapping[str, Any]) -> Requests | None:
    """cpu and memory of one pod (a key absent: nothing requests it); None when a
    quantity cannot be read, or is negative (refused: never a figure that lowers a
    total)."""
    if negative_quantity(spec) is not None:
        return None
    total: Requests = {}
    for c in _list(spec.get("containers")):
        got = _requests(c)
        if got is None:
            return None
        total = _add(total, got)
    sidecars: Requests = {}
    peak: Requests = {}
    for c in _list(spec.get("initContainers")):
        got = _requests(c)
        if got is None:
            return None
        if c.get("restartPolicy") == "Always":
            total = _add(total, got)
            sidecars = _add(sidecars, got)
            use = sidecars
        else:
            use = _add(got, sidecars)
        peak = _max(peak, use)
    total = _max(total, peak)
    pod = spec.get("resources")
    if isinstance(pod, Mapping):
        requests, limits = pod.get("requests"), pod.get("limits")
        requests = requests if isinstance(requests, Mapping) else {}
        limits = limits if isinstance(limits, Mapping) else {}
        # a pod-level limit is the request where no container requests it: defaultPodRequests
        given = {k: v for k, v in limits.items() if k not in total}
        got = _parsed({**given, **requests})
        if got is None:
            return None
        total.update(got)
    overhead = spec.get("overhead")
    if isinstance(overhead, Mapping):
        extra = _parsed(overhead)
        if extra is None:
            return None
        total = _add(total, extra)
    return total


NEGATIVE_SOURCE = (
    "kubernetes/kubernetes pkg/apis/core/validation/validation.go "
    "ValidateResourceRequirements, ValidatePodResources, validateOverhead -> "
    'ValidateResourceQuantityValue ("must be greater than or equal to 0")'
)


# A pod's overhead is set at its creation from its RuntimeClass, which cmhash reads when
# the input holds it (report/scaling.py): the admission plugin writes it, rejecting a pod
# whose own overhead differs
RUNTIMECLASS = ("node.k8s.io", "RuntimeClass")
RUNTIMECLASS_SOURCE = (
    "kubernetes/kubernetes plugin/pkg/admission/runtimeclass/admission.go setOverhead "
    "(pod.Spec.Overhead = nodeOverhead.PodFixed; \"Pod's Overhead doesn't match "
    "RuntimeClass's defined Overhead\"); component-helpers resource/helpers.go "
    "PodRequests (the overhead added)"
)


def runtime_class_overhead(obj: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """A RuntimeClass's ``overhead.podFixed`` (None: none)."""
    overhead = obj.get("overhead")
    fixed = overhead.get("podFixed") if isinstance(overhead, Mapping) else None
    return fixed if isinstance(fixed, Mapping) else None


def negative_quantity(spec: Mapping[str, Any]) -> str | None:
    """The first request, limit or overhead of a pod spec that is negative or no quantity
    at all, as ``containers[c].resources.requests.cpu -1 is negative``: the API server
    refuses the object (and such a figure would lower the totals or hide a surge)."""
    places: list[tuple[str, Any]] = []
    for field in ("initContainers", "containers"):
        for c in _list(spec.get(field)):
            r = c.get("resources")
            where = f"{field}[{c.get('name')}].resources"
            if isinstance(r, Mapping):
                places += [(f"{where}.{k}", r.get(k)) for k in ("requests", "limits")]
    pod = spec.get("resources")
    if isinstance(pod, Mapping):
        places += [(f"resources.{k}", pod.get(k)) for k in ("requests", "limits")]
    places.append(("overhead", spec.get("overhead")))
    for where, values in places:
        if not isinstance(values, Mapping):
            continue
        for key, text in values.items():
            q = parse(text)
            if q is None and text is not None:
                # (null decodes to a zero Quantity; anything else must parse first)
                return f"{where}.{key} {text!r} is not a quantity"
            if q is not None and q.value < 0:
                return f"{where}.{key} {text} is negative"
    return None


def _seconds(probe: Any, field: str, default: int) -> int:
    value = probe.get(field) if isinstance(probe, Mapping) else None
    return (
        value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else default
    )


def ready_after(spec: Mapping[str, Any]) -> int:
    """The fewest seconds from a container's start to the pod being Ready."""
    longest = 0
    containers = [
        *_list(spec.get("containers")),
        *(c for c in _list(spec.get("initContainers")) if c.get("restartPolicy") == "Always"),
    ]
    for c in containers:
        startup, readiness = c.get("startupProbe"), c.get("readinessProbe")
        # every probe's delay runs from the container's start: readiness is probed from
        # the later of its own delay and the startup probe's success
        t = _seconds(startup, "initialDelaySeconds", 0) if isinstance(startup, Mapping) else 0
        if isinstance(readiness, Mapping):
            t = max(t, _seconds(readiness, "initialDelaySeconds", 0))
            succ = max(_seconds(readiness, "successThreshold", 1), 1)
            t += (succ - 1) * _seconds(readiness, "periodSeconds", 10)
        longest = max(longest, t)
    return longest

"""What an update of a bare Pod does, field by field, as one table.

A Pod has no template and no rollout: ``kubectl apply`` updates the Pod object itself,
and the API server allows only a few spec changes (kubernetes/kubernetes
pkg/apis/core/validation/validation.go ``ValidatePodUpdate`` and its
``updatablePodSpecFields``: ``spec.containers[*].image``, ``spec.initContainers[*].image``,
``spec.activeDeadlineSeconds`` (set, or lowered), ``spec.tolerations`` (additions only,
``validateOnlyAddedTolerations``), ``spec.schedulingGates`` (removals only,
``validateOnlyDeletedSchedulingGates``), ``spec.terminationGracePeriodSeconds`` (to 1
from a negative value); metadata through ``ValidateObjectMetaUpdate``). Any other spec
change makes the whole update fail.

What an allowed change does on the node is the kubelet's: a container whose definition
changed is killed and started again in the same Pod (pkg/kubelet/kuberuntime/
kuberuntime_manager.go ``computePodActions``, ``containerChanged``); a completed init
container is not run again (kuberuntime_container.go ``computeInitContainerActions``:
"after initialization, only restartable init containers need to be kept running"),
while a sidecar (an init container with ``restartPolicy: Always``) is restarted
("Restart running sidecar containers which have had their definition changed").

Each row: a field pattern of a template cause (report/podtemplate.py), whether the API
server allows the change (given both Pods and the change: added, removed or changed), and
what the allowed change does; report/rollout.py walks it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any, NamedTuple

from cmhash.knowledge.defaults import path_get
from cmhash.model import TextEnum

VALIDATION = "kubernetes/kubernetes pkg/apis/core/validation/validation.go ValidatePodUpdate"
KUBELET = "kubernetes/kubernetes pkg/kubelet/kuberuntime"


class Effect(TextEnum):
    APPLIED = "applied"  # the Pod object changes; no container restarts
    RESTARTS = "restarts a container"  # the kubelet restarts one container in place
    REFUSED = "refused"  # the API server refuses the update (kubectl apply fails)


Pods = tuple[Mapping[str, Any], Mapping[str, Any]]  # (old Pod, new Pod), plain data
Allowed = Callable[[Pods, str, "re.Match[str]"], bool]  # (pods, the change, the match)
Does = Callable[[Pods, "re.Match[str]"], Effect]


class PodField(NamedTuple):
    pattern: str  # a regular expression over the cause's field path (whole match)
    allowed: Allowed  # whether ValidatePodUpdate lets this change through
    does: Does  # what it does once applied
    field: str  # the row in words (docs/report.md)
    source: str


def _always(pods: Pods, change: str, m: re.Match[str]) -> bool:
    """Always."""
    return True


def _changed(pods: Pods, change: str, m: re.Match[str]) -> bool:
    """A value replaced (not a container or field added or removed)."""
    return change == "changed"


def _deadline(pods: Pods, change: str, m: re.Match[str]) -> bool:
    """Set from nothing, or lowered; never removed, never raised, never below 1."""
    old, new = (path_get(p, ("spec", "activeDeadlineSeconds")) for p in pods)
    # (ValidatePodSpec, which the update runs too: between 1 and MaxInt32)
    if not isinstance(new, int) or isinstance(new, bool) or not 1 <= new <= 2**31 - 1:
        return False
    return old is None or (isinstance(old, int) and new <= old)


def _without_seconds(t: Any) -> Any:
    return {k: v for k, v in t.items() if k != "tolerationSeconds"} if isinstance(t, dict) else t


def _tolerations_added(pods: Pods, change: str, m: re.Match[str]) -> bool:
    """Every old toleration is kept (its tolerationSeconds may change)."""
    old, new = (path_get(p, ("spec", "tolerations")) or [] for p in pods)
    if not isinstance(old, list) or not isinstance(new, list):
        return False
    kept = [_without_seconds(t) for t in new]
    return all(_without_seconds(t) in kept for t in old)


def _gates_removed(pods: Pods, change: str, m: re.Match[str]) -> bool:
    """Gates are only removed."""
    old, new = (path_get(p, ("spec", "schedulingGates")) or [] for p in pods)
    return isinstance(old, list) and isinstance(new, list) and all(g in old for g in new)


def _grace_to_one(pods: Pods, change: str, m: re.Match[str]) -> bool:
    """Set to 1 from a negative value."""
    old, new = (path_get(p, ("spec", "terminationGracePeriodSeconds")) for p in pods)
    return isinstance(old, int) and old < 0 and new == 1


def _applied(pods: Pods, m: re.Match[str]) -> Effect:
    return Effect.APPLIED


def _restarts(pods: Pods, m: re.Match[str]) -> Effect:
    return Effect.RESTARTS


def _init_image(pods: Pods, m: re.Match[str]) -> Effect:
    """A sidecar restarts; a completed init container does not run again."""
    items = path_get(pods[1], ("spec", "initContainers"))
    name = m.group(1)
    for i, item in enumerate(items if isinstance(items, list) else []):
        if isinstance(item, dict) and (item.get("name") == name or f"{i}" == name):
            return Effect.RESTARTS if item.get("restartPolicy") == "Always" else Effect.APPLIED
    return Effect.APPLIED


# first match wins; a field no row matches is refused
POD_FIELDS: tuple[PodField, ...] = (
    PodField(
        r"metadata\..*",
        _always,
        _applied,
        "metadata.labels, metadata.annotations",
        f"{VALIDATION} (ValidateObjectMetaUpdate: labels and annotations may change)",
    ),
    PodField(
        r"spec\.containers\[(.+)\]\.image",
        _changed,
        _restarts,
        "spec.containers[*].image",
        f"{VALIDATION} (updatablePodSpecFields); {KUBELET}/kuberuntime_manager.go "
        "computePodActions (containerChanged: the container is killed and started again)",
    ),
    PodField(
        r"spec\.initContainers\[(.+)\]\.image",
        _changed,
        _init_image,
        "spec.initContainers[*].image (a sidecar with restartPolicy: Always restarts; "
        "a completed init container does not run again)",
        f"{VALIDATION} (updatablePodSpecFields); {KUBELET}/kuberuntime_container.go "
        "computeInitContainerActions",
    ),
    PodField(
        r"spec\.activeDeadlineSeconds",
        _deadline,
        _applied,
        "spec.activeDeadlineSeconds (set, or lowered)",
        f"{VALIDATION} (from nil to a positive value, or to a lesser one; ValidatePodSpec: "
        "between 1 and MaxInt32)",
    ),
    PodField(
        r"spec\.tolerations",
        _tolerations_added,
        _applied,
        "spec.tolerations (additions; tolerationSeconds may change)",
        "kubernetes/kubernetes pkg/apis/core/validation/validation.go validateOnlyAddedTolerations",
    ),
    PodField(
        r"spec\.schedulingGates.*",
        _gates_removed,
        _applied,
        "spec.schedulingGates (removals)",
        "kubernetes/kubernetes pkg/apis/core/validation/validation.go "
        "validateOnlyDeletedSchedulingGates (Kubernetes 1.27+)",
    ),
    PodField(
        r"spec\.terminationGracePeriodSeconds",
        _grace_to_one,
        _applied,
        "spec.terminationGracePeriodSeconds (to 1 from a negative value)",
        f"{VALIDATION} (updatablePodSpecFields)",
    ),
)

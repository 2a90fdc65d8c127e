"""``HOLDS``: the fields that hold pods back from a workload's current template (a paused
Deployment, a StatefulSet's partition, the OnDelete strategy), and which change of each
releases them: the pods earlier template changes left behind roll then, although the
template itself does not change (report/rollout.py ``released``, the rules
``deployment-resumed``, ``statefulset-released``, ``daemonset-released``). And how a
rule names the ordinals a change reaches at a count that may be a range or unknown."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

from cmhash.knowledge.defaults import path_get
from cmhash.knowledge.replicas import Replicas
from cmhash.knowledge.rollout_rule import DAEMONSET, DEPLOYMENT, ROLLOUT, STATEFULSET, Workload
from cmhash.knowledge.strategy import whole


def ordinals(low: int, n: Replicas, high: int | None = None) -> str:
    """The ordinals from ``low`` (below ``high``, when given) that exist at ``n`` pods,
    in words."""
    top = n.high if n.known else None
    if high is not None:
        top = high if top is None else min(top, high)
    if top is None:
        return f"ordinals ≥ {low} ({n.said()})"
    if low >= top:
        return f"no ordinal ({n.said()})"
    span = f"ordinal {low}" if top - low == 1 else f"ordinals {low}..{top - 1}"
    # (a range: fewer pods than its top run ordinals that far when it is lower)
    most = " at most" if n.low is not None and n.low < top else ""
    return f"{span}{most} ({n.said()})"


class Hold(NamedTuple):
    """A field that holds pods back from the current template, and the change of it
    that releases them."""

    kinds: tuple[tuple[str, str], ...]
    path: tuple[str, ...]
    # "unset": true → not true; "lowered": a number that goes down (absent: 0);
    # "left": the value ``value`` is left for another
    how: str
    value: Any = None
    source: str = ""


HOLDS: tuple[Hold, ...] = (
    Hold(
        DEPLOYMENT,
        ("spec", "paused"),
        "unset",
        source="kubernetes/kubernetes pkg/controller/deployment/deployment_controller.go "
        "syncDeployment (paused: dc.sync, no new ReplicaSet; resumed: rolloutRolling or "
        "rolloutRecreate of the current template)",
    ),
    Hold(
        ROLLOUT,
        ("spec", "paused"),
        "unset",
        source="argoproj/argo-rollouts pkg/apis/rollouts/v1alpha1/types.go RolloutSpec."
        'Paused ("pauses the rollout at its current step"); rollout/canary.go '
        "reconcileCanaryPause, completedCurrentCanaryStep (no step completes while "
        "spec.paused)",
    ),
    Hold(
        STATEFULSET,
        ("spec", "updateStrategy", "rollingUpdate", "partition"),
        "lowered",
        source="kubernetes/kubernetes pkg/controller/statefulset/stateful_set_control.go "
        "updateStatefulSet (pods from the highest ordinal down to the partition are "
        "brought to the update revision)",
    ),
    Hold(
        (*STATEFULSET, *DAEMONSET),
        ("spec", "updateStrategy", "type"),
        "left",
        "OnDelete",
        source="kubernetes/kubernetes pkg/controller/statefulset/stateful_set_control.go "
        '("for the OnDelete strategy we short circuit"); pkg/controller/daemon/update.go '
        "rollingUpdate",
    ),
)


def old_field(c: Workload, *path: str) -> Any:
    return path_get(c.old, path) if c.old is not None else None


def released_only(c: Workload) -> bool:
    """Only a holding field changed (the template did not), and that change releases
    pods."""
    return not c.template_changed and bool(c.released())


RELEASED = "the change releases pods held back (rollout released): "


def _count(value: Any) -> int:
    return whole(value) or 0  # a whole YAML float is the integer kubectl sends


def released_fields(
    kind: tuple[str, str], old: Any, new: Any, true: Callable[[Any], bool]
) -> list[tuple[str, Any, Any]]:
    """(field, old value, new value) of each holding field whose change from ``old`` to
    ``new`` (both plain data) releases pods (``true``: a boolean as kubectl reads it)."""
    out = []
    for hold in HOLDS:
        if kind not in hold.kinds:
            continue
        before, after = path_get(old, hold.path), path_get(new, hold.path)
        if hold.how == "unset":
            hit = true(before) and not true(after)
        elif hold.how == "lowered":
            hit = _count(before) > _count(after)
        else:
            hit = before == hold.value and after != hold.value
        if hit:
            out.append((".".join(hold.path), before, after))
    return out

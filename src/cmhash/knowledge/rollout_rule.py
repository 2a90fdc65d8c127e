"""What a rollout rule is (knowledge/rollout.py RULES): the kinds it applies to, the
condition on the workload under which it holds, the outcome, the text that says why, and
where Kubernetes (or the controller that owns the kind) defines it.

A rule reads a ``Workload``: the NEW object (and the OLD one) as plain data, with what
the report works out about it (report/rollout.py Context). A new rule is a row, with its
predicate beside it when plain data answers it; a fact plain data does not give (another
object of NEW, a comparison) is a member of ``Workload`` that Context provides. The kind
groups the rules name are here too.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, NamedTuple, Protocol

from cmhash.knowledge.defaults import path_get
from cmhash.knowledge.podupdate import Effect
from cmhash.knowledge.replicas import SPEC, Replicas, replicas_of
from cmhash.knowledge.strategy import STRATEGY_CHECKS, refused_strategy
from cmhash.model import ResourceId, TextEnum


class Outcome(TextEnum):
    ROLLS = "rolls"  # every pod is replaced
    PARTIAL = "partial"  # some pods are replaced (a StatefulSet partition)
    IN_PLACE = "in place"  # a bare Pod's containers restart with a new image
    NONE = "none"  # applied, but no pod is replaced
    NEXT_RUN = "next run"  # a CronJob: the next Job uses it
    REFUSED = "refused"  # the API server refuses the change: kubectl apply fails
    # its engine deletes the object and creates it again (Flux force, Argo CD Force=true):
    # every pod stops and new ones start, all at once
    RECREATED = "re-created"
    STARTS = "starts"  # scaled from 0: new pods start, none is replaced
    STOPS = "stops"  # scaled to 0: every pod stops, none is replaced


RESTARTS = frozenset({Outcome.ROLLS, Outcome.PARTIAL, Outcome.IN_PLACE, Outcome.RECREATED})


class Takeover(NamedTuple):
    """The Argo Rollout that runs a workload's template (``spec.workloadRef``)."""

    name: str  # "Rollout/name (strategy)"
    obj: Mapping[str, Any]  # the Rollout (plain data): whether it is paused, its replicas

    def spec(self, *path: str) -> Any:
        return path_get(self.obj, ("spec", *path))


class Workload(Protocol):
    """What a rule reads of a workload whose pod template changed."""

    @property
    def id(self) -> ResourceId: ...
    @property
    def obj(self) -> Mapping[str, Any]: ...  # the NEW object
    @property
    def old(self) -> Mapping[str, Any] | None: ...  # the OLD object
    @property
    def rollouts(self) -> Mapping[ResourceId, Takeover]: ...  # workload -> its Argo Rollout
    @property
    def runs_again_as(self) -> str | None: ...  # --jobs=rename: the Job's new name
    @property
    def old_name(self) -> str: ...  # its name in OLD (a renamed Job's differs)
    def spec(self, *path: str) -> Any: ...  # a field of NEW's spec (None: absent)
    def true(self, value: Any) -> bool: ...  # a boolean as kubectl reads it (yes, on...)
    def fixed(self) -> list[str]: ...  # immutable fields that changed (defaults.py FIXED)
    def pod(self) -> tuple[Effect, str]: ...  # a bare Pod's update, why (podupdate.py)
    def hook(self) -> bool: ...  # a Helm or Argo CD hook (helm.sh/hook, argocd.../hook)
    # its pod count in NEW and in OLD (knowledge/replicas.py: a number, an autoscaler's
    # range, or unknown offline; OLD None: no OLD object)
    def replicas(self) -> Replicas: ...
    def old_replicas(self) -> Replicas | None: ...
    @property
    def template_changed(self) -> bool: ...  # False: only a rollout-holding field changed
    def released(self) -> list[tuple[str, Any, Any]]: ...  # those fields (rollout_apps HOLDS)
    # the engine that deletes and re-creates it on an immutable change, in words (Flux's
    # force, Argo CD's Force=true: knowledge/rollout_tools.py RECREATE), or None
    def forced(self) -> str | None: ...
    def skipped(self) -> str | None: ...  # why Argo CD never applies it (hook: Skip...)


class Rule(NamedTuple):
    name: str  # stable id (JSON "rule")
    kinds: tuple[tuple[str, str], ...]  # (group, kind)
    when: Callable[[Workload], bool]
    condition: str  # ``when`` in words (docs/report.md)
    outcome: Outcome
    text: Callable[[Workload], str]
    source: str  # where Kubernetes (or the controller) defines it


def always(c: Workload) -> bool:
    return True


def refused_strategy_rule(name: str, kinds: tuple[tuple[str, str], ...]) -> Rule:
    """The API server refuses the workload's update strategy (knowledge/strategy.py)."""

    def why(c: Workload) -> str | None:
        return refused_strategy(c.id.kind, c.spec() or {})

    return Rule(
        name,
        kinds,
        lambda c: why(c) is not None,
        "an update strategy the API server refuses (knowledge/strategy.py STRATEGY_CHECKS)",
        Outcome.REFUSED,
        lambda c: (
            f"{why(c)}: the API server refuses the {c.id.kind} (kubectl apply fails), "
            "so nothing rolls"
        ),
        "; ".join(sorted({x.source for x in STRATEGY_CHECKS})),
    )


def rollout_replicas(taken: Takeover) -> Replicas:
    """The count of a workload an Argo Rollout takes over (``spec.workloadRef``): the
    Rollout's ``spec.replicas`` (it scales the workload itself down to 0), unknown
    offline when absent (apply keeps the live count)."""
    n = replicas_of(taken.spec("replicas"), None)
    if n.exact is None:
        return Replicas(None, None, f"Argo {taken.name} gives no spec.replicas")
    return Replicas(n.low, n.high, f"Argo {taken.name}")


def scaled(c: Workload) -> str:
    """Which count a rolling rule used, when an autoscaler gives it: `` (replicas 3..10
    (HorizontalPodAutoscaler/web))``."""
    n = c.replicas()
    return f" ({n.said()})" if n.scaled else ""


# the condition of the rules for a workload at 0 (a count an autoscaler holds too)
ZERO = "replicas 0: spec.replicas, or an autoscaler that holds it there"


def no_pod(c: Workload) -> str:
    """Why a workload at 0 runs no pod, with the value it read: ``spec.replicas is 0``,
    or the autoscaler that holds it at 0 (KEDA's ``paused-replicas: "0"``)."""
    n = c.replicas()
    return f"{'spec.replicas is 0' if n.source.startswith(SPEC) else n.said()}: no pod runs"


def scales_from_zero(c: Workload) -> bool:
    """OLD ran no pod (replicas 0) and NEW may run some."""
    old = c.old_replicas()
    return old is not None and old.exact == 0 and c.replicas().exact != 0


def scales_to_zero(c: Workload) -> bool:
    """NEW runs no pod (replicas 0) and OLD may have run some."""
    old = c.old_replicas()
    return old is not None and old.exact != 0 and c.replicas().exact == 0


def starts(c: Workload) -> str:
    n = c.replicas()
    count = n.text() if n.known else "its"
    return (
        f"scaled from 0 to {n.said()}: starts {count} pods with the new template (no pod "
        "ran, none is replaced)"
    )


def stops(c: Workload) -> str:
    old = c.old_replicas()
    was = f" (was {old.said()})" if old is not None else ""
    return f"scaled to 0{was}: stops every pod, none is replaced"


DEPLOYMENT = (("apps", "Deployment"), ("extensions", "Deployment"))
DAEMONSET = (("apps", "DaemonSet"), ("extensions", "DaemonSet"))
STATEFULSET = (("apps", "StatefulSet"),)
# every kind (a rule tried before the kind's own: an Argo CD Skip is never applied)
EVERY_KIND = (("*", "*"),)
REPLICASET = (("apps", "ReplicaSet"), ("extensions", "ReplicaSet"), ("", "ReplicationController"))
ROLLOUT = (("argoproj.io", "Rollout"),)
DEPLOYMENTCONFIG = (("apps.openshift.io", "DeploymentConfig"), ("", "DeploymentConfig"))
KNATIVE = (("serving.knative.dev", "Service"),)

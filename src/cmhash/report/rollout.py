"""report: which rollout rule decides a changed workload (knowledge/rollout.py RULES: per
kind, the first that holds), and the ``Context`` a rule reads: the workload's objects as
plain data, its template causes (podtemplate.py), the Argo Rollouts in NEW that take
over a workload through ``workloadRef``, and what the report works out from them: the
immutable fields that differ between OLD and NEW (knowledge/defaults.py FIXED: a change
the API server refuses), a bare Pod's update (its changed fields walked through
knowledge/podupdate.py POD_FIELDS, first match wins, a field no row matches refused),
a hook; its pod count in NEW and OLD (knowledge/replicas.py, through the autoscalers of
each side: scaling.py), the holding fields whose change releases pods
(knowledge/rollout_holds.py), the engine that re-creates it and Argo CD's Skip
(knowledge/rollout_tools.py).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, NamedTuple

from cmhash.knowledge.defaults import FIXED, path_get
from cmhash.knowledge.engines import forced_by, replaced_by_argocd, skipped_by_argocd
from cmhash.knowledge.helm import HOOK_ANNOTATIONS
from cmhash.knowledge.podupdate import POD_FIELDS, Effect, Pods
from cmhash.knowledge.replicas import Replicas, Scaling, replicas_of
from cmhash.knowledge.rollout import OTHER_NONE, OTHER_ROLLS, RULES
from cmhash.knowledge.rollout_apps import MISMATCH, SELECTOR_RULES
from cmhash.knowledge.rollout_holds import released_fields
from cmhash.knowledge.rollout_rule import EVERY_KIND, ROLLOUT, Outcome, Rule, Takeover
from cmhash.knowledge.rollout_tools import WORKLOAD_REF_GROUPS, argo_strategy
from cmhash.model import ResourceId
from cmhash.report.podtemplate import TemplateCause


def changed(kind: tuple[str, str], old: Any, new: Any) -> list[tuple[str, Any, Any]]:
    """(field, old value, new value) of each immutable field that differs."""
    if not isinstance(old, dict) or not isinstance(new, dict):
        return []
    out = []
    for row in FIXED:
        if kind not in row.kinds:
            continue
        before, after = row.fields(old), row.fields(new)
        for field in sorted(set(before) | set(after)):
            if before.get(field) != after.get(field):
                path = tuple(field.split("."))
                out.append((field, path_get(old, path), path_get(new, path)))
    return out


class PodChange(NamedTuple):
    field: str
    effect: Effect


def classify(pods: Pods, causes: tuple[TemplateCause, ...]) -> list[PodChange]:
    """What each changed field of a bare Pod does (causes: podtemplate.py)."""
    out = []
    for c in causes:
        effect = Effect.REFUSED
        for row in POD_FIELDS:
            m = re.fullmatch(row.pattern, c.field)
            if m is not None:
                if row.allowed(pods, c.change, m):
                    effect = row.does(pods, m)
                break
        out.append(PodChange(c.field, effect))
    return out


def _container(field: str) -> str:
    m = re.fullmatch(r"spec\.(?:init)?[cC]ontainers\[(.+)\]\.image", field)
    return m.group(1) if m else field


def describe(changes: list[PodChange]) -> tuple[Effect, str]:
    """The Pod's outcome (the API server refuses the update when one change is refused)
    and a line saying why."""
    refused = [c.field for c in changes if c.effect is Effect.REFUSED]
    if refused:
        return Effect.REFUSED, (
            f"a bare Pod's {', '.join(refused)} cannot change (the API server allows only "
            "images, activeDeadlineSeconds, added tolerations, removed scheduling gates): "
            "kubectl apply is refused; delete and re-create the Pod"
        )
    restarts = sorted({_container(c.field) for c in changes if c.effect is Effect.RESTARTS})
    if restarts:
        which = ", ".join(restarts)
        noun = "container" if len(restarts) == 1 else "containers"
        return Effect.RESTARTS, (
            f"a bare Pod's image changes: the kubelet restarts {noun} {which} in place "
            "(the Pod stays)"
        )
    fields = ", ".join(c.field for c in changes) or "its annotations"
    return Effect.APPLIED, f"a bare Pod is updated in place ({fields}): no container restarts"


class Context(NamedTuple):
    """A changed workload as a rule reads it (knowledge/rollout_rule.py Workload)."""

    obj: Mapping[str, Any]  # the NEW object
    causes: tuple[TemplateCause, ...]  # template changes other than the checksum
    rollouts: Mapping[ResourceId, Takeover]  # Deployment -> the Rollout taking it over
    id: ResourceId
    runs_again_as: str | None = None  # --jobs=rename: the Job's new name (analyze/jobs.py)
    old: Mapping[str, Any] | None = None  # the OLD object (a bare Pod's update is judged on both)
    # the name in OLD, when it is not ``id``'s: a --jobs=rename Job in cmhash's own
    # output on both sides (report/workloads.py pair_key)
    was: str | None = None
    # the autoscaler of the input that owns its count, in NEW and in OLD (scaling.py)
    scaling: Scaling | None = None
    old_scaling: Scaling | None = None
    # whether its pod template as applied changes (False: only a holding field does)
    template_changed: bool = True

    @property
    def old_name(self) -> str:
        return self.was if self.was is not None else self.id.name

    def spec(self, *path: str) -> Any:
        return path_get(self.obj, ("spec", *path))

    def true(self, value: Any) -> bool:
        """A boolean field as kubectl's YAML reads it (``true``, ``yes``, ``on``...: the
        report reads objects as plain data, where those are still strings)."""
        from cmhash.parse.k8syaml import TRUE_WORDS

        return value is True or (isinstance(value, str) and value in TRUE_WORDS)

    def fixed(self) -> list[str]:
        """The immutable fields of the object that changed (``changed``)."""
        return [f for f, _, _ in changed((self.id.group, self.id.kind), self.old, self.obj)]

    def pod(self) -> tuple[Effect, str]:
        """A bare Pod's update, field by field (``classify``)."""
        return describe(classify((self.old or {}, self.obj), self.causes))

    def hook(self) -> bool:
        annotations = path_get(self.obj, ("metadata", "annotations"))
        return isinstance(annotations, dict) and any(annotations.get(k) for k in HOOK_ANNOTATIONS)

    def replicas(self) -> Replicas:
        old = path_get(self.old, ("spec", "replicas")) if self.old is not None else None
        replaced = replaced_by_argocd(self.obj, self.old)
        return replicas_of(self.spec("replicas"), self.scaling, old, replaced)

    def old_replicas(self) -> Replicas | None:
        if self.old is None:
            return None
        return replicas_of(path_get(self.old, ("spec", "replicas")), self.old_scaling)

    def released(self) -> list[tuple[str, Any, Any]]:
        """The holding fields whose change releases pods (knowledge/rollout_holds.py)."""
        if self.old is None:
            return []
        return released_fields((self.id.group, self.id.kind), self.old, self.obj, self.true)

    def forced(self) -> str | None:
        return forced_by(self.obj, self.old)

    def skipped(self) -> str | None:
        return skipped_by_argocd(self.obj)


_BY_KIND: dict[tuple[str, str], list[Rule]] = {}
for _rule in RULES:
    for _k in _rule.kinds:
        _BY_KIND.setdefault(_k, []).append(_rule)


class Decision(NamedTuple):
    outcome: Outcome
    rule: str
    text: str


_EVERY = _BY_KIND.pop(EVERY_KIND[0], [])


def decide(ctx: Context, rolls: bool = True) -> Decision:
    """The first rule that holds: those for every kind, then the workload's kind's."""
    own = _BY_KIND.get((ctx.id.group, ctx.id.kind)) or [OTHER_ROLLS if rolls else OTHER_NONE]
    rule = next(r for r in (*_EVERY, *own) if r.when(ctx))
    return Decision(rule.outcome, rule.name, rule.text(ctx))


def refused_on_create(ctx: Context) -> Decision | None:
    """A workload only NEW has that the API server refuses to create: its selector does
    not select its template's labels (SELECTOR_RULES: the validation runs on create as
    on update, ValidateDeployment -> ValidateDeploymentSpec)."""
    for rule in SELECTOR_RULES:
        if (ctx.id.group, ctx.id.kind) in rule.kinds and rule.when(ctx):
            text = (
                f"{MISMATCH}: the API server refuses to create the {ctx.id.kind} "
                "(spec.template.metadata.labels must carry what spec.selector selects)"
            )
            return Decision(rule.outcome, rule.name, text)
    return None


def rollouts_by_workload(objects: Mapping[ResourceId, Any]) -> dict[ResourceId, Takeover]:
    """Workloads an Argo Rollout of ``objects`` takes over with ``workloadRef`` (the kinds
    argo-rollouts resolves: knowledge/rollout_tools.py WORKLOAD_REF_GROUPS)."""
    out: dict[ResourceId, Takeover] = {}
    for key, obj in objects.items():
        if (key.group, key.kind) not in ROLLOUT:
            continue
        ref = path_get(obj, ("spec", "workloadRef"))
        if not isinstance(ref, dict) or ref.get("kind") not in WORKLOAD_REF_GROUPS:
            continue
        kind = str(ref["kind"])
        target = ResourceId(WORKLOAD_REF_GROUPS[kind], kind, key.namespace, str(ref.get("name")))
        out[target] = Takeover(f"Rollout/{key.name} ({argo_strategy(obj)})", obj)
    return out

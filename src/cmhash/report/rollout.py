"""report: which rollout rule decides a changed workload (knowledge/rollout.py RULES: per
kind, the first that holds), and the ``Context`` a rule reads: the workload's objects as
plain data, its template causes (podtemplate.py), the Argo Rollouts in NEW that take
over a workload through ``workloadRef``, and what the report works out from them
(immutable fields changed, a bare Pod's update, a hook).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple

from cmhash.knowledge.helm import HOOK_ANNOTATIONS
from cmhash.knowledge.plain import path_get
from cmhash.knowledge.podupdate import Effect
from cmhash.knowledge.rollout import OTHER_NONE, OTHER_ROLLS, RULES
from cmhash.knowledge.rollout_rule import ROLLOUT, Outcome, Rule, Takeover
from cmhash.knowledge.rollout_tools import WORKLOAD_REF_GROUPS, argo_strategy
from cmhash.model import ResourceId
from cmhash.report.immutable import changed
from cmhash.report.podtemplate import TemplateCause
from cmhash.report.podupdate import classify, describe


class Context(NamedTuple):
    """A changed workload as a rule reads it (knowledge/rollout_rule.py Workload)."""

    obj: Mapping[str, Any]  # the NEW object
    causes: tuple[TemplateCause, ...]  # template changes other than the checksum
    rollouts: Mapping[ResourceId, Takeover]  # Deployment -> the Rollout taking it over
    id: ResourceId
    runs_again_as: str | None = None  # --jobs=rename: the Job's new name (analyze/jobs.py)
    old: Mapping[str, Any] | None = None  # the OLD object (a bare Pod's update is judged on both)
    # the name in OLD, when it is not ``id``'s: a --jobs=rename Job in cmhash's own
    # output on both sides (report/pairing.py pair_key)
    was: str | None = None

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
        """The immutable fields of the object that changed (immutable.py)."""
        return [f for f, _, _ in changed((self.id.group, self.id.kind), self.old, self.obj)]

    def pod(self) -> tuple[Effect, str]:
        """A bare Pod's update, field by field (podupdate.py)."""
        return describe(classify((self.old or {}, self.obj), self.causes))

    def hook(self) -> bool:
        annotations = path_get(self.obj, ("metadata", "annotations"))
        return isinstance(annotations, dict) and any(annotations.get(k) for k in HOOK_ANNOTATIONS)


_BY_KIND: dict[tuple[str, str], list[Rule]] = {}
for _rule in RULES:
    for _k in _rule.kinds:
        _BY_KIND.setdefault(_k, []).append(_rule)


class Decision(NamedTuple):
    outcome: Outcome
    rule: str
    text: str


def decide(ctx: Context, rolls: bool = True) -> Decision:
    """The first rule of the workload's kind that holds."""
    rules = _BY_KIND.get((ctx.id.group, ctx.id.kind)) or [OTHER_ROLLS if rolls else OTHER_NONE]
    rule = next(r for r in rules if r.when(ctx))
    return Decision(rule.outcome, rule.name, rule.text(ctx))


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

"""report: both sides' workload objects (objects.py), what changed in a workload's pod
template (podtemplate.py) or its immutable fields (rollout.py), and the rollout rule
that decides the change (rollout.py)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, NamedTuple

from cmhash.knowledge.plain import path_get
from cmhash.knowledge.rollout_rule import ROLLOUT, Takeover
from cmhash.model import ResourceId
from cmhash.plan.workplan import WorkloadPlan
from cmhash.report.objects import Objects, deep
from cmhash.report.podtemplate import TemplateCause, shown, template_causes
from cmhash.report.rollout import Context, Decision, changed, decide, rollouts_by_workload
from cmhash.report.usage import Names

if TYPE_CHECKING:
    from cmhash.app.result import RunResult


class Templates(NamedTuple):
    """Both sides' workload objects (objects.py) and what rule decides a change."""

    old: Objects | None
    new: Objects | None
    rollouts: Mapping[ResourceId, Takeover]  # Deployment -> the Argo Rollout taking it over
    annotation_key: str
    # versioned names (in cmhash's own output on a side) -> their base name: a reference
    # renamed to an object's new version is the config cause, not a template change
    renamed: tuple[Mapping[str, str], Mapping[str, str]] = ({}, {})

    def _objects(self, plan: WorkloadPlan, prev: WorkloadPlan) -> tuple[Any, Any] | None:
        """OLD's and NEW's object (None: a side not read, or the same document text: the
        same template, as most of a big stream)."""
        if self.old is None or self.new is None:
            return None
        before = self.old.text(prev.id)
        if before is None or before == self.new.text(plan.id):
            return None
        return self.old.get(prev.id), self.new.get(plan.id)

    def causes(self, plan: WorkloadPlan, prev: WorkloadPlan) -> tuple[TemplateCause, ...]:
        """The pod template's changes from ``prev`` (OLD's plan: its name differs for a
        renamed Job, ``pair_key``) to ``plan``."""
        both = self._objects(plan, prev)
        if both is None or both[0] is None or both[1] is None:
            return ()
        path = plan.info.kind.template_path
        with deep():
            before = _renamed(path_get(both[0], path), self.renamed[0])
            after = _renamed(path_get(both[1], path), self.renamed[1])
            return tuple(template_causes(before, after, self.annotation_key))

    def fixed(self, plan: WorkloadPlan, prev: WorkloadPlan) -> tuple[TemplateCause, ...]:
        """The object's immutable fields that changed (rollout.py), as causes: a change
        the API server refuses even where the pod template stays the same."""
        both = self._objects(plan, prev)
        if both is None:
            return ()
        return tuple(
            TemplateCause("other", f"{plan.id.kind} {field}", "changed", shown(o), shown(n))
            for field, o, n in changed((plan.id.group, plan.id.kind), *both)
        )

    def decide(
        self, plan: WorkloadPlan, causes: tuple[TemplateCause, ...], prev: WorkloadPlan
    ) -> Decision:
        obj = self.new.get(plan.id) if self.new is not None else None
        old = self.old.get(prev.id) if self.old is not None else None
        ctx = Context(
            obj or {}, causes, self.rollouts, plan.id, plan.runs_again_as, old, prev.id.name
        )
        return decide(ctx, plan.info.kind.rolls)


NO_TEMPLATES = Templates(None, None, {}, "")


def _renamed(value: Any, names: Mapping[str, str]) -> Any:
    """``value`` with every string that is a versioned name replaced by its base name."""
    if not names:
        return value
    if isinstance(value, str):
        return names.get(value, value)
    if isinstance(value, dict):
        return {k: _renamed(v, names) for k, v in value.items()}
    if isinstance(value, list):
        return [_renamed(v, names) for v in value]
    return value


def templates_of(
    old: RunResult, new: RunResult, annotation_key: str, parser: str, names: Names
) -> Templates:
    """Both sides' workload objects (read when asked for), and the workloads NEW's Argo
    Rollouts take over with workloadRef."""
    new_objects = Objects(new.plans, parser)
    rollouts = {
        p.id: new_objects.get(p.id)
        for p in new.plans
        if (p.info.kind.group, p.info.kind.kind) in ROLLOUT
    }
    return Templates(
        Objects(old.plans, parser),
        new_objects,
        rollouts_by_workload({k: v for k, v in rollouts.items() if v is not None}),
        annotation_key,
        (
            {v: k.name for k, v in names.old.items() if v != k.name},
            {v: k.name for k, v in names.new.items() if v != k.name},
        ),
    )

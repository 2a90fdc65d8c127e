"""report: both sides' workload objects, what changed in a workload's pod template
(podtemplate.py) or its immutable fields (rollout.py), and the rollout rule that decides
the change (rollout.py).

Each workload of a run as plain data (its whole object) is read again from its document,
so that OLD and NEW pod templates and rollout settings can be compared. Only workload
documents are read (each plan says where its object starts); nothing from a ConfigMap or
Secret enters this data. A pure function of the plans: no I/O."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any, NamedTuple

from cmhash.errors import NodeError
from cmhash.knowledge.defaults import BY_AMOUNT, path_get
from cmhash.knowledge.kinds import is_kubernetes_group
from cmhash.knowledge.rollout_rule import ROLLOUT, Takeover, rollout_replicas
from cmhash.knowledge.strategy import whole
from cmhash.knowledge.zerovalues import TYPED_CUSTOM
from cmhash.model import ResourceId
from cmhash.parse.events import backend, parse_chunk
from cmhash.parse.resources import document_resources
from cmhash.plan.workplan import WorkloadPlan
from cmhash.read.source import SourceText
from cmhash.read.split import chunk, cuts
from cmhash.report.capacity import Cost, cost
from cmhash.report.plain import deep, plain
from cmhash.report.podtemplate import TemplateCause, shown, template_causes
from cmhash.report.rollout import (
    Context,
    Decision,
    changed,
    decide,
    refused_on_create,
    rollouts_by_workload,
)
from cmhash.report.scaling import NO_SCALERS, Scalers
from cmhash.report.usage import Names

if TYPE_CHECKING:
    from cmhash.app.result import RunResult


class Objects:
    """One side's workloads as plain data, read when first asked for (a big stream's
    report needs few: those whose document changed, and those a rule looks at)."""

    def __init__(self, plans: Iterable[WorkloadPlan], parser: str) -> None:
        self._plans = {p.id: p for p in plans}
        self._be = backend(parser)
        self._cuts: dict[int, list[int]] = {}
        self._parsed: dict[tuple[int, int], dict[int, Any]] = {}  # (source, doc) -> objects
        self._objects: dict[ResourceId, Any] = {}

    def __contains__(self, key: ResourceId) -> bool:
        return key in self._plans

    def _chunk(self, plan: WorkloadPlan) -> tuple[int, int]:
        src: SourceText = plan.source
        if id(src) not in self._cuts:
            self._cuts[id(src)] = cuts(src.text)
        ch = chunk(self._cuts[id(src)], plan.info.doc)
        return ch.start, ch.end

    def text(self, key: ResourceId) -> str | None:
        """The text of the document that holds it."""
        plan = self._plans.get(key)
        if plan is None:
            return None
        start, end = self._chunk(plan)
        return str(plan.source.text[start:end])

    def get(self, key: ResourceId) -> Any:
        """The object (None: not on this side)."""
        if key in self._objects:
            return self._objects[key]
        plan = self._plans.get(key)
        if plan is None:
            return None
        src: SourceText = plan.source
        where = (id(src), plan.info.doc)
        if where not in self._parsed:
            start, end = self._chunk(plan)
            roots = parse_chunk(src.text[start:end], start, self._be)
            self._parsed[where] = {
                r.node.start: r.node for r in document_resources(src, plan.info.doc, roots)
            }
        node = self._parsed[where].get(plan.info.offset)
        with deep():
            try:
                obj = None if node is None else plain(node)
            except NodeError as exc:  # a complex key cmhash does not compare: said, exit 2
                raise src.error(
                    f"{plan.info.label}: cannot compare its pod template ({exc.public})",
                    exc.offset,
                ) from None
            self._objects[key] = obj
        return obj


class Templates(NamedTuple):
    """Both sides' workload objects (``Objects``) and what rule decides a change."""

    old: Objects | None
    new: Objects | None
    rollouts: Mapping[ResourceId, Takeover]  # Deployment -> the Argo Rollout taking it over
    annotation_key: str
    # versioned names (in cmhash's own output on a side) -> their base name: a reference
    # renamed to an object's new version is the config cause, not a template change
    renamed: tuple[Mapping[str, str], Mapping[str, str]] = ({}, {})
    scalers: tuple[Scalers, Scalers] = (NO_SCALERS, NO_SCALERS)  # OLD's, NEW's autoscalers
    nodes: int | None = None  # --nodes: how many nodes run a DaemonSet's pods

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
            # a built-in kind is decoded into its Go types before it is stored
            kind = plan.info.kind
            typed = kind.operator is None and (
                is_kubernetes_group(kind.group) or (kind.group, kind.kind) in TYPED_CUSTOM
            )
            by_amount = (kind.group, kind.kind) in BY_AMOUNT
            return tuple(template_causes(before, after, self.annotation_key, typed, by_amount))

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

    def released(self, plan: WorkloadPlan, prev: WorkloadPlan) -> tuple[TemplateCause, ...]:
        """The fields that held pods back and whose change releases them (a Deployment
        resumed, a StatefulSet's partition lowered: knowledge/rollout_holds.py), as
        causes: pods roll where the template itself does not change."""
        both = self._objects(plan, prev)
        if both is None or both[0] is None or both[1] is None:
            return ()
        ctx = Context(both[1], (), {}, plan.id, old=both[0])
        return tuple(
            TemplateCause("released", field, "changed", shown(o), shown(n))
            for field, o, n in ctx.released()
        )

    def decide(
        self,
        plan: WorkloadPlan,
        causes: tuple[TemplateCause, ...],
        prev: WorkloadPlan,
        changes_template: bool = True,
    ) -> Decision:
        obj = self.new.get(plan.id) if self.new is not None else None
        old = self.old.get(prev.id) if self.old is not None else None
        ctx = Context(
            obj or {},
            causes,
            self.rollouts,
            plan.id,
            plan.runs_again_as,
            old,
            prev.id.name,
            self.scalers[1].of(plan),
            self.scalers[0].of(prev),
            changes_template,
        )
        return decide(ctx, plan.info.kind.rolls)

    def capacity(self, plan: WorkloadPlan, decision: Decision) -> Cost:
        """What its rollout costs (capacity.py), from NEW's object and count."""
        obj = self.obj(plan) or {}
        ctx = Context(obj, (), self.rollouts, plan.id, scaling=self.scalers[1].of(plan))
        kind = plan.info.kind
        pod = path_get(obj, kind.pod_spec_path)
        rc = pod.get("runtimeClassName") if isinstance(pod, Mapping) else None
        count = ctx.replicas()
        taken = self.rollouts.get(plan.id)
        if decision.rule == "workload-ref" and taken is not None:
            count = rollout_replicas(taken)  # its pods run under the Rollout's count
        held = None  # a partition lowered alone: the ordinals below OLD's partition
        if decision.rule == "statefulset-released" and self.old is not None:
            before = self.old.get(plan.id)
            held = whole(path_get(before, ("spec", "updateStrategy", "rollingUpdate", "partition")))
        return cost(
            (kind.group, kind.kind),
            decision.outcome,
            decision.rule,
            obj,
            kind.pod_spec_path,
            count,
            ctx.forced(),
            self.nodes,
            self.scalers[1].overhead(rc),
            held,
        )

    def created(self, plan: WorkloadPlan) -> tuple[Decision, list[dict[str, Any]]] | None:
        """An added workload the API server refuses to create (rollout.py), and the two
        fields that disagree, as causes."""
        obj = self.obj(plan)
        if not isinstance(obj, dict):
            return None
        decision = refused_on_create(Context(obj, (), self.rollouts, plan.id))
        if decision is None:
            return None
        fields = (("spec", "selector"), ("spec", "template", "metadata", "labels"))
        return decision, [
            TemplateCause("other", ".".join(f), "added", None, shown(path_get(obj, f))).as_dict()
            for f in fields
        ]

    def obj(self, plan: WorkloadPlan) -> Any:
        """NEW's object of ``plan`` (None: not read)."""
        return self.new.get(plan.id) if self.new is not None else None


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
    old: RunResult,
    new: RunResult,
    annotation_key: str,
    parser: str,
    names: Names,
    scalers: tuple[Scalers, Scalers] = (NO_SCALERS, NO_SCALERS),
    nodes: int | None = None,
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
        scalers,
        nodes,
    )

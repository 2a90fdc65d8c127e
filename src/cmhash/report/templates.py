"""report: both sides' workload objects, what changed in a workload's pod template
(podtemplate.py) or its immutable fields (rollout.py), and the rollout rule that decides
the change (rollout.py).

Each workload of a run as plain data (its whole object) is read again from its document,
so that OLD and NEW pod templates and rollout settings can be compared. Only workload
documents are read (each plan says where its object starts); nothing from a ConfigMap or
Secret enters this data. A pure function of the plans: no I/O."""

from __future__ import annotations

import sys
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, NamedTuple

from cmhash.errors import NodeError
from cmhash.knowledge.defaults import path_get
from cmhash.knowledge.rollout_rule import ROLLOUT, Takeover
from cmhash.model import ResourceId
from cmhash.parse.events import backend, parse_chunk
from cmhash.parse.k8syaml import plain_value
from cmhash.parse.resources import document_resources
from cmhash.parse.tree import MAX_DEPTH, SCALAR, SEQ, Node, deref, entries, to_python
from cmhash.plan.workplan import WorkloadPlan
from cmhash.read.source import SourceText
from cmhash.read.split import chunk, cuts
from cmhash.report.podtemplate import TemplateCause, shown, template_causes
from cmhash.report.rollout import Context, Decision, changed, decide, rollouts_by_workload
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


@contextmanager
def deep() -> Iterator[None]:
    """Room for one frame or three a level: documents nest up to tree.MAX_DEPTH."""
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 4 * MAX_DEPTH + 1000))
    try:
        yield
    finally:
        sys.setrecursionlimit(limit)


def plain(node: Node | None) -> Any:
    """The object as the API server receives it from kubectl: a plain scalar resolved by
    go-yaml's rules (k8syaml.py: ``0644`` is 420, ``yes`` is true), merges and aliases
    resolved, no depth limit but the parser's own."""
    node = deref(node)
    if node is None or node.is_null:
        return None
    if node.kind == SCALAR:
        if node.style is None and node.tag is None:
            return plain_value(str(node.value))
        return to_python(node)
    if node.kind == SEQ:
        return [plain(x) for x in node.value]
    return {k: plain(v[1]) for k, v in entries(node).items()}


class Templates(NamedTuple):
    """Both sides' workload objects (``Objects``) and what rule decides a change."""

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

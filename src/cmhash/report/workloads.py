"""report: which workloads restart because of the changes, and which read changed
configuration but will not restart, and why."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Set
from typing import TYPE_CHECKING, Any, NamedTuple

from cmhash.explain import workload_fields
from cmhash.knowledge.kinds import Policy
from cmhash.model import ResourceId
from cmhash.plan.workplan import WorkloadPlan
from cmhash.report.changes import REMOVED, ConfigChange
from cmhash.report.objects import Objects
from cmhash.report.podtemplate import TemplateCause
from cmhash.report.rollout import RESTARTS, Context, Decision, Takeover, decide

if TYPE_CHECKING:
    from cmhash.app.result import RunResult

Users = dict[ResourceId, list[str]]  # changed object -> the workloads that read it


def _applied(plan: WorkloadPlan) -> str | None:
    """The annotation value the output carries: what cmhash writes, else whatever the
    input already had (an opted-out or config-less workload keeps it untouched)."""
    if plan.skip is None and plan.value is not None:
        return plan.value
    return plan.info.current


def _annotation_cause(plan: WorkloadPlan, before: str | None, after: str | None) -> Cause | None:
    """When the checksum appears or disappears, say why."""
    if after is not None and before is not None:
        return None
    if after is None:
        why = (
            f"not annotated: {plan.skip_text}"
            if plan.skip is not None
            else "it uses no ConfigMap/Secret of the input any more"
        )
        return Cause(None, None, f"checksum annotation removed ({why})", ())
    return Cause(None, None, "checksum annotation added", ())


def unversioned(key: ResourceId, own: Set[ResourceId] = frozenset()) -> ResourceId:
    """A ConfigMap/Secret by its base name: how report matches objects when versioned
    names are in play (``app-5kd...`` in OLD, ``app-7bc...`` in NEW are one object).
    ``own``: names that only look versioned (analyze/versioned_names.py ``own_names``)."""
    from cmhash.analyze.versioned_names import VERSIONABLE, base_name

    if key.kind not in VERSIONABLE or key in own:
        return key
    return key._replace(name=base_name(key.name))


def used_by(
    plan: WorkloadPlan, versioned: bool = False, own: Set[ResourceId] = frozenset()
) -> dict[ResourceId, frozenset[str] | None]:
    """Objects a workload references (in or out of the input, hashed or not: Secrets
    under --exclude-secrets count) and the keys it reads (None: all); by base name
    when ``versioned``."""
    out: dict[ResourceId, frozenset[str] | None] = {}
    for r in plan.resolved:  # Reloader patterns expanded
        ref = r.ref
        key = unversioned(plan.target(ref), own) if versioned else plan.target(ref)
        # what a source produces is read whole: its content fields are not the keys
        produced = r.entry is not None and r.entry.info.content.source is not None
        keys = None if ref.keys is None or produced else frozenset(ref.keys)
        if key in out:
            prev = out[key]
            out[key] = None if prev is None or keys is None else prev | keys
        else:
            out[key] = keys
    return out


class UsedBy:
    """``used_by`` of each plan, made once per report: a plan is asked for it up to three
    times (who uses a changed object, what changed for it, what is referenced at all).
    It holds the plans it has seen, so their ids stay theirs while it lives."""

    __slots__ = ("_seen", "own", "versioned")

    def __init__(self, versioned: bool, own: Set[ResourceId] = frozenset()) -> None:
        self.versioned = versioned
        self.own = own
        self._seen: dict[int, tuple[WorkloadPlan, dict[ResourceId, frozenset[str] | None]]] = {}

    def __call__(self, plan: WorkloadPlan) -> dict[ResourceId, frozenset[str] | None]:
        got = self._seen.get(id(plan))
        if got is None:
            got = self._seen[id(plan)] = (plan, used_by(plan, self.versioned, self.own))
        return got[1]


class Cause(NamedTuple):
    kind: str | None  # None: REFERENCES_CHANGED
    name: str | None
    change: str  # added | removed | changed | newly referenced | no longer referenced
    keys: tuple[str, ...]
    now: str | None = None  # its new versioned name, when that changed

    def as_dict(self) -> dict[str, Any]:
        out = {"type": _cause_type(self), **self._asdict()}
        if out["now"] is None:
            del out["now"]
        return out


def _cause_type(c: Cause) -> str:
    if c.kind is not None:
        return "config"
    return "references" if c.change == "references changed" else "checksum"


# a rolling workload none of whose referenced objects changed (e.g. an optional one appeared)
REFERENCES_CHANGED = Cause(None, None, "references changed", ())


class Names(NamedTuple):
    """Versioned names on each side (base identity -> name in the output); ``versioned``:
    objects are matched by base name."""

    versioned: bool = False
    old: Mapping[ResourceId, str] = {}
    new: Mapping[ResourceId, str] = {}
    shown: Mapping[ResourceId, str] = {}  # the new names as report shows them
    own: Set[ResourceId] = frozenset()  # names that only look versioned, on either side

    def now(self, key: ResourceId) -> str | None:
        """The new versioned name (as shown), when it differs from the old side's."""
        new = self.new.get(key)
        if new is None or new == self.old.get(key, key.name):
            return None
        return self.shown.get(key, new)


def _causes(
    used: Mapping[ResourceId, frozenset[str] | None],
    old_used: Mapping[ResourceId, frozenset[str] | None],
    changes: Mapping[ResourceId, ConfigChange],
    names: Names,
) -> list[Cause]:
    causes = []
    for key in sorted(set(used) | set(old_used)):
        kind, name = key.kind, key.name
        if key not in used:
            causes.append(Cause(kind, name, "no longer referenced", ()))
            continue
        keys = used[key]
        if key not in old_used:
            causes.append(
                Cause(
                    kind, name, "newly referenced", tuple(sorted(keys)) if keys is not None else ()
                )
            )
            continue
        ch = changes.get(key)
        if ch is None:
            continue
        hit = ch.touched if keys is None else ch.touched & keys
        now = names.now(key)  # a new name rolls every user, whichever keys changed
        if hit or ch.type_changed or now is not None:
            causes.append(Cause(kind, name, ch.change, tuple(sorted(hit)), now))
    return causes


def _unhashed(
    plan: WorkloadPlan,
    used: Mapping[ResourceId, frozenset[str] | None],
    changes: Mapping[ResourceId, ConfigChange],
    versioned: bool = False,
    own: Set[ResourceId] = frozenset(),
) -> dict[ResourceId, str]:
    """Changed objects this workload reads whose changes its checksum does not follow
    (opted out or ignored objects, Secrets under --exclude-secrets, kinds or objects the
    workload's selection leaves out), with why."""
    out = {}
    for r in plan.resolved:
        key = unversioned(plan.target(r.ref), own) if versioned else plan.target(r.ref)
        if key in used and key in changes and r.excluded is not None:
            object_excluded = r.entry is not None and r.entry.excluded is not None
            if not object_excluded:
                out[key] = r.excluded  # the workload's selection
            elif r.excluded.startswith("opted out"):
                out[key] = f"{key.kind}/{key.name} is {r.excluded}"
            else:
                out[key] = f"{key.kind}/{key.name} is left out of checksums ({r.excluded})"
    return out


# kinds whose pods an annotation never restarts, even when cmhash writes it (--jobs, --pods)
NEVER_ROLLS: dict[Policy, str] = {
    Policy.JOB: (
        "annotated (--jobs), but a Job is never restarted: only a re-created Job "
        "runs with the new configuration"
    ),
    Policy.POD: ("annotated (--pods), but a bare Pod is never restarted: delete and re-create it"),
}


# a hook Job or Pod its tool re-creates each time (rollout.py hook-recreated): it reads
# the changed configuration when it runs next, annotated or not
HOOK_RUNS_AGAIN = (
    "a hook: Helm or Argo CD re-creates it when it runs next, and it reads the changed "
    "configuration then"
)


def _not_rolling_reason(plan: WorkloadPlan, unhashed: Mapping[ResourceId, str]) -> str | None:
    if plan.info.hook is not None and plan.info.kind.policy in NEVER_ROLLS:
        return HOOK_RUNS_AGAIN
    if plan.skip is not None:
        return f"not annotated: {plan.skip_text}"
    if plan.info.kind.policy in NEVER_ROLLS:
        return NEVER_ROLLS[plan.info.kind.policy]
    if plan.info.no_restart:
        return plan.info.no_restart
    if unhashed:
        return "; ".join(sorted(set(unhashed.values())))
    return None


def _users(
    plans: Iterable[WorkloadPlan],
    by_key: Mapping[ResourceId, ConfigChange],
    users: Users,
    names: Names,
    used: UsedBy,
    *,
    removed_only: bool = False,
) -> None:
    """Who reads changed keys of each changed object (for a removed one: who did)."""
    for plan in plans:
        for key, keys in used(plan).items():
            ch = by_key.get(key)
            if ch is None or (removed_only and ch.change is not REMOVED):
                continue
            hit = keys is None or ch.touched & keys or ch.type_changed
            if removed_only or hit or names.now(key) is not None:
                users.setdefault(key, []).append(plan.label)


class Templates(NamedTuple):
    """Both sides' workload objects (objects.py) and what rule decides a change."""

    old: Objects | None
    new: Objects | None
    rollouts: Mapping[ResourceId, Takeover]  # Deployment -> the Argo Rollout taking it over
    annotation_key: str
    # versioned names (in cmhash's own output on a side) -> their base name: a reference
    # renamed to an object's new version is the config cause, not a template change
    renamed: tuple[Mapping[str, str], Mapping[str, str]] = ({}, {})

    def causes(self, plan: WorkloadPlan, prev: WorkloadPlan) -> tuple[TemplateCause, ...]:
        """The pod template's changes from ``prev`` (OLD's plan: its name differs for a
        renamed Job, ``pair_key``) to ``plan``."""
        from cmhash.report.objects import deep, path_get
        from cmhash.report.podtemplate import template_causes

        if self.old is None or self.new is None:
            return ()
        before = self.old.text(prev.id)
        if before is None or before == self.new.text(plan.id):
            return ()  # the same document text: the same template (most of a big stream)
        path = plan.info.kind.template_path
        old, new = self.old.get(prev.id), self.new.get(plan.id)
        if old is None or new is None:
            return ()
        with deep():
            before_t = _renamed(path_get(old, path), self.renamed[0])
            after_t = _renamed(path_get(new, path), self.renamed[1])
            return tuple(template_causes(before_t, after_t, self.annotation_key))

    def fixed(self, plan: WorkloadPlan, prev: WorkloadPlan) -> tuple[TemplateCause, ...]:
        """The object's immutable fields that changed (immutable.py), as causes: a change
        the API server refuses even where the pod template stays the same."""
        from cmhash.report.immutable import changed
        from cmhash.report.podtemplate import shown

        if self.old is None or self.new is None:
            return ()
        before = self.old.text(prev.id)
        if before is None or before == self.new.text(plan.id):
            return ()
        kind = (plan.id.group, plan.id.kind)
        return tuple(
            TemplateCause("other", f"{plan.id.kind} {field}", "changed", shown(o), shown(n))
            for field, o, n in changed(kind, self.old.get(prev.id), self.new.get(plan.id))
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


def _compare_workload(
    plan: WorkloadPlan,
    prev: WorkloadPlan,
    by_key: Mapping[ResourceId, ConfigChange],
    names: Names,
    used_by_plan: UsedBy,
    templates: Templates = NO_TEMPLATES,
) -> tuple[str, dict[str, Any]] | None:
    """("restart" | "notRestarting", entry), or None when neither its pod template nor
    anything it uses changed."""
    used = used_by_plan(plan)
    unhashed = _unhashed(plan, used, by_key, names.versioned, names.own)
    causes = _causes(used, used_by_plan(prev), by_key, names)
    value, before = _applied(plan), _applied(prev)
    changed = templates.causes(plan, prev)
    if not changed and value == before:  # an immutable field alone: refused all the same
        changed = templates.fixed(plan, prev)
    # the pod template as applied changes: its own fields, or the annotation cmhash writes
    if value != before or changed:
        shown: list[dict[str, Any]] = []
        if value != before:
            causes = [
                c
                for c in causes
                if ResourceId.config(c.kind or "", plan.namespace, c.name or "") not in unhashed
                or c.now is not None
            ]
            about = _annotation_cause(plan, before, value)
            if about is not None:
                causes.append(about)
            shown = [c.as_dict() for c in causes or [REFERENCES_CHANGED]]
        decision = templates.decide(plan, changed, prev)
        entry = {
            **workload_fields(plan),
            "causes": shown + [t.as_dict() for t in changed],
            "outcome": decision.outcome,
            "rule": decision.rule,
        }
        if decision.outcome in RESTARTS:
            return "restart", {**entry, "how": decision.text}
        return "notRestarting", {**entry, "reason": decision.text}
    if not causes:
        return None
    reason = _not_rolling_reason(plan, unhashed)
    if reason is None:  # e.g. only a reference to an absent object changed
        return None
    return "notRestarting", {
        **workload_fields(plan),
        "causes": [c.as_dict() for c in causes],
        "reason": reason,
    }


PlanKey = tuple[ResourceId, str | None]


def plan_key(plan: WorkloadPlan) -> PlanKey:
    """A workload: its resource and, for a resource with several pod groups (a VMCluster's
    vminsert, vmselect, vmstorage: kinds.WorkloadKind.component), the group."""
    return plan.id, plan.info.kind.component


def pair_key(plan: WorkloadPlan) -> PlanKey:
    """How report pairs OLD's workloads with NEW's: ``plan_key``, but a Job under
    --jobs=rename by its base name (``cmhash.io/job-base-name``, analyze/jobs.py) and
    namespace, so that cmhash outputs on both sides (``migrate-h2m9ct55h4`` in OLD,
    ``migrate-8mc2hcgh28`` in NEW) are one Job that runs again, as renders are, and
    not one added and one removed (report --versioned pairs ConfigMaps by base name
    alike, ``unversioned``)."""
    job = plan.info.job
    if job is None or job.base == plan.id.name:
        return plan_key(plan)
    return plan.id._replace(name=job.base), plan.info.kind.component


def last_of(plans: Iterable[WorkloadPlan]) -> dict[PlanKey, WorkloadPlan]:
    """Each workload once (by ``pair_key``): the last definition of an id, as ``kubectl
    apply -f`` leaves it (it applies the documents in order, the later one replacing
    the earlier)."""
    return {pair_key(p): p for p in plans}


def duplicates(plans: Iterable[WorkloadPlan]) -> list[tuple[WorkloadPlan, WorkloadPlan]]:
    """(earlier, later) for each workload defined again in one side."""
    seen: dict[PlanKey, WorkloadPlan] = {}
    out = []
    for p in plans:
        if plan_key(p) in seen:
            out.append((seen[plan_key(p)], p))
        seen[plan_key(p)] = p
    return out


def sides(old: RunResult, new: RunResult) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Workloads only NEW has (added: new pods, not restarts) and only OLD has (removed);
    a workload renamed between the two is one of each. What cmhash generates itself
    (a --jobs=rename Job) is the job-runs-again rule's, not an added workload."""
    olds, news = last_of(old.plans), last_of(new.plans)
    added = [workload_fields(p) for k, p in news.items() if k not in olds and not p.info.generated]
    removed = [workload_fields(p) for k, p in olds.items() if k not in news]
    return added, removed


def compare_workloads(
    old: RunResult,
    new: RunResult,
    by_key: Mapping[ResourceId, ConfigChange],
    names: Names | None = None,
    used: UsedBy | None = None,
    templates: Templates = NO_TEMPLATES,
) -> tuple[dict[str, list[dict[str, Any]]], Users]:
    names = names or Names()
    used = used or UsedBy(names.versioned, names.own)
    old_plans = last_of(old.plans)  # per pod group (pair_key)
    groups: dict[str, list[dict[str, Any]]] = {"restart": [], "notRestarting": []}
    users: Users = {}
    # created anew, never restarted; a workload defined twice counts once (the last)
    current = [p for p in last_of(new.plans).values() if not p.info.generated]
    _users(current, by_key, users, names, used)
    for plan in current:
        prev = old_plans.get(pair_key(plan))
        if prev is None:
            continue  # created by this change: nothing to restart
        outcome = _compare_workload(plan, prev, by_key, names, used, templates)
        if outcome is not None:
            groups[outcome[0]].append(outcome[1])
    _users(old.plans, by_key, users, names, used, removed_only=True)
    return groups, users

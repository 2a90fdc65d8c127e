"""report: which workloads restart because of the changes, and which read changed
configuration but will not restart, and why: the causes of each (a ConfigMap or Secret
it reads, its checksum annotation, its pod template) and the rule that decides. How
OLD's workloads are paired with NEW's (per pod group, a renamed Job by its base name),
each counted once as ``kubectl apply -f`` leaves it, and those only one side has."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any, NamedTuple

from cmhash.explain import workload_fields
from cmhash.knowledge.compat import RELOADER_IGNORE
from cmhash.knowledge.engines import skipped_by_argocd
from cmhash.knowledge.rollout import NEVER_ROLLS
from cmhash.knowledge.rollout_rule import RESTARTS
from cmhash.knowledge.rollout_tools import HOOK_RUNS_AGAIN
from cmhash.model import ResourceId
from cmhash.plan.workplan import WorkloadPlan
from cmhash.report.changes import ConfigChange
from cmhash.report.reloader import Watched, restarts
from cmhash.report.rollout import Decision
from cmhash.report.templates import NO_TEMPLATES, Templates
from cmhash.report.usage import Names, UsedBy, Users, collect_users, unhashed_changes

if TYPE_CHECKING:
    from cmhash.app.result import RunResult

PlanKey = tuple[ResourceId, str | None]
DOWNTIME = "_downtime"  # (in a restart entry until the findings are made: never output)


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


class Cause(NamedTuple):
    kind: str | None  # None: REFERENCES_CHANGED
    name: str | None
    # added | removed | changed | newly referenced | no longer referenced | rotated in the
    # store (...) | newly locked (...) | no longer locked (...) | restart requested: ...
    change: str
    keys: tuple[str, ...]
    now: str | None = None  # its new versioned name, when that changed

    def as_dict(self) -> dict[str, Any]:
        what = "references" if self.change == "references changed" else "checksum"
        out = {"type": "config" if self.kind is not None else what, **self._asdict()}
        if out["now"] is None:
            del out["now"]
        return out


# a rolling workload none of whose referenced objects changed (e.g. an optional one appeared)
REFERENCES_CHANGED = Cause(None, None, "references changed", ())


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
            causes.append(Cause(kind, name, "newly referenced", tuple(sorted(keys or ()))))
            continue
        ch = changes.get(key)
        if ch is None:
            continue
        hit = ch.touched if keys is None else ch.touched & keys
        now = names.now(key)  # a new name rolls every user, whichever keys changed
        if hit or ch.type_changed or now is not None:
            causes.append(Cause(kind, name, ch.change, tuple(sorted(hit)), now))
    return causes


def _requested(plan: WorkloadPlan, prev: WorkloadPlan) -> list[Cause]:
    """What Git does not show (plan/lock.py): a secret rotated in the store (the lock's
    fingerprint of an object the workload uses), and a restart asked for."""
    out = []
    old = {u.target: u for u in prev.locked}
    for u in plan.locked:
        was = old.pop(u.target, None)
        if was is not None and was.part == u.part:
            continue
        what = "rotated in the store" if was is not None else "newly locked"
        also = f"; {u.also} restarts it too" if u.also else ""
        keys = _rotated_keys(was.part, u.part) if was is not None else ()
        out.append(Cause(u.target.kind, u.target.name, f"{what} ({u.source}{also})", keys))
    out.extend(
        Cause(u.target.kind, u.target.name, f"no longer locked ({u.source})", ())
        for u in old.values()
    )
    # per place that asks (the workload, or an object it uses): each new reason is a
    # cause; a reason removed with none new in its place rolls too
    places: dict[str | None, tuple[set[str], set[str]]] = {}
    for side, asked in ((0, prev.restarts), (1, plan.restarts)):
        for r in asked:
            places.setdefault(r.where, (set(), set()))[side].add(r.text)
    for where in sorted(places, key=lambda w: w or ""):
        asked_before, asked_now = places[where]
        added, gone = sorted(asked_now - asked_before), sorted(asked_before - asked_now)
        out.extend(Cause(None, None, f"restart requested: {t}", ()) for t in added)
        if not added:
            out.extend(Cause(None, None, f"restart no longer requested: {t}", ()) for t in gone)
    return out


def _rotated_keys(old: str, new: str) -> tuple[str, ...]:
    """The keys whose fingerprints differ (a key-level lock entry), else none."""
    import json

    a, b = json.loads(old).get("keys"), json.loads(new).get("keys")
    if not isinstance(a, dict) or not isinstance(b, dict):
        return ()
    return tuple(sorted(k for k in a.keys() | b.keys() if a.get(k) != b.get(k)))


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
    unhashed = unhashed_changes(plan, used, by_key, names.versioned, names.own)
    causes = _causes(used, used_by_plan(prev), by_key, names)
    if plan.locked or prev.locked or plan.restarts or prev.restarts:
        causes += _requested(plan, prev)
    value, before = _applied(plan), _applied(prev)
    changed = templates.causes(plan, prev)
    moves = value != before or bool(changed)  # the pod template as applied changes
    if not changed and value == before:  # an immutable field alone: refused all the same
        changed = templates.fixed(plan, prev)
    # a field that held pods back and no longer does (a Deployment resumed, a partition
    # lowered): pods on an older template roll, the template as it is now
    released = templates.released(plan, prev)
    if value != before or changed or released:
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
        decision = templates.decide(plan, changed, prev, moves)
        listed = shown + [t.as_dict() for t in (*changed, *released)]
        return _decided(plan, listed, decision, templates)
    if not causes:
        return None
    reason = _not_rolling_reason(plan, unhashed)
    if reason is None:  # e.g. only a reference to an absent object changed
        return None
    listed = [c.as_dict() for c in causes]
    if plan.info.kind.policy not in NEVER_ROLLS and templates.new is not None:
        obj = templates.obj(plan) or {}
        skipped = skipped_by_argocd(obj)
        if skipped is not None:
            return "notRestarting", {**workload_fields(plan), "causes": listed, "reason": skipped}
        if plan.skip is not None or unhashed:
            key = (plan.info.kind.group, plan.info.kind.kind)
            by = restarts(key, obj, _watched(causes, by_key, plan.namespace))
            if by is not None:  # Reloader rolls it: by the kind's own rules
                decision = templates.decide(plan, (), prev)
                text = f"{reason}, but {by}: {decision.text}"
                return _decided(plan, listed, decision._replace(text=text), templates)
    return "notRestarting", {**workload_fields(plan), "causes": listed, "reason": reason}


def _decided(
    plan: WorkloadPlan,
    causes: list[dict[str, Any]],
    decision: Decision,
    templates: Templates = NO_TEMPLATES,
) -> tuple[str, dict[str, Any]]:
    entry = {
        **workload_fields(plan),
        "causes": causes,
        "outcome": decision.outcome,
        "rule": decision.rule,
    }
    if decision.outcome in RESTARTS:
        cost = templates.capacity(plan, decision)
        out = {**entry, "how": decision.text, "capacity": cost.data}
        if cost.downtime is not None:  # a warning: report/compare.py takes it out
            out[DOWNTIME] = cost.downtime
        return "restart", out
    return "notRestarting", {**entry, "reason": decision.text}


def _watched(
    causes: list[Cause], by_key: Mapping[ResourceId, ConfigChange], namespace: str
) -> list[Watched]:
    """The changed objects of ``causes``, as Reloader sees them."""
    out = []
    for c in causes:
        if c.kind is None or c.name is None:
            continue
        ch = by_key.get(ResourceId.config(c.kind, namespace, c.name))
        info = ch.entry.info if ch is not None else None
        ignored = info is not None and (info.excluded or "").startswith(RELOADER_IGNORE)
        out.append(Watched(c.kind, c.name, bool(info and info.match), ignored))
    return out


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
    collect_users(current, by_key, users, names, used)
    for plan in current:
        prev = old_plans.get(pair_key(plan))
        if prev is None:  # created by this change: nothing to restart
            refused = templates.created(plan)  # unless the API server refuses it
            if refused is not None:
                groups["notRestarting"].append(_decided(plan, refused[1], refused[0])[1])
            continue
        outcome = _compare_workload(plan, prev, by_key, names, used, templates)
        if outcome is not None:
            groups[outcome[0]].append(outcome[1])
    collect_users(old.plans, by_key, users, names, used, removed_only=True)
    return groups, users

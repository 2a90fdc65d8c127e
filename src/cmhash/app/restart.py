"""What ``cmhash restart`` will roll: the workloads whose checksum a new
``cmhash.io/restart`` reason moves, found by running the inputs before and after the
edit as a plain run would (the configuration included). Nothing here prints or exits."""

from __future__ import annotations

from typing import NamedTuple

from cmhash.app.pipeline import run
from cmhash.parse.resources import Resource
from cmhash.plan.workplan import WorkloadPlan
from cmhash.read.source import SourceText
from cmhash.settings.values import Settings


class Effect(NamedTuple):
    rolled: list[str]  # the workloads whose checksum moves (labels)
    # why nothing moves, for the workloads that use the target (label: why); empty
    # with nothing rolled: no workload in the inputs uses it
    left: list[tuple[str, str]]
    later: list[str]  # moved, but nothing running restarts (a CronJob: its next Job)


def _requests(plans: list[WorkloadPlan]) -> dict[str, frozenset[str]]:
    return {
        p.info.label: frozenset(r.text for r in p.restarts)
        for p in plans
        if p.skip is None and p.restarts
    }


def _uses(plan: WorkloadPlan, target: Resource) -> str | None:
    """Whether ``plan`` is the target or uses it (directly, or what it produces): why
    it does not count then ('' when it does), else None."""
    info, ns = plan.info, plan.namespace
    same = (info.kind.kind, info.name) == (target.kind, target.name)
    if same and target.namespace in (None, ns):
        return plan.skip_text or ""
    produced = f"{target.kind}/{target.name}"
    for r in plan.resolved:
        e = r.entry
        if e is None or (target.namespace or ns) != e.namespace:
            continue
        if (e.info.kind, e.info.name) == (target.kind, target.name) or e.info.source == produced:
            return plan.skip_text or r.excluded or ""
    return None


def restart_effect(
    before: list[SourceText], after: list[SourceText], target: Resource, settings: Settings
) -> Effect:
    """The workloads ``after`` rolls that ``before`` did not, by the restart reasons in
    their checksums; and when none, why each workload that uses ``target`` does not."""
    quiet = settings._replace(lock=None, lock_file=None, verbose=False, quiet=True)

    def plans(sources: list[SourceText]) -> list[WorkloadPlan]:
        return run(sources, quiet, keep_plans=True, allow_empty=True, output=False).plans

    new_plans = plans(after)
    old, new = _requests(plans(before)), _requests(new_plans)
    moved = sorted(label for label, reasons in new.items() if reasons != old.get(label))
    later = [
        p.info.label for p in new_plans if p.info.label in moved and p.info.kind.kind == "CronJob"
    ]
    left = []
    if not moved:
        for p in new_plans:
            why = _uses(p, target)
            if why is not None:
                left.append((p.info.label, why or "its checksum does not move"))
    return Effect(moved, left, later)

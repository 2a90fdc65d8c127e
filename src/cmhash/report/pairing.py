"""report: how OLD's workloads are paired with NEW's (per pod group, a renamed Job by
its base name), each counted once as ``kubectl apply -f`` leaves it, and those only one
side has."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from cmhash.explain import workload_fields
from cmhash.model import ResourceId
from cmhash.plan.workplan import WorkloadPlan

if TYPE_CHECKING:
    from cmhash.app.result import RunResult

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

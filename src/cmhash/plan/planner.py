"""Each workload's plan with what it sees: the objects of its scope (``scopes.py``:
environments of one repository) and its Helm render's release namespace (``helm.py``)."""

from __future__ import annotations

from collections.abc import Mapping

from cmhash.analyze.refs import Reference
from cmhash.analyze.summaries import WorkloadInfo
from cmhash.findings import Finding
from cmhash.model import ResourceId
from cmhash.plan import scopes
from cmhash.plan.helm import Namespaces
from cmhash.plan.index import ConfigEntry
from cmhash.plan.options import PlanOptions
from cmhash.plan.resolve import counts
from cmhash.plan.workload import plan_workload
from cmhash.plan.workplan import WorkloadPlan
from cmhash.read.source import SourceText


class Planner:
    """plan_workload with what a workload sees: the objects of its scope (scopes.py) and
    its render's release namespace (helm.py)."""

    def __init__(self, scoping: scopes.Scoping, releases: Namespaces | None, options: PlanOptions):
        self.scoping = scoping
        self.releases = releases
        self.options = options
        self._by_namespace: dict[str, PlanOptions] = {}
        self.simple = not releases and not scoping.contested

    def plan(
        self,
        src: SourceText,
        w: WorkloadInfo,
        findings: list[Finding],
        renames: Mapping[ResourceId, str] | None = None,
    ) -> WorkloadPlan:
        options = self.options
        if self.simple:  # the common case: one index, one namespace rule
            return plan_workload(src, w, self.scoping.index, options, findings, renames)
        if self.releases:
            ns = self.releases.of(src, w.offset)
            if ns is not None:
                got = self._by_namespace.get(ns)
                if got is None:
                    got = self._by_namespace[ns] = options._replace(namespace=ns)
                options = got
        if not self.scoping.contested:
            return plan_workload(src, w, self.scoping.index, options, findings, renames)
        # the tie check after the selection: a workload cmhash leaves alone (opted out,
        # ignored, not included, a Job or Pod not opted in) never fails the run
        own: list[Finding] = []
        index = self.scoping.index_for(src, w.offset)
        plan = plan_workload(src, w, index, options, own, renames)
        if plan.skip is None:
            ns = w.namespace or options.namespace or ""
            self.scoping.check(src, w.refs, ns, w.label, _hashed(plan, options), w.offset)
        findings.extend(own)
        return plan


def _hashed(plan: WorkloadPlan, options: PlanOptions) -> scopes.Counts:
    """Whether a reference of ``plan`` would put a definition into its checksum."""

    def hashed(ref: Reference, entry: ConfigEntry) -> bool:
        return counts(plan, ref, entry, options)

    return hashed

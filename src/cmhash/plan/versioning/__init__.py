"""Versioned names: a ConfigMap or Secret renamed ``<name>-<suffix>`` after its content,
and every in-stream reference to it rewritten, so a rollback (``kubectl rollout undo``,
the old ReplicaSet during a rollout) finds the old config instead of the new one.

- analyze/versioned_names.py: the suffix rule (what a versioned name looks like, its base,
  its suffix);
- decision.py: which objects are renamed to what (the reduce stage's ``decide``);
- edits.py: the edits that rename them and every pod-spec reference to them;
- mentions.py: the other fields that look like they name a renamed object;
- here, ``versioning``: all of it in order (imported only when something is versioned).

A Secret a source produces is versioned through its source (plan/source_versions.py);
earlier versions are carried from a previous output by plan/history.py.
"""

from __future__ import annotations

from collections.abc import Mapping

from cmhash.analyze.summaries import DocInfo
from cmhash.findings import Finding
from cmhash.plan import byname
from cmhash.plan.index import ConfigIndex, defined_in, several_places
from cmhash.plan.options import PlanOptions
from cmhash.plan.versioning import decision, edits, mentions
from cmhash.plan.versioning.decision import Versioning
from cmhash.plan.workload import Planner
from cmhash.plan.workplan import WorkloadPlan
from cmhash.read.source import SourceText


def versioning(
    sources: list[SourceText],
    docs: list[list[DocInfo]],
    index: ConfigIndex,
    planner: Planner,
    options: PlanOptions,
    findings: list[Finding],
    secret_spans: Mapping[int, list[tuple[int, int]]],
) -> Versioning:
    """Versioned names (``decision.py``), decided from a first pass over the workloads:
    which object each one uses, and whether cmhash may edit it; then the rename edits
    (``edits.py``) and the fields that look like they name a renamed object."""
    first = [
        planner.plan(src, w, [])
        for src, per in zip(sources, docs, strict=True)
        for d in per
        for w in d.workloads
    ]
    by_name = byname.read_by_name(sources, index.objects, first, options.namespace or "")
    before = len(findings)
    decided = _decided(index, first, options, findings, by_name)
    # a field outside pod specs that names a renamed object (an operator's resource: a
    # CNPG Cluster's superuserSecret, a KEDA secretTargetRef) is read by whatever
    # reconciles it, under the old name: that object keeps its name (not-versioned, at
    # the field), unless it asks for the new one itself (cmhash.io/versioned: "true")
    # (a field a table or a schema already read, to the object it names: not again)
    read = {(id(at.source), at.ref.offset) for refs in by_name.refs.values() for at in refs}
    # (and a workload's declaring annotation: cmhash reads it, and follows the new name)
    declared = [
        (id(plan.source), r.ref.spot.start, r.ref.spot.end)
        for plan in first
        for r in plan.resolved
        if r.ref.how == "declared" and r.ref.spot is not None
    ]
    for _ in range(len(decided.renamed)):
        found = [
            m
            for m in mentions.scan(decided, sources, secret_spans, first)
            if not {(id(m.source), m.offset), (id(m.source), m.offset - 1)} & read
            and not any(s == id(m.source) and a <= m.offset < b for s, a, b in declared)
            and not m.renamed.entry.info.versioned
            and m.renamed.new != m.renamed.old
            and mentions.names_its_kind(m)
            and byname.same_namespace(
                byname.namespace_at(m.source, m.offset, options.namespace or "") or "",
                m.renamed.entry.id.namespace,
            )
        ]
        if not found:
            break
        for m in found:
            r = m.renamed
            by = f"the field {m.key!r}"
            ref = byname.NameRef(r.entry.info.kind, None, r.old, by, m.offset, None)
            why = (
                f"{by} outside a pod spec names it, and what reads that field (the "
                "operator or controller of that resource) looks for this name"
            )
            by_name.named(r.entry.id, byname.Located(m.source, ref), why)
        del findings[before:]
        decided = _decided(index, first, options, findings, by_name)
    told = {(f.path, f.line, f.column) for f in findings}  # a field of namesites.py's table
    said = [m.finding for m in mentions.scan(decided, sources, secret_spans, first)]
    findings.extend(f for f in said if (f.path, f.line, f.column) not in told)
    return decided


def _decided(
    index: ConfigIndex,
    first: list[WorkloadPlan],
    options: PlanOptions,
    findings: list[Finding],
    by_name: byname.ByName,
) -> Versioning:
    """The new names and their edits."""
    decided = decision.decide(index, first, options, findings, by_name)
    for key in decided.names:
        per = index.by_directory.get(key)
        if per:  # one new name per id: environments would share it (plan/scopes.py)
            entry = index.objects[key]
            files = defined_in(per)
            raise entry.source.error(
                f"{entry.info.label} is defined in {several_places(per)[0]} ({files}): versioned "
                "names are decided per run, so run cmhash --versioned on each "
                "environment's directory, or each Helm release's render",
                entry.info.offset,
            )
    edits.edits(decided, first)
    return decided

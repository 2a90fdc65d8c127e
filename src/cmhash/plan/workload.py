"""The reduce stage for one workload: its references against the index -> its value
(the hash of what it uses), its final edit and its findings (``plan_workload``). Which
workloads are left alone and why (the configuration's selection, plan/workplan.py; a
kind that needs an opt-in, knowledge/kinds.py OPT_IN), what its references resolve to
(plan/resolve.py), whether an existing value is cmhash's own, and --jobs=rename's new
name.

``Planner``: each workload's plan with what it sees, the objects of its scope (scopes.py:
environments of one repository) and its Helm render's release namespace (helm.py).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping

from cmhash.analyze.hashing import digest
from cmhash.analyze.refs import Reference
from cmhash.analyze.summaries import SkipReason, WorkloadInfo
from cmhash.edit.splice import with_value
from cmhash.findings import Code, Finding
from cmhash.knowledge.kinds import OPT_IN, Policy
from cmhash.model import Level, ResourceId
from cmhash.parse.k8syaml import resolves_to_non_string
from cmhash.plan import scopes
from cmhash.plan.helm import Namespaces
from cmhash.plan.index import ConfigIndex
from cmhash.plan.options import PlanOptions
from cmhash.plan.resolve import counts, resolve_workload
from cmhash.plan.workplan import WorkloadPlan, selected
from cmhash.read.source import SourceText

# skip reasons that come with a finding: code, message after the workload's label
SKIP_FINDINGS: dict[SkipReason, tuple[Code, str]] = {
    SkipReason.WORKLOAD_REF: (
        Code.WORKLOAD_REF,
        "takes its pod template from {detail} (spec.workloadRef): annotate that one instead; "
        "Argo rejects a Rollout whose own template beside workloadRef has labels or "
        "annotations",
    ),
    SkipReason.NO_TEMPLATE: (
        Code.NO_TEMPLATE,
        "has no pod template (a patch or a partial manifest?); not annotated",
    ),
}


# the level of a map-stage finding under --strict, when it differs from its code's
STRICT: dict[Code, Level] = {
    Code.REFERENCE_SHAPE: Level.ERROR,  # a reference cmhash cannot read
    Code.MISPLACED_ANNOTATION: Level.WARNING,  # an annotation that does nothing there
}


_HEX64 = r"[0-9a-f]{64}"  # (compiled by re's cache when a workload has a value under the key)


def _is_string(info: WorkloadInfo) -> bool:
    """Whether the existing value reaches the API server as this string: any quoted or
    block scalar, and a plain one that go-yaml does not read as a number, boolean or
    null. kustomize and yq re-serialise our double-quoted value as a plain scalar
    (kyaml writes a string plain unless it would resolve to another type)."""
    if info.current is None:
        return False
    return info.current_style is not None or not resolves_to_non_string(info.current)


def _written_by_cmhash(src: SourceText, info: WorkloadInfo) -> bool:
    """Whether an existing value under our key is cmhash's own: a 64-hex digest in any
    scalar style on an object no chart rendered. A chart's ``sha256sum`` line is rendered
    fresh on every ``helm template``, so in Helm output (its ``# Source:`` lines) and on
    an object whose labels say a chart rendered it (kustomize's ``--enable-helm`` keeps
    the labels, not the comments) an existing value is the chart's."""
    if not re.fullmatch(_HEX64, info.current or "") or not _is_string(info):
        return False
    from cmhash.knowledge.helm import RENDERED_LABELS
    from cmhash.plan.helm import is_helm_source

    for key, value in info.labels:
        if key in RENDERED_LABELS and RENDERED_LABELS[key] in (None, value):
            return False
    return not is_helm_source(src)


def plan_workload(
    src: SourceText,
    info: WorkloadInfo,
    index: ConfigIndex,
    options: PlanOptions,
    findings: list[Finding],
    renames: Mapping[ResourceId, str] | None = None,
) -> WorkloadPlan:
    """``renames``: the new names of versioned objects (plan/versioning/)."""
    plan = _plan(src, info, index, options, findings, renames or {})
    if info.subpaths:
        from cmhash.plan.ref_findings import subpath  # (findings: imported when any)

        findings.extend(subpath(plan, mount, index) for mount in info.subpaths)
    return plan


def _plan(
    src: SourceText,
    info: WorkloadInfo,
    index: ConfigIndex,
    options: PlanOptions,
    findings: list[Finding],
    renames: Mapping[ResourceId, str],
) -> WorkloadPlan:
    plan = WorkloadPlan(src, info, info.namespace or options.namespace or "")
    if plan.skip is None and (
        options.ignore_workloads or options.include_workloads or options.opt_in
    ):
        plan.skip, plan.skip_detail, plan.selected_by = selected(plan, options)
    findings.extend(
        plan.finding(
            item.offset,
            Code(item.code),
            f"{info.label}: {item.message}",
            level=STRICT.get(Code(item.code)) if options.strict else None,
        )
        for item in info.skipped_items
    )
    skipped = plan.skip is not None
    about = SKIP_FINDINGS.get(plan.skip) if plan.skip is not None else None
    if about is not None:
        detail = plan.skip_detail or "another workload"
        _note(findings, plan, about[0], about[1].format(detail=detail))
    # opted out: no findings, but explain and report show what it uses
    uses = resolve_workload(plan, index, options, [] if skipped else findings, renames)
    extra = None
    if options.lock is not None or info.selection.restart or index.restarts:
        from cmhash.plan.lock import extras  # (a lock, or a restart asked for: rare)

        extra = extras(plan, options.lock, index.writers)  # what Git does not see
    if skipped:
        return plan
    if info.kind.live and not options.hash_live_reloaded:
        from cmhash.plan.ref_findings import live_reloaded  # (an operator's resource)

        note = live_reloaded(plan)
        findings.extend([note] if note is not None else [])
    if plan.in_stream or extra:
        plan.value = digest(uses, options.secret_key, extra)
    gate = OPT_IN.get(info.kind.policy)
    # a generateName object that opted in is created anew each time: no gate applies
    if gate is not None and not info.generated and not getattr(options, gate.option):
        plan.skip = SkipReason[gate.skip]
        if plan.in_stream:
            _note(findings, plan, gate.code, (info.hook and gate.hook_message) or gate.message)
        return plan
    if plan.value is None:
        if info.current is not None:
            _note(
                findings,
                plan,
                Code.STALE_ANNOTATION,
                f"carries {options.annotation_key} but uses no in-stream ConfigMap/Secret; "
                "left untouched",
            )
        return plan
    _finish(plan, plan.value, options, findings)
    if options.jobs_rename and info.kind.policy is Policy.JOB:
        _rename_job(plan, plan.value, findings)
    return plan


def _note(findings: list[Finding], plan: WorkloadPlan, code: Code, text: str) -> None:
    """A finding at the workload, its message the workload's label and ``text``."""
    findings.append(plan.finding(plan.info.offset, code, f"{plan.info.label} {text}"))


def _rename_job(plan: WorkloadPlan, value: str, findings: list[Finding]) -> None:
    """--jobs=rename: the Job's name from its template and checksum (analyze/jobs.py);
    hook and generateName Jobs are made anew by their tool anyway: left as they are."""
    info = plan.info
    if info.job is None:
        if info.hook or info.generated:
            what = "a Helm or Argo CD hook" if info.hook else "named by generateName"
            told = f"is {what}: not renamed (its tool makes a new Job each time), only annotated"
            _note(findings, plan, Code.JOB_NOT_RENAMED, told)
        return
    from cmhash.analyze.jobs import new_name

    new = new_name(info.job, value)
    # the name written in its own style, and the base-name annotation when missing
    renamed = [info.job.spot.renamed(new)] if new != info.name else []
    plan.job_edits = [*renamed, *info.job.marker]
    plan.runs_again_as = new


def _finish(plan: WorkloadPlan, value: str, options: PlanOptions, findings: list[Finding]) -> None:
    """A workload that gets the annotation: its last findings and its final edit."""
    info, src = plan.info, plan.source
    if info.no_restart:
        findings.append(
            plan.finding(info.offset, Code.NO_RESTART, f"{info.label}: {info.no_restart}")
        )
    if info.current == value and _is_string(info):
        return  # ours and current, in whatever style another tool left it
    if info.current is not None and not _written_by_cmhash(src, info):
        findings.append(
            plan.finding(
                info.offset,
                Code.REPLACED_ANNOTATION,
                f"{info.label}: replaced a {options.annotation_key} value cmhash did not write "
                "(the chart's own checksum?); whatever it covered beyond the ConfigMaps/Secrets "
                "the pod spec references is no longer covered: declare those "
                "(cmhash.io/extra-configmaps, cmhash.io/extra-secrets), or give cmhash "
                "another key (--annotation-key) to keep both",
            )
        )
    if info.edit_error is not None:
        raise src.error(info.edit_error.message, info.edit_error.offset)
    assert info.edit is not None
    plan.edit = with_value(info.edit, value)


class Planner:
    """plan_workload with what a workload sees: the objects of its scope (scopes.py) and
    its render's release namespace (helm.py)."""

    def __init__(self, scoping: scopes.Scoping, releases: Namespaces | None, options: PlanOptions):
        self.scoping = scoping
        # both fixed for the run: the common case (neither) costs two attribute tests
        self.releases = releases or None
        self.contested = scoping.contested
        self.options = options
        self._by_namespace: dict[str, PlanOptions] = {}

    def plan(
        self,
        src: SourceText,
        w: WorkloadInfo,
        findings: list[Finding],
        renames: Mapping[ResourceId, str] | None = None,
    ) -> WorkloadPlan:
        options = self.options
        if self.releases:
            ns = self.releases.of(src, w.offset)
            if ns is not None:
                got = self._by_namespace.get(ns)
                if got is None:
                    got = self._by_namespace[ns] = options._replace(namespace=ns)
                options = got
        if self.scoping.index.restarted:
            operator_restarts(w, w.namespace or options.namespace or "", self.scoping.index)
        if not self.contested:
            return plan_workload(src, w, self.scoping.index, options, findings, renames)
        # the tie check after the selection: a workload cmhash leaves alone (opted out,
        # ignored, not included, a Job or Pod not opted in) never fails the run
        own: list[Finding] = []
        index = self.scoping.index_for(src, w.offset)
        plan = plan_workload(src, w, index, options, own, renames)
        if plan.skip is None:
            ns = w.namespace or options.namespace or ""
            hashed = functools.partial(counts, plan, options=options)
            self.scoping.check(src, w.refs, ns, w.label, hashed, w.offset)
        findings.extend(own)
        return plan


def operator_restarts(w: WorkloadInfo, namespace: str, index: ConfigIndex) -> None:
    """A workload an operator restarts itself when an object changes (Vault Secrets
    Operator's rolloutRestartTargets, read as Reloader's annotations are): that object
    is a declared dependency of it, so its checksum follows the object too, and explain
    says who else restarts it."""
    entries = index.restarted.get((w.kind.group, w.kind.kind, namespace, w.name))
    if not entries:
        return
    from cmhash.analyze.annotations import Spot

    refs = []
    for e in entries:
        operator = next(
            t[3] for t in e.info.restarts if t[:3] == (w.kind.group, w.kind.kind, w.name)
        )
        field = f"spec.rolloutRestartTargets of {e.info.source}"
        why = f"it is named in {field}"
        ref = Reference(
            e.info.kind,
            e.info.name,
            None,
            False,
            "declared",
            field,
            w.offset,
            declared_by=f"{field}: {operator} restarts it too",
            spot=Spot(w.offset, w.offset, None, why),
        )
        if ref not in w.refs:
            refs.append(ref)
    if refs:
        w.refs = (*w.refs, *refs)

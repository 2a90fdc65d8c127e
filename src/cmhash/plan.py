"""Workloads -> the annotation value each should carry, the edit, and findings."""

from __future__ import annotations

from dataclasses import dataclass, field

from cmhash.edit import Edit, annotation_edit, own
from cmhash.errors import NodeError
from cmhash.findings import ERROR, Finding
from cmhash.hashing import Use, digest
from cmhash.index import ConfigEntry, ConfigIndex, effective_namespace, finding_at
from cmhash.kinds import KindTable, Policy, WorkloadKind
from cmhash.refs import Reference, find_references
from cmhash.resources import Resource, require_name
from cmhash.settings import Settings
from cmhash.yamltree import ALIAS, MAP, Node, get, get_path, scalar

# Why a workload is left alone (None = it is annotated when it uses in-stream config).
SKIP_OPTED_OUT = "opted out (cmhash.io/skip)"
SKIP_NO_TEMPLATE = "no pod template"
SKIP_WORKLOAD_REF = "Rollout uses workloadRef"
SKIP_JOB = "Job pod templates are immutable (--jobs to opt in)"
SKIP_POD = "bare Pods are not annotated (--pods to opt in)"


@dataclass
class Resolved:
    ref: Reference
    entry: ConfigEntry | None  # None: not in the input
    missing_keys: frozenset[str] = frozenset()


@dataclass
class WorkloadPlan:
    resource: Resource
    kind: WorkloadKind
    namespace: str
    template: Node | None = None
    template_key: Node | None = None
    resolved: list[Resolved] = field(default_factory=list)
    value: str | None = None       # the checksum it should carry (None: no in-stream config)
    current: str | None = None     # the value it carries now
    skip: str | None = None
    edit: Edit | None = None

    @property
    def in_stream(self) -> bool:
        return any(r.entry is not None and not r.entry.skipped for r in self.resolved)


def _template(res: Resource, wk: WorkloadKind) -> tuple[Node | None, Node | None]:
    """The pod template and the key node it hangs under; refuses aliases and merges."""
    node = res.node
    key: Node | None = None
    for step in wk.template_path:
        if get(node, step) is None:
            return None, None
        pair = own(node, step)
        if pair is None:
            raise NodeError(f"cannot annotate {res.label}: '{step}' comes from a '<<' merge; "
                            "write it out in full", node.start)
        key, raw = pair
        if raw.kind == ALIAS:
            raise NodeError(f"cannot annotate {res.label}: '{step}' is an alias "
                            f"(*{raw.anchor}); expand it", raw.start)
        node = raw
    return (node, key) if node.kind == MAP else (None, None)


def _current(template: Node, key: str) -> str | None:
    return scalar(get(get_path(template, ("metadata", "annotations")), key))


def _resolve(plan: WorkloadPlan, refs: list[Reference], index: ConfigIndex,
             settings: Settings, findings: list[Finding]) -> list[Use]:
    res = plan.resource
    uses = []
    for ref in refs:
        if settings.exclude_secrets and ref.target_kind == "Secret":
            continue
        entry = index.get((ref.target_kind, plan.namespace, ref.name))
        if entry is not None and entry.skipped:
            plan.resolved.append(Resolved(ref, entry))
            continue
        if entry is None:
            plan.resolved.append(Resolved(ref, None))
            uses.append(Use(ref.target_kind, ref.name, None, ref.keys))
            if not ref.optional:
                findings.append(_missing_finding(res, ref, plan.namespace, index, settings))
            continue
        missing = frozenset(k for k in (ref.keys or ()) if k not in entry.content.entries)
        plan.resolved.append(Resolved(ref, entry, missing))
        uses.append(Use(ref.target_kind, ref.name, entry.content, ref.keys))
        if missing and not ref.optional:
            findings.append(finding_at(
                res, ref.offset, "missing-key",
                f"{res.label} uses key {', '.join(sorted(missing))!s} of {ref.target_kind} "
                f"{ref.name!r}, which does not have it (the pod would fail to start)",
                workload=res.label))
    return uses


def _missing_finding(res: Resource, ref: Reference, ns: str, index: ConfigIndex,
                     settings: Settings) -> Finding:
    level = ERROR if settings.strict else None
    others = index.other_namespaces(ref.target_kind, ref.name, ns)
    if others:
        where = ", ".join(repr(o) if o else "(none)" for o in sorted(others))
        here = repr(ns) if ns else "no namespace"
        hint = (f"pass --namespace {ns}" if ns else
                f"pass --namespace {sorted(o for o in others if o)[0]}" if any(others)
                else "set metadata.namespace consistently")
        return finding_at(res, ref.offset, "namespace-mismatch",
                          f"{res.label} ({here}) references {ref.target_kind} {ref.name!r}, "
                          f"which is only in the input with namespace {where}; references "
                          f"never cross namespaces: {hint} if they land in the same one",
                          level=level, workload=res.label)
    return finding_at(res, ref.offset, "missing-reference",
                      f"{res.label} references {ref.target_kind} {ref.name!r}, which is not "
                      "in the input (mark it optional, add it, or ignore if it lives elsewhere)",
                      level=level, workload=res.label)


def _no_restart_reason(plan: WorkloadPlan) -> str | None:
    res, wk = plan.resource, plan.kind
    spec = get(res.node, "spec")
    if not wk.rolls and wk.policy is Policy.ANNOTATE:
        return f"a {res.kind} does not replace existing pods when its template changes"
    strategy = scalar(get_path(spec, ("updateStrategy", "type")))
    if strategy == "OnDelete":
        return "updateStrategy OnDelete: pods pick up the change only when deleted"
    if (scalar(get(spec, "paused")) or "").lower() == "true":
        return "the Deployment is paused: nothing rolls until it is resumed"
    return None


def plan_workload(res: Resource, wk: WorkloadKind, index: ConfigIndex, settings: Settings,
                  findings: list[Finding]) -> WorkloadPlan:
    require_name(res)
    plan = WorkloadPlan(res, wk, effective_namespace(res, settings))
    if res.skipped:
        plan.skip = SKIP_OPTED_OUT
        return plan
    if wk.template_path:
        plan.template, plan.template_key = _template(res, wk)
    else:
        plan.template = res.node
    if plan.template is None:
        if res.kind == "Rollout" and get(get(res.node, "spec"), "workloadRef") is not None:
            plan.skip = SKIP_WORKLOAD_REF
            findings.append(finding_at(res, res.node.start, "workload-ref",
                                       f"{res.label} uses spec.workloadRef: annotate the "
                                       "Deployment it references instead", workload=res.label))
        else:
            plan.skip = SKIP_NO_TEMPLATE
        return plan
    field_path = ".".join(wk.template_path + ("spec",))
    refs = find_references(get(plan.template, "spec"), field_path,
                           image_pull_secrets=settings.image_pull_secrets)
    uses = _resolve(plan, refs, index, settings, findings)
    plan.current = _current(plan.template, settings.annotation_key)
    if plan.in_stream:
        plan.value = digest(uses, settings.secret_key)
    if wk.policy is Policy.JOB and not settings.jobs:
        plan.skip = SKIP_JOB
        if plan.in_stream:
            findings.append(finding_at(
                res, res.node.start, "job-not-annotated",
                f"{res.label} uses in-stream config but is not annotated: a Job's pod template "
                "is immutable and kubectl apply would fail (--jobs to opt in)",
                workload=res.label))
        return plan
    if wk.policy is Policy.POD and not settings.pods:
        plan.skip = SKIP_POD
        if plan.in_stream:
            findings.append(finding_at(
                res, res.node.start, "pod-not-annotated",
                f"{res.label} uses in-stream config; a bare Pod is not annotated because an "
                "annotation does not restart it (--pods to opt in)", workload=res.label))
        return plan
    if plan.value is None:
        if plan.current is not None:
            findings.append(finding_at(
                res, res.node.start, "stale-annotation",
                f"{res.label} carries {settings.annotation_key} but uses no in-stream "
                "ConfigMap/Secret; left untouched", workload=res.label))
        return plan
    reason = _no_restart_reason(plan)
    if reason:
        findings.append(finding_at(res, res.node.start, "no-restart",
                                   f"{res.label}: {reason}", workload=res.label))
    plan.edit = annotation_edit(res.source.text, plan.template, plan.template_key,
                                settings.annotation_key, plan.value,
                                _default_newline(res.source.text))
    return plan


def _default_newline(text: str) -> str:
    nl = text.find("\n")
    return "\r\n" if nl > 0 and text[nl - 1] == "\r" else "\n"


def plan_workloads(resources: list[Resource], index: ConfigIndex, table: KindTable,
                   settings: Settings, findings: list[Finding]) -> list[WorkloadPlan]:
    plans = []
    for res in resources:
        wk = table.lookup(res.api_version, res.kind)
        if wk is None:
            continue
        try:
            plans.append(plan_workload(res, wk, index, settings, findings))
        except NodeError as exc:
            raise res.source.error(exc.message, exc.offset) from None
    return plans

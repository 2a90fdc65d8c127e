"""Findings about a workload's references: an object that is not in the input (or only
in another namespace), a key its object does not have, a subPath mount (whose file is
never updated in place), objects an operator's own reloader applies without a restart
(left out of the checksum). Made by plan/resolve.py and plan/workload.py."""

from __future__ import annotations

from cmhash.analyze.refs import Reference, SubPathMount
from cmhash.findings import Code, Finding
from cmhash.knowledge.operators import live_reload
from cmhash.model import Level, ResourceId
from cmhash.plan.index import ConfigIndex
from cmhash.plan.options import PlanOptions
from cmhash.plan.workplan import WorkloadPlan


def _missing_declared(plan: WorkloadPlan, ref: Reference, level: Level | None) -> Finding:
    ns = ref.namespace or plan.namespace
    if ref.pattern:
        what = (
            f"{ref.target_kind} names matching {ref.name!r} ({ref.declared_by}), but no "
            f"{ref.target_kind} {'in namespace ' + repr(ns) if ns else 'without a namespace'}"
            " in the input matches"
        )
    else:
        shown = f"{ref.namespace}/{ref.name}" if ref.namespace else ref.name
        what = f"{ref.target_kind} {shown!r} ({ref.declared_by}), which is not in the input"
    return plan.finding(
        ref.offset,
        Code.MISSING_REFERENCE,
        f"{plan.label} declares a dependency on {what} (add it, or ignore this "
        "if it lives elsewhere)",
        level=level,
        field=ref.field,
    )


def missing(
    plan: WorkloadPlan, ref: Reference, index: ConfigIndex, options: PlanOptions
) -> Finding:
    """``ref`` names an object the input does not have (or has only in another
    namespace)."""
    level = Level.ERROR if options.strict else None
    if ref.how == "declared":
        return _missing_declared(plan, ref, level)
    ns = plan.namespace
    others = index.other_namespaces(ref.target_kind, ref.name, ns)
    if others:
        where = ", ".join(repr(o) if o else "(none)" for o in sorted(others))
        here = f"namespace {ns!r}" if ns else "no namespace"
        named = sorted(o for o in others if o)
        if options.namespace is None:
            hint = f"pass --namespace {ns if ns else named[0]} if they land in the same one"
        else:  # -n (or the release namespace) is applied already: only manifests can agree
            hint = (
                f"objects without metadata.namespace land in {options.namespace!r} "
                "already, so make the namespaces agree in the manifests"
            )
        return plan.finding(
            ref.offset,
            Code.NAMESPACE_MISMATCH,
            f"{plan.label} ({here}) references {ref.target_kind} {ref.name!r}, which "
            f"the input only has with namespace {where}; references never cross "
            f"namespaces: {hint}",
            level=level,
            field=ref.field,
        )
    return plan.finding(
        ref.offset,
        Code.MISSING_REFERENCE,
        f"{plan.label} references {ref.target_kind} {ref.name!r}, which is not in "
        "the input (add it, mark the reference optional, or ignore this if it "
        "lives elsewhere)",
        level=level,
        field=ref.field,
    )


def missing_keys(plan: WorkloadPlan, ref: Reference, keys: frozenset[str]) -> Finding:
    """``ref`` uses ``keys`` of an object that does not have them."""
    return plan.finding(
        ref.offset,
        Code.MISSING_KEY,
        f"{plan.label} uses key {', '.join(sorted(keys))} of {ref.target_kind} "
        f"{ref.name!r}, which does not have it (the pod would not start)",
        field=ref.field,
    )


def subpath(plan: WorkloadPlan, mount: SubPathMount, index: ConfigIndex) -> Finding:
    """A subPath mount of a ConfigMap/Secret: its file is never updated in place; whether
    the checksum restarts the pods instead."""
    objs = ", ".join(f"{k} {n!r}" for k, n in mount.targets)
    where = f" at {mount.mount_path}" if mount.mount_path else ""
    who = f" (container {mount.container})" if mount.container else ""
    seen = [index.objects.get(ResourceId.config(k, plan.namespace, n)) for k, n in mount.targets]
    if not any(e is not None and e.excluded is None for e in seen):
        then = "cmhash cannot see it in the input, so restart the pods yourself when it changes"
    elif plan.skip is None and plan.value is not None:
        then = (
            "the checksum annotation restarts the pods when it changes"
            if not plan.info.no_restart
            else "the checksum annotation changes with it, but this workload does not replace "
            "its pods on its own"
        )
    else:
        then = "cmhash does not restart this workload (see its other findings)"
    return plan.finding(
        mount.offset,
        Code.SUBPATH_MOUNT,
        f"{plan.label} mounts {objs}{where}{who} with subPath: such a file is never "
        f"updated in place, only a new pod sees changes; {then}",
        field=mount.field,
    )


def live_reloaded(plan: WorkloadPlan) -> Finding | None:
    """One note for the objects of the input the workload's operator applies without a
    restart (knowledge/operators.py), which its checksum leaves out; None when none."""
    live = plan.info.kind.live
    found = [
        (r.ref, how)
        for r in plan.resolved
        if r.entry is not None
        and r.excluded is not None
        and r.ref.how == "operator"
        and (how := live_reload(live, r.ref.field)) is not None
    ]
    if not found:
        return None
    items = "; ".join(f"{ref.target_kind} {ref.name!r} ({ref.field}): {how}" for ref, how in found)
    them = "it" if len(found) == 1 else "them"
    return plan.finding(
        found[0][0].offset,
        Code.LIVE_RELOADED,
        f"{plan.label} does not roll on {items}; left out of the checksum "
        f"(--hash-live-reloaded hashes {them})",
        field=found[0][0].field,
    )

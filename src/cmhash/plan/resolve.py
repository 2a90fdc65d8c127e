"""A workload's references -> the objects of the index they name and the uses that go
into its checksum (``resolve_workload``), each recorded on the plan as ``Resolved``;
and why a reference does not count (``counts``: the object is excluded, or the
workload's selection leaves it out). The common case runs in C (native/_ctree.c
``resolve_plain``, bound here through native/cext.py); ``_py_resolve`` is its
reference and does everything else."""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping

from cmhash.analyze.hashing import Use
from cmhash.analyze.refs import Reference
from cmhash.findings import Finding
from cmhash.knowledge.compat import (
    RELOAD_LISTS,
    RELOADER_BY_KIND,
    RELOADER_RULES,
    Case,
    ReloaderView,
    decide,
    why,
)
from cmhash.knowledge.operators import live_reload
from cmhash.knowledge.sources import BUILTIN_SOURCES, SecretSource, secret_kinds
from cmhash.model import ResourceId
from cmhash.native import cext
from cmhash.plan.index import ConfigEntry, ConfigIndex
from cmhash.plan.options import PlanOptions
from cmhash.plan.workplan import Resolved, WorkloadPlan

_NO_KEYS: frozenset[str] = frozenset()


def counts(plan: WorkloadPlan, ref: Reference, entry: ConfigEntry, options: PlanOptions) -> bool:
    """Whether ``ref`` would put ``entry`` into the workload's checksum (plan/scopes.py:
    a tie between definitions none of which would count is no tie)."""
    return _not_counted(plan, ref, entry, options) is None


def _not_counted(
    plan: WorkloadPlan, ref: Reference, entry: ConfigEntry | None, options: PlanOptions
) -> str | None:
    """Why a reference does not enter the checksum: the object is excluded, or the
    workload's selection leaves that kind (or unmatched objects) out. Declared
    dependencies always count, but for --exclude-secrets."""
    if ref.how == "imagePullSecret" and not options.image_pull_secrets:
        return "imagePullSecrets are not hashed (--image-pull-secrets to hash them)"
    if ref.how == "operator" and not options.hash_live_reloaded:
        how = live_reload(plan.info.kind.live, ref.field)
        if how is not None:  # (knowledge/operators.py)
            return f"{how}; --hash-live-reloaded hashes it"
    if options.exclude_secrets and ref.target_kind in _secret_kinds(options.extra_sources):
        kinds = ref.target_kind + ("es" if ref.target_kind.endswith("s") else "s")
        return f"{kinds} are left out of checksums (--exclude-secrets)"
    if entry is not None and entry.excluded is not None:
        return entry.excluded
    sel = plan.info.selection
    view = sel.view(ref.target_kind) if sel.reloader else None
    if ref.how == "declared":
        if view is not None and ref.declared_by in RELOAD_LISTS and ref.name in view.excluded:
            return why(RELOADER_RULES[1], view)  # Reloader's exclude comes before its list
        return None
    if sel.sources is not None and _SOURCES.get(ref.target_kind) != sel.sources:
        return f"only {sel.sources} count for this workload ({sel.sources_by})"
    if view is None or sel.count_all:
        return None
    rule = decide(
        Case(
            view,
            ref.name,
            _listed(plan, view, ref.name),
            entry is not None and entry.info.match,
            False,  # (ignored objects are left out above: entry.excluded)
            not options.opt_in,
        )
    )
    return None if rule.reloads else why(rule, view)


def _listed(plan: WorkloadPlan, view: ReloaderView, name: str) -> bool:
    """Whether one of the workload's reload-list patterns for the view's kind matches."""
    from cmhash.analyze import patterns  # (RE2: a run with a reload-list pattern)

    reload = RELOADER_BY_KIND[view.kind].reload
    return any(
        r.declared_by == reload and r.pattern and patterns.matches(r.name, name)
        for r in plan.info.refs
    )


@functools.lru_cache(maxsize=8)
def _secret_kinds(extra: tuple[SecretSource, ...]) -> frozenset[str]:
    return secret_kinds(BUILTIN_SOURCES + extra)


# what cmhash.io/sources (and Reloader's typed auto) calls each target kind
_SOURCES = {"ConfigMap": "configmaps", "Secret": "secrets", "SecretProviderClass": "secrets"}


def _targets(plan: WorkloadPlan, ref: Reference, index: ConfigIndex) -> list[Reference]:
    """A Reloader pattern stands for every in-stream object whose name it matches."""
    if not ref.pattern:
        return [ref]
    ns = ref.namespace or plan.namespace
    found = index.matching(ref.target_kind, ns, ref.name)
    return [ref._replace(name=e.info.name, pattern=False) for e in found] or [ref]


def resolve_workload(
    plan: WorkloadPlan,
    index: ConfigIndex,
    options: PlanOptions,
    findings: list[Finding],
    renames: Mapping[ResourceId, str],
) -> list[Use]:
    """The uses of ``plan``'s references that enter its checksum; every reference's
    ``Resolved`` goes to ``plan.resolved``, its findings to ``findings``."""
    sel = plan.info.selection
    if (
        _C_RESOLVE is not None
        and not renames
        and not options.exclude_secrets
        and sel.sources is None
        and not sel.reloader
        and not plan.info.kind.live  # (an operator's reloader: _not_counted decides)
    ):  # the common case, in C: every reference to an object of the input that counts
        made = _C_RESOLVE(plan.info.refs, plan.namespace, index.objects, options.image_pull_secrets)
        if made is not None:
            plan.resolved.extend(made[0])
            return made[1]
    return _py_resolve(plan, index, options, findings, renames)


def _py_resolve(
    plan: WorkloadPlan,
    index: ConfigIndex,
    options: PlanOptions,
    findings: list[Finding],
    renames: Mapping[ResourceId, str],
) -> list[Use]:
    uses = []
    for written in plan.info.refs:
        for ref in _targets(plan, written, index) if written.pattern else (written,):
            key = plan.target(ref)
            use = _resolve_one(plan, ref, key, index, options, findings)
            if use is None:
                continue
            new = renames.get(key) if renames else None  # versioned: hashed by its new name
            uses.append(use if new is None else use._replace(name=new))
    return uses


def _resolve_one(
    plan: WorkloadPlan,
    ref: Reference,
    key: ResourceId,
    index: ConfigIndex,
    options: PlanOptions,
    findings: list[Finding],
) -> Use | None:
    """``key``: the id of the object ``ref`` names (``plan.target(ref)``)."""
    entry = index.objects.get(key)
    why = _not_counted(plan, ref, entry, options)
    other_ns = ref.namespace if ref.namespace not in (None, plan.namespace) else None
    if why is not None:
        plan.resolved.append(Resolved(ref, entry, excluded=why))
        return None
    keys = None if ref.keys is None else frozenset(ref.keys)
    if entry is None:
        plan.resolved.append(Resolved(ref, None))
        if not ref.optional and (options.lock is None or key not in options.lock.entries):
            from cmhash.plan.ref_findings import missing  # (findings: imported when any)

            findings.append(missing(plan, ref, index, options))
        return Use(ref.target_kind, ref.name, None, keys, other_ns)
    content = entry.info.content
    if content.source is not None:  # what a source produces has no keys to check
        plan.resolved.append(Resolved(ref, entry))
        return Use(ref.target_kind, ref.name, content, None, other_ns)
    absent = keys.difference(content.entries) if keys else _NO_KEYS  # (a dict: no copy)
    plan.resolved.append(_resolved((ref, entry, absent, None)))
    if absent and not ref.optional:
        from cmhash.plan.ref_findings import missing_keys

        findings.append(missing_keys(plan, ref, absent))
    return _use((ref.target_kind, ref.name, content, keys, other_ns))


# Resolved((...)) and Use((...)) with every field, without a Python frame (common path)
_resolved = functools.partial(tuple.__new__, Resolved)
_use = functools.partial(tuple.__new__, Use)

# resolve_workload for plain references in C (native/_ctree.c), when it was compiled: (resolved,
# uses), or None for anything _py_resolve must do
_C_RESOLVE: (
    Callable[
        [tuple[Reference, ...], str, dict[ResourceId, ConfigEntry], bool],
        tuple[list[Resolved], list[Use]] | None,
    ]
    | None
) = cext.function(
    "resolve_plain", "bind_resolve", ResourceId, Resolved, Use, _NO_KEYS, "imagePullSecret"
)

"""The reduce stage: each workload's references against the index -> its value (the
hash of what it uses), its final edit, and its findings."""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Mapping
from typing import NamedTuple

from cmhash.analyze import patterns
from cmhash.analyze.hashing import Use, digest
from cmhash.analyze.jobs import new_name, rename_edits
from cmhash.analyze.refs import Reference, SubPathMount
from cmhash.analyze.summaries import SkipReason, WorkloadInfo
from cmhash.edit.splice import Edit, with_value
from cmhash.findings import Code, Finding, finding
from cmhash.knowledge.compat import (
    RELOAD_LISTS,
    RELOADER_BY_KIND,
    RELOADER_RULES,
    Case,
    ReloaderView,
    decide,
    why,
)
from cmhash.knowledge.kinds import Policy
from cmhash.knowledge.sources import BUILTIN_SOURCES, SecretSource, secret_kinds
from cmhash.model import Level, ResourceId, make_id
from cmhash.native import cext
from cmhash.parse.k8syaml import resolves_to_non_string
from cmhash.plan.index import ConfigEntry, ConfigIndex
from cmhash.plan.options import PlanOptions
from cmhash.plan.selection import first_match
from cmhash.read.source import SourceText
from cmhash.record import Record


class OptIn(NamedTuple):
    """A kind left alone unless a setting opts in, and what to tell the user."""

    enabled: Callable[[PlanOptions], bool]
    skip: SkipReason
    code: Code
    message: str
    hook_message: str | None = None  # for a Helm or Argo CD hook, which its tool re-creates


OPT_IN: dict[Policy, OptIn] = {
    Policy.JOB: OptIn(
        lambda s: s.jobs,
        SkipReason.JOB,
        Code.JOB_NOT_ANNOTATED,
        "uses in-stream config but is not annotated: a Job's pod template is "
        "immutable and kubectl apply would fail (--jobs to opt in)",
        "uses in-stream config but is not annotated: a Helm or Argo CD hook is deleted and "
        "created again by its tool, and reads the configuration it finds then (--jobs to "
        "annotate it anyway)",
    ),
    Policy.POD: OptIn(
        lambda s: s.pods,
        SkipReason.POD,
        Code.POD_NOT_ANNOTATED,
        "uses in-stream config; a bare Pod is not annotated because an annotation "
        "does not restart it (--pods to opt in)",
    ),
}

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


class Resolved(NamedTuple):
    ref: Reference
    entry: ConfigEntry | None  # None: not in the input
    missing_keys: frozenset[str] = frozenset()
    excluded: str | None = None  # why it does not count (the object, or the selection)

    @property
    def counted(self) -> bool:
        """An in-stream object that enters the checksum."""
        return self.entry is not None and self.excluded is None


class WorkloadPlan(Record):
    __slots__ = (
        "edit",
        "info",
        "job_edits",
        "namespace",
        "resolved",
        "runs_again_as",
        "selected_by",
        "skip",
        "skip_detail",
        "source",
        "value",
    )

    def __init__(
        self,
        source: SourceText,
        info: WorkloadInfo,
        namespace: str,
        resolved: list[Resolved] | None = None,
        value: str | None = None,
        skip: SkipReason | None = None,
        skip_detail: str | None = None,
        selected_by: str | None = None,
        edit: Edit | None = None,
    ) -> None:
        self.source = source
        self.info = info
        self.namespace = namespace
        self.resolved: list[Resolved] = [] if resolved is None else resolved
        self.value = value  # the checksum it should carry (None: no in-stream config)
        self.skip = skip
        self.skip_detail = skip_detail  # which annotation or rule
        self.selected_by = selected_by  # the include rule or opt-in annotation that selected it
        self.edit = edit  # with the real value
        self.job_edits: list[Edit] = []  # --jobs=rename: the new name and base-name mark
        self.runs_again_as: str | None = None  # --jobs=rename: the Job's new name

    @property
    def skip_text(self) -> str | None:
        if self.skip is None:
            return None
        return f"{self.skip} ({self.skip_detail})" if self.skip_detail else str(self.skip)

    @property
    def label(self) -> str:
        return self.info.label

    @property
    def id(self) -> ResourceId:
        """Its identity, namespace defaulted (how report matches OLD and NEW)."""
        k = self.info.kind
        return ResourceId(k.group, k.kind, self.namespace, self.info.name)

    @property
    def in_stream(self) -> bool:
        """Whether an in-stream object enters its checksum (one that is ``counted``)."""
        return any(r.counted for r in self.resolved)

    def target(self, ref: Reference) -> ResourceId:
        """The object ``ref`` names: its namespace, or the workload's."""
        return make_id(("", ref.target_kind, ref.namespace or self.namespace, ref.name))


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
    return finding(
        plan.source,
        ref.offset,
        Code.MISSING_REFERENCE,
        f"{plan.label} declares a dependency on {what} (add it, or ignore this "
        "if it lives elsewhere)",
        level=level,
        about=plan.info.about,
        field=ref.field,
    )


def _missing(
    plan: WorkloadPlan, ref: Reference, index: ConfigIndex, options: PlanOptions
) -> Finding:
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
        return finding(
            plan.source,
            ref.offset,
            Code.NAMESPACE_MISMATCH,
            f"{plan.label} ({here}) references {ref.target_kind} {ref.name!r}, which "
            f"the input only has with namespace {where}; references never cross "
            f"namespaces: {hint}",
            level=level,
            about=plan.info.about,
            field=ref.field,
        )
    return finding(
        plan.source,
        ref.offset,
        Code.MISSING_REFERENCE,
        f"{plan.label} references {ref.target_kind} {ref.name!r}, which is not in "
        "the input (add it, mark the reference optional, or ignore this if it "
        "lives elsewhere)",
        level=level,
        about=plan.info.about,
        field=ref.field,
    )


_NO_KEYS: frozenset[str] = frozenset()


def _keyset(ref: Reference) -> frozenset[str] | None:
    return None if ref.keys is None else frozenset(ref.keys)


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


def _resolve(
    plan: WorkloadPlan,
    index: ConfigIndex,
    options: PlanOptions,
    findings: list[Finding],
    renames: Mapping[ResourceId, str],
) -> list[Use]:
    sel = plan.info.selection
    if (
        _C_RESOLVE is not None
        and not renames
        and not options.exclude_secrets
        and sel.sources is None
        and not sel.reloader
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
            if use is not None and renames:  # a versioned object: hashed by its new name
                new = renames.get(key)
                use = use._replace(name=new) if new is not None else use
            if use is not None:
                uses.append(use)
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
    if entry is None:
        plan.resolved.append(Resolved(ref, None))
        if not ref.optional:
            findings.append(_missing(plan, ref, index, options))
        return Use(ref.target_kind, ref.name, None, _keyset(ref), other_ns)
    content = entry.info.content
    if content.source is not None:  # what a source produces has no keys to check
        plan.resolved.append(Resolved(ref, entry))
        return Use(ref.target_kind, ref.name, content, None, other_ns)
    keys = None if ref.keys is None else frozenset(ref.keys)
    missing = keys.difference(content.entries) if keys else _NO_KEYS  # (a dict: no copy)
    plan.resolved.append(_resolved((ref, entry, missing, None)))
    if missing and not ref.optional:
        findings.append(
            finding(
                plan.source,
                ref.offset,
                Code.MISSING_KEY,
                f"{plan.label} uses key {', '.join(sorted(missing))} of {ref.target_kind} "
                f"{ref.name!r}, which does not have it (the pod would not start)",
                about=plan.info.about,
                field=ref.field,
            )
        )
    return _use((ref.target_kind, ref.name, content, keys, other_ns))


# Resolved((...)) and Use((...)) with every field, without a Python frame (the common
# path)
_resolved = functools.partial(tuple.__new__, Resolved)
_use = functools.partial(tuple.__new__, Use)

# _resolve for plain references in C (native/_ctree.c), when it was compiled: (resolved,
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

_HEX64 = re.compile(r"[0-9a-f]{64}")


def _is_string(info: WorkloadInfo) -> bool:
    """Whether the existing value reaches the API server as this string: any quoted or
    block scalar, and a plain one that go-yaml does not read as a number, boolean or
    null. kustomize and yq re-serialise our double-quoted value as a plain scalar
    (kyaml writes a string plain unless it would resolve to another type)."""
    if info.current is None:
        return False
    return info.current_style is not None or not resolves_to_non_string(info.current)


def _written_by_cmhash(src: SourceText, info: WorkloadInfo) -> bool:
    """Whether an existing value under our key looks like cmhash's own (a 64-hex digest
    in any scalar style, not in Helm output): a chart's ``sha256sum`` line is rendered
    fresh on every ``helm template``, so in Helm output any existing value is the
    chart's."""
    if not _HEX64.fullmatch(info.current or "") or not _is_string(info):
        return False
    from cmhash.plan.helm import is_helm_source

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
        findings.extend(_subpath_finding(plan, mount, index) for mount in info.subpaths)
    return plan


def _subpath_finding(plan: WorkloadPlan, mount: SubPathMount, index: ConfigIndex) -> Finding:
    objs = ", ".join(f"{k} {n!r}" for k, n in mount.targets)
    where = f" at {mount.mount_path}" if mount.mount_path else ""
    who = f" (container {mount.container})" if mount.container else ""
    seen = [index.get(ResourceId.config(k, plan.namespace, n)) for k, n in mount.targets]
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
    return finding(
        plan.source,
        mount.offset,
        Code.SUBPATH_MOUNT,
        f"{plan.label} mounts {objs}{where}{who} with subPath: such a file is never "
        f"updated in place, only a new pod sees changes; {then}",
        about=plan.info.about,
        field=mount.field,
    )


def _plan(
    src: SourceText,
    info: WorkloadInfo,
    index: ConfigIndex,
    options: PlanOptions,
    findings: list[Finding],
    renames: Mapping[ResourceId, str],
) -> WorkloadPlan:
    plan = WorkloadPlan(
        src,
        info,
        info.namespace or options.namespace or "",
        skip=info.skip,
        skip_detail=info.skip_detail,
    )
    if plan.skip is None and (
        options.ignore_workloads or options.include_workloads or options.opt_in
    ):
        plan.skip, plan.skip_detail, plan.selected_by = _selected(plan, options)
    findings.extend(
        finding(
            src,
            item.offset,
            Code.REFERENCE_SHAPE if item.shape else Code.SKIPPED_ITEM,
            f"{info.label}: {item.message}",
            level=Level.ERROR if item.shape and options.strict else None,
            about=info.about,
        )
        for item in info.skipped_items
    )
    if plan.skip is not None:
        about = SKIP_FINDINGS.get(plan.skip)
        if about is not None:
            findings.append(
                finding(
                    src,
                    info.offset,
                    about[0],
                    f"{info.label} "
                    + about[1].format(detail=plan.skip_detail or "another workload"),
                    about=info.about,
                )
            )
        _resolve(plan, index, options, [], renames)  # opted out: no findings, but explain and
        return plan  # report show what it uses
    uses = _resolve(plan, index, options, findings, renames)
    if plan.in_stream:
        plan.value = digest(uses, options.secret_key)
    gate = OPT_IN.get(info.kind.policy)
    # a generateName object that opted in is created anew each time: no gate applies
    if gate is not None and not info.generated and not gate.enabled(options):
        plan.skip = gate.skip
        if plan.in_stream:
            findings.append(
                finding(
                    src,
                    info.offset,
                    gate.code,
                    f"{info.label} {(info.hook and gate.hook_message) or gate.message}",
                    about=info.about,
                )
            )
        return plan
    if plan.value is None:
        if info.current is not None:
            findings.append(
                finding(
                    src,
                    info.offset,
                    Code.STALE_ANNOTATION,
                    f"{info.label} carries {options.annotation_key} but uses no in-stream "
                    "ConfigMap/Secret; left untouched",
                    about=info.about,
                )
            )
        return plan
    _finish(plan, plan.value, options, findings)
    if options.jobs_rename and info.kind.policy is Policy.JOB:
        _rename_job(plan, plan.value, findings)
    return plan


def _rename_job(plan: WorkloadPlan, value: str, findings: list[Finding]) -> None:
    """--jobs=rename: the Job's name from its template and checksum (analyze/jobs.py);
    hook and generateName Jobs are made anew by their tool anyway: left as they are."""
    info = plan.info
    if info.job is None:
        if info.hook or info.generated:
            what = "a Helm or Argo CD hook" if info.hook else "named by generateName"
            findings.append(
                finding(
                    plan.source,
                    info.offset,
                    Code.JOB_NOT_RENAMED,
                    f"{info.label} is {what}: not renamed (its tool makes a new Job each "
                    "time), only annotated",
                    about=info.about,
                )
            )
        return
    new = new_name(info.job, value)
    plan.job_edits = rename_edits(info.job, new) if new != info.name else list(info.job.marker)
    plan.runs_again_as = new


def _selected(
    plan: WorkloadPlan, options: PlanOptions
) -> tuple[SkipReason | None, str | None, str | None]:
    """The configuration's workload rules and opt-in mode: (why it is left alone, which
    rule; or what selected it)."""
    info = plan.info
    labels = dict(info.labels)
    ident = (info.kind.kind, plan.namespace, info.name, labels)
    rule = first_match(options.ignore_workloads, *ident)
    if rule is not None:
        return SkipReason.IGNORED, rule.where, None
    selected = []
    if options.include_workloads:
        rule = first_match(options.include_workloads, *ident)
        if rule is None:
            return SkipReason.NOT_INCLUDED, None, None
        selected.append(rule.where)
    if options.opt_in:
        if info.selection.opted_in is None:
            return SkipReason.NOT_OPTED_IN, None, None
        selected.append(info.selection.opted_in)
    return None, None, ", ".join(selected) or None


def _finish(plan: WorkloadPlan, value: str, options: PlanOptions, findings: list[Finding]) -> None:
    """A workload that gets the annotation: its last findings and its final edit."""
    info, src = plan.info, plan.source
    if info.no_restart:
        findings.append(
            finding(
                src,
                info.offset,
                Code.NO_RESTART,
                f"{info.label}: {info.no_restart}",
                about=info.about,
            )
        )
    if info.current == value and _is_string(info):
        return  # ours and current, in whatever style another tool left it
    if info.current is not None and not _written_by_cmhash(src, info):
        findings.append(
            finding(
                src,
                info.offset,
                Code.REPLACED_ANNOTATION,
                f"{info.label}: replaced a {options.annotation_key} value cmhash did not write "
                "(the chart's own checksum?); whatever it covered beyond the ConfigMaps/Secrets "
                "the pod spec references is no longer covered: declare those "
                "(cmhash.io/extra-configmaps, cmhash.io/extra-secrets), or give cmhash "
                "another key (--annotation-key) to keep both",
                about=info.about,
            )
        )
    if info.edit_error is not None:
        raise src.error(info.edit_error.message, info.edit_error.offset)
    assert info.edit is not None
    plan.edit = with_value(info.edit, value)

"""The pipeline, and the only place that knows its order:

    inputs (inputs.py) -> split (split.py) -> map: analyze each chunk (analyze.py, in
    worker processes for big inputs: pool.py) -> reduce: index and plan (resolve.py) ->
    splice the final edits, checked (emit.py, verify.py) -> RunResult

Nothing here prints or exits: cli.py and deliver.py turn a RunResult into output and an
exit code.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, NamedTuple

from cmhash.analyze.chunk import analyze_source
from cmhash.analyze.refs import Reference
from cmhash.analyze.summaries import DocInfo, WorkloadInfo
from cmhash.edit import cverify  # light: rapidyaml itself is imported only when used
from cmhash.errors import CmhashError, InputError
from cmhash.findings import Finding, acknowledged
from cmhash.knowledge.kinds import DEFAULT_TABLE, KindTable
from cmhash.model import Level, ResourceId
from cmhash.parse.events import backend, ctree_available
from cmhash.plan import scopes
from cmhash.plan.helm import Namespaces, is_helm_source, release_namespaces
from cmhash.plan.index import (
    ConfigEntry,
    ConfigIndex,
    Place,
    build_index,
    defined_in,
    several_places,
)
from cmhash.plan.resolve import WorkloadPlan, counts, plan_workload
from cmhash.read.source import SourceText
from cmhash.runtime import lifetime
from cmhash.runtime.progress import Progress
from cmhash.settings.values import Settings
from cmhash.write.emit import Change, FileResult, render_files

if TYPE_CHECKING:
    from cmhash.plan.versioning.decision import Versioning


class SecretSpans(Mapping[int, list[tuple[int, int]]]):
    """id(source) -> the (start, end) of its Secrets: worked out when first asked (a diff
    keeps their lines out of its context, versioning's mention scan skips them), so a
    run that needs none of it (a plain inject of 50,000 apps) does not pay for it."""

    def __init__(self, sources: list[SourceText], docs: list[list[DocInfo]]) -> None:
        self._sources = sources
        self._docs = docs
        self._spans: dict[int, list[tuple[int, int]]] | None = None

    def _all(self) -> dict[int, list[tuple[int, int]]]:
        if self._spans is None:
            self._spans = {
                id(src): [
                    *(
                        (c.offset, c.end)
                        for d in per
                        for c in d.configs
                        if c.kind == "Secret" and c.source is None
                    ),
                    *(span for d in per for span in d.unnamed_secrets),
                ]
                for src, per in zip(self._sources, self._docs, strict=True)
            }
        return self._spans

    def __getitem__(self, key: int) -> list[tuple[int, int]]:
        return self._all()[key]

    def __iter__(self) -> Iterator[int]:
        return iter(self._all())

    def __len__(self) -> int:
        return len(self._all())


class RunResult(NamedTuple):
    files: list[FileResult]
    changes: list[Change]
    findings: list[Finding]
    plans: list[WorkloadPlan]
    config_index: ConfigIndex | None
    secret_spans: Mapping[int, list[tuple[int, int]]]  # id(source) -> Secrets' (start, end)
    notes: list[str]  # what the run decided for the user (an inferred namespace)
    versioning: Versioning | None = None  # versioned names, when any apply
    empty: bool = False  # no document held an object (allowed with ``allow_empty``)
    kept: int = 0  # earlier versions carried from --previous (plan/history.py)

    @property
    def has_errors(self) -> bool:
        return any(f.level is Level.ERROR for f in self.findings)


def kind_table(settings: Settings) -> KindTable:
    if settings.extra_kinds or settings.extra_sources:
        return DEFAULT_TABLE.with_extra(settings.extra_kinds, settings.extra_sources)
    return DEFAULT_TABLE


def analyze(
    sources: list[SourceText], table: KindTable, settings: Settings, notes: list[str]
) -> tuple[list[list[DocInfo]], bool]:
    """The map stage: DocInfos per source, in document order, of the documents that hold
    ConfigMaps, Secrets or workloads; and whether any document had content at all. The
    first input error in input order wins. ``notes``: a worker that could not start."""
    from cmhash.analyze import pool

    per_source: list[list[DocInfo]] = [[] for _ in sources]
    content = False
    total = sum(len(s.text) for s in sources)
    # rapidyaml's self-check only where the C tree builder is missing (treecheck.py
    # does the same check faster on the trees it builds)
    cpp = backend(settings.parser).ctree is None and cverify.wanted(total)
    settings = settings._replace(cpp_verify=cpp)
    n = pool.worker_count(settings, total)
    if n <= 1 or not pool.can_fork():
        progress = Progress(total, None, 1, settings.progress)
        try:
            for si, src in enumerate(sources):  # chunked one source at a time
                infos = analyze_source(src, table, settings, progress=progress.advance)
                content = content or any(d.has_content for d in infos)
                per_source[si] = [d for d in infos if d.kept]
                del infos
        finally:
            progress.close()
        return per_source, content
    cut_lists = pool.all_cuts(sources)
    progress = Progress(total, sum(len(c) - 1 for c in cut_lists), n, settings.progress)
    try:
        results = list(
            pool.analyze_parallel(sources, table, settings, cut_lists, n, progress.advance, notes)
        )
    finally:
        progress.close()
    for res in results:
        if isinstance(res, CmhashError):
            raise res
        kept, had_content = res
        content = content or had_content
        for si, info in kept:
            per_source[si].append(info)
    return per_source, content


def run(
    sources: list[SourceText],
    settings: Settings,
    *,
    keep_plans: bool = False,
    allow_empty: bool = False,
    output: bool = True,
) -> RunResult:
    """``allow_empty``: an input without objects is a valid, empty result (one side of
    ``cmhash report`` may be a render of nothing yet) instead of an error. Without
    ``output`` (explain, report: they show plans), the final edits are checked but not
    spliced: ``files`` and ``changes`` stay empty."""
    gc_was_enabled = gc.isenabled()
    gc.disable()  # millions of short-lived acyclic nodes: the cyclic GC only costs time
    try:
        result = _run(sources, settings, keep_plans, allow_empty, output)
        lifetime.keep(result)
        return result
    finally:
        if settings.parser == "exact":
            gc.collect()  # ruamel's parser objects are cyclic: free them before the views
        if gc_was_enabled:
            gc.enable()


def _run(
    sources: list[SourceText],
    settings: Settings,
    keep_plans: bool,
    allow_empty: bool,
    output: bool = True,
) -> RunResult:
    notes: list[str] = []
    docs, content = analyze(sources, kind_table(settings), settings, notes)
    if not content and not allow_empty:
        path = sources[0].display if len(sources) == 1 else None
        raise InputError(
            "no Kubernetes objects in the input (it is empty or only comments)",
            path=path,
            line=None if path is None else 1,
            column=None if path is None else 1,
        )
    big = sum(len(s.text) for s in sources) >= cverify.MIN_INPUT
    if settings.verbose and big and settings.parser == "fast" and not ctree_available():
        notes.append(
            "cmhash's C tree builder was not compiled at install (it needs a C compiler "
            "and libyaml's headers, e.g. Debian's libyaml-dev), or CMHASH_CTREE=0: "
            "parsing goes through PyYAML, which is slower on big inputs"
        )
    no_ctree = backend(settings.parser).ctree is None
    if settings.verbose and big and no_ctree and cverify.rapidyaml() is None:
        notes.append(
            "rapidyaml is not installed (or CMHASH_RAPIDYAML=0) and there is no C tree "
            "builder: the self-check runs in Python, which is slower on big inputs "
            "(pip install 'cmhash[fast]')"
        )
    findings: list[Finding] = []
    releases = _release_namespaces(sources, docs, settings, findings, notes)
    place = Place(
        releases.render_of if releases is not None and releases.several else None,
        is_helm_source,  # a committed render never affects the other files (plan/helm.py)
    )
    index = build_index(
        [(s, c) for s, per in zip(sources, docs, strict=True) for d in per for c in d.configs],
        settings,
        findings,
        releases.of if releases else None,
        place,
    )
    index.prepare_patterns(
        (ref.target_kind, ref.namespace or w.namespace or settings.namespace or "", ref.name)
        for per in docs
        for d in per
        for w in d.workloads
        for ref in w.refs
        if ref.pattern
    )  # every Reloader pattern matched in one pass per kind and namespace
    scoping = scopes.scoping(index, settings.scopes, place)
    secret_spans = SecretSpans(sources, docs)
    planner = _Planner(scoping, releases, settings)
    versioning = _versioning(sources, docs, index, planner, settings, findings, secret_spans, notes)
    renames = versioning.names if versioning is not None else None
    plans: list[WorkloadPlan] = []
    for src, per in zip(sources, docs, strict=True):
        for d in per:
            for w in d.workloads:
                plan = planner.plan(src, w, findings, renames)
                if not keep_plans:
                    plan.resolved.clear()  # only explain/report read them; a big run has many
                plans.append(plan)
    changes, files = render_files(sources, docs, plans, settings, versioning, splice=output)
    annotated = {
        p.info.about.resource: p.info.selection.acknowledged
        for p in plans
        if p.info.selection.acknowledged
    }
    findings = acknowledged(findings, settings.acknowledge, annotated)
    findings.sort(key=Finding.sort_key)
    lifetime.keep(docs)
    return RunResult(
        files,
        changes,
        findings,
        plans if keep_plans else [],
        index,
        secret_spans,
        notes,
        versioning,
        not content,
    )


def _versioning(
    sources: list[SourceText],
    docs: list[list[DocInfo]],
    index: ConfigIndex,
    planner: _Planner,
    settings: Settings,
    findings: list[Finding],
    secret_spans: Mapping[int, list[tuple[int, int]]],
    notes: list[str],
) -> Versioning | None:
    """Versioned names (plan/versioning/), decided from a first pass over the
    workloads: which object each one uses, and whether cmhash may edit it."""
    if not (settings.versioned or any(e.info.versioned for e in index.objects.values())):
        if settings.versioned_keep or settings.versioned_immutable:
            notes.append(
                "--versioned-keep and --versioned-immutable mark versioned objects only, and "
                'nothing is versioned (--versioned, or cmhash.io/versioned: "true")'
            )
        return None  # (plan/versioning/ is imported only when it can apply)
    from cmhash.plan import byname, mentions
    from cmhash.plan.versioning import decision, edits

    first = [
        planner.plan(src, w, [])
        for src, per in zip(sources, docs, strict=True)
        for d in per
        for w in d.workloads
    ]
    by_name = byname.read_by_name(sources, index.objects, first, settings.namespace or "")
    decided = decision.decide(index, first, settings, findings, by_name)
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
    told = {(f.path, f.line, f.column) for f in findings}  # a field of namesites.py's table
    found = mentions.scan(decided, sources, secret_spans, first)
    findings.extend(f for f in found if (f.path, f.line, f.column) not in told)
    return decided


class _Planner:
    """plan_workload with what a workload sees: the objects of its scope (scopes.py) and
    its render's release namespace (helm.py)."""

    def __init__(self, scoping: scopes.Scoping, releases: Namespaces | None, settings: Settings):
        self.scoping = scoping
        self.releases = releases
        self.settings = settings
        self._by_namespace: dict[str, Settings] = {}
        self.simple = not releases and not scoping.contested

    def plan(
        self,
        src: SourceText,
        w: WorkloadInfo,
        findings: list[Finding],
        renames: Mapping[ResourceId, str] | None = None,
    ) -> WorkloadPlan:
        settings = self.settings
        if self.simple:  # the common case: one index, one namespace rule
            return plan_workload(src, w, self.scoping.index, settings, findings, renames)
        if self.releases:
            ns = self.releases.of(src, w.offset)
            if ns is not None:
                got = self._by_namespace.get(ns)
                if got is None:
                    got = self._by_namespace[ns] = settings._replace(namespace=ns)
                settings = got
        if not self.scoping.contested:
            return plan_workload(src, w, self.scoping.index, settings, findings, renames)
        # the tie check after the selection: a workload cmhash leaves alone (opted out,
        # ignored, not included, a Job or Pod not opted in) never fails the run
        own: list[Finding] = []
        index = self.scoping.index_for(src, w.offset)
        plan = plan_workload(src, w, index, settings, own, renames)
        if plan.skip is None:
            ns = w.namespace or settings.namespace or ""
            self.scoping.check(src, w.refs, ns, w.label, _hashed(plan, settings), w.offset)
        findings.extend(own)
        return plan


def _hashed(plan: WorkloadPlan, settings: Settings) -> scopes.Counts:
    """Whether a reference of ``plan`` would put a definition into its checksum."""

    def hashed(ref: Reference, entry: ConfigEntry) -> bool:
        return counts(plan, ref, entry, settings)

    return hashed


def _release_namespaces(
    sources: list[SourceText],
    docs: list[list[DocInfo]],
    settings: Settings,
    findings: list[Finding],
    notes: list[str],
) -> Namespaces | None:
    """Helm output with objects that name no namespace: each render's release namespace,
    when it can be known (helm.py); ``-n`` / ``namespace:`` always win."""
    if settings.namespace is not None:
        return None
    if not any(is_helm_source(s) for s in sources):
        return None
    releases = release_namespaces(sources, docs, findings)
    notes.extend(releases.notes)
    return releases

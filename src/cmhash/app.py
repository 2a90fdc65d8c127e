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

from cmhash import lifetime
from cmhash.analyze.chunk import analyze_source
from cmhash.analyze.kinds import DEFAULT_TABLE, KindTable
from cmhash.analyze.summaries import ConfigInfo, DocInfo, WorkloadInfo
from cmhash.errors import CmhashError, InputError
from cmhash.findings import Finding, acknowledged
from cmhash.model import Level
from cmhash.parse.events import backend, ctree_available
from cmhash.plan.index import ConfigIndex, build_index
from cmhash.plan.resolve import WorkloadPlan, plan_workload
from cmhash.progress import Progress
from cmhash.read.source import SourceText
from cmhash.settings import Settings
from cmhash.write import cverify  # light: rapidyaml itself is imported only when used
from cmhash.write.emit import Change, FileResult, render_files

if TYPE_CHECKING:
    from cmhash.plan.versioning import Versioning


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

    def secret_lines(self, source: SourceText) -> set[int]:
        """1-based lines of ``source`` inside Secrets (kept out of diff context)."""
        lines: set[int] = set()
        for start, end in self.secret_spans.get(id(source), ()):
            lines.update(range(source.position(start)[0], source.position(end)[0] + 1))
        return lines

    @property
    def has_errors(self) -> bool:
        return any(f.level is Level.ERROR for f in self.findings)


def kind_table(settings: Settings) -> KindTable:
    if settings.extra_kinds or settings.extra_sources:
        return DEFAULT_TABLE.with_extra(settings.extra_kinds, settings.extra_sources)
    return DEFAULT_TABLE


def analyze(
    sources: list[SourceText], table: KindTable, settings: Settings
) -> tuple[list[list[DocInfo]], bool]:
    """The map stage: DocInfos per source, in document order, of the documents that hold
    ConfigMaps, Secrets or workloads; and whether any document had content at all. The
    first input error in input order wins."""
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
            pool.analyze_parallel(sources, table, settings, cut_lists, n, progress.advance)
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
    docs, content = analyze(sources, kind_table(settings), settings)
    if not content and not allow_empty:
        path = sources[0].display if len(sources) == 1 else None
        raise InputError(
            "no Kubernetes objects in the input (it is empty or only comments)",
            path=path,
            line=None if path is None else 1,
            column=None if path is None else 1,
        )
    notes: list[str] = []
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
    settings = _with_helm_namespace(sources, docs, settings, notes)
    findings: list[Finding] = []
    index = build_index(
        [(s, c) for s, per in zip(sources, docs, strict=True) for d in per for c in d.configs],
        settings,
        findings,
    )
    secret_spans = SecretSpans(sources, docs)
    versioning = _versioning(sources, docs, index, settings, findings, secret_spans, notes)
    renames = versioning.names if versioning is not None else None
    plans: list[WorkloadPlan] = []
    for src, per in zip(sources, docs, strict=True):
        for d in per:
            for w in d.workloads:
                plan = plan_workload(src, w, index, settings, findings, renames)
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
    settings: Settings,
    findings: list[Finding],
    secret_spans: Mapping[int, list[tuple[int, int]]],
    notes: list[str],
) -> Versioning | None:
    """Versioned names (plan/versioning.py), decided from a first pass over the
    workloads: which object each one uses, and whether cmhash may edit it."""
    if not (settings.versioned or any(e.info.versioned for e in index.objects.values())):
        if settings.versioned_keep or settings.versioned_immutable:
            notes.append(
                "--versioned-keep and --versioned-immutable mark versioned objects only, and "
                'nothing is versioned (--versioned, or cmhash.io/versioned: "true")'
            )
        return None  # (plan/versioning.py is imported only when it can apply)
    from cmhash.plan import mentions, versioning

    first = [
        plan_workload(src, w, index, settings, [])
        for src, per in zip(sources, docs, strict=True)
        for d in per
        for w in d.workloads
    ]
    decided = versioning.decide(index, first, settings, findings)
    versioning.edits(decided, first)
    findings.extend(mentions.scan(decided, sources, secret_spans))
    return decided


def _all_namespaced(docs: list[list[DocInfo]]) -> bool:
    """Whether every config and workload names its namespace (the common case: plain
    loops, no list of all objects)."""
    for per in docs:
        for d in per:
            for c in d.configs:
                if c.namespace is None:
                    return False
            for w in d.workloads:
                if w.namespace is None:
                    return False
    return True


def _with_helm_namespace(
    sources: list[SourceText], docs: list[list[DocInfo]], settings: Settings, notes: list[str]
) -> Settings:
    """Helm output with objects that name no namespace: the release namespace, when it
    can be known (helm.py); ``-n`` / ``namespace:`` always win."""
    if settings.namespace is not None:
        return settings
    if _all_namespaced(docs):
        return settings
    from cmhash.plan.helm import infer, is_helm_source

    if not any(is_helm_source(s) for s in sources):
        return settings
    objects: list[ConfigInfo | WorkloadInfo] = []
    for per in docs:
        for d in per:
            objects += d.configs
            objects += d.workloads
    parsed = {o.namespace for o in objects if o.namespace}
    inferred = infer([s.text for s in sources], parsed=parsed)
    if inferred is None:
        return settings
    notes.append(inferred.note)
    return settings._replace(namespace=inferred.namespace)

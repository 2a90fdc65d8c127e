"""The pipeline, and the only place that knows its order:

    sources (read/) -> map: each chunk to a summary (analyze/stage.py, in worker
    processes for big inputs) -> reduce: the index, versioned names, a plan per workload
    (plan/) -> the final edits spliced and checked (write/emit.py) -> RunResult

Each stage gets its own options (settings/stages.py builds them from the Settings).
Nothing here prints or exits: cli/ and deliver.py turn a RunResult into output and an
exit code.
"""

from __future__ import annotations

import gc

from cmhash.analyze.options import AnalyzeOptions
from cmhash.analyze.stage import analyze
from cmhash.analyze.summaries import DocInfo
from cmhash.app.result import RunResult, SecretSpans
from cmhash.errors import InputError
from cmhash.findings import Finding, acknowledged
from cmhash.knowledge.kinds import DEFAULT_TABLE, KindTable
from cmhash.model import ResourceId
from cmhash.parse.events import backend, ctree_available
from cmhash.plan import scopes
from cmhash.plan.helm import Namespaces, is_helm_source, release_namespaces
from cmhash.plan.index import ConfigIndex, Place, build_index
from cmhash.plan.workload import Planner
from cmhash.plan.workplan import WorkloadPlan
from cmhash.read.source import SourceText
from cmhash.runtime import lifetime
from cmhash.settings.stages import stages
from cmhash.settings.values import Settings
from cmhash.write.emit import render_files


def kind_table(settings: Settings) -> KindTable:
    """The workload kinds a run reads: the built-in table, with the config file's rows."""
    if settings.extra_kinds or settings.extra_sources:
        return DEFAULT_TABLE.with_extra(settings.extra_kinds, settings.extra_sources)
    return DEFAULT_TABLE


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
    output: bool,
) -> RunResult:
    options = stages(settings)
    notes: list[str] = []
    docs, content = analyze(
        sources,
        kind_table(settings),
        options.analyze,
        workers=settings.workers,
        progress=settings.progress,
        notes=notes if settings.verbose else None,
    )
    if not content and not allow_empty:
        path = sources[0].display if len(sources) == 1 else None
        raise InputError(
            "no Kubernetes objects in the input (it is empty or only comments)",
            path=path,
            line=None if path is None else 1,
            column=None if path is None else 1,
        )
    if settings.verbose:
        notes.extend(_slow_paths(sources, settings.parser))
    findings: list[Finding] = []
    releases = _release_namespaces(sources, docs, settings, findings, notes)
    place = Place(
        releases.render_of if releases is not None and releases.several else None,
        is_helm_source,  # a committed render never affects the other files (plan/helm.py)
    )
    index = build_index(
        [(s, c) for s, per in zip(sources, docs, strict=True) for d in per for c in d.configs],
        options.plan,
        findings,
        releases.of if releases else None,
        place,
    )
    if index.restarted:  # workloads an operator restarts: each needs a candidate edit
        _edits_for_restarted(sources, docs, index, settings, options.analyze)
    index.prepare_patterns(
        (ref.target_kind, ref.namespace or w.namespace or settings.namespace or "", ref.name)
        for per in docs
        for d in per
        for w in d.workloads
        for ref in w.refs
        if ref.pattern
    )  # every Reloader pattern matched in one pass per kind and namespace
    scoping = scopes.Scoping(index, scopes.Scopes(settings.scopes), place)
    secret_spans = SecretSpans(sources, docs)
    planner = Planner(scoping, releases, options.plan)
    versioning = None
    if options.plan.versioned or any(e.info.versioned for e in index.objects.values()):
        from cmhash.plan import versioning as stage  # (imported only when it can apply)

        versioning = stage.versioning(
            sources, docs, index, planner, options.plan, findings, secret_spans
        )
    elif settings.versioned_keep or settings.versioned_immutable:
        notes.append(
            "--versioned-keep and --versioned-immutable mark versioned objects only, and "
            'nothing is versioned (--versioned, or cmhash.io/versioned: "true")'
        )
    renames = versioning.names if versioning is not None else None
    plans: list[WorkloadPlan] = []
    lock = options.plan.lock
    referenced: set[ResourceId] = set()  # (for the lock's notes)
    for src, per in zip(sources, docs, strict=True):
        for d in per:
            for w in d.workloads:
                plan = planner.plan(src, w, findings, renames)
                if lock is not None:
                    referenced.update(plan.target(r.ref) for r in plan.resolved)
                if not keep_plans:
                    plan.resolved.clear()  # only explain/report read them; a big run has many
                plans.append(plan)
    if lock is not None:
        from cmhash.plan.lock import lock_notes

        notes.extend(lock_notes(lock, plans, index, referenced))
    changes, files = render_files(sources, docs, plans, options.write, versioning, splice=output)
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


def _edits_for_restarted(
    sources: list[SourceText],
    docs: list[list[DocInfo]],
    index: ConfigIndex,
    settings: Settings,
    options: AnalyzeOptions,
) -> None:
    """A workload an operator restarts (plan/workload.py operator_restarts) gets that
    object as a dependency, and so a checksum, even when its pod spec references
    nothing, for which the map stage planned no edit: its document is read again for
    one."""
    from cmhash.analyze.chunk import analyze_chunk
    from cmhash.read.source import newline_at

    table = kind_table(settings)
    for src, per in zip(sources, docs, strict=True):
        for d in per:
            wanted = {
                w.offset
                for w in d.workloads
                if w.edit is None
                and w.edit_error is None
                and w.skip is None
                and (w.kind.group, w.kind.kind, w.namespace or settings.namespace or "", w.name)
                in index.restarted
            }
            if not wanted:
                continue
            again = analyze_chunk(
                src,
                d.index,
                d.chunk,
                table,
                options._replace(edit_always=True),
                newline_at(src.text),
            )
            new = {w.offset: w for w in again.workloads}
            for w in d.workloads:
                if w.offset in wanted:
                    w.edit, w.edit_error = new[w.offset].edit, new[w.offset].edit_error
            d.verify_error = d.verify_error or again.verify_error


def _slow_paths(sources: list[SourceText], parser: str) -> list[str]:
    """Notes (-v) for a big input read without the C tree builder or rapidyaml, and for
    documents the C tree builder handed on when its libyaml is another release than
    PyYAML's."""
    from cmhash.edit import cverify  # (rapidyaml itself is imported only when used)

    notes = []
    big = sum(len(s.text) for s in sources) >= cverify.MIN_INPUT
    if big and parser == "fast" and not ctree_available():
        notes.append(
            "cmhash's C tree builder was not compiled at install (it needs a C compiler "
            "and libyaml's headers, e.g. Debian's libyaml-dev), or CMHASH_CTREE=0: "
            "parsing goes through PyYAML, which is slower on big inputs"
        )
    if parser == "fast" and backend(parser).ctree is not None and backend(parser).loaded:
        from cmhash.parse.backends import libyaml_releases

        releases = libyaml_releases()  # (the C builder handed something on: say how read)
        if releases is not None and releases[1] is not None and releases[0] != releases[1]:
            notes.append(
                f"cmhash's C tree builder reads with libyaml {releases[0]}, PyYAML with "
                f"{releases[1]}: what the C builder hands on (tags, anchors, errors) and "
                "the self-check it cannot tell are read by the reference parser instead, "
                "so that one libyaml release reads the run (matching releases are faster "
                "on such documents)"
            )
    if big and backend(parser).ctree is None and cverify.rapidyaml() is None:
        notes.append(
            "rapidyaml is not installed (or CMHASH_RAPIDYAML=0) and there is no C tree "
            "builder: the self-check runs in Python, which is slower on big inputs "
            "(pip install 'cmhash[fast]')"
        )
    return notes


def _release_namespaces(
    sources: list[SourceText],
    docs: list[list[DocInfo]],
    settings: Settings,
    findings: list[Finding],
    notes: list[str],
) -> Namespaces | None:
    """Helm output with objects that name no namespace: each render's release namespace,
    when it can be known (helm.py); ``-n`` / ``namespace:`` always win."""
    if settings.namespace is not None or not any(is_helm_source(s) for s in sources):
        return None
    releases = release_namespaces(sources, docs, findings)
    notes.extend(releases.notes)
    return releases

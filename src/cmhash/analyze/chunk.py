"""The map stage: one document chunk -> summaries (summaries.py) of its ConfigMaps,
Secrets and workloads.

Everything here depends on one document only, so it runs per chunk (and, for big
inputs, in worker processes) and the parsed tree is dropped as soon as the summary
exists. A workload gets a *candidate* edit (edit.py: value ``PLACEHOLDER``), and the
edited document is verified right here (verify.py).
"""

from __future__ import annotations

import functools
from collections.abc import Callable

from cmhash.analyze.annotations import Annotations, read_annotations
from cmhash.analyze.choice import selection
from cmhash.analyze.content import config_content, is_immutable
from cmhash.analyze.declared import config_excluded, declared_references, reloader_match
from cmhash.analyze.hashing import Content
from cmhash.analyze.jobs import plan_rename
from cmhash.analyze.options import AnalyzeOptions
from cmhash.analyze.refs import (
    Reference,
    aliased_spot,
    find_references,
    find_subpath_mounts,
    resource_references,
)
from cmhash.analyze.shapes import misshapen
from cmhash.analyze.sources import (
    produced_names,
    source_content,
    source_dependencies,
    unpinned,
)
from cmhash.analyze.summaries import ConfigInfo, DocInfo, Labels, SkipReason, WorkloadInfo
from cmhash.analyze.versioned import (
    name_spot,
    peer_keep_original,
    version_edits,
    version_window,
    versioned_flag,
)
from cmhash.analyze.versioned_sources import aliased_producer, keep_edits, unversioned
from cmhash.analyze.versioned_sources import producer as source_producer
from cmhash.edit import treecheck
from cmhash.edit.splice import PLACEHOLDER, Edit, annotation_edit, apply_edits, inside_aliased
from cmhash.edit.verify import verify_edits
from cmhash.errors import NodeError
from cmhash.knowledge.kinds import KindTable, Policy, WorkloadKind
from cmhash.knowledge.operators import INJECTED
from cmhash.knowledge.sources import SecretSource
from cmhash.parse.builder import Roots
from cmhash.parse.events import backend, parse_chunk, route
from cmhash.parse.resources import (
    SKIP_ANNOTATION,
    Resource,
    bool_field,
    document_resources,
    flag_on,
    pod_template,
    require_name,
)
from cmhash.parse.tree import MAP, Node, entries, get, get_path, items, scalar
from cmhash.read.classify import classify, may_hold_secret, refuse_ambiguous
from cmhash.read.source import SourceText, newline_at
from cmhash.read.split import Chunk, cuts
from cmhash.read.split import chunk as split_chunk

# ------------------------------------------------------------------ per resource

# hooks are deleted before they are created again (both tools' default policy); the
# phases that run before the release's other objects are applied
HOOK_ANNOTATIONS = ("helm.sh/hook", "argocd.argoproj.io/hook")
PRE_HOOKS = frozenset(("pre-install", "pre-upgrade", "pre-rollback", "pre-delete", "PreSync"))


def hook_phase(annotations: Node | None) -> str | None:
    """ "pre" for a hook that runs before the other objects exist, "post" for any other
    hook, None for an ordinary object (``annotations``: its metadata.annotations)."""
    if annotations is None:
        return None  # (most objects)
    written = [scalar(get(annotations, key)) or "" for key in HOOK_ANNOTATIONS]
    phases = [p.strip() for value in written for p in value.split(",") if p.strip()]
    if not phases:
        return None
    return "pre" if any(p in PRE_HOOKS for p in phases) else "post"


def _no_restart(res: Resource, wk: WorkloadKind) -> str | None:
    spec = get(res.node, "spec")
    if not wk.rolls and wk.policy is Policy.ANNOTATE:
        return f"a {res.kind} does not replace existing pods when its template changes"
    if scalar(get_path(spec, ("updateStrategy", "type"))) == "OnDelete":
        return "updateStrategy OnDelete: pods pick up the change only when deleted"
    if bool_field(spec, "paused", "spec."):
        return f"the {res.kind} is paused: nothing rolls until it is resumed"
    if wk.trigger_gated:
        triggers = get(spec, "triggers")
        if (
            triggers is not None
            and not triggers.is_null
            and not any(scalar(get(t, "type")) == "ConfigChange" for t in items(triggers))
        ):
            return (
                f"the {res.kind}'s spec.triggers have no ConfigChange trigger: a template "
                "change starts no new deployment"
            )
    return None


def _pod_spec(res: Resource, template: Node | None, wk: WorkloadKind) -> Node | None:
    """The pod spec (an operator's resource: its pod-spec-like block)."""
    if wk.spec_path is None:
        return get(template, "spec")
    return get_path(res.node, wk.spec_path)


def _references(
    res: Resource, template: Node | None, wk: WorkloadKind, options: AnalyzeOptions
) -> tuple[str, tuple[Reference, ...]]:
    """The pod spec's field path and its ConfigMap/Secret references (an operator's
    resource: and those of its other fields, operators.py)."""
    field = ".".join(wk.pod_spec_path)
    # versioning renames what imagePullSecrets name too, even when they are not hashed
    pull = options.image_pull_secrets or options.versioned
    refs = find_references(_pod_spec(res, template, wk), field, image_pull_secrets=pull)
    if wk.sites or wk.defaults:
        refs += resource_references(res.node, wk.sites, wk.defaults, res.name or "")
    return field, tuple(refs)


def _current(template: Node | None, wk: WorkloadKind, options: AnalyzeOptions) -> Node | None:
    return get(get_path(template, wk.level), options.annotation_key)


def _skipped(
    res: Resource,
    wk: WorkloadKind,
    options: AnalyzeOptions,
    info: WorkloadInfo,
    annotations: list[Annotations],
) -> None:
    """An opted-out or generateName workload: what it references and what it carries,
    for report and explain only. Never an error: opting out is also how users get past a
    template cmhash cannot edit."""
    template, _ = pod_template(res, wk)
    try:
        declared, _ = declared_references(annotations, options.compat)
        info.refs = _references(res, template, wk, options)[1] + tuple(declared)
    except NodeError:
        info.refs = ()
    # what stays in the output (report: a checksum that disappears rolls the pods)
    info.current = scalar(_current(template, wk, options))
    info.no_restart = _no_restart(res, wk)


def _annotations(res: Resource, wk: WorkloadKind, written: Node | None) -> list[Annotations]:
    """The workload's annotations (``written``: its metadata.annotations node) and its pod
    template's (one mapping for a bare Pod)."""
    out = [read_annotations(written, "metadata.annotations")]
    if wk.template_path:
        template, _ = pod_template(res, wk)
        out.append(read_annotations(get_path(template, wk.level), wk.annotation_field))
    return [a for a in out if a is not None]


def _template_ref(res: Resource, wk: WorkloadKind) -> str | None:
    """The workload whose template this one uses (``kind 'name'``), when it names one."""
    if not wk.template_ref:
        return None
    ref = get_path(res.node, wk.template_ref)
    if ref is None or ref.is_null:
        return None
    kind = scalar(get(ref, "kind")) or "workload"
    name = scalar(get(ref, "name"))
    return f"{kind} {name!r}" if name else kind


def _absent(node: Node | None) -> bool:
    return node is None or node.is_null


def labels_of(node: Node | None) -> Labels:
    out = []
    for key, (_, v) in entries(node).items() if node is not None and node.kind == MAP else ():
        value = scalar(v)
        if value is not None:
            out.append((key, value))
    return tuple(out)


def analyze_workload(
    res: Resource, wk: WorkloadKind, options: AnalyzeOptions, default_nl: str
) -> WorkloadInfo:
    generated = res.generate_name is not None
    name = res.generate_name if res.generate_name is not None else require_name(res)
    meta = get(res.node, "metadata")
    written = get(meta, "annotations")  # (read once here: hooks, opt-outs, selection)
    annotations = _annotations(res, wk, written)
    info = WorkloadInfo(
        wk,
        res.api_version,
        name,
        res.namespace,
        res.node.start,
        res.doc,
        generated=generated,
        hook=hook_phase(written),
        labels=labels_of(get(meta, "labels")),
        selection=selection(annotations, options.compat, options.opt_in),
    )
    skipped = flag_on(written, SKIP_ANNOTATION)  # (res.skipped, from what was read above)
    opted_out = SKIP_ANNOTATION if skipped else info.selection.opted_out
    if opted_out or (generated and not res.opted_in):
        info.skip = SkipReason.OPTED_OUT if opted_out else SkipReason.GENERATED
        info.skip_detail = opted_out
        _skipped(res, wk, options, info, annotations)
        return info
    referenced = _template_ref(res, wk)
    if referenced is not None:
        info.skip, info.skip_detail = SkipReason.WORKLOAD_REF, referenced
        return info
    injected = INJECTED.get((wk.group, wk.kind))
    if injected is not None and scalar(get_path(res.node, injected[0])) == injected[1]:
        info.skip = SkipReason.INJECTED  # (its references would roll nothing)
        return info
    template, template_key = pod_template(res, wk, owned=True)
    if template is None:
        info.skip = SkipReason.NO_TEMPLATE
        return info
    spec_field, info.refs = _references(res, template, wk, options)
    declared, dropped = declared_references(annotations, options.compat)
    info.refs += tuple(declared)
    if wk.sites:
        dropped = misshapen(res.node, wk.sites, wk.operator) + dropped
    info.skipped_items = tuple(dropped)
    cur = _current(template, wk, options)
    info.current = scalar(cur)
    info.current_style = cur.style if cur is not None else None
    info.no_restart = _no_restart(res, wk)
    if not info.refs:
        return info
    info.subpaths = tuple(find_subpath_mounts(_pod_spec(res, template, wk), spec_field))
    try:
        info.edit = annotation_edit(
            res.source.text,
            template,
            template_key,
            options.annotation_key,
            PLACEHOLDER,
            default_nl,
            wk.level,
        )
        if info.edit is None and cur is not None and cur.value == PLACEHOLDER:
            # the value written is the placeholder itself (64 zeros): the candidate
            # edit rewrites it as it is, so that the real value can replace it
            info.edit = Edit(cur.start, cur.end, f'"{PLACEHOLDER}"')
        if options.jobs_rename and wk.policy is Policy.JOB and not generated and not info.hook:
            info.job = plan_rename(
                res, template, options.annotation_key, default_nl, res.source.text
            )
    except NodeError as exc:
        info.edit_error = exc.with_traceback(None)  # kept: never the parse tree via frames
    return info


def _config(
    res: Resource, options: AnalyzeOptions, default_nl: str, secret: bool
) -> ConfigInfo | None:
    if res.name is None and res.generate_name is not None:
        # a name only the API server picks: nothing can reference it, but a Secret
        # stays a Secret: its data is checked like any Secret's, and its span goes to
        # DocInfo.unnamed_secrets (diffs and the mention scan keep out of it)
        if res.kind == "Secret":
            config_content(res._replace(name=res.generate_name))
        return None
    content = config_content(res)
    meta = get(res.node, "metadata")
    annotations = read_annotations(get(meta, "annotations"), "metadata.annotations")
    versioned = versioned_flag(annotations)
    edits: tuple[Edit, ...] = ()
    error = None
    if options.versioned or versioned:
        try:
            edits = version_edits(res, annotations, options, default_nl)
        except NodeError as exc:
            error = (exc.public if secret else exc.message, exc.offset)
    node = res.node
    return _config_info(  # (every field, in order: no Python frame for the tuple)
        (
            res.kind,
            content.name,
            res.namespace,
            content,
            is_immutable(res),
            config_excluded(annotations, options.compat),
            node.start,
            res.doc,
            node.end,
            labels_of(get(meta, "labels")),
            reloader_match(annotations, options.compat),
            None,
            versioned,
            name_spot(res),
            edits,
            error,
            (),
            peer_keep_original(annotations),
            version_window(annotations),
            (),
            None,
        )
    )


_config_info = functools.partial(tuple.__new__, ConfigInfo)


def _source_configs(
    res: Resource, row: SecretSource, options: AnalyzeOptions, default_nl: str
) -> list[ConfigInfo]:
    """What a source object stands for: the objects it produces, and itself when pods
    reference it by its own kind. Its content is its content fields, never metadata."""
    if res.name is None:
        return []  # generateName: nothing can reference a name only the API server picks
    entries_ = source_content(res.node, row)
    annotations = read_annotations(res.annotations(), "metadata.annotations")
    # cmhash.io/versioned (or a peer's annotation) on the source: for what it produces
    flag = versioned_flag(annotations) if row.versioning else None
    versioning = bool(row.versioning) and (options.versioned or bool(flag))
    if versioning:
        entries_ = unversioned(entries_, row.names)
    produced = (
        read_annotations(get_path(res.node, row.template_annotations), "template")
        if row.template_annotations
        else None
    )
    # its own annotations, and those the produced Secret is written with (a Reloader
    # match/ignore there is the Secret's)
    excluded = config_excluded(annotations, options.compat) or config_excluded(
        produced, options.compat
    )
    match = reloader_match(annotations, options.compat) or reloader_match(produced, options.compat)
    labels = labels_of(get_path(res.node, ("metadata", "labels")))
    targets = [(row.produces, n) for n in produced_names(res.node, row, res.name)]
    depends = source_dependencies(res.node, row)
    pins = unpinned(res.node, row)
    if row.referenced:
        targets.insert(0, (row.kind, res.name))
    via = f"{res.kind}/{res.name}"
    keep: tuple[tuple[Edit, ...], tuple[str, int] | None] = ((), None)
    if versioning:  # on the first: one set per document
        keep = keep_edits(res, annotations, options, default_nl)
    return [
        ConfigInfo(
            kind,
            name,
            res.namespace,
            Content(kind, name, entries_, None, row.label),
            False,
            excluded,
            res.node.start,
            res.doc,
            res.node.end,
            labels,
            match,
            None if kind == res.kind else via,
            depends=depends if kind != res.kind else (),
            unpinned=pins if kind != res.kind else (),
            name_spot=name_spot(res) if kind == res.kind else None,
            producer=(
                source_producer(res, row, name, annotations, default_nl)
                if kind != res.kind and versioning
                else None
            ),
            versioned=flag if kind != res.kind else None,
            window=version_window(annotations) if kind != res.kind and versioning else None,
            version_edits=keep[0] if n == 0 else (),
            version_error=keep[1] if n == 0 else None,
        )
        for n, (kind, name) in enumerate(targets)
    ]


# ------------------------------------------------------------------ per chunk


def _workload(
    res: Resource,
    wk: WorkloadKind,
    options: AnalyzeOptions,
    default_nl: str,
    roots: Roots,
    secret: bool,
) -> WorkloadInfo:
    """A workload's summary, with its candidate edit refused when it would land inside a
    node an alias repeats, and its error message stripped of text in a Secret doc."""
    winfo = analyze_workload(res, wk, options, default_nl)
    if winfo.edit is not None and roots.aliased:
        problem = inside_aliased(winfo.edit, roots.aliased)
        if problem is not None:
            winfo.edit, winfo.edit_error = None, problem
    if winfo.edit_error is not None and secret:
        winfo.edit_error = NodeError(winfo.edit_error.public, winfo.edit_error.offset)
    return winfo


def _verify(
    src: SourceText,
    info: DocInfo,
    text: str,
    roots: Roots,
    candidates: list[tuple[int, WorkloadInfo]],
    options: AnalyzeOptions,
    secret: bool,
) -> None:
    """Apply every candidate edit of the document and verify the result (verify.py); a
    failure is kept and raised only if one of these edits is really made."""
    edits = [w.edit for _, w in candidates if w.edit is not None]
    new_text = apply_edits(text, edits, base=info.chunk.start)
    # (the reader parse_chunk took for the original)
    be = backend("exact") if roots.exact else route(new_text, backend(options.parser))
    if len(candidates) == 1 and candidates[0][0] == 0:
        kind, key = candidates[0][1].kind, options.annotation_key
        if treecheck.verify(roots, new_text, kind, key, PLACEHOLDER, be.check_edit):
            return  # verified in C; anything it cannot tell goes on
        if options.cpp_verify:  # without the C tree builder, rapidyaml's check
            from cmhash.edit import cverify

            if cverify.verify(text, new_text, kind, key, PLACEHOLDER):
                return  # verified in C++; anything it cannot tell goes to verify.py
    try:
        verify_edits(
            src,
            info.index,
            info.chunk.start,
            roots,
            new_text,
            [(pos, w.kind, PLACEHOLDER) for pos, w in candidates],
            options.annotation_key,
            be,
        )
    except NodeError as exc:
        info.verify_error = (exc.public if secret else exc.message, exc.offset)


def analyze_chunk(
    src: SourceText,
    index: int,
    chunk: Chunk,
    table: KindTable,
    options: AnalyzeOptions,
    default_nl: str,
) -> DocInfo:
    text = src.text[chunk.start : chunk.end]
    wanted = classify(text, table)
    if wanted is not True:
        return DocInfo(index, chunk, wanted is False)
    refuse_ambiguous(text, chunk.start)
    roots = parse_chunk(text, chunk.start, backend(options.parser))
    info = DocInfo(
        index, chunk, not roots[0].is_null if len(roots) == 1 else any(not r.is_null for r in roots)
    )
    secret = may_hold_secret(text)
    configs: list[ConfigInfo] = []
    workloads: list[WorkloadInfo] = []
    candidates: list[tuple[int, WorkloadInfo]] = []
    unnamed: list[tuple[int, int]] = []  # Secrets named by generateName: (start, end)
    for pos, res in enumerate(document_resources(src, index, roots)):
        if res.kind in ("ConfigMap", "Secret") and res.group == "":
            config = _config(res, options, default_nl, secret)
            if config is not None:
                configs.append(config)
            elif res.kind == "Secret":
                unnamed.append((res.node.start, res.node.end))
            continue
        groups = table.groups(res.api_version, res.kind)
        if not groups:
            row = table.source(res.api_version, res.kind)
            if row is not None:
                configs.extend(_source_configs(res, row, options, default_nl))
            continue
        for wk in groups:
            if wk.component is not None and _absent(get_path(res.node, wk.template_path)):
                continue  # a pod group the resource does not run (a VMCluster without vmselect)
            winfo = _workload(res, wk, options, default_nl, roots, secret)
            workloads.append(winfo)
            if winfo.edit is not None:
                candidates.append((pos, winfo))
    if roots.aliased:  # a name inside a node an alias repeats cannot be renamed
        configs = [
            c._replace(
                name_spot=aliased_spot(c.name_spot, roots.aliased),
                producer=aliased_producer(c.producer, roots.aliased),
            )
            for c in configs
        ]
        for w in workloads:
            w.refs = tuple(r._replace(spot=aliased_spot(r.spot, roots.aliased)) for r in w.refs)
    info.configs, info.workloads = tuple(configs), tuple(workloads)
    info.unnamed_secrets = tuple(unnamed)
    if candidates:
        _verify(src, info, text, roots, candidates, options, secret)
    return info


def analyze_source(
    src: SourceText,
    table: KindTable,
    options: AnalyzeOptions,
    docs: tuple[list[int], int, int] | None = None,
    *,
    progress: Callable[[int, int], None] | None = None,
) -> list[DocInfo]:
    """Analyze documents of one source: ``(cuts, first, end)`` (``split.cuts``, and
    documents ``first`` to ``end - 1``), all of them by default. NodeError ->
    InputError. ``progress(bytes, documents)`` is told of each document done."""
    if docs is None:
        every = cuts(src.text)
        docs = (every, 0, len(every) - 1)
    cut_list, first, end = docs
    nl = newline_at(src.text)
    out = []
    for index in range(first, end):
        chunk = split_chunk(cut_list, index)
        try:
            out.append(analyze_chunk(src, index, chunk, table, options, nl))
        except NodeError as exc:
            secret = may_hold_secret(src.text[chunk.start : chunk.end])
            raise src.error(exc.public if secret else exc.message, exc.offset) from None
        if progress is not None:
            progress(chunk.end - chunk.start, 1)
    return out

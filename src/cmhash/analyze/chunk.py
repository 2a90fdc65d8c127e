"""The map stage: one document chunk -> summaries (summaries.py) of its ConfigMaps,
Secrets and workloads.

Everything here depends on one document only, so it runs per chunk (and, for big
inputs, in worker processes) and the parsed tree is dropped as soon as the summary
exists. This module parses the chunk, hands each resource to the summary of its kind
(configs.py: ConfigMaps, Secrets, Secret sources; workload.py: workloads, each with a
*candidate* edit of value ``PLACEHOLDER``), and verifies the edited document right here
(edit/verify.py; in C or C++ first when it can tell).
"""

from __future__ import annotations

from collections.abc import Callable

from cmhash.analyze.annotations import aliased_spot
from cmhash.analyze.configs import config_info, source_infos
from cmhash.analyze.options import AnalyzeOptions
from cmhash.analyze.summaries import ConfigInfo, DocInfo, WorkloadInfo
from cmhash.analyze.workload import analyze_workload
from cmhash.edit import treecheck
from cmhash.edit.splice import PLACEHOLDER, apply_edits, inside_aliased
from cmhash.errors import NodeError
from cmhash.knowledge.kinds import KindTable, WorkloadKind
from cmhash.parse.builder import Roots
from cmhash.parse.events import backend, parse_chunk, route
from cmhash.parse.resources import Resource, document_resources
from cmhash.parse.tree import Node, get_path
from cmhash.read.source import SourceText, newline_at
from cmhash.read.split import Chunk, classify, cuts, may_hold_secret, refuse_ambiguous
from cmhash.read.split import chunk as split_chunk


def _absent(node: Node | None) -> bool:
    return node is None or node.is_null


def _workload(
    res: Resource,
    wk: WorkloadKind,
    options: AnalyzeOptions,
    default_nl: str,
    roots: Roots,
    text: str,
) -> WorkloadInfo:
    """A workload's summary, with its candidate edit refused when it would land inside a
    node an alias repeats, and its error message stripped of text when its document
    (``text``) may hold a Secret."""
    winfo = analyze_workload(res, wk, options, default_nl)
    if winfo.edit is not None and roots.aliased:
        problem = inside_aliased(winfo.edit, roots.aliased)
        if problem is not None:
            winfo.edit, winfo.edit_error = None, problem
    if winfo.edit_error is not None and may_hold_secret(text):
        winfo.edit_error = NodeError(winfo.edit_error.public, winfo.edit_error.offset)
    return winfo


def _verify(
    src: SourceText,
    info: DocInfo,
    text: str,
    roots: Roots,
    candidates: list[tuple[int, WorkloadInfo]],
    options: AnalyzeOptions,
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
    from cmhash.edit.verify import verify_edits

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
        info.verify_error = (exc.public if may_hold_secret(text) else exc.message, exc.offset)


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
    configs: list[ConfigInfo] = []
    workloads: list[WorkloadInfo] = []
    candidates: list[tuple[int, WorkloadInfo]] = []
    unnamed: list[tuple[int, int]] = []  # Secrets named by generateName: (start, end)
    for pos, res in enumerate(document_resources(src, index, roots)):
        if res.kind in ("ConfigMap", "Secret") and res.group == "":
            config = config_info(res, options, default_nl, text)
            if config is not None:
                configs.append(config)
            elif res.kind == "Secret":
                unnamed.append((res.node.start, res.node.end))
            continue
        groups = table.groups(res.api_version, res.kind)
        if not groups:
            row = table.source(res.api_version, res.kind)
            if row is not None:
                configs.extend(source_infos(res, row, options, default_nl))
            continue
        for wk in groups:
            if wk.component is not None and _absent(get_path(res.node, wk.template_path)):
                continue  # a pod group the resource does not run (a VMCluster without vmselect)
            winfo = _workload(res, wk, options, default_nl, roots, text)
            workloads.append(winfo)
            if winfo.edit is not None:
                candidates.append((pos, winfo))
    if roots.aliased:  # a name inside a node an alias repeats cannot be renamed
        from cmhash.analyze.versioned_sources import aliased_producer

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
        _verify(src, info, text, roots, candidates, options)
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

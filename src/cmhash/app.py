"""The pipeline: read -> analyze (map, per document) -> resolve (reduce) -> apply -> emit.

Only cli.py prints or exits. For big inputs the map stage runs in forked worker
processes: each reads the same text (inherited, not copied) and sends back
small summaries, never parse trees.
"""

from __future__ import annotations

import gc
import os
from collections.abc import Iterator, Sequence
from typing import NamedTuple

from cmhash.analyze import DocInfo, analyze_source
from cmhash.edit import apply_edits
from cmhash.errors import CmhashError, InputError, InternalError, NodeError
from cmhash.findings import Finding
from cmhash.kinds import DEFAULT_TABLE, KindTable
from cmhash.progress import Progress
from cmhash.resolve import ConfigIndex, WorkloadPlan, build_index, plan_workload
from cmhash.settings import Settings
from cmhash.source import SourceText
from cmhash.split import Chunk, split_chunks

PARALLEL_MIN_BYTES = 4 * 1024 * 1024  # below this, forking costs more than it saves


class Change(NamedTuple):
    source: SourceText
    workload: str
    key: str
    old: str | None
    new: str
    offset: int

    @property
    def line(self) -> int:
        return self.source.position(self.offset)[0]


class FileResult(NamedTuple):
    """The rewritten file as segments: (start, end) ranges of the source text, kept as
    they are, and the texts of edited documents. A 100 MB stream is never copied."""

    source: SourceText
    segments: list[tuple[int, int] | str]
    changed: bool

    @property
    def text(self) -> str:
        return "".join(self.pieces())

    def pieces(self, limit: int = 1 << 20) -> Iterator[str]:
        """The text in order, in pieces of at most about ``limit`` characters."""
        src = self.source.text
        for seg in self.segments:
            if isinstance(seg, str):
                yield seg
                continue
            start, end = seg
            for i in range(start, end, limit):
                yield src[i:min(i + limit, end)]


class RunResult(NamedTuple):
    files: list[FileResult]
    changes: list[Change]
    findings: list[Finding]
    plans: list[WorkloadPlan]
    index: ConfigIndex | None
    secret_spans: dict[int, list[tuple[int, int]]]  # id(source) -> Secrets' (start, end)
    notes: list[str]  # what the run decided for the user (an inferred namespace)

    def secret_lines(self, source: SourceText) -> set[int]:
        """1-based lines of ``source`` inside Secrets (kept out of diff context)."""
        lines: set[int] = set()
        for start, end in self.secret_spans.get(id(source), ()):
            lines.update(range(source.position(start)[0], source.position(end)[0] + 1))
        return lines

    @property
    def has_errors(self) -> bool:
        return any(f.level == "error" for f in self.findings)


def kind_table(settings: Settings) -> KindTable:
    return DEFAULT_TABLE.with_extra(settings.extra_kinds) if settings.extra_kinds else DEFAULT_TABLE


# ------------------------------------------------------------------ map stage

_WORK: tuple[list[SourceText], KindTable, Settings] | None = None


def _keep(info: DocInfo) -> bool:
    """Most documents (Services, CRDs, ...) need nothing after the map stage."""
    return bool(info.configs or info.workloads or info.verify_error)


def _analyze_batch(batch: list[tuple[int, int, Chunk]]
                   ) -> tuple[list[tuple[int, DocInfo]], bool] | CmhashError:
    assert _WORK is not None
    sources, table, settings = _WORK
    gc.disable()
    out: list[tuple[int, DocInfo]] = []
    content = False
    try:
        for si, index, chunk in batch:
            for info in analyze_source(sources[si], table, settings, [(index, chunk)]):
                content = content or info.has_content
                if _keep(info):
                    out.append((si, info))
    except CmhashError as exc:  # raised in order, so this is the batch's first error
        return exc
    return out, content


def worker_count(settings: Settings, total_bytes: int) -> int:
    if settings.workers:
        return settings.workers
    if total_bytes < PARALLEL_MIN_BYTES:
        return 1
    try:
        cpus = len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        cpus = os.cpu_count() or 1
    return max(1, min(cpus, 4))


def analyze(sources: list[SourceText], table: KindTable,
            settings: Settings) -> tuple[list[list[DocInfo]], bool]:
    """DocInfos per source, in document order, of the documents that hold ConfigMaps,
    Secrets or workloads; and whether any document had content at all. The first input
    error in input order wins."""
    per_source: list[list[DocInfo]] = [[] for _ in sources]
    content = False
    total = sum(len(s.text) for s in sources)
    n = worker_count(settings, total)
    if n <= 1 or "fork" not in _start_methods():
        progress = Progress(total, None, 1, settings.progress)
        try:
            for si, src in enumerate(sources):
                # chunked one source at a time
                infos = analyze_source(src, table, settings, progress=progress.advance)
                content = content or any(d.has_content for d in infos)
                per_source[si] = [d for d in infos if _keep(d)]
                del infos
        finally:
            progress.close()
        return per_source, content
    work = [(si, i, c) for si, s in enumerate(sources) for i, c in enumerate(split_chunks(s.text))]
    progress = Progress(total, len(work), n, settings.progress)
    global _WORK
    _WORK = (sources, table, settings)
    try:
        import multiprocessing

        ctx = multiprocessing.get_context("fork")
        batches = _batches(work, n * 16)
        del work  # the batches hold the items; free both as soon as the workers have them
        sizes = [(sum(c.end - c.start for _, _, c in b), len(b)) for b in batches]
        with ctx.Pool(n, initializer=_worker_init) as pool:
            pending = pool.imap(_analyze_batch, batches, chunksize=1)
            del batches
            results = []
            for (nbytes, ndocs), res in zip(sizes, pending, strict=True):
                results.append(res)
                progress.advance(nbytes, ndocs)
    finally:
        _WORK = None
        progress.close()
    for res in results:
        if isinstance(res, CmhashError):
            raise res
        kept, had_content = res
        content = content or had_content
        for si, info in kept:
            per_source[si].append(info)
    return per_source, content


def _worker_init() -> None:
    """Signals are the parent's to handle (exit 130/143, one line); workers just stop when
    it terminates the pool, instead of each printing a traceback."""
    from cmhash.signals import reset_in_child

    reset_in_child()


def _start_methods() -> list[str]:
    import multiprocessing

    return multiprocessing.get_all_start_methods()


def _batches(work: list[tuple[int, int, Chunk]], n: int) -> list[list[tuple[int, int, Chunk]]]:
    """Contiguous batches of about equal bytes, in input order."""
    total = sum(c.end - c.start for _, _, c in work) or 1
    target = total / n
    batches: list[list[tuple[int, int, Chunk]]] = [[]]
    acc = 0
    for item in work:
        if acc >= target and len(batches) < n:
            batches.append([])
            acc = 0
        batches[-1].append(item)
        acc += item[2].end - item[2].start
    return [b for b in batches if b]


# ------------------------------------------------------------------ whole run

def run(sources: list[SourceText], settings: Settings, *,
        keep_plans: bool = False, allow_empty: bool = False) -> RunResult:
    """``allow_empty``: an input without objects is a valid, empty result (one side of
    ``cmhash report`` may be a render of nothing yet) instead of an error."""
    gc_was_enabled = gc.isenabled()
    gc.disable()  # millions of short-lived acyclic nodes: the cyclic GC only costs time
    try:
        return _run(sources, settings, keep_plans, allow_empty)
    finally:
        if gc_was_enabled:
            gc.enable()


def _run(sources: list[SourceText], settings: Settings, keep_plans: bool,
         allow_empty: bool) -> RunResult:
    table = kind_table(settings)
    docs, content = analyze(sources, table, settings)
    if not content and not allow_empty:
        path = sources[0].display if len(sources) == 1 else None
        raise InputError("no Kubernetes objects in the input (it is empty or only comments)",
                         path=path)
    notes: list[str] = []
    settings = _with_helm_namespace(sources, docs, settings, notes)
    findings: list[Finding] = []
    index = build_index([(s, c) for s, per in zip(sources, docs, strict=True) for d in per for c in d.configs],
                        settings, findings)
    plans: list[WorkloadPlan] = []
    for src, per in zip(sources, docs, strict=True):
        for d in per:
            for w in d.workloads:
                plan = plan_workload(src, w, index, settings, findings)
                if not keep_plans:
                    plan.resolved.clear()  # only explain/report read them; a big run has many
                plans.append(plan)
    changes, files = _apply(sources, docs, plans, settings)
    findings.sort(key=Finding.sort_key)
    secret_spans = {id(src): [(c.offset, c.end) for d in per for c in d.configs
                              if c.kind == "Secret"]
                    for src, per in zip(sources, docs, strict=True)}
    return RunResult(files, changes, findings, plans if keep_plans else [], index,
                     secret_spans, notes)


def _with_helm_namespace(sources: list[SourceText], docs: list[list[DocInfo]],
                         settings: Settings, notes: list[str]) -> Settings:
    """Helm output with objects that name no namespace: the release namespace, when it
    can be known (helm.py); ``-n`` / ``namespace:`` always win."""
    if settings.namespace is not None:
        return settings
    unnamed = any(c.namespace is None for per in docs for d in per for c in d.configs) or any(
        w.namespace is None for per in docs for d in per for w in d.workloads)
    if not unnamed:
        return settings
    from cmhash.helm import infer, is_helm_source

    if not any(is_helm_source(s) for s in sources):
        return settings
    parsed = {o.namespace for per in docs for d in per for o in (*d.configs, *d.workloads)
              if o.namespace}
    inferred = infer([s.text for s in sources], parsed=parsed)
    if inferred is None:
        return settings
    notes.append(inferred.note)
    return settings._replace(namespace=inferred.namespace)


def _apply(sources: list[SourceText], docs: list[list[DocInfo]], plans: list[WorkloadPlan],
           settings: Settings) -> tuple[list[Change], list[FileResult]]:
    edits_by_doc: dict[tuple[int, int], list[WorkloadPlan]] = {}
    for p in plans:
        if p.edit is not None:
            edits_by_doc.setdefault((id(p.source), p.info.doc), []).append(p)
    changes: list[Change] = []
    files: list[FileResult] = []
    for src, per in zip(sources, docs, strict=True):
        segments: list[tuple[int, int] | str] = []
        pos = 0
        for d in per:
            edited = edits_by_doc.get((id(src), d.index))
            if not edited:
                continue
            chunk_text = src.text[d.chunk.start:d.chunk.end]
            new_text = apply_edits(chunk_text, [p.edit for p in edited if p.edit is not None],
                                   base=d.chunk.start)
            _check(src, d, chunk_text, new_text, edited, settings)
            if d.chunk.start > pos:
                segments.append((pos, d.chunk.start))
            segments.append(new_text)
            pos = d.chunk.end
            for p in edited:
                changes.append(Change(src, p.label, settings.annotation_key, p.info.current,
                                      p.value or "", p.info.offset))
        if pos < len(src.text):
            segments.append((pos, len(src.text)))
        files.append(FileResult(src, segments, pos > 0))
    return changes, files


def _check(src: SourceText, d: DocInfo, old_text: str, new_text: str,
           edited: list[WorkloadPlan], settings: Settings) -> None:
    """The map stage verified every candidate edit; re-verify when only some were applied."""
    try:
        if d.verify_error is not None:
            raise NodeError(*d.verify_error)
        candidates = [w for w in d.workloads if w.edit is not None]
        if len(candidates) != len(edited):
            _reverify(src, d, old_text, new_text, edited, settings)
    except NodeError as exc:
        raise InternalError(f"self-check failed after editing ({exc.message}); please report "
                            "this bug", path=src.display, line=src.position(exc.offset)[0]) from None


def _reverify(src: SourceText, d: DocInfo, old_text: str, new_text: str,
              edited: list[WorkloadPlan], settings: Settings) -> None:
    from cmhash.resources import resources_of
    from cmhash.verify import verify_edits
    from cmhash.yamltree import backend, parse_chunk

    be = backend(settings.parser)
    roots = parse_chunk(old_text, d.chunk.start, be)
    resources = [r for root in roots for r in resources_of(src, d.index, root)]
    pos = {r.node.start: i for i, r in enumerate(resources)}
    verify_edits(src, d.index, d.chunk.start, roots, new_text,
                 [(pos[p.info.offset], p.info.kind, p.value or "") for p in edited],
                 settings.annotation_key, be)


def joined_pieces(files: list[FileResult]) -> Iterator[str]:
    """One stream from several files, readable back as the same documents: between two
    files, ``---`` where the next file does not start a document itself; ``...`` instead
    when it starts with a directive (``%YAML``), which may only follow a document end."""
    last = ""
    open_document = False  # some file so far had content not closed by "..."
    for n, f in enumerate(files):
        text = f.source.text
        if n:
            if last and not last.endswith("\n"):
                yield "\n"
            first = _first_significant(text)
            if first.startswith("%"):
                if open_document:
                    yield "...\n"
            elif not first.startswith("---"):
                yield "---\n"
        for piece in f.pieces():
            if piece:
                last = piece
                yield piece
        tail = _last_significant(text).rstrip("\r\n")
        if tail:
            open_document = not (tail == "..." or tail.startswith(("... ", "...\t")))


def _first_significant(text: str) -> str:
    """The first line that is not blank or a comment ("" if none)."""
    pos = 0
    while pos < len(text):
        end = text.find("\n", pos)
        end = len(text) if end < 0 else end + 1
        line = text[pos:end]
        s = line.strip()
        if s and not s.startswith("#"):
            return line
        pos = end
    return ""


def _last_significant(text: str) -> str:
    """The last line that is not blank or a comment ("" if none)."""
    end = len(text)
    while end > 0:
        start = text.rfind("\n", 0, end - 1) + 1
        line = text[start:end]
        s = line.strip()
        if s and not s.startswith("#"):
            return line
        end = start
    return ""

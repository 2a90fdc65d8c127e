"""The map stage as a whole: every source's chunks to summaries, in this process or, for
big inputs, in forked workers (``pool.py``, imported only then), with the progress bar."""

from __future__ import annotations

import os

from cmhash.analyze.chunk import analyze_source
from cmhash.analyze.options import AnalyzeOptions
from cmhash.analyze.summaries import DocInfo
from cmhash.errors import CmhashError
from cmhash.knowledge.kinds import KindTable
from cmhash.parse.events import backend
from cmhash.read.source import SourceText
from cmhash.runtime.progress import Progress

PARALLEL_MIN_BYTES = 4 * 1024 * 1024  # below this, forking costs more than it saves


def worker_count(workers: int, total_bytes: int) -> int:
    """``workers`` (0: automatic) -> how many processes map ``total_bytes``."""
    if workers:
        return workers
    if total_bytes < PARALLEL_MIN_BYTES:
        return 1
    try:
        cpus = len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        cpus = os.cpu_count() or 1
    return max(1, min(cpus, 4))


def analyze(
    sources: list[SourceText],
    table: KindTable,
    options: AnalyzeOptions,
    *,
    workers: int = 0,
    progress: bool = False,
    notes: list[str] | None = None,
) -> tuple[list[list[DocInfo]], bool]:
    """The map stage: DocInfos per source, in document order, of the documents that hold
    ConfigMaps, Secrets or workloads; and whether any document had content at all. The
    first input error in input order wins. ``workers``: 0 decides from the input's size;
    ``progress``: a bar on stderr; ``notes``: a worker that could not start."""
    per_source: list[list[DocInfo]] = [[] for _ in sources]
    content = False
    total = sum(len(s.text) for s in sources)
    # rapidyaml's self-check only where the C tree builder is missing (treecheck.py
    # does the same check faster on the trees it builds)
    cpp = False
    if backend(options.parser).ctree is None:
        from cmhash.edit import cverify  # (rapidyaml itself is imported only when used)

        cpp = cverify.wanted(total)
    options = options._replace(cpp_verify=cpp)
    n = worker_count(workers, total)
    if n > 1:
        from cmhash.analyze import pool

        n = n if pool.can_fork() else 1
    if n <= 1:
        bar = Progress(total, None, 1, progress)
        try:
            for si, src in enumerate(sources):  # chunked one source at a time
                infos = analyze_source(  # (no call per document for a bar not shown)
                    src, table, options, progress=bar.advance if progress else None
                )
                content = content or any(d.has_content for d in infos)
                per_source[si] = [d for d in infos if d.kept]
                del infos
        finally:
            bar.close()
        return per_source, content
    cut_lists = pool.all_cuts(sources)
    bar = Progress(total, sum(len(c) - 1 for c in cut_lists), n, progress)
    try:
        results = list(
            pool.analyze_parallel(sources, table, options, cut_lists, n, bar.advance, notes)
        )
    finally:
        bar.close()
    for res in results:
        if isinstance(res, CmhashError):
            raise res
        kept, had_content = res
        content = content or had_content
        for si, info in kept:
            per_source[si].append(info)
    return per_source, content

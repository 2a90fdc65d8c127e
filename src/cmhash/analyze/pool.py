"""The map stage, in forked worker processes for big inputs.

Each worker inherits the sources' text (fork: shared, not copied), analyzes a contiguous
batch of document chunks and sends back small summaries (DocInfo), never parse trees.
Results come back in input order, so the first input error in input order wins, as in
one process. Below ``PARALLEL_MIN_BYTES`` forking costs more than it saves.
"""

from __future__ import annotations

import gc
import os
from collections.abc import Callable, Iterator

from cmhash.analyze.chunk import analyze_source
from cmhash.analyze.kinds import KindTable
from cmhash.analyze.summaries import DocInfo
from cmhash.errors import CmhashError
from cmhash.read.source import SourceText
from cmhash.read.split import Chunk, split_chunks
from cmhash.settings import Settings

PARALLEL_MIN_BYTES = 4 * 1024 * 1024

Work = tuple[int, int, Chunk]  # (source index, document index, chunk)
Batch = list[Work]
BatchResult = tuple[list[tuple[int, DocInfo]], bool] | CmhashError

_WORK: tuple[list[SourceText], KindTable, Settings] | None = None  # inherited by workers


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


def can_fork() -> bool:
    import multiprocessing

    return "fork" in multiprocessing.get_all_start_methods()


def all_chunks(sources: list[SourceText]) -> list[Work]:
    return [(si, i, c) for si, s in enumerate(sources) for i, c in enumerate(split_chunks(s.text))]


def batches(work: list[Work], n: int) -> list[Batch]:
    """Contiguous batches of about equal bytes, in input order."""
    total = sum(c.end - c.start for _, _, c in work) or 1
    target = total / n
    out: list[Batch] = [[]]
    acc = 0
    for item in work:
        if acc >= target and len(out) < n:
            out.append([])
            acc = 0
        out[-1].append(item)
        acc += item[2].end - item[2].start
    return [b for b in out if b]


def _analyze_batch(batch: Batch) -> BatchResult:
    assert _WORK is not None
    sources, table, settings = _WORK
    gc.disable()
    out: list[tuple[int, DocInfo]] = []
    content = False
    try:
        for si, index, chunk in batch:
            for info in analyze_source(sources[si], table, settings, [(index, chunk)]):
                content = content or info.has_content
                if info.kept:
                    out.append((si, info))
    except CmhashError as exc:  # raised in order, so this is the batch's first error
        return exc
    return out, content


def _worker_init() -> None:
    """Signals are the parent's to handle (exit 130/143, one line); workers just stop when
    it terminates the pool, instead of each printing a traceback."""
    from cmhash.signals import reset_in_child

    reset_in_child()


def analyze_parallel(
    sources: list[SourceText],
    table: KindTable,
    settings: Settings,
    work: list[Work],
    n: int,
    advance: Callable[[int, int], None],
) -> Iterator[BatchResult]:
    """Results of ``n`` workers over ``work``, batch by batch in input order; ``advance``
    (bytes, documents) after each."""
    global _WORK
    _WORK = (sources, table, settings)
    try:
        import multiprocessing

        ctx = multiprocessing.get_context("fork")
        todo = batches(work, n * 16)
        sizes = [(sum(c.end - c.start for _, _, c in b), len(b)) for b in todo]
        with ctx.Pool(n, initializer=_worker_init) as pool:
            pending = pool.imap(_analyze_batch, todo, chunksize=1)
            del todo  # the pool holds the batches; free them as soon as the workers have them
            for (nbytes, ndocs), res in zip(sizes, pending, strict=True):
                advance(nbytes, ndocs)
                yield res
    finally:
        _WORK = None

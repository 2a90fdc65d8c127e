"""The map stage, in forked worker processes for big inputs.

The parent and ``n - 1`` forked workers share the work: each claims the next batch of
contiguous document chunks from one counter, so a process the machine slows down takes
fewer. Workers inherit the sources' text (fork: shared, not copied) and send back small
summaries (DocInfo), never parse trees; the parent's own batches need no pickling.
Results are put back in input order, so the first input error in input order wins, as
in one process. Below ``PARALLEL_MIN_BYTES`` forking costs more than it saves."""

from __future__ import annotations

import gc
import os
from collections.abc import Callable, Iterator
from typing import Any, NamedTuple

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


class _Shared(NamedTuple):
    """What the workers inherit (fork): the inputs, the batches, the claim counter."""

    sources: list[SourceText]
    table: KindTable
    settings: Settings
    todo: list[Batch]
    claimed: Any  # multiprocessing.Value: how many batches have been taken


_WORK: _Shared | None = None


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
    sources, table, settings = _WORK.sources, _WORK.table, _WORK.settings
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


def _claim() -> int | None:
    """The next batch nobody has taken (the parent and the workers share the counter)."""
    assert _WORK is not None
    counter = _WORK.claimed
    with counter.get_lock():
        i: int = counter.value
        if i >= len(_WORK.todo):
            return None
        counter.value = i + 1
    return i


def _claim_one(_: int) -> tuple[int, BatchResult] | None:
    """A worker's task: the next unclaimed batch and its result (None: all are taken)."""
    assert _WORK is not None
    gc.disable()
    i = _claim()
    return None if i is None else (i, _analyze_batch(_WORK.todo[i]))


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
    """Results of ``n`` processes over ``work``, batch by batch in input order: the
    parent is one of them (its results need no pickling, and it would only wait
    otherwise), ``n - 1`` forked workers the others. Each process claims the next
    batch from a shared counter, so a process slowed by the machine's other load takes
    fewer. ``advance`` (bytes, documents) after each batch, the parent's and the
    workers' (as their results come back)."""
    global _WORK
    try:
        import multiprocessing

        ctx = multiprocessing.get_context("fork")
        todo = batches(work, n * 16)
        _WORK = _Shared(sources, table, settings, todo, ctx.Value("q", 0))
        results: list[BatchResult | None] = [None] * len(todo)
        with ctx.Pool(n - 1, initializer=_worker_init) as pool:
            # one task per batch, each claiming whichever batch is next: results stream
            # back (unpickled by the pool's thread while the parent works)
            theirs = pool.imap_unordered(_claim_one, range(len(todo)), chunksize=1)
            while (i := _claim()) is not None:
                results[i] = _analyze_batch(todo[i])
                advance(*_size(todo[i]))
                _collect_results(theirs, results, todo, advance, wait=False)
            _collect_results(theirs, results, todo, advance, wait=True)
        for res in results:
            assert res is not None
            yield res
    finally:
        _WORK = None


def _collect_results(
    theirs: Any,
    results: list[BatchResult | None],
    todo: list[Batch],
    advance: Callable[[int, int], None],
    wait: bool,
) -> None:
    """The workers' results that are back (all of them: ``wait``), into ``results``; the
    progress bar counts each as it arrives, not all at the end."""
    import multiprocessing

    while True:
        try:
            got = theirs.next(timeout=None if wait else 0)
        except StopIteration:
            return
        except multiprocessing.TimeoutError:
            return
        if got is not None:
            i, results[i] = got
            advance(*_size(todo[i]))


def _size(batch: Batch) -> tuple[int, int]:
    return sum(c.end - c.start for _, _, c in batch), len(batch)

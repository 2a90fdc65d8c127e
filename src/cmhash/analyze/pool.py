"""The map stage, in forked worker processes for big inputs.

The parent and ``n - 1`` forked workers share the work: each claims the next batch of
contiguous document chunks from one pipe of batch numbers, so a process the machine
slows down takes fewer. Workers inherit the sources' text (fork: shared, not copied)
and send each batch's small summaries (DocInfo, never parse trees), packed
(transport.py), through a pipe as they finish it; between its own batches the parent
takes in what has arrived, so reading the workers' results is shared work too, not a
wait at the end. Results are put back in input order, so the first input error in input
order wins, as in one process.

What a worker sends is only ever a cache: a batch whose result does not come back (the
worker died, was killed, met a bug, or its result would not pack) is done again by the
parent, which then meets any bug itself, with its own traceback, exactly as with one
process. Below ``PARALLEL_MIN_BYTES`` (stage.py) forking costs more than it saves."""

from __future__ import annotations

import gc
import os
import signal
import struct
from bisect import bisect_left
from collections.abc import Callable, Iterator
from contextlib import suppress
from typing import Any, NamedTuple, NoReturn

from cmhash.analyze.chunk import analyze_source
from cmhash.analyze.options import AnalyzeOptions
from cmhash.analyze.summaries import DocInfo
from cmhash.errors import CmhashError
from cmhash.knowledge.kinds import KindTable
from cmhash.read.source import SourceText
from cmhash.read.split import cuts

BATCHES_PER_PROCESS = 16  # enough for a slowed process to take fewer, few enough to be cheap
# and no batch over this much input, so that the processes' last batches end close
# together on big inputs too (131 MB in 32 batches: up to 0.2 s of one process waiting)
BATCH_BYTES = 512 * 1024
# the claim pipe is filled before anyone reads it, so all of it must fit in the smallest
# buffer a pipe can have (one page; PIPE_BUF is 4 KiB on Linux)
MAX_BATCHES = 2048

Cuts = list[list[int]]  # split.cuts of each source: where its documents start, its length
Span = tuple[int, int, int]  # (source index, first document, end document): a source's part
Batch = list[Span]  # of contiguous documents, in input order
BatchResult = tuple[list[tuple[int, DocInfo]], bool] | CmhashError
Encode = Callable[[object], bytes]  # transport.encode / decode
Decode = Callable[[bytes], Any]

_FRAME = struct.Struct("<qq")  # a worker's result: batch index, length (transport.py)
_CLAIM = struct.Struct("<H")  # a batch number in the claim pipe
PIPE_SIZE = 1 << 20  # a worker's pipe, when the system allows: it rarely waits to write
_HELD = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


class _Shared(NamedTuple):
    """What the workers inherit (fork): the inputs, the batches, and the pipe that hands
    out batch numbers."""

    sources: list[SourceText]
    cuts: Cuts
    table: KindTable
    options: AnalyzeOptions
    todo: list[Batch]
    claims: int  # read end of a pipe holding every batch number (_CLAIM), then EOF


class _Worker(NamedTuple):
    """The parent's side of a worker: its pipe, and what has come through it that is
    not yet a whole frame."""

    pid: int
    pipe: int
    pending: bytearray


_WORK: _Shared | None = None


def can_fork() -> bool:
    return hasattr(os, "fork")


def all_cuts(sources: list[SourceText]) -> Cuts:
    return [cuts(s.text) for s in sources]


def batches(cut_lists: Cuts, count: int) -> list[Batch]:
    """At most ``count`` batches of contiguous documents and about equal bytes, in input
    order: a batch ends before the first document that starts past its share of the
    input (found by bisection: nothing is done per document). The last takes the rest."""
    share = (sum(c[-1] for c in cut_lists) or 1) / count
    out: list[Batch] = []
    batch: Batch = []
    before = 0  # the bytes of the sources before this one
    bound = share  # where the current batch ends, in bytes of the whole input
    for si, c in enumerate(cut_lists):
        docs, first = len(c) - 1, 0
        while first < docs:
            if batch and before + c[first] >= bound and len(out) < count - 1:
                out.append(batch)
                batch = []
                bound = before + c[first] + share
            last = len(out) == count - 1
            end = docs if last else bisect_left(c, bound - before, first + 1, docs)
            batch.append((si, first, end))
            first = end
        before += c[-1]
    if batch:
        out.append(batch)
    return out


def batch_count(processes: int, total_bytes: int) -> int:
    """How many batches ``processes`` share: 16 each, more for a big input (none over
    ``BATCH_BYTES``), at most ``MAX_BATCHES``."""
    by_size = -(-total_bytes // BATCH_BYTES)
    return min(max(processes * BATCHES_PER_PROCESS, by_size), MAX_BATCHES)


def _analyze_batch(batch: Batch) -> BatchResult:
    assert _WORK is not None
    sources, table, options = _WORK.sources, _WORK.table, _WORK.options
    out: list[tuple[int, DocInfo]] = []
    content = False
    try:
        for si, first, end in batch:
            for info in analyze_source(sources[si], table, options, (_WORK.cuts[si], first, end)):
                content = content or info.has_content
                if info.kept:
                    out.append((si, info))
    except CmhashError as exc:  # raised in order, so this is the batch's first error
        return exc
    return out, content


def _claim() -> int | None:
    """The next batch nobody has taken. The batch numbers wait in a pipe that the
    parent and the workers read: the kernel hands each number to exactly one reader (a
    pipe read is atomic), with no lock to import or to hold."""
    assert _WORK is not None
    got = os.read(_WORK.claims, _CLAIM.size)
    if not got:
        return None  # every batch is taken (the write end is closed: end of file)
    return int(_CLAIM.unpack(got)[0])


def _claims(count: int) -> int:
    """A pipe holding the numbers 0 .. count - 1, closed for writing: its read end."""
    read_end, write_end = os.pipe()
    try:
        _write_all(write_end, b"".join(_CLAIM.pack(i) for i in range(count)))
    except BaseException:
        os.close(read_end)
        raise
    finally:
        os.close(write_end)
    return read_end


def _worker(out: int, mask: set[int | signal.Signals], encode: Encode) -> NoReturn:
    """A forked worker: claim and analyze batches until none are left, writing each
    result to ``out`` as a frame (batch number, length, packed result) as soon as it is
    done; then leave (``os._exit``: the parent's clean-ups, buffers and exit handlers
    are not the worker's). Whatever goes wrong, the worker just stops: the parent does
    again what did not come back."""
    code = 0
    backlog = bytearray()  # frames the pipe has not taken yet
    try:
        from cmhash.runtime.signals import reset_in_child

        reset_in_child()  # signals are the parent's to handle (exit 130/143, one line)
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)  # held by _fork_worker
        gc.disable()
        os.set_blocking(out, False)  # never wait for the parent while there is work
        assert _WORK is not None
        while (i := _claim()) is not None:
            result = _analyze_batch(_WORK.todo[i])
            try:
                blob = encode(result)
            except Exception:  # e.g. an error holding something odd
                continue  # the parent does this batch again
            backlog += _FRAME.pack(i, len(blob))
            backlog += blob
            with suppress(BlockingIOError):  # full: the parent reads it after its batch
                del backlog[: os.write(out, backlog)]  # (a non-blocking write may take part)
        os.set_blocking(out, True)
        _write_all(out, backlog)  # the rest, as the parent reads it
    except BaseException:  # a bug (the parent meets it again, itself), or the parent
        code = 3  # is gone or stopped reading
    os._exit(code)


def _write_all(fd: int, data: bytes | bytearray) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _take_in(
    worker: _Worker, results: list[BatchResult | None], decode: Decode, *, wait: bool
) -> list[int]:
    """What ``worker`` has sent so far (everything, up to its exit: ``wait``) into
    ``results``; the batch numbers it completed. A cut-off or unreadable frame is
    skipped: the parent does that batch again."""
    os.set_blocking(worker.pipe, wait)
    while True:
        try:
            chunk = os.read(worker.pipe, PIPE_SIZE)
        except BlockingIOError:
            break
        if not chunk:
            break
        worker.pending.extend(chunk)
    data, at, done = worker.pending, 0, []
    while at + _FRAME.size <= len(data):
        i, size = _FRAME.unpack_from(data, at)
        if at + _FRAME.size + size > len(data):
            break  # the rest of it is still on its way
        at += _FRAME.size
        if 0 <= i < len(results) and results[i] is None:
            with suppress(Exception):  # redone by the parent
                results[i] = decode(bytes(data[at : at + size]))
                done.append(i)
        at += size
    del data[:at]
    return done


def _fork_worker(workers: dict[int, _Worker], encode: Encode) -> None:
    """Fork a worker and add it to ``workers``. Signals are held until then, so the
    parent knows every worker it started, whenever an interrupt comes."""
    read_end, write_end = os.pipe()
    try:
        import fcntl

        fcntl.fcntl(write_end, fcntl.F_SETPIPE_SZ, PIPE_SIZE)
    except (ImportError, AttributeError, OSError):
        pass  # not Linux, or over the user's pipe limits: the default size works too
    old = signal.pthread_sigmask(signal.SIG_BLOCK, _HELD)
    try:
        pid = os.fork()
    except BaseException:
        os.close(read_end)
        os.close(write_end)
        signal.pthread_sigmask(signal.SIG_SETMASK, old)
        raise
    if pid == 0:  # pragma: no cover - the worker (coverage does not follow forks)
        os.close(read_end)
        _worker(write_end, old, encode)
    os.close(write_end)
    workers[pid] = _Worker(pid, read_end, bytearray())
    signal.pthread_sigmask(signal.SIG_SETMASK, old)


def analyze_parallel(
    sources: list[SourceText],
    table: KindTable,
    options: AnalyzeOptions,
    cut_lists: Cuts,
    n: int,
    advance: Callable[[int, int], None],
    notes: list[str] | None = None,
) -> Iterator[BatchResult]:
    """Results of ``n`` processes over the documents (``all_cuts``), batch by batch in
    input order: the parent is one of them (its results need no packing, and it would only
    wait otherwise), ``n - 1`` forked workers the others. ``advance`` (bytes, documents)
    as batches are done, the parent's and, as they come back, the workers'.

    A worker that cannot be started (a container's pids limit: fork fails with EAGAIN;
    no memory; no file descriptor for its pipe) is one process fewer: those started and
    the parent do the work (a note in ``notes``, when given, says so: ``-v``)."""
    global _WORK
    # imported here, before the fork (the workers inherit it), and only by big runs
    from cmhash.analyze.transport import decode, encode

    total, documents = sum(c[-1] for c in cut_lists), sum(len(c) - 1 for c in cut_lists)
    todo = batches(cut_lists, batch_count(n, total))
    n = min(n, len(todo))  # a process more than there are batches would only wait
    claims = _claims(len(todo))
    _WORK = _Shared(sources, cut_lists, table, options, todo, claims)
    results: list[BatchResult | None] = [None] * len(todo)
    workers: dict[int, _Worker] = {}
    shown = [0, 0]

    def tell(done: list[int]) -> None:
        for i in done:
            size, docs = _size(cut_lists, todo[i])
            shown[0] += size
            shown[1] += docs
            advance(size, docs)

    try:
        for _ in range(1, n):
            try:
                _fork_worker(workers, encode)
            except OSError as exc:
                if notes is not None:
                    notes.append(_not_started(exc, len(workers) + 1))
                break
        while (i := _claim()) is not None:
            results[i] = _analyze_batch(todo[i])
            tell([i])
            for worker in workers.values():
                tell(_take_in(worker, results, decode, wait=False))
        for pid in list(workers):
            worker = workers[pid]
            tell(_take_in(worker, results, decode, wait=True))
            os.close(worker.pipe)
            del workers[pid]
            os.waitpid(pid, 0)
        for i, res in enumerate(results):
            if res is None:  # its worker did not send it back: do it here
                results[i] = _analyze_batch(todo[i])
        advance(total - shown[0], documents - shown[1])
        for res in results:
            assert res is not None
            yield res
    finally:
        _stop(workers)
        _WORK = None
        os.close(claims)


def _not_started(exc: OSError, processes: int) -> str:
    why = exc.strerror or str(exc) or type(exc).__name__
    doing = "cmhash itself does" if processes == 1 else f"{processes} processes do"
    return f"could not start a worker process ({why}): {doing} the work"


def _stop(workers: dict[int, _Worker]) -> None:
    """Workers still running when the parent leaves early (an interrupt, a bug): kill
    and reap them, so none outlives the run."""
    for pid, worker in workers.items():
        os.close(worker.pipe)
        with suppress(ProcessLookupError):  # already gone
            os.kill(pid, signal.SIGKILL)
        with suppress(ChildProcessError):  # already reaped
            os.waitpid(pid, 0)


def _size(cut_lists: Cuts, batch: Batch) -> tuple[int, int]:
    """A batch's bytes and documents."""
    size = sum(cut_lists[si][end] - cut_lists[si][first] for si, first, end in batch)
    return size, sum(end - first for _, first, end in batch)

"""The parallel map stage (analyze/pool.py): the parent and the forked workers claim
batches from one counter; results come back in input order whoever did them, and the
first input error in input order wins, as with one process."""

from __future__ import annotations

import itertools
import os
import time
from pathlib import Path
from typing import Any

import pytest
from conftest import run_cmhash
from hypothesis import given, settings
from hypothesis import strategies as st

from cmhash.analyze import pool
from cmhash.read.source import SourceText
from cmhash.read.split import Chunk, split_chunks

pytestmark = pytest.mark.skipif(not pool.can_fork(), reason="the pool forks")
REAL_FORK = os.fork

CM = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cfg{i}\ndata:\n  a: '{i}'\n"
DEP = (
    "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: app{i}\nspec:\n  template:\n"
    "    spec:\n      containers:\n      - name: c\n        envFrom:\n"
    "        - configMapRef: {{name: cfg{i}}}\n"
)


def stream(count: int, broken: tuple[int, ...] = ()) -> bytes:
    docs = []
    for i in range(count):
        docs.append(CM.format(i=i))
        dep = DEP.format(i=i)
        docs.append(dep.replace("name: c\n", "name: [c\n") if i in broken else dep)
    return "---\n".join(docs).encode()


@pytest.fixture
def slow_batches(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """Each batch takes a little while and records which process did it (the workers
    are forked, so they inherit the patch)."""
    log = tmp_path / "pids"
    real = pool._analyze_batch

    def batch(b: pool.Batch) -> pool.BatchResult:
        time.sleep(0.01)
        with log.open("a") as f:
            f.write(f"{os.getpid()}\n")
        return real(b)

    monkeypatch.setattr(pool, "_analyze_batch", batch)
    return log


def test_the_parent_and_the_workers_share_the_batches(slow_batches: Path) -> None:
    data = stream(200)
    one = run_cmhash(["--no-config", "--workers", "1", "-"], stdin=data)
    slow_batches.unlink(missing_ok=True)
    three = run_cmhash(["--no-config", "--workers", "3", "-"], stdin=data)
    assert one.code == three.code == 0
    assert one.stdout == three.stdout and one.stdout.count(b"checksum/config") == 200
    pids = slow_batches.read_text().split()
    cut_lists = pool.all_cuts([SourceText("<stdin>", data.decode())])
    assert len(pids) == len(pool.batches(cut_lists, 3 * 16))  # every batch done once
    assert str(os.getpid()) in pids  # the parent took its share
    assert len(set(pids)) >= 2  # and so did a worker


def test_the_first_error_in_input_order_wins(slow_batches: Path) -> None:
    data = stream(200, broken=(37, 120, 190))
    runs = [run_cmhash(["--no-config", "--workers", n, "-"], stdin=data) for n in ("1", "2", "4")]
    assert {r.code for r in runs} == {2}
    assert len({r.stderr for r in runs}) == 1
    line = data[: data.index(b"name: [c")].count(b"\n") + 2  # libyaml: the line after
    assert f"<stdin>:{line}:" in runs[0].stderr


def _documents(got: list[pool.Batch]) -> list[tuple[int, int]]:
    return [(si, d) for batch in got for si, first, end in batch for d in range(first, end)]


def test_batches_cover_the_work_in_order() -> None:
    cut_lists = [list(range(0, 1001, 10))]  # 100 documents of 10 bytes
    got = pool.batches(cut_lists, 7)
    assert _documents(got) == [(0, d) for d in range(100)]
    assert len(got) == 7
    assert all(first < end for batch in got for _, first, end in batch)
    assert {pool._size(cut_lists, b)[1] for b in got[:-1]} == {15}  # 143 bytes a share


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.lists(st.integers(1, 5000), max_size=30), min_size=1, max_size=8),
    st.integers(1, 40),
)
def test_batches_of_any_sources_are_contiguous_and_at_most_count(
    sizes: list[list[int]], count: int
) -> None:
    """Whatever the sources (empty ones, one big document, many small files): every
    document once, in input order, in at most ``count`` batches of contiguous documents,
    none empty; and no batch goes on past a document that starts after its share, unless
    it is the last."""
    cut_lists = [[0, *itertools.accumulate(docs)] for docs in sizes]
    got = pool.batches(cut_lists, count)
    assert _documents(got) == [(si, d) for si, docs in enumerate(sizes) for d in range(len(docs))]
    assert len(got) <= count
    assert all(b and all(first < end for _, first, end in b) for b in got)
    share = (sum(c[-1] for c in cut_lists) or 1) / count
    for batch in got[:-1]:
        size, _ = pool._size(cut_lists, batch)
        last_si, _, last_end = batch[-1]
        last_doc = cut_lists[last_si][last_end] - cut_lists[last_si][last_end - 1]
        assert size - last_doc < share  # it ended at the first document past its share


def _analyze(data: bytes, n: int) -> tuple[list[Any], list[tuple[int, int]]]:
    """analyze_parallel over ``data`` with ``n`` processes: its results and what it told
    the progress bar."""
    from cmhash.app.pipeline import kind_table
    from cmhash.settings.stages import stages
    from cmhash.settings.values import Settings

    sources = [SourceText("<stdin>", data.decode())]
    told: list[tuple[int, int]] = []
    cut_lists = pool.all_cuts(sources)
    conf = Settings()
    got = list(
        pool.analyze_parallel(
            sources,
            kind_table(conf),
            stages(conf).analyze,
            cut_lists,
            n,
            lambda b, d: told.append((b, d)),
        )
    )
    return got, told


def _same(a: list[Any], b: list[Any]) -> bool:
    """The same summaries in the same order, however they were batched."""

    def flat(results: list[Any]) -> list[Any]:
        assert all(isinstance(r, tuple) for r in results)
        return [kept for r in results for kept in r[0]]

    return bool(flat(a) == flat(b))


def test_progress_counts_the_workers_batches_too() -> None:
    """The parent tells the progress bar of its own batches and of the workers' as their
    results come in, and of everything by the end."""
    data = stream(300)
    got, told = _analyze(data, 2)
    assert sum(b for b, _ in told) == sum(c.end - c.start for c in _chunks(data))
    assert sum(d for _, d in told) == len(_chunks(data)) == 600
    assert all(b >= 0 and d >= 0 for b, d in told)
    assert len(got) == len(pool.batches(pool.all_cuts([SourceText("-", data.decode())]), 32))


def _chunks(data: bytes) -> list[Chunk]:
    return split_chunks(data.decode())


def _in_a_worker(parent: int) -> bool:
    return os.getpid() != parent


@pytest.mark.parametrize(
    "failure",
    ["exits", "killed", "raises", "unpicklable"],
)
def test_what_a_worker_does_not_send_back_the_parent_does(
    monkeypatch: pytest.MonkeyPatch, failure: str
) -> None:
    """A worker that dies, is killed, meets a bug or makes a result that does not pickle
    loses nothing: the parent does its batches again, and the results are the same."""
    import signal

    data = stream(300)
    want, _ = _analyze(data, 1)  # one process: nothing forked
    parent = os.getpid()
    real = pool._analyze_batch

    def batch(b: pool.Batch) -> pool.BatchResult:
        if _in_a_worker(parent):
            if failure == "exits":
                os._exit(0)
            if failure == "killed":
                os.kill(os.getpid(), signal.SIGKILL)
            if failure == "raises":
                raise RuntimeError("a bug")
            return [(0, lambda: None)], True  # type: ignore[list-item]
        return real(b)

    monkeypatch.setattr(pool, "_analyze_batch", batch)
    got, told = _analyze(data, 3)
    assert _same(got, want)
    assert sum(d for _, d in told) == 600


def test_a_bug_in_every_process_is_met_by_the_parent(monkeypatch: pytest.MonkeyPatch) -> None:
    """A bug the workers meet, the parent meets again when it does their batches: the
    run ends as it would in one process (exit 3, the parent's own report)."""
    from cmhash.analyze import chunk

    data = stream(200)
    real = chunk.analyze_chunk

    def analyze_chunk(src: SourceText, index: int, *args: Any) -> Any:
        if index >= 300:  # the second half of the stream
            raise RuntimeError("a bug in the map stage")
        return real(src, index, *args)

    monkeypatch.setattr(chunk, "analyze_chunk", analyze_chunk)
    runs = [run_cmhash(["--no-config", "--workers", n, "-"], stdin=data) for n in "123"]
    assert [r.code for r in runs] == [3, 3, 3]
    assert "internal error (RuntimeError at test_pool.py:" in runs[0].stderr
    assert runs[0].stderr == runs[1].stderr == runs[2].stderr


def test_no_worker_outlives_an_interrupted_run(monkeypatch: pytest.MonkeyPatch) -> None:
    """Ctrl-C (or a bug) in the parent while the workers run: they are killed and reaped
    before the exception leaves the pool."""
    data = stream(300)
    parent = os.getpid()
    started: list[int] = []
    real_fork, real = os.fork, pool._analyze_batch

    def fork() -> int:
        pid = real_fork()
        if pid:
            started.append(pid)
        return pid

    def batch(b: pool.Batch) -> pool.BatchResult:
        if not _in_a_worker(parent):
            raise KeyboardInterrupt
        time.sleep(0.05)
        return real(b)

    monkeypatch.setattr(os, "fork", fork)
    monkeypatch.setattr(pool, "_analyze_batch", batch)
    with pytest.raises(KeyboardInterrupt):
        _analyze(data, 3)
    assert len(started) == 2
    for pid in started:
        with pytest.raises(ChildProcessError):  # already reaped
            os.waitpid(pid, os.WNOHANG)
    assert pool._WORK is None


def test_every_batch_number_is_handed_out_once() -> None:
    """The claim pipe: each number to exactly one reader, then end of file."""
    read_end = pool._claims(pool.MAX_BATCHES)
    pool._WORK = pool._Shared([], [], None, None, [], read_end)  # type: ignore[arg-type]
    try:
        got = []
        while (i := pool._claim()) is not None:
            got.append(i)
        assert got == list(range(pool.MAX_BATCHES))
        assert pool._claim() is None
    finally:
        pool._WORK = None
        os.close(read_end)


def test_many_workers_are_capped_by_the_batches() -> None:
    """More workers than batches (or than the claim pipe holds) still work: the batches
    are capped, and no process is started that would find nothing to do."""
    data = stream(10)
    one = run_cmhash(["--no-config", "--workers", "1", "-"], stdin=data)
    many = run_cmhash(["--no-config", "--workers", "300", "-"], stdin=data)
    assert one.code == many.code == 0 and one.stdout == many.stdout
    assert 300 * pool.BATCHES_PER_PROCESS > pool.MAX_BATCHES


def test_big_inputs_are_cut_into_more_batches() -> None:
    """16 batches a process; for a big input more, none over BATCH_BYTES (so the last
    ones end close together); never more than the claim pipe holds."""
    assert pool.batch_count(2, 13 * 2**20) == 32
    assert pool.batch_count(2, 131 * 2**20) == 131 * 2
    assert pool.batch_count(4, 2**40) == pool.MAX_BATCHES
    assert pool.batch_count(300, 1) == pool.MAX_BATCHES


def test_a_worker_does_not_wait_for_the_parent_to_read(monkeypatch: pytest.MonkeyPatch) -> None:
    """Results bigger than the pipe (tiny documents pack to about twice their text) wait
    in the worker, which goes on working while the parent is busy with its own batch;
    all of them arrive."""
    data = stream(3000)
    want, _ = _analyze(data, 1)
    parent = os.getpid()
    real = pool._analyze_batch
    monkeypatch.setattr(pool, "PIPE_SIZE", 4096)  # one page

    in_parent = []

    def batch(b: pool.Batch) -> pool.BatchResult:
        if not _in_a_worker(parent):
            in_parent.append(b)
            time.sleep(0.3)  # a slow parent: the worker must not wait for it
        return real(b)

    monkeypatch.setattr(pool, "_analyze_batch", batch)
    got, told = _analyze(data, 2)
    assert _same(got, want)
    assert sum(d for _, d in told) == 6000
    # the parent does few batches (each 0.3 s); the worker does the rest meanwhile
    # (counted, not timed: with blocking writes the parent did about 16 of them)
    assert len(in_parent) < 10, len(in_parent)


def _no_fork_after(monkeypatch: pytest.MonkeyPatch, started: int, exc: OSError) -> list[int]:
    """``os.fork`` works ``started`` times, then fails with ``exc`` (as under a
    container's pids limit: EAGAIN); the pids of the workers it started."""
    pids: list[int] = []

    def fork() -> int:
        if len(pids) >= started:
            raise exc
        pid = REAL_FORK()
        if pid:
            pids.append(pid)
        return pid

    monkeypatch.setattr(os, "fork", fork)
    return pids


@pytest.mark.parametrize(
    ("started", "exc"),
    [
        (0, BlockingIOError(11, "Resource temporarily unavailable")),  # pids limit
        (1, BlockingIOError(11, "Resource temporarily unavailable")),
        (0, OSError(12, "Cannot allocate memory")),
    ],
)
def test_a_worker_that_cannot_be_forked_leaves_its_work_to_the_others(
    monkeypatch: pytest.MonkeyPatch, started: int, exc: OSError
) -> None:
    """A fork that fails is one process fewer, not a crash (it was exit 3): the workers
    started and the parent do the work, the output is the same, and ``-v`` says so."""
    data = stream(300)
    want = run_cmhash(["--no-config", "--workers", "1", "-"], stdin=data)
    first = _no_fork_after(monkeypatch, started, exc)
    quiet = run_cmhash(["--no-config", "--workers", "3", "-"], stdin=data)
    assert (quiet.code, quiet.stdout, quiet.stderr) == (0, want.stdout, want.stderr)
    second = _no_fork_after(monkeypatch, started, exc)
    told = run_cmhash(["--no-config", "-v", "--workers", "3", "-"], stdin=data)
    assert (told.code, told.stdout) == (0, want.stdout)
    doing = "cmhash itself does" if started == 0 else "2 processes do"
    note = f"cmhash: note: could not start a worker process ({exc.strerror}): {doing} the work"
    assert note in told.stderr.splitlines()
    assert len(first) == len(second) == started
    for pid in first + second:
        with pytest.raises(ChildProcessError):  # every worker started was reaped
            os.waitpid(pid, os.WNOHANG)


def test_no_pipe_for_a_worker_is_one_process_fewer(monkeypatch: pytest.MonkeyPatch) -> None:
    """Out of file descriptors for a worker's pipe (EMFILE): the same as a failed fork."""
    data = stream(300)
    want = run_cmhash(["--no-config", "--workers", "1", "-"], stdin=data)
    real_pipe = os.pipe
    calls = itertools.count()

    def pipe() -> tuple[int, int]:
        if next(calls) >= 1:  # the claims pipe opens; no worker's pipe does
            raise OSError(24, "Too many open files")
        return real_pipe()

    monkeypatch.setattr(os, "pipe", pipe)
    got = run_cmhash(["--no-config", "-v", "--workers", "2", "-"], stdin=data)
    assert (got.code, got.stdout) == (0, want.stdout)
    assert "could not start a worker process (Too many open files)" in got.stderr


def test_the_console_script_survives_a_pids_limit(tmp_path: Path) -> None:
    """The real entry point in its own process, every fork failing with EAGAIN: exit 0,
    the output of one process, no traceback."""
    import subprocess
    import sys

    path = tmp_path / "in.yaml"
    path.write_bytes(stream(300))
    want = run_cmhash(["--no-config", "--workers", "1", str(path)])
    script = (
        "import errno, os, sys\n"
        "def fork():\n"
        "    raise BlockingIOError(errno.EAGAIN, os.strerror(errno.EAGAIN))\n"
        "os.fork = fork\n"
        "sys.argv = ['cmhash', *sys.argv[1:]]\n"
        "from cmhash.__main__ import entry\n"
        "entry()\n"
    )
    res = subprocess.run(
        [sys.executable, "-c", script, "--no-config", "-v", "--workers", "4", str(path)],
        capture_output=True,
    )
    assert res.returncode == 0, res.stderr
    assert res.stdout == want.stdout
    assert res.stderr.decode().splitlines() == [
        "cmhash: note: could not start a worker process (Resource temporarily unavailable): "
        "cmhash itself does the work"
    ]

"""The parallel map stage (analyze/pool.py): the parent and the forked workers claim
batches from one counter; results come back in input order whoever did them, and the
first input error in input order wins, as with one process."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import pytest
from conftest import run_cmhash

from cmhash.analyze import pool
from cmhash.read.source import SourceText

pytestmark = pytest.mark.skipif(not pool.can_fork(), reason="the pool forks")

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
    work = pool.all_chunks([SourceText("<stdin>", data.decode())])
    assert len(pids) == len(pool.batches(work, 3 * 16))  # every batch done once
    assert str(os.getpid()) in pids  # the parent took its share
    assert len(set(pids)) >= 2  # and so did a worker


def test_the_first_error_in_input_order_wins(slow_batches: Path) -> None:
    data = stream(200, broken=(37, 120, 190))
    runs = [run_cmhash(["--no-config", "--workers", n, "-"], stdin=data) for n in ("1", "2", "4")]
    assert {r.code for r in runs} == {2}
    assert len({r.stderr for r in runs}) == 1
    line = data[: data.index(b"name: [c")].count(b"\n") + 2  # libyaml: the line after
    assert f"<stdin>:{line}:" in runs[0].stderr


def test_batches_cover_the_work_in_order() -> None:
    work = [(0, i, pool.Chunk(i * 10, i * 10 + 10)) for i in range(100)]
    got = pool.batches(work, 7)
    assert [w for b in got for w in b] == work
    assert len(got) == 7


def test_the_workers_results_are_counted_as_they_come_back() -> None:
    """While the parent works, whatever the workers have sent back is taken (and the
    progress bar told) without waiting; at the end, everything, waiting."""
    import multiprocessing

    class Pending:
        def __init__(self) -> None:
            self.ready: list[object] = [(1, "one"), None, (0, "zero")]
            self.waited = False

        def next(self, timeout: float | None = None) -> object:
            if self.ready:
                return self.ready.pop(0)
            if timeout == 0:
                raise multiprocessing.TimeoutError
            self.waited = True
            raise StopIteration

    todo = [[(0, 0, pool.Chunk(0, 5))], [(0, 1, pool.Chunk(5, 12))]]
    results: list[Any] = [None, None]
    told: list[tuple[int, int]] = []
    theirs = Pending()
    pool._collect_results(theirs, results, todo, lambda b, d: told.append((b, d)), wait=False)
    assert results == ["zero", "one"] and told == [(7, 1), (5, 1)] and not theirs.waited
    pool._collect_results(theirs, results, todo, lambda b, d: told.append((b, d)), wait=True)
    assert theirs.waited

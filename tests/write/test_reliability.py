"""No data lost: --in-place is all or nothing, never writes through a symlink out of
the tree, survives kills file by file, and Ctrl-C / a closed stdout exit cleanly."""

from __future__ import annotations

import errno
import os
import signal
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from conftest import cmhash_command, run_cmhash

CM = b'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cfg\ndata:\n  a: "1"\n'


def dep(name: str) -> bytes:
    return (
        b"apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: "
        + name.encode()
        + b"\nspec:\n  template:\n    spec:\n      containers:\n      - name: main\n"
        b"        envFrom:\n        - configMapRef: {name: cfg}\n"
    )


def make_tree(root: Path, n: int = 6) -> dict[Path, bytes]:
    root.mkdir(parents=True, exist_ok=True)
    files = {root / "config.yaml": CM}
    for i in range(n):
        files[root / f"app{i}.yaml"] = dep(f"app{i}")
    for path, data in files.items():
        path.write_bytes(data)
    return files


def snapshot(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()
    }


# ---------------------------------------------------------------- all or nothing


def test_in_place_rewrites_every_changed_file(tmp_path: Path) -> None:
    files = make_tree(tmp_path / "m")
    res = run_cmhash(["--no-config", "-i", str(tmp_path / "m")])
    assert res.code == 0, res.stderr
    after = snapshot(tmp_path / "m")
    assert after["config.yaml"] == CM
    assert all(b"checksum/config" in after[f"app{i}.yaml"] for i in range(6))
    assert len(after) == len(files)  # no temp file left behind


def failing_at(n: int, exc: BaseException, real: Callable[..., Any]) -> Callable[..., Any]:
    """``real``, except that its n-th call raises ``exc``."""
    calls = {"n": 0}

    def wrapper(*args: Any) -> Any:
        calls["n"] += 1
        if calls["n"] == n:
            raise exc
        return real(*args)

    return wrapper


def _in_place_with(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, *, replace: Any = None, stage: Any = None
) -> tuple[Any, dict[str, bytes]]:
    import cmhash.write.writer as writer

    make_tree(tmp_path / "m")
    before = snapshot(tmp_path / "m")
    if replace is not None:
        monkeypatch.setattr(writer.write_files, "__kwdefaults__", {"replace": replace})
    if stage is not None:
        monkeypatch.setattr(writer, "_stage", stage(writer._stage))
    return run_cmhash(["--no-config", "-i", str(tmp_path / "m")]), before


@pytest.mark.parametrize("fail_at", [1, 3, 6])
def test_failing_rename_partway_leaves_every_file_as_it_was(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fail_at: int
) -> None:
    flaky = failing_at(fail_at, OSError(errno.EIO, "Input/output error"), os.replace)
    res, before = _in_place_with(tmp_path, monkeypatch, replace=flaky)
    assert res.code == 2
    assert "cannot replace: Input/output error; no file was changed" in res.stderr
    assert "Traceback" not in res.stderr
    assert snapshot(tmp_path / "m") == before


def test_failing_write_partway_leaves_every_file_as_it_was(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    full_disk = OSError(errno.ENOSPC, "No space left on device")
    res, before = _in_place_with(
        tmp_path, monkeypatch, stage=lambda real: failing_at(4, full_disk, real)
    )
    assert res.code == 2
    assert "cannot write: No space left on device; no file was changed" in res.stderr
    assert snapshot(tmp_path / "m") == before


def test_ctrl_c_while_replacing_restores_the_originals(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    interrupted = failing_at(3, KeyboardInterrupt(), os.replace)
    res, before = _in_place_with(tmp_path, monkeypatch, replace=interrupted)
    assert res.code == 130 and "interrupted" in res.stderr
    assert snapshot(tmp_path / "m") == before


def test_file_changed_on_disk_meanwhile_is_not_overwritten(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    make_tree(tmp_path / "m")
    import cmhash.app.pipeline as app

    real_run = app.run

    def edit_meanwhile(*args, **kwargs):  # type: ignore[no-untyped-def]
        result = real_run(*args, **kwargs)
        (tmp_path / "m" / "app2.yaml").write_bytes(dep("someone-else"))
        return result

    monkeypatch.setattr(app, "run", edit_meanwhile)
    before = None
    res = run_cmhash(["--no-config", "-i", str(tmp_path / "m")])
    assert res.code == 2
    assert "app2.yaml: changed on disk while cmhash was running" in res.stderr
    after = snapshot(tmp_path / "m")
    assert after["app2.yaml"] == dep("someone-else")
    assert all(b"checksum" not in v for v in after.values()), before


def test_bad_file_in_batch_writes_nothing(tmp_path: Path) -> None:
    make_tree(tmp_path / "m")
    (tmp_path / "m" / "zz-broken.yaml").write_bytes(b"kind: [unclosed\n")
    before = snapshot(tmp_path / "m")
    res = run_cmhash(["--no-config", "-i", str(tmp_path / "m")])
    assert res.code == 2 and res.stdout == b""
    assert snapshot(tmp_path / "m") == before


def test_mode_is_kept(tmp_path: Path) -> None:
    make_tree(tmp_path / "m")
    target = tmp_path / "m" / "app1.yaml"
    target.chmod(0o640)
    assert run_cmhash(["--no-config", "-i", str(tmp_path / "m")]).code == 0
    assert target.stat().st_mode & 0o777 == 0o640


# ---------------------------------------------------------------- symlinks


def test_symlink_out_of_the_tree_is_refused(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    secret_place = outside / "app.yaml"
    secret_place.write_bytes(dep("app"))
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / "config.yaml").write_bytes(CM)
    (tree / "app.yaml").symlink_to(secret_place)
    res = run_cmhash(["--no-config", "-i", str(tree)])
    assert res.code == 2
    assert "is a symlink to" in res.stderr and "outside the input tree" in res.stderr
    assert secret_place.read_bytes() == dep("app")
    assert (tree / "app.yaml").is_symlink()


def test_symlink_inside_the_tree_updates_the_target_and_keeps_the_link(tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    (tree / "real").mkdir(parents=True)
    (tree / "config.yaml").write_bytes(CM)
    (tree / "real" / "app.yaml").write_bytes(dep("app"))
    (tree / "app.yaml").symlink_to(tree / "real" / "app.yaml")
    res = run_cmhash(["--no-config", "-i", str(tree)])
    assert res.code == 0, res.stderr
    assert (tree / "app.yaml").is_symlink()
    assert b"checksum/config" in (tree / "real" / "app.yaml").read_bytes()


def test_symlink_loop_is_a_clear_error(tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / "a.yaml").symlink_to(tree / "b.yaml")
    (tree / "b.yaml").symlink_to(tree / "a.yaml")
    res = run_cmhash(["--no-config", str(tree)])
    assert res.code == 2 and res.stdout == b""
    assert "Too many levels of symbolic links" in res.stderr


# ---------------------------------------------------------------- kills and signals


def test_killed_mid_run_leaves_each_file_old_or_new(tmp_path: Path) -> None:
    """SIGKILL at many moments of an --in-place run over 200 files: every file is
    always wholly the old or wholly the new content, never a mix or truncated."""
    tree = tmp_path / "m"
    files = make_tree(tree, n=200)
    finished = subprocess.run(
        [*cmhash_command(), "--no-config", "-i", str(tree)], check=True, capture_output=True
    )
    assert finished.returncode == 0
    new = {p: p.read_bytes() for p in files}
    for delay in (0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.4):
        for p, data in files.items():
            p.write_bytes(data)
        proc = subprocess.Popen(
            [*cmhash_command(), "--no-config", "-i", str(tree)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        time.sleep(delay)
        proc.kill()
        proc.wait()
        for p in files:
            assert p.read_bytes() in (files[p], new[p]), p
        for temp in tree.glob(".cmhash-*.tmp"):  # what a kill may leave: complete temps
            temp.unlink()


def _stream(n: int) -> bytes:
    return CM + b"".join(b"---\n" + dep(f"app{i}") for i in range(n))


def _as_in_a_terminal() -> None:
    """Ctrl-C reaches a command typed at a terminal. A CI job may run the tests in the
    background, where the shell makes SIGINT ignored, and children inherit that."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _children(pid: int) -> list[str]:
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as fh:
            return fh.read().split()
    except OSError:
        return []


@pytest.mark.parametrize("workers", ["1", "2"])
def test_ctrl_c_exits_130_without_traceback(tmp_path: Path, workers: str) -> None:
    big = tmp_path / "big.yaml"
    big.write_bytes(_stream(150000))  # ~30 MB: seconds of work on any machine
    proc = subprocess.Popen(
        [*cmhash_command(), "--no-config", "--workers", workers, str(big)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        preexec_fn=_as_in_a_terminal,
    )
    deadline = time.monotonic() + 30
    # interrupt mid-analysis: once the workers run (2), or a moment after start (1)
    while time.monotonic() < deadline and proc.poll() is None:
        if (workers == "2" and _children(proc.pid)) or (
            workers == "1" and time.monotonic() > deadline - 29
        ):
            break
        time.sleep(0.05)
    time.sleep(0.3)
    assert proc.poll() is None, "finished before it could be interrupted"
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert err.decode().strip().splitlines() == ["cmhash: interrupted"]


def test_ctrl_c_while_reading_stdin() -> None:
    with subprocess.Popen(
        [*cmhash_command(), "--no-config"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        preexec_fn=_as_in_a_terminal,
    ) as proc:
        time.sleep(0.5)  # blocked reading stdin, as `cmhash` typed alone in a terminal
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=30)
        assert proc.returncode == 130 and out == b""
        assert err.decode().strip() == "cmhash: interrupted"


# ------------------------------------------------------------------ reading a file


def test_a_regular_file_is_read_whole(tmp_path: Path) -> None:
    from cmhash.read.source import read_file

    data = b"a: 1\n" * 100_000
    path = tmp_path / "big.yaml"
    path.write_bytes(data)
    assert read_file(str(path), 10**9) == data
    assert read_file(str(path), len(data)) == data  # at the limit: the loop reads it
    path.write_bytes(b"")
    assert read_file(str(path), 10) == b""


@pytest.mark.parametrize("reported", [5000, 6000])  # it grew since / it shrank since
def test_a_file_that_changes_size_while_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, reported: int
) -> None:
    """Read to its end whatever fstat said, and never past the limit."""
    from cmhash.errors import InputError
    from cmhash.read import source

    path = tmp_path / "f.yaml"
    data = b"a: 1\n" * 1000 + (b"more: 2\n" * 10 if reported == 5000 else b"")
    path.write_bytes(data)

    class Stat:
        def __init__(self, fd: int) -> None:
            self.st_size = reported

    monkeypatch.setattr(source.os, "fstat", Stat)
    assert source.read_file(str(path), 10**6) == data
    if len(data) > reported:
        with pytest.raises(InputError, match="over the limit of 5010 bytes"):
            source.read_file(str(path), 5010)
        with pytest.raises(InputError, match="over the limit of 5000 bytes"):
            source.read_file(str(path), 5000)  # fstat said: at the limit
        assert source.read_file(str(path), len(data)) == data

"""``-o FILE`` writes where the user means it, as moreutils' sponge(1) does ("If the
output file is a special file or symlink, the data will be written to it"): a regular
file atomically; through a symlink, its target (the link stays); a character device or a
FIFO as a stream, never replaced by a regular file (``-o /dev/null`` run as root once
turned the machine's /dev/null into a plain file)."""

from __future__ import annotations

import os
import stat
import subprocess
import threading
from pathlib import Path

import pytest
from conftest import ROOT, cmhash_command

EXAMPLES = ROOT / "examples" / "lock"
LOCK = ["lock", str(EXAMPLES / "cluster.yaml"), "--for", str(EXAMPLES / "manifests.yaml"), "-q"]
REPORT = ["report", str(EXAMPLES / "manifests.yaml"), str(EXAMPLES / "manifests.yaml")]


def _run(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        cmhash_command() + args, cwd=cwd, capture_output=True, text=True, timeout=60
    )


def _expected(args: list[str], cwd: Path) -> str:
    done = _run(args, cwd)
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.mark.parametrize("args", [LOCK, REPORT], ids=["lock", "report"])
def test_a_symlink_s_target_is_replaced_and_the_link_stays(tmp_path: Path, args: list[str]) -> None:
    (tmp_path / "real.out").write_text("old\n")
    (tmp_path / "link.out").symlink_to("real.out")
    done = _run([*args, "-o", "link.out"], tmp_path)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "link.out").is_symlink()
    assert os.readlink(tmp_path / "link.out") == "real.out"
    assert (tmp_path / "real.out").read_text() == _expected(args, tmp_path)


@pytest.mark.parametrize("args", [LOCK, REPORT], ids=["lock", "report"])
def test_a_fifo_is_written_to_as_a_stream(tmp_path: Path, args: list[str]) -> None:
    fifo = tmp_path / "out.fifo"
    os.mkfifo(fifo)
    got: list[bytes] = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()), daemon=True)
    reader.start()
    done = _run([*args, "-o", str(fifo)], tmp_path)  # (before: read the FIFO first, hung)
    reader.join(10)
    assert done.returncode == 0, done.stderr
    assert stat.S_ISFIFO(fifo.stat().st_mode)
    assert got == [_expected(args, tmp_path).encode()]


@pytest.mark.parametrize("args", [LOCK, REPORT], ids=["lock", "report"])
def test_a_character_device_stays_one(tmp_path: Path, args: list[str]) -> None:
    """Through a symlink to /dev/null (any user), and a node of its own (root only)."""
    (tmp_path / "null-link").symlink_to("/dev/null")
    targets = ["null-link"]
    if os.geteuid() == 0:
        os.mknod(tmp_path / "null", 0o666 | stat.S_IFCHR, os.makedev(1, 3))
        targets.append("null")
    for target in targets:
        done = _run([*args, "-o", target], tmp_path)
        assert done.returncode == 0, done.stderr
        assert stat.S_ISCHR((tmp_path / target).stat().st_mode), target
    assert (tmp_path / "null-link").is_symlink()
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)


def test_a_directory_is_refused_in_one_line(tmp_path: Path) -> None:
    (tmp_path / "d").mkdir()
    done = _run([*LOCK, "-o", "d"], tmp_path)
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr

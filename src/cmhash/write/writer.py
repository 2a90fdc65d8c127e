"""--in-place, all or nothing.

Every file was planned and verified before this runs. Then, in three steps:

1. check every target: a regular file, reached through no symlink that leads out of the
   input tree, and still holding the bytes that were read (nobody edited it meanwhile);
2. stage every new content in a temp file beside its target (fsync'd, same mode and,
   when possible, owner);
3. rename the temp files over their targets.

A failure in steps 1-2 removes the temp files: no file was touched. A failure in step 3
puts back the originals of the files already replaced, from memory and again by temp
file + rename. Steps 2 and 3 run with SIGINT, SIGTERM and SIGHUP held off
(``signals.held``) and check for one between files: a signal never lands between a
rename and its bookkeeping, and one that arrives rolls everything back, then stops the
run as ``signals.RolledBack`` (one line that says so; exit 130, 143 or 129); one after
the last rename ends it with its code and a line that says the files are new
(``signals.wrote``). A signal
the parent made ignored (``nohup``, a background job) stops nothing. Each file is at
every moment either wholly old or wholly new, even if the process is killed; only
SIGKILL can leave a hidden ``.cmhash-*.tmp``.
"""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from cmhash.errors import InputError
from cmhash.read.source import STDIN
from cmhash.runtime.signals import held, wrote

if TYPE_CHECKING:
    from cmhash.write.emit import FileResult

TEMP_PREFIX = ".cmhash-"
TEMP_SUFFIX = ".tmp"


class WriteError(InputError):
    """A file could not be written; every file is as it was (exit code 2)."""


@dataclass
class _Job:
    display: str
    target: str  # the real file (symlinks resolved)
    old: bytes
    new: bytes
    mode: int
    uid: int
    gid: int
    temp: str | None = None
    replaced: bool = False


def input_roots(paths: Sequence[str]) -> list[str]:
    """The tree a run may write into: each directory argument, and the directory of
    each file argument (real paths)."""
    real = [os.path.realpath(p) for p in paths if p != STDIN]
    return [r if os.path.isdir(r) else os.path.dirname(r) for r in real]


def _check(f: FileResult, roots: Sequence[str]) -> _Job:
    path = f.source.path
    target = os.path.realpath(path)
    if target != os.path.abspath(path) and not any(
        os.path.commonpath([target, r]) == r for r in roots
    ):
        raise WriteError(
            f"is a symlink to {target}, outside the input tree; refusing to "
            "write through it (pass the real file instead)",
            path=path,
        )
    try:
        st = os.stat(target)
        if not stat.S_ISREG(st.st_mode):
            raise WriteError("not a regular file; refusing to rewrite it", path=path)
        with open(target, "rb") as fh:
            current = fh.read()
    except OSError as exc:
        raise WriteError(f"cannot read back before writing: {exc.strerror}", path=path) from None
    old = f.source.encode(f.source.text)
    if current != old:
        raise WriteError("changed on disk while cmhash was running; run it again", path=path)
    return _Job(
        path, target, old, f.source.encode(f.text), stat.S_IMODE(st.st_mode), st.st_uid, st.st_gid
    )


def _stage(target: str, data: bytes, mode: int, uid: int, gid: int) -> str:
    import tempfile  # imported here: a plain run never writes files

    fd, temp = tempfile.mkstemp(prefix=TEMP_PREFIX, suffix=TEMP_SUFFIX, dir=os.path.dirname(target))
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(temp, mode)
        if hasattr(os, "chown"):
            # not allowed unless root: the file is ours, as with any editor
            with contextlib.suppress(OSError):
                os.chown(temp, uid, gid)
    except BaseException:
        _unlink(temp)
        raise
    return temp


def _unlink(path: str | None) -> None:
    if path is not None:
        with contextlib.suppress(OSError):
            os.unlink(path)


def _fsync_dir(path: str) -> None:
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        with contextlib.suppress(OSError):
            os.fsync(fd)
    finally:
        os.close(fd)


def write_files(
    files: Sequence[FileResult],
    paths: Sequence[str],
    *,
    replace: Callable[[str, str], None] = os.replace,
) -> None:
    """Replace every changed file, or none. ``paths``: the input arguments."""
    roots = input_roots(paths)
    jobs = [_check(f, roots) for f in files]
    with held() as signals:
        try:
            _commit(jobs, replace, signals.check)
        except BaseException:
            _roll_back(jobs, replace)
            raise
        wrote(len(jobs))  # (still held: a signal from here on says the files are new)
    for d in sorted({os.path.dirname(j.target) for j in jobs}):
        _fsync_dir(d)


def _commit(
    jobs: list[_Job], replace: Callable[[str, str], None], check: Callable[[], None]
) -> None:
    """Stage every file, then rename each over its target. ``check`` raises when a
    signal waits; it runs between files, never between a rename and its record."""
    for job in jobs:
        check()
        try:
            job.temp = _stage(job.target, job.new, job.mode, job.uid, job.gid)
        except OSError as exc:
            raise WriteError(
                f"cannot write: {exc.strerror}; no file was changed", path=job.display
            ) from None
    for job in jobs:
        check()
        # intent first: the roll-back restores a file whose rename may or may not have
        # happened (the same bytes, if not), and removes the temp file if it is still
        # there (a renamed temp name no longer exists; mkstemp names are never reused)
        job.replaced = True
        try:
            replace(job.temp, job.target)  # type: ignore[arg-type]
        except OSError as exc:
            raise WriteError(
                f"cannot replace: {exc.strerror}; no file was changed", path=job.display
            ) from None
        job.temp = None
    check()  # a signal during the last rename: still all or nothing


def _roll_back(jobs: list[_Job], replace: Callable[[str, str], None]) -> None:
    failed = []
    for job in jobs:
        _unlink(job.temp)
        job.temp = None
        if job.replaced:
            temp = None
            try:
                temp = _stage(job.target, job.old, job.mode, job.uid, job.gid)
                replace(temp, job.target)
            except OSError:
                _unlink(temp)
                failed.append(job.display)
    if failed:
        raise WriteError(
            "could not restore after a failed write; these files hold the "
            "new content: " + ", ".join(failed)
        )


_STREAM_DIRS = ("/dev/", "/proc/")  # /dev/stdout, /dev/fd/3, /proc/self/fd/1: never renamed


def _stream(path: str) -> bool:
    """Whether ``path`` is written to as a stream, never replaced: a character device
    (``/dev/null``, a terminal), a FIFO, or anything under /dev or /proc (``/dev/stdout``
    reaches whatever the shell opened). A FIFO is opened for writing only: it blocks
    until a reader opens it, as a shell's redirection does."""
    if os.path.abspath(path).startswith(_STREAM_DIRS):
        return True
    try:
        st = os.stat(path)  # (through symlinks: what the path reaches)
    except OSError:
        return False
    return stat.S_ISCHR(st.st_mode) or stat.S_ISFIFO(st.st_mode)


def is_regular(path: str) -> bool:
    """Whether ``path`` reaches a regular file (one that may be read back to compare:
    reading a FIFO would block, a device gives nothing useful)."""
    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except OSError:
        return False


def write_new_file(path: str, text: str, *, mode: int | None = None) -> None:
    """Write a file we produce (a report, the lock, the kustomize plugin) where the user
    means it, as moreutils' sponge(1) does ("If the output file is a special file or
    symlink, the data will be written to it"): a regular file (or a new one) atomically,
    temp file beside it, then rename, so a reader never sees it half written and an
    existing file keeps its mode unless ``mode`` is given; through a symlink, its target
    is the file replaced (the link stays); a character device, a FIFO, ``/dev/stdout``
    are written to as a stream (never replaced by a regular file); anything else (a
    directory, a block device, a socket) is refused."""
    if _stream(path):
        try:
            with open(path, "wb") as fh:
                fh.write(text.encode("utf-8"))
        except OSError as exc:
            raise WriteError(f"cannot write {path}: {exc.strerror}") from None
        return
    if os.path.exists(path) and not is_regular(path):
        raise WriteError(f"cannot write {path}: not a regular file, a device or a FIFO")
    target = os.path.realpath(path)  # (a symlink: its target is replaced, the link stays)
    directory = os.path.dirname(target)
    if not os.path.isdir(directory):
        raise WriteError(
            f"cannot write {path}: directory {os.path.dirname(path) or '.'} does not exist"
        )
    try:
        if mode is None:
            mode = stat.S_IMODE(os.stat(target).st_mode)
    except FileNotFoundError:
        umask = os.umask(0)
        os.umask(umask)
        mode = 0o666 & ~umask
    except OSError as exc:
        raise WriteError(f"cannot write {path}: {exc.strerror}") from None
    temp = None
    with held():  # no signal between the temp file's creation and its rename or removal
        try:
            temp = _stage(target, text.encode("utf-8"), mode, os.getuid(), os.getgid())
            os.replace(temp, target)
        except OSError as exc:
            _unlink(temp)
            raise WriteError(f"cannot write {path}: {exc.strerror}") from None
        except BaseException:
            _unlink(temp)
            raise
    _fsync_dir(directory)

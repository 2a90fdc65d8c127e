"""Whether stdin is an input, and what a run reads without PATH arguments (the rules
in ``read/inputs.py``'s docstring and the README's "Using cmhash in a repository"); and
what a run does with its result (``Mode``), which decides both."""

from __future__ import annotations

import enum
import io
import os
import stat
from collections.abc import Callable, Sequence
from typing import BinaryIO

from cmhash.errors import UsageError
from cmhash.read.source import STDIN


class Mode(enum.Enum):
    """What a run does with its result; chosen once from the flags (black's WriteBack)."""

    STREAM = "stream"  # the whole stream to stdout
    CHECK = "check"  # exit 1 if anything would change
    DIFF = "diff"  # a unified diff
    CHECK_DIFF = "check-diff"  # both
    IN_PLACE = "in-place"  # rewrite the files

    @classmethod
    def from_flags(cls, *, in_place: bool, check: bool, diff: bool) -> Mode:
        if in_place and (check or diff):
            raise UsageError("--in-place cannot be combined with --check or --diff")
        if in_place:
            return cls.IN_PLACE
        if check and diff:
            return cls.CHECK_DIFF
        return cls.CHECK if check else cls.DIFF if diff else cls.STREAM

    @property
    def writes_files(self) -> bool:
        return self is Mode.IN_PLACE

    @property
    def checks(self) -> bool:
        return self in (Mode.CHECK, Mode.CHECK_DIFF)

    @property
    def diffs(self) -> bool:
        return self in (Mode.DIFF, Mode.CHECK_DIFF)

    @property
    def flags(self) -> str:
        """The flags that choose this mode, then a space ("" for the stream)."""
        return {"stream": "", "in-place": "-i ", "check": "--check ", "diff": "--diff "}.get(
            self.value, "--check --diff "
        )

    @property
    def on_files(self) -> bool:
        """Modes about files in a repository (pre-commit, CI) rather than a stream."""
        return self is not Mode.STREAM


TERMINAL_HINT = (
    "reading manifests from the terminal: paste them and end with Ctrl-D, or name "
    "files or directories (cmhash --help)"
)


class Stdin(enum.Enum):
    """What fd 0 is, which decides whether it is an input at all."""

    TERMINAL = "a terminal"
    NOTHING = "/dev/null or closed"  # no one is giving anything
    GIVEN = "a pipe, socket or file"  # something gives data, even if none came

    @classmethod
    def of(cls, stream: BinaryIO | None) -> Stdin:
        if stream is None:  # fd 0 closed when Python started: sys.stdin is None
            return cls.NOTHING
        try:
            fd = stream.fileno()
        except (OSError, ValueError, io.UnsupportedOperation):
            return cls.GIVEN  # an in-memory stream: data handed over in-process
        try:
            mode = os.fstat(fd).st_mode
        except OSError:  # closed after start
            return cls.NOTHING
        if stream.isatty():
            return cls.TERMINAL
        return cls.NOTHING if stat.S_ISCHR(mode) else cls.GIVEN  # /dev/null, other devices


def _no_input(mode: Mode, config_file: str | None) -> UsageError:
    where = os.path.relpath(config_file) if config_file else ".cmhash.yaml"
    return UsageError(
        f"nothing to {'check' if mode.checks else 'read'}: no PATH given, no `paths:` in "
        f"{where}, and stdin is empty; name the manifests (cmhash {mode.flags}k8s/) or "
        f"set `paths: [k8s/]` in {where}"
    )


def choose(
    mode: Mode,
    kind: Stdin,
    config_paths: Sequence[str],
    config_file: str | None,
    read: Callable[[], bytes],
) -> tuple[list[str], bytes | None, list[str]]:
    """Without PATH arguments: (what to read, stdin's bytes if read already, notes)."""
    named = ", ".join(config_paths)
    where = os.path.relpath(config_file) if config_file else "the config file"
    if kind is not Stdin.GIVEN:  # a terminal, /dev/null, closed: the config's paths
        if config_paths:
            return list(config_paths), None, [f"reading {named} (paths of {where})"]
        if kind is Stdin.NOTHING and mode.on_files:
            raise _no_input(mode, config_file)
        return [STDIN], None, []
    piped = read()
    if not mode.on_files or piped:  # the stream mode: a pipe is the input, even empty
        if piped and mode.writes_files and config_paths:
            raise UsageError(
                f"data is piped to stdin, but --in-place would rewrite the paths of "
                f"{where} ({named}) instead; pass the paths explicitly, or pipe without "
                "--in-place"
            )
        notes = [f"reading stdin; the paths of {where} ({named}) are not read"] * bool(config_paths)
        return [STDIN], piped, notes
    # --check, --diff, -i and an empty pipe: pre-commit runs every hook so
    if config_paths:
        return list(config_paths), None, [f"stdin is empty: reading {named} (paths of {where})"]
    raise _no_input(mode, config_file)

"""What a run does with its result: one of five modes, chosen once from the flags
(black's ``WriteBack``); reading (stdin or not), delivering and the exit code follow it."""

from __future__ import annotations

import enum

from cmhash.errors import UsageError


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
    def on_files(self) -> bool:
        """Modes about files in a repository (pre-commit, CI) rather than a stream."""
        return self is not Mode.STREAM

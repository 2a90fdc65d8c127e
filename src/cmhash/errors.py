"""One error hierarchy; exits.py maps every outcome to its exit code."""

from __future__ import annotations

from typing import Any

EXIT_OK = 0
EXIT_CHANGED = 1
EXIT_INPUT = 2
EXIT_INTERNAL = 3
EXIT_INTERRUPTED = 130  # 128 + SIGINT; SIGTERM and SIGHUP: 128 + their number (143, 129)
EXIT_PIPE = 141  # 128 + SIGPIPE, what a shell reports for a writer whose reader left


def printable(path: str) -> str:
    """A path as messages, diffs and reports show it: a file name that is not UTF-8
    (undecodable bytes kept as surrogates by the file system encoding) with those bytes
    escaped as ``\\xNN``, so that nothing written as UTF-8 fails on it."""
    try:
        path.encode("utf-8")
    except UnicodeEncodeError:
        return path.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    return path


class CmhashError(Exception):
    """Base class for errors meant for people: one line, exit code 2."""

    exit_code = EXIT_INPUT

    def __init__(
        self,
        message: str,
        *,
        path: str | None = None,
        line: int | None = None,
        column: int | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.path = path
        self.line = line
        self.column = column

    def __str__(self) -> str:
        if self.path is None:
            return self.message
        where = printable(self.path)
        if self.line is not None:
            where += f":{self.line}" + (f":{self.column}" if self.column is not None else "")
        return f"{where}: {self.message}"


class InputError(CmhashError):
    """Bad input: YAML syntax, unreadable file, invalid object, unsafe edit."""


class TieError(InputError):
    """A reference to an object two directories define equally near (plan/scopes.py)."""


class UsageError(CmhashError):
    """Bad command line or option combination."""


class ConfigError(CmhashError):
    """Invalid configuration file or KRM functionConfig."""


class InternalError(CmhashError):
    """A bug in cmhash (self-check failed): exit code 3."""

    exit_code = EXIT_INTERNAL


class OutputClosed(Exception):
    """stdout was closed by its reader (``cmhash big.yaml | head``). Not an OSError, so
    that click does not turn it into exit code 1 (our "would change")."""


class NodeError(Exception):
    """Raised deep in the tree code with a character offset; the caller adds the file.

    ``public``: the message without any text quoted from the input (a tag, an anchor
    name, what the parser found). It is the one shown when the place may be inside a
    Secret, whose text must never reach a message."""

    def __init__(self, message: str, offset: int, public: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.offset = offset
        self.public = message if public is None else public

    def __reduce__(self) -> tuple[Any, ...]:
        # worker processes send it back to the parent (a workload's edit error): pickle
        # would call __init__ with the message alone, fail, and stop the pool for good
        return (NodeError, (self.message, self.offset, self.public))

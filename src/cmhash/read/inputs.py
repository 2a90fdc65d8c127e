"""What a run reads: the command line's paths, else stdin, else the config's ``paths``;
and which files of a repository are manifests at all.

**Never guess the input.** Piped data is what gets processed: a ``.cmhash.yaml`` with
``paths`` never replaces it. With no PATH argument:

* stdin is a terminal: the config's ``paths`` (if any; else stdin, as typed);
* stdin is not a terminal (a pipe, a file, ``/dev/null``): it is read; if it holds data,
  that is the input (a Helm post-renderer, ``kubectl kustomize | cmhash``, a KRM
  function), and the config's ``paths`` are not used (a note under ``-v``); if it is
  empty (pre-commit and CI jobs give an empty stdin), the config's ``paths``;
* ``--in-place`` rewrites files, so it reads the config's ``paths``; data piped in as
  well is an error, since one of the two would be ignored.

**Walking a repository.** Directories are read recursively in sorted order, and these
are skipped (each with one note under ``-v``):

* hidden files and directories (``.git``, ``.github``, ``.gitlab-ci.yml``...);
* paths matching an ``--exclude`` / ``exclude:`` pattern (gitignore syntax, relative to
  the walked directory; for a file named on the command line, to the current one);
* a Helm chart source: a directory holding ``Chart.yaml`` (its templates are not YAML
  until rendered), and any named file inside one;
* a file that is not a Kubernetes manifest: no document in it has a top-level
  ``apiVersion`` or ``kind`` (``kustomization.yaml`` without them, ``values.yaml``, CI
  files, ``docker-compose.yml``).

The last three rules also apply to files named on the command line with ``--check``,
``--diff`` or ``-i`` (pre-commit's ``pass_filenames`` names every changed YAML file).
Without them, a named file is read as given: a file that is not a manifest is an error
with its position, and stdin always is what it is.

Everything else is a manifest, and a broken one stays an error (exit 2).
"""

from __future__ import annotations

import enum
import os
import re
import stat
import sys
from collections.abc import Callable, Sequence
from typing import BinaryIO, NamedTuple

from cmhash.errors import InputError, UsageError
from cmhash.read.source import STDIN, SourceText, decode, read_file, read_limited

MANIFEST_SUFFIXES = (".yaml", ".yml", ".json")
CHART_FILE = "Chart.yaml"
# a top-level apiVersion or kind key, in YAML (column 0) or JSON (anywhere: one line)
_MANIFEST_KEY = re.compile(r'^(?:apiVersion|kind)[ \t]*:|"(?:apiVersion|kind)"\s*:', re.MULTILINE)


# cmhash's commands: a path named like one was most likely a command after options
COMMANDS = frozenset(
    (
        "explain",
        "report",
        "ci-report",
        "gitlab-note",
        "github-comment",
        "helm-plugin-dir",
        "install-kustomize-plugin",
    )
)


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


class Skipped(NamedTuple):
    path: str
    why: str


class Inputs(NamedTuple):
    sources: list[SourceText]
    skipped: list[Skipped]
    roots: list[str]  # the file and directory arguments actually read (for --in-place)
    notes: list[str]


class Excludes:
    """gitignore-style patterns (pathspec, imported only when there are any)."""

    def __init__(self, patterns: Sequence[str]) -> None:
        self.patterns = tuple(patterns)
        self._spec = None
        if self.patterns:
            import pathspec

            self._spec = pathspec.GitIgnoreSpec.from_lines(self.patterns)

    def match(self, relative: str, *, is_dir: bool = False) -> bool:
        if self._spec is None:
            return False
        rel = relative.replace(os.sep, "/")
        return bool(self._spec.match_file(rel + "/" if is_dir else rel))


def is_manifest_text(text: str) -> bool:
    return _MANIFEST_KEY.search(text) is not None


def _raise_walk_error(exc: OSError) -> None:
    raise InputError(f"cannot read directory: {exc.strerror}", path=exc.filename)


def walk(root: str, excludes: Excludes, skipped: list[Skipped]) -> list[str]:
    """Manifest candidates under ``root``, sorted."""
    found: list[str] = []
    for dirpath, dirnames, filenames in os.walk(root, onerror=_raise_walk_error):
        kept = []
        for d in sorted(dirnames):
            path = os.path.join(dirpath, d)
            rel = os.path.relpath(path, root)
            if d.startswith("."):
                continue  # hidden (.git, .github...): never rendered manifests; no note
            if excludes.match(rel, is_dir=True):
                skipped.append(Skipped(path + os.sep, "excluded"))
            elif os.path.isfile(os.path.join(path, CHART_FILE)):
                skipped.append(
                    Skipped(
                        path + os.sep,
                        "a Helm chart source (render it, then run cmhash on the output)",
                    )
                )
            else:
                kept.append(d)
        dirnames[:] = kept
        if dirpath == root and CHART_FILE in filenames:
            skipped.append(
                Skipped(root, "a Helm chart source (render it, then run cmhash on the output)")
            )
            dirnames[:] = []
            continue
        for name in filenames:
            if name.startswith(".") or not name.endswith(MANIFEST_SUFFIXES):
                continue
            path = os.path.join(dirpath, name)
            if excludes.match(os.path.relpath(path, root)):
                skipped.append(Skipped(path, "excluded"))
                continue
            try:
                regular = stat.S_ISREG(os.stat(path).st_mode)
            except OSError:
                regular = True  # broken link or loop: reading it reports the problem
            if not regular:  # a FIFO would block the run forever
                raise InputError(
                    "not a regular file (a FIFO, socket or device?); "
                    "name it explicitly or remove it from the tree",
                    path=path,
                )
            found.append(path)
    return sorted(found)


def _in_chart(path: str) -> bool:
    """Whether a named file lies inside a Helm chart source directory."""
    d = os.path.dirname(os.path.abspath(path))
    while True:
        if os.path.isfile(os.path.join(d, CHART_FILE)):
            return True
        parent = os.path.dirname(d)
        if parent == d:
            return False
        d = parent


def expand(
    args: Sequence[str], excludes: Excludes, skipped: list[Skipped], *, filter_named: bool
) -> list[tuple[str, bool]]:
    """(file, filtered) pairs: files as given, directories walked (sorted), '-' for stdin;
    each file once. ``filtered``: the repository rules apply to it (found by a walk, or
    named in a mode about files, as pre-commit names them)."""
    if STDIN in args and len(args) > 1:
        raise UsageError("'-' (stdin) cannot be combined with other paths")
    out: list[tuple[str, bool]] = []
    seen: set[str] = set()
    for p in args:
        if p == STDIN:
            out.append((p, False))
            continue
        if os.path.isdir(p):
            files = [(f, True) for f in walk(p, excludes, skipped)]
        elif os.path.lexists(p):
            if filter_named and excludes.match(os.path.relpath(p)):
                skipped.append(Skipped(p, "excluded"))
                continue
            if filter_named and (os.path.basename(p) == CHART_FILE or _in_chart(p)):
                skipped.append(
                    Skipped(
                        p, "inside a Helm chart source (render it, then run cmhash on the output)"
                    )
                )
                continue
            files = [(p, filter_named)]
        else:
            hint = f" (a command comes first: cmhash {p} [OPTIONS] ...)" if p in COMMANDS else ""
            raise InputError(f"no such file or directory{hint}", path=p)
        for f, filtered in files:
            key = os.path.realpath(f)
            if key not in seen:  # the same file named twice is read once
                seen.add(key)
                out.append((f, filtered))
    return out


def _read(
    paths: Sequence[tuple[str, bool]],
    max_bytes: int,
    stdin: Callable[[], bytes],
    skipped: list[Skipped],
) -> list[SourceText]:
    sources = []
    for path, filtered in paths:
        if path == STDIN:
            sources.append(decode(STDIN, stdin(), max_bytes=max_bytes))
            continue
        src = decode(path, read_file(path, max_bytes), max_bytes=max_bytes)
        if filtered and not is_manifest_text(src.text):
            skipped.append(
                Skipped(path, "not a Kubernetes manifest (no document has apiVersion or kind)")
            )
            continue
        sources.append(src)
    return sources


def select(
    args: Sequence[str],
    *,
    mode: Mode,
    config_paths: Sequence[str],
    config_file: str | None,
    excludes: Sequence[str],
    max_bytes: int,
    stdin: BinaryIO | None = None,
    stdin_is_tty: bool | None = None,
) -> Inputs:
    """The sources of one run, following the rules in the module docstring."""
    stream = stdin if stdin is not None else sys.stdin.buffer
    tty = stream.isatty() if stdin_is_tty is None else stdin_is_tty
    notes: list[str] = []
    piped: bytes | None = None
    chosen = list(args)
    if not chosen:
        chosen = [STDIN]
        if config_paths:
            named = ", ".join(config_paths)
            config_file = os.path.relpath(config_file) if config_file else "the config file"
            if not tty:
                piped = read_limited(stream, max_bytes, "<stdin>")
            if piped and mode.writes_files:
                raise UsageError(
                    f"data is piped to stdin, but --in-place would rewrite the "
                    f"paths of {config_file} ({named}) instead; pass the paths "
                    "explicitly, or pipe without --in-place"
                )
            if piped:
                notes.append(
                    f"reading stdin; the paths of {config_file} ({named}) are "
                    "only read when nothing is piped in"
                )
            else:
                chosen = list(config_paths)
                notes.append(f"reading {named} (paths of {config_file})")
    skipped: list[Skipped] = []
    files = expand(chosen, Excludes(excludes), skipped, filter_named=mode.on_files)
    if mode.writes_files and (STDIN, False) in files:
        raise UsageError("--in-place needs files, not stdin")
    sources = _read(
        files,
        max_bytes,
        lambda: piped if piped is not None else read_limited(stream, max_bytes, "<stdin>"),
        skipped,
    )
    notes.extend(f"skipped {s.path}: {s.why}" for s in skipped)
    return Inputs(sources, skipped, [p for p in chosen if p != STDIN], notes)

"""What a run reads: the command line's paths, else stdin, else the config's ``paths``;
and which files of a repository are manifests at all. The rules as users read them:
docs/concepts/repositories.md ("Using cmhash in a repository").

**Never guess the input.** What is piped is what gets processed, even when it is empty:
a ``.cmhash.yaml`` with ``paths`` never replaces it, so a failed render never turns into
the repository's manifests. Without PATH arguments it depends on what stdin is
(``Stdin.of``) and on the mode (``read/stdin.py`` ``choose``): a terminal, ``/dev/null``
or closed stdin gives nothing (the config's ``paths``); a pipe, socket or file is the
input in the stream mode, and with ``--check``, ``--diff`` or ``-i`` when it holds data
(pre-commit runs every hook with an empty pipe on stdin; ``-i`` refuses piped data). A
stream without objects (an empty render) passes through with a warning, exit 0
(``--strict``: 2); a named file without one is exit 2 in the stream mode.

**Walking a repository** (``walk``), in sorted order, skips, each with one note under
``-v``: hidden files and directories; ``--exclude`` / ``exclude:`` patterns (gitignore
syntax; one git would refuse is exit 2: ``exclude_problem``); a Helm chart source (a
directory holding ``Chart.yaml``: its templates are not YAML until rendered); a file
none of whose documents has a top-level ``apiVersion`` or ``kind`` (a JSON file by its
top-level object's keys); a link to a directory read already, by its real path (a loop).
The last three rules also apply to files named with ``--check``, ``--diff`` or ``-i``
(pre-commit's ``pass_filenames``); otherwise a named file is read as given. Everything
else is a manifest, and a broken one stays an error (exit 2). A file name that is not
UTF-8 is shown escaped (``errors.printable``).

**Nothing to read is no pass** (``refusal``, every mode): a chart source named itself (a
PATH or a config ``paths`` entry holding ``Chart.yaml``) is exit 2 with the command that
renders it; so is a run whose named directories (or whose stream mode) leave no manifest
at all, saying what was skipped. Only files named in a mode about files (pre-commit's
``pass_filenames``: it names whatever YAML changed) may leave nothing, exit 0.
"""

# No "from __future__ import annotations": typing compiles string NamedTuple fields at import

import os
import re
import stat
import sys
from collections.abc import Callable, Sequence
from typing import BinaryIO, NamedTuple

from cmhash.errors import CmhashError, InputError, UsageError, printable
from cmhash.read.source import STDIN, SourceText, decode, read_file, read_limited
from cmhash.read.stdin import TERMINAL_HINT, Mode, Stdin, choose

MANIFEST_SUFFIXES = (".yaml", ".yml", ".json")
CHART_FILE = "Chart.yaml"
CHART_SOURCE = "a Helm chart source (render it, then run cmhash on the output)"
# a top-level apiVersion or kind key, in YAML (column 0: re.MULTILINE) or JSON (anywhere: one
# line); compiled by re's cache when a directory is walked


# cmhash's commands: a path named like one was most likely a command after options
COMMANDS = frozenset(
    (
        "explain",
        "report",
        "patches",
        "ci-report",
        "gitlab-note",
        "github-comment",
        "helm-plugin-dir",
        "install-kustomize-plugin",
        "lock",
        "lock-request",
        "restart",
    )
)


class Skipped(NamedTuple):
    path: str
    why: str


class Inputs(NamedTuple):
    sources: list[SourceText]
    skipped: list[Skipped]
    roots: list[str]  # the file and directory arguments actually read (for --in-place)
    notes: list[str]

    @property
    def stdin_only(self) -> bool:
        """The one input is stdin (no PATH, or ``-``)."""
        return len(self.sources) == 1 and self.sources[0].path == STDIN


def exclude_problem(pattern: str) -> str | None:
    """Why ``pattern`` is not a gitignore pattern pathspec can use (``!`` alone, a
    trailing backslash, a range out of order), or None."""
    import pathspec

    try:
        pathspec.GitIgnoreSpec.from_lines([pattern])
    except re.error as exc:  # a [...] class Python's re refuses
        return f"not a valid gitignore pattern ({exc.msg})"
    except ValueError:
        hint = "a '!' needs a pattern after it" if pattern.startswith("!") else ""
        hint = hint or "a trailing '\\' escapes nothing" * pattern.endswith("\\")
        return "not a valid gitignore pattern" + (f" ({hint})" if hint else "")
    return None


class Excludes:
    """gitignore-style patterns (pathspec, imported only when there are any)."""

    def __init__(self, patterns: Sequence[str]) -> None:
        self._spec = None
        if patterns:
            import pathspec

            self._spec = pathspec.GitIgnoreSpec.from_lines(patterns)

    def match(self, relative: str, *, is_dir: bool = False) -> bool:
        if self._spec is None:
            return False
        rel = relative.replace(os.sep, "/")
        return bool(self._spec.match_file(rel + "/" if is_dir else rel))


def _raise_walk_error(exc: OSError) -> None:
    raise InputError(f"cannot read directory: {exc.strerror}", path=exc.filename)


def walk(root: str, excludes: Excludes, skipped: list[Skipped], links: list[str]) -> list[str]:
    """Manifest candidates under ``root``, sorted. Symbolic links to directories are
    followed (a repository links a shared base into each environment), each directory
    once by its real path, so a link loop ends; ``links`` gets a note for each."""
    found: list[str] = []
    walked = {os.path.realpath(root)}  # every directory read, by its real path
    for dirpath, dirnames, filenames in os.walk(root, onerror=_raise_walk_error, followlinks=True):
        kept = []
        for d in sorted(dirnames):
            path = os.path.join(dirpath, d)
            if d.startswith("."):
                continue  # hidden (.git, .github...): never rendered manifests; no note
            real = os.path.realpath(path)
            if real in walked:  # a link back up (a loop) or to a directory read already
                skipped.append(Skipped(path + os.sep, f"a link to {printable(real)}, read already"))
            elif excludes.match(os.path.relpath(path, root), is_dir=True):
                skipped.append(Skipped(path + os.sep, "excluded"))
            elif is_chart(path):
                skipped.append(Skipped(path + os.sep, CHART_SOURCE))
            else:
                walked.add(real)
                kept.append(d)
                if os.path.islink(path):
                    links.append(f"following {printable(path)} -> {printable(real)}")
        dirnames[:] = kept
        if dirpath == root and CHART_FILE in filenames:
            skipped.append(Skipped(root, CHART_SOURCE))
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


def is_chart(directory: str) -> bool:
    """Whether ``directory`` is a Helm chart's source (it holds ``Chart.yaml``): its
    templates are not YAML until ``helm template`` renders them."""
    return os.path.isfile(os.path.join(directory, CHART_FILE))


def _chart_above(path: str) -> str | None:
    """The Helm chart source directory ``path`` lies inside (absolute), or None."""
    d = os.path.dirname(os.path.abspath(path))
    while True:
        if is_chart(d):
            return d
        parent = os.path.dirname(d)
        if parent == d:
            return None
        d = parent


def expand(
    args: Sequence[str],
    excludes: Excludes,
    skipped: list[Skipped],
    *,
    filter_named: bool,
    notes: list[str],
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
            files = [(f, True) for f in walk(p, excludes, skipped, notes)]
        elif os.path.lexists(p):
            if filter_named and excludes.match(os.path.relpath(p)):
                skipped.append(Skipped(p, "excluded"))
                continue
            if filter_named and (os.path.basename(p) == CHART_FILE or _chart_above(p) is not None):
                skipped.append(Skipped(p, f"inside {CHART_SOURCE}"))
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
            elif key != os.path.abspath(f):  # a link to a file read already: said
                skipped.append(Skipped(f, f"a link to {printable(key)}, read already"))
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
        if filtered:
            from cmhash.read.manifests import is_manifest_text  # (a walk's files only)

            if not is_manifest_text(src.text):
                why = "not a Kubernetes manifest (no document has apiVersion or kind)"
                skipped.append(Skipped(path, why))
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
    stdin_kind: Stdin | None = None,
    waiting: Callable[[str], None] | None = None,
) -> Inputs:
    """The sources of one run, following the rules in the module docstring."""
    stream = stdin if stdin is not None else getattr(sys.stdin, "buffer", None)
    kind = Stdin.of(stream) if stdin_kind is None else stdin_kind
    notes: list[str] = []
    piped: bytes | None = None
    chosen = list(args)

    def read_stdin() -> bytes:
        return b"" if stream is None else read_limited(stream, max_bytes, "<stdin>")

    if not chosen:
        chosen, piped, notes = choose(mode, kind, config_paths, config_file, read_stdin)
    skipped: list[Skipped] = []
    files = expand(chosen, Excludes(excludes), skipped, filter_named=mode.on_files, notes=notes)
    if mode.writes_files and (STDIN, False) in files:
        raise UsageError("--in-place needs files, not stdin")
    if kind is Stdin.TERMINAL and waiting is not None and (STDIN, False) in files:
        waiting(TERMINAL_HINT)  # before the read, which waits for the user
    sources = _read(files, max_bytes, lambda: piped if piped is not None else read_stdin(), skipped)
    if not sources and not skipped:
        empty = [p for p in chosen if p != STDIN and os.path.isdir(p)]
        if empty:
            raise InputError(
                "no *.yaml, *.yml or *.json file in this directory or below; name the "
                "rendered manifests",
                path=empty[0].rstrip(os.sep) + os.sep,
            )
    notes.extend(f"skipped {printable(s.path)}: {s.why}" for s in skipped)
    return Inputs(sources, skipped, [p for p in chosen if p != STDIN], notes)


def refusal(inputs: Inputs, mode: Mode) -> CmhashError | None:
    """Why a run must not go on with what it read (None: it may), the same in every
    mode: a gate that checks nothing is no pass. A chart source named itself (a PATH, or
    a ``paths`` entry of the config) is refused with the command that renders it; a run
    that reads no manifest at all is refused, saying what was skipped, unless it only
    named files in a mode about files (pre-commit's ``pass_filenames``)."""
    # how the mode reads a render from a pipe, for the command a refusal shows
    piped = f"cmhash {mode.flags}-" if mode.checks or mode.diffs else "cmhash"
    for root in inputs.roots:
        if not os.path.isdir(root):
            continue
        shown = printable(root.rstrip(os.sep) + os.sep)
        if is_chart(root):
            return InputError(
                "a Helm chart's source (Chart.yaml), not rendered manifests: render it "
                f"first: helm template RELEASE {shown} | {piped}",
                path=shown,
            )
        chart = _chart_above(root.rstrip(os.sep) or os.sep)
        if chart is not None:  # its templates/: the same files named one by one are skipped
            top = printable(os.path.relpath(chart) + os.sep)
            return InputError(
                f"inside the Helm chart source {top} (Chart.yaml), not rendered manifests: "
                f"render the chart first: helm template RELEASE {top} | {piped}",
                path=shown,
            )
    if inputs.sources or not inputs.skipped:
        return None
    if mode.on_files and not any(os.path.isdir(r) for r in inputs.roots):
        return None  # files pre-commit named that are not manifests: nothing to do
    first = inputs.skipped[0]
    count = len(inputs.skipped)
    return UsageError(
        f"no Kubernetes manifests in the input: {count} path{'s' if count != 1 else ''} "
        f"skipped (e.g. {first.path}: {first.why}; -v lists them)"
    )


def stream_sources(
    paths: Sequence[str], excludes: Sequence[str], max_bytes: int
) -> list[SourceText]:
    """PATHS (``-``: stdin) read as one stream, with no config file: a report's side, the
    lock's exports and manifests."""
    return select(
        list(paths),
        mode=Mode.STREAM,
        config_paths=(),
        config_file=None,
        excludes=excludes,
        max_bytes=max_bytes,
    ).sources

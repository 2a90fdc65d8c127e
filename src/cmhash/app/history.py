"""``--keep-versions N --previous PREV`` over a run's result: PREV's kept versions
(``plan/history.py`` decides which) appended to the output, with the notes that say what
was kept and what left."""

from __future__ import annotations

from cmhash.analyze.versioned_names import shown
from cmhash.app.result import RunResult
from cmhash.errors import UsageError
from cmhash.plan.history import Identity, Version, carry, current, windows
from cmhash.plan.versioning.decision import Versioning
from cmhash.read.source import SourceText, decode, read_file
from cmhash.settings.values import Settings
from cmhash.write.emit import FileResult


def check_usage(keep: int | None, previous: str | None, mode: str, settings: Settings) -> None:
    """The option combinations --keep-versions supports (UsageError otherwise)."""
    if keep is None or previous is None:
        raise UsageError("--keep-versions and --previous go together: pass both")
    if previous == "-":
        raise UsageError(
            "--previous reads a file, not standard input: save the previous render first "
            "(helm get manifest RELEASE > previous.yaml) and pass its path"
        )
    if mode not in ("STREAM", "CHECK"):
        raise UsageError(
            "--keep-versions writes the kept versions into the output stream: it works with "
            "the stream and --check, not with --in-place or --diff"
        )
    if settings.versioned_keep:
        raise UsageError(
            "--keep-versions bounds the history and --versioned-keep keeps every version "
            "forever: choose one"
        )


def _shown(v: Version) -> str:
    return shown(v.identity.kind, v.name)


def _bound(v: Version, keep: int, own: dict[Identity, tuple[int, str]], now: set[Identity]) -> str:
    """Why a version leaves the output."""
    if v.identity not in now:
        return f"the input no longer has {v.identity.label}"
    if v.identity not in own:
        return f"older than --keep-versions {keep}"
    n, annotation = own[v.identity]
    return f"older than its {annotation}: {n}"


def _present(result: RunResult, versioning: Versioning) -> frozenset[tuple[str, str, str]]:
    """(kind, namespace, name) of the output's ConfigMaps, Secrets and secret sources
    that the input has under that name (not the names this run renames)."""
    index = result.config_index
    if index is None:
        return frozenset()
    names = {(e.info.kind, e.namespace, e.info.name) for e in index.every()} | index.sources
    for key, r in versioning.renamed.items():
        if r.new == r.old:
            continue
        names.discard((key.kind, key.namespace, r.old))
        p, source = r.entry.info.producer, r.entry.info.source
        if p is not None and p.own is not None and source is not None:
            names.discard((source.partition("/")[0], key.namespace, p.own_name))
    return frozenset(names)


def with_history(
    result: RunResult, previous: str, keep: int, settings: Settings
) -> tuple[RunResult, str | None]:
    """The run's result with the kept versions of PREV appended to its output, and a
    warning (``file:line:col: warning: ...``) when PREV carries nothing (``_nothing``);
    with --strict that is an error at the same place (exit 2)."""
    if result.versioning is None:
        raise UsageError(
            '--keep-versions needs versioned objects: --versioned, or cmhash.io/versioned: "true"'
        )
    data = read_file(previous, settings.max_input_bytes)
    prev = decode(previous, data, max_bytes=settings.max_input_bytes)
    history = carry(
        prev, result.versioning, keep, settings.namespace or "", _present(result, result.versioning)
    )
    if history.nothing is not None and settings.strict:
        raise prev.error(f"{history.nothing}; an error with --strict", 0)
    warning = (
        None
        if history.nothing is None
        else f"{prev.display}:1:1: warning: {history.nothing}; --strict makes this an error"
    )
    own = windows(result.versioning)
    now = set(current(result.versioning))
    notes = [
        *result.notes,
        *(
            f"keeps {v.identity.kind} {_shown(v)} from {previous} ({v.age} before)"
            for v in history.carried
        ),
        *(
            f"drops {v.identity.kind} {_shown(v)}: {_bound(v, keep, own, now)}"
            for v in history.pruned
        ),
    ]
    text = history.text()
    if not text:
        return result._replace(notes=notes), warning
    kept = FileResult(SourceText(f"{previous} (kept versions)", text), [(0, len(text))], True)
    return (
        result._replace(files=[*result.files, kept], notes=notes, kept=len(history.carried)),
        warning,
    )

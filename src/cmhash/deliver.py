"""A run's result, delivered as its mode asks (black's write-back): the stream, a diff,
a check, or files rewritten in place; and the exit code that follows from it."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from cmhash.errors import EXIT_CHANGED, EXIT_INPUT, EXIT_OK
from cmhash.model import Level
from cmhash.output import err, plural, report_findings, report_notes, write_stdout
from cmhash.read.stdin import Mode

if TYPE_CHECKING:
    from cmhash.app.result import RunResult
    from cmhash.settings.values import Settings


NOTHING = "nothing to change"


def _summary(workloads: int, files: int, verb: str, renamed: int = 0) -> str:
    if not workloads and not renamed:
        return NOTHING
    what = [plural(workloads, "workload")] if workloads else []
    what += [f"{plural(renamed, 'object')} renamed"] if renamed else []
    return f"{' and '.join(what)} in {plural(files, 'file')} {verb}"


def _renamed(result: RunResult) -> list[tuple[str, int, str]]:
    """(file, line, what) of each object a versioned name changes. A Secret's new
    suffix is not shown (it is derived from its values)."""
    if result.versioning is None:
        return []
    from cmhash.analyze.versioned_names import shown

    out = []
    for r in result.versioning.renamed.values():
        if r.new == r.old:
            continue
        e = r.entry
        new = shown(e.info.kind, r.new)
        at = e.info.name_spot.start if e.info.name_spot is not None else e.info.offset
        line = e.source.position(at)[0]
        out.append((e.source.display, line, f"{e.info.kind} {r.old} -> {new}"))
    return sorted(out)


def report_run(result: RunResult, settings: Settings) -> bool:
    """Print the run's notes and findings (stderr and CMHASH_LOG; errors only with
    --quiet), and with error-level findings (--strict) the line saying nothing was
    written. Whether the run may deliver: every command that writes an output (inject,
    ``patches``) reports through here, so they say the same."""
    report_notes(result.notes, quiet=settings.quiet)
    report_findings(result.findings, quiet=settings.quiet)
    if result.has_errors:
        n = sum(1 for f in result.findings if f.level is Level.ERROR)
        err(f"cmhash: {plural(n, 'error')}; nothing written")
        return False
    return True


def deliver(mode: Mode, result: RunResult, roots: Sequence[str], settings: Settings) -> int:
    """Print the findings, then output what ``mode`` asks for; the exit code."""
    if not report_run(result, settings):
        return EXIT_INPUT
    changed = [f for f in result.files if f.changed]
    if mode.diffs:
        _diff(result)
    if mode.checks:
        renamed = _renamed(result)
        for c in result.changes:
            err(f"would update {c.source.display}:{c.line}: {c.workload} ({c.key})")
        for path, line, what in renamed:
            err(f"would rename {path}:{line}: {what}")
        if not settings.quiet:
            files = len(changed) - (1 if result.kept else 0)  # not the history's own
            summary = _summary(len(result.changes), files, "would be updated", len(renamed))
            if result.kept:  # the history appended to the output (--keep-versions)
                added = f"{plural(result.kept, 'earlier version')} from --previous would be added"
                summary = added if summary == NOTHING else f"{summary}; {added}"
            err(summary)
        return EXIT_CHANGED if changed else EXIT_OK
    if mode is Mode.IN_PLACE:
        from cmhash.runtime.signals import held
        from cmhash.write.writer import write_files

        # a signal that stops the write rolls it back and says so (RolledBack); one that
        # comes after it waits for these lines, which are then true
        with held():
            write_files(changed, roots)
            if not settings.quiet:
                for f in changed:
                    n = sum(1 for c in result.changes if c.source is f.source)
                    err(f"updated {f.source.display} ({plural(n, 'workload')})")
    elif mode is Mode.STREAM:
        _stream(result)
    return EXIT_OK


def _diff(result: RunResult) -> None:
    from cmhash.write.diff import unified_diff

    out = []
    for f in result.files:
        if not f.changed:
            continue
        secrets = result.secret_spans.get(id(f.source), ())
        d = unified_diff(f.source.text, f.replacements(), f.source.display, secrets)
        for line in d.withheld:
            err(
                f"cmhash: {f.source.display}:{line}: diff hunk not shown: the changed line "
                "also holds Secret data"
            )
        out.append(d.text)
    write_stdout("".join(out))


def _stream(result: RunResult) -> None:
    if len(result.files) == 1:
        f = result.files[0]
        write_stdout(f.pieces(), bom=f.source.had_bom)
    else:
        from cmhash.write.emit import joined_pieces

        write_stdout(joined_pieces(result.files))

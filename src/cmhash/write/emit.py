"""What a run produces, as text: each file's new content as segments of its source (a
100 MB stream is never copied), the changes made, and one stream from several files."""

# No "from __future__ import annotations": typing compiles string NamedTuple fields at import

import functools
from collections.abc import Iterator, Mapping
from operator import itemgetter
from typing import TYPE_CHECKING, NamedTuple

from cmhash.analyze.summaries import DocInfo
from cmhash.edit.splice import Edit, apply_edits
from cmhash.errors import InternalError, NodeError
from cmhash.plan.workplan import WorkloadPlan
from cmhash.read.source import SourceText
from cmhash.write.options import WriteOptions

if TYPE_CHECKING:
    from cmhash.plan.versioning.decision import Versioning
    from cmhash.write.diff import Replacement
    from cmhash.write.recheck import Marked


class Change(NamedTuple):
    source: SourceText
    workload: str
    key: str
    old: str | None
    new: str
    offset: int

    @property
    def line(self) -> int:
        return self.source.position(self.offset)[0]


class FileResult(NamedTuple):
    """The rewritten file as segments: (start, end) ranges of the source text, kept as
    they are, and the texts of edited documents."""

    source: SourceText
    segments: list[tuple[int, int] | str]
    changed: bool

    @property
    def text(self) -> str:
        return "".join(self.pieces())

    def replacements(self) -> "list[Replacement]":
        """The edits as (start, end, text) of the source, in order: what the source
        between two kept ranges became (what ``--diff`` is built from)."""
        from cmhash.write.diff import Replacement

        out: list[Replacement] = []
        pos = 0  # the end of the last kept range
        new: list[str] = []
        size = len(self.source.text)
        for seg in [*self.segments, (size, size)]:  # (then what follows the last range)
            if isinstance(seg, str):
                new.append(seg)
                continue
            start, end = seg
            text = "".join(new)
            if text or start > pos:
                out.append(Replacement(pos, start, text))
            new = []
            pos = end
        return out

    def pieces(self, limit: int = 1 << 20) -> Iterator[str]:
        """The text in order, in pieces of at most about ``limit`` characters."""
        src = self.source.text
        for seg in self.segments:
            if isinstance(seg, str):
                yield seg
                continue
            start, end = seg
            for i in range(start, end, limit):
                yield src[i : min(i + limit, end)]


def render_files(
    sources: list[SourceText],
    docs: list[list[DocInfo]],
    plans: list[WorkloadPlan],
    options: WriteOptions,
    versioning: "Versioning | None" = None,
    *,
    splice: bool = True,
) -> tuple[list[Change], list[FileResult]]:
    """Splice each document's final edits into its text, checked (``_check``). Without
    ``splice`` (explain, report: they show plans, not output), only the checks run, and
    an edit that would fail its check fails the run just the same."""
    edits_by_doc: dict[tuple[int, int], list[WorkloadPlan]] = {}
    for p in plans:
        if p.edit is not None or p.job_edits:
            edits_by_doc.setdefault((id(p.source), p.info.doc), []).append(p)
    extra = versioning.edits if versioning is not None else {}
    key = options.annotation_key
    changes: list[Change] = []
    files: list[FileResult] = []
    for src, per in zip(sources, docs, strict=True):
        text = src.text
        segments: list[tuple[int, int] | str] = []
        pos = 0
        for d in per:
            doc = (id(src), d.index)
            edited = edits_by_doc.get(doc, [])
            if not edited and doc not in extra:
                continue
            all_edits = [p.edit for p in edited if p.edit is not None] + extra.get(doc, [])
            all_edits += [e for p in edited for e in p.job_edits]
            if len(all_edits) > 1:
                all_edits.sort(key=itemgetter(0, 1))  # (start, end)
            if _unchanged(text, d, all_edits):
                continue
            _check(src, d, all_edits, edited, options, versioning)
            if not splice:
                continue
            # the document's text between the edits stays in the source: no copy of it
            for e in all_edits:
                if e.start < pos:
                    raise AssertionError("overlapping edits")
                if e.start > pos:
                    segments.append((pos, e.start))
                segments.append(e.text)
                pos = e.end
            for p in edited:
                i = p.info
                changes.append(_change((src, i.label, key, i.current, p.value or "", i.offset)))
        if not splice:
            continue
        changed = bool(segments)
        if pos < len(text):
            segments.append((pos, len(text)))
        files.append(FileResult(src, segments, changed))
    return changes, files


# Change((source, workload, key, old, new, offset)) without a Python frame: one per edit
_change = functools.partial(tuple.__new__, Change)


def _unchanged(text: str, d: DocInfo, edits: list[Edit]) -> bool:
    """Whether the edits leave the document as it is, without copying it: when none
    changes its own span; and when one does but they add up to the same length (the
    same-size value of a re-run, or edits that undo each other), by comparing texts."""
    if len(edits) == 1:  # (the common case: then the text is unchanged only if its span is)
        e = edits[0]
        return text[e.start : e.end] == e.text
    if all(text[e.start : e.end] == e.text for e in edits):
        return True
    if sum(len(e.text) - (e.end - e.start) for e in edits):
        return False
    old = text[d.chunk.start : d.chunk.end]
    return apply_edits(old, edits, base=d.chunk.start) == old


def _check(
    src: SourceText,
    d: DocInfo,
    edits: list[Edit],
    edited: list[WorkloadPlan],
    options: WriteOptions,
    versioning: "Versioning | None",
) -> None:
    """The map stage verified every candidate edit of the document; verify again when
    only some were applied, or when versioning changed it too. Any difference is a bug:
    exit 3."""
    key = (id(src), d.index)
    versioned = versioning is not None and key in versioning.edits
    jobs = [p for p in edited if p.job_edits]
    try:
        if d.verify_error is not None and edited:
            raise NodeError(*d.verify_error)
        if versioned or jobs or sum(1 for w in d.workloads if w.edit is not None) != len(edited):
            from cmhash.write.recheck import recheck  # rare: imported when needed

            old_text = src.text[d.chunk.start : d.chunk.end]
            recheck(
                src,
                d.index,
                d.chunk.start,
                old_text,
                apply_edits(old_text, edits, base=d.chunk.start),
                [(p.info.offset, p.info.kind, p.value or "") for p in edited if p.edit is not None],
                options.annotation_key,
                options.parser,
                marked=_marked(d, versioning, options) if versioning is not None else None,
                renames=_renames(versioning.renames.get(key) if versioning else None, jobs),
                annotated=[(p.info.offset, job_marks(p)) for p in jobs],
                inserted=versioning.inserted.get(key) if versioning is not None else None,
            )
    except NodeError as exc:
        from cmhash.read.split import may_hold_secret

        secret = may_hold_secret(src.text[d.chunk.start : d.chunk.end])
        raise self_check_failed(src, exc, secret) from None


def self_check_failed(src: SourceText, exc: NodeError, secret: bool) -> InternalError:
    """A document that changed beyond its edits: a bug (exit 3). ``secret``: the
    document may hold a Secret, so the message quotes none of it."""
    message = exc.public if secret else exc.message
    return InternalError(
        f"self-check failed after editing ({message}); please report this bug",
        path=src.display,
        line=src.position(exc.offset)[0],
    )


def _renames(
    versioned: Mapping[int, str] | None, jobs: list[WorkloadPlan]
) -> Mapping[int, str] | None:
    """Renamed scalars by offset: versioned names' and renamed Jobs'."""
    if not jobs:
        return versioned
    out = dict(versioned or {})
    for p in jobs:
        if p.info.job is not None and p.runs_again_as != p.info.name:
            out[p.info.job.spot.start] = p.runs_again_as or ""
    return out


def job_marks(p: WorkloadPlan) -> dict[str, tuple[str, str | None]]:
    """The base-name annotation a renamed Job carries (any style when it was there)."""
    from cmhash.analyze.jobs import BASE_NAME
    from cmhash.edit.verify import ANY_STYLE

    assert p.info.job is not None
    return {BASE_NAME: (p.info.job.base, ANY_STYLE)}


def _marked(d: DocInfo, versioning: "Versioning", options: WriteOptions) -> "list[Marked]":
    """The versioned objects of the document that got their keep/immutable edits."""
    from cmhash.analyze.versioned_names import VERSIONABLE
    from cmhash.knowledge.versioning import keep_rules
    from cmhash.write.recheck import Marked

    return [
        Marked(
            c.offset,
            keep_rules(options.versioned_keep, options.keep_versions),
            options.versioned_immutable and c.kind in VERSIONABLE and c.source is None,
        )
        for c in d.configs
        if c.version_edits and any(r.entry.info is c for r in versioning.renamed.values())
    ]


def joined_pieces(files: list[FileResult]) -> Iterator[str]:
    """One stream from several files, readable back as the same documents: between two
    files, ``---`` where the next file does not start a document itself; ``...`` instead
    when it starts with a directive (``%YAML``), which may only follow a document end."""
    last = ""
    open_document = False  # some file so far had content not closed by "..."
    for n, f in enumerate(files):
        text = f.source.text
        if n:
            if last and not last.endswith("\n"):
                yield "\n"
            first = _first_significant(text)
            if first.startswith("%"):
                if open_document:
                    yield "...\n"
            elif not first.startswith("---"):
                yield "---\n"
        for piece in f.pieces():
            if piece:
                last = piece
                yield piece
        tail = _last_significant(text).rstrip("\r\n")
        if tail:
            open_document = not (tail == "..." or tail.startswith(("... ", "...\t")))


def _first_significant(text: str) -> str:
    """The first line that is not blank or a comment ("" if none)."""
    pos = 0
    while pos < len(text):
        end = text.find("\n", pos)
        end = len(text) if end < 0 else end + 1
        line = text[pos:end]
        s = line.strip()
        if s and not s.startswith("#"):
            return line
        pos = end
    return ""


def _last_significant(text: str) -> str:
    """The last line that is not blank or a comment ("" if none)."""
    end = len(text)
    while end > 0:
        start = text.rfind("\n", 0, end - 1) + 1
        line = text[start:end]
        s = line.strip()
        if s and not s.startswith("#"):
            return line
        end = start
    return ""

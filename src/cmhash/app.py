"""The pipeline: read -> parse -> index -> plan -> edit -> verify -> emit.

Pure stages over typed values; only cli.py prints or exits.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from cmhash.errors import InputError, InternalError, NodeError
from cmhash.findings import Finding
from cmhash.index import ConfigIndex, build_index
from cmhash.kinds import DEFAULT_TABLE, KindTable
from cmhash.parse import Document, parse_source
from cmhash.plan import WorkloadPlan, plan_workloads
from cmhash.resources import Resource
from cmhash.settings import Settings
from cmhash.source import SourceText, expand_paths, read_sources
from cmhash.split import Chunk
from cmhash.verify import verify_document
from cmhash.edit import Edit, apply_edits


@dataclass
class Change:
    source: SourceText
    workload: str
    key: str
    old: str | None
    new: str
    line: int


@dataclass
class FileResult:
    source: SourceText
    text: str  # the rewritten text (no BOM)

    @property
    def changed(self) -> bool:
        return self.text != self.source.text


@dataclass
class RunResult:
    files: list[FileResult]
    changes: list[Change]
    findings: list[Finding]
    plans: list[WorkloadPlan] = field(default_factory=list)
    index: ConfigIndex | None = None

    @property
    def has_errors(self) -> bool:
        return any(f.level == "error" for f in self.findings)


def kind_table(settings: Settings) -> KindTable:
    return DEFAULT_TABLE.with_extra(settings.extra_kinds) if settings.extra_kinds else DEFAULT_TABLE


def load(paths: Sequence[str], settings: Settings) -> list[SourceText]:
    return read_sources(expand_paths(paths), max_bytes=settings.max_input_bytes)


def run(sources: list[SourceText], settings: Settings) -> RunResult:
    table = kind_table(settings)
    documents: list[Document] = []
    for src in sources:
        documents.extend(parse_source(src, table, settings.parser))
    if not any(d.has_content for d in documents):
        path = sources[0].display if len(sources) == 1 else None
        raise InputError("no Kubernetes objects in the input (it is empty or only comments)",
                         path=path)
    resources = [r for d in documents for r in d.resources]
    findings: list[Finding] = []
    index = build_index(resources, settings, findings)
    plans = plan_workloads(resources, index, table, settings, findings)
    changes, files = _apply(sources, documents, plans, settings)
    findings.sort(key=Finding.sort_key)
    return RunResult(files, changes, findings, plans, index)


def _apply(sources: list[SourceText], documents: list[Document], plans: list[WorkloadPlan],
           settings: Settings) -> tuple[list[Change], list[FileResult]]:
    by_doc: dict[tuple[int, int], list[WorkloadPlan]] = {}
    for p in plans:
        if p.edit is not None:
            by_doc.setdefault((id(p.resource.source), p.resource.doc), []).append(p)
    changes: list[Change] = []
    files: list[FileResult] = []
    for src in sources:
        docs = [d for d in documents if d.source is src]
        pieces: list[str] = []
        for d in docs:
            chunk_text = src.text[d.chunk.start:d.chunk.end]
            edited = by_doc.get((id(src), d.index))
            if not edited:
                pieces.append(chunk_text)
                continue
            edits: list[Edit] = [p.edit for p in edited if p.edit is not None]
            new_text = apply_edits(chunk_text, edits, base=d.chunk.start)
            try:
                verify_document(d, new_text, edited, settings)
            except NodeError as exc:
                raise InternalError(f"self-check failed after editing: {exc.message}; "
                                    "please report this bug", path=src.display,
                                    line=src.position(exc.offset)[0]) from None
            pieces.append(new_text)
            for p in edited:
                changes.append(Change(src, p.resource.label, settings.annotation_key,
                                      p.current, p.value or "",
                                      src.position(p.resource.node.start)[0]))
        files.append(FileResult(src, "".join(pieces)))
    return changes, files


def join_outputs(files: list[FileResult]) -> str:
    """One stream from several files: a ``---`` between files that need one."""
    out: list[str] = []
    for i, f in enumerate(files):
        text = f.text
        if i > 0 and out:
            prev = out[-1]
            if prev and not prev.endswith("\n"):
                out.append("\n")
            if not starts_with_marker(text):
                out.append("---\n")
        out.append(text)
    return "".join(out)


def starts_with_marker(text: str) -> bool:
    for line in text.splitlines():
        s = line.strip()
        if not s or s.startswith("#"):
            continue
        return line.startswith("---")
    return True  # nothing but comments: no document to merge into


__all__ = ["Change", "Chunk", "Document", "FileResult", "Resource", "RunResult", "join_outputs",
           "load", "run"]

"""``cmhash restart``: ``cmhash.io/restart: "<reason>"`` written into one object's
``metadata.annotations``, in place, every other byte as it was (edit/splice.py's
machinery), the document checked again (write/recheck.py), the files rewritten all or
nothing (write/writer.py). A place where the annotation cannot be written safely (an
alias, an anchor, a tag, an unusual mapping) is refused at its position; so is an
object that is not one place (defined twice: give its file, or ``-n``).

The annotation goes where a checksum reads it (plan/lock.py): on a workload, into its
own metadata (its checksum moves, so its pods roll; the template is not touched); on a
ConfigMap, a Secret or a source of one, into its metadata (the checksum of every
workload that uses it moves).
"""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence
from typing import NamedTuple

from cmhash.analyze.declared import RESTART
from cmhash.edit.splice import annotations_edits, apply_edits, inside_aliased
from cmhash.errors import NodeError, UsageError
from cmhash.knowledge.kinds import KindTable
from cmhash.parse.events import backend, parse_chunk
from cmhash.parse.resources import Resource, document_resources
from cmhash.read.source import SourceText, newline_at
from cmhash.read.split import Chunk, may_hold_secret, refuse_ambiguous, split_chunks
from cmhash.write.emit import FileResult, self_check_failed
from cmhash.write.recheck import recheck

MAX_REASON = 1000
_REFUSED = ("Cc", "Cf", "Zl", "Zp", "Cs", "Co", "Cn")  # controls, format (bidi), breaks


def check_reason(reason: str) -> str:
    """The reason as written; a usage error for one that could read otherwise than it
    looks (control and bidirectional characters, line breaks) or says nothing."""
    if not reason.strip():
        raise UsageError("--reason: say why (it is what the rollout plan shows)")
    if len(reason) > MAX_REASON:
        raise UsageError(f"--reason: at most {MAX_REASON} characters (a reason, not a document)")
    for ch in reason:
        if unicodedata.category(ch) in _REFUSED:
            raise UsageError(
                f"--reason: character U+{ord(ch):04X} is a control, format or line-break "
                "character; write the reason on one line of plain text"
            )
    return reason


class Target(NamedTuple):
    source: SourceText
    doc: int
    chunk: Chunk
    resource: Resource


def find(
    sources: Sequence[SourceText],
    kind: str,
    name: str,
    namespace: str | None,
    table: KindTable,
    parser: str,
) -> list[Target]:
    """Every definition of ``kind``/``name`` (in ``namespace``, or naming none: it lands
    there when applied) among the sources' documents."""
    be = backend(parser)
    # ``deployment``, ``Deployment``, ``deployment.apps``: kind (any case), group
    wanted, _, group = kind.partition(".")
    found = []
    for src in sources:
        for doc, chunk in enumerate(split_chunks(src.text)):
            text = src.text[chunk.start : chunk.end]
            if name not in text:
                continue
            try:
                refuse_ambiguous(text, chunk.start)
                resources = document_resources(src, doc, parse_chunk(text, chunk.start, be))
            except NodeError as exc:
                message = exc.public if may_hold_secret(text) else exc.message
                raise src.error(message, exc.offset) from None
            for res in resources:
                if res.name != name or res.kind.lower() != wanted.lower():
                    continue
                if group and res.group != group:
                    continue
                if namespace is not None and res.namespace not in (None, namespace):
                    continue
                _check_kind(res, table)
                found.append(Target(src, doc, chunk, res))
    return found


def _check_kind(res: Resource, table: KindTable) -> None:
    config = res.group == "" and res.kind in ("ConfigMap", "Secret")
    if config or table.lookup(res.api_version, res.kind) or table.source(res.api_version, res.kind):
        return
    raise res.source.error(
        f"{RESTART} on a {res.kind} restarts nothing: give a workload, or a ConfigMap or "
        "Secret (or what produces one) that workloads use",
        res.node.start,
    )


def restart_file(target: Target, reason: str, parser: str) -> FileResult | None:
    """The target's file with the annotation written (None: it says so already)."""
    src, chunk, res = target.source, target.chunk, target.resource
    old = src.text[chunk.start : chunk.end]
    secret = may_hold_secret(old)
    try:
        edits = annotations_edits(
            src.text,
            res.node,
            None,
            {RESTART: reason},
            newline_at(src.text),
            what="the object",
            any_style=True,
        )
        if not edits:
            return None
        roots = parse_chunk(old, chunk.start, backend(parser))
        for edit in edits:
            problem = inside_aliased(edit, roots.aliased)
            if problem is not None:
                raise problem
    except NodeError as exc:  # the edit cannot be made safely: where, and why
        raise src.error(exc.public if secret else exc.message, exc.offset) from None
    new = apply_edits(old, edits, base=chunk.start)
    try:
        recheck(
            src,
            target.doc,
            chunk.start,
            old,
            new,
            [],
            RESTART,
            parser,
            annotated=[(res.node.start, {RESTART: (reason, '"')})],
        )
    except NodeError as exc:  # a difference beyond the annotation is a bug
        raise self_check_failed(src, exc, secret) from None
    segments: list[tuple[int, int] | str] = [(0, chunk.start), new, (chunk.end, len(src.text))]
    return FileResult(src, segments, True)

"""report: a side without any object (an empty pipe or file, only comments, only Lists
without items) is usually a failed render: an ``empty-input`` warning, and an error
under ``--strict``."""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

from cmhash.errors import CmhashError, NodeError
from cmhash.parse.events import backend, parse_chunk
from cmhash.parse.resources import document_resources
from cmhash.read.source import SourceText
from cmhash.read.split import chunk, cuts


class Empty(NamedTuple):
    """A side without any object: OLD or NEW, where (its file), and what it holds."""

    side: str
    where: str
    what: str = "it is empty or only comments"


def empty_message(e: Empty) -> str:
    return (
        f"no Kubernetes objects in {e.side} ({e.what}: a failed render?): compared as a "
        "render of nothing; --strict makes this an error"
    )


NO_ITEMS = "only Lists without items"


def holds_objects(sources: Sequence[SourceText], parser: str) -> bool:
    """Whether any document of a side that has content holds an object, a List's items
    counted (kubectl flattens a List: one without items applies nothing, "no objects
    passed to apply"). The first object ends the search: its first document, mostly."""
    be = backend(parser)
    for src in sources:
        marks = cuts(src.text)
        for doc in range(len(marks) - 1):
            ch = chunk(marks, doc)
            try:
                roots = parse_chunk(src.text[ch.start : ch.end], ch.start, be)
                if document_resources(src, doc, roots):
                    return True
            except (CmhashError, NodeError, ValueError, RecursionError):
                return True  # (not read as a List of nothing: the pipeline passed it)
    return False

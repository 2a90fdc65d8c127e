"""Source text -> documents, parsing only what matters on the fast path.

The fast path reads each chunk's top-level ``apiVersion:``/``kind:`` lines by
plain string search. A chunk whose kind is certainly irrelevant (not a
ConfigMap, Secret, workload kind or List) is passed through as text without
being parsed: CRDs, Services and RBAC are most of the bytes of real install
manifests. Anything ambiguous (no such line, more than one, JSON or flow
style, quoted keys) is parsed. The exact path parses every chunk with ruamel.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from cmhash.errors import NodeError
from cmhash.kinds import CONFIG_KINDS, KindTable, group_of
from cmhash.resources import Resource, resources_of
from cmhash.source import SourceText
from cmhash.split import Chunk, split_chunks
from cmhash.yamltree import Node, backend, parse_chunk

_VALUE = re.compile(r"""[ \t]*(["']?)([A-Za-z0-9][A-Za-z0-9./-]*)\1[ \t]*(?:#.*)?\r?$""")
_BLANK_OR_COMMENT = re.compile(r"^(?:[ \t]*(?:#.*)?(?:\r?\n|\r?$))*\Z")
_MARKER_ONLY = re.compile(r"^(?:(?:---|\.\.\.)(?:[ \t]+#.*)?[ \t]*|[ \t]*(?:#.*)?)$")


@dataclass
class Document:
    source: SourceText
    index: int
    chunk: Chunk
    roots: list[Node] | None          # None: passed through unparsed (fast path)
    resources: list[Resource] = field(default_factory=list)
    has_content: bool = False


def _top_level(text: str, key: str) -> list[str] | None:
    """Values of column-0 ``key:`` lines; None if one of them is not a simple value."""
    needle = "\n" + key + ":"
    found = []
    pos = 0 if text.startswith(key + ":") else text.find(needle)
    while pos >= 0:
        start = pos + (0 if pos == 0 and text.startswith(key + ":") else 1) + len(key) + 1
        eol = text.find("\n", start)
        m = _VALUE.match(text, start, len(text) if eol < 0 else eol)
        if m is None:
            return None
        found.append(m.group(2))
        pos = text.find(needle, start)
    return found


def relevant_kind(text: str, table: KindTable) -> bool | None:
    """True/False when the top-level kind is certain from the text, None when unsure."""
    kinds = _top_level(text, "kind")
    apis = _top_level(text, "apiVersion")
    if not kinds or not apis or len(kinds) != 1 or len(apis) != 1:
        return None
    kind, api = kinds[0], apis[0]
    if kind.endswith("List"):
        return True
    if (group_of(api), kind) in CONFIG_KINDS:
        return True
    return table.lookup(api, kind) is not None


def _is_blank(text: str) -> bool:
    return all(_MARKER_ONLY.match(line) for line in text.splitlines())


def parse_source(src: SourceText, table: KindTable, parser: str) -> list[Document]:
    be = backend(parser)
    docs = []
    text = src.text
    for i, chunk in enumerate(split_chunks(text)):
        chunk_text = text[chunk.start:chunk.end]
        if be.name == "fast":
            rel = relevant_kind(chunk_text, table)
            if rel is False:
                docs.append(Document(src, i, chunk, None, [], has_content=True))
                continue
            if rel is None and _is_blank(chunk_text):
                docs.append(Document(src, i, chunk, [], [], has_content=False))
                continue
        try:
            roots = parse_chunk(chunk_text, chunk.start, be)
            resources = [r for root in roots for r in resources_of(src, i, root)]
        except NodeError as exc:
            raise src.error(exc.message, exc.offset) from None
        has_content = any(not root.is_null for root in roots)
        docs.append(Document(src, i, chunk, roots, resources, has_content))
    return docs

"""After versioning: where else the input names a renamed object.

cmhash rewrites the references it knows (the pod spec sites, declaring annotations).
Other objects may name a ConfigMap or Secret too: an Ingress's ``tls[].secretName``, a
ServiceAccount's ``secrets``, a CRD's ``configMapRef``. Those keep the old name, which
may be pruned. This scan looks at the text of every document for the old name as the
value of a key that says ``secret`` or ``configmap`` (or a ``name:`` under such a key)
and warns; it never edits. Lines inside Secrets are never looked at (and never quoted).
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from cmhash.findings import Code, Finding, finding
from cmhash.plan.versioning import Renamed, Versioning, base_name
from cmhash.read.source import SourceText

_KEY = re.compile(r"secret|config[-_]?map", re.IGNORECASE)
_LINE = re.compile(r"""^(\s*)(?:-\s+)?["']?([^"':#\s][^"':#]*?)["']?\s*:(?:\s+|$)(.*)$""")
_ITEM = re.compile(r"^(\s*)-\s+(.*)$")


def _token(value: str) -> list[str]:
    value = value.split(" #", 1)[0].strip()
    return [v.strip().strip("'\"") for v in value.strip("[]{}").split(",")]


def _parent_key(lines: list[str], index: int, indent: int) -> str | None:
    """The key of the nearest line above with less indentation."""
    for line in reversed(lines[:index]):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        m = _LINE.match(line)
        own_indent = len(line) - len(line.lstrip(" -"))
        if len(line) - len(line.lstrip()) < indent and m:
            return m.group(2)
        if own_indent < indent and m:
            return m.group(2)
    return None


def _hits(text: str, name: str) -> Iterator[tuple[int, str]]:
    """(offset in ``text``, key) of each line that names ``name`` under a config key."""
    lines = text.splitlines(keepends=True)
    pos = 0
    for i, line in enumerate(lines):
        if name in line:
            m = _LINE.match(line.rstrip("\r\n"))
            item = _ITEM.match(line.rstrip("\r\n")) if m is None else None
            key = None
            if m is not None and name in _token(m.group(3)):
                key = m.group(2)
                if not _KEY.search(key):
                    key = (
                        _parent_key(lines, i, len(line) - len(line.lstrip()))
                        if key == "name"
                        else None
                    )
            elif item is not None and name in _token(item.group(2)):
                key = _parent_key(lines, i, len(item.group(1)) + 1)
            if key is not None and _KEY.search(key):
                yield pos + line.index(name), key
        pos += len(line)


def scan(
    versioning: Versioning,
    sources: list[SourceText],
    secret_spans: dict[int, list[tuple[int, int]]],
) -> list[Finding]:
    # the name it had, and its base name (which, after a first run, no object has)
    names = [
        (r, name)
        for r in versioning.renamed.values()
        for name in {r.old, base_name(r.new)} - {r.new}
    ]
    out: list[Finding] = []
    for src in sources:
        rewritten = versioning.spans.get(id(src), [])
        skip = secret_spans.get(id(src), [])
        for r, name in names:
            if name in src.text:
                out.extend(_in_source(src, r, name, rewritten, skip))
    return out


def _in_source(
    src: SourceText,
    r: Renamed,
    name: str,
    rewritten: list[tuple[int, int]],
    skip: list[tuple[int, int]],
) -> Iterator[Finding]:
    own = (r.entry.info.offset, r.entry.info.end) if r.entry.source is src else (-1, -1)
    for offset, key in _hits(src.text, name):
        if own[0] <= offset < own[1]:
            continue
        if any(a <= offset < b for a, b in skip) or any(a <= offset < b for a, b in rewritten):
            continue
        yield finding(
            src,
            offset,
            Code.UNKNOWN_REFERENCE,
            f"{key!r} here names {r.entry.info.kind} {name!r}, which is versioned as "
            f"{r.new!r}; cmhash does not rewrite this field: update it, or opt the object "
            'out (cmhash.io/versioned: "false")',
        )

"""After versioning: where else the input names a renamed object.

cmhash rewrites the references it knows (the pod spec sites, declaring annotations).
Other objects may name a ConfigMap or Secret too: an Ingress's ``tls[].secretName``, a
ServiceAccount's ``secrets``, a CRD's ``configMapRef``. Those keep the old name, which
may be pruned. This scan reads the text once, token by token: a token that is an old
(or base) name counts when the key it is the value of says ``secret`` or ``configmap``,
or is ``name`` inside such a key (block or flow style, list items too). It warns and
never edits. Text inside Secrets is never looked at (and never quoted).
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Iterable, Iterator, Mapping
from itertools import accumulate
from typing import NamedTuple

from cmhash.analyze.versioned_names import base_name, shown
from cmhash.findings import Code, Finding, finding
from cmhash.plan.versioning.decision import Renamed, Versioning
from cmhash.plan.workplan import WorkloadPlan
from cmhash.read.source import SourceText

_KEY = re.compile(r"secret|config[-_]?map", re.IGNORECASE)
# a key that says which kind it names (``secretName`` a Secret, ``configMap`` a ConfigMap)
_KIND_KEY = {"Secret": re.compile("secret", re.I), "ConfigMap": re.compile("config[-_]?map", re.I)}
_TOKEN = re.compile(r"[A-Za-z0-9][A-Za-z0-9.-]*")
# the key just before a value on the same line: `key: ` / `"key": "` / `{key: `
_KEY_BEFORE = re.compile(r"""["']?([\w./-]+)["']?\s*:\s*["']?$""")
# the key of a flow collection the value is in: `key: {... ` or `key: [...`
_FLOW_KEY = re.compile(r"""["']?([\w./-]+)["']?\s*:\s*[\[{][^\[\]{}]*(?:\{[^\[\]{}]*)?$""")
# the key of the flow mapping a `name:` opens: `key: {` or `key: [{`
_MAP_OPEN = re.compile(r"""["']?([\w./-]+)["']?\s*:\s*\[?\s*\{\s*$""")
_LIST_ITEM = re.compile(r"^\s*-\s+[\"']?$")
_BLOCK_KEY = re.compile(r"""^(\s*(?:-\s+)*)["']?([^\s"'#:][^"'#:]*?)["']?\s*:(?:\s|$)""")


def _key_column(line: str) -> tuple[int, str] | None:
    """(column, key) of a block mapping key on ``line`` (after any ``- ``)."""
    m = _BLOCK_KEY.match(line)
    return (len(m.group(1)), m.group(2)) if m else None


def _parent(lines: list[str], index: int, column: int) -> str | None:
    """The key of the nearest line above whose key starts left of ``column``."""
    for line in reversed(lines[:index]):
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        found = _key_column(line)
        if found is not None and found[0] < column:
            return found[1]
        if len(line) - len(line.lstrip()) < column and found is None and stripped != "-":
            return None  # a less indented line that is no key: we left the structure
    return None


def _key_of(lines: list[str], index: int, col: int) -> str | None:
    """The key that says what the token at column ``col`` of line ``index`` is."""
    prefix = lines[index][:col]
    m = _KEY_BEFORE.search(prefix)
    if m is not None:
        key = m.group(1)
        if key != "name":
            return key
        flow = _MAP_OPEN.search(prefix[: m.start()])
        if flow is not None:  # `secretRef: {name: x}`, `"secretRef": {"name": "x"}`
            return flow.group(1)
        found = _key_column(lines[index])
        column = found[0] if found is not None else len(prefix) - len(prefix.lstrip())
        return _parent(lines, index, column)
    flow = _FLOW_KEY.search(prefix)
    if flow is not None:  # an item of a flow list: `secrets: [a, b]`
        return flow.group(1)
    if _LIST_ITEM.match(prefix):  # an item of a block list: `- name`
        return _parent(lines, index, len(prefix) - len(prefix.lstrip()) + 1)
    return None


class Mention(NamedTuple):
    """A field that looks like it names a renamed object, and its warning."""

    renamed: Renamed
    source: SourceText
    offset: int
    key: str  # the field's key
    finding: Finding


def names_its_kind(m: Mention) -> bool:
    """Whether the field's key says the kind of the object it names (``secretName`` and a
    Secret; not ``secretName`` and a ConfigMap of the same name)."""
    kind_key = _KIND_KEY.get(m.renamed.entry.info.kind)
    return kind_key is not None and kind_key.search(m.key) is not None


def scan(
    versioning: Versioning,
    sources: list[SourceText],
    secret_spans: Mapping[int, list[tuple[int, int]]],
    plans: Iterable[WorkloadPlan] = (),
) -> list[Mention]:
    """``plans``: the workloads, whose references cmhash resolved (in their own
    namespace): never unknown, whichever object of that name they name."""
    # the name it had, and its base name (which, after a first run, no object has)
    wanted: dict[str, list[Renamed]] = {}
    for r in versioning.renamed.values():
        for name in {r.old, base_name(r.new)} - {r.new}:
            wanted.setdefault(name, []).append(r)
    if not wanted:
        return []
    known: dict[int, list[tuple[int, int]]] = {}
    for plan in plans:
        for res in plan.resolved:
            spot = res.ref.spot
            if spot is not None and res.ref.how != "declared":  # a declared list: its own
                known.setdefault(id(plan.source), []).append((spot.start, spot.end))
    out: list[Mention] = []
    for src in sources:
        skip = (
            secret_spans.get(id(src), [])
            + versioning.spans.get(id(src), [])
            + known.get(id(src), [])
        )
        out.extend(_in_source(src, wanted, skip))
    return out


def _in_source(
    src: SourceText, wanted: dict[str, list[Renamed]], skip: list[tuple[int, int]]
) -> Iterator[Mention]:
    text = src.text
    merged: list[tuple[int, int]] = []  # the spans' union: Secrets hold renamed names
    for a, b in sorted(skip):
        if merged and a <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], b))
        else:
            merged.append((a, b))
    skip, skip_starts = merged, [a for a, _ in merged]
    lines = text.splitlines(keepends=True)
    starts = [0, *accumulate(map(len, lines))]
    index = 0
    for m in _TOKEN.finditer(text):
        renamed = wanted.get(m.group())
        if renamed is None:
            continue
        offset = m.start()
        i = bisect_right(skip_starts, offset) - 1
        if i >= 0 and offset < skip[i][1]:
            continue
        while starts[index + 1] <= offset:
            index += 1
        prefix = lines[index][: offset - starts[index]]
        if prefix.lstrip().startswith("#") or " #" in prefix:
            continue  # a comment names it ("# pinned by remoteRef.version")
        key = _key_of(lines, index, offset - starts[index])
        if key is None or not _KEY.search(key):
            continue
        for r in renamed:
            info = r.entry.info
            if r.entry.source is src and info.offset <= offset < info.end:
                continue  # the object's own document
            new = shown(info.kind, r.new)  # findings reach reports and merge requests
            said = finding(
                src,
                offset,
                Code.UNKNOWN_REFERENCE,
                f"{key!r} here names {info.kind} {m.group()!r}, which is versioned as "
                f"{new!r}; cmhash does not rewrite this field: update it, or drop "
                'cmhash.io/versioned: "true"',
            )
            yield Mention(r, src, offset, key, said)

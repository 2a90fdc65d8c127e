"""``--diff``: a git-style unified diff with fixed a/ b/ labels and no timestamps, that
never shows a line holding Secret data. Its hunks are built from the edits
(``hunks.py``): difflib's output, in time linear in the file."""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterable, Sequence
from typing import NamedTuple

from cmhash.write.hunks import (
    TRUST,
    Lines,
    Opcode,
    Replacement,
    grouped,
    lines_of,
    matching_blocks,
    opcodes,
)


class Diff(NamedTuple):
    text: str
    withheld: list[int]  # 1-based first lines (old side) of hunks not shown


def unified_diff(
    old: str,
    edits: Sequence[Replacement],
    path: str,
    secrets: Iterable[tuple[int, int]] = (),
    *,
    trust: int = TRUST,
) -> Diff:
    """The diff of ``old`` and ``old`` with ``edits`` applied (sorted, not overlapping),
    as difflib's unified diff with a/ b/ labels writes it (``hunks.py`` says where text
    that repeats itself can give another valid diff).

    ``secrets``: the (start, end) offsets of Secrets in ``old``; their lines, counted as
    the diff counts lines (``str.splitlines``, so a lone ``\\r`` ends one), through the
    line holding ``end``. No line of the diff may show one: when one would appear as
    context, the file's hunks are written without context (still a valid patch); a hunk
    that changes such a line (a Secret sharing a line with a workload, as in one-line
    JSON) is left out, and its line returned in ``withheld`` so the caller can say so."""
    lines = lines_of(old, edits)
    codes = opcodes(matching_blocks(lines, trust), len(lines.a), len(lines.b))
    hidden = _Hidden(lines, secrets)
    context = 3
    if hidden and any(
        tag == "equal" and hidden.meets(i1, i2)
        for group in grouped(codes, 3)
        for tag, i1, i2, _, _ in group
    ):
        context = 0
    out: list[str] = []
    withheld: list[int] = []
    for group in grouped(codes, context):
        if hidden and any(tag != "equal" and hidden.meets(i1, i2) for tag, i1, i2, _, _ in group):
            withheld.append(group[0][1] + 1)
            continue
        if not out:
            out += [f"--- a/{label(path)}\n", f"+++ b/{label(path)}\n"]
        _hunk(out, group, lines)
    return Diff("".join(out), withheld)


def label(path: str) -> str:
    """``path`` as git writes it after ``a/`` and ``b/``: without ``.`` segments, empty
    segments or a leading ``/`` (a walk of ``.`` gives ``./dev/app.yaml``, which
    ``git apply`` refuses as ``a/./dev/app.yaml``). ``..`` is kept: it names another
    place."""
    return "/".join(part for part in path.split("/") if part not in ("", "."))


def _hunk(out: list[str], group: list[Opcode], lines: Lines) -> None:
    a, b = lines.a, lines.b
    first, last = group[0], group[-1]
    out.append(f"@@ -{_range(first[1], last[2])} +{_range(first[3], last[4])} @@\n")
    for tag, i1, i2, j1, j2 in group:
        if tag == "equal":
            out += [_line(" ", x) for x in a[i1:i2]]
            continue
        out += [_line("-", x) for x in a[i1:i2]]
        out += [_line("+", x) for x in b[j1:j2]]


class _Hidden:
    """The lines of ``a`` (0-based, joined spans) that hold Secret data."""

    def __init__(self, lines: Lines, secrets: Iterable[tuple[int, int]]) -> None:
        ends = lines.ends
        spans: list[tuple[int, int]] = []
        for start, end in sorted(secrets):
            first, last = bisect_right(ends, start), bisect_right(ends, end) + 1
            if spans and first <= spans[-1][1]:
                spans[-1] = (spans[-1][0], max(last, spans[-1][1]))
            else:
                spans.append((first, last))
        self.starts = [s for s, _ in spans]
        self.ends = [e for _, e in spans]

    def __bool__(self) -> bool:
        return bool(self.starts)

    def meets(self, i1: int, i2: int) -> bool:
        """Whether any of the lines ``i1 <= i < i2`` is hidden."""
        k = bisect_right(self.starts, i2 - 1) - 1  # the last span starting at or before
        return i1 < i2 and k >= 0 and self.ends[k] > i1


def _range(start: int, stop: int) -> str:
    """difflib's unified range: 'start,length', 1-based; 'start' alone for one line."""
    length = stop - start
    if length == 1:
        return str(start + 1)
    return f"{start + 1 if length else start},{length}"


def _line(mark: str, text: str) -> str:
    if text.endswith("\n"):
        return mark + text
    return mark + text + "\n\\ No newline at end of file\n"

"""``--diff``: a git-style unified diff with fixed a/ b/ labels and no timestamps, that
never shows a line holding Secret data, built from the edits cmhash made in time linear
in the file (difflib compares every line with every equal line: minutes for 2 MB).

The result is difflib's (``SequenceMatcher(None, a, b, autojunk=False)`` on the lines of
``str.splitlines``): the same matching blocks, so the same opcodes and groups. difflib
finds its blocks by recursion: in a range, the longest run of equal lines (the earliest
in ``a``, then in ``b``), then the ranges left and right of it. Here, the lines between
two edits are equal and aligned: such a *run*, grown while the lines on its diagonal
agree (how difflib slides an inserted line that repeats its neighbour), is that longest
block whenever it has at least ``trust`` lines; a sparse table finds the longest run of a
range in constant time. Ranges without such a run (an edit's own lines, edits a few lines
apart) go to difflib itself, cheap there. This assumes that text outside the runs does
not repeat, at another offset, a stretch longer than the runs around it;
``tests/write/test_diff_hunks.py`` holds it to difflib on every corpus file, the goldens,
generated streams and random edits. Where a run's growth stopped at a neighbour (text
that repeats itself line for line), a file of up to ``SMALL`` lines is left to difflib,
and a bigger one keeps the cut: a valid diff, maybe not difflib's, not a quadratic one.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Callable, Iterable, Sequence
from itertools import accumulate
from typing import Any, NamedTuple

TRUST = 8  # lines: a shorter run may lose to a coincidental block; difflib decides there
SMALL = 2000  # lines (both sides): beyond, difflib's time, not its pick, is the risk

Opcode = tuple[str, int, int, int, int]
Block = tuple[int, int, int]  # (i, j, size): a[i:i+size] == b[j:j+size]


class Replacement(NamedTuple):
    start: int  # offsets in the old text
    end: int
    text: str


class Lines(NamedTuple):
    """The two sides as difflib sees them, and the runs of equal lines between edits:
    run k is ``a[ra[k]:rb[k]] == b[ra[k] + d[k]:rb[k] + d[k]]``."""

    a: list[str]
    b: list[str]
    ends: list[int]  # offset after each line of a
    ra: list[int]
    rb: list[int]
    d: list[int]


def lines_of(old: str, edits: Sequence[Replacement]) -> Lines:
    """Both sides' lines, ``b`` spliced from ``a`` and the edits' own lines: each edit
    widened to whole lines, edits on the same or adjacent lines merged."""
    a = old.splitlines(keepends=True)
    ends = list(accumulate(map(len, a)))  # the offset after each line
    la = len(a)

    def start(line: int) -> int:
        return ends[line - 1] if line else 0

    regions: list[list[Any]] = []  # [first line, end line, edits]
    for e in edits:
        first = bisect_right(ends, e.start)
        # an edit at a line's start changes the line before when that one has no line
        # break (the file's last line), or a lone "\r" that a new "\n" joins
        lead = e.text[:1] or old[e.end : e.end + 1]
        if (
            first
            and e.start == start(first)
            and (first == la or (lead == "\n" and old[e.start - 1] == "\r"))
        ):
            first -= 1
        last = min(bisect_right(ends, e.end) + 1, la)
        if regions and first <= regions[-1][1]:
            regions[-1][1] = max(regions[-1][1], last)
            regions[-1][2].append(e)
        else:
            regions.append([first, max(first, last), [e]])
    b: list[str] = []
    ra, rb, d = [0], [], [0]
    for first, last, es in regions:
        b += a[ra[-1] : first]
        rb.append(first)
        pos = start(first)
        pieces = []
        for e in es:
            pieces += [old[pos : e.start], e.text]
            pos = e.end
        pieces.append(old[pos : start(last)])
        new = "".join(pieces).splitlines(keepends=True)
        b += new
        ra.append(last)
        d.append(len(b) - last)
    b += a[ra[-1] :]
    rb.append(la)
    return Lines(a, b, ends, ra, rb, d)


class _Runs:
    """Each run grown along its diagonal (``a[xa[k]:xe[k]]``), never past the start of
    the run before or the end of the run after (``cut``: where that stopped one), and a
    sparse table of the longest over any span of runs: (-size, i, j, k), so that
    ``min`` is difflib's pick."""

    def __init__(self, lines: Lines) -> None:
        a, b, ra, rb, d = lines.a, lines.b, lines.ra, lines.rb, lines.d
        last = len(ra) - 1
        self.xa: list[int] = []
        self.xe: list[int] = []
        self.cut = False
        for k, (s, e, dk) in enumerate(zip(ra, rb, d, strict=True)):
            lo = max(ra[k - 1], ra[k - 1] + d[k - 1] - dk) if k else 0
            hi = min(rb[k + 1], rb[k + 1] + d[k + 1] - dk) if k < last else len(a)
            hi = min(hi, len(b) - dk)
            while s > lo and a[s - 1] == b[s - 1 + dk]:
                s -= 1
            while e < hi and a[e] == b[e + dk]:
                e += 1
            self.cut = self.cut or (s == lo and k > 0) or (e == hi and k < last)
            self.xa.append(s)
            self.xe.append(e)
        grown = zip(self.xa, self.xe, d, strict=True)
        level = [(s - e, s, s + dk, k) for k, (s, e, dk) in enumerate(grown)]
        self.table = [level]
        width, count = 1, len(level)
        while 2 * width <= count:
            level = list(map(min, level[:-width], level[width:]))
            self.table.append(level)
            width *= 2

    def longest(self, first: int, last: int) -> tuple[int, int, int, int]:
        """The table's pick among runs ``first..last`` (inclusive)."""
        n = (last - first + 1).bit_length() - 1
        level = self.table[n]
        return min(level[first], level[last - (1 << n) + 1])


def matching_blocks(lines: Lines, trust: int = TRUST) -> list[Block]:
    """difflib's matching blocks of ``lines.a`` and ``lines.b``, without the final
    (la, lb, 0), adjacent blocks joined."""
    runs = _Runs(lines)
    a, b, ra, rb, d = lines.a, lines.b, lines.ra, lines.rb, lines.d
    if runs.cut and len(a) + len(b) <= SMALL:
        return _difflib_blocks(a, b, 0, len(a), 0, len(b))
    xa, xe = runs.xa, runs.xe
    last_run = len(ra) - 1

    def best(alo: int, ahi: int, blo: int, bhi: int) -> tuple[int, int, int] | None:
        found: list[tuple[int, int, int]] = []

        def clip(k: int) -> None:
            dk = d[k]
            s, e = max(xa[k], alo, blo - dk), min(xe[k], ahi, bhi - dk)
            if e > s:
                found.append((s - e, s, s + dk))

        # a run's block reaches into its neighbours' runs at most: only runs whose own
        # lines meet the range, and one more each side, can hold a block in it
        lo = max(bisect_right(rb, alo) - 1, 0)
        hi = min(bisect_left(ra, ahi), last_run)
        if hi - lo < 6:
            for k in range(lo, hi + 1):
                clip(k)
        else:
            for k in (lo, lo + 1, lo + 2, hi - 2, hi - 1, hi):
                clip(k)
            size, s, j, k = runs.longest(lo + 3, hi - 3)
            if s >= alo and j >= blo and xe[k] <= ahi and xe[k] + d[k] <= bhi:
                found.append((size, s, j))
            else:  # the longest is cut by the range: look at each
                for k in range(lo + 3, hi - 2):
                    clip(k)
        return min(found) if found else None

    blocks: list[Block] = []
    todo = [(0, len(a), 0, len(b))]
    while todo:
        alo, ahi, blo, bhi = todo.pop()
        pick = best(alo, ahi, blo, bhi)
        if pick is None or (-pick[0] < trust and ahi - alo + bhi - blo <= SMALL):
            blocks += _difflib_blocks(a, b, alo, ahi, blo, bhi)
            continue
        size, i, j = -pick[0], pick[1], pick[2]
        blocks.append((i, j, size))
        if alo < i and blo < j:
            todo.append((alo, i, blo, j))
        if i + size < ahi and j + size < bhi:
            todo.append((i + size, ahi, j + size, bhi))
    blocks.sort()
    return _joined(blocks)


def _difflib_blocks(
    a: list[str], b: list[str], alo: int, ahi: int, blo: int, bhi: int
) -> list[Block]:
    """difflib's blocks of ``a[alo:ahi]`` and ``b[blo:bhi]``: the same as its recursion
    finds inside that range of the whole, which never looks outside it."""
    sa, sb = a[alo:ahi], b[blo:bhi]
    if not sa or not sb or set(sa).isdisjoint(sb):
        return []
    import difflib  # only --diff needs it; start-up time matters for hooks

    matcher = difflib.SequenceMatcher(None, sa, sb, autojunk=False)
    return [(i + alo, j + blo, k) for i, j, k in matcher.get_matching_blocks() if k]


def _joined(blocks: list[Block]) -> list[Block]:
    """Adjacent blocks as one (difflib's get_matching_blocks does the same)."""
    out: list[Block] = []
    for i, j, k in blocks:
        if out:
            pi, pj, pk = out[-1]
            if pi + pk == i and pj + pk == j:
                out[-1] = (pi, pj, pk + k)
                continue
        out.append((i, j, k))
    return out


def _groups(blocks: list[Block], la: int, lb: int, n: int) -> Iterable[list[Opcode]]:
    """difflib's get_grouped_opcodes(n) on these matching blocks: SequenceMatcher builds
    its opcodes, then their groups, on get_matching_blocks alone."""
    import difflib  # only --diff needs it; start-up time matters for hooks

    class Matched(difflib.SequenceMatcher[str]):
        def get_matching_blocks(self) -> list[difflib.Match]:
            return [difflib.Match(*block) for block in [*blocks, (la, lb, 0)]]

    return Matched(None, [], [], autojunk=False).get_grouped_opcodes(n)


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
    as difflib's unified diff with a/ b/ labels writes it.

    ``secrets``: the (start, end) offsets of Secrets in ``old``; their lines, counted as
    the diff counts lines (``str.splitlines``, so a lone ``\\r`` ends one), through the
    line holding ``end``. No line of the diff may show one: when one would appear as
    context, the file's hunks are written without context (still a valid patch); a hunk
    that changes such a line (a Secret sharing a line with a workload, as in one-line
    JSON) is left out, and its line returned in ``withheld`` so the caller can say so."""
    lines = lines_of(old, edits)
    blocks, la, lb = matching_blocks(lines, trust), len(lines.a), len(lines.b)
    hidden = _hidden(lines, secrets)
    context = 3
    if hidden and any(
        tag == "equal" and hidden(i1, i2)
        for group in _groups(blocks, la, lb, 3)
        for tag, i1, i2, _, _ in group
    ):
        context = 0
    out: list[str] = []
    withheld: list[int] = []
    for group in _groups(blocks, la, lb, context):
        if hidden and any(tag != "equal" and hidden(i1, i2) for tag, i1, i2, _, _ in group):
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


def _hidden(lines: Lines, secrets: Iterable[tuple[int, int]]) -> Callable[[int, int], bool] | None:
    """Whether any of the lines ``i1 <= i < i2`` of ``a`` holds Secret data (their
    spans joined); None when none does."""
    ends = lines.ends
    spans: list[tuple[int, int]] = []
    for start, end in sorted(secrets):
        first, last = bisect_right(ends, start), bisect_right(ends, end) + 1
        if spans and first <= spans[-1][1]:
            spans[-1] = (spans[-1][0], max(last, spans[-1][1]))
        else:
            spans.append((first, last))
    starts, stops = [s for s, _ in spans], [e for _, e in spans]

    def meets(i1: int, i2: int) -> bool:
        k = bisect_right(starts, i2 - 1) - 1  # the last span starting at or before
        return i1 < i2 and k >= 0 and stops[k] > i1

    return meets if spans else None


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

"""``--diff``: a git-style unified diff with fixed a/ b/ labels and no timestamps, that
never shows a line holding Secret data."""

from __future__ import annotations

from typing import NamedTuple


class Diff(NamedTuple):
    text: str
    withheld: list[int]  # 1-based first lines (old side) of hunks not shown


def unified_diff(
    old: str, new: str, path: str, hidden: set[int] | frozenset[int] = frozenset()
) -> Diff:
    """A git-style unified diff with fixed a/ b/ labels and no timestamps.

    ``hidden``: 1-based lines of ``old`` that hold Secret data. No line of the diff may
    show one: when one would appear as context, the file's hunks are written without
    context (still a valid patch); a hunk that changes such a line (a Secret sharing a
    line with a workload, as in one-line JSON) is left out, and its line returned in
    ``withheld`` so the caller can say so."""
    import difflib  # only --diff needs it; start-up time matters for hooks

    a = old.splitlines(keepends=True)
    b = new.splitlines(keepends=True)
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    context = 3
    if hidden and any(
        tag == "equal" and hidden.intersection(range(i1 + 1, i2 + 1))
        for group in matcher.get_grouped_opcodes(3)
        for tag, i1, i2, _, _ in group
    ):
        context = 0
    out: list[str] = []
    withheld: list[int] = []
    for group in matcher.get_grouped_opcodes(context):
        if hidden and any(
            tag != "equal" and hidden.intersection(range(i1 + 1, i2 + 1))
            for tag, i1, i2, _, _ in group
        ):
            withheld.append(group[0][1] + 1)
            continue
        if not out:
            out += [f"--- a/{path}\n", f"+++ b/{path}\n"]
        first, last = group[0], group[-1]
        out.append(f"@@ -{_range(first[1], last[2])} +{_range(first[3], last[4])} @@\n")
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                out += [_line(" ", x) for x in a[i1:i2]]
                continue
            out += [_line("-", x) for x in a[i1:i2]]
            out += [_line("+", x) for x in b[j1:j2]]
    return Diff("".join(out), withheld)


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

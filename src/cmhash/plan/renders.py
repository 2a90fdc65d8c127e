"""Where one Helm render ends and the next begins in a stream of several (users' view:
docs/concepts/environments.md, "Several releases of one chart in one stream").

``helmfile template`` writes each release's ``helm template`` output to stdout as it is,
one after the other, with nothing between them (helmfile ``pkg/helmexec/exec.go``,
``TemplateRelease``: ``helm.write(nil, out)``; the ``Templating release=…`` line goes to
its log, on stderr). What tells two renders apart is the order ``helm template`` prints
one render in (helm ``pkg/action/action.go`` ``renderResources``, ``pkg/cmd/template.go``):

1. the chart's CRDs (``CHART/crds/...``, with ``--include-crds``), each file once;
2. the manifests, sorted by kind in ``InstallOrder``, unknown kinds last and by kind name
   among themselves, the documents of one file next to each other
   (``pkg/release/v1/util/kind_sorter.go``: ``sortManifestsByKind`` is a stable sort;
   the order: knowledge/helm.py);
3. the hooks (documents with a ``helm.sh/hook`` annotation).

A new render of the same chart starts at a document that breaks that order
(``_Render.breaks``) or whose ``app.kubernetes.io/instance`` label (Helm's standard label
for the release name) differs from the render's; a document of another top-level chart
(the first segment of ``# Source: CHART/...``; subcharts are ``CHART/charts/...``) starts
a render of its own. Hooks are only split off by their label: their order varies between
Helm releases. A break is taken only when what follows prints a (template, kind) that the
chart's render before it printed too (``_confirm``): a stream in an order Helm does not
print (assembled by hand, re-sorted) is never cut.
"""

from __future__ import annotations

import bisect
import re
from typing import NamedTuple

from cmhash.knowledge.helm import HELM_HOOK, INSTALL_ORDER, INSTANCE_LABEL, SOURCE_COMMENT

_KIND = re.compile(r"kind:[ \t]*[\"']?([A-Za-z0-9]+)")
_HOOK = re.compile(r"[ \t]+[\"']?" + re.escape(HELM_HOOK) + r"[\"']?[ \t]*:")
_INSTANCE = re.compile(
    r"[ \t]+[\"']?" + re.escape(INSTANCE_LABEL) + r"[\"']?[ \t]*:[ \t]*[\"']?([^\"'\s#]+)"
)


def _line_match(
    pattern: re.Pattern[str], word: str, text: str, start: int, end: int
) -> re.Match[str] | None:
    """``pattern`` matched at the start of a line holding ``word``, between ``start`` and
    ``end``: found with ``str.find`` first (a big stream is scanned at memchr speed)."""
    at = text.find(word, start, end)
    while at != -1:
        line = text.rfind("\n", start, at) + 1 or start
        m = pattern.match(text, line, end)
        if m is not None:
            return m
        at = text.find(word, at + len(word), end)
    return None


_RANK = {kind: i for i, kind in enumerate(INSTALL_ORDER)}

_CRDS, _MANIFESTS, _HOOKS = 0, 1, 2


def _kind_key(kind: str) -> tuple[int, str]:
    rank = _RANK.get(kind)
    return (rank, "") if rank is not None else (len(_RANK), kind)


class _Doc(NamedTuple):
    chart: str
    path: str
    kind: str
    phase: int
    instance: str | None


class _Render:
    def __init__(self, doc: _Doc) -> None:
        self.chart = doc.chart
        self.instance: str | None = None
        self.phase = -1  # (no phase yet: ``take`` starts the document's)
        self.take(doc)

    def breaks(self, doc: _Doc) -> bool:
        """Whether ``doc`` cannot be the next document of this render."""
        if doc.chart != self.chart or doc.phase < self.phase:
            return True
        if doc.instance and self.instance and doc.instance != self.instance:
            return True
        if doc.phase == _HOOKS or doc.phase != self.phase:
            return False
        at = (doc.path, doc.kind)
        if at in self.seen and at != self.previous:
            return True
        return doc.phase == _MANIFESTS and _kind_key(doc.kind) < self.last

    def take(self, doc: _Doc) -> None:
        if doc.phase != self.phase:
            self.phase = doc.phase
            self.seen: set[tuple[str, str]] = set()
            self.last = (-1, "")
        self.instance = self.instance or doc.instance
        at = (doc.path, doc.kind)
        self.seen.add(at)
        self.previous = at
        if doc.phase == _MANIFESTS:
            self.last = max(self.last, _kind_key(doc.kind))


def _is_crd_file(rest: str) -> bool:
    """Whether a ``# Source:`` path (after the chart's name) is in a chart's ``crds/``
    directory (its own, or a subchart's: ``charts/SUB/crds/``), which Helm prints first;
    a CRD under ``templates/`` (``templates/crds/``) is a manifest like any other."""
    parts = rest.split("/")
    i = 0
    while i + 2 < len(parts) and parts[i] == "charts":
        i += 2
    return parts[i] == "crds" and i + 1 < len(parts)


def _doc(text: str, path: str, start: int, end: int) -> _Doc | None:
    kind = _line_match(_KIND, "kind:", text, start, end)
    if kind is None:
        return None  # empty, or a Secret --hide-secret left out: says nothing
    chart, _, rest = path.partition("/")
    if _line_match(_HOOK, HELM_HOOK, text, start, end) is not None:
        phase = _HOOKS
    elif _is_crd_file(rest):
        phase = _CRDS
    else:
        phase = _MANIFESTS
    instance = _line_match(_INSTANCE, INSTANCE_LABEL, text, start, end)
    return _Doc(chart, path, kind.group(1), phase, instance.group(1) if instance else None)


def _source_lines(text: str) -> list[tuple[int, int]]:
    """Where each ``# Source:`` line starts and its path ends (``str.find``: a regex
    over a 13 MB stream costs ten times as much)."""
    found = []
    at = text.find(SOURCE_COMMENT)
    while at != -1:
        if at == 0 or text[at - 1] == "\n":
            eol = text.find("\n", at)
            found.append((at, len(text) if eol == -1 else eol))
        at = text.find(SOURCE_COMMENT, at + len(SOURCE_COMMENT))
    return found


class _Segment:
    """A candidate render: its chart, the (template, kind) pairs it prints, its
    release's instance label."""

    def __init__(self, chart: str) -> None:
        self.chart = chart
        self.pairs: set[tuple[str, str]] = set()
        self.instance: str | None = None


def _confirm(segments: list[_Segment]) -> list[int]:
    """For each candidate render, the render it is: itself when it prints a (template,
    kind) the chart's render before it printed too (the chart starting over, as a second
    ``helm template`` does), else that render, continued. A stream in an order Helm does
    not print (hand-assembled, re-sorted) is then not cut into pieces."""
    owner: list[int] = []
    current: dict[str, int] = {}
    for i, seg in enumerate(segments):
        j = current.get(seg.chart)
        if j is None or seg.pairs & segments[j].pairs:
            current[seg.chart] = i
            owner.append(i)
            continue
        prev = segments[j]
        prev.pairs |= seg.pairs
        prev.instance = prev.instance or seg.instance
        owner.append(j)
    return owner


class Renders:
    """The renders of one Helm source, by offset: each a unit of its own (its key), and
    how messages name it."""

    def __init__(self, text: str) -> None:
        self.starts: list[int] = []
        self.units: list[str] = []
        self._label: dict[str, str] = {}
        self._paths: list[str] = []
        lines = _source_lines(text)
        render: _Render | None = None
        segments: list[_Segment] = []
        of_line: list[int] = []
        for i, (start, path_end) in enumerate(lines):
            end = lines[i + 1][0] if i + 1 < len(lines) else len(text)
            path = text[start + len(SOURCE_COMMENT) : path_end].strip()
            doc = _doc(text, path, path_end, end)
            if doc is not None and (render is None or render.breaks(doc)):
                render = _Render(doc)
                segments.append(_Segment(doc.chart))
            elif render is None:
                continue  # (no kind yet: belongs to the first render)
            elif doc is not None:
                render.take(doc)
            seg = segments[-1]
            if doc is not None:
                seg.pairs.add((doc.path, doc.kind))
                seg.instance = seg.instance or doc.instance
            self.starts.append(start)
            self._paths.append(path)
            of_line.append(len(segments) - 1)
        self._name(segments, of_line)

    def _name(self, segments: list[_Segment], of_line: list[int]) -> None:
        owner = _confirm(segments)
        count: dict[str, int] = {}
        key: dict[int, str] = {}
        for i in sorted(set(owner)):
            chart = segments[i].chart
            count[chart] = count.get(chart, 0) + 1
            key[i] = f"{chart}#{count[chart]}"
        self.units = [key[owner[s]] for s in of_line]
        for i, unit in key.items():
            chart, _, n = unit.rpartition("#")
            label = f"chart {chart}"
            if count[chart] > 1:  # (the release name alone may repeat: -n differs)
                label += f", render {n} of {count[chart]}"
                instance = segments[i].instance
                label += f" (release {instance})" if instance else ""
            self._label[unit] = label

    def unit_at(self, offset: int) -> str:
        """The render that holds ``offset`` (what precedes the first ``# Source:`` line
        belongs to the first render; no such lines: one render, "")."""
        return self.units[self._line(offset)] if self.units else ""

    def path_at(self, offset: int) -> str | None:
        """The ``# Source:`` path of the document at ``offset``."""
        return self._paths[self._line(offset)] if self._paths else None

    def _line(self, offset: int) -> int:
        """The ``# Source:`` line ``offset`` follows (the first for text before it)."""
        return max(bisect.bisect_right(self.starts, offset) - 1, 0)

    def label(self, unit: str) -> str:
        return self._label.get(unit, "")

    @property
    def several(self) -> bool:
        """Whether one chart has several renders here."""
        return any(", " in label for label in self._label.values())

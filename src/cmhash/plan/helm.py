"""The release namespace of Helm output.

Helm installs every namespaced object that names no ``metadata.namespace`` into the
release namespace (``helm install -n NS``; the kube client sets it on each object:
helm/helm ``pkg/kube/client.go`` ``setNamespace``). Helm does not tell a post-renderer
which namespace that is (Helm 4 gives a ``postrenderer/v1`` plugin only
``HELM_PLUGIN_NAME``, ``HELM_PLUGINS`` and ``HELM_PLUGIN_DIR``; Helm 3 passes nothing),
so for input that is Helm output (``# Source:`` comments, or Helm 4's
``postrenderer.helm.sh/postrender-filename`` annotations) cmhash reads it from what the
chart itself writes, per **render**: one source (a file, or stdin), and inside it one
top-level chart (the first segment of ``# Source: CHART/...``; subcharts are
``CHART/charts/...``). Other files of a repository walk are never affected.

**Evidence.** A chart's workloads must find their ConfigMaps and Secrets, and those never
cross namespaces. So when a workload that names namespace N references an object the
render defines without a namespace (and not in N), that object is in N: the release
namespace is N. The other way round, a workload without a namespace referencing an object
the render only defines in N says the same. Objects a chart deliberately places
elsewhere (kube-prometheus-stack's Services in ``kube-system``, a dashboard ConfigMap in
grafana's namespace) are no evidence: nothing of the release references them across.

The rule, when ``-n`` / ``namespace:`` is not given:

1. the evidence agrees on one namespace: that is the release namespace. An exported
   ``HELM_NAMESPACE`` that says otherwise is stale (``helm -n`` overrides it): a warning;
2. no evidence: ``HELM_NAMESPACE`` when exported, else none (objects without a namespace
   then match each other, and nothing else);
3. the evidence disagrees (no one namespace lets every such reference resolve): the
   exported ``HELM_NAMESPACE`` when there is one; else the run stops (exit 2) naming
   two references that disagree, so that Helm, which hides a post-renderer's stderr but
   shows its failure, shows it too. ``-n`` settles it.

What was inferred, and from what, is said in one note line.
"""

from __future__ import annotations

import bisect
import os
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import NamedTuple

from cmhash.analyze.summaries import DocInfo
from cmhash.findings import Code, Finding, finding
from cmhash.read.source import SourceText

_HELM_MARKS = re.compile(r"^# Source: |postrenderer\.helm\.sh/postrender-filename", re.MULTILINE)
_SOURCE_LINE = re.compile(r"^# Source: ([^/\r\n]+)/", re.MULTILINE)
ENV = "HELM_NAMESPACE"


def is_helm_output(texts: Iterable[str]) -> bool:
    return any(_HELM_MARKS.search(t) is not None for t in texts)


def is_helm_source(src: SourceText) -> bool:
    """``is_helm_output`` of one source, computed once."""
    if src.helm_output is None:
        src.helm_output = is_helm_output([src.text])
    return src.helm_output


class Renders:
    """The renders of one Helm source: the chart of each ``# Source:`` line, by offset."""

    def __init__(self, text: str) -> None:
        self.starts: list[int] = []
        self.charts: list[str] = []
        for m in _SOURCE_LINE.finditer(text):
            self.starts.append(m.start())
            self.charts.append(m.group(1))

    def chart_at(self, offset: int) -> str:
        """The chart whose render holds ``offset`` (what precedes the first ``# Source:``
        line belongs to the first render; no such lines: one render, "")."""
        if not self.charts:
            return ""
        i = bisect.bisect_right(self.starts, offset) - 1
        return self.charts[max(i, 0)]


class Evidence(NamedTuple):
    """One reference that fixes the release namespace: it resolves only there."""

    namespaces: frozenset[str]
    src: SourceText
    offset: int
    text: str  # "Deployment/web -n shop uses ConfigMap 'cfg', which has no namespace"


class Release(NamedTuple):
    namespace: str | None
    note: str | None


def _evidence(
    src: SourceText, docs: Sequence[DocInfo], renders: Renders
) -> dict[str, list[Evidence]]:
    """Per chart, the references between an object with a namespace and one without."""
    configs: dict[tuple[str, str, str], set[str | None]] = {}
    for d in docs:
        for c in d.configs:
            key = (renders.chart_at(c.offset), c.kind, c.name)
            configs.setdefault(key, set()).add(c.namespace)
    found: dict[str, list[Evidence]] = {}
    for d in docs:
        for w in d.workloads:
            chart = renders.chart_at(w.offset)
            for ref in w.refs:
                if ref.pattern or ref.namespace is not None:
                    continue
                have = configs.get((chart, ref.target_kind, ref.name))
                if not have or w.namespace in have:
                    continue  # not in the render, or found without the release namespace
                if w.namespace is None:
                    named = frozenset(n for n in have if n is not None)
                    text = (
                        f"{w.label} (no namespace) uses {ref.target_kind} {ref.name!r}, which "
                        f"the render only has in {', '.join(repr(n) for n in sorted(named))}"
                    )
                elif None in have:
                    named = frozenset((w.namespace,))
                    text = (
                        f"{w.label} uses {ref.target_kind} {ref.name!r}, which the render "
                        "has without a namespace"
                    )
                else:
                    continue  # only in other named namespaces: no release namespace helps
                found.setdefault(chart, []).append(Evidence(named, src, ref.offset, text))
    return found


def _decide(
    src: SourceText,
    chart: str,
    evidence: list[Evidence],
    exported: str | None,
    findings: list[Finding],
) -> Release:
    where = f"{src.display}{f' (chart {chart})' if chart else ''}"
    if not evidence:
        if exported:
            return Release(
                exported,
                f"Helm output {where}: objects without a namespace are in "
                f"{exported!r} (from {ENV}; -n overrides)",
            )
        return Release(None, None)
    common = frozenset.intersection(*(e.namespaces for e in evidence))
    if len(common) == 1:
        (ns,) = common
        first = evidence[0]
        if exported and exported != ns:
            findings.append(
                finding(
                    first.src,
                    first.offset,
                    Code.HELM_NAMESPACE,
                    f"{ENV}={exported!r} is not the release namespace of this render: "
                    f"{first.text}, so the release is in {ns!r} (a stale {ENV}? unset it "
                    "or pass -n)",
                )
            )
        return Release(
            ns,
            f"Helm output {where}: objects without a namespace are taken to be in {ns!r}, "
            f"the release namespace ({first.text}; -n overrides)",
        )
    if exported:
        return Release(
            exported,
            f"Helm output {where}: objects without a namespace are in {exported!r} "
            f"(from {ENV}; the chart's own references do not agree on one; -n overrides)",
        )
    a = evidence[0]
    b = next((e for e in evidence if not (e.namespaces & a.namespaces)), evidence[-1])
    raise b.src.error(
        f"Helm output{f' (chart {chart})' if chart else ''}: the release namespace cannot be "
        f"told: {b.text}, but {a.text} "
        f"(line {a.src.position(a.offset)[0]}); pass -n NAMESPACE (the release's, "
        f"e.g. as a post-renderer argument), namespace: in .cmhash.yaml, or export {ENV}",
        b.offset,
    )


class Namespaces:
    """The release namespace of each render of the run's Helm sources."""

    def __init__(self) -> None:
        self._renders: dict[int, tuple[Renders, dict[str, str]]] = {}
        self.notes: list[str] = []

    def add(self, src: SourceText, renders: Renders, chosen: dict[str, str]) -> None:
        if chosen:
            self._renders[id(src)] = (renders, chosen)

    def __bool__(self) -> bool:
        return bool(self._renders)

    def of(self, src: SourceText, offset: int) -> str | None:
        got = self._renders.get(id(src))
        if got is None:
            return None
        renders, chosen = got
        return chosen.get(renders.chart_at(offset))


def release_namespaces(
    sources: Sequence[SourceText],
    docs: Sequence[Sequence[DocInfo]],
    findings: list[Finding],
    env: Mapping[str, str] | None = None,
) -> Namespaces:
    """The release namespace of every render of the Helm sources (rules in the module
    docstring); ``findings`` gets the stale-``HELM_NAMESPACE`` warnings."""
    exported = (os.environ if env is None else env).get(ENV) or None
    out = Namespaces()
    for src, per in zip(sources, docs, strict=True):
        if not per or not is_helm_source(src):
            continue
        if all(c.namespace is not None for d in per for c in d.configs) and all(
            w.namespace is not None for d in per for w in d.workloads
        ):
            continue  # every object names its namespace: nothing to infer
        renders = Renders(src.text)
        evidence = _evidence(src, per, renders)
        charts = dict.fromkeys(renders.charts or [""])
        chosen: dict[str, str] = {}
        for chart in charts:
            release = _decide(src, chart, evidence.get(chart, []), exported, findings)
            if release.namespace is not None:
                chosen[chart] = release.namespace
            if release.note is not None:
                out.notes.append(release.note)
        out.add(src, renders, chosen)
    return out

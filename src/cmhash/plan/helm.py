"""The release namespace of Helm output.

Helm installs every namespaced object that names no ``metadata.namespace`` into the
release namespace (``helm install -n NS``; the kube client sets it on each object:
helm/helm ``pkg/kube/client.go`` ``setNamespace``). Helm does not tell a post-renderer
which namespace that is (Helm 4 gives a ``postrenderer/v1`` plugin only
``HELM_PLUGIN_NAME``, ``HELM_PLUGINS`` and ``HELM_PLUGIN_DIR``; Helm 3 passes nothing),
so for input that is Helm output (``# Source:`` comments, or Helm 4's
``postrenderer.helm.sh/postrender-filename`` annotations) cmhash reads it from what the
chart itself writes, per **render**: one source (a file, or stdin), and inside it each
``helm template`` output (plan/renders.py). Other files of a repository walk are never
affected.

The rules, when ``-n`` / ``namespace:`` is not given (docs/concepts/environments.md,
"Helm output: the release namespace"): ConfigMaps and Secrets never cross namespaces, so
a reference between an object that names namespace N and one the render has without a
namespace is **evidence** that the release is in N. Evidence that agrees decides (an
exported ``HELM_NAMESPACE`` that says otherwise is stale: a warning); no evidence:
``HELM_NAMESPACE`` when exported, else none; evidence that disagrees: the exported
``HELM_NAMESPACE``, else the run stops (exit 2) naming two references, so that Helm,
which hides a post-renderer's stderr but shows its failure, shows it too. What was
inferred, and from what, is said in one note line.
"""

# No "from __future__ import annotations": typing compiles string NamedTuple fields at import

import os
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, NamedTuple

from cmhash.analyze.summaries import DocInfo
from cmhash.findings import Code, Finding, finding
from cmhash.knowledge.helm import NAMESPACE_ENV, POSTRENDER_FILENAME, SOURCE_COMMENT
from cmhash.read.source import SourceText

if TYPE_CHECKING:
    from cmhash.plan.renders import Renders

# Helm's ``# Source: CHART/templates/FILE`` (a path in the chart, never a URL: a
# vendored manifest's "# Source: https://..." header is no Helm output), or Helm 4's
# post-renderer annotation (re.MULTILINE; compiled by re's cache for a text that holds
# one of the two: most inputs are no Helm output)
_HELM_MARKS = (
    "^"
    + re.escape(SOURCE_COMMENT)
    + r"(?![A-Za-z][A-Za-z0-9+.-]*://)|"
    + re.escape(POSTRENDER_FILENAME)
)


def is_helm_source(src: SourceText) -> bool:
    """Whether a source is Helm output, computed once."""
    if src.helm_output is None:
        text = src.text
        marked = SOURCE_COMMENT in text or POSTRENDER_FILENAME in text
        src.helm_output = marked and re.search(_HELM_MARKS, text, re.MULTILINE) is not None
    return src.helm_output


class Evidence(NamedTuple):
    """One reference that fixes the release namespace: it resolves only there."""

    namespaces: frozenset[str]
    src: SourceText
    offset: int
    text: str  # "Deployment/web -n shop uses ConfigMap 'cfg', which has no namespace"
    path: str | None = None  # the workload's # Source: template


class Release(NamedTuple):
    namespace: str | None
    note: str | None


def _evidence(
    src: SourceText, docs: Sequence[DocInfo], renders: "Renders"
) -> dict[str, list[Evidence]]:
    """Per render, the references between an object with a namespace and one without."""
    configs: dict[tuple[str, str, str], set[str | None]] = {}
    for d in docs:
        for c in d.configs:
            key = (renders.unit_at(c.offset), c.kind, c.name)
            configs.setdefault(key, set()).add(c.namespace)
    found: dict[str, list[Evidence]] = {}
    for d in docs:
        for w in d.workloads:
            chart = renders.unit_at(w.offset)
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
                path = renders.path_at(w.offset)
                found.setdefault(chart, []).append(Evidence(named, src, ref.offset, text, path))
    return found


def _twice(a: Evidence, b: Evidence, label: str) -> str:
    """When one template gives both disagreeing references: the releases a stream of
    several renders could not be told apart by (plan/renders.py), said as such."""
    if a.path is None or a.path != b.path:
        return ""
    chart = label.removeprefix("chart ").split(",")[0]
    return (
        f"; one template ({a.path}) gives both: if this stream holds two releases of "
        f"{chart} (helmfile template), cmhash cannot tell them apart (Helm's output order "
        "does not show it, and no app.kubernetes.io/instance label names the release): "
        "run cmhash on each release's render"
    )


def _decide(
    src: SourceText,
    label: str,
    evidence: list[Evidence],
    exported: str | None,
    findings: list[Finding],
) -> Release:
    where = f"{src.display}{f' ({label})' if label else ''}"
    if not evidence:
        if exported:
            return Release(
                exported,
                f"Helm output {where}: objects without a namespace are in "
                f"{exported!r} (from {NAMESPACE_ENV}; -n overrides)",
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
                    f"{NAMESPACE_ENV}={exported!r} is not the release namespace of this render: "
                    f"{first.text}, so the release is in {ns!r} (a stale {NAMESPACE_ENV}? unset it "
                    "or pass -n)",
                )
            )
        return Release(
            ns,
            f"Helm output {where}: objects without a namespace are taken to be in {ns!r}, "
            f"the release namespace ({first.text}; -n overrides)",
        )
    a = evidence[0]
    b = next((e for e in evidence if not (e.namespaces & a.namespaces)), evidence[-1])
    twice = _twice(a, b, label)
    if exported:
        if twice:  # HELM_NAMESPACE decides for releases it cannot be right for: say so
            findings.append(
                finding(
                    b.src,
                    b.offset,
                    Code.HELM_NAMESPACE,
                    f"{NAMESPACE_ENV}={exported!r} is taken as the release namespace of every "
                    f"object without one, but {b.text}, and {a.text}{twice}",
                )
            )
        return Release(
            exported,
            f"Helm output {where}: objects without a namespace are in {exported!r} "
            f"(from {NAMESPACE_ENV}; the chart's own references do not agree on one; -n overrides)",
        )
    raise b.src.error(
        f"Helm output{f' ({label})' if label else ''}: the release namespace cannot be "
        f"told: {b.text}, but {a.text} "
        f"(line {a.src.position(a.offset)[0]}){twice}; pass -n NAMESPACE (the release's, "
        f"e.g. as a post-renderer argument), namespace: in .cmhash.yaml, or export {NAMESPACE_ENV}",
        b.offset,
    )


class Namespaces:
    """The release namespace of each render of the run's Helm sources."""

    def __init__(self) -> None:
        self._renders: dict[int, tuple[Renders, dict[str, str]]] = {}
        self._several: dict[int, Renders] = {}  # sources holding several releases
        self.notes: list[str] = []

    def __bool__(self) -> bool:
        return bool(self._renders)

    def render_of(self, src: SourceText, offset: int) -> str | None:
        """The render at ``offset`` when ``src`` holds several releases of one chart
        (``helmfile template``), else None: each is a place of its own (plan/index.py)."""
        renders = self._several.get(id(src))
        return None if renders is None else renders.unit_at(offset)

    @property
    def several(self) -> bool:
        return bool(self._several)

    def of(self, src: SourceText, offset: int) -> str | None:
        got = self._renders.get(id(src))
        if got is None:
            return None
        renders, chosen = got
        return chosen.get(renders.unit_at(offset))


def release_namespaces(
    sources: Sequence[SourceText],
    docs: Sequence[Sequence[DocInfo]],
    findings: list[Finding],
) -> Namespaces:
    """The release namespace of every render of the Helm sources (rules in the module
    docstring); ``findings`` gets the stale-``HELM_NAMESPACE`` warnings."""
    exported = os.environ.get(NAMESPACE_ENV) or None
    out = Namespaces()
    for src, per in zip(sources, docs, strict=True):
        if not per or not is_helm_source(src):
            continue
        if all(c.namespace is not None for d in per for c in d.configs) and all(
            w.namespace is not None for d in per for w in d.workloads
        ):
            continue  # every object names its namespace: nothing to infer
        from cmhash.plan.renders import Renders  # (only here: a render to read)

        renders = Renders(src.text)
        evidence = _evidence(src, per, renders)
        chosen: dict[str, str] = {}
        for unit in dict.fromkeys(renders.units or [""]):
            label = renders.label(unit)
            release = _decide(src, label, evidence.get(unit, []), exported, findings)
            if release.namespace is not None:
                chosen[unit] = release.namespace
            if release.note is not None:
                out.notes.append(release.note)
        if chosen:
            out._renders[id(src)] = (renders, chosen)
        if renders.several:
            out._several[id(src)] = renders
    return out

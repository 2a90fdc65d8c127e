"""Runs whose warnings nobody sees: kustomize running cmhash as a legacy exec transformer
(from kustomize v5.4, ``kubectl kustomize`` included, the plugin's stderr is kept and
shown only when it fails: api/internal/plugins/execplugin/execplugin.go, commit
9546529f1) or as a KRM function (kustomize reads a function's ``results`` only to write
them to a results file, and fails the build on its exit code alone: kyaml
fn/runtime/runtimeutil/runtimeutil.go ``FunctionFilter.Filter``).

There a finding that drops a reference from the checksum (findings.DROPS_A_REFERENCE: an
object the input has only in another namespace, as a chart's objects without a namespace
are once kustomize has taken Helm's ``# Source:`` lines away) would leave a checksum
that misses what the pod uses, and a green build. It is an error instead: the build
fails and shows the message, which says where to give the namespace or how to accept
the finding (``acknowledge:``, which makes it info, as everywhere)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from cmhash.findings import DROPS_A_REFERENCE, Code
from cmhash.model import Level

if TYPE_CHECKING:
    from cmhash.app.result import RunResult
    from cmhash.read.source import SourceText

# kustomize sets these for a legacy exec plugin (api/internal/plugins/execplugin/
# execplugin.go getEnv): the plugin's config and its kustomization's directory
EXEC_PLUGIN_ENV = ("KUSTOMIZE_PLUGIN_CONFIG_ROOT", "KUSTOMIZE_PLUGIN_CONFIG_STRING")

TRANSFORMER = "kustomize's exec transformer"
KRM_FUNCTION = "kustomize's KRM function"


# what to do about each, said in the error
_FIX = {
    Code.NAMESPACE_MISMATCH: "give the namespace (namespace: in the kustomization, or in "
    "cmhash's config)",
    Code.REFERENCE_SHAPE: "write the field as its operator reads it",
}


def escalated(result: RunResult, route: str) -> RunResult:
    """``result`` with each warning that drops a reference made an error, saying why."""
    found = []
    for f in result.findings:
        if f.code in DROPS_A_REFERENCE and f.level is Level.WARNING:
            f = f._replace(
                level=Level.ERROR,
                message=f"{f.message}; an error as {route}, whose warnings kustomize does "
                f"not show: {_FIX[f.code]}, or accept it with acknowledge: in cmhash's "
                "config",
            )
        found.append(f)
    return result._replace(findings=found)


# kustomize's buildMetadata: [originAnnotations] writes the file each object came from
# on the objects it hands an exec plugin (api/resource/origin.go, OriginAnnotationKey;
# kustomize v4.5.4 and v5 alike); without it, nothing says where an object came from
ORIGIN = "config.kubernetes.io/origin"


def with_origins(result: RunResult, source: SourceText) -> RunResult:
    """``result`` with each finding in ``source`` (kustomize's stream, which nobody
    wrote) at the file its object's origin annotation names, and the object:
    ``app.yaml (Deployment/web)``; a finding of an object without one stays as it is."""
    if ORIGIN not in source.text or not result.findings:
        return result
    spans = _origins(source)
    found = []
    for f in result.findings:
        if f.path == source.display:
            where = next((w for first, last, w in spans if first <= f.line <= last), None)
            if where is not None:
                f = f._replace(path=where, line=0, column=0)
        found.append(f)
    return result._replace(findings=found)


def _origins(source: SourceText) -> list[tuple[int, int, str]]:
    """(first line, last line, "FILE (Kind/name)") of each object with an origin."""
    import yaml

    from cmhash.errors import NodeError
    from cmhash.parse.events import backend, parse_chunk
    from cmhash.parse.tree import deref, get_path, scalar

    try:
        roots = parse_chunk(source.text, 0, backend("exact"))
    except NodeError:
        return []
    out = []
    for root in roots:
        node = deref(root)
        text = scalar(get_path(node, ("metadata", "annotations", ORIGIN))) if node else None
        try:
            origin = yaml.safe_load(text) if text else None
        except yaml.YAMLError:
            continue
        path = origin.get("path") if isinstance(origin, dict) else None
        if node is None or not isinstance(path, str) or not path:
            continue
        kind = scalar(get_path(node, ("kind",))) or "?"
        name = scalar(get_path(node, ("metadata", "name"))) or "?"
        lines = source.position(node.start)[0], source.position(node.end)[0]
        out.append((*lines, f"{path} ({kind}/{name})"))
    return out

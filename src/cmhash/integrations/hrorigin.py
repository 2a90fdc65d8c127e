"""What cmhash's post-renderer in a Flux HelmRelease was computed from, kept beside it.

helm-controller renders the release from the HelmRelease itself: its chart and version,
release name and namespace, the chart's values files, and the values merged from
``spec.valuesFrom`` then ``spec.values`` (fluxcd/pkg chartutil/values.go
``ChartValuesFromReferences``, called by helm-controller's HelmRelease reconciler).
The patches are computed in CI from a render of one's own; when the HelmRelease
changes and that render does not (it reads another values file, names the version by
hand), the patches go stale without a word. So cmhash writes, between its own marker
lines, one ``# cmhash:from FIELD: VALUE`` line per field the render depends on, and
``--check`` names each field that is no longer what the patches were computed from.

The chart, version, values files, release name and target namespace are written as they
are (JSON strings); ``spec.values`` and ``spec.valuesFrom`` never are: they may hold
passwords, so they are written as a SHA-256 of their content (canonical JSON of the
parsed values; for ``valuesFrom`` also each referenced key of the ConfigMaps among the
inputs, by its own digest). A Secret's key is in Git nowhere else, and a SHA-256 of a
guessable value gives it away to whoever tries values, so it is fingerprinted only
under ``--secret-key-env`` (HMAC-SHA256 with the key, as the lock file's); without a
key only the reference is (``secret_notes`` says so, and how to have it).
"""

from __future__ import annotations

import hmac
import json
import re
from collections.abc import Mapping
from hashlib import sha256
from typing import Any

from cmhash.parse.tree import MAP, Node, deref, entries, get_path, scalar, to_python

FROM = "# cmhash:from "
# (field, written as a digest): the order of the lines
FIELDS = (
    ("spec.chart.spec.chart", False),
    ("spec.chart.spec.version", False),
    ("spec.chart.spec.valuesFiles", False),
    ("spec.releaseName", False),
    ("spec.targetNamespace", False),
    # what the release's name and namespace come from when those two are not written
    # (fluxcd/helm-controller api/v2 helmrelease_types.go: GetReleaseName is
    # spec.releaseName, else [spec.targetNamespace-]metadata.name; GetReleaseNamespace
    # is spec.targetNamespace, else metadata.namespace); GetStorageNamespace (where
    # Helm keeps its release record) changes nothing rendered, so it is not recorded
    ("metadata.name", False),
    ("metadata.namespace", False),
    ("spec.values", True),
    ("spec.valuesFrom", True),
    # the user's own post-renderers, which helm-controller runs after cmhash's
    ("spec.postRenderers", True),
)
# metadata field -> the spec field that, when written, decides in its place
_DERIVED = {
    "metadata.name": ("spec", "releaseName"),
    "metadata.namespace": ("spec", "targetNamespace"),
}
# fluxcd/pkg apis/meta ValuesReference GetValuesKey: "values.yaml" when valuesKey is empty
DEFAULT_VALUES_KEY = "values.yaml"
_LINE = re.compile(r"^[ \t]*" + re.escape(FROM) + r"(\S+): (.*?)[ \t]*\r?$", re.MULTILINE)

# (kind, name) -> key -> content, of the ConfigMaps and Secrets among the inputs
Contents = Mapping[tuple[str, str], Mapping[str, bytes]]


def _digest(data: Any) -> str:
    text = json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return "sha256:" + sha256(text.encode("utf-8")).hexdigest()


def _values_from(data: Any, given: Contents, key: bytes | None) -> Any:
    """The references and, for each, the digest of the key it reads (None: not given,
    or a Secret's without ``key``)."""
    content: list[str | None] = []
    refs = data if isinstance(data, list) else []
    for ref in refs:
        ref = ref if isinstance(ref, dict) else {}
        entries = given.get((str(ref.get("kind")), str(ref.get("name"))), {})
        value = entries.get(str(ref.get("valuesKey") or DEFAULT_VALUES_KEY))
        if value is None or ref.get("kind") != "Secret":
            content.append(None if value is None else sha256(value).hexdigest())
        else:
            content.append(None if key is None else hmac.new(key, value, sha256).hexdigest())
    out = {"refs": data, "content": content}
    if any(isinstance(r, dict) and r.get("kind") == "Secret" for r in refs):
        out["keyed"] = key is not None  # (a record of ConfigMaps only: as before)
    return out


def secret_notes(release: Node) -> list[str]:
    """What to tell when no ``--secret-key-env`` is given: the valuesFrom Secrets whose
    content is left out of the record (so ``--check`` does not see it change)."""
    refs = to_python(get_path(release, ("spec", "valuesFrom")))
    items = refs if isinstance(refs, list) else []
    names = [str(r.get("name")) for r in items if isinstance(r, dict) and r.get("kind") == "Secret"]
    return [
        f"spec.valuesFrom names Secret/{name}: no fingerprint of its content is written to "
        "the HelmRelease (it is in Git), so --check does not see it change; give "
        "--secret-key-env VAR to write one keyed with VAR's key"
        for name in names
    ]


def record(
    release: Node, given: Contents, key: bytes | None = None, others: list[Any] | None = None
) -> dict[str, str]:
    """field -> what is written for it, for every field the HelmRelease sets; ``key``:
    --secret-key-env's, which keys the fingerprints of valuesFrom Secrets; ``others``:
    the post-renderers besides cmhash's."""
    out = {}
    for field, digest in FIELDS:
        if field == "spec.postRenderers":
            if others:
                out[field] = _digest(others)
            continue
        if field in _DERIVED and scalar(get_path(release, _DERIVED[field])):
            continue  # the spec field says it: metadata's does not enter the render
        node = get_path(release, tuple(field.split(".")))
        if node is None or node.is_null:
            continue
        data = to_python(node)
        if field == "spec.valuesFrom":
            data = _values_from(data, given, key)
        out[field] = _digest(data) if digest else json.dumps(data, ensure_ascii=True)
    return out


def lines(rec: Mapping[str, str], pad: str) -> str:
    return "".join(f"{pad}{FROM}{field}: {value}\n" for field, value in rec.items())


def read(block: str) -> dict[str, str] | None:
    """The record written in cmhash's lines (None: they hold none: an earlier cmhash)."""
    found = {m.group(1): m.group(2) for m in _LINE.finditer(block)}
    return found or None


def changed(old: Mapping[str, str], new: Mapping[str, str]) -> list[str]:
    """The fields whose value differs (set, changed or taken out), in FIELDS' order; a
    metadata field that a spec field now decides in its place is that spec field's."""
    superseded = {f for f, spec in _DERIVED.items() if ".".join(spec) in new}
    return [f for f, _ in FIELDS if old.get(f) != new.get(f) and f not in superseded]


def where(release: Node, field: str) -> int:
    """The offset a message about ``field`` points at: its key, else the key of the
    nearest level of it the HelmRelease has (a field taken out)."""
    path = tuple(field.split("."))
    for n in range(len(path), 0, -1):
        parent = deref(get_path(release, path[: n - 1]) if n > 1 else release)
        pair = (
            entries(parent).get(path[n - 1]) if parent is not None and parent.kind == MAP else None
        )
        if pair is not None:
            return pair[0].start
    return release.start


def chart_label(name: str, version: str) -> str:
    """The ``helm.sh/chart`` label Helm's scaffold writes for a chart: ``printf "%s-%s"
    .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-"``
    (helm/helm pkg/chart/v2/util/create.go, the ``<CHARTNAME>.chart`` helper: a label
    value is at most 63 characters)."""
    label = f"{name}-{version}".replace("+", "_")[:63]
    return label.removesuffix("-")


def chart_label_problem(release: Node, charts: set[str]) -> tuple[str, int] | None:
    """The render's ``helm.sh/chart`` labels (as ``helm create``'s scaffold writes
    them) against ``spec.chart.spec``: a render of the HelmRelease's chart at another
    version, or of another chart at its version, is not the one Flux makes. (message,
    offset) or None. A render with no label of the chart and none at its version (an
    umbrella chart whose objects are all its dependencies') cannot be checked."""
    chart_node = get_path(release, ("spec", "chart", "spec", "chart"))
    version_node = get_path(release, ("spec", "chart", "spec", "version"))
    chart, version = to_python(chart_node), to_python(version_node)
    if not isinstance(chart, str) or version is None or version_node is None:
        return None
    name = chart.rstrip("/").rsplit("/", 1)[-1]
    bare = str(version).removeprefix("v")
    want = chart_label(name, bare)
    ours = sorted(
        c for c in charts if c.startswith(f"{name}-") and c[len(name) + 1 :][:1].isdigit()
    )
    if want in ours:
        return None
    if ours:
        return (
            f"spec.chart.spec.version asks for {version}, but the render's helm.sh/chart "
            f"label says {ours[0]}: render the chart at the HelmRelease's version "
            f"(--version {version})",
            version_node.start,
        )
    tail = "-" + bare.replace("+", "_")
    others = sorted(c for c in charts if c.endswith(tail))
    if not others or chart_node is None:
        return None
    return (
        f"spec.chart.spec.chart is {chart}, but the render's helm.sh/chart label says "
        f"{others[0]}: render the HelmRelease's chart",
        chart_node.start,
    )

"""Dependencies the pod spec does not show, and selection, declared in annotations.

An app that reads a ConfigMap through the API (no mount, no env) still needs its pods
rolled when it changes; an app that hot-reloads one does not. Annotations say so, on
the workload's ``metadata`` or its pod template's (read, never written):

Declared dependencies (each hashed like a whole-object reference, ``namespace/name`` may
name another namespace):

* ``cmhash.io/extra-configmaps``, ``cmhash.io/extra-secrets``: ``"a, b, other-ns/c"``;
* Reloader: ``configmap.reloader.stakater.com/reload``, ``secret.reloader.stakater.com/
  reload``: comma lists of anchored regular expressions (Reloader's own semantics);
* Wave: ``wave.pusher.com/extra-configmaps``, ``wave.pusher.com/extra-secrets``;
* kapp: ``kapp.k14s.io/versioned-explicit-ref`` (and ``….<suffix>``): a YAML mapping
  ``{apiVersion: v1, kind: ConfigMap|Secret, name}``.

Selection (they select, they do not add):

* ``cmhash.io/enabled``, Reloader ``reloader.stakater.com/auto`` and Wave
  ``wave.pusher.com/update-on-config-change`` set to ``"true"`` select the workload in
  ``optIn`` mode; Reloader ``auto: "false"`` opts it out;
* Reloader ``configmap.…/auto`` / ``secret.…/auto: "true"`` select it and count only that
  kind of pod-spec reference; ``reloader.stakater.com/search: "true"`` counts only
  pod-spec references to objects annotated ``reloader.stakater.com/match: "true"``;
* ``cmhash.io/sources: configmaps|secrets|all`` says which kinds of pod-spec references
  count (it wins over the typed Reloader ones).

Declared dependencies always count, whatever the selection says about pod-spec ones.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from cmhash.analyze.refs import Reference, Spot, spot_of
from cmhash.errors import NodeError
from cmhash.findings import Code
from cmhash.parse.tree import MAP, Node, entries, scalar

COMPAT_ALL = frozenset(("reloader", "wave", "kapp"))
TRUE = "true"


class Declaration(NamedTuple):
    annotation: str
    target: str  # ConfigMap | Secret
    compat: str | None  # None: cmhash's own, always read
    regex: bool = False  # items are anchored regular expressions (Reloader)


DECLARATIONS: tuple[Declaration, ...] = (
    Declaration("cmhash.io/extra-configmaps", "ConfigMap", None),
    Declaration("cmhash.io/extra-secrets", "Secret", None),
    Declaration("configmap.reloader.stakater.com/reload", "ConfigMap", "reloader", regex=True),
    Declaration("secret.reloader.stakater.com/reload", "Secret", "reloader", regex=True),
    Declaration("wave.pusher.com/extra-configmaps", "ConfigMap", "wave"),
    Declaration("wave.pusher.com/extra-secrets", "Secret", "wave"),
)
KAPP_REF = "kapp.k14s.io/versioned-explicit-ref"

# annotation -> (compat, what "true" means for the workload's selection)
OPT_IN: dict[str, tuple[str | None, str | None]] = {
    "cmhash.io/enabled": (None, None),
    "reloader.stakater.com/auto": ("reloader", None),
    "configmap.reloader.stakater.com/auto": ("reloader", "configmaps"),
    "secret.reloader.stakater.com/auto": ("reloader", "secrets"),
    "reloader.stakater.com/search": ("reloader", None),
    "wave.pusher.com/update-on-config-change": ("wave", None),
}
SOURCES = "cmhash.io/sources"
ACKNOWLEDGE = "cmhash.io/acknowledge"  # finding codes known and fine on this workload
CODE_VALUES = frozenset(c.value for c in Code)
SEARCH = "reloader.stakater.com/search"
RELOADER_AUTO = "reloader.stakater.com/auto"
CONFIG_EXCLUDED = {"cmhash.io/skip": None, "reloader.stakater.com/ignore": "reloader"}
RELOADER_MATCH = "reloader.stakater.com/match"

_NAME = re.compile(r"[a-z0-9]([-a-z0-9.]*[a-z0-9])?")


class Annotations(NamedTuple):
    """One ``annotations`` mapping of a workload: where it is, and its values."""

    field: str  # e.g. "metadata.annotations" or "spec.template.metadata.annotations"
    values: dict[str, tuple[str, int]]  # key -> (value, offset of the value)
    spots: dict[str, Spot | None]  # key -> where its value is written (renames)


def read_annotations(node: Node | None, field: str) -> Annotations | None:
    if node is None or node.kind != MAP:
        return None
    values = {}
    spots = {}
    for key, (_, v) in entries(node).items():
        text = scalar(v)
        if text is not None:
            values[key] = (text, v.start)
            spots[key] = spot_of(v)
    return Annotations(field, values, spots)


class Selection(NamedTuple):
    """What a workload's annotations say about which of its references count."""

    opted_in: str | None = None  # the annotation that selects it (optIn mode)
    opted_out: str | None = None  # the annotation that opts it out
    sources: str | None = None  # "configmaps" | "secrets": only that kind counts
    sources_by: str | None = None
    match_only: bool = False  # Reloader search: only objects annotated match: "true"
    acknowledged: tuple[str, ...] = ()  # cmhash.io/acknowledge: finding codes (findings.py)


def _on(compat: str | None, enabled: frozenset[str]) -> bool:
    return compat is None or compat in enabled


def selection(annotations: list[Annotations], compat: frozenset[str]) -> Selection:
    sel = Selection()
    for ann in annotations:
        for key, (value, offset) in ann.values.items():
            low = value.strip().lower()
            if key in OPT_IN and _on(OPT_IN[key][0], compat):
                if low == TRUE:
                    sel = sel._replace(opted_in=sel.opted_in or key)
                    kind = OPT_IN[key][1]
                    if kind is not None and sel.sources_by != SOURCES:
                        both = sel.sources is not None and sel.sources != kind
                        sel = sel._replace(sources=None if both else kind, sources_by=key)
                    if key == SEARCH:
                        sel = sel._replace(match_only=True)
                elif low == "false" and key == RELOADER_AUTO:
                    sel = sel._replace(opted_out=f'{key}: "false"')
            elif key == ACKNOWLEDGE:
                codes = tuple(c.strip() for c in value.split(",") if c.strip())
                unknown = [c for c in codes if c not in CODE_VALUES]
                if unknown or not codes:
                    raise NodeError(
                        f"{ACKNOWLEDGE} takes finding codes, comma-separated (the README's "
                        f"findings table); {unknown[0]!r} is none"
                        if unknown
                        else f"{ACKNOWLEDGE} names no finding code",
                        offset,
                        public=f"{ACKNOWLEDGE}: not a list of finding codes",
                    )
                sel = sel._replace(acknowledged=sel.acknowledged + codes)
            elif key == SOURCES:
                if low not in ("configmaps", "secrets", "all"):
                    raise NodeError(f"{SOURCES} must be configmaps, secrets or all", offset)
                sel = sel._replace(sources=None if low == "all" else low, sources_by=SOURCES)
    return sel


def _names(
    decl: Declaration, value: str, offset: int, field: str, spot: Spot | None
) -> list[Reference]:
    refs = []
    where = f"{field}.{decl.annotation}"
    for raw in value.split(","):
        item = raw.strip()
        if not item:
            continue
        namespace = None
        name = item
        if decl.regex:
            try:
                re.compile(item)
            except re.error as exc:
                raise NodeError(
                    f"{decl.annotation}: {item!r} is not a valid regular expression ({exc.msg})",
                    offset,
                ) from None
        else:
            if "/" in item:
                namespace, _, name = item.partition("/")
            if not _NAME.fullmatch(name) or (
                namespace is not None and not _NAME.fullmatch(namespace)
            ):
                raise NodeError(
                    f"{decl.annotation}: {item!r} is not a name or namespace/name", offset
                )
        refs.append(
            Reference(
                decl.target,
                name,
                None,
                False,
                "declared",
                where,
                offset,
                namespace=namespace,
                pattern=decl.regex,
                declared_by=decl.annotation,
                spot=spot,
            )
        )
    return refs


def _kapp(key: str, value: str, offset: int, field: str) -> list[Reference]:
    """kapp's explicit reference: a small YAML mapping naming the object."""
    from cmhash.parse.events import backend, parse_chunk
    from cmhash.parse.tree import to_python

    try:
        roots = parse_chunk(value, 0, backend("fast"))
        data = to_python(roots[0]) if roots else None
    except NodeError:
        raise NodeError(f"{key}: not a YAML mapping of apiVersion, kind and name", offset) from None
    if not isinstance(data, dict) or not isinstance(data.get("name"), str):
        raise NodeError(f"{key}: not a YAML mapping of apiVersion, kind and name", offset)
    if data.get("apiVersion") not in ("v1", None) or data.get("kind") not in (
        "ConfigMap",
        "Secret",
    ):
        return []  # a versioned object of another kind: not config, nothing to hash
    namespace = data.get("namespace") if isinstance(data.get("namespace"), str) else None
    return [
        Reference(
            str(data["kind"]),
            data["name"],
            None,
            False,
            "declared",
            f"{field}.{key}",
            offset,
            namespace=namespace,
            declared_by=key,
            spot=Spot(
                offset,
                offset,
                None,
                f"it is named in {key}; name it in cmhash.io/extra-configmaps or -secrets instead",
            ),
        )
    ]


def declared_references(annotations: list[Annotations], compat: frozenset[str]) -> list[Reference]:
    """Every dependency the annotations declare, in annotation order."""
    by_key = {d.annotation: d for d in DECLARATIONS}
    refs: list[Reference] = []
    for ann in annotations:
        for key, (value, offset) in ann.values.items():
            decl = by_key.get(key)
            if decl is not None and _on(decl.compat, compat):
                refs.extend(_names(decl, value, offset, ann.field, ann.spots.get(key)))
            elif "kapp" in compat and (key == KAPP_REF or key.startswith(KAPP_REF + ".")):
                refs.extend(_kapp(key, value, offset, ann.field))
    return refs


def config_excluded(annotations: Annotations | None, compat: frozenset[str]) -> str | None:
    """Why a ConfigMap/Secret is left out of every checksum, by its own annotations."""
    if annotations is None:
        return None
    for key, gate in CONFIG_EXCLUDED.items():
        hit = annotations.values.get(key)
        if hit is not None and hit[0].strip().lower() == TRUE and _on(gate, compat):
            return "opted out (cmhash.io/skip)" if gate is None else f'{key}: "true"'
    return None


def reloader_match(annotations: Annotations | None, compat: frozenset[str]) -> bool:
    if annotations is None or "reloader" not in compat:
        return False
    hit = annotations.values.get(RELOADER_MATCH)
    return hit is not None and hit[0].strip().lower() == TRUE

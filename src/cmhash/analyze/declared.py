"""Dependencies the pod spec does not show, and selection, declared in annotations.

An app that reads a ConfigMap through the API (no mount, no env) still needs its pods
rolled when it changes; an app that hot-reloads one does not. Annotations say so, on
the workload's ``metadata`` or its pod template's (read, never written):

Declared dependencies (each hashed like a whole-object reference, ``namespace/name`` may
name another namespace; the table: knowledge/declarations.py):

* ``cmhash.io/extra-configmaps``, ``cmhash.io/extra-secrets``: ``"a, b, other-ns/c"``;
* Reloader: ``configmap.reloader.stakater.com/reload``, ``secret.…`` and
  ``secretproviderclass.…``: comma lists of Go regular expressions (analyze/patterns.py),
  read where Reloader reads them (knowledge/compat.py);
* Wave: ``wave.pusher.com/extra-configmaps``, ``wave.pusher.com/extra-secrets``, on the
  workload's own metadata, items as Wave splits them (one it skips is a finding);
* kapp: ``kapp.k14s.io/versioned-explicit-ref`` (and ``….<suffix>``): a YAML mapping
  ``{apiVersion: v1, kind: ConfigMap|Secret, name}``.

Selection (they select, they do not add): ``cmhash.io/enabled: "true"`` selects the
workload in ``optIn`` mode and counts every pod-spec reference, ``"false"`` opts it out;
``cmhash.io/sources: configmaps|secrets|all`` says which kinds of pod-spec references
count. Reloader's and Wave's annotations select as those tools do (knowledge/compat.py):
Reloader's rules decide each pod-spec reference (``--opt-in`` is Reloader's default
mode, the default mode its ``--auto-reload-all``), Wave's
``update-on-config-change: "true"`` counts every one. In ``optIn`` mode a workload is
selected by ``cmhash.io/enabled``, a Reloader reload list, ``auto``, typed ``auto`` or
``search``, or Wave's ``update-on-config-change``.

Declared dependencies count whatever the selection says about pod-spec ones (but for
Reloader's exclude lists, which come first in Reloader too).
"""

# No "from __future__ import annotations": typing compiles string NamedTuple fields at import

import re
from typing import NamedTuple

from cmhash.analyze.annotations import TRUE, Annotations, gate_on, metadata
from cmhash.analyze.choice import reloader_source
from cmhash.analyze.refs import Reference
from cmhash.analyze.spots import Spot
from cmhash.errors import NodeError
from cmhash.knowledge.compat import RELOAD_LISTS, RELOADER_MATCH, split_wave
from cmhash.knowledge.declarations import CONFIG_EXCLUDED, DECLARATIONS, KAPP_REF, Declaration

_NAME = r"[a-z0-9]([-a-z0-9.]*[a-z0-9])?"  # (compiled by re's cache when a name is declared)


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
            from cmhash.analyze import patterns  # (RE2: a run with a reload-list pattern)

            try:
                patterns.check(item)
            except patterns.PatternError as exc:
                raise NodeError(
                    f"{decl.annotation}: {item!r} is not a valid regular expression (Go "
                    f"regexp, as Reloader reads it: {exc.reason})",
                    offset,
                ) from None
        else:
            if "/" in item:
                namespace, _, name = item.partition("/")
            if not re.fullmatch(_NAME, name) or (
                namespace is not None and not re.fullmatch(_NAME, namespace)
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


class Skipped(NamedTuple):
    """An annotation item the tool that defines it skips (a finding, never an error)."""

    offset: int
    message: str
    # a reference field of an operator's resource in the wrong shape (shapes.py): a
    # reference-shape finding, an error with --strict
    shape: bool = False


def declared_references(
    annotations: list[Annotations], compat: frozenset[str]
) -> tuple[list[Reference], list[Skipped]]:
    """Every dependency the annotations declare, in annotation order, each read where the
    tool that defines it reads it; and the items that tool would skip."""
    by_key = {d.annotation: d for d in DECLARATIONS}
    refs: list[Reference] = []
    skipped: list[Skipped] = []
    meta = metadata(annotations)
    for ann in annotations:
        for key, (value, offset) in ann.values.items():
            decl = by_key.get(key)
            if decl is not None and gate_on(decl.compat, compat):
                if (
                    decl.compat == "reloader"
                    and reloader_source(annotations, RELOAD_LISTS[key]) is not ann
                ):
                    continue  # Reloader reads the other annotations mapping for this kind
                if decl.compat == "wave":
                    if ann is meta:  # Wave reads the workload's own annotations only
                        refs.extend(_wave(decl, value, offset, ann, skipped))
                    continue
                refs.extend(_names(decl, value, offset, ann.field, ann.spots.get(key)))
            elif "kapp" in compat and (key == KAPP_REF or key.startswith(KAPP_REF + ".")):
                refs.extend(_kapp(key, value, offset, ann.field))
    return refs, skipped


def _wave(
    decl: Declaration, value: str, offset: int, ann: Annotations, skipped: list[Skipped]
) -> list[Reference]:
    """Wave's items as children.go splits them: what it would not find is skipped."""
    used, dropped = split_wave(value)
    spot = ann.spots.get(decl.annotation)
    refs = []
    for item in used:
        valid = re.fullmatch(_NAME, item.name) and (
            item.namespace is None or re.fullmatch(_NAME, item.namespace)
        )
        shown = item.name if item.namespace is None else f"{item.namespace}/{item.name}"
        if not valid:
            if shown.strip():
                skipped.append(
                    Skipped(
                        offset,
                        f"{decl.annotation}: Wave looks up {shown!r} as written (it does not "
                        "trim spaces) and finds no object: the item counts for nothing; "
                        "write it as name or namespace/name",
                    )
                )
            continue
        refs.append(
            Reference(
                decl.target,
                item.name,
                None,
                False,
                "declared",
                f"{ann.field}.{decl.annotation}",
                offset,
                namespace=item.namespace,
                declared_by=decl.annotation,
                spot=spot,
            )
        )
    skipped.extend(
        Skipped(
            offset,
            f"{decl.annotation}: Wave skips {item!r} (more than one '/'): the item counts "
            "for nothing; write it as name or namespace/name",
        )
        for item in dropped
    )
    return refs


def config_excluded(annotations: Annotations | None, compat: frozenset[str]) -> str | None:
    """Why a ConfigMap/Secret is left out of every checksum, by its own annotations
    (cmhash.io/skip in any case; Reloader's ignore exactly "true", as Reloader reads it)."""
    if annotations is None:
        return None
    for key, gate in CONFIG_EXCLUDED.items():
        hit = annotations.values.get(key)
        if hit is None or not gate_on(gate, compat):
            continue
        if (hit[0].strip().lower() == TRUE) if gate is None else hit[0] == TRUE:
            return "opted out (cmhash.io/skip)" if gate is None else f'{key}: "true"'
    return None


def reloader_match(annotations: Annotations | None, compat: frozenset[str]) -> bool:
    """reloader.stakater.com/match: exactly "true" (ShouldReload compares strings)."""
    if annotations is None or "reloader" not in compat:
        return False
    hit = annotations.values.get(RELOADER_MATCH)
    return hit is not None and hit[0] == TRUE

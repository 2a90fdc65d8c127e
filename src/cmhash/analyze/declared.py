"""Dependencies the pod spec does not show, and selection, declared in annotations: which
of a workload's references count (``selection``), and which objects it depends on besides
(``declared_references``), on the workload's ``metadata`` or its pod template's (read,
never written). Every annotation and what it does, as users read it:
docs/concepts/dependencies-and-selection.md; the tables: knowledge/compat.py.

An app that reads a ConfigMap through the API (no mount, no env) still needs its pods
rolled when it changes; an app that hot-reloads one does not. Each tool's annotations are
read where that tool reads them (Reloader's lists are Go regular expressions:
analyze/patterns.py; Wave's items as Wave splits them, one it skips a finding; kapp's a
YAML mapping). Selection selects, it does not add: declared dependencies count whatever
it says about pod-spec ones (but for Reloader's exclude lists, which come first in
Reloader too).
"""

# No "from __future__ import annotations": typing compiles string NamedTuple fields at import

import re
from typing import NamedTuple

from cmhash.analyze.annotations import TRUE, Annotations, Spot, gate_on, metadata, template, text_of
from cmhash.analyze.refs import Reference
from cmhash.errors import NodeError
from cmhash.findings import Code
from cmhash.knowledge.compat import (
    CONFIG_EXCLUDED,
    DECLARATIONS,
    KAPP_REF,
    KEY_PARTS,
    RELOAD_LISTS,
    RELOADER_AUTO,
    RELOADER_KINDS,
    RELOADER_MATCH,
    RELOADER_SEARCH,
    WAVE_ON,
    WAVE_TRUE,
    Declaration,
    ReloaderKind,
    ReloaderView,
    go_parse_bool,
    split_reloader,
    split_wave,
)

ENABLED = "cmhash.io/enabled"
SOURCES = "cmhash.io/sources"
ACKNOWLEDGE = "cmhash.io/acknowledge"  # finding codes known and fine on this workload
# a restart asked for in Git: its reason is part of the checksum (on a workload, of its
# own; on a ConfigMap or Secret, of every workload that uses it): a new reason rolls the
# pods, the same one again changes nothing
RESTART = "cmhash.io/restart"
CODE_VALUES = frozenset(c.value for c in Code)


def _codes(value: str, offset: int) -> tuple[str, ...]:
    """``cmhash.io/acknowledge: CODE[,CODE]``: finding codes (findings.py)."""
    codes = tuple(c.strip() for c in value.split(",") if c.strip())
    unknown = [c for c in codes if c not in CODE_VALUES]
    if unknown or not codes:
        raise NodeError(
            f"{ACKNOWLEDGE} takes finding codes, comma-separated (the findings reference); "
            f"{unknown[0]!r} is none"
            if unknown
            else f"{ACKNOWLEDGE} names no finding code",
            offset,
            public=f"{ACKNOWLEDGE}: not a list of finding codes",
        )
    return codes


class Selection(NamedTuple):
    """What a workload's annotations say about which of its references count."""

    opted_in: str | None = None  # the annotation that selects it (optIn mode)
    opted_out: str | None = None  # the annotation that opts it out
    sources: str | None = None  # "configmaps" | "secrets": only that kind counts
    sources_by: str | None = None
    count_all: str | None = None  # counts every pod-spec reference (enabled, Wave)
    # Reloader's view per kind, where its rules do not simply count every pod-spec
    # reference of that kind (knowledge/compat.py)
    reloader: tuple[ReloaderView, ...] = ()
    acknowledged: tuple[str, ...] = ()  # cmhash.io/acknowledge: finding codes (findings.py)
    # cmhash.io/restart: the reasons given (metadata's, then the pod template's)
    restart: tuple[str, ...] = ()

    def view(self, kind: str) -> ReloaderView | None:
        return next((v for v in self.reloader if v.kind == kind), None)


def reloader_source(annotations: list[Annotations], rk: ReloaderKind) -> Annotations | None:
    """Where Reloader reads a kind's reload list, auto, typed auto and search: the
    workload's metadata when any of them is there, else its pod template's."""
    meta = metadata(annotations)
    keys = (rk.reload, RELOADER_AUTO, rk.typed_auto, RELOADER_SEARCH)
    if meta is not None and any(k in meta.values for k in keys):
        return meta
    return template(annotations)


def reloader_view(
    annotations: list[Annotations], rk: ReloaderKind, auto_reload_all: bool
) -> ReloaderView | None:
    """Reloader's view of one kind, None when its rules count every pod-spec reference
    of that kind whatever the object (nothing excluded, and auto on, or absent in the
    every-workload mode)."""
    src = reloader_source(annotations, rk)
    auto, typed = text_of(src, RELOADER_AUTO), text_of(src, rk.typed_auto)
    # the exclude lists are read from the workload's own metadata only (ShouldReload
    # reads them before it may switch to the pod template's annotations)
    excluded = tuple(n for n in split_reloader(text_of(metadata(annotations), rk.exclude)) if n)
    everything = go_parse_bool(auto) or go_parse_bool(typed)
    if not excluded and (everything or (auto == typed == "" and auto_reload_all)):
        return None
    search = text_of(src, RELOADER_SEARCH)
    return ReloaderView(rk.kind, auto, typed, search, excluded, src.field if src else "")


def _reloader_opt_in(annotations: list[Annotations]) -> str | None:
    for rk in RELOADER_KINDS:
        src = reloader_source(annotations, rk)
        if src is None:
            continue
        if any(split_reloader(text_of(src, rk.reload))):
            return rk.reload
        for key in (RELOADER_AUTO, rk.typed_auto):
            if go_parse_bool(text_of(src, key)):
                return key
        if text_of(src, RELOADER_SEARCH) == "true":
            return RELOADER_SEARCH
    return None


_NOTHING = Selection()
# every key a reader here looks at contains one of these (a workload without any is
# selected as cmhash's own default: the common case, decided without the tables)
_TOOL_KEYS = ("cmhash.io/", *KEY_PARTS)


def selection(
    annotations: list[Annotations], compat: frozenset[str], opt_in: bool = False
) -> Selection:
    if not any(t in key for a in annotations for key in a.values for t in _TOOL_KEYS):
        return _NOTHING  # Reloader's rules would count every pod-spec reference, or
        # (under --opt-in) the workload is not selected at all
    sel = _NOTHING
    for ann in annotations:
        for key, (text, offset) in ann.values.items():
            low = text.strip().lower()
            if key == ENABLED and low == TRUE:
                sel = sel._replace(opted_in=sel.opted_in or key, count_all=key)
            elif key == ENABLED and low == "false":
                sel = sel._replace(opted_out=f'{key}: "false"')
            elif key == SOURCES:
                if low not in ("configmaps", "secrets", "all"):
                    raise NodeError(f"{SOURCES} must be configmaps, secrets or all", offset)
                sel = sel._replace(sources=None if low == "all" else low, sources_by=SOURCES)
            elif key == ACKNOWLEDGE:
                sel = sel._replace(acknowledged=sel.acknowledged + _codes(text, offset))
            elif key == RESTART and text.strip():
                sel = sel._replace(restart=(*sel.restart, text))
    if "wave" in compat and text_of(metadata(annotations), WAVE_ON) == WAVE_TRUE:
        sel = sel._replace(opted_in=sel.opted_in or WAVE_ON, count_all=sel.count_all or WAVE_ON)
    if "reloader" in compat:
        views = (reloader_view(annotations, rk, not opt_in) for rk in RELOADER_KINDS)
        chosen = _reloader_opt_in(annotations)
        sel = sel._replace(
            opted_in=sel.opted_in or chosen, reloader=tuple(v for v in views if v is not None)
        )
    return sel


_NAME = r"[a-z0-9]([-a-z0-9.]*[a-z0-9])?"  # (compiled by re's cache when a name is declared)


def _declared(
    kind: str,
    name: str,
    by: str,
    field: str,
    offset: int,
    namespace: str | None,
    spot: Spot | None,
    pattern: bool = False,
) -> Reference:
    """A dependency the annotation ``by`` (in the mapping at ``field``) declares: the
    whole object."""
    return Reference(
        kind,
        name,
        None,
        False,
        "declared",
        f"{field}.{by}",
        offset,
        namespace=namespace,
        pattern=pattern,
        declared_by=by,
        spot=spot,
    )


def _names(
    decl: Declaration, value: str, offset: int, field: str, spot: Spot | None
) -> list[Reference]:
    refs = []
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
        by = decl.annotation
        refs.append(_declared(decl.target, name, by, field, offset, namespace, spot, decl.regex))
    return refs


def _kapp(key: str, value: str, offset: int, field: str) -> list[Reference]:
    """kapp's explicit reference: a small YAML mapping naming the object."""
    from cmhash.parse.events import backend, parse_chunk
    from cmhash.parse.tree import to_python

    try:
        roots = parse_chunk(value, 0, backend("fast"))
        data = to_python(roots[0]) if roots else None
    except NodeError:
        data = None
    if not isinstance(data, dict) or not isinstance(data.get("name"), str):
        raise NodeError(f"{key}: not a YAML mapping of apiVersion, kind and name", offset)
    if data.get("apiVersion") not in ("v1", None) or data.get("kind") not in (
        "ConfigMap",
        "Secret",
    ):
        return []  # a versioned object of another kind: not config, nothing to hash
    namespace = data.get("namespace") if isinstance(data.get("namespace"), str) else None
    why = f"it is named in {key}; name it in cmhash.io/extra-configmaps or -secrets instead"
    spot = Spot(offset, offset, None, why)
    return [_declared(str(data["kind"]), data["name"], key, field, offset, namespace, spot)]


class Skipped(NamedTuple):
    """An annotation item the tool that defines it skips (a finding, never an error)."""

    offset: int
    message: str
    # the finding's code (findings.py): a skipped item; a reference field of an
    # operator's resource in the wrong shape (workload.py: reference-shape, an error
    # with --strict); annotations written where they are not read (placement.py:
    # misplaced-annotation, a warning with --strict)
    code: str = Code.SKIPPED_ITEM.value


_DECLARED_BY = {d.annotation: d for d in DECLARATIONS}  # annotation -> what it declares


def declared_references(
    annotations: list[Annotations], compat: frozenset[str]
) -> tuple[list[Reference], list[Skipped]]:
    """Every dependency the annotations declare, in annotation order, each read where the
    tool that defines it reads it; and the items that tool would skip."""
    refs: list[Reference] = []
    skipped: list[Skipped] = []
    meta = metadata(annotations)
    for ann in annotations:
        for key, (value, offset) in ann.values.items():
            decl = _DECLARED_BY.get(key)
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
            elif (
                "kapp" in compat
                and (key == KAPP_REF or key.startswith(KAPP_REF + "."))
                and ann is meta  # kapp reads a resource's own annotations only
            ):
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
            _declared(
                decl.target, item.name, decl.annotation, ann.field, offset, item.namespace, spot
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


def restart_reason(annotations: Annotations | None) -> str | None:
    """A ConfigMap's or Secret's (or a source's) ``cmhash.io/restart`` reason, if any."""
    hit = annotations.values.get(RESTART) if annotations is not None else None
    return hit[0] if hit is not None and hit[0].strip() else None


def reloader_match(annotations: Annotations | None, compat: frozenset[str]) -> bool:
    """reloader.stakater.com/match: exactly "true" (ShouldReload compares strings)."""
    if annotations is None or "reloader" not in compat:
        return False
    hit = annotations.values.get(RELOADER_MATCH)
    return hit is not None and hit[0] == TRUE

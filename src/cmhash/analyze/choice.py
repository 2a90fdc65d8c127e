"""Which of a workload's references count, by its annotations: cmhash's own
(``cmhash.io/enabled``, ``cmhash.io/sources``) and, read where those tools read them,
Reloader's and Wave's (their decision tables: knowledge/compat.py)."""

# No "from __future__ import annotations": typing compiles string NamedTuple fields at import

from typing import NamedTuple

from cmhash.analyze.annotations import TRUE, Annotations, metadata, template, text_of
from cmhash.errors import NodeError
from cmhash.findings import Code
from cmhash.knowledge.compat import (
    KEY_PARTS,
    RELOADER_AUTO,
    RELOADER_KINDS,
    RELOADER_SEARCH,
    WAVE_ON,
    WAVE_TRUE,
    ReloaderKind,
    ReloaderView,
    go_parse_bool,
    split_reloader,
)

ENABLED = "cmhash.io/enabled"
SOURCES = "cmhash.io/sources"
ACKNOWLEDGE = "cmhash.io/acknowledge"  # finding codes known and fine on this workload
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

    def view(self, kind: str) -> ReloaderView | None:
        for v in self.reloader:
            if v.kind == kind:
                return v
        return None


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
    if "wave" in compat and text_of(metadata(annotations), WAVE_ON) == WAVE_TRUE:
        sel = sel._replace(opted_in=sel.opted_in or WAVE_ON, count_all=sel.count_all or WAVE_ON)
    if "reloader" in compat:
        views = (reloader_view(annotations, rk, not opt_in) for rk in RELOADER_KINDS)
        chosen = _reloader_opt_in(annotations)
        sel = sel._replace(
            opted_in=sel.opted_in or chosen, reloader=tuple(v for v in views if v is not None)
        )
    return sel

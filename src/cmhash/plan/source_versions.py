"""Versioned secret sources, the reduce side: a Secret an ExternalSecret, a
SecretProviderClass or a namespace-wide SealedSecret produces gets the content suffix
of its source (analyze/versioned_sources.py says how each kind is renamed), its source
is renamed with it where the old producer must stay for old pods, and references follow
as for any versioned Secret (plan/versioning/).

The suffix is computed from the source's content fields (analyze/sources.py: an
ExternalSecret's ``data``, ``dataFrom``, ``target.template`` and ``secretStoreRef``, with
the objects ``templateFrom`` copies in; a SecretProviderClass's ``parameters`` and
``secretObjects``; a SealedSecret's encrypted data and template), never from the
produced name itself: a second run finds the same name.
"""

from __future__ import annotations

from cmhash.edit.splice import Edit, with_value
from cmhash.findings import Code, Finding, finding
from cmhash.knowledge.sources import Path
from cmhash.model import ResourceId
from cmhash.plan.index import ConfigEntry, ConfigIndex

RENAME, KEEP = "rename", "keep"


def renamable(e: ConfigEntry) -> bool:
    """A produced Secret that ``--versioned`` may rename."""
    p = e.info.producer
    return p is not None and p.how == RENAME


def refusal(e: ConfigEntry) -> str | None:
    """Why a produced Secret's source forbids a new name (a strict-scope SealedSecret,
    an ExternalSecret that does not own its Secret), or None."""
    p = e.info.producer
    return p.why if p is not None and p.how == KEEP else None


def not_versioned(e: ConfigEntry, key: ResourceId, text: str) -> Finding:
    """The not-versioned finding of an object that keeps its name, at the object."""
    return finding(
        e.source, e.info.offset, Code.NOT_VERSIONED, text, resource=key, api_version="v1"
    )


def name_at(e: ConfigEntry) -> int:
    """Where a refusal to rename ``e`` points: its name, or for a produced Secret the
    name its source writes (``spec.target.name``, else the source's own)."""
    p = e.info.producer
    spot = e.info.name_spot if p is None else (p.target or p.own)
    return spot.start if spot is not None else e.info.offset


def with_suffix(name: str, base: str, new: str) -> str:
    """``name`` (a source's own) given the suffix that ``new`` (``base-suffix``) has."""
    from cmhash.analyze.versioned_names import base_name

    return f"{base_name(name)}{new[len(base) :]}"


def own_source(e: ConfigEntry, base: str, new: str) -> tuple[str, str] | None:
    """(kind, new name) of the source (an ExternalSecret or a wide SealedSecret) renamed
    with the produced Secret ``e`` named ``new`` (``base-suffix``); None: it keeps its."""
    p, source = e.info.producer, e.info.source
    if p is None or p.own is None or source is None:
        return None
    return source.partition("/")[0], with_suffix(p.own_name, base, new)


def referenced_source(index: ConfigIndex, e: ConfigEntry) -> ConfigEntry | None:
    """The source object itself when pods reference it (a SecretProviderClass in a CSI
    volume): renamed with what it produces, so old pods keep mounting the old one."""
    if e.info.source is None:
        return None
    kind, _, name = e.info.source.partition("/")
    return index.objects.get(ResourceId.config(kind, e.namespace, name))


def moved(
    index: ConfigIndex, e: ConfigEntry, base: str, new: str
) -> list[tuple[str, str, str, int]]:
    """(kind, old name, new name, where the name is written) of the source objects
    renamed with the produced Secret ``e`` when it is named ``new`` (``base-suffix``):
    an ExternalSecret or a wide SealedSecret, a SecretProviderClass its users mount."""
    out = []
    own, p = own_source(e, base, new), e.info.producer
    if own is not None and p is not None and p.own is not None:
        out.append((own[0], p.own_name, own[1], p.own.start))
    spc = referenced_source(index, e)
    if spc is not None:
        at = spc.info.name_spot.start if spc.info.name_spot is not None else spc.info.offset
        out.append((spc.info.kind, spc.info.name, with_suffix(spc.info.name, base, new), at))
    return out


def edits_of(e: ConfigEntry, old: str, new: str) -> list[tuple[Edit, str | None, Path]]:
    """The edits that rename a produced Secret from ``old`` to ``new``: (edit, the new
    scalar value when it renames one, the path of the pair it inserts or ())."""
    from cmhash.analyze.versioned_names import MAX_NAME, base_name

    p = e.info.producer
    assert p is not None
    if p.error is not None:
        raise e.source.error(
            f"cannot version {e.info.label}: {p.error[0]}; write spec.target.name out",
            p.error[1],
        )
    out: list[tuple[Edit, str | None, Path]] = []
    for spot, value in (
        (p.own, with_suffix(p.own_name, base_name(old), new)),
        (p.target, new),
    ):
        if spot is None:
            continue
        if len(value) > MAX_NAME:
            raise e.source.error(
                f"cannot version {e.info.label}: {value!r} would pass Kubernetes' "
                f"{MAX_NAME} characters; shorten the name or opt it out "
                '(cmhash.io/versioned: "false")',
                spot.start,
            )
        if spot.problem is not None:
            raise e.source.error(f"cannot rename {e.info.label}: {spot.problem}", spot.start)
        out.append((spot.renamed(value), value, ()))
    if p.target is None and p.insert is not None:
        out.append((with_value(p.insert, new), None, p.names))
    return out


def siblings(index: ConfigIndex, e: ConfigEntry) -> list[ConfigEntry]:
    """The other objects ``e``'s source produces (a SecretProviderClass's other
    ``secretObjects``), which share its suffix."""
    return [
        o
        for o in index.objects.values()
        if o is not e
        and o.source is e.source
        and o.info.offset == e.info.offset
        and o.info.producer is not None
        and o.info.producer.how == RENAME
    ]


def produced_by(e: ConfigEntry, new: str | None) -> str | None:
    """``Kind/name`` of the source that produces ``e``, under the name this run gives it
    (``new``: the produced Secret's new name, when it is renamed)."""
    from cmhash.analyze.versioned_names import base_name

    own = None if new is None else own_source(e, base_name(e.info.name), new)
    return e.info.source if own is None else "/".join(own)

"""The map side of versioned secret sources (plan/source_versions.py decides): for each
Secret a source produces, how ``--versioned`` may give it a content-suffixed name, where
the names to rewrite are written, and the insertion of a produced name the source does
not write.

How each source kind is versioned is its row's ``versioning`` (knowledge/sources.py);
why, kind by kind, is docs/concepts/versioned-names.md ("Versioned secret sources"):

- ``target`` (ExternalSecret): renamed, and ``spec.target.name`` set to the produced
  name with the suffix (inserted when absent): its controller deletes every Secret it
  owns but the current target (external-secrets
  pkg/controllers/externalsecret/externalsecret_controller.go ``deleteOrphanedSecrets``;
  its CRD documents ``target.name`` as immutable), so the old producer must stay for old
  pods. ``creationPolicy: Merge`` or ``None``: the Secret is not the ExternalSecret's, so
  nothing is renamed.
- ``names`` (SecretProviderClass): each ``secretObjects[].secretName``, and the class
  itself, which pods name in a CSI volume: the driver syncs those Secrets only for the
  pods that mount the class (secrets-store-csi-driver
  docs/book/src/topics/sync-as-kubernetes-secret.md,
  controllers/secretproviderclasspodstatus_controller.go).
- ``sealed`` (SealedSecret): the Secret takes the SealedSecret's name. The strict scope
  (the default) binds name and namespace into the encryption: never renamed; with
  ``namespace-wide`` or ``cluster-wide`` the SealedSecret itself is renamed.
"""

# No "from __future__ import annotations": typing compiles string NamedTuple fields at import

import json
from collections.abc import Sequence
from typing import Any, NamedTuple

from cmhash.analyze.annotations import Annotations, Spot, aliased_spot, spot_of
from cmhash.analyze.hashing import canonical_json
from cmhash.analyze.options import AnalyzeOptions
from cmhash.analyze.versioned import keep_marks, name_spot
from cmhash.edit.splice import PLACEHOLDER, Edit, annotations_edits, inside_aliased
from cmhash.errors import NodeError
from cmhash.knowledge.sources import SEALED_WIDE, SecretSource
from cmhash.parse.resources import Resource
from cmhash.parse.tree import MAP, Node, entries, get_path, scalar, walk


class Producer(NamedTuple):
    """How a produced Secret may be versioned (``ConfigInfo.producer``)."""

    how: str  # "rename" | "keep": never renamed (``why`` says why)
    why: str | None
    own: Spot | None  # the source's metadata.name, renamed with it (None: not renamed)
    own_name: str
    target: Spot | None  # where the produced name is written
    insert: Edit | None  # else: its insertion, the value written as PLACEHOLDER
    error: tuple[str, int] | None = None  # why the insertion cannot be made
    names: tuple[str, ...] = ()  # the path of the produced names in the source


def _name_spots(res: Resource, row: SecretSource) -> dict[str, Spot | None]:
    """Produced name -> where it is written (raw, not through an alias)."""
    out: dict[str, Spot | None] = {}
    if row.names is None:
        return out
    for parent, _ in walk(res.node, row.names[:-1]):
        if parent.kind != MAP:
            continue
        pair = entries(parent).get(row.names[-1])
        if pair is None:
            continue
        name = scalar(pair[1])
        if name and name not in out:
            out[name] = spot_of(pair[1])
    return out


def _insertion(message: str) -> str:
    """Why spec.target.name cannot be inserted: edit/splice.py's words are about the
    annotation it usually inserts."""
    return message.removeprefix("cannot add the annotation: ").replace(
        "cannot add the annotation", "it cannot be inserted"
    )


def _target(res: Resource, row: SecretSource, name: str, nl: str) -> Producer:
    """An ExternalSecret's: its own name and its target name (written or inserted)."""
    assert row.names is not None
    out = Producer("rename", None, name_spot(res), res.name or "", None, None, None, row.names)
    at = _name_spots(res, row).get(name)
    if at is not None:
        return out._replace(target=at)
    spec = get_path(res.node, row.names[:-2])
    try:
        if spec is None or spec.kind != MAP:
            raise NodeError("the spec is not a mapping", res.node.start)
        spec_key = entries(res.node).get(row.names[0])
        edits = annotations_edits(
            res.source.text,
            spec,
            spec_key[0] if spec_key else None,
            {row.names[-1]: PLACEHOLDER},
            nl,
            what="the spec",
            level=row.names[-2:-1],
        )
    except NodeError as exc:
        return out._replace(error=(_insertion(exc.message), exc.offset), names=())
    return out._replace(insert=edits[0])


def producer(
    res: Resource, row: SecretSource, name: str, annotations: Annotations | None, nl: str
) -> Producer | None:
    """How the Secret ``name`` that ``res`` produces may be versioned; None: the row
    says nothing (a config file's source: never versioned)."""
    how = row.versioning
    if row.not_owned is not None:
        path, values = row.not_owned
        policy = scalar(get_path(res.node, path))
        if policy in values:
            why = (
                f"{res.kind} {res.name!r} has {'.'.join(path)}: {policy}, so the Secret is "
                "not its own to create under a new name"
            )
            return Producer("keep", why, None, res.name or "", None, None)
    if how == "target":
        return _target(res, row, name, nl)
    if how == "names":
        at = _name_spots(res, row).get(name)
        return Producer("rename", None, None, res.name or "", at, None, None, row.names or ())
    if how == "sealed":
        given = annotations.values if annotations is not None else {}
        if any(given.get(a, ("", 0))[0] == "true" for a in SEALED_WIDE):
            return Producer("rename", None, name_spot(res), res.name or "", None, None)
        why = (
            f"{res.kind} {res.name!r} is sealed in the strict scope (the default), which "
            "binds the Secret's name and namespace into the encryption: a new name needs "
            "re-sealing (kubeseal --scope namespace-wide lifts the binding)"
        )
        return Producer("keep", why, None, res.name or "", None, None)
    return None


def aliased_producer(p: Producer | None, aliased: Sequence[tuple[Node, Node]]) -> Producer | None:
    """A name or an insertion inside a node an alias repeats cannot be edited: the copy
    would change too."""
    if p is None:
        return None
    out = p._replace(own=aliased_spot(p.own, aliased), target=aliased_spot(p.target, aliased))
    if p.insert is not None:
        problem = inside_aliased(p.insert, aliased)
        if problem is not None:
            out = out._replace(insert=None, error=(_insertion(problem.message), problem.offset))
    return out


def _base_names(value: Any, path: tuple[str, ...]) -> Any:
    from cmhash.analyze.versioned_names import base_name  # (the one suffix rule)

    if not path:
        return base_name(value) if isinstance(value, str) else value
    step, rest = path[0], path[1:]
    if step == "*":
        return [_base_names(v, rest) for v in value] if isinstance(value, list) else value
    if isinstance(value, dict) and step in value:
        return {**value, step: _base_names(value[step], rest)}
    return value


def unversioned(entries: dict[str, bytes], names: tuple[str, ...] | None) -> dict[str, bytes]:
    """A source's content fields with the produced names written in them read as base
    names (a SecretProviderClass's ``secretObjects[].secretName``): under ``--versioned``
    renaming them changes neither the suffix nor the checksum, so a second run changes
    nothing."""
    if not names:
        return entries
    out = dict(entries)
    for key, raw in entries.items():
        field = tuple(key.split("."))
        if names[: len(field)] == field and len(names) > len(field):
            value = _base_names(json.loads(raw), names[len(field) :])
            out[key] = canonical_json(value).encode("utf-8")
    return out


def keep_edits(
    res: Resource, annotations: Annotations | None, options: AnalyzeOptions, nl: str
) -> tuple[tuple[Edit, ...], tuple[str, int] | None]:
    """The engines' keep marks (knowledge/versioning.py KEEP_RULES) on a versioned source:
    an old producer must stay as long as the Secret it makes, so it is kept (or pruned
    last) like a versioned Secret. Never ``immutable``: a source has no such field at its
    top. (edits, or the error that forbids them)"""
    try:
        return tuple(keep_marks(res, annotations, options, nl)), None
    except NodeError as exc:
        return (), (exc.message, exc.offset)

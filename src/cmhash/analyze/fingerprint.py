"""What the cluster holds, as fingerprints (``cmhash lock``): for every object of an
export (analyze/export.py) that a checksum may use, one ``LockEntry``: which object it
is for, what it was read from, and a fingerprint of that, never a value.

Where each operator keeps the fingerprint of what it wrote is knowledge/lockfields.py's
table. Per object, an operator's own object comes first (a VaultStaticSecret's status,
a Certificate's revision, an ExternalSecret's annotation on its Secret), then what the
object says of itself (the annotation External Secrets writes on a Secret it manages),
then its data. Where the export holds the data of a Secret or ConfigMap, the entry also
carries one fingerprint per key: a workload that reads some keys moves only when one
of them changes (key-level, as checksums are).

A fingerprint is SHA-256 (HMAC-SHA256 under ``--secret-key-env``) of the object's
identity (``fingerprint``) and canonical JSON:
``{"<field path>": value, ...}`` of the fields read; for data, the object's checksum
entry exactly as analyze/hashing.py writes it (the whole object, or one key), Secret
values keyed first like every checksum's. The lock holds nothing a checksum would not.
"""

# No "from __future__ import annotations": typing compiles string NamedTuple fields at import

import hashlib
import hmac
from collections.abc import Mapping
from typing import Any, NamedTuple

from cmhash.analyze.configs import config_content
from cmhash.analyze.export import ExportObject
from cmhash.analyze.hashing import Use, canonical, canonical_json
from cmhash.errors import NodeError
from cmhash.knowledge.lockfields import (
    CONFIG_KEY,
    DATA_HASH,
    DNS_SUBDOMAIN,
    StoreField,
    eso_hash_matches,
    field_rows,
    shown,
    valid,
)
from cmhash.model import ResourceId
from cmhash.parse.k8syaml import plain_bool
from cmhash.parse.tree import MAP, SEQ, Node, deref, entries, get_path, items, scalar


class LockEntry(NamedTuple):
    """One object's fingerprint (an item of the lock file's ``objects``)."""

    kind: str  # the object it is for (Secret, ConfigMap, SecretProviderClass)
    namespace: str
    name: str
    source: str  # what it was read from: "VaultStaticSecret shop/db"
    field: str  # ... and where: "status.secretMAC"
    fingerprint: str  # 64 hex
    keys: Mapping[str, str] | None = None  # per key, when the data was exported

    @property
    def id(self) -> ResourceId:
        return ResourceId.config(self.kind, self.namespace, self.name)

    @property
    def label(self) -> str:
        return f"{self.kind} {self.namespace}/{self.name}"


class Locked(NamedTuple):
    """What ``cmhash lock`` found in an export."""

    entries: list[LockEntry]  # sorted by (kind, namespace, name)
    # what could not be fingerprinted, and why (with the object it would be for)
    notes: list[tuple[ResourceId | None, str]]
    drifted: list[ExportObject]  # Secrets whose data is not what ESO's annotation says


def fingerprint(text: str, secret_key: bytes | None, of: ResourceId) -> str:
    """The fingerprint of ``text`` read for the object ``of``: its identity (kind,
    namespace, name) is hashed with it, so that equal values in two objects (prod's and
    staging's Secret ``db``) give unrelated fingerprints: a lock says nothing of whether
    two objects hold the same value."""
    identity = canonical_json([of.group, of.kind, of.namespace, of.name])
    data = f"{identity}\n{text}".encode()
    if secret_key is not None:
        return hmac.new(secret_key, data, hashlib.sha256).hexdigest()
    return hashlib.sha256(data).hexdigest()


def _plain(node: Node | None) -> Any:
    """A status value as plain data: scalars as their text, mappings key-sorted."""
    node = deref(node)
    if node is None or node.is_null:
        return None
    if node.kind == MAP:
        return {k: _plain(v) for k, (_, v) in sorted(entries(node).items())}
    if node.kind == SEQ:
        return [_plain(x) for x in items(node)]
    return str(node.value)


def _applies(row: StoreField, node: Node) -> bool:
    if row.when is None:
        return True
    path, wanted, default = row.when
    text = scalar(get_path(node, path))
    value = plain_bool(text) if text else None
    return (default if value is None else value) is wanted


def _values(row: StoreField, node: Node | None) -> dict[str, Any]:
    """The row's fields of ``node`` that are set, by their path as shown."""
    out = {}
    for path in row.fields:
        value = _plain(get_path(node, path))
        if value not in (None, "", [], {}):
            out[shown(path)] = value
    return out


class _Found(NamedTuple):
    target: ResourceId
    source: str
    field: str
    values: dict[str, Any]
    rank: int  # 0: an operator's object; 1: the object itself (ESO's annotation)


Note = tuple[ResourceId | None, str]


def _row_of(obj: ExportObject, by_id: Mapping[ResourceId, ExportObject]) -> _Found | Note | None:
    """The fingerprint's fields for ``obj`` (a note: why there are none, and for what;
    None: no row reads this kind, or it produces nothing)."""
    for row in field_rows(obj.group, obj.kind, obj.version):
        if not _applies(row, obj.node):
            continue
        if row.nothing is not None and scalar(get_path(obj.node, row.nothing[0])) in row.nothing[1]:
            return None
        name = scalar(get_path(obj.node, row.name)) if row.name is not None else obj.name
        name = name or (obj.name if row.own_name_default else None)
        what = f"{obj.kind} {obj.namespace}/{obj.name}"
        fields = ", ".join(shown(p) for p in row.fields)
        if not name:
            return None, f"{what}: it names no {row.target}: not locked"
        if not valid(name, DNS_SUBDOMAIN):
            at = get_path(obj.node, row.name) if row.name is not None else obj.node
            raise NodeError(
                f"{what}: the name of its {row.target} is not a name the API server accepts",
                at.start if at is not None else obj.node.start,
            )
        target = ResourceId.config(row.target, obj.namespace, name)
        read = by_id.get(target) if row.on_target else obj
        values = _values(row, read.node if read is not None else None)
        if not values:
            return (target, row.note.format(what=what, field=fields)) if row.note else None
        field = f"{fields} of {row.target} {name}" if row.on_target else (row.label or fields)
        return _Found(target, what, field, values, 1 if obj.kind == row.target else 0)
    return None


def _data(obj: ExportObject, secret_key: bytes | None) -> tuple[str, dict[str, str], bool]:
    """The data's fingerprint, one per key (hashed as checksums hash them), and whether
    ESO's annotation on it says otherwise (its own drift check,
    externalsecret_controller.go:1299)."""
    content = config_content(obj.resource)
    for key in content.entries:
        if not valid(key, CONFIG_KEY):  # (the key is never shown: it could be anything)
            raise NodeError(
                f"{obj.kind} {obj.namespace}/{obj.name}: a key of its data is not a key the "
                "API server accepts: not what the cluster holds",
                obj.node.start,
            )

    def one(keys: frozenset[str] | None) -> str:
        text = canonical([Use(obj.kind, obj.name, content, keys)], secret_key)
        return fingerprint(text, None, obj.id)

    keys = {k: one(frozenset((k,))) for k in sorted(content.entries)}
    hashed = obj.annotations.get(DATA_HASH) if obj.kind == "Secret" else None
    drift = hashed is not None and not eso_hash_matches(hashed, content.entries)
    return one(None), keys, drift


def lock_entries(
    objects: list[ExportObject],
    secret_key: bytes | None,
    wanted: set[ResourceId] | None = None,
) -> Locked:
    """Every object's entry (see the module docstring for the precedence); with
    ``wanted``, only the data of those objects is fingerprinted (the rest is dropped
    anyway: hashing it would only cost time)."""
    by_id = {o.id: o for o in objects}
    found: dict[ResourceId, _Found] = {}
    pods: dict[ResourceId, tuple[str, str, set[str]]] = {}  # CSI: per class, over its pods
    notes: list[Note] = []
    for obj in objects:
        try:
            got = _row_of(obj, by_id)
        except NodeError as exc:
            raise obj.resource.source.error(exc.public, exc.offset) from None
        if got is None:
            continue
        if not isinstance(got, _Found):
            notes.append(got)
            continue
        if "status.objects" in got.values:  # (the per-pod rows: one set per class)
            class_ = f"{got.target.kind} {got.target.namespace}/{got.target.name}"
            _, field, seen = pods.setdefault(got.target, (class_, got.field, set()))
            seen.update(canonical_json(item) for item in got.values["status.objects"])
            continue
        prev = found.get(got.target)
        if prev is None or got.rank < prev.rank:
            found[got.target] = got
    for target, (class_, field, seen) in pods.items():
        found[target] = _Found(target, class_, field, {"status.objects": sorted(seen)}, 0)
    out: dict[ResourceId, LockEntry] = {
        t: LockEntry(
            *t[1:], f.source, f.field, fingerprint(canonical_json(f.values), secret_key, t)
        )
        for t, f in found.items()
    }
    drifted = []
    for obj in objects:
        config = obj.version == "v1" and not obj.group and obj.kind in ("Secret", "ConfigMap")
        if not config or not obj.has_data or (wanted is not None and obj.id not in wanted):
            continue
        try:
            whole, keys, drift = _data(obj, secret_key)
        except NodeError as exc:  # (an export holds Secrets: the public message only)
            raise obj.resource.source.error(exc.public, exc.offset) from None
        if drift:
            drifted.append(obj)
        prev_entry = out.get(obj.id)
        if prev_entry is not None:
            out[obj.id] = prev_entry._replace(keys=keys)
        else:
            label = f"{obj.kind} {obj.namespace}/{obj.name}"
            out[obj.id] = LockEntry(obj.kind, obj.namespace, obj.name, label, "data", whole, keys)
    entries_ = sorted(out.values(), key=lambda e: e.id[1:])
    return Locked(entries_, notes, drifted)

"""report: what changed in each ConfigMap and Secret between OLD and NEW, and whether
kubectl apply will refuse it (an immutable object)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import NamedTuple

from cmhash.model import ResourceId, TextEnum
from cmhash.plan.index import ConfigEntry


class Change(TextEnum):
    ADDED = "added"
    REMOVED = "removed"
    CHANGED = "changed"


ADDED, REMOVED, CHANGED = Change.ADDED, Change.REMOVED, Change.CHANGED


class Violation(TextEnum):
    """Why kubectl apply refuses a change to an immutable object."""

    DATA_CHANGED = "its data changed"
    IMMUTABLE_UNSET = "immutable cannot be unset"


DATA_CHANGED, IMMUTABLE_UNSET = Violation.DATA_CHANGED, Violation.IMMUTABLE_UNSET


class ConfigChange(NamedTuple):
    key: ResourceId
    change: Change
    entry: ConfigEntry  # the NEW side's object; the OLD one when removed
    keys_added: tuple[str, ...]
    keys_removed: tuple[str, ...]
    keys_changed: tuple[str, ...]
    type_changed: bool
    immutable_violation: Violation | None  # why kubectl apply will refuse it

    @property
    def touched(self) -> frozenset[str]:
        return frozenset(self.keys_added + self.keys_removed + self.keys_changed)


def _diff_entries(
    old: Mapping[str, bytes], new: Mapping[str, bytes]
) -> tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]:
    added = tuple(sorted(k for k in new if k not in old))
    removed = tuple(sorted(k for k in old if k not in new))
    changed = tuple(sorted(k for k in new if k in old and old[k] != new[k]))
    return added, removed, changed


def config_changes(
    old: Mapping[ResourceId, ConfigEntry], new: Mapping[ResourceId, ConfigEntry]
) -> list[ConfigChange]:
    out = []
    for key in sorted(set(old) | set(new)):
        o, n = old.get(key), new.get(key)
        if n is None:
            assert o is not None
            out.append(
                ConfigChange(
                    key, REMOVED, o, (), tuple(sorted(o.info.content.entries)), (), False, None
                )
            )
            continue
        if o is None:
            out.append(
                ConfigChange(
                    key, ADDED, n, tuple(sorted(n.info.content.entries)), (), (), False, None
                )
            )
            continue
        oc, nc = o.info.content, n.info.content
        added: tuple[str, ...]
        removed: tuple[str, ...]
        changed: tuple[str, ...]
        if oc.entries == nc.entries:  # (most objects: one comparison, in C)
            added = removed = changed = ()
        else:
            added, removed, changed = _diff_entries(oc.entries, nc.entries)
        type_changed = oc.secret_type != nc.secret_type
        data_changed = bool(added or removed or changed or type_changed)
        violation = None
        if o.info.immutable and data_changed:
            violation = DATA_CHANGED
        elif o.info.immutable and not n.info.immutable:
            violation = IMMUTABLE_UNSET
        if data_changed or violation:
            out.append(
                ConfigChange(key, CHANGED, n, added, removed, changed, type_changed, violation)
            )
    return out

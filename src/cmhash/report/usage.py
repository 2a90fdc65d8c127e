"""report: which ConfigMaps and Secrets each workload reads (and which keys), matched by
base name when versioned names are in play, and who reads a changed one."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Set
from typing import NamedTuple

from cmhash.model import ResourceId
from cmhash.plan.workplan import WorkloadPlan
from cmhash.report.changes import REMOVED, ConfigChange

Users = dict[ResourceId, list[str]]  # changed object -> the workloads that read it


def unversioned(key: ResourceId, own: Set[ResourceId] = frozenset()) -> ResourceId:
    """A ConfigMap/Secret by its base name: how report matches objects when versioned
    names are in play (``app-5kd...`` in OLD, ``app-7bc...`` in NEW are one object).
    ``own``: names that only look versioned (analyze/versioned_names.py ``own_names``)."""
    from cmhash.analyze.versioned_names import VERSIONABLE, base_name

    if key.kind not in VERSIONABLE or key in own:
        return key
    return key._replace(name=base_name(key.name))


def used_by(
    plan: WorkloadPlan, versioned: bool = False, own: Set[ResourceId] = frozenset()
) -> dict[ResourceId, frozenset[str] | None]:
    """Objects a workload references (in or out of the input, hashed or not: Secrets
    under --exclude-secrets count) and the keys it reads (None: all); by base name
    when ``versioned``."""
    out: dict[ResourceId, frozenset[str] | None] = {}
    for r in plan.resolved:  # Reloader patterns expanded
        ref = r.ref
        key = unversioned(plan.target(ref), own) if versioned else plan.target(ref)
        # what a source produces is read whole: its content fields are not the keys
        produced = r.entry is not None and r.entry.info.content.source is not None
        keys = None if ref.keys is None or produced else frozenset(ref.keys)
        if key in out:
            prev = out[key]
            out[key] = None if prev is None or keys is None else prev | keys
        else:
            out[key] = keys
    return out


class UsedBy:
    """``used_by`` of each plan, made once per report: a plan is asked for it up to three
    times (who uses a changed object, what changed for it, what is referenced at all).
    It holds the plans it has seen, so their ids stay theirs while it lives."""

    __slots__ = ("_seen", "own", "versioned")

    def __init__(self, versioned: bool, own: Set[ResourceId] = frozenset()) -> None:
        self.versioned = versioned
        self.own = own
        self._seen: dict[int, tuple[WorkloadPlan, dict[ResourceId, frozenset[str] | None]]] = {}

    def __call__(self, plan: WorkloadPlan) -> dict[ResourceId, frozenset[str] | None]:
        got = self._seen.get(id(plan))
        if got is None:
            got = self._seen[id(plan)] = (plan, used_by(plan, self.versioned, self.own))
        return got[1]


class Names(NamedTuple):
    """Versioned names on each side (base identity -> name in the output); ``versioned``:
    objects are matched by base name."""

    versioned: bool = False
    old: Mapping[ResourceId, str] = {}
    new: Mapping[ResourceId, str] = {}
    shown: Mapping[ResourceId, str] = {}  # the new names as report shows them
    own: Set[ResourceId] = frozenset()  # names that only look versioned, on either side

    def now(self, key: ResourceId) -> str | None:
        """The new versioned name (as shown), when it differs from the old side's."""
        new = self.new.get(key)
        if new is None or new == self.old.get(key, key.name):
            return None
        return self.shown.get(key, new)


def unhashed_changes(
    plan: WorkloadPlan,
    used: Mapping[ResourceId, frozenset[str] | None],
    changes: Mapping[ResourceId, ConfigChange],
    versioned: bool = False,
    own: Set[ResourceId] = frozenset(),
) -> dict[ResourceId, str]:
    """Changed objects this workload reads whose changes its checksum does not follow
    (opted out or ignored objects, Secrets under --exclude-secrets, kinds or objects the
    workload's selection leaves out), with why."""
    out = {}
    for r in plan.resolved:
        key = unversioned(plan.target(r.ref), own) if versioned else plan.target(r.ref)
        if key in used and key in changes and r.excluded is not None:
            object_excluded = r.entry is not None and r.entry.excluded is not None
            if not object_excluded:
                out[key] = r.excluded  # the workload's selection
            elif r.excluded.startswith("opted out"):
                out[key] = f"{key.kind}/{key.name} is {r.excluded}"
            else:
                out[key] = f"{key.kind}/{key.name} is left out of checksums ({r.excluded})"
    return out


def collect_users(
    plans: Iterable[WorkloadPlan],
    by_key: Mapping[ResourceId, ConfigChange],
    users: Users,
    names: Names,
    used: UsedBy,
    *,
    removed_only: bool = False,
) -> None:
    """Who reads changed keys of each changed object (for a removed one: who did)."""
    for plan in plans:
        for key, keys in used(plan).items():
            ch = by_key.get(key)
            if ch is None or (removed_only and ch.change is not REMOVED):
                continue
            hit = keys is None or ch.touched & keys or ch.type_changed
            if removed_only or hit or names.now(key) is not None:
                users.setdefault(key, []).append(plan.label)

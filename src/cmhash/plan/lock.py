"""What Git does not see, in a workload's checksum (``extras``): the fingerprints a lock
file gives the objects it uses (``--lock``, ``lock:``; plan/lockfile.py) and the
restarts asked for (``cmhash.io/restart`` on the workload, or on a ConfigMap or Secret
it uses). They enter the hashed text beside ``refs`` (analyze/hashing.py), only when
there is some: without a lock and a restart reason, every value is what it was.

A lock entry counts for an object the workload uses (whatever the selection and
exclusions let count) that the manifests do not define themselves: a Secret a source
produces (an ExternalSecret, a VaultStaticSecret...), or one created outside Git
(referenced, not in the input). A Secret the manifests define is hashed from what they
say: the cluster's copy of it is Git's, and counting both would roll its users twice
for one change; unless a source writes into it (ExternalSecret ``creationPolicy:
Merge``, a Vault Secrets Operator destination with ``create: false``, its default):
then the store fills the cluster's copy, and its entry counts beside Git's content. A
produced object with no entry of its own takes its producer's (a CSI driver's synced
Secret, its SecretProviderClass's). Key-level: a workload that reads
some keys of an object whose entry has per-key fingerprints (the export held its data)
takes those keys' only; otherwise the object's fingerprint.
"""

# No "from __future__ import annotations": typing compiles string NamedTuple fields at import

from collections.abc import Iterable, Mapping
from typing import Any

from cmhash.analyze.fingerprint import LockEntry
from cmhash.analyze.hashing import canonical_json
from cmhash.model import ResourceId
from cmhash.plan.index import ConfigIndex
from cmhash.plan.lockfile import Lock
from cmhash.plan.workplan import LockUse, Requested, WorkloadPlan


def _wanted(plan: WorkloadPlan) -> dict[ResourceId, tuple[frozenset[str] | None, Any]]:
    """The objects whose references count (or would, were they in the input), with the
    keys read (None: all) and their index entry (None: not in the input)."""
    out: dict[ResourceId, tuple[frozenset[str] | None, Any]] = {}
    for r in plan.resolved:
        if r.excluded is not None:
            continue
        key = plan.target(r.ref)
        keys = None if r.ref.keys is None else frozenset(r.ref.keys)
        prev = out.get(key)
        if prev is not None:
            keys = None if prev[0] is None or keys is None else prev[0] | keys
        out[key] = (keys, r.entry)
    return out


def _entry_for(
    key: ResourceId, entry: Any, lock: Lock, writers: Mapping[ResourceId, str]
) -> LockEntry | None:
    by = None  # the source whose entry stands for the object's when it has none
    if entry is not None and entry.info.content.source is None:
        by = writers.get(key)
        if by is None:
            return None  # a ConfigMap or Secret of the manifests: what they say is hashed
        # ... that a source fills (ESO creationPolicy Merge, VSO destination.create
        # false): the cluster's copy is Git's and the store's, so its entry counts too
    elif entry is not None:
        by = entry.info.source  # produced: its producer's entry
    found = lock.entries.get(key)
    if found is None and by is not None:
        kind, _, name = by.partition("/")
        found = lock.entries.get(ResourceId.config(kind, key.namespace, name))
    return found


def _locked(
    plan: WorkloadPlan, lock: Lock, writers: Mapping[ResourceId, str]
) -> tuple[list[dict[str, Any]], list[LockUse]]:
    parts = []
    uses = []
    for key, (keys, entry) in sorted(_wanted(plan).items()):
        found = _entry_for(key, entry, lock, writers)
        if found is None:
            continue
        part: dict[str, Any] = {"kind": key.kind, "name": key.name}
        if key.namespace != plan.namespace:
            part["namespace"] = key.namespace
        if keys is not None and found.keys is not None:
            part["keys"] = {k: found.keys.get(k) for k in sorted(keys)}
        else:
            part["fingerprint"] = found.fingerprint
        parts.append(part)
        also = None
        if entry is not None:  # Vault Secrets Operator's rolloutRestartTargets
            me = (plan.info.kind.group, plan.info.kind.kind, plan.info.name)
            also = next((t[3] for t in entry.info.restarts if t[:3] == me), None)
        uses.append(LockUse(key, found.id, found.source, found.field, canonical_json(part), also))
    return parts, uses


def _requested(plan: WorkloadPlan) -> tuple[list[dict[str, str]], list[Requested]]:
    items: dict[str, tuple[dict[str, str], Requested]] = {}
    for own in plan.info.selection.restart:
        item = {"reason": own}
        items[canonical_json(item)] = (item, Requested(None, own))
    for r in plan.resolved:
        entry = r.entry
        reason = entry.info.restart if entry is not None and r.excluded is None else None
        if entry is None or reason is None:
            continue
        info = entry.info
        item = {"kind": info.kind, "name": info.name, "reason": reason}
        if entry.namespace != plan.namespace:
            item["namespace"] = entry.namespace
        items[canonical_json(item)] = (item, Requested(f"{info.kind} {info.name}", reason))
    ordered = [items[k] for k in sorted(items)]
    return [i for i, _ in ordered], [r for _, r in ordered]


def extras(
    plan: WorkloadPlan, lock: Lock | None, writers: Mapping[ResourceId, str] | None = None
) -> dict[str, Any] | None:
    """The checksum's fields beside ``refs`` for ``plan`` (None: none), recorded on the
    plan too (``locked``, ``restarts``: explain and report show them). ``writers``: the
    Secrets the manifests define that a source writes into (ConfigIndex.writers)."""
    out: dict[str, Any] = {}
    if lock is not None:
        parts, plan.locked = _locked(plan, lock, writers or {})
        if parts:
            out["lock"] = parts
    requested, plan.restarts = _requested(plan)
    if requested:
        out["restart"] = requested
    return out or None


def lock_notes(
    lock: Lock, plans: Iterable[WorkloadPlan], index: ConfigIndex, referenced: set[ResourceId]
) -> list[str]:
    """Notes on the lock's entries that enter no checksum, and why (``referenced``: every
    object a workload references)."""
    used = {u.entry for p in plans for u in p.locked}
    notes = []
    for key, entry in sorted(lock.entries.items()):
        if key in used:
            continue
        defined = index.objects.get(key)
        what = f"{lock.path}: {entry.label}"
        if defined is not None and defined.info.content.source is None:
            notes.append(
                f"{what} is defined in the manifests: what they say is hashed, not its lock entry"
            )
        elif defined is not None or key in referenced:
            notes.append(f"{what} is in the lock and in no workload's checksum")
        else:
            notes.append(
                f"{what} is in the lock and not in the manifests (neither defined, produced "
                "nor referenced)"
            )
    return notes

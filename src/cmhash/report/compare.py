"""``cmhash report OLD NEW``, the comparison: what a change to rendered manifests does to
running pods, as plain data (the JSON format, and what templates receive).

Both sides go through the normal pipeline (``app.run(keep_plans=True)``); this module
only compares the two results. It is a pure function of them: no I/O, no printing.

What it never puts in its output: a Secret's values or any hash of them. Secrets are
described by key names only, and workload checksums are left out altogether (for a
workload using one Secret key, the checksum is a hash of little more than that value).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from hashlib import sha256
from typing import TYPE_CHECKING, Any, NamedTuple

from cmhash.explain import workload_fields
from cmhash.findings import Code, Finding, finding
from cmhash.index import ConfigEntry
from cmhash.kinds import Policy
from cmhash.model import Level, ResourceId, TextEnum
from cmhash.resolve import WorkloadPlan

if TYPE_CHECKING:
    from cmhash.app import RunResult

FORMAT_VERSION = 1


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


def _applied(plan: WorkloadPlan) -> str | None:
    """The annotation value the output carries: what cmhash writes, else whatever the
    input already had (an opted-out or config-less workload keeps it untouched)."""
    if plan.skip is None and plan.value is not None:
        return plan.value
    return plan.info.current


def _annotation_cause(plan: WorkloadPlan, before: str | None, after: str | None) -> Cause | None:
    """When the checksum appears or disappears, say why."""
    if after is not None and before is not None:
        return None
    if after is None:
        why = (
            f"not annotated: {plan.skip}"
            if plan.skip is not None
            else "it uses no ConfigMap/Secret of the input any more"
        )
        return Cause(None, None, f"checksum annotation removed ({why})", ())
    return Cause(None, None, "checksum annotation added", ())


def _used(plan: WorkloadPlan) -> dict[ResourceId, frozenset[str] | None]:
    """Objects a workload references (in or out of the input, hashed or not: Secrets
    under --exclude-secrets count) and the keys it reads."""
    out: dict[ResourceId, frozenset[str] | None] = {}
    for ref in plan.info.refs:
        key = plan.target(ref)
        keys = None if ref.keys is None else frozenset(ref.keys)
        if key in out:
            prev = out[key]
            out[key] = None if prev is None or keys is None else prev | keys
        else:
            out[key] = keys
    return out


class Cause(NamedTuple):
    kind: str | None  # None: REFERENCES_CHANGED
    name: str | None
    change: str  # added | removed | changed | newly referenced | no longer referenced
    keys: tuple[str, ...]


# a rolling workload none of whose referenced objects changed (e.g. an optional one appeared)
REFERENCES_CHANGED = Cause(None, None, "references changed", ())


def _causes(
    used: Mapping[ResourceId, frozenset[str] | None],
    old_used: Mapping[ResourceId, frozenset[str] | None],
    changes: Mapping[ResourceId, ConfigChange],
) -> list[Cause]:
    causes = []
    for key in sorted(set(used) | set(old_used)):
        kind, name = key.kind, key.name
        if key not in used:
            causes.append(Cause(kind, name, "no longer referenced", ()))
            continue
        keys = used[key]
        if key not in old_used:
            causes.append(
                Cause(
                    kind, name, "newly referenced", tuple(sorted(keys)) if keys is not None else ()
                )
            )
            continue
        ch = changes.get(key)
        if ch is None:
            continue
        hit = ch.touched if keys is None else ch.touched & keys
        if hit or ch.type_changed:
            causes.append(Cause(kind, name, ch.change, tuple(sorted(hit))))
    return causes


def _unhashed(
    plan: WorkloadPlan,
    used: Mapping[ResourceId, frozenset[str] | None],
    changes: Mapping[ResourceId, ConfigChange],
) -> dict[ResourceId, str]:
    """Changed objects this workload reads whose changes its checksum does not follow:
    opted out (cmhash.io/skip) or, under --exclude-secrets, Secrets."""
    resolved = {plan.target(r.ref): r for r in plan.resolved}
    out = {}
    for key in used:
        if key not in changes:
            continue
        r = resolved.get(key)
        if r is None:
            out[key] = "Secrets are left out of checksums (--exclude-secrets)"
        elif r.entry is not None and r.entry.info.skipped:
            out[key] = f"{key.kind}/{key.name} is opted out (cmhash.io/skip)"
    return out


# kinds whose pods an annotation never restarts, even when cmhash writes it (--jobs, --pods)
NEVER_ROLLS: dict[Policy, str] = {
    Policy.JOB: (
        "annotated (--jobs), but a Job is never restarted: only a re-created Job "
        "runs with the new configuration"
    ),
    Policy.POD: ("annotated (--pods), but a bare Pod is never restarted: delete and re-create it"),
}


def _not_rolling_reason(plan: WorkloadPlan, unhashed: Mapping[ResourceId, str]) -> str | None:
    if plan.skip is not None:
        return f"not annotated: {plan.skip}"
    if plan.info.kind.policy in NEVER_ROLLS:
        return NEVER_ROLLS[plan.info.kind.policy]
    if plan.info.no_restart:
        return plan.info.no_restart
    if unhashed:
        return "; ".join(sorted(set(unhashed.values())))
    return None


def _fingerprint(f: Finding) -> str:
    """Stable across line moves: what the finding is about, not where it is."""
    about = "\0".join(
        (
            f.code,
            f.path,
            f.workload or "",
            f.about(),
            f.field or "",
            "" if (f.resource or f.workload) else f.message,
        )
    )
    return sha256(about.encode("utf-8")).hexdigest()[:32]


def _fingerprints(findings: Iterable[Finding]) -> list[str]:
    """One per finding, unique: a repeat gets a counter (GitLab shows one per print)."""
    seen: dict[str, int] = {}
    out = []
    for f in findings:
        fp = _fingerprint(f)
        n = seen.get(fp, 0)
        seen[fp] = n + 1
        out.append(fp if n == 0 else sha256(f"{fp}/{n}".encode()).hexdigest()[:32])
    return out


def _about(f: Finding) -> tuple[str, str, str, str]:
    """What a finding is about, independent of the file and line (old vs new)."""
    return (f.code, f.workload or "", f.about(), f.field or "")


def _immutable_finding(ch: ConfigChange) -> Finding:
    e = ch.entry
    keys = ", ".join(sorted(ch.touched))
    detail = f" (keys {keys})" if keys and ch.immutable_violation == DATA_CHANGED else ""
    msg = (
        f"{e.info.kind} {e.info.name!r} is immutable and {ch.immutable_violation}{detail}: "
        f"kubectl apply will be refused; give it a new name (for example a content-hash "
        f"suffix) or delete and re-create it"
    )
    return finding(
        e.source,
        e.info.offset,
        Code.IMMUTABLE_CONFIG,
        msg,
        resource=ResourceId.config(e.info.kind, e.info.namespace or "", e.info.name),
        api_version="v1",
    )


def _object(key: ResourceId) -> dict[str, str]:
    return {"kind": key.kind, "name": key.name, "namespace": key.namespace}


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def _summary(restart: int, not_restarting: int, configs: list[ConfigChange], errors: int) -> str:
    parts = [
        f"{_plural(restart, 'workload')} will restart" if restart else "No workload will restart"
    ]
    if not_restarting:
        verb = "uses" if not_restarting == 1 else "use"
        parts.append(
            f"{_plural(not_restarting, 'workload')} {verb} changed configuration but "
            "will not restart"
        )
    counts = {k: sum(1 for c in configs if c.key.kind == k) for k in ("ConfigMap", "Secret")}
    changed = " and ".join(_plural(n, k) for k, n in counts.items() if n)
    parts.append(f"{changed} changed" if changed else "no ConfigMap or Secret changed")
    if errors:
        parts.append(_plural(errors, "error"))
    return "; ".join(parts)


Users = dict[ResourceId, list[str]]


def _users(
    plans: Iterable[WorkloadPlan],
    by_key: Mapping[ResourceId, ConfigChange],
    users: Users,
    *,
    removed_only: bool = False,
) -> None:
    """Who reads changed keys of each changed object (for a removed one: who did)."""
    for plan in plans:
        for key, keys in _used(plan).items():
            ch = by_key.get(key)
            if ch is None or (removed_only and ch.change is not REMOVED):
                continue
            if removed_only or keys is None or ch.touched & keys or ch.type_changed:
                users.setdefault(key, []).append(plan.label)


def _compare_workload(
    plan: WorkloadPlan, prev: WorkloadPlan, by_key: Mapping[ResourceId, ConfigChange]
) -> tuple[str, dict[str, Any]] | None:
    """("restart" | "notRestarting", entry), or None when nothing it uses changed."""
    used = _used(plan)
    unhashed = _unhashed(plan, used, by_key)
    causes = _causes(used, _used(prev), by_key)
    value, before = _applied(plan), _applied(prev)
    # any change of the applied annotation (changed, added or removed) rolls the pods
    if value != before and not plan.info.no_restart and plan.info.kind.policy not in NEVER_ROLLS:
        causes = [
            c
            for c in causes
            if ResourceId.config(c.kind or "", plan.namespace, c.name or "") not in unhashed
        ]
        about = _annotation_cause(plan, before, value)
        if about is not None:
            causes.append(about)
        return "restart", {
            **workload_fields(plan),
            "causes": [c._asdict() for c in causes or [REFERENCES_CHANGED]],
        }
    if not causes:
        return None
    reason = _not_rolling_reason(plan, unhashed)
    if reason is None:  # e.g. only a reference to an absent object changed
        return None
    return "notRestarting", {
        **workload_fields(plan),
        "causes": [c._asdict() for c in causes],
        "reason": reason,
    }


def _workloads(
    old: RunResult, new: RunResult, by_key: Mapping[ResourceId, ConfigChange]
) -> tuple[dict[str, list[dict[str, Any]]], Users]:
    old_plans = {p.id: p for p in old.plans}
    groups: dict[str, list[dict[str, Any]]] = {"restart": [], "notRestarting": []}
    users: Users = {}
    current = [p for p in new.plans if not p.info.generated]  # created anew, never restarted
    _users(current, by_key, users)
    for plan in current:
        prev = old_plans.get(plan.id)
        if prev is None:
            continue  # created by this change: nothing to restart
        outcome = _compare_workload(plan, prev, by_key)
        if outcome is not None:
            groups[outcome[0]].append(outcome[1])
    _users(old.plans, by_key, users, removed_only=True)
    return groups, users


def _findings(
    old: RunResult, new: RunResult, configs: list[ConfigChange]
) -> tuple[list[dict[str, Any]], dict[Level, int]]:
    """NEW's findings and the immutable-config errors, each marked new when OLD lacked it."""
    found = [*new.findings, *(_immutable_finding(c) for c in configs if c.immutable_violation)]
    found.sort(key=Finding.sort_key)
    known = {_about(f) for f in old.findings}
    items = [
        {
            "file": f.path,
            "line": f.line,
            "column": f.column,
            "level": f.level,
            "code": f.code,
            "message": f.message,
            "new": _about(f) not in known,
            "fingerprint": fp,
        }
        for f, fp in zip(found, _fingerprints(found), strict=True)
    ]
    counts = {level: sum(1 for f in found if f.level is level) for level in Level}
    return items, counts


def _configs(
    old: RunResult, new: RunResult, configs: list[ConfigChange], users: Users
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Every changed object, and those no workload picks up."""
    items, unused = [], []
    referenced = {key for p in (*new.plans, *old.plans) for key in _used(p)}
    for c in configs:
        e = c.entry
        who = sorted(set(users.get(c.key, [])))
        items.append(
            {
                **_object(c.key),
                "change": c.change,
                "file": e.source.display,
                "line": e.source.position(e.info.offset)[0],
                "keysAdded": list(c.keys_added),
                "keysRemoved": list(c.keys_removed),
                "keysChanged": list(c.keys_changed),
                "typeChanged": c.type_changed,
                "immutable": e.info.immutable,
                "immutableViolation": c.immutable_violation,
                "usedBy": who,
            }
        )
        if not who:
            unused.append(
                {
                    **_object(c.key),
                    "change": c.change,
                    "reason": (
                        "no workload reads the changed keys"
                        if c.key in referenced
                        else "no workload in the input references it"
                    ),
                }
            )
    return items, unused


def build(old: RunResult, new: RunResult, annotation_key: str) -> dict[str, Any]:
    """The report as plain data (the JSON format, and what templates receive)."""
    configs = config_changes(
        old.config_index.objects if old.config_index else {},
        new.config_index.objects if new.config_index else {},
    )
    groups, users = _workloads(old, new, {c.key: c for c in configs})
    findings, counts = _findings(old, new, configs)
    config_items, unused = _configs(old, new, configs, users)
    restart, not_restarting = groups["restart"], groups["notRestarting"]
    errors = counts[Level.ERROR]
    return {
        "version": FORMAT_VERSION,
        "annotationKey": annotation_key,
        "summary": {
            "text": _summary(len(restart), len(not_restarting), configs, errors),
            "restart": len(restart),
            "notRestarting": len(not_restarting),
            "configsChanged": len(configs),
            "unused": len(unused),
            "errors": errors,
            "warnings": counts[Level.WARNING],
            "infos": counts[Level.INFO],
        },
        "configs": config_items,
        "restart": restart,
        "notRestarting": not_restarting,
        "unused": unused,
        "findings": findings,
    }

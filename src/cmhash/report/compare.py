"""``cmhash report OLD NEW`` as plain data (the JSON format, and what templates receive):
the changed objects (changes.py), the workloads (workloads.py), and the findings.

Both sides go through the normal pipeline (``app.run(keep_plans=True)``); this module
only compares the two results. It is a pure function of them: no I/O, no printing.

What it never puts in its output: a Secret's values or any hash of them. Secrets are
described by key names only, and workload checksums are left out altogether (for a
workload using one Secret key, the checksum is a hash of little more than that value).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from hashlib import sha256
from typing import TYPE_CHECKING, Any

from cmhash.analyze.versioned_names import shown
from cmhash.errors import UsageError
from cmhash.findings import Acknowledgement, Code, Finding, acknowledged, finding
from cmhash.model import Level, ResourceId
from cmhash.output import plural
from cmhash.plan.index import ConfigEntry, defined_in, several_places
from cmhash.plan.workplan import WorkloadPlan
from cmhash.report.capacity import downtime_finding, totals, unknown
from cmhash.report.changes import (
    DATA_CHANGED,
    ConfigChange,
    DiffBudget,
    config_changes,
    value_diffs,
)
from cmhash.report.empty import Empty, empty_message
from cmhash.report.pruned import pruned_versions
from cmhash.report.redact import Masker, bound, mask_names, redact, secret_names, secret_texts
from cmhash.report.scaling import NO_SCALERS, Scalers
from cmhash.report.templates import templates_of
from cmhash.report.usage import Names, UsedBy, Users, unversioned
from cmhash.report.workloads import DOWNTIME, compare_workloads, duplicates, sides

if TYPE_CHECKING:
    from cmhash.app.result import RunResult

# 2: template causes, outcome/rule/how, valueDiffs, budget; 3: added/removed; 4: capacity
FORMAT_VERSION = 4


def _fingerprint(f: Finding, secrets: Masker | None = None) -> str:
    """Stable across line moves: what the finding is about, not where it is; with
    ``secrets`` masked (no hash of text that holds a Secret's value)."""
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
    if secrets is not None:
        about = secrets.sub(about)
    return sha256(about.encode("utf-8")).hexdigest()[:32]


def _fingerprints(findings: Iterable[Finding], secrets: Masker | None = None) -> list[str]:
    """One per finding, unique: a repeat gets a counter (GitLab shows one per print)."""
    seen: dict[str, int] = {}
    out = []
    for f in findings:
        fp = _fingerprint(f, secrets)
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


def _duplicate_finding(earlier: WorkloadPlan, later: WorkloadPlan) -> Finding:
    """A workload defined twice in NEW (two renders concatenated, a copy-paste): counted
    once, the later definition, which is what ``kubectl apply -f`` leaves in place."""
    line = earlier.source.position(earlier.info.offset)[0]
    return finding(
        later.source,
        later.info.offset,
        Code.DUPLICATE_OBJECT,
        f"{later.id.kind} {later.id.name!r} is also defined at {earlier.source.display}:{line}; "
        "the report counts it once, as this later definition (kubectl apply applies both "
        "in order: the last one stays); remove one of them",
        resource=later.id,
    )


def _object(key: ResourceId) -> dict[str, str]:
    return {"kind": key.kind, "name": key.name, "namespace": key.namespace}


def _summary(
    restart: int,
    not_restarting: int,
    refused: int,
    configs: list[ConfigChange],
    errors: int,
    sides: tuple[int, int] = (0, 0),
    empty: Sequence[str] = (),
) -> str:
    parts = [f"{side} has no Kubernetes objects (a failed render?)" for side in empty]
    parts.append(
        f"{plural(restart, 'workload')} will restart" if restart else "no workload will restart"
    )
    if not_restarting:
        verb = "is" if not_restarting == 1 else "are"
        parts.append(f"{plural(not_restarting, 'workload')} {verb} affected but will not restart")
    added, removed = sides
    if added or removed:
        first, then = (added, removed) if added else (removed, 0)
        verb = "added" if added else "removed"
        more = f" and {then} removed" if then else ""
        parts.append(f"{plural(first, 'workload')} {verb}{more}")
    if refused:
        parts.append(f"{plural(refused, 'change')} will be refused by the API server")
    counts = {k: sum(1 for c in configs if c.key.kind == k) for k in ("ConfigMap", "Secret")}
    changed = " and ".join(plural(n, k) for k, n in counts.items() if n)
    parts.append(f"{changed} changed" if changed else "no ConfigMap or Secret changed")
    if errors:
        parts.append(plural(errors, "error"))
    text = "; ".join(parts)
    return text[:1].upper() + text[1:]


def _findings(
    old: RunResult,
    new: RunResult,
    configs: list[ConfigChange],
    empty: Sequence[Empty] = (),
    more: Sequence[Finding] = (),
    secrets: Masker | None = None,
) -> tuple[list[dict[str, Any]], dict[Level, int]]:
    """NEW's findings and the immutable-config errors, each marked new when OLD lacked it;
    a warning for a side without objects; ``more``: the report's own (downtime);
    ``secrets``: masked before the fingerprint is taken."""
    blank = [
        Finding(e.where, 1, 1, Level.WARNING, Code.EMPTY_INPUT, empty_message(e)) for e in empty
    ]
    found = [
        *blank,
        *new.findings,
        *more,
        *(_immutable_finding(c) for c in configs if c.immutable_violation),
        *(_duplicate_finding(a, b) for a, b in duplicates(new.plans)),
    ]
    found.sort(key=Finding.sort_key)
    # what OLD had is not new: its findings, and its being empty (OLD's own warning, and
    # NEW's too when both are)
    known = {_about(f) for f in old.findings}
    known |= {_about(f) for f, e in zip(blank, empty, strict=True) if e.side == "OLD"}
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
        for f, fp in zip(found, _fingerprints(found, secrets), strict=True)
    ]
    counts = {level: sum(1 for f in found if f.level is level) for level in Level}
    return items, counts


def _configs(
    old: RunResult,
    new: RunResult,
    configs: list[ConfigChange],
    users: Users,
    names: Names,
    used: UsedBy,
    values: bool = True,
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Every changed object (a ConfigMap's value diffs with ``values``), and those no
    workload picks up."""
    items: list[dict[str, Any]] = []
    unused: list[dict[str, Any]] = []
    before, after = _objects(old, names), _objects(new, names)
    budget = DiffBudget()
    referenced = {key for p in (*new.plans, *old.plans) for key in used(p)}
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
                **({"versionedAs": names.shown[c.key]} if c.key in names.shown else {}),
            }
        )
        diffs = value_diffs(c, before.get(c.key), after.get(c.key), budget) if values else {}
        if diffs:
            items[-1]["valueDiffs"] = diffs
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


def _names(old: RunResult, new: RunResult) -> Names:
    """Versioned names on each side, by base identity (report matches by base name)."""
    if old.versioning is None and new.versioning is None:
        return Names()

    own = frozenset().union(*(r.versioning.own for r in (old, new) if r.versioning is not None))

    def side(r: RunResult) -> dict[ResourceId, str]:
        names = r.versioning.names if r.versioning is not None else {}
        return {unversioned(k, own): v for k, v in names.items()}

    new_names = side(new)
    shown_ = {k: shown(k.kind, v) for k, v in new_names.items()}
    return Names(True, side(old), new_names, shown_, own)


def _objects(r: RunResult, names: Names) -> dict[ResourceId, ConfigEntry]:
    objects = r.config_index.objects if r.config_index else {}
    if not names.versioned:
        return objects
    from cmhash.plan.history import is_carried

    # an earlier version a --keep-versions run carried is not the object's content now
    return {
        unversioned(k, names.own): e
        for k, e in objects.items()
        if not is_carried(e.source, e.info.offset)
    }


def _one_environment(r: RunResult, side: str, secrets: Masker | None) -> None:
    """report matches objects by identity: a side with environments (an id several
    directories define, plan/scopes.py) would match one environment's against another's
    (the error masks ``secrets``, as the report does)."""
    per = r.config_index.by_directory if r.config_index else {}
    for key, dirs in per.items():
        what, example = several_places(dirs)
        if what == "several directories":
            hint = f"run it on each environment's directory (e.g. {example})"
        else:
            hint = "run it on each Helm release's render" + (f" (e.g. {example})" * bool(example))
        message = (
            f"{side}: {key.kind} {key.name!r} is defined in {what} ({defined_in(dirs)}): "
            f"report compares one environment at a time; {hint}"
        )
        raise UsageError(secrets.sub(message) if secrets else message)


def _identity(workload: dict[str, Any]) -> tuple[Any, ...]:
    """Which workload an entry is (an added one refused on create is no addition)."""
    return tuple(workload.get(k) for k in ("kind", "apiVersion", "name", "namespace"))


def build(
    old: RunResult,
    new: RunResult,
    annotation_key: str,
    parser: str = "fast",
    values: bool = True,
    scalers: tuple[Scalers, Scalers] = (NO_SCALERS, NO_SCALERS),
    empty: Sequence[Empty] = (),
    nodes: int | None = None,
    acknowledge: tuple[Acknowledgement, ...] = (),
) -> dict[str, Any]:
    """The report as plain data (the JSON format, and what templates receive);
    ``values``: ConfigMap value diffs (never a Secret's); ``scalers``: each side's
    autoscalers (the pod counts the rollout rules read); ``empty``: (OLD or NEW, where)
    of a side without any object (an ``empty-input`` warning); ``nodes``: how many
    nodes run a DaemonSet's pods (--nodes; unknown offline); ``acknowledge``: the
    config's, which make a known downtime a notice."""
    secrets = secret_texts(old, new)
    _one_environment(old, "OLD", secrets)
    _one_environment(new, "NEW", secrets)
    names = _names(old, new)
    configs = [
        # a versioned object with new content is a new object: nothing is edited in place
        c._replace(immutable_violation=None) if names.now(c.key) is not None else c
        for c in config_changes(_objects(old, names), _objects(new, names))
    ]
    used = UsedBy(names.versioned, names.own)
    templates = templates_of(old, new, annotation_key, parser, names, scalers, nodes)
    groups, users = compare_workloads(old, new, {c.key: c for c in configs}, names, used, templates)
    restart, not_restarting = groups["restart"], groups["notRestarting"]
    downtime = [downtime_finding(w, w.pop(DOWNTIME)) for w in restart if DOWNTIME in w]
    if downtime:
        annotated = {p.info.about.resource: p.info.selection.acknowledged for p in new.plans}
        downtime = acknowledged(downtime, acknowledge, annotated)
    findings, counts = _findings(old, new, configs, empty, downtime, secrets)
    config_items, unused = _configs(old, new, configs, users, names, used, values)
    capacity, capacity_by_namespace = totals(restart)
    added, removed = sides(old, new)
    added = [a for a in added if _identity(a) not in {_identity(w) for w in not_restarting}]
    errors = counts[Level.ERROR]
    refused = sum(1 for w in not_restarting if w.get("outcome") == "refused")
    data = {
        "version": FORMAT_VERSION,
        "annotationKey": annotation_key,
        "summary": {
            "text": _summary(
                len(restart),
                len(not_restarting),
                refused,
                configs,
                errors,
                (len(added), len(removed)),
                [e.side for e in empty],
            ),
            "restart": len(restart),
            "restartByNamespace": dict(sorted(Counter(w["namespace"] for w in restart).items())),
            "capacity": capacity,
            "capacityByNamespace": capacity_by_namespace,
            "capacityUnknown": unknown(restart),
            "notRestarting": len(not_restarting),
            "added": len(added),
            "removed": len(removed),
            "refused": refused,
            "configsChanged": len(configs),
            "unused": len(unused),
            "errors": errors,
            "warnings": counts[Level.WARNING],
            "infos": counts[Level.INFO],
        },
        "valuesShown": values,
        "configs": config_items,
        "restart": restart,
        "notRestarting": not_restarting,
        "added": added,
        "removed": removed,
        "unused": unused,
        **({"pruned": pruned_versions(old, new)} if names.versioned else {}),
        "findings": findings,
    }
    redact(data, secrets)  # a Secret's value copied into what is shown
    mask_names(data, secret_names(old, new))  # creds-5f46k2f562: a hash of its values
    bound(data)  # long values cut, once nothing of a Secret is left in them
    return data

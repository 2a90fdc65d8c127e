"""``cmhash report OLD NEW``: what a change to rendered manifests does to running pods.

Both sides go through the normal pipeline (``app.run(keep_plans=True)``); this module
only compares the two results. It is a pure function of them: no I/O, no printing.

What it never puts in its output: a Secret's values or any hash of them. Secrets are
described by key names only, and workload checksums are left out altogether (for a
workload using one Secret key, the checksum is a hash of little more than that value).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from hashlib import sha256
from typing import Any, NamedTuple

from cmhash.explain import mermaid_id, workload_fields
from cmhash.explain import mermaid_label as _label
from cmhash.findings import ERROR, INFO, WARNING, Finding
from cmhash.kinds import Policy
from cmhash.resolve import ConfigEntry, ObjectKey, WorkloadPlan, finding

FORMAT_VERSION = 1

ADDED, REMOVED, CHANGED = "added", "removed", "changed"
# why kubectl apply refuses a change to an immutable object
DATA_CHANGED, IMMUTABLE_UNSET = "its data changed", "immutable cannot be unset"


class ConfigChange(NamedTuple):
    key: ObjectKey  # (kind, namespace, name)
    change: str     # added | removed | changed
    entry: ConfigEntry  # the NEW side's object; the OLD one when removed
    keys_added: tuple[str, ...]
    keys_removed: tuple[str, ...]
    keys_changed: tuple[str, ...]
    type_changed: bool
    immutable_violation: str | None  # why kubectl apply will refuse it

    @property
    def touched(self) -> frozenset[str]:
        return frozenset(self.keys_added + self.keys_removed + self.keys_changed)


def _diff_entries(old: Mapping[str, bytes], new: Mapping[str, bytes]
                  ) -> tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]:
    added = tuple(sorted(k for k in new if k not in old))
    removed = tuple(sorted(k for k in old if k not in new))
    changed = tuple(sorted(k for k in new if k in old and old[k] != new[k]))
    return added, removed, changed


def config_changes(old: Mapping[ObjectKey, ConfigEntry],
                   new: Mapping[ObjectKey, ConfigEntry]) -> list[ConfigChange]:
    out = []
    for key in sorted(set(old) | set(new)):
        o, n = old.get(key), new.get(key)
        if n is None:
            assert o is not None
            out.append(ConfigChange(key, REMOVED, o, (), tuple(sorted(o.info.content.entries)),
                                    (), False, None))
            continue
        if o is None:
            out.append(ConfigChange(key, ADDED, n, tuple(sorted(n.info.content.entries)), (),
                                    (), False, None))
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
            out.append(ConfigChange(key, CHANGED, n, added, removed, changed, type_changed,
                                    violation))
    return out


# ------------------------------------------------------------------ workloads

WorkloadKey = tuple[str, str, str, str]  # (API group, kind, namespace, name)


def workload_key(plan: WorkloadPlan) -> WorkloadKey:
    return (plan.info.kind.group, plan.info.kind.kind, plan.namespace, plan.info.name)


def _applied(plan: WorkloadPlan) -> str | None:
    """The annotation value the output carries: what cmhash writes, else whatever the
    input already had (an opted-out or config-less workload keeps it untouched)."""
    if plan.skip is None and plan.value is not None:
        return plan.value
    return plan.info.current


def _annotation_cause(plan: WorkloadPlan, before: str | None, after: str | None
                      ) -> Cause | None:
    """When the checksum appears or disappears, say why."""
    if after is not None and before is not None:
        return None
    if after is None:
        why = (f"not annotated: {plan.skip}" if plan.skip is not None
               else "it uses no ConfigMap/Secret of the input any more")
        return Cause(None, None, f"checksum annotation removed ({why})", ())
    return Cause(None, None, "checksum annotation added", ())


def _used(plan: WorkloadPlan) -> dict[ObjectKey, frozenset[str] | None]:
    """Objects a workload references (in or out of the input, hashed or not: Secrets
    under --exclude-secrets count) and the keys it reads."""
    out: dict[ObjectKey, frozenset[str] | None] = {}
    for ref in plan.info.refs:
        key = (ref.target_kind, plan.namespace, ref.name)
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


def _causes(used: Mapping[ObjectKey, frozenset[str] | None],
            old_used: Mapping[ObjectKey, frozenset[str] | None],
            changes: Mapping[ObjectKey, ConfigChange]) -> list[Cause]:
    causes = []
    for key in sorted(set(used) | set(old_used)):
        kind, _, name = key
        if key not in used:
            causes.append(Cause(kind, name, "no longer referenced", ()))
            continue
        keys = used[key]
        if key not in old_used:
            causes.append(Cause(kind, name, "newly referenced",
                                tuple(sorted(keys)) if keys is not None else ()))
            continue
        ch = changes.get(key)
        if ch is None:
            continue
        hit = ch.touched if keys is None else ch.touched & keys
        if hit or ch.type_changed:
            causes.append(Cause(kind, name, ch.change, tuple(sorted(hit))))
    return causes


def _unhashed(plan: WorkloadPlan, used: Mapping[ObjectKey, frozenset[str] | None],
              changes: Mapping[ObjectKey, ConfigChange]) -> dict[ObjectKey, str]:
    """Changed objects this workload reads whose changes its checksum does not follow:
    opted out (cmhash.io/skip) or, under --exclude-secrets, Secrets."""
    resolved = {(r.ref.target_kind, plan.namespace, r.ref.name): r for r in plan.resolved}
    out = {}
    for key in used:
        if key not in changes:
            continue
        r = resolved.get(key)
        if r is None:
            out[key] = "Secrets are left out of checksums (--exclude-secrets)"
        elif r.entry is not None and r.entry.info.skipped:
            out[key] = f"{key[0]}/{key[2]} is opted out (cmhash.io/skip)"
    return out


# kinds whose pods an annotation never restarts, even when cmhash writes it (--jobs, --pods)
NEVER_ROLLS: dict[Policy, str] = {
    Policy.JOB: ("annotated (--jobs), but a Job is never restarted: only a re-created Job "
                 "runs with the new configuration"),
    Policy.POD: ("annotated (--pods), but a bare Pod is never restarted: delete and "
                 "re-create it"),
}


def _not_rolling_reason(plan: WorkloadPlan, unhashed: Mapping[ObjectKey, str]) -> str | None:
    if plan.skip is not None:
        return f"not annotated: {plan.skip}"
    if plan.info.kind.policy in NEVER_ROLLS:
        return NEVER_ROLLS[plan.info.kind.policy]
    if plan.info.no_restart:
        return plan.info.no_restart
    if unhashed:
        return "; ".join(sorted(set(unhashed.values())))
    return None


# ------------------------------------------------------------------ findings

def _fingerprint(f: Finding) -> str:
    """Stable across line moves: what the finding is about, not where it is."""
    about = "\0".join((f.code, f.path, f.workload or "", "/".join(f.resource or ()),
                       f.field or "", "" if (f.resource or f.workload) else f.message))
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
    return (f.code, f.workload or "", "/".join(f.resource or ()), f.field or "")


def _immutable_finding(ch: ConfigChange) -> Finding:
    e = ch.entry
    keys = ", ".join(sorted(ch.touched))
    detail = f" (keys {keys})" if keys and ch.immutable_violation == DATA_CHANGED else ""
    msg = (f"{e.info.kind} {e.info.name!r} is immutable and {ch.immutable_violation}{detail}: "
           f"kubectl apply will be refused; give it a new name (for example a content-hash "
           f"suffix) or delete and re-create it")
    return finding(e.source, e.info.offset, "immutable-config", msg,
                   resource=("v1", e.info.kind, e.info.name, e.info.namespace or ""))


# ------------------------------------------------------------------ the report

def _object(key: ObjectKey) -> dict[str, str]:
    kind, ns, name = key
    return {"kind": kind, "name": name, "namespace": ns}


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def _summary(restart: int, not_restarting: int, configs: list[ConfigChange],
             errors: int) -> str:
    if restart:
        head = f"{_plural(restart, 'workload')} will restart"
    else:
        head = "No workload will restart"
    parts = [head]
    if not_restarting:
        verb = "uses" if not_restarting == 1 else "use"
        parts.append(f"{_plural(not_restarting, 'workload')} {verb} changed configuration but "
                     "will not restart")
    counts = {k: sum(1 for c in configs if c.key[0] == k) for k in ("ConfigMap", "Secret")}
    changed = " and ".join(_plural(n, k) for k, n in counts.items() if n)
    parts.append(f"{changed} changed" if changed else "no ConfigMap or Secret changed")
    if errors:
        parts.append(_plural(errors, "error"))
    return "; ".join(parts)


def build(old: Any, new: Any, annotation_key: str) -> dict[str, Any]:
    """The report as plain data (the JSON format, and what templates receive)."""
    old_index = old.index.objects if old.index is not None else {}
    new_index = new.index.objects if new.index is not None else {}
    configs = config_changes(old_index, new_index)
    by_key = {c.key: c for c in configs}
    old_plans = {workload_key(p): p for p in old.plans}

    restart, not_restarting = [], []
    users: dict[ObjectKey, list[str]] = {}
    for plan in new.plans:
        if plan.info.generated:
            continue  # a generateName object is created anew, never restarted
        used = _used(plan)
        prev = old_plans.get(workload_key(plan))
        for key, keys in used.items():
            ch = by_key.get(key)
            if ch is not None and (keys is None or ch.touched & keys or ch.type_changed):
                users.setdefault(key, []).append(plan.label)
        if prev is None:
            continue  # created by this change: nothing to restart
        unhashed = _unhashed(plan, used, by_key)
        causes = _causes(used, _used(prev), by_key)
        value, before = _applied(plan), _applied(prev)
        # any change of the applied annotation (changed, added or removed) rolls the pods
        rolls = (value != before and not plan.info.no_restart
                 and plan.info.kind.policy not in NEVER_ROLLS)
        if rolls:
            causes = [c for c in causes if (c.kind, plan.namespace, c.name) not in unhashed]
            about = _annotation_cause(plan, before, value)
            if about is not None:
                causes.append(about)
            restart.append({**workload_fields(plan), "causes": [
                c._asdict() for c in causes or [REFERENCES_CHANGED]]})
        elif causes:
            reason = _not_rolling_reason(plan, unhashed)
            if reason is not None:  # None: e.g. only a reference to an absent object changed
                not_restarting.append({**workload_fields(plan),
                                       "causes": [c._asdict() for c in causes],
                                       "reason": reason})
    # removed objects: who used them before
    for plan in old.plans:
        for key in _used(plan):
            ch = by_key.get(key)
            if ch is not None and ch.change == REMOVED:
                users.setdefault(key, []).append(plan.label)

    new_findings = list(new.findings) + [_immutable_finding(c) for c in configs
                                         if c.immutable_violation]
    new_findings.sort(key=Finding.sort_key)
    known = {_about(f) for f in old.findings}
    findings = [{"file": f.path, "line": f.line, "column": f.column, "level": f.level,
                 "code": f.code, "message": f.message, "new": _about(f) not in known,
                 "fingerprint": fp}
                for f, fp in zip(new_findings, _fingerprints(new_findings), strict=True)]
    errors = sum(1 for f in new_findings if f.level == ERROR)

    config_items = []
    unused = []
    referenced = {key for p in (*new.plans, *old.plans) for key in _used(p)}
    for c in configs:
        e = c.entry
        who = sorted(set(users.get(c.key, [])))
        config_items.append({
            **_object(c.key), "change": c.change, "file": e.source.display,
            "line": e.source.position(e.info.offset)[0], "keysAdded": list(c.keys_added),
            "keysRemoved": list(c.keys_removed), "keysChanged": list(c.keys_changed),
            "typeChanged": c.type_changed, "immutable": e.info.immutable,
            "immutableViolation": c.immutable_violation, "usedBy": who})
        if not who:
            unused.append({**_object(c.key), "change": c.change,
                           "reason": ("no workload reads the changed keys"
                                      if c.key in referenced
                                      else "no workload in the input references it")})
    counts = {ERROR: errors, WARNING: 0, INFO: 0}
    for f in new_findings:
        if f.level != ERROR:
            counts[f.level] += 1
    return {
        "version": FORMAT_VERSION, "annotationKey": annotation_key,
        "summary": {"text": _summary(len(restart), len(not_restarting), configs, errors),
                    "restart": len(restart), "notRestarting": len(not_restarting),
                    "configsChanged": len(configs), "unused": len(unused),
                    "errors": counts[ERROR], "warnings": counts[WARNING],
                    "infos": counts[INFO]},
        "configs": config_items, "restart": restart, "notRestarting": not_restarting,
        "unused": unused, "findings": findings,
    }


# ------------------------------------------------------------------ formats

def to_json(data: dict[str, Any]) -> str:
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


CODEQUALITY_SEVERITY = {ERROR: "critical", WARNING: "major", INFO: "info"}


def to_codequality(data: dict[str, Any]) -> str:
    """GitLab Code Quality: one issue per finding (the MR widget shows new ones)."""
    issues = [{"description": f"{f['message']} [{f['code']}]", "check_name": f"cmhash/{f['code']}",
               "fingerprint": f["fingerprint"], "severity": CODEQUALITY_SEVERITY[f["level"]],
               "location": {"path": f["file"].removeprefix("./"),
                            "lines": {"begin": f["line"]}}}
              for f in data["findings"]]
    return json.dumps(issues, indent=2, ensure_ascii=False) + "\n"


def fails(data: dict[str, Any], fail_on: str | None) -> bool:
    if fail_on is None:
        return False
    s = data["summary"]
    return bool(s["errors"] or (fail_on == WARNING and s["warnings"]))


def to_mermaid(data: dict[str, Any]) -> str:
    """Changed objects -> the workloads they restart (solid) or do not (dotted)."""
    lines = ["graph LR"]
    configs = {(c["kind"], c["namespace"], c["name"]): c for c in data["configs"]}
    for c in data["configs"]:
        cid = mermaid_id("c", c["kind"], c["namespace"], c["name"])
        cls = "error" if c["immutableViolation"] else "changed"
        text = _label(f'{c["kind"]}/{c["name"]} ({c["change"]})')
        lines.append(f'  {cid}[("{text}")]:::{cls}')
    for group, cls, arrow in (("restart", "restart", "-->"),
                              ("notRestarting", "norestart", "-.->")):
        for w in data[group]:
            wid = mermaid_id("w", w["kind"], w["namespace"], w["name"])
            lines.append(f'  {wid}["{_label(w["kind"] + "/" + w["name"])}"]:::{cls}')
            for cause in w["causes"]:
                key = (cause["kind"], w["namespace"], cause["name"])
                if key not in configs:
                    continue
                label = _label(", ".join(cause["keys"]) or cause["change"])
                lines.append(f'  {mermaid_id("c", *key)} {arrow}|"{label}"| {wid}')
    lines += ["  classDef changed fill:#fff4ce,stroke:#b58900",
              "  classDef error fill:#fdd,stroke:#c00",
              "  classDef restart fill:#e3f2fd,stroke:#1565c0",
              "  classDef norestart fill:#fdecea,stroke:#c62828,stroke-dasharray: 4 2"]
    return "\n".join(lines) + "\n"


def _md(value: Any) -> str:
    """Safe in a Markdown table cell: pipes, newlines, and markup characters escaped."""
    text = str(value)
    for ch in "\\`*_[]<>|":
        text = text.replace(ch, "\\" + ch)
    return text.replace("\r", " ").replace("\n", " ")


def _code(value: Any) -> str:
    """An inline code span in a table cell (key and object names)."""
    text = str(value).replace("|", "\\|").replace("\n", " ")
    fence = "``" if "`" in text else "`"
    return f"{fence}{text}{fence}" if fence == "`" else f"{fence} {text} {fence}"


def environment(template_dir: str | None = None) -> Any:
    import jinja2

    loaders: list[Any] = [jinja2.PackageLoader("cmhash", "templates")]
    if template_dir is not None:
        loaders.insert(0, jinja2.FileSystemLoader(template_dir))
    env = jinja2.Environment(loader=jinja2.ChoiceLoader(loaders), autoescape=False,
                             undefined=jinja2.StrictUndefined, keep_trailing_newline=True,
                             trim_blocks=True, lstrip_blocks=True)
    env.filters["md"] = _md
    env.filters["code"] = _code
    env.filters["plural"] = _plural
    return env


def render(data: dict[str, Any], template: str, template_file: str | None = None) -> str:
    """Render with a shipped template (``report.md.j2``, ``report.txt.j2``) or a user's."""
    import os

    if template_file is not None:
        env = environment(os.path.dirname(os.path.abspath(template_file)))
        tpl = env.get_template(os.path.basename(template_file))
    else:
        tpl = environment().get_template(template)
    return str(tpl.render(report=data, mermaid=to_mermaid(data)))


# --format -> a shipped template (markdown, text: --template may replace it) or a function
FORMATS: dict[str, str | Callable[[dict[str, Any]], str]] = {
    "markdown": "report.md.j2", "text": "report.txt.j2",
    "json": to_json, "codequality": to_codequality,
}

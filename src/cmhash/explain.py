"""``cmhash explain``: what each workload references, whether each target is in the
input, and the checksum cmhash would write. Built from a normal run's plans."""

from __future__ import annotations

import json
import re
from typing import Any

from cmhash.findings import Finding
from cmhash.resolve import WorkloadPlan

FORMAT_VERSION = 1


def _target_state(r: Any) -> str:
    if r.entry is None:
        return "optional-absent" if r.ref.optional else "missing"
    return "opted-out" if r.entry.info.skipped else "in-stream"


def _status(plan: WorkloadPlan) -> str:
    if plan.skip is not None:
        return "skipped"
    if plan.value is None:
        return "no-in-stream-config"
    return "annotated"


def workload_fields(plan: WorkloadPlan) -> dict[str, Any]:
    """Which workload, and where: the fields explain and report both start with."""
    info = plan.info
    return {"kind": info.kind.kind, "apiVersion": info.api_version, "name": info.name,
            "namespace": plan.namespace, "file": plan.source.display,
            "line": plan.source.position(info.offset)[0]}


def build(result: Any, annotation_key: str) -> dict[str, Any]:
    workloads = []
    for plan in result.plans:
        info = plan.info
        refs = []
        for r in plan.resolved:
            ref = r.ref
            refs.append({
                "kind": ref.target_kind, "name": ref.name, "namespace": plan.namespace,
                "how": ref.how, "field": ref.field, "container": ref.container,
                "keys": list(ref.keys) if ref.keys is not None else None,
                "optional": ref.optional, "target": _target_state(r),
                "missingKeys": sorted(r.missing_keys),
            })
        workloads.append({
            **workload_fields(plan), "status": _status(plan), "skipReason": str(plan.skip) if plan.skip else None, "noRestart": info.no_restart,
            "checksum": plan.value, "current": info.current, "references": refs,
        })
    configs = []
    if result.index is not None:
        for entry in result.index.objects.values():
            c = entry.info
            configs.append({
                "kind": c.kind, "name": c.name, "namespace": entry.namespace,
                "file": entry.source.display, "line": entry.source.position(c.offset)[0],
                "keys": sorted(c.content.entries), "immutable": c.immutable,
                "optedOut": c.skipped,
            })
    return {"version": FORMAT_VERSION, "annotationKey": annotation_key,
            "workloads": workloads, "configs": configs,
            "findings": [_finding(f) for f in result.findings]}


def _finding(f: Finding) -> dict[str, Any]:
    return {"file": f.path, "line": f.line, "column": f.column, "level": f.level,
            "code": f.code, "message": f.message}


def to_json(data: dict[str, Any]) -> str:
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def _ns(ns: str) -> str:
    return f" -n {ns}" if ns else ""


def to_text(data: dict[str, Any]) -> str:
    out = []
    for w in data["workloads"]:
        head = f"{w['kind']}/{w['name']}{_ns(w['namespace'])}  ({w['file']}:{w['line']})"
        out.append(head)
        if w["status"] == "annotated":
            out.append(f"  {data['annotationKey']}: {w['checksum']}")
        elif w["status"] == "skipped":
            out.append(f"  not annotated: {w['skipReason']}")
        else:
            out.append("  not annotated: uses no ConfigMap/Secret of the input")
        if w["noRestart"]:
            out.append(f"  note: {w['noRestart']}")
        refs = w["references"]
        for i, r in enumerate(refs):
            branch = "└─" if i == len(refs) - 1 else "├─"
            keys = "all keys" if r["keys"] is None else "keys " + ", ".join(r["keys"])
            extra = ", optional" if r["optional"] else ""
            missing = (f"; missing keys: {', '.join(r['missingKeys'])}" if r["missingKeys"]
                       else "")
            out.append(f"  {branch} {r['kind']}/{r['name']} via {r['how']} ({keys}{extra}): "
                       f"{r['target']}{missing}")
    if data["findings"]:
        out.append("")
        out.extend(f"{f['file']}:{f['line']}:{f['column']}: {f['level']}: {f['message']} "
                   f"[{f['code']}]" for f in data["findings"])
    return "\n".join(out) + "\n"


def _id_part(text: str) -> str:
    """[A-Za-z0-9] as is; any other character, ``_`` included, as ``_<hex code point>_``."""
    return re.sub(r"[^A-Za-z0-9]", lambda m: f"_{ord(m.group()):x}_", text)


def mermaid_id(prefix: str, *parts: str) -> str:
    """A node id that is unique per (prefix, parts): ``app-config``, ``app.config`` and
    ``app_config``, or namespace/name ("a-b", "c") and ("a", "b-c"), get different ids.
    Parts are escaped and joined with ``__``; an escape is ``_`` + hex digits + ``_``, so
    reading left to right, ``__`` can only be a separator and the parts come back."""
    return "__".join([prefix, *(_id_part(p) for p in parts)])


_LABEL_ENTITIES = {"#": "#35;", '"': "#quot;", "&": "#amp;", "<": "#lt;", ">": "#gt;",
                   "`": "#96;", "\n": " "}


def mermaid_label(text: str) -> str:
    """Text inside a quoted Mermaid label, shown literally: quotes cannot end it, and
    Mermaid entity codes (``#quot;``), HTML (``&amp;``, ``<b>``) and Markdown strings
    (backticks) in a name are not interpreted; newlines become spaces."""
    return "".join(_LABEL_ENTITIES.get(ch, ch) for ch in text)


def to_mermaid(data: dict[str, Any]) -> str:
    """config objects -> workloads, for GitLab/GitHub Markdown (```mermaid)."""
    q = mermaid_label
    lines = ["graph LR"]
    declared: set[str] = set()
    for w in data["workloads"]:
        wid = mermaid_id("w", w["kind"], w["namespace"], w["name"])
        if wid not in declared:
            declared.add(wid)
            lines.append(f'  {wid}["{q(w["kind"] + "/" + w["name"])}"]')
        for r in w["references"]:
            cid = mermaid_id("c", r["kind"], r["namespace"], r["name"])
            if cid not in declared:
                declared.add(cid)
                name = q(f'{r["kind"]}/{r["name"]}')
                shape = (f'{cid}[("{name}")]' if r["target"] == "in-stream"
                         else f'{cid}>"{name} ({r["target"]})"]')
                lines.append(f"  {shape}")
            label = q(r["how"] + ("" if r["keys"] is None else ": " + ", ".join(r["keys"])))
            arrow = "-->" if r["target"] == "in-stream" else "-.->"
            lines.append(f'  {cid} {arrow}|"{label}"| {wid}')
    return "\n".join(lines) + "\n"


FORMATS = {"text": to_text, "json": to_json, "mermaid": to_mermaid}

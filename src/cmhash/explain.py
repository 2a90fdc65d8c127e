"""``cmhash explain``: what each workload references, whether each target is in the
input, and the checksum cmhash would write. Built from a normal run's plans."""

from __future__ import annotations

import itertools
import operator
import re
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any

from cmhash import jsonout
from cmhash.findings import Finding
from cmhash.mermaid import explain_graph
from cmhash.model import ResourceId, TargetState, WorkloadStatus
from cmhash.plan.index import ConfigEntry
from cmhash.plan.source_versions import produced_by
from cmhash.plan.workplan import Resolved, WorkloadPlan
from cmhash.read.source import SourceText
from cmhash.visible import visible_data

if TYPE_CHECKING:
    from cmhash.app.result import RunResult

FORMAT_VERSION = 1


def target_state(r: Resolved) -> TargetState:
    if r.entry is None:
        return TargetState.OPTIONAL_ABSENT if r.ref.optional else TargetState.MISSING
    if r.excluded is None:
        return TargetState.IN_STREAM
    return TargetState.OPTED_OUT if r.entry.excluded is not None else TargetState.EXCLUDED


def _status(plan: WorkloadPlan) -> WorkloadStatus:
    if plan.skip is not None:
        return WorkloadStatus.SKIPPED
    if plan.value is None:
        return WorkloadStatus.NO_CONFIG
    return WorkloadStatus.ANNOTATED


def workload_fields(plan: WorkloadPlan, line: int | None = None) -> dict[str, Any]:
    """Which workload, and where: the fields explain and report both start with
    (``line``: its line, when the caller has it already)."""
    info = plan.info
    out = {
        "kind": info.kind.kind,
        "apiVersion": info.api_version,
        "name": info.name,
        "namespace": plan.namespace,
        "file": plan.source.display,
        "line": plan.source.position(info.offset)[0] if line is None else line,
    }
    if info.kind.component is not None:  # one of the resource's pod groups
        out["component"] = info.kind.component
    return out


Lines = dict[int, dict[int, int]]  # id(source) -> offset -> line


def _lines(result: RunResult) -> Lines:
    """The line of every workload and config explain shows, one pass per source."""
    offsets: dict[int, tuple[SourceText, list[int]]] = {}
    _offsets_by_source(result.plans, offsets)
    if result.config_index is not None:
        _offsets_by_source(result.config_index.every(), offsets)
    return {key: src.lines(found) for key, (src, found) in offsets.items()}


def _offsets_by_source(
    objects: Iterable[WorkloadPlan | ConfigEntry], into: dict[int, tuple[SourceText, list[int]]]
) -> None:
    # (in input order, so a source's objects mostly come together: one list each)
    for src, run in itertools.groupby(objects, key=_source):
        into.setdefault(id(src), (src, []))[1].extend([o.info.offset for o in run])


_source = operator.attrgetter("source")


def _reference(
    plan: WorkloadPlan,
    r: Resolved,
    names: Mapping[ResourceId, str],
    contested: Mapping[ResourceId, object],
    lines: Lines,
) -> dict[str, Any]:
    ref, entry = r.ref, r.entry
    out = {
        "kind": ref.target_kind,
        "name": ref.name,
        "namespace": ref.namespace or plan.namespace,
        "how": ref.how,
        "field": ref.field,
        "container": ref.container,
        "keys": list(ref.keys) if ref.keys is not None else None,
        "optional": ref.optional,
        "target": str(target_state(r)),
        "missingKeys": sorted(r.missing_keys) if r.missing_keys else [],
    }
    # the optional fields, in this order, only when they say something
    if ref.declared_by:
        out["declaredBy"] = ref.declared_by
    renamed = names.get(entry.id) if entry is not None else None
    if entry is not None and entry.info.source:
        out["producedBy"] = produced_by(entry, renamed)
    if entry is not None and contested and entry.id in contested:  # environments
        out["definedIn"] = f"{entry.source.display}:{lines[id(entry.source)][entry.info.offset]}"
    if renamed is not None:
        out["versionedAs"] = renamed
    if plan.locked:
        key = plan.target(ref)
        for use in plan.locked:
            if use.target == key:
                out["lockedBy"] = f"{use.source} {use.field}"
                if entry is None:  # outside Git, and the cluster holds it
                    out["target"] = str(TargetState.IN_LOCK)
    if r.excluded:
        out["excludedBecause"] = r.excluded
    return out


def _workload(
    plan: WorkloadPlan,
    names: Mapping[ResourceId, str],
    lines: Lines,
    contested: Mapping[ResourceId, object],
) -> dict[str, Any]:
    out = workload_fields(plan, lines[id(plan.source)][plan.info.offset])
    out["status"] = str(_status(plan))
    out["skipReason"] = plan.skip_text
    if plan.selected_by:
        out["selectedBy"] = plan.selected_by
    out["noRestart"] = plan.info.no_restart
    wk = plan.info.kind
    if wk.operator is not None:
        out["rollsThrough"] = f"{wk.operator}, which copies {wk.annotation_field} to its pods"
    if plan.runs_again_as is not None:
        out["runsAgainAs"] = plan.runs_again_as
    if plan.restarts:
        out["restartRequested"] = [r.text for r in plan.restarts]
    out["checksum"] = plan.value
    out["current"] = plan.info.current
    out["references"] = [_reference(plan, r, names, contested, lines) for r in plan.resolved]
    return out


def _config(entry: ConfigEntry, names: Mapping[ResourceId, str], lines: Lines) -> dict[str, Any]:
    c = entry.info
    out = {
        "kind": c.kind,
        "name": c.name,
        "namespace": entry.namespace,
        "file": entry.source.display,
        "line": lines[id(entry.source)][c.offset],
        "keys": sorted(c.content.entries),
        "immutable": c.immutable,
        "optedOut": c.skipped,
    }
    renamed = names.get(entry.id)
    if c.source:
        out["producedBy"] = produced_by(entry, renamed)
    if renamed is not None:
        out["versionedAs"] = renamed
    return out


def build(result: RunResult, annotation_key: str) -> dict[str, Any]:
    """explain as plain data (the JSON format; text and Mermaid are drawn from it)."""
    index = result.config_index
    names = result.versioning.names if result.versioning is not None else {}
    lines = _lines(result)
    contested = index.by_directory if index is not None else {}
    return {
        "version": FORMAT_VERSION,
        "annotationKey": annotation_key,
        "workloads": [_workload(p, names, lines, contested) for p in result.plans],
        "configs": [_config(e, names, lines) for e in index.every()] if index else [],
        "findings": [_finding(f) for f in result.findings],
    }


def _finding(f: Finding) -> dict[str, Any]:
    return {
        "file": f.path,
        "line": f.line,
        "column": f.column,
        "level": str(f.level),
        "code": str(f.code),
        "message": f.message,
    }


def to_json(data: dict[str, Any]) -> bytes:
    """The JSON format, as the UTF-8 bytes written out."""
    return jsonout.document(data)


_INDEX = re.compile(r"\[\d+\]")


def _how(r: dict[str, Any]) -> str:
    if r["how"] == "operator":  # "via spec.secrets": the field, without list indexes
        return _INDEX.sub("", r["field"])
    return f"{r['how']} ({r['declaredBy']})" if r.get("declaredBy") else str(r["how"])


# what a line of the short view tells apart: the object and what explain says of it
_SAME_LINE = ("kind", "namespace", "name", "producedBy", "definedIn", "versionedAs")
_LISTED = 3  # keys named on a line of the short view; more are counted


def _listed(keys: list[str], what: str, sep: str = " ") -> str:
    return f"{what}{sep}{', '.join(keys)}" if len(keys) <= _LISTED else f"{len(keys)} {what}"


def _one_per_object(refs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The short view: the references to one object as one line (Argo CD's
    controllers read some 40 optional keys of argocd-cmd-params-cm each, one env entry
    per key); a reference alone keeps its own line as --detail shows it."""
    groups: dict[tuple[Any, ...], list[dict[str, Any]]] = {}
    for r in refs:
        groups.setdefault(tuple(r.get(k) for k in _SAME_LINE), []).append(r)
    out = []
    for same in groups.values():
        if len(same) == 1:
            out.append(same[0])
            continue
        keys = (
            None if any(r["keys"] is None for r in same) else {k for r in same for k in r["keys"]}
        )
        optional = [r["optional"] for r in same]
        required = {k for r in same if not r["optional"] for k in r["missingKeys"]}
        out.append(
            {
                **same[0],
                "target": _target(same),
                "hows": list(dict.fromkeys(_how(r) for r in same)),
                "count": len(same),
                "keys": None if keys is None else sorted(keys),
                "optional": all(optional) or ("partly" if any(optional) else False),
                "missingKeys": sorted(required),
                "absentOptional": sorted(
                    {k for r in same if r["optional"] for k in r["missingKeys"]} - required
                ),
                "excludedBecause": same[0].get("excludedBecause"),
            }
        )
    return out


def _target(same: list[dict[str, Any]]) -> str:
    """What explain says of one object referenced several times: the same for all, or
    what its required references find, then what the optional ones do."""
    targets = list(dict.fromkeys(r["target"] for r in same))
    if len(targets) == 1:
        return str(targets[0])
    required = list(dict.fromkeys(r["target"] for r in same if not r["optional"]))
    optional = list(dict.fromkeys(r["target"] for r in same if r["optional"]))
    extra = [t for t in optional if t not in required]
    if not required or not extra:
        return ", ".join(map(str, targets))
    return f"{', '.join(map(str, required))} (optional references: {', '.join(map(str, extra))})"


def _reference_line(w: dict[str, Any], r: dict[str, Any], last: bool) -> str:
    branch = "└─" if last else "├─"
    keys = "all keys" if r["keys"] is None else "keys " + ", ".join(r["keys"])
    extra = ", optional" if r["optional"] else ""
    absent = "optional keys absent" if r["optional"] is True else "missing keys"  # (as below)
    missing = f"; {absent}: {', '.join(r['missingKeys'])}" if r["missingKeys"] else ""
    name = r["name"] if r["namespace"] == w["namespace"] else f"{r['namespace']}/{r['name']}"
    how = _how(r)
    if "count" in r:  # the short view's line for several references to one object
        how = ", ".join(r["hows"])
        keys = f"{r['count']} references, " + (
            "all keys" if r["keys"] is None else _listed(r["keys"], "keys")
        )
        extra = {True: ", optional", "partly": ", partly optional"}.get(r["optional"], "")
        missing = "; " + _listed(r["missingKeys"], "missing keys", ": ") if r["missingKeys"] else ""
        if r["absentOptional"]:
            missing += "; " + _listed(r["absentOptional"], "optional keys absent", ": ")
    why = f" ({r['excludedBecause']})" if r.get("excludedBecause") else ""
    via = f" (produced by {r['producedBy']})" if r.get("producedBy") else ""
    if r.get("definedIn"):
        via += f" ({r['definedIn']})"
    if r.get("lockedBy"):
        via += f" (locked: {r['lockedBy']})"
    if r.get("versionedAs") and r["versionedAs"] != r["name"]:
        name = f"{name} -> {r['versionedAs']}"
    elif r.get("versionedAs"):
        via += " (versioned)"
    return (
        f"  {branch} {r['kind']}/{name} via {how} ({keys}{extra}): {r['target']}{via}{why}{missing}"
    )


def to_text(data: dict[str, Any], detail: bool = False) -> str:
    """A tree per workload: one line per object it references (``detail``: one per
    reference, as the JSON lists them)."""
    out = []
    collapsed = False
    for w in data["workloads"]:
        group = f" ({w['component']})" if w.get("component") else ""
        ns = f" -n {w['namespace']}" if w["namespace"] else ""
        head = f"{w['kind']}/{w['name']}{group}{ns}  ({w['file']}:{w['line']})"
        out.append(head)
        if w["status"] == WorkloadStatus.ANNOTATED:
            out.append(f"  {data['annotationKey']}: {w['checksum']}")
        elif w["status"] == WorkloadStatus.SKIPPED:
            out.append(f"  not annotated: {w['skipReason']}")
        else:
            out.append("  not annotated: uses no ConfigMap/Secret of the input")
        if w.get("selectedBy"):
            out.append(f"  selected by: {w['selectedBy']}")
        if w.get("runsAgainAs") and w["runsAgainAs"] != w["name"]:
            out.append(f"  runs again as {w['runsAgainAs']} (--jobs=rename)")
        elif w.get("runsAgainAs"):
            out.append("  keeps its name: its template and config are unchanged (--jobs=rename)")
        out.extend(f"  restart requested: {reason}" for reason in w.get("restartRequested", ()))
        if w.get("rollsThrough") and w["status"] == WorkloadStatus.ANNOTATED:
            out.append(f"  restarts through {w['rollsThrough']}")
        if w["noRestart"]:
            out.append(f"  note: {w['noRestart']}")
        refs = w["references"] if detail else _one_per_object(w["references"])
        collapsed = collapsed or len(refs) < len(w["references"])
        out.extend(_reference_line(w, r, i == len(refs) - 1) for i, r in enumerate(refs))
    if collapsed:
        out.append("(one line per referenced object: --detail lists every reference)")
    if data["findings"]:
        out.append("")
        out.extend(
            f"{f['file']}:{f['line']}:{f['column']}: {f['level']}: {f['message']} [{f['code']}]"
            for f in data["findings"]
        )
    return "\n".join(out) + "\n"


# each format's text (or, for JSON, the bytes written as they are)
# (for people: control and bidi characters from the input shown as escapes, visible.py;
# JSON escapes by itself and stays data)
FORMATS: dict[str, Callable[[dict[str, Any]], str | bytes]] = {
    "text": lambda data: to_text(visible_data(data)),
    "text-detail": lambda data: to_text(visible_data(data), detail=True),
    "json": to_json,
    "mermaid": lambda data: explain_graph(visible_data(data)),
}

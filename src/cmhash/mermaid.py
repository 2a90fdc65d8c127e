"""Mermaid diagrams for GitLab and GitHub Markdown: ids unique per object, labels shown
literally, and the two graphs (explain: config objects -> workloads; report: changed
objects -> the workloads they restart or do not)."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from cmhash.model import TargetState


def _id_part(text: str) -> str:
    """[A-Za-z0-9] as is; any other character, ``_`` included, as ``_<hex code point>_``."""
    return re.sub(r"[^A-Za-z0-9]", lambda m: f"_{ord(m.group()):x}_", text)


def mermaid_id(prefix: str, *parts: str) -> str:
    """A node id that is unique per (prefix, parts): ``app-config``, ``app.config`` and
    ``app_config``, or namespace/name ("a-b", "c") and ("a", "b-c"), get different ids.
    Parts are escaped and joined with ``__``; an escape is ``_`` + hex digits + ``_``, so
    reading left to right, ``__`` can only be a separator and the parts come back."""
    return "__".join([prefix, *(_id_part(p) for p in parts)])


_LABEL_ENTITIES = {
    "#": "#35;",
    '"': "#quot;",
    "&": "#amp;",
    "<": "#lt;",
    ">": "#gt;",
    "`": "#96;",
    "\n": " ",
}


def mermaid_label(text: str) -> str:
    """Text inside a quoted Mermaid label, shown literally: quotes cannot end it, and
    Mermaid entity codes (``#quot;``), HTML (``&amp;``, ``<b>``) and Markdown strings
    (backticks) in a name are not interpreted; newlines become spaces."""
    return "".join(_LABEL_ENTITIES.get(ch, ch) for ch in text)


def _namer(namespaces: set[str]) -> Callable[[str, str, str], str]:
    """Labels name the namespace only when the graph has several (the ids always do)."""
    several = len(namespaces) > 1

    def name(kind: str, namespace: str, obj: str) -> str:
        return f"{kind}/{obj}" + (f" -n {namespace}" if several and namespace else "")

    return name


def explain_graph(data: dict[str, Any]) -> str:
    """explain: config objects -> workloads, for GitLab/GitHub Markdown (```mermaid)."""
    q = mermaid_label
    lines = ["graph LR"]
    declared: set[str] = set()
    label_of = _namer(
        {w["namespace"] for w in data["workloads"]}
        | {r["namespace"] for w in data["workloads"] for r in w["references"]}
    )
    for w in data["workloads"]:
        # environments (definedIn: several directories or Helm releases define an object):
        # one node per definition (file and line: two releases may share a file)
        env = any(r.get("definedIn") for r in w["references"])
        where = (w["file"], str(w["line"])) if env else ()
        group = (w["component"],) if w.get("component") else ()  # one of its pod groups
        wid = mermaid_id("w", w["kind"], w["namespace"], w["name"], *group, *where)
        if wid not in declared:
            declared.add(wid)
            shown = label_of(w["kind"], w["namespace"], w["name"])
            shown += f" ({group[0]})" if group else ""
            shown += f" ({w['file']}:{w['line']})" if env else ""
            lines.append(f'  {wid}["{q(shown)}"]')
        for r in w["references"]:
            defined = r.get("definedIn")
            at = (defined,) if defined else ()
            cid = mermaid_id("c", r["kind"], r["namespace"], r["name"], *at)
            if cid not in declared:
                declared.add(cid)
                name = label_of(r["kind"], r["namespace"], r["name"])
                name = q(name + (f" ({defined})" if defined else ""))
                shape = (
                    f'{cid}[("{name}")]'
                    if r["target"] == TargetState.IN_STREAM
                    else f'{cid}>"{name} ({r["target"]})"]'
                )
                lines.append(f"  {shape}")
            label = q(r["how"] + ("" if r["keys"] is None else ": " + ", ".join(r["keys"])))
            arrow = "-->" if r["target"] == TargetState.IN_STREAM else "-.->"
            lines.append(f'  {cid} {arrow}|"{label}"| {wid}')
    return "\n".join(lines) + "\n"


def report_graph(data: dict[str, Any]) -> str:
    """report: changed objects -> the workloads they restart (solid) or do not (dotted)."""
    lines = ["graph LR"]
    configs = {(c["kind"], c["namespace"], c["name"]): c for c in data["configs"]}
    label_of = _namer(
        {c["namespace"] for c in data["configs"]}
        | {w["namespace"] for g in ("restart", "notRestarting") for w in data[g]}
    )
    # one node per name: two Secrets shown by one name (creds-…: their hash suffixes left
    # out, report/redact.py) are one node, with both changes
    nodes: dict[str, tuple[str, list[str], str]] = {}
    for c in data["configs"]:
        cid = mermaid_id("c", c["kind"], c["namespace"], c["name"])
        cls = "error" if c["immutableViolation"] else "changed"
        name = label_of(c["kind"], c["namespace"], c["name"])
        _, changes, was = nodes.setdefault(cid, (name, [], cls))
        changes.append(c["change"])
        nodes[cid] = (name, changes, "error" if "error" in (was, cls) else cls)
    for cid, (name, changes, cls) in nodes.items():
        text = mermaid_label(f"{name} ({', '.join(dict.fromkeys(changes))})")
        lines.append(f'  {cid}[("{text}")]:::{cls}')
    for group, cls, arrow in (
        ("restart", "restart", "-->"),
        ("notRestarting", "norestart", "-.->"),
    ):
        for w in data[group]:
            edges = [
                (cause["kind"], w["namespace"], cause["name"], cause)
                for cause in w["causes"]
                if cause.get("kind") is not None
                and (cause["kind"], w["namespace"], cause["name"]) in configs
            ]
            if all("field" in c for c in w["causes"]):
                continue  # changed by its own template only: the tables say how
            part = (w["component"],) if w.get("component") else ()  # one of its pod groups
            wid = mermaid_id("w", w["kind"], w["namespace"], w["name"], *part)
            fields = sorted({c["type"] for c in w["causes"] if "field" in c})
            text = mermaid_label(
                label_of(w["kind"], w["namespace"], w["name"])
                + (f" ({part[0]})" if part else "")
                + (f" (and {', '.join(fields)})" if fields else "")
            )
            lines.append(f'  {wid}["{text}"]:::{cls}')
            for kind, ns, name, cause in edges:
                label = mermaid_label(", ".join(cause["keys"]) or cause["change"])
                lines.append(f'  {mermaid_id("c", kind, ns, name)} {arrow}|"{label}"| {wid}')
    lines += [
        "  classDef changed fill:#fff4ce,stroke:#b58900",
        "  classDef error fill:#fdd,stroke:#c00",
        "  classDef restart fill:#e3f2fd,stroke:#1565c0",
        "  classDef norestart fill:#fdecea,stroke:#c62828,stroke-dasharray: 4 2",
    ]
    return "\n".join(lines) + "\n"

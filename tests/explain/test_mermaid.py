"""cmhash's Mermaid, rendered by the real renderer (mermaid-cli ``mmdc`` driving
chromium): ``explain --format mermaid`` and the diagram inside ``report``'s Markdown
render, and the SVG holds exactly the nodes and edges the JSON output describes, with
the right labels and line styles, also for names that differ only by punctuation."""

from __future__ import annotations

import json
import re
import subprocess
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml
from conftest import ROOT, run_cmhash, tool

pytestmark = pytest.mark.integration
EXPLAIN = ROOT / "tests" / "fixtures" / "explain"
REPORT = ROOT / "tests" / "fixtures" / "report"
SVG = "{http://www.w3.org/2000/svg}"


@dataclass(frozen=True)
class Edge:
    source: str  # node labels, as rendered
    target: str
    label: str
    style: str  # "solid" or "dotted"


@dataclass
class Graph:
    nodes: dict[str, str]  # Mermaid node id -> rendered label
    classes: dict[str, set[str]]  # Mermaid node id -> CSS classes
    edges: list[Edge]
    links: list[tuple[str, str]]  # the edges as (source id, target id)

    def labels(self) -> list[str]:
        return sorted(self.nodes.values())


def parse_svg(path: Path) -> Graph:
    root = ET.parse(path).getroot()
    nodes: dict[str, str] = {}
    classes: dict[str, set[str]] = {}
    for g in root.iter(f"{SVG}g"):
        cls = (g.get("class") or "").split()
        if cls[:1] == ["node"]:
            m = re.fullmatch(r".*?-flowchart-(\w+)-\d+", g.get("id") or "")
            assert m, g.get("id")
            nodes[m.group(1)] = "".join(g.itertext())
            classes[m.group(1)] = set(cls[1:])
    edge_labels = {
        g.get("data-id"): "".join(g.itertext())
        for g in root.iter(f"{SVG}g")
        if g.get("class") == "label" and g.get("data-id")
    }
    edges, links = [], []
    for p in root.iter(f"{SVG}path"):
        if p.get("data-edge") != "true":
            continue
        # Mermaid names an edge L_<source id>_<target id>_<n>: find the one pair of
        # declared nodes that spells it, so ids that merely share a prefix cannot pass
        data_id = p.get("data-id") or ""
        pairs = [
            (s, t)
            for s in nodes
            for t in nodes
            if re.fullmatch(rf"L_{re.escape(s)}_{re.escape(t)}_\d+", data_id)
        ]
        assert len(pairs) == 1, (data_id, pairs)
        ((s, t),) = pairs
        style = re.search(r"edge-pattern-(\w+)", p.get("class") or "")
        assert style, p.get("class")
        edges.append(Edge(nodes[s], nodes[t], edge_labels.get(data_id, ""), style.group(1)))
        links.append((s, t))
    return Graph(nodes, classes, edges, links)


def mmdc(cwd: Path, source: Path, output: Path) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(
        [tool("mmdc"), "--quiet", "-i", str(source), "-o", str(output)],
        capture_output=True,
        text=True,
        cwd=cwd,
        check=False,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    return proc


def cmhash_out(args: list[str], cwd: Path) -> str:
    res = run_cmhash([args[0], "--no-config", *args[1:]], cwd=cwd)
    assert res.code == 0, res.stderr
    return res.out


def fenced(mermaid: str) -> str:
    return f"```mermaid\n{mermaid}```\n"


@pytest.fixture(scope="module")
def rendered(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Graph]:
    """Every diagram of this module in one mmdc run (one browser start, not four): the
    report Markdown as cmhash writes it, and explain's Mermaid in a fence. mmdc renders
    each ```mermaid block of a Markdown file to OUT-<n>.svg, in order, and writes the
    Markdown with the blocks replaced by image links."""
    tmp = tmp_path_factory.mktemp("mermaid")
    for name, version in (("old", "v1"), ("new", "v2")):
        (tmp / f"{name}.yaml").write_text(hostile_stream(version), encoding="utf-8")
    parts = {
        "report": cmhash_out(["report", "old.yaml", "new.yaml"], REPORT),
        "explain": fenced(cmhash_out(["explain", "--format", "mermaid", "input.yaml"], EXPLAIN)),
        "hostile-report": cmhash_out(["report", "old.yaml", "new.yaml"], tmp),
        "hostile-explain": fenced(cmhash_out(["explain", "--format", "mermaid", "new.yaml"], tmp)),
    }
    for text in parts.values():
        assert text.count("```mermaid\n") == 1
    src, out = tmp / "all.md", tmp / "rendered.md"
    src.write_text("\n".join(parts.values()), encoding="utf-8")
    mmdc(tmp, src, out)
    svgs = sorted(tmp.glob("rendered-*.svg"), key=lambda p: int(p.stem.rsplit("-", 1)[1]))
    assert len(svgs) == len(parts)
    markdown = out.read_text(encoding="utf-8")
    assert "```mermaid" not in markdown and markdown.count("](./rendered-") == len(parts)
    return {name: parse_svg(svg) for name, svg in zip(parts, svgs, strict=True)}


# What the JSON output says the diagrams must show, built without the Mermaid code.


def _label(kind: str, ns: str, name: str, several: bool) -> str:
    """Labels name the namespace when the graph has several (the README's promise)."""
    return f"{kind}/{name}" + (f" -n {ns}" if several and ns else "")


def _several_explain(data: dict) -> bool:  # type: ignore[type-arg]
    spaces = {w["namespace"] for w in data["workloads"]}
    spaces |= {r["namespace"] for w in data["workloads"] for r in w["references"]}
    return len(spaces) > 1


def _several_report(data: dict) -> bool:  # type: ignore[type-arg]
    spaces = {c["namespace"] for c in data["configs"]}
    spaces |= {w["namespace"] for g in ("restart", "notRestarting") for w in data[g]}
    return len(spaces) > 1


def explain_edges(data: dict) -> list[Edge]:  # type: ignore[type-arg]
    edges = []
    many = _several_explain(data)
    for w in data["workloads"]:
        for r in w["references"]:
            cfg = _label(r["kind"], r["namespace"], r["name"], many)
            if r["target"] != "in-stream":
                cfg += f" ({r['target']})"
            label = r["how"] + ("" if r["keys"] is None else ": " + ", ".join(r["keys"]))
            edges.append(
                Edge(
                    cfg,
                    _label(w["kind"], w["namespace"], w["name"], many),
                    label,
                    "solid" if r["target"] == "in-stream" else "dotted",
                )
            )
    return edges


def explain_nodes(data: dict) -> list[str]:  # type: ignore[type-arg]
    """One node per object (two objects may share a label: same name, two namespaces)."""
    many = _several_explain(data)
    objects = {
        ("w", w["kind"], w["namespace"], w["name"]): _label(
            w["kind"], w["namespace"], w["name"], many
        )
        for w in data["workloads"]
    }
    for w in data["workloads"]:
        for r in w["references"]:
            label = _label(r["kind"], r["namespace"], r["name"], many)
            if r["target"] != "in-stream":
                label += f" ({r['target']})"
            objects[("c", r["kind"], r["namespace"], r["name"])] = label
    return sorted(objects.values())


def report_edges(data: dict) -> list[Edge]:  # type: ignore[type-arg]
    changed = {(c["kind"], c["namespace"], c["name"]): c for c in data["configs"]}
    many = _several_report(data)
    edges = []
    for group, style in (("restart", "solid"), ("notRestarting", "dotted")):
        for w in data[group]:
            for cause in w["causes"]:
                c = changed.get((cause["kind"], w["namespace"], cause["name"]))
                if c is not None:
                    edges.append(
                        Edge(
                            f"{_label(c['kind'], c['namespace'], c['name'], many)} ({c['change']})",
                            _label(w["kind"], w["namespace"], w["name"], many),
                            ", ".join(cause["keys"]) or cause["change"],
                            style,
                        )
                    )
    return edges


def test_explain_diagram(rendered: dict[str, Graph]) -> None:
    graph = rendered["explain"]
    data = json.loads(cmhash_out(["explain", "--format", "json", "input.yaml"], EXPLAIN))
    assert len(graph.nodes) == 6 and len(graph.edges) == 5
    assert graph.labels() == explain_nodes(data)
    assert sorted(graph.edges, key=repr) == sorted(explain_edges(data), key=repr)
    assert [e.style for e in graph.edges].count("dotted") == 2  # optional-absent, missing


def test_report_markdown_diagram(rendered: dict[str, Graph]) -> None:
    graph = rendered["report"]
    data = json.loads(cmhash_out(["report", "old.yaml", "new.yaml", "--format", "json"], REPORT))
    assert len(graph.nodes) == 11 and len(graph.edges) == 7
    assert graph.labels() == sorted(
        [f"{c['kind']}/{c['name']} ({c['change']})" for c in data["configs"]]
        + [f"{w['kind']}/{w['name']}" for w in data["restart"] + data["notRestarting"]]
    )
    assert sorted(graph.edges, key=repr) == sorted(report_edges(data), key=repr)
    by_label = {label: graph.classes[nid] for nid, label in graph.nodes.items()}
    assert "error" in by_label["ConfigMap/static-config (changed)"]  # immutable violation
    assert "restart" in by_label["Deployment/api"]
    assert "norestart" in by_label["StatefulSet/postgres"]


def test_renderer_rejects_broken_mermaid(tmp_path: Path) -> None:
    """The renderer is a real check: a diagram it cannot parse fails the command."""
    (tmp_path / "bad.mmd").write_text("graph LR\n  a -->\n")
    proc = subprocess.run(
        [tool("mmdc"), "-i", "bad.mmd", "-o", "bad.svg"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )
    assert proc.returncode != 0 and "Parse error" in proc.stderr
    assert not (tmp_path / "bad.svg").exists()


# Names no Kubernetes API server would accept, but cmhash reads any YAML: punctuation
# twins (ids used to collide), Mermaid syntax, entity codes, HTML, Markdown, unicode.
HOSTILE = [
    "app-config",
    "app.config",
    "app_config",
    "app_2d_config",
    'q"uote',
    "hash#tag",
    "semi;colon",
    "pi|pe",
    "[br]ack{et}(s)",
    "café-配置-✓",
    "amp#35;ent",
    "x#quot;y",
    "<b>bold</b>",
    "&amp;",
    "`md`",
    "a-->b",
    "end",
]
# namespace/name splits that used to share an id, and one name in two namespaces
SPLITS = [("a-b", "c"), ("a", "b-c"), ("x-y", "cfg"), ("x.y", "cfg")]


def hostile_stream(version: str) -> str:
    docs = []
    objects = [("shop", n) for n in HOSTILE] + SPLITS
    for i, (ns, name) in enumerate(objects):
        docs.append(
            {
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": {"name": name, "namespace": ns},
                "data": {f"key|{i}#": f"{version}-{i}"},
            }
        )
        docs.append(
            {
                "apiVersion": "apps/v1",
                "kind": "Deployment",
                "metadata": {"name": f"use {name}", "namespace": ns},
                "spec": {
                    "template": {
                        "spec": {
                            "containers": [
                                {
                                    "name": "c",
                                    "env": [
                                        {
                                            "name": "V",
                                            "valueFrom": {
                                                "configMapKeyRef": {
                                                    "name": name,
                                                    "key": f"key|{i}#",
                                                }
                                            },
                                        }
                                    ],
                                }
                            ]
                        }
                    }
                },
            }
        )
    return yaml.safe_dump_all(docs, allow_unicode=True)


def one_edge_per_config(graph: Graph) -> None:
    """Each ConfigMap is its own node with exactly one edge, to its own Deployment."""
    objects = len(HOSTILE) + len(SPLITS)
    assert len(graph.nodes) == 2 * objects and len(graph.edges) == objects
    sources = [s for s, _ in graph.links]
    assert len(set(sources)) == objects and len({t for _, t in graph.links}) == objects
    for s, t in graph.links:
        config, user = graph.nodes[s], graph.nodes[t]
        name = config.split("/", 1)[1].removesuffix(" (changed)")
        name, _, ns = name.partition(" -n ")  # the graph has several namespaces
        assert user == f"Deployment/use {name} -n {ns}", (config, user)


def test_hostile_names_explain(rendered: dict[str, Graph], tmp_path: Path) -> None:
    graph = rendered["hostile-explain"]
    (tmp_path / "new.yaml").write_text(hostile_stream("v2"), encoding="utf-8")
    data = json.loads(cmhash_out(["explain", "--format", "json", "new.yaml"], tmp_path))
    # every label exactly as named: no entity, HTML or Markdown interpreted
    assert graph.labels() == explain_nodes(data)
    assert sorted(graph.edges, key=repr) == sorted(explain_edges(data), key=repr)
    assert {f"ConfigMap/{n} -n shop" for n in HOSTILE} <= set(graph.nodes.values())
    one_edge_per_config(graph)


def test_hostile_names_report(rendered: dict[str, Graph], tmp_path: Path) -> None:
    graph = rendered["hostile-report"]
    (tmp_path / "old.yaml").write_text(hostile_stream("v1"), encoding="utf-8")
    (tmp_path / "new.yaml").write_text(hostile_stream("v2"), encoding="utf-8")
    data = json.loads(cmhash_out(["report", "old.yaml", "new.yaml", "--format", "json"], tmp_path))
    assert len(data["restart"]) == len(HOSTILE) + len(SPLITS)
    assert sorted(graph.edges, key=repr) == sorted(report_edges(data), key=repr)
    assert {f"ConfigMap/{n} -n shop (changed)" for n in HOSTILE} <= set(graph.nodes.values())
    one_edge_per_config(graph)

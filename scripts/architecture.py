#!/usr/bin/env python3
"""ARCHITECTURE.md's package diagram, drawn from the code.

The nodes are the members of the ``layers`` import contract in pyproject.toml
(``[tool.importlinter]``: the packages and top-level modules of cmhash), in the
contract's order from top to bottom. An arrow ``A --> B`` says that a module of A
imports a module of B, every import counted (inside functions and under
``TYPE_CHECKING`` too, as lint-imports counts them), read by grimp from this checkout's
``src/cmhash``. Only the arrows that no longer path already implies are drawn (the
transitive reduction: ``cli --> plan`` is left out when ``cli --> app`` and
``app --> plan`` are there), so the picture stays readable; the modules inside a
package are not drawn (their docstrings say what they own).

    python scripts/architecture.py          # rewrite the diagram in ARCHITECTURE.md
    python scripts/architecture.py --check  # exit 1 when the committed one is stale

The diagram sits between the marker comments ``<!-- architecture:begin -->`` and
``<!-- architecture:end -->``; everything else in ARCHITECTURE.md is written by hand.
tests/project/test_architecture.py runs the check. Needs grimp (the ``dev`` and ``test`` extras).
"""

from __future__ import annotations

import argparse
import difflib
import importlib.util
import itertools
import re
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path

try:
    import tomllib
except ImportError:  # Python 3.10
    import tomli as tomllib  # type: ignore[no-redef]

ROOT = Path(__file__).resolve().parent.parent
SRC = ROOT / "src"
PACKAGE = "cmhash"
DOC = ROOT / "ARCHITECTURE.md"
BEGIN = "<!-- architecture:begin -->"
END = "<!-- architecture:end -->"
# Mermaid's own words, which cannot be node ids
RESERVED = {"end", "graph", "subgraph", "click", "style", "class", "classDef", "direction"}


class Refused(Exception):
    """No diagram can be drawn (exit 2, with its reason): not a stale one (exit 1)."""


def layers(pyproject: Path = ROOT / "pyproject.toml") -> list[list[str]]:
    """The layers contract's layers, top first, each as its members' names (import-linter
    writes siblings of one layer as ``a | b`` when independent, ``a : b`` when not)."""
    config = tomllib.loads(pyproject.read_text(encoding="utf-8"))["tool"]["importlinter"]
    for contract in config["contracts"]:
        if contract["type"] == "layers" and contract.get("containers") == [PACKAGE]:
            return [[m.strip() for m in re.split(r"[|:]", layer)] for layer in contract["layers"]]
    raise Refused(f"pyproject.toml has no layers contract with containers = [{PACKAGE!r}]")


def module_path(module: str) -> Path:
    """The file of ``module`` (``cmhash.a.b``) in this checkout."""
    base = SRC.joinpath(*module.split("."))
    package = base / "__init__.py"
    return package if package.exists() else base.with_suffix(".py")


def member_of(module: str, members: Iterable[str]) -> str | None:
    """The layer member that holds ``module`` (``cli`` for ``cmhash.cli.main``), or None
    (the root package's own ``__init__``)."""
    parts = module.split(".")
    name = parts[1] if len(parts) > 1 else None
    return name if name in members else None


def reduce(edges: Mapping[str, set[str]]) -> dict[str, set[str]]:
    """The transitive reduction of an acyclic graph: ``a -> b`` is dropped when b is also
    reached from a through another node."""

    def reach(start: str) -> set[str]:
        seen: set[str] = set()
        todo = list(edges.get(start, ()))
        while todo:
            node = todo.pop()
            if node not in seen:
                seen.add(node)
                todo.extend(edges.get(node, ()))
        return seen

    reached = {node: reach(node) for node in edges}
    cyclic = sorted(node for node in edges if node in reached[node])
    if cyclic:
        raise Refused(
            f"import cycle between {', '.join(cyclic)}: no diagram until lint-imports passes"
        )
    return {
        a: {b for b in targets if not any(b in reached[c] for c in targets if c != b)}
        for a, targets in edges.items()
    }


def node_id(name: str) -> str:
    ident = re.sub(r"\W", "_", name).strip("_")
    return f"{ident}_" if ident in RESERVED else ident


def label(name: str, modules: list[str]) -> str:
    """``cli/`` for a package (``native/ + C`` for the one with the C extensions), or
    ``deliver.py``. Only names: the picture changes when the graph does, not with every
    line of code (the sizes are ``tests/project/test_architecture.py``'s business)."""
    files = [module_path(m) for m in modules]
    if not any(p.name == "__init__.py" for p in files):
        return f"{name}.py"
    c_files = [p for p in SRC.joinpath(PACKAGE, name).rglob("*") if p.suffix in (".c", ".h")]
    return f"{name}/ + C" if c_files else f"{name}/"


def diagram() -> str:
    """The Markdown between the markers: the Mermaid graph, and the package's size."""
    try:
        import grimp
    except ImportError:
        raise Refused("scripts/architecture.py needs grimp: pip install -e '.[dev]'") from None
    sys.path.insert(0, str(SRC))  # this checkout's code, whatever else is installed
    spec = importlib.util.find_spec(PACKAGE)
    found = list(spec.submodule_search_locations or ()) if spec else []
    if [Path(p).resolve() for p in found] != [SRC / PACKAGE]:
        raise Refused(f"{PACKAGE} is found in {found}, not in {SRC / PACKAGE}")
    graph = grimp.build_graph(PACKAGE, cache_dir=None)
    order = layers()
    members = [m for layer in order for m in layer]
    unknown = sorted(
        {m.split(".")[1] for m in graph.modules if "." in m} - set(members),
    )
    if unknown:
        raise Refused(f"not in the layers contract: {', '.join(unknown)} (see lint-imports)")

    modules: dict[str, list[str]] = {m: [] for m in members}
    edges: dict[str, set[str]] = {m: set() for m in members}
    for module in graph.modules:
        owner = member_of(module, members)
        if owner is None:
            continue
        modules[owner].append(module)
        for imported in graph.find_modules_directly_imported_by(module):
            target = member_of(imported, members)
            if target is not None and target != owner:
                edges[owner].add(target)
    drawn = reduce(edges)

    lines = ["```mermaid", "graph TD"]
    lines += [f'  {node_id(name)}["{label(name, modules[name])}"]' for name in members]
    for a in members:
        lines += [f"  {node_id(a)} --> {node_id(b)}" for b in members if b in drawn[a]]
    # The layers' order, held by invisible links: a layer that imports nothing from the
    # one below it is still drawn above it.
    for upper, lower in itertools.pairwise(order):
        lines += [f"  {node_id(a)} ~~~ {node_id(b)}" for a in upper for b in lower]
    lines.append("```")
    lines += ["", "*Drawn by `python scripts/architecture.py` from the import graph.*"]
    return "\n".join(lines)


def spliced(doc: str, block: str) -> str:
    start, end = doc.find(BEGIN), doc.find(END)
    if start < 0 or end < start:
        raise Refused(f"{DOC.name} lacks the markers {BEGIN} ... {END}")
    return f"{doc[: start + len(BEGIN)]}\n{block}\n{doc[end:]}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--check", action="store_true", help="write nothing; exit 1 when the diagram is stale"
    )
    args = parser.parse_args(argv)
    doc = DOC.read_text(encoding="utf-8")
    try:
        new = spliced(doc, diagram())
    except Refused as e:
        print(f"scripts/architecture.py: {e}", file=sys.stderr)
        return 2
    if new == doc:
        return 0
    if args.check:
        sys.stdout.writelines(
            difflib.unified_diff(
                doc.splitlines(keepends=True),
                new.splitlines(keepends=True),
                "ARCHITECTURE.md (committed)",
                "ARCHITECTURE.md (from the code)",
            )
        )
        print("ARCHITECTURE.md's diagram is stale: run python scripts/architecture.py")
        return 1
    DOC.write_text(new, encoding="utf-8")
    print("ARCHITECTURE.md: diagram rewritten")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""MkDocs hooks for cmhash's documentation site (mkdocs.yml ``hooks:``).

Three reference pages are generated from the code at build time, so they cannot drift
from it: a page holding one of the markers below gets the marker replaced.

- ``<!-- cmhash:cli -->``: every command's ``--help``, exactly as click prints it;
- ``<!-- cmhash:config -->``: every key of ``.cmhash.yaml`` from
  ``src/cmhash/schemas/config.schema.json`` (type and description);
- ``<!-- cmhash:findings -->``: every finding code with its level and meaning, from
  ``cmhash.findings.CODES``.

The generators are plain functions: ``tests/project/test_docs.py`` checks them without MkDocs.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
SCHEMA = ROOT / "src" / "cmhash" / "schemas" / "config.schema.json"
WIDTH = 90


def cli_reference() -> str:
    """Each command's help text, as ``cmhash COMMAND --help`` prints it."""
    import click

    from cmhash.cli.main import cli

    out: list[str] = []
    root = click.Context(cli, info_name="cmhash", terminal_width=WIDTH, max_content_width=WIDTH)
    out += ["## cmhash", "", "```text", cli.get_help(root).rstrip(), "```", ""]
    for name in sorted(cli.commands, key=lambda n: (n != "inject", n)):
        command = cli.commands[name]
        ctx = click.Context(
            command,
            info_name=name,
            parent=root,
            terminal_width=WIDTH,
            max_content_width=WIDTH,
        )
        out += [f"## cmhash {name}", "", "```text", command.get_help(ctx).rstrip(), "```", ""]
    return "\n".join(out)


def _type(prop: dict[str, Any]) -> str:
    if "enum" in prop:
        return " \\| ".join(f"`{json.dumps(v)}`" for v in prop["enum"])
    if "const" in prop:
        return f"`{json.dumps(prop['const'])}`"
    kind = prop.get("type")
    if isinstance(kind, list):
        return " or ".join(kind)
    if kind == "array":
        items = prop.get("items", {})
        return f"list of {_type(items) if isinstance(items, dict) and items else 'any'}"
    if kind:
        return str(kind)
    for combo in ("oneOf", "anyOf"):
        if combo in prop:
            return " or ".join(_type(p) for p in prop[combo])
    if "$ref" in prop:
        return f"see `{prop['$ref'].rsplit('/', 1)[-1]}`"
    return "any"


def _cell(text: str) -> str:
    text = " ".join(text.split()).replace("|", "\\|")
    return text.replace("<", "&lt;").replace(">", "&gt;")


def _rows(props: dict[str, Any], prefix: str, required: set[str]) -> list[str]:
    """One row per key, nested objects and lists of objects as dotted keys
    (``ignore.configs[].name``)."""
    rows: list[str] = []
    for key, prop in props.items():
        name = f"{prefix}{key}"
        need = "yes" if key in required else ""
        rows.append(f"| `{name}` | {_type(prop)} | {need} | {_cell(prop.get('description', ''))} |")
        inner = prop.get("items", prop) if prop.get("type") == "array" else prop
        if isinstance(inner, dict) and inner.get("properties"):
            mark = "[]." if prop.get("type") == "array" else "."
            rows += _rows(inner["properties"], name + mark, set(inner.get("required", [])))
    return rows


def config_reference(schema_path: Path = SCHEMA) -> str:
    """A table of the config file's keys, nested keys dotted."""
    schema = json.loads(schema_path.read_text(encoding="utf-8"))
    out = ["| Key | Type | Required | Meaning |", "| --- | --- | --- | --- |"]
    out += _rows(schema.get("properties", {}), "", set(schema.get("required", [])))
    return "\n".join(out)


def findings_reference() -> str:
    """The ``Code`` table: code, level and when it is reported."""
    from cmhash.findings import CODES

    out = ["| Code | Level | When |", "| --- | --- | --- |"]
    for code, (level, meaning) in CODES.items():
        out.append(f"| `{code.value}` | {level.value} | {_cell(meaning)} |")
    return "\n".join(out)


def changelog() -> str:
    """CHANGELOG.md, as it is in the repository."""
    return (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")


MARKERS = {
    "<!-- cmhash:changelog -->": changelog,
    "<!-- cmhash:cli -->": cli_reference,
    "<!-- cmhash:config -->": config_reference,
    "<!-- cmhash:findings -->": findings_reference,
}


def on_page_markdown(markdown: str, **_: Any) -> str:
    """MkDocs hook: replace each marker with its generated text."""
    for marker, make in MARKERS.items():
        if marker in markdown:
            markdown = markdown.replace(marker, make())
    return markdown


# Repository files the pages link to (templates, schemas, examples): published with the
# site under files/, so that a link from a page reaches the file of the same release.
SHIPPED = ("ci-templates", "src/cmhash/schemas", "src/cmhash/templates", "examples", "action.yml")


def on_files(files: Any, config: Any, **_: Any) -> Any:
    """MkDocs hook: add the shipped repository files under files/."""
    from mkdocs.structure.files import File

    for top in SHIPPED:
        base = ROOT / top
        if not base.exists():
            continue
        paths = [base] if base.is_file() else sorted(p for p in base.rglob("*") if p.is_file())
        for path in paths:
            if "__pycache__" in path.parts:
                continue
            rel = path.relative_to(ROOT).as_posix()
            files.append(File.generated(config, f"files/{rel}", abs_src_path=str(path)))
    return files

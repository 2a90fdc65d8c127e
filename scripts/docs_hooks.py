"""MkDocs hooks for cmhash's documentation site (mkdocs.yml ``hooks:``).

Reference text is generated from the code at build time, so it cannot drift from it: a
page holding one of the ``MARKERS`` gets the marker replaced.

- ``<!-- cmhash:cli -->``: every command's ``--help``, exactly as click prints it;
- ``<!-- cmhash:commands -->``: the list of commands with their one-line help;
- ``<!-- cmhash:config -->``: every key of ``.cmhash.yaml`` from
  ``src/cmhash/schemas/config.schema.json`` (type and description);
- ``<!-- cmhash:findings -->``: every finding code with its level and meaning, from
  ``cmhash.findings.CODES``;
- the decision tables of ``cmhash.knowledge``: for the user pages without their
  citations (``rollout-rules``, ``pod-fields``, ``replicas``, ``capacity-rules``), and
  with them on the "How cmhash decides" pages (``decides-rollout``,
  ``decides-pod-fields``, ``decides-replicas``, ``decides-capacity``, ``decides-reloader``,
  ``decides-versioning``, ``decides-name-sites``).

The pages are written to read well on the code host too (GitLab renders ``docs/``):

- a link to a repository file outside ``docs/`` (``../../ci-templates/x.yml``) works
  there as it is; on the site it is rewritten to the copy published under ``files/``;
- ``\\|`` inside a code span of a table row is GitLab's (GFM's) way to write a pipe
  there; Python-Markdown keeps the backslash, so the site gets the pipe alone (its
  table parser does not split cells on a pipe inside a code span);
- a heading inside a block quote (an example of cmhash's Markdown output) stays out of
  the page's table of contents.

The generators are plain functions: ``tests/project/test_docs.py`` checks them without MkDocs.
"""

from __future__ import annotations

import json
import posixpath
import re
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
SCHEMA = ROOT / "src" / "cmhash" / "schemas" / "config.schema.json"
WIDTH = 74  # the characters a code block holds at 1280 px: help lines never wrap twice


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


def commands_list(page_dir: str = "") -> str:
    """One line per command: its name, linked to its reference section, and the first
    line of its help."""
    from cmhash.cli.main import cli

    ref = posixpath.relpath("reference/cli.md", page_dir or ".")
    out = []
    for name in sorted(cli.commands, key=lambda n: (n != "inject", n)):
        text = " ".join((cli.commands[name].help or "").split("\n\n")[0].split())
        short = re.split(r"(?<=\.)\s(?=[A-Z])", text, maxsplit=1)[0].rstrip(".:")
        out.append(f"- [`{name}`]({ref}#cmhash-{name}): {short}")
    return "\n".join(out)


def _kinds(rule: Any) -> str:
    kinds = ", ".join(sorted({k for _, k in rule.kinds}))
    return "every kind" if kinds == "*" else kinds


def rollout_rules() -> str:
    """knowledge/rollout.py RULES as the user reads them: per kind, the first rule that
    holds decides."""
    from cmhash.knowledge.rollout import RULES

    out = ["| Kind | Rule | When | Outcome |", "|---|---|---|---|"]
    out += [f"| {_kinds(r)} | `{r.name}` | {_cell(r.condition)} | {r.outcome} |" for r in RULES]
    return "\n".join(out)


def decides_rollout() -> str:
    """RULES with where Kubernetes (or the controller that owns the kind) defines each."""
    from cmhash.knowledge.rollout import RULES

    out = ["| Kind | Rule | Outcome | Defined in |", "|---|---|---|---|"]
    out += [f"| {_kinds(r)} | `{r.name}` | {r.outcome} | {_cell(r.source)} |" for r in RULES]
    return "\n".join(out)


def capacity_rules() -> str:
    """knowledge/capacity.py CAPACITY_RULES as the user reads them."""
    from cmhash.knowledge.capacity import CAPACITY_RULES

    out = ["| Applies to | Rule | Figures |", "|---|---|---|"]
    out += [f"| {_cell(r.kinds)} | `{r.name}` | {_cell(r.rule)} |" for r in CAPACITY_RULES]
    return "\n".join(out)


def decides_capacity() -> str:
    """CAPACITY_RULES, the pod's requests and the quantity form, with where Kubernetes
    defines each."""
    from cmhash.knowledge.capacity import CAPACITY_RULES
    from cmhash.knowledge.podrequests import DURATION_SOURCE, REQUESTS_SOURCE
    from cmhash.knowledge.quantity import SOURCE

    out = ["| Rule | Applies to | Defined in |", "|---|---|---|"]
    out += [f"| `{r.name}` | {_cell(r.kinds)} | {_cell(r.source)} |" for r in CAPACITY_RULES]
    out += [
        f"| `pod-requests` | a pod's effective requests | {_cell(REQUESTS_SOURCE)} |",
        f"| `quantity-canonical` | every quantity shown | {_cell(SOURCE)} |",
        f"| `duration-floor` | durationAtLeastSeconds | {_cell(DURATION_SOURCE)} |",
    ]
    return "\n".join(out)


def _allowed(field: Any) -> str:
    return (field.allowed.__doc__ or "always").strip().splitlines()[0].rstrip(".")


def pod_fields() -> str:
    """knowledge/podupdate.py POD_FIELDS: what a bare Pod's update may change."""
    from cmhash.knowledge.podupdate import POD_FIELDS

    out = ["| Field | Allowed when |", "|---|---|"]
    out += [f"| {_cell(f.field)} | {_cell(_allowed(f))} |" for f in POD_FIELDS]
    out.append("| any other field | never: the update is refused |")
    return "\n".join(out)


def decides_pod_fields() -> str:
    from cmhash.knowledge.podupdate import POD_FIELDS

    out = ["| Field | Defined in |", "|---|---|"]
    out += [f"| {_cell(f.field)} | {_cell(f.source)} |" for f in POD_FIELDS]
    return "\n".join(out)


def decides_reloader() -> str:
    """knowledge/compat.py RELOADER_RULES in their order, with where Reloader decides."""
    from cmhash.knowledge.compat import NOT_SELECTED, RELOADER_RULES

    out = ["| Order | Rule | Counts | When | In Reloader |", "|---|---|---|---|---|"]
    for n, r in enumerate((*RELOADER_RULES, NOT_SELECTED), 1):
        when = r.why.format(
            exclude="the kind's exclude list",
            reload="the kind's reload list",
            typed_auto="the kind's typed auto",
            detail="otherwise",
        )
        out.append(
            f"| {n} | `{r.name}` | {'yes' if r.reloads else 'no'} | {_cell(when)} "
            f"| stakater/Reloader {_cell(r.upstream)} |"
        )
    return "\n".join(out)


def decides_versioning() -> str:
    """knowledge/versioning.py PEER_ANNOTATIONS: other tools' "version this" marks."""
    from cmhash.knowledge.versioning import PEER_ANNOTATIONS

    reads = {"present": "present, any value", "true": 'exactly "true"'}
    out = ["| Tool | Annotation | Versioned when | Defined in |", "|---|---|---|---|"]
    out += [
        f"| {a.tool} | `{a.annotation}` | {reads.get(a.reads, a.reads)} | {_cell(a.source)} |"
        for a in PEER_ANNOTATIONS
    ]
    return "\n".join(out)


def decides_name_sites() -> str:
    """knowledge/namesites.py: the fields outside pod specs that name a ConfigMap or a
    Secret, with where each field is defined."""
    from cmhash.knowledge.namesites import SITES

    target = {"kind": "its `kind`", "resources": "ConfigMap / Secret"}
    out = ["| Kind | Field | Names | Defined in |", "|---|---|---|---|"]
    for site in SITES:
        kinds = ", ".join(f"`{k}`" for k in site.kinds)
        field = ".".join((*site.path, site.name)).replace(".*", "[]")
        names = target.get(site.target, site.target)
        out.append(f"| {kinds} | `{field}` | {names} | {_cell(site.cite) or 'Kubernetes API'} |")
    return "\n".join(out)


def _replicas_rows(cited: bool) -> list[str]:
    from cmhash.knowledge.replicas import ABSENT_SOURCE, AUTOSCALERS, REMOVED_SOURCE

    def row(what: str, matched: str, count: str, source: str) -> str:
        return f"| {what} | {matched} | {count} |" + (f" {_cell(source)} |" if cited else "")

    out = [
        "| What gives the count | Matched by | Count |" + (" Defined in |" if cited else ""),
        "|---|---|---|" + ("---|" if cited else ""),
        row("`spec.replicas`, no autoscaler", "—", "that number", "the manifest"),
    ]
    for a in AUTOSCALERS:
        ref = "`scaleTargetRef`: kind, name, the group of its apiVersion; its namespace"
        kind = f"kind {a.target_kind}" if a.target_kind else ""
        defaults = [d for d in (kind, a.target_api) if d]
        if defaults:
            ref += f" (by default {', '.join(defaults)})"
        high = "required" if a.high_default is None else f"default {a.high_default}"
        count = f"`{a.low}` (default {a.low_default}) to `{a.high}` ({high})"
        if a.idle:
            count += f"; `{a.idle}` while idle"
        if a.zero_stops:
            count += "; 0 when the workload's `spec.replicas` is 0 (it stops scaling it)"
        if a.paused_replicas:
            count += f"; `{a.paused_replicas}: N` holds it at N; `{a.paused}` leaves it unknown"
        out.append(row(f"{a.kind} (`{a.group}`)", ref, count, a.source))
    out.append(
        row(
            "`spec.replicas` in OLD, absent in NEW",
            "—",
            "1 (apply deletes the field; the API server's default), then the autoscaler's range",
            REMOVED_SOURCE,
        )
    )
    out.append(
        row(
            "nothing: `spec.replicas` absent, no autoscaler",
            "—",
            "unknown offline, never 1",
            ABSENT_SOURCE,
        )
    )
    return out


def replicas() -> str:
    """knowledge/replicas.py AUTOSCALERS: what gives a workload's pod count."""
    return "\n".join(_replicas_rows(cited=False))


def decides_replicas() -> str:
    """AUTOSCALERS with where each autoscaler's controller reads its fields."""
    return "\n".join(_replicas_rows(cited=True))


def changelog() -> str:
    """CHANGELOG.md, as it is in the repository."""
    return (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")


MARKERS = {
    "<!-- cmhash:changelog -->": changelog,
    "<!-- cmhash:cli -->": cli_reference,
    "<!-- cmhash:config -->": config_reference,
    "<!-- cmhash:findings -->": findings_reference,
    "<!-- cmhash:rollout-rules -->": rollout_rules,
    "<!-- cmhash:capacity-rules -->": capacity_rules,
    "<!-- cmhash:decides-capacity -->": decides_capacity,
    "<!-- cmhash:pod-fields -->": pod_fields,
    "<!-- cmhash:replicas -->": replicas,
    "<!-- cmhash:decides-replicas -->": decides_replicas,
    "<!-- cmhash:decides-rollout -->": decides_rollout,
    "<!-- cmhash:decides-pod-fields -->": decides_pod_fields,
    "<!-- cmhash:decides-reloader -->": decides_reloader,
    "<!-- cmhash:decides-versioning -->": decides_versioning,
    "<!-- cmhash:decides-name-sites -->": decides_name_sites,
}
COMMANDS_MARKER = "<!-- cmhash:commands -->"

FENCE = re.compile(r"^ *(```|~~~)")
CODE_SPAN = re.compile(r"(`+)(.+?)\1")
LINK = re.compile(r"(\]\()([^)\s#]+)(#[^)\s]*)?(\))")


def gfm_table_pipes(markdown: str) -> str:
    """``\\|`` inside a code span of a table row becomes ``|`` (what GitLab shows),
    outside fenced code blocks."""
    out, fenced = [], False
    for line in markdown.split("\n"):
        if FENCE.match(line):
            fenced = not fenced
        elif not fenced and line.lstrip().startswith("|") and "\\|" in line:
            line = CODE_SPAN.sub(lambda m: m.group(0).replace("\\|", "|"), line)
        out.append(line)
    return "\n".join(out)


def repository_links(markdown: str, src_uri: str) -> str:
    """A relative link from a page to a shipped repository file outside ``docs/``
    points, on the site, at its copy under ``files/`` (see ``SHIPPED``)."""
    page_dir = posixpath.dirname(f"docs/{src_uri}")

    def fix(m: re.Match[str]) -> str:
        target = m.group(2)
        if "://" in target or target.startswith(("/", "mailto:")):
            return m.group(0)
        path = posixpath.normpath(posixpath.join(page_dir, target))
        if path.startswith("docs/") or not path.startswith(SHIPPED):
            return m.group(0)
        new = posixpath.relpath(f"docs/files/{path}", page_dir)
        return f"{m.group(1)}{new}{m.group(3) or ''}{m.group(4)}"

    return LINK.sub(fix, markdown)


def on_page_markdown(markdown: str, page: Any = None, **_: Any) -> str:
    """MkDocs hook: replace each marker with its generated text; make the GitLab
    spellings of pipes in tables and of repository links right for the site."""
    for marker, make in MARKERS.items():
        if marker in markdown:
            markdown = markdown.replace(marker, make())
    src_uri = page.file.src_uri if page is not None else "index.md"
    if COMMANDS_MARKER in markdown:
        markdown = markdown.replace(COMMANDS_MARKER, commands_list(posixpath.dirname(src_uri)))
    return repository_links(gfm_table_pipes(markdown), src_uri)


QUOTED_HEADING = re.compile(r"<h[1-6][^>]*\sid=\"([^\"]+)\"")


def _drop(items: Any, ids: set[str]) -> Any:
    kept = [item for item in items if item.id not in ids]
    for item in kept:
        item.children = _drop(item.children, ids)
    return kept


def on_page_content(html: str, page: Any = None, **_: Any) -> str:
    """MkDocs hook: headings inside a block quote (an example of Markdown output) are
    not the page's sections: they leave the table of contents."""
    ids: set[str] = set()
    for quote in re.findall(r"<blockquote>(.*?)</blockquote>", html, flags=re.S):
        ids.update(QUOTED_HEADING.findall(quote))
    if ids and page is not None and page.toc is not None:
        page.toc.items = _drop(page.toc.items, ids)
    return html


# Repository files the pages link to (templates, schemas, examples): published with the
# site under files/, so that a link from a page reaches the file of the same release.
SHIPPED = (
    "ci-templates",
    "src/cmhash/schemas",
    "src/cmhash/templates",
    "src/cmhash/data",
    "examples",
    "action.yml",
    ".pre-commit-hooks.yaml",
)


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

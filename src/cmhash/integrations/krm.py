"""KRM function mode: stdin is one ``config.kubernetes.io/v1`` ``ResourceList``.

The ResourceList is a single document whose ``items`` the normal pipeline already
unwraps (it is a ``*List``), so the items are annotated by the same text splices as
any stream. This module adds the two things the function spec asks for: options from
``functionConfig`` (validated by the config-file schema; a ConfigMap's ``data`` works
too, as kpt passes one) and findings written back as ``results`` (severity, message,
resourceRef, field, file), spliced into the text like everything else.
"""

from __future__ import annotations

import json
from typing import Any, NamedTuple

from cmhash.edit.verify import count_check
from cmhash.errors import EXIT_INPUT, EXIT_OK, CmhashError, ConfigError, NodeError
from cmhash.findings import Finding
from cmhash.model import Level
from cmhash.output import err, report_notes, write_stdout
from cmhash.parse.events import backend, parse_chunk
from cmhash.parse.tree import MAP, SEQ, Node, deref, get, items, scalar
from cmhash.read.source import SourceText, newline_at
from cmhash.read.split import split_chunks

API_VERSIONS = ("config.kubernetes.io/v1", "config.kubernetes.io/v1beta1")
PATH_ANNOTATIONS = ("internal.config.kubernetes.io/path", "config.kubernetes.io/path")
INDEX_ANNOTATIONS = ("internal.config.kubernetes.io/index", "config.kubernetes.io/index")


class ResourceList(NamedTuple):
    source: SourceText
    root: Node  # the ResourceList mapping
    function_config: Node | None


def detect(sources: list[SourceText]) -> ResourceList | None:
    """A single input whose only document is a ResourceList."""
    if len(sources) != 1:
        return None
    src = sources[0]
    if "ResourceList" not in src.text:  # the common case costs one substring search
        return None
    docs = [c for c in split_chunks(src.text) if src.text[c.start : c.end].strip(" \t\r\n-.")]
    if len(docs) != 1:
        return None
    chunk = docs[0]
    try:
        roots = parse_chunk(src.text[chunk.start : chunk.end], chunk.start, backend("fast"))
    except NodeError:
        return None  # the normal pipeline reports it with its position
    root = deref(roots[0]) if roots else None
    if root is None or root.kind != MAP or scalar(get(root, "kind")) != "ResourceList":
        return None
    if scalar(get(root, "apiVersion")) not in API_VERSIONS:
        return None
    return ResourceList(src, root, deref(get(root, "functionConfig")))


def _from_configmap_data(data: dict[str, Any], schema: dict[str, Any]) -> dict[str, Any]:
    """A ConfigMap's string values as options: "true"/"false" for booleans, YAML for
    lists and mappings (``ignore: "{configs: [{name: x}]}"``)."""
    from cmhash.parse.tree import to_python

    types = {k: v.get("type") for k, v in schema["properties"].items()}
    options: dict[str, Any] = {}
    for key, value in data.items():
        kind = types.get(key)
        if kind == "boolean" and isinstance(value, str):
            options[key] = {"true": True, "false": False}.get(value.lower(), value)
        elif (
            isinstance(kind, (str, list))
            and set(kind if isinstance(kind, list) else [kind]) & {"array", "object"}
            and isinstance(value, str)
        ):
            roots = parse_chunk(value, 0, backend("fast"))
            options[key] = to_python(roots[0]) if roots else None
        else:
            options[key] = value
    return options


def function_options(rl: ResourceList) -> dict[str, Any]:
    """Config-file keys from functionConfig: the object itself, or a ConfigMap's data."""
    from cmhash.parse.tree import to_python
    from cmhash.settings.config import schema, validate

    fc = rl.function_config
    if fc is None or fc.is_null:
        return {}
    data = to_python(fc)
    if not isinstance(data, dict):
        raise ConfigError("functionConfig must be a mapping", path=rl.source.display)
    root: Node | None = fc
    if data.get("kind") == "ConfigMap" and data.get("apiVersion") == "v1":
        data, root = _from_configmap_data(data.get("data") or {}, schema()), None
    origin = f"{rl.source.display} (functionConfig)"
    validate(data, origin, root, rl.source)
    return {k: v for k, v in data.items() if k not in ("apiVersion", "kind", "metadata")}


# ------------------------------------------------------------------ results


def _first(annotations: Node | None, keys: tuple[str, ...]) -> str | None:
    return next((v for v in (scalar(get(annotations, k)) for k in keys) if v), None)


class Item(NamedTuple):
    """An item of the ResourceList: its lines there, where a message points for it
    (the user's file when the orchestrator says which, else its place in the list),
    and its result's ``file`` (None: no file is known)."""

    first: int
    last: int
    where: str
    file: dict[str, Any] | None


def _items(rl: ResourceList) -> list[Item]:
    """Each item, with the file it came from when an annotation says it (kpt and
    ``kustomize fn run`` set ``config.kubernetes.io/path`` and a per-file index;
    ``kustomize build`` sets neither: kyaml kio/kioutil/kioutil.go)."""
    out = []
    for i, item in enumerate(items(get(rl.root, "items"))):
        ann = get(get(item, "metadata"), "annotations")
        path, index = _first(ann, PATH_ANNOTATIONS), _first(ann, INDEX_ANNOTATIONS)
        file: dict[str, Any] | None = None
        where = f"{rl.source.display}: items[{i}]"
        if path is not None:
            file = {"path": path}
            where = path
            if index is not None and index.isdigit():
                file["index"] = int(index)
                where = f"{path} (document {int(index) + 1})"
        lines = rl.source.position(item.start)[0], rl.source.position(item.end)[0]
        out.append(Item(*lines, where, file))
    return out


def _item_of(f: Finding, found: list[Item]) -> Item | None:
    return next((i for i in found if i.first <= f.line <= i.last), None)


def results(rl: ResourceList, findings: list[Finding]) -> list[dict[str, Any]]:
    """Findings as KRM results, each with the file of the item it points into."""
    found = _items(rl) if findings else []
    return [_result(f, _item_of(f, found)) for f in findings]


def report(rl: ResourceList, findings: list[Finding], *, quiet: bool) -> list[Finding]:
    """The findings on stderr, each at the user's file (or the item) it is about rather
    than at a line of the ResourceList, which nobody wrote; those printed."""
    shown = [f for f in findings if not (quiet and f.level is not Level.ERROR)]
    found = _items(rl) if shown else []
    for f in shown:
        item = _item_of(f, found)
        where = item.where if item is not None else f"{f.path}:{f.line}:{f.column}"
        err(f"{where}: {f.level}: {f.message} [{f.code}]")
    return shown


def _result(f: Finding, item: Item | None) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "message": f"{f.message} [{f.code}]",
        "severity": str(f.level),
        "tags": {"code": str(f.code)},
    }
    if f.resource is not None:
        ref = {"apiVersion": f.api_version or "", "kind": f.resource.kind, "name": f.resource.name}
        if f.resource.namespace:
            ref["namespace"] = f.resource.namespace
        entry["resourceRef"] = ref
    if f.field:
        entry["field"] = {"path": f.field}
    if item is not None and item.file is not None:
        entry["file"] = item.file
    return entry


def with_results(text: str, results: list[dict[str, Any]]) -> str:
    """``text`` (the rewritten ResourceList) with ``results`` added: appended to an
    existing results sequence, or as a new top-level key. Checked by re-parsing."""
    if not results:
        return text
    root = deref(parse_chunk(text, 0, backend("fast"))[0])
    assert root is not None
    assert root.kind == MAP
    before = len(items(get(root, "results")))
    out = _splice_results(text, root, results)
    after_root = deref(parse_chunk(out, 0, backend("fast"))[0])
    count_check(
        before, len(items(get(after_root, "results"))), len(results), "results to the ResourceList"
    )
    return out


def _splice_results(text: str, root: Node, results: list[dict[str, Any]]) -> str:
    nl = newline_at(text)
    entries = [json.dumps(r, ensure_ascii=False, sort_keys=False) for r in results]
    existing = deref(get(root, "results"))
    if existing is not None and not existing.is_null:
        if existing.kind != SEQ:
            raise NodeError("ResourceList 'results' is not a sequence", existing.start)
        if existing.style:  # flow: [a, b]
            close = text.rindex("]", existing.start, existing.end)
            sep = ", " if existing.value else ""
            return text[:close] + sep + ", ".join(entries) + text[close:]
        first = existing.value[0]
        col = first.start - text.rfind("\n", 0, first.start) - 1
        dash = " " * max(col - 2, 0)
        at = _line_end(text, existing.value[-1].end)
        block = "".join(f"{dash}- {e}{nl}" for e in entries)
        return text[:at] + block + text[at:]
    if root.style:  # a JSON ResourceList
        close = text.rindex("}", root.start, root.end)
        return text[:close] + ', "results": [' + ", ".join(entries) + "]" + text[close:]
    if existing is not None:  # "results:" with no value: fill it
        at = _line_end(text, existing.start)
        return text[:at] + "".join(f"- {e}{nl}" for e in entries) + text[at:]
    at = _line_end(text, root.end)
    prefix = "" if at == 0 or text[at - 1] == "\n" else nl
    return text[:at] + prefix + "results:" + nl + "".join(f"- {e}{nl}" for e in entries) + text[at:]


def _line_end(text: str, offset: int) -> int:
    """The start of the line after ``offset`` (or the end of the text)."""
    if offset > 0 and text[offset - 1] == "\n":
        return offset
    nl = text.find("\n", offset)
    return len(text) if nl < 0 else nl + 1


def run(rl: ResourceList, options: dict[str, Any]) -> int:
    """KRM function mode: options from functionConfig (between the config file and the
    command line), findings and errors as ``results`` in the ResourceList written back."""
    from cmhash.app import pipeline as app
    from cmhash.integrations import unshown
    from cmhash.settings.layering import layered

    src = rl.source
    try:
        settings = layered(options, function_options(rl))
        result = app.run([src], settings)
        report_notes(result.notes, quiet=settings.quiet)
    except CmhashError as exc:
        err(f"cmhash: {exc}")
        write_stdout(
            with_results(src.text, [{"message": str(exc), "severity": "error"}]), bom=src.had_bom
        )
        return exc.exit_code
    result = unshown.escalated(result, unshown.KRM_FUNCTION)  # kustomize reads no results
    shown = report(rl, result.findings, quiet=settings.quiet)
    text = src.text if result.has_errors else result.files[0].text  # errors: items unchanged
    write_stdout(with_results(text, results(rl, shown)), bom=src.had_bom)
    return EXIT_INPUT if result.has_errors else EXIT_OK

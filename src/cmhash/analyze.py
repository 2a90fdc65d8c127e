"""The map stage: one document chunk -> summaries of its ConfigMaps, Secrets and workloads.

Everything here depends on one document only, so it runs per chunk (and, for big
inputs, in worker processes) and the parsed tree is dropped as soon as the
summary exists. A workload gets a *candidate* edit whose value is a fixed
64-hex placeholder; the edited document is re-parsed and checked right here.
The reduce stage (resolve.py) later swaps in the real value, which cannot
change the structure: both are 64 hex digits inside double quotes.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import NamedTuple

from cmhash.edit import Edit, annotation_edit, apply_edits, own
from cmhash.errors import NodeError
from cmhash.hashing import Content
from cmhash.kinds import KindTable, Policy, WorkloadKind, is_list
from cmhash.refs import Reference, SubPathMount, find_references, find_subpath_mounts
from cmhash.resources import (
    Resource,
    bool_field,
    config_content,
    is_immutable,
    require_name,
    resources_of,
)
from cmhash.settings import Settings
from cmhash.source import SourceText
from cmhash.split import Chunk, split_chunks
from cmhash.verify import verify_edits
from cmhash.yamltree import (
    ALIAS,
    MAP,
    Node,
    Roots,
    backend,
    get,
    get_path,
    items,
    parse_chunk,
    scalar,
)

PLACEHOLDER = "0" * 64


class SkipReason(enum.Enum):
    """Why a workload is not annotated; the value is what users read."""

    OPTED_OUT = "opted out (cmhash.io/skip)"
    NO_TEMPLATE = "it has no pod template (a patch or a partial manifest?)"
    WORKLOAD_REF = "an Argo Rollout with spec.workloadRef has no template of its own"
    GENERATED = ("metadata.generateName: every create makes a new object, so there is "
                 "nothing to roll (cmhash.io/enabled: \"true\" to annotate it anyway)")
    JOB = "Job pod templates are immutable (--jobs to opt in)"
    POD = "bare Pods are not annotated (--pods to opt in)"

    def __str__(self) -> str:
        return self.value


class ConfigInfo(NamedTuple):
    kind: str
    name: str
    namespace: str | None
    content: Content
    immutable: bool
    skipped: bool
    offset: int
    doc: int
    end: int  # where the object's text ends (Secret lines never show as diff context)


@dataclass(slots=True)
class WorkloadInfo:
    kind: WorkloadKind
    api_version: str
    name: str
    namespace: str | None
    offset: int
    doc: int
    skip: SkipReason | None = None
    generated: bool = False  # named by metadata.generateName only
    refs: tuple[Reference, ...] = ()
    current: str | None = None
    current_style: str | None = None  # the existing value's scalar style (None: plain)
    edit: Edit | None = None               # candidate, value = PLACEHOLDER
    edit_error: NodeError | None = None
    no_restart: str | None = None
    subpaths: tuple[SubPathMount, ...] = ()

    @property
    def label(self) -> str:
        name = f"{self.name}*" if self.generated else self.name
        return f"{self.kind.kind}/{name}" + (f" -n {self.namespace}" if self.namespace else "")


@dataclass(slots=True)
class DocInfo:
    index: int
    chunk: Chunk
    has_content: bool
    # tuples, not lists: a big run keeps one DocInfo per ConfigMap, Secret and workload
    configs: tuple[ConfigInfo, ...] = ()
    workloads: tuple[WorkloadInfo, ...] = ()
    verify_error: tuple[str, int] | None = None


# ------------------------------------------------------------------ classification

_VALUE_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789./-")


def _top_level(text: str, key: str) -> list[str] | None:
    """Values of column-0 ``key:`` lines; None if one is not a simple (optionally quoted)
    value with at most a trailing comment."""
    head = key + ":"
    needle = "\n" + head
    found = []
    pos = 0 if text.startswith(head) else text.find(needle)
    while pos >= 0:
        start = pos + (len(head) if pos == 0 and text.startswith(head) else len(needle))
        eol = text.find("\n", start)
        line = text[start:len(text) if eol < 0 else eol]
        value = line.split("#", 1)[0].strip() if " #" in line or "\t#" in line else line.strip()
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
            value = value[1:-1]
        if not value or not _VALUE_CHARS.issuperset(value):
            return None
        found.append(value)
        pos = text.find(needle, start)
    return found


def relevant_kind(text: str, table: KindTable) -> bool | None:
    """True/False when the top-level kind is certain from the text alone, None when unsure."""
    kinds = _top_level(text, "kind")
    if not kinds or len(kinds) != 1:
        return None
    apis = _top_level(text, "apiVersion")
    if not apis or len(apis) != 1:
        return None
    kind, api = kinds[0], apis[0]
    if is_list(api, kind):
        return True
    if api == "v1" and kind in ("ConfigMap", "Secret"):
        return True
    return table.lookup(api, kind) is not None


def _is_blank(text: str) -> bool:
    for line in text.splitlines():
        s = line.strip()
        if s and not s.startswith("#") and s not in ("---", "...") and not (
                s.startswith(("--- ", "... ")) and s[4:].lstrip().startswith("#")):
            return False
    return True


# ------------------------------------------------------------------ per resource

def _template(res: Resource, wk: WorkloadKind) -> tuple[Node | None, Node | None]:
    """The pod template and the key node it hangs under; refuses aliases and merges."""
    node = res.node
    key: Node | None = None
    for step in wk.template_path:
        if get(node, step) is None:
            return None, None
        pair = own(node, step)
        if pair is None:
            raise NodeError(f"cannot annotate {res.label}: '{step}' comes from a '<<' merge; "
                            "write it out in full", node.start)
        key, raw = pair
        if raw.kind == ALIAS:
            raise NodeError(f"cannot annotate {res.label}: '{step}' is an alias "
                            f"(*{raw.anchor}); expand it", raw.start,
                            public=f"cannot annotate {res.label}: '{step}' is an alias; "
                                   "expand it")
        node = raw
    return (node, key) if node.kind == MAP else (None, None)


def _no_restart(res: Resource, wk: WorkloadKind) -> str | None:
    spec = get(res.node, "spec")
    if not wk.rolls and wk.policy is Policy.ANNOTATE:
        return f"a {res.kind} does not replace existing pods when its template changes"
    if scalar(get_path(spec, ("updateStrategy", "type"))) == "OnDelete":
        return "updateStrategy OnDelete: pods pick up the change only when deleted"
    if bool_field(spec, "paused", "spec."):
        return f"the {res.kind} is paused: nothing rolls until it is resumed"
    if wk.trigger_gated:
        triggers = get(spec, "triggers")
        if triggers is not None and not triggers.is_null and not any(
                scalar(get(t, "type")) == "ConfigChange" for t in items(triggers)):
            return (f"the {res.kind}'s spec.triggers have no ConfigChange trigger: a template "
                    "change starts no new deployment")
    return None


def _references(template: Node | None, wk: WorkloadKind,
                settings: Settings) -> tuple[str, tuple[Reference, ...]]:
    """The pod spec's field path and its ConfigMap/Secret references."""
    field = ".".join(wk.template_path + ("spec",))
    return field, tuple(find_references(get(template, "spec"), field,
                                        image_pull_secrets=settings.image_pull_secrets))


def _refs_of_opted_out(res: Resource, wk: WorkloadKind,
                       settings: Settings) -> tuple[Reference, ...]:
    """What an opted-out workload references, for report and explain only. Never an
    error: opting out is also how users get past a template cmhash cannot edit."""
    template = get_path(res.node, wk.template_path) if wk.template_path else res.node
    try:
        return _references(template, wk, settings)[1]
    except NodeError:
        return ()


def analyze_workload(res: Resource, wk: WorkloadKind, settings: Settings,
                     default_nl: str) -> WorkloadInfo:
    generated = res.generate_name is not None
    name = res.generate_name if res.generate_name is not None else require_name(res)
    info = WorkloadInfo(wk, res.api_version, name, res.namespace, res.node.start, res.doc,
                        generated=generated)
    if res.skipped or (generated and not res.opted_in):
        info.skip = SkipReason.OPTED_OUT if res.skipped else SkipReason.GENERATED
        info.refs = _refs_of_opted_out(res, wk, settings)
        # what stays in the output (report: a checksum that disappears rolls the pods)
        template = get_path(res.node, wk.template_path) if wk.template_path else res.node
        info.current = scalar(get(get_path(template, ("metadata", "annotations")),
                                  settings.annotation_key))
        info.no_restart = _no_restart(res, wk)
        return info
    if wk.template_path:
        template, template_key = _template(res, wk)
    else:
        template, template_key = res.node, None
    if template is None:
        workload_ref = (wk.group, wk.kind) == ("argoproj.io", "Rollout") and get(
            get(res.node, "spec"), "workloadRef") is not None
        info.skip = SkipReason.WORKLOAD_REF if workload_ref else SkipReason.NO_TEMPLATE
        return info
    spec_field, info.refs = _references(template, wk, settings)
    cur = get(get_path(template, ("metadata", "annotations")), settings.annotation_key)
    info.current = scalar(cur)
    info.current_style = cur.style if cur is not None else None
    info.no_restart = _no_restart(res, wk)
    if not info.refs:
        return info
    info.subpaths = tuple(find_subpath_mounts(get(template, "spec"), spec_field))
    try:
        info.edit = annotation_edit(res.source.text, template, template_key,
                                    settings.annotation_key, PLACEHOLDER, default_nl)
    except NodeError as exc:
        info.edit_error = exc
    return info


def _config(res: Resource) -> ConfigInfo | None:
    if res.name is None and res.generate_name is not None:
        return None  # a name only the API server picks: nothing can reference it
    content = config_content(res)
    return ConfigInfo(res.kind, content.name, res.namespace, content, is_immutable(res),
                      res.skipped, res.node.start, res.doc, res.node.end)


def default_newline(text: str) -> str:
    nl = text.find("\n")
    return "\r\n" if nl > 0 and text[nl - 1] == "\r" else "\n"


# Characters the two parsers read differently (libyaml and Kubernetes' go-yaml take NEL,
# LS and PS as line breaks, ruamel does not; libyaml refuses a BOM that starts a later
# document): refused in the documents cmhash reads, so both parsers always agree.
_AMBIGUOUS = re.compile("[\ufeff\x85\u2028\u2029]")
_AMBIGUOUS_NAMES = {"\ufeff": ("U+FEFF (a byte order mark)", "\\uFEFF"),
                    "\x85": ("U+0085 (NEL)", "\\N"), "\u2028": ("U+2028 (LS)", "\\L"),
                    "\u2029": ("U+2029 (PS)", "\\P")}


def _refuse_ambiguous(text: str, base: int) -> None:
    m = _AMBIGUOUS.search(text)
    if m is not None:
        name, escape = _AMBIGUOUS_NAMES[m.group()]
        raise NodeError(f"character {name} in a manifest: YAML parsers disagree on what it "
                        f"means; remove it, or write it as {escape} in a double-quoted string",
                        base + m.start())


def _inside_aliased(edit: Edit, roots: Roots) -> NodeError | None:
    """An edit inside a node that an alias repeats elsewhere would change that copy too
    (and what it means after kubectl expands the alias): refuse it, at the alias."""
    for target, alias in roots.aliased:
        if target.start < edit.start < target.end:
            return NodeError(
                f"cannot add the annotation: it would land inside the anchored node "
                f"&{target.anchor}, which the alias here repeats; write the aliased part "
                "out in full", alias.start,
                public="cannot add the annotation: it would land inside an anchored node "
                       "that the alias here repeats; write the aliased part out in full")
    return None


def classify(text: str, table: KindTable) -> bool | None:
    """Whether a chunk must be parsed: False for a document that is certainly irrelevant
    (passed through unread by both parsers), None for one with no content at all."""
    rel = relevant_kind(text, table)
    if rel is False:
        return False
    if rel is None and _is_blank(text):
        return None
    return True


def analyze_chunk(src: SourceText, index: int, chunk: Chunk, table: KindTable,
                  settings: Settings, parser: str, default_nl: str) -> DocInfo:
    text = src.text[chunk.start:chunk.end]
    wanted = classify(text, table)
    if wanted is not True:
        return DocInfo(index, chunk, wanted is False)
    _refuse_ambiguous(text, chunk.start)
    be = backend(parser)
    roots = parse_chunk(text, chunk.start, be)
    info = DocInfo(index, chunk, any(not r.is_null for r in roots))
    configs: list[ConfigInfo] = []
    workloads: list[WorkloadInfo] = []
    candidates: list[tuple[int, WorkloadInfo]] = []
    resources = [r for root in roots for r in resources_of(src, index, root)]
    for pos, res in enumerate(resources):
        if res.group == "" and res.kind in ("ConfigMap", "Secret"):
            config = _config(res)
            if config is not None:
                configs.append(config)
            continue
        wk = table.lookup(res.api_version, res.kind)
        if wk is None:
            continue
        winfo = analyze_workload(res, wk, settings, default_nl)
        if winfo.edit is not None and roots.aliased:
            problem = _inside_aliased(winfo.edit, roots)
            if problem is not None:
                winfo.edit, winfo.edit_error = None, problem
        if winfo.edit_error is not None and may_hold_secret(text):
            winfo.edit_error = NodeError(winfo.edit_error.public, winfo.edit_error.offset)
        workloads.append(winfo)
        if winfo.edit is not None:
            candidates.append((pos, winfo))
    info.configs, info.workloads = tuple(configs), tuple(workloads)
    if candidates:
        edits = [w.edit for _, w in candidates if w.edit is not None]
        new_text = apply_edits(text, edits, base=chunk.start)
        try:
            verify_edits(src, index, chunk.start, roots, new_text,
                         [(pos, w.kind, PLACEHOLDER) for pos, w in candidates],
                         settings.annotation_key, be)
        except NodeError as exc:
            info.verify_error = (exc.public if may_hold_secret(text) else exc.message,
                                 exc.offset)
    return info


_SECRET = re.compile(r"""\bkind["']?\s*:\s*["']?Secret\b""")


def may_hold_secret(text: str) -> bool:
    """Whether a document's text could hold a Secret (conservatively: it names the kind)."""
    return _SECRET.search(text) is not None


def analyze_source(src: SourceText, table: KindTable, settings: Settings,
                   chunks: list[tuple[int, Chunk]] | None = None, *,
                   progress: Callable[[int, int], None] | None = None) -> list[DocInfo]:
    """Analyze chunks of one source (all of them by default). NodeError -> InputError.
    ``progress(bytes, documents)`` is told of each chunk done."""
    if chunks is None:
        chunks = list(enumerate(split_chunks(src.text)))
    nl = default_newline(src.text)
    out = []
    for index, chunk in chunks:
        try:
            out.append(analyze_chunk(src, index, chunk, table, settings, settings.parser, nl))
        except NodeError as exc:
            secret = may_hold_secret(src.text[chunk.start:chunk.end])
            raise src.error(exc.public if secret else exc.message, exc.offset) from None
        if progress is not None:
            progress(chunk.end - chunk.start, 1)
    return out

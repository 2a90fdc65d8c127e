"""The map stage's summary of one workload (WorkloadInfo): its pod spec's references and
those its annotations declare, its selection, its hook phase, what keeps it from
rolling, and its candidate edit (edit/splice.py: value ``PLACEHOLDER``; chunk.py
verifies it with the document's others). An opted-out or generateName workload keeps
what it references, for report and explain.

Reference fields of an operator's resource written in a shape the profile cannot read
(``spec.additionalScrapeConfigs: scrape.yaml`` where the operator wants ``{name, key}``,
``spec.secrets: tls`` where it wants a list of names): a ``reference-shape`` finding at
the field, naming the shape expected, instead of silence (an error with --strict). A
built-in profile's CRD schema says the same (tests/test_operators.py), so the API server
would refuse the object; cmhash says so at render time, where the line is known. Never an
exception, whatever the shape. A null field is no reference at all (the operator's
default applies), never a finding."""

from __future__ import annotations

from cmhash.analyze.annotations import Annotations, labels_of, read_annotations
from cmhash.analyze.declared import Skipped, declared_references, selection
from cmhash.analyze.options import AnalyzeOptions
from cmhash.analyze.refs import (
    Reference,
    find_references,
    find_subpath_mounts,
    resource_references,
)
from cmhash.analyze.summaries import SkipReason, WorkloadInfo
from cmhash.edit.splice import PLACEHOLDER, Edit, annotation_edit
from cmhash.errors import NodeError
from cmhash.findings import Code
from cmhash.knowledge.compat import PLACED_PARTS
from cmhash.knowledge.helm import HOOK_ANNOTATIONS, PRE_HOOKS
from cmhash.knowledge.kinds import Policy, WorkloadKind
from cmhash.knowledge.operators import INJECTED
from cmhash.knowledge.podspec import Site
from cmhash.parse.resources import (
    SKIP_ANNOTATION,
    Resource,
    bool_field,
    flag_on,
    pod_template,
    require_name,
)
from cmhash.parse.tree import MAP, SCALAR, SEQ, Node, deref, get, get_path, items, scalar


def hook_phase(annotations: Node | None) -> str | None:
    """ "pre" for a hook that runs before the other objects exist, "post" for any other
    hook, None for an ordinary object (``annotations``: its metadata.annotations)."""
    if annotations is None:
        return None  # (most objects)
    written = [scalar(get(annotations, key)) or "" for key in HOOK_ANNOTATIONS]
    phases = [p.strip() for value in written for p in value.split(",") if p.strip()]
    if not phases:
        return None
    return "pre" if any(p in PRE_HOOKS for p in phases) else "post"


# a Knative Service names its revision in spec.template.metadata.name: a template change
# without a new name is refused (knowledge/rollout_tools.py knative-revision-name-kept;
# knowledge/rollout_rule.py KNATIVE, not imported on a plain run's path)
KNATIVE_SERVICE = ("serving.knative.dev", "Service")


def _no_restart(res: Resource, wk: WorkloadKind) -> str | None:
    spec = get(res.node, "spec")
    if not wk.rolls and wk.policy is Policy.ANNOTATE:
        return f"a {res.kind} does not replace existing pods when its template changes"
    if scalar(get_path(spec, ("updateStrategy", "type"))) == "OnDelete":
        return "updateStrategy OnDelete: pods pick up the change only when deleted"
    if bool_field(spec, "paused", "spec."):
        return f"the {res.kind} is paused: nothing rolls until it is resumed"
    if (wk.group, wk.kind) == KNATIVE_SERVICE:
        name = scalar(get_path(spec, ("template", "metadata", "name")))
        if name:
            return (
                f"spec.template.metadata.name {name} names the revision: Knative refuses a "
                "template change (the checksum's too) unless the name changes with it; "
                "drop the name (Knative generates one) or change it with every change"
            )
    if wk.trigger_gated:
        triggers = get(spec, "triggers")
        if (
            triggers is not None
            and not triggers.is_null
            and not any(scalar(get(t, "type")) == "ConfigChange" for t in items(triggers))
        ):
            return (
                f"the {res.kind}'s spec.triggers have no ConfigChange trigger: a template "
                "change starts no new deployment"
            )
    return None


def _pod_spec(res: Resource, template: Node | None, wk: WorkloadKind) -> Node | None:
    """The pod spec (an operator's resource: its pod-spec-like block)."""
    if wk.spec_path is None:
        return get(template, "spec")
    return get_path(res.node, wk.spec_path)


def _references(
    res: Resource, template: Node | None, wk: WorkloadKind, options: AnalyzeOptions
) -> tuple[str, tuple[Reference, ...]]:
    """The pod spec's field path and its ConfigMap/Secret references (an operator's
    resource: and those of its other fields, operators.py)."""
    field = ".".join(wk.pod_spec_path)
    # versioning renames what imagePullSecrets name too, even when they are not hashed
    pull = options.image_pull_secrets or options.versioned
    refs = find_references(_pod_spec(res, template, wk), field, image_pull_secrets=pull)
    if wk.sites or wk.defaults:
        refs += resource_references(res.node, wk.sites, wk.defaults, res.name or "")
    return field, tuple(refs)


def _current(template: Node | None, wk: WorkloadKind, options: AnalyzeOptions) -> Node | None:
    return get(get_path(template, wk.level), options.annotation_key)


def _skipped(
    res: Resource,
    wk: WorkloadKind,
    options: AnalyzeOptions,
    info: WorkloadInfo,
    annotations: list[Annotations],
) -> None:
    """An opted-out or generateName workload: what it references and what it carries,
    for report and explain only. Never an error: opting out is also how users get past a
    template cmhash cannot edit."""
    template, _ = pod_template(res, wk)
    try:
        declared, _ = declared_references(annotations, options.compat)
        info.refs = _references(res, template, wk, options)[1] + tuple(declared)
    except NodeError:
        info.refs = ()
    # what stays in the output (report: a checksum that disappears rolls the pods)
    info.current = scalar(_current(template, wk, options))
    info.no_restart = _no_restart(res, wk)


def _annotations(res: Resource, wk: WorkloadKind, written: Node | None) -> list[Annotations]:
    """The workload's annotations (``written``: its metadata.annotations node) and its pod
    template's (one mapping for a bare Pod)."""
    out = [read_annotations(written, "metadata.annotations")]
    if wk.template_path:
        template, _ = pod_template(res, wk)
        out.append(read_annotations(get_path(template, wk.level), wk.annotation_field))
    return [a for a in out if a is not None]


def _template_ref(res: Resource, wk: WorkloadKind) -> str | None:
    """The workload whose template this one uses (``kind 'name'``), when it names one."""
    if not wk.template_ref:
        return None
    ref = get_path(res.node, wk.template_ref)
    if ref is None or ref.is_null:
        return None
    kind = scalar(get(ref, "kind")) or "workload"
    name = scalar(get(ref, "name"))
    return f"{kind} {name!r}" if name else kind


_WHAT = {SCALAR: "a string", SEQ: "a list", MAP: "a mapping"}


def _reference(site: Site) -> str:
    """The shape of the node at a site's path."""
    if not site.name_field:
        return "a name (a string)"
    fields = [site.name_field, *(f for f in (site.key_field, site.items_field) if f)]
    return "a mapping {" + ", ".join(fields) + "}"


def _expected(site: Site, rest: tuple[str, ...]) -> str:
    """What the node ``rest`` steps above the site's node must be."""
    if not rest:
        return _reference(site)
    if rest[0] != "*":
        return "a mapping"
    if len(rest) == 1:
        return "a list of names" if not site.name_field else f"a list of {_reference(site)}"
    return "a list"


def _fits(node: Node, site: Site, rest: tuple[str, ...]) -> bool:
    if not rest:
        return node.kind == SCALAR if not site.name_field else node.kind == MAP
    return node.kind == (SEQ if rest[0] == "*" else MAP)


def misshapen(root: Node, sites: tuple[Site, ...], operator: str | None) -> list[Skipped]:
    """One finding per node on a site's path that is not the shape the path needs (the
    walk stops there: what is below it cannot be read)."""
    who = operator or "the profile"
    out: list[Skipped] = []
    for site in sites:
        todo: list[tuple[Node | None, tuple[str, ...], str]] = [(root, site.path, "")]
        while todo:
            node, rest, field = todo.pop()
            node = deref(node)
            if node is None or node.is_null:
                continue
            if field and not _fits(node, site, rest):
                out.append(
                    Skipped(
                        node.start,
                        f"{field} is {_WHAT.get(node.kind, 'a value')} where {who} expects "
                        f"{_expected(site, rest)}: cmhash cannot read a reference there",
                        Code.REFERENCE_SHAPE.value,
                    )
                )
                continue
            if not rest:
                continue
            step, tail = rest[0], rest[1:]
            if step == "*":
                listed = [(x, tail, f"{field}[{i}]") for i, x in enumerate(items(node))]
                todo.extend(reversed(listed))
            else:
                todo.append((get(node, step), tail, f"{field}.{step}" if field else step))
    # (one finding per node: sites that share a prefix, env's ConfigMap and Secret
    # selectors, meet the same misshapen node)
    return sorted({s.offset: s for s in reversed(out)}.values(), key=lambda s: s.offset)


def analyze_workload(
    res: Resource, wk: WorkloadKind, options: AnalyzeOptions, default_nl: str
) -> WorkloadInfo:
    generated = res.generate_name is not None
    name = res.generate_name if res.generate_name is not None else require_name(res)
    meta = get(res.node, "metadata")
    written = get(meta, "annotations")  # (read once here: hooks, opt-outs, selection)
    annotations = _annotations(res, wk, written)
    info = WorkloadInfo(
        wk,
        res.api_version,
        name,
        res.namespace,
        res.node.start,
        res.doc,
        generated=generated,
        hook=hook_phase(written),
        labels=labels_of(get(meta, "labels")),
        selection=selection(annotations, options.compat, options.opt_in),
    )
    skipped = flag_on(written, SKIP_ANNOTATION)  # (res.skipped, from what was read above)
    opted_out = SKIP_ANNOTATION if skipped else info.selection.opted_out
    if opted_out or (generated and not res.opted_in):
        info.skip = SkipReason.OPTED_OUT if opted_out else SkipReason.GENERATED
        info.skip_detail = opted_out
        _skipped(res, wk, options, info, annotations)
        return info
    referenced = _template_ref(res, wk)
    if referenced is not None:
        info.skip, info.skip_detail = SkipReason.WORKLOAD_REF, referenced
        return info
    injected = INJECTED.get((wk.group, wk.kind))
    if injected is not None and scalar(get_path(res.node, injected[0])) == injected[1]:
        info.skip = SkipReason.INJECTED  # (its references would roll nothing)
        return info
    template, template_key = pod_template(res, wk, owned=True)
    if template is None:
        info.skip = SkipReason.NO_TEMPLATE
        return info
    spec_field, info.refs = _references(res, template, wk, options)
    declared, dropped = declared_references(annotations, options.compat)
    info.refs += tuple(declared)
    if wk.sites:  # (an operator's resource)
        dropped = misshapen(res.node, wk.sites, wk.operator) + dropped
    if any(p in key for a in annotations for key in a.values for p in PLACED_PARTS):
        from cmhash.analyze.placement import misplaced  # (a tool's annotations: rare)

        wrong = misplaced(annotations, options.compat, res.kind)
        dropped = [*dropped, wrong] if wrong is not None else dropped
    info.skipped_items = tuple(dropped)
    cur = _current(template, wk, options)
    info.current = scalar(cur)
    info.current_style = cur.style if cur is not None else None
    info.no_restart = _no_restart(res, wk)
    if not info.refs and not info.selection.restart and not options.edit_always:
        return info  # (a restart asked for gives it a checksum of its own)
    info.subpaths = tuple(find_subpath_mounts(_pod_spec(res, template, wk), spec_field))
    try:
        info.edit = annotation_edit(
            res.source.text,
            template,
            template_key,
            options.annotation_key,
            PLACEHOLDER,
            default_nl,
            wk.level,
        )
        if info.edit is None and cur is not None and cur.value == PLACEHOLDER:
            # the value written is the placeholder itself (64 zeros): the candidate
            # edit rewrites it as it is, so that the real value can replace it
            info.edit = Edit(cur.start, cur.end, f'"{PLACEHOLDER}"')
        if options.jobs_rename and wk.policy is Policy.JOB and not generated and not info.hook:
            from cmhash.analyze.jobs import plan_rename

            info.job = plan_rename(res, options.annotation_key, default_nl, res.source.text)
    except NodeError as exc:
        info.edit_error = exc.with_traceback(None)  # kept: never the parse tree via frames
    return info

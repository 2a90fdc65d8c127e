"""Which ConfigMaps and Secrets ``--versioned`` renames, and to what (the edits are
edits.py's), by the rules docs/concepts/versioned.md gives users: every object an
in-stream workload references, or one ``cmhash.io/versioned`` opts in; a Secret a source
produces through its source (plan/source_versions.py); never one opted out, ignored or
under ``--exclude-secrets``, nor one a workload cmhash must leave alone references (an
info finding; refused when opted in). Refused (exit 2, at the position): a reference
that cannot be rewritten in place, a name that would pass 253 characters or collide, an
opted-in object nothing references under ``--strict``.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import NamedTuple

from cmhash.analyze.summaries import SkipReason
from cmhash.analyze.versioned_names import (
    MAX_NAME,
    VERSIONABLE,
    base_name,
    own_names,
    shown,
    suffix,
)
from cmhash.edit.splice import Edit
from cmhash.findings import Code, Finding, finding
from cmhash.model import ResourceId
from cmhash.plan import kustomized, source_versions
from cmhash.plan.byname import ByName
from cmhash.plan.index import ConfigEntry, ConfigIndex
from cmhash.plan.options import PlanOptions
from cmhash.plan.workplan import Resolved, WorkloadPlan
from cmhash.read.source import SourceText


class Renamed(NamedTuple):
    entry: ConfigEntry
    old: str
    new: str


class User(NamedTuple):
    plan: WorkloadPlan
    resolved: Resolved


@dataclass
class Versioning:
    """What the reduce stage decided: new names by object, and the edits per document."""

    renamed: dict[ResourceId, Renamed] = field(default_factory=dict)
    own: set[ResourceId] = field(default_factory=set)  # names that only look versioned
    # (id(source), document index) -> edits, and the renamed scalars (offset -> new value)
    edits: dict[tuple[int, int], list[Edit]] = field(default_factory=dict)
    renames: dict[tuple[int, int], dict[int, str]] = field(default_factory=dict)
    spans: dict[int, list[tuple[int, int]]] = field(default_factory=dict)  # id(source) ->
    # (id(source), document index) -> (a source's offset, the path of the name it now
    # writes where it wrote none, the name: ExternalSecret spec.target.name)
    inserted: dict[tuple[int, int], list[tuple[int, tuple[str, ...], str]]] = field(
        default_factory=dict
    )

    @property
    def names(self) -> dict[ResourceId, str]:
        return {k: r.new for k, r in self.renamed.items()}

    def add(self, src: SourceText, doc: int, edit: Edit, rename: str | None = None) -> None:
        key = (id(src), doc)
        self.edits.setdefault(key, []).append(edit)
        if rename is not None:
            self.renames.setdefault(key, {})[edit.start] = rename
            self.spans.setdefault(id(src), []).append((edit.start, edit.end))


# why a workload's references may not be rewritten (None: they may)
def _frozen(plan: WorkloadPlan) -> str | None:
    if plan.info.hook == "pre":
        return (
            "it is a hook that runs before the release's other objects are applied, "
            "so the new version would not exist yet"
        )
    skip = plan.skip
    if skip is None or skip is SkipReason.GENERATED or plan.info.hook:  # created anew
        return None
    if skip is SkipReason.JOB:
        return "its pod template is immutable (--jobs to allow)"
    if skip is SkipReason.POD:
        return "a Pod's spec is immutable (--pods to allow)"
    return f"cmhash leaves it alone ({plan.skip_text})"


def _users(plans: Iterable[WorkloadPlan]) -> dict[ResourceId, list[User]]:
    out: dict[ResourceId, list[User]] = {}
    for plan in plans:
        for r in plan.resolved:
            if r.entry is not None:
                out.setdefault(r.entry.id, []).append(User(plan, r))
    return out


def _wanted(e: ConfigEntry, options: PlanOptions, used: bool) -> bool:
    info = e.info
    if info.source is not None and not source_versions.renamable(e):
        return False  # a source's Secret: only when its source may be renamed
    if info.kind not in VERSIONABLE or info.versioned is False:
        return False
    if e.excluded is not None:
        return False
    if info.kind == "Secret" and options.exclude_secrets and info.versioned is not True:
        return False
    return bool(info.versioned) or (options.versioned and used)


def decide(
    index: ConfigIndex,
    plans: list[WorkloadPlan],
    options: PlanOptions,
    findings: list[Finding],
    by_name: ByName | None = None,
) -> Versioning:
    """Which objects are renamed to what (their edits come from ``edits``)."""
    users = _users(plans)
    out = Versioning(own=own_names(index.objects))
    taken = {(k.kind, k.namespace, k.name) for k in index.objects}
    assigned: dict[tuple[str, str, str], str] = {}  # new name -> the object's old name
    told: set[tuple[int, int]] = set()  # sources already named unpinned
    for key, e in index.objects.items():
        mine = users.get(key, [])
        here = (id(e.source), e.info.offset)
        if options.versioned and mine and e.info.unpinned and here not in told:
            told.add(here)
            findings.append(_unpinned(e, key))
        # an imagePullSecrets reference is renamed, but only makes an object versioned
        # when it is hashed (--image-pull-secrets): rotating registry credentials
        # should not roll pods
        counting = [u for u in mine if u.resolved.ref.how != "imagePullSecret"] or (
            mine if options.image_pull_secrets else []
        )
        if e.info.keep_original is not None and options.versioned and counting:
            findings.append(_keep_original(e, key))
        why = source_versions.refusal(e)
        if why is not None and e.info.versioned:
            raise e.source.error(
                f"cannot version {e.info.label}: {why}; drop cmhash.io/versioned", e.info.offset
            )
        if why is not None and options.versioned and counting:
            text = f"{e.info.label} is not versioned: {why}; its references keep the name"
            findings.append(source_versions.not_versioned(e, key, text))
        if not _wanted(e, options, bool(counting)):
            continue
        label = f"{e.info.kind} {e.info.name!r}"
        if not mine:
            if options.strict:
                raise e.source.error(
                    f"cannot version {label}: nothing in the input references it, so "
                    "something outside it may (--strict); reference it, or drop "
                    "cmhash.io/versioned",
                    e.info.offset,
                )
            findings.append(
                finding(
                    e.source,
                    e.info.offset,
                    Code.VERSIONED_UNREFERENCED,
                    f"{label} is versioned but nothing in the input references it: anything "
                    "outside the input that does will not find the new name",
                    resource=key,
                    api_version="v1",
                )
            )
        # a source renamed with it (a SecretProviderClass): its users' references move too
        spc = source_versions.referenced_source(index, e)
        if spc is not None and not users.get(spc.id):  # nothing would make the new Secret
            message = (
                f"no workload in the input mounts {spc.info.kind} {spc.info.name!r}, and "
                "its Secrets are made only for pods that mount it: under a new name, "
                "nothing would create this one"
            )
            findings.append(_not_versioned(e, key, label, message))
            continue
        both = [(u, "it") for u in mine]
        if spc is not None:
            what = f"{spc.info.kind} {spc.info.name!r} (renamed with it)"
            both += [(u, what) for u in users.get(spc.id, [])]
        frozen = [(u.plan, why, what) for u, what in both if (why := _frozen(u.plan)) is not None]
        if frozen:
            plan, why, what = frozen[0]
            message = f"{plan.label} references {what} and {why}"
            findings.append(_not_versioned(e, key, label, message))
            continue
        writer = index.writers.get(key)
        if writer is not None:  # renamed, it would still write the old name
            message = f"{writer} in the input also writes it and would go on writing this name"
            findings.append(_not_versioned(e, key, label, message, "; drop cmhash.io/versioned"))
            continue
        reason = by_name.reasons.get(key) if by_name is not None else None
        if reason is not None and by_name is not None and not e.info.versioned:
            text = (
                f"{label} is not versioned: {reason}; "
                'cmhash.io/versioned: "true" on it renames it anyway'
            )
            field = by_name.at.get(key)  # at the field that names it, when one does
            findings.append(
                source_versions.not_versioned(e, key, text)
                if field is None
                else finding(
                    field.source,
                    field.ref.offset,
                    Code.NOT_VERSIONED,
                    text,
                    resource=key,
                    api_version="v1",
                )
            )
            continue
        base = e.info.name if key in out.own else base_name(e.info.name)
        if base != e.info.name and e.info.name[len(base) + 1 :] in kustomized.suffixes(
            e.info.content
        ):  # a kustomize generator's name: versioned already, kept as it is
            out.renamed[key] = Renamed(e, e.info.name, e.info.name)
            continue
        if e.info.producer is not None:  # one suffix for all a source makes
            # (from the source's own base name and its fields, the produced names in them
            # read as base names (analyze/versioned_sources.py), which hold no Secret
            # value: an ExternalSecret's refs, a class's parameters, sealed ciphertext; so
            # never keyed, and a keyed run and an unkeyed one name the Secret alike)
            own_base = base_name(e.info.producer.own_name)
            new = f"{base}-{suffix(e.info.content, own_base, None)}"
        else:
            new = f"{base}-{suffix(e.info.content, base, options.secret_key)}"
        at = source_versions.name_at(e)
        if len(new) > MAX_NAME:
            raise e.source.error(
                f"cannot version {label}: {len(new)} characters with its suffix, over "
                f'Kubernetes\' {MAX_NAME}; shorten it or opt it out (cmhash.io/versioned: "false")',
                at,
            )
        slot = (e.info.kind, e.namespace, new)
        if new != e.info.name and slot in taken:
            raise e.source.error(
                f"cannot version {label}: the input already has a {e.info.kind} named {new!r}", at
            )
        if slot in assigned:
            raise e.source.error(
                f"cannot version {label}: {e.info.kind} {assigned[slot]!r} has the same base "
                f"name and content, so both would be named {new!r}; remove one of them",
                at,
            )
        assigned[slot] = e.info.name
        for kind, was, own, spot in source_versions.moved(index, e, base, new):
            at_own = (kind, e.namespace, own)
            if own != was and (at_own in index.sources or at_own in taken):
                raise e.source.error(
                    f"cannot version {e.info.label}: {kind} {was!r} would be renamed "
                    f"{own!r}, which the input already has; rename or remove one of them",
                    spot,
                )
            if assigned.setdefault(at_own, was) != was:
                raise e.source.error(
                    f"cannot version {e.info.label}: {kind} {was!r} and "
                    f"{assigned[at_own]!r} would both be renamed {own!r}; remove one of them",
                    spot,
                )
        out.renamed[key] = Renamed(e, e.info.name, new)
        if spc is not None and spc.id not in out.renamed:  # renamed with what it makes,
            # and its other Secrets, used or not: the new class must not sync a Secret
            # under the name the old one syncs for old pods
            for o in (spc, *source_versions.siblings(index, e)):
                if o.id not in out.renamed:
                    name = source_versions.with_suffix(o.info.name, base, new)
                    out.renamed[o.id] = Renamed(o, o.info.name, name)
        if by_name is not None and new != e.info.name:
            findings.extend(_kept_references(by_name, key, e, new))
    return out


def _unpinned(e: ConfigEntry, key: ResourceId) -> Finding:
    """A source that reads store values no version pins: what it produces changes
    with no change in the input (analyze/sources.py Pin)."""
    count = len(e.info.unpinned)
    return finding(
        e.source,
        e.info.unpinned[0],
        Code.UNPINNED_SOURCE,
        f"{e.info.label} reads {count} store value{'s' if count > 1 else ''} no version "
        "pins: a change in the store changes it with no change here, so its checksum "
        "does not follow; pin remoteRef.version (or extract.version) where the provider "
        "supports it",
        resource=key,
    )


def _keep_original(e: ConfigEntry, key: ResourceId) -> Finding:
    """kapp's versioned-keep-original asks for both names; cmhash writes one object per
    document, so the object keeps the name others may read (analyze/versioned.py)."""
    return source_versions.not_versioned(
        e,
        key,
        f"{e.info.kind} {e.info.name!r} is not versioned: {e.info.keep_original} asks "
        "for the original-named object beside the versioned one, which cmhash cannot "
        "write offline; it keeps its name and its users roll by checksum. "
        'cmhash.io/versioned: "true" versions it (without the original-named copy)',
    )


def _kept_references(by_name: ByName, key: ResourceId, e: ConfigEntry, new: str) -> list[Finding]:
    """An object opted in although fields outside pod specs name it: each such field
    keeps the old name (cmhash never rewrites them: old pods may need it)."""
    shown_new = shown(e.info.kind, new)
    return [
        finding(
            at.source,
            at.ref.offset,
            Code.UNKNOWN_REFERENCE,
            f"{at.ref.by} names {e.info.kind} {e.info.name!r}, which is versioned as "
            f"{shown_new!r}; cmhash does not rewrite this field: update it, or drop "
            'cmhash.io/versioned: "true"',
        )
        for at in by_name.refs.get(key, [])
    ]


def _not_versioned(
    e: ConfigEntry, key: ResourceId, label: str, message: str, hint: str = ""
) -> Finding:
    """The not-versioned finding of an object that cannot take a new name; an error
    (exit 2 at the object) when it asks for one itself (cmhash.io/versioned)."""
    if e.info.versioned:
        raise e.source.error(f"cannot version {label}: {message}{hint}", e.info.offset)
    return source_versions.not_versioned(e, key, f"{label} is not versioned: {message}")

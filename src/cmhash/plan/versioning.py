"""Versioned names: a ConfigMap or Secret renamed ``<name>-<suffix>`` after its content,
and every in-stream reference to it rewritten, so a rollback (``kubectl rollout undo``,
the old ReplicaSet during a rollout) finds the old config instead of the new one.

Which objects: with ``--versioned`` every ConfigMap/Secret an in-stream workload
references; ``cmhash.io/versioned: "true"`` opts one in, ``"false"`` out. A Secret a
source produces is versioned through its source (plan/source_versions.py), unless the
source forbids a new name (a strict-scope SealedSecret). Never an opted-out or ignored
object, or a Secret under ``--exclude-secrets``.

The suffix: 10 characters of ``2456789bcdfghkmt`` (no vowels: no words) from the
SHA-256 of the object's canonical entry (hashing.py: kind, base name, every key's bytes,
a Secret's type; with ``--secret-key-env`` Secret values are HMACed first). Same data,
same name; a data change, a new name; metadata never matters. A name that already ends
in ``-`` and 10 such characters is taken as versioned: its base is the part before, so a
second run never stacks suffixes.

Refused (exit 2, at the position): a reference that cannot be rewritten in place (an
alias, a kapp explicit ref, a Reloader pattern that would no longer match), a name that
would pass 253 characters or collide; with ``--strict``, an opted-in object that nothing
in the input references (something outside it may). An object a workload cmhash must
leave alone references (an immutable Job template, an opted-out workload) is not
versioned under ``--versioned`` (an info finding says so), and refused when opted in.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import NamedTuple

from cmhash.analyze import patterns
from cmhash.analyze.refs import Spot
from cmhash.analyze.summaries import SkipReason
from cmhash.errors import InputError
from cmhash.findings import Code, Finding, finding
from cmhash.model import ResourceId
from cmhash.plan import kustomized, source_versions
from cmhash.plan.byname import ByName
from cmhash.plan.hashing import Content, Use, entry, sha256_hex
from cmhash.plan.index import ConfigEntry, ConfigIndex
from cmhash.plan.resolve import Resolved, WorkloadPlan
from cmhash.read.source import SourceText
from cmhash.settings import Settings
from cmhash.write.edit import Edit

ALPHABET = "2456789bcdfghkmt"
SUFFIX_LEN = 10
MAX_NAME = 253
_VERSIONED = re.compile(rf"(.+)-([{ALPHABET}]{{{SUFFIX_LEN}}})")
_TRANSLATE = str.maketrans("0123456789abcdef", ALPHABET)
VERSIONABLE = frozenset(("ConfigMap", "Secret"))


def shown(kind: str, name: str) -> str:
    """A name as messages and reports show it: a versioned Secret's suffix is derived
    from its values, so it is left out (``db-…``)."""
    return f"{base_name(name)}-…" if kind == "Secret" and base_name(name) != name else name


def base_name(name: str) -> str:
    """The name without a version suffix (itself when it has none)."""
    m = _VERSIONED.fullmatch(name)
    return m.group(1) if m else name


def own_names(keys: Iterable[ResourceId]) -> set[ResourceId]:
    """Objects whose name only looks versioned: ``app-config-bbbbbbbbbb`` beside an
    ``app-config`` of the same kind and namespace is a name of its own, not a version of
    the other (two objects, each renamed after its own name)."""
    present = {(k.kind, k.namespace, k.name) for k in keys}
    out = set()
    for k in present:
        base = base_name(k[2])
        if base != k[2] and (k[0], k[1], base) in present:
            out.add(ResourceId.config(k[0], k[1], k[2]))
    return out


def suffix(
    entry_: ConfigEntry, base: str, secret_key: bytes | None, content: Content | None = None
) -> str:
    c = content if content is not None else entry_.info.content
    text = json.dumps(
        entry(Use(c.kind, base, c, None), secret_key),
        sort_keys=True,
        separators=(",", ":"),
        ensure_ascii=False,
    )
    return sha256_hex(text.encode("utf-8"))[:SUFFIX_LEN].translate(_TRANSLATE)


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


def _error(src: SourceText, offset: int, message: str) -> InputError:
    return src.error(message, offset)


def _wanted(e: ConfigEntry, settings: Settings, used: bool) -> bool:
    info = e.info
    if info.source is not None and not source_versions.renamable(e):
        return False  # a source's Secret: only when its source may be renamed
    if info.kind not in VERSIONABLE or info.versioned is False:
        return False
    if e.excluded is not None:
        return False
    if info.kind == "Secret" and settings.exclude_secrets and info.versioned is not True:
        return False
    return bool(info.versioned) or (settings.versioned and used)


def decide(
    index: ConfigIndex,
    plans: list[WorkloadPlan],
    settings: Settings,
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
        if settings.versioned and mine and e.info.unpinned and here not in told:
            told.add(here)
            findings.append(_unpinned(e, key))
        # an imagePullSecrets reference is renamed, but only makes an object versioned
        # when it is hashed (--image-pull-secrets): rotating registry credentials
        # should not roll pods
        counting = [u for u in mine if u.resolved.ref.how != "imagePullSecret"] or (
            mine if settings.image_pull_secrets else []
        )
        if e.info.keep_original is not None and settings.versioned and counting:
            findings.append(_keep_original(e, key))
        why = source_versions.refusal(e)
        if why is not None and e.info.versioned:
            raise _error(
                e.source,
                e.info.offset,
                f"cannot version {e.info.label}: {why}; drop cmhash.io/versioned",
            )
        if why is not None and settings.versioned and counting:
            findings.append(source_versions.kept(e, key, why))
        if not _wanted(e, settings, bool(counting)):
            continue
        label = f"{e.info.kind} {e.info.name!r}"
        if not mine:
            if settings.strict:
                raise _error(
                    e.source,
                    e.info.offset,
                    f"cannot version {label}: nothing in the input references it, so "
                    "something outside it may (--strict); reference it, or drop "
                    "cmhash.io/versioned",
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
            if e.info.versioned:
                raise _error(e.source, e.info.offset, f"cannot version {label}: {message}")
            findings.append(
                finding(
                    e.source,
                    e.info.offset,
                    Code.NOT_VERSIONED,
                    f"{label} is not versioned: {message}",
                    resource=key,
                    api_version="v1",
                )
            )
            continue
        both = [(u, "it") for u in mine]
        if spc is not None:
            what = f"{spc.info.kind} {spc.info.name!r} (renamed with it)"
            both += [(u, what) for u in users.get(spc.id, [])]
        frozen = [(u.plan, why, what) for u, what in both if (why := _frozen(u.plan)) is not None]
        if frozen:
            plan, why, what = frozen[0]
            message = f"{plan.label} references {what} and {why}"
            if e.info.versioned:
                raise _error(e.source, e.info.offset, f"cannot version {label}: {message}")
            findings.append(
                finding(
                    e.source,
                    e.info.offset,
                    Code.NOT_VERSIONED,
                    f"{label} is not versioned: {message}",
                    resource=key,
                    api_version="v1",
                )
            )
            continue
        writer = index.writers.get(key)
        if writer is not None:  # renamed, it would still write the old name
            message = f"{writer} in the input also writes it and would go on writing this name"
            if e.info.versioned:
                raise _error(
                    e.source,
                    e.info.offset,
                    f"cannot version {label}: {message}; drop cmhash.io/versioned",
                )
            findings.append(
                finding(
                    e.source,
                    e.info.offset,
                    Code.NOT_VERSIONED,
                    f"{label} is not versioned: {message}",
                    resource=key,
                    api_version="v1",
                )
            )
            continue
        reason = by_name.reasons.get(key) if by_name is not None else None
        if reason is not None and not e.info.versioned:
            findings.append(
                finding(
                    e.source,
                    e.info.offset,
                    Code.NOT_VERSIONED,
                    f"{label} is not versioned: {reason}; "
                    'cmhash.io/versioned: "true" on it renames it anyway',
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
            own_base, content = source_versions.suffix_content(e)
            new = f"{base}-{suffix(e, own_base, settings.secret_key, content)}"
        else:
            new = f"{base}-{suffix(e, base, settings.secret_key)}"
        at = source_versions.name_at(e)
        if len(new) > MAX_NAME:
            raise _error(
                e.source,
                at,
                f"cannot version {label}: {len(new)} characters with its suffix, over "
                f'Kubernetes\' {MAX_NAME}; shorten it or opt it out (cmhash.io/versioned: "false")',
            )
        slot = (e.info.kind, e.namespace, new)
        if new != e.info.name and slot in taken:
            raise _error(
                e.source,
                at,
                f"cannot version {label}: the input already has a {e.info.kind} named {new!r}",
            )
        if slot in assigned:
            raise _error(
                e.source,
                at,
                f"cannot version {label}: {e.info.kind} {assigned[slot]!r} has the same base "
                f"name and content, so both would be named {new!r}; remove one of them",
            )
        assigned[slot] = e.info.name
        for kind, was, own, spot in source_versions.moved(index, e, base, new):
            at_own = (kind, e.namespace, own)
            if own != was and (at_own in index.sources or at_own in taken):
                raise _error(
                    e.source,
                    spot,
                    f"cannot version {e.info.label}: {kind} {was!r} would be renamed "
                    f"{own!r}, which the input already has; rename or remove one of them",
                )
            if assigned.setdefault(at_own, was) != was:
                raise _error(
                    e.source,
                    spot,
                    f"cannot version {e.info.label}: {kind} {was!r} and "
                    f"{assigned[at_own]!r} would both be renamed {own!r}; remove one of them",
                )
        out.renamed[key] = Renamed(e, e.info.name, new)
        if spc is not None and spc.id not in out.renamed:  # renamed with what it makes
            own = source_versions.with_suffix(spc.info.name, base, new)
            out.renamed[spc.id] = Renamed(spc, spc.info.name, own)
            # and its other Secrets, used or not: the new class must not sync a Secret
            # under the name the old one syncs for old pods
            for sib in source_versions.siblings(index, e):
                if sib.id not in out.renamed:
                    name = source_versions.with_suffix(sib.info.name, base, new)
                    out.renamed[sib.id] = Renamed(sib, sib.info.name, name)
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
    return finding(
        e.source,
        e.info.offset,
        Code.NOT_VERSIONED,
        f"{e.info.kind} {e.info.name!r} is not versioned: {e.info.keep_original} asks "
        "for the original-named object beside the versioned one, which cmhash cannot "
        "write offline; it keeps its name and its users roll by checksum. "
        'cmhash.io/versioned: "true" versions it (without the original-named copy)',
        resource=key,
        api_version="v1",
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


def _written(spot: Spot, new: str) -> str:
    quote = spot.style if spot.style in ("'", '"') else ""
    return f"{quote}{new}{quote}"


def _spot_error(src: SourceText, spot: Spot | None, offset: int, what: str) -> InputError:
    why = spot.problem if spot is not None and spot.problem else "its name cannot be located"
    return _error(src, spot.start if spot is not None else offset, f"cannot rename {what}: {why}")


def edits(versioning: Versioning, plans: list[WorkloadPlan]) -> None:
    """The rename edits of every renamed object and of every reference to it, and the
    keep/immutable edits of every versioned object."""
    for r in versioning.renamed.values():
        e, info = r.entry, r.entry.info
        if info.version_error is not None:
            raise _error(e.source, info.version_error[1], info.version_error[0])
        for edit in info.version_edits:
            versioning.add(e.source, info.doc, edit)
        if r.new == r.old:
            continue
        if info.producer is not None:  # a source's Secret: its source's fields
            for edit, value, inserted in source_versions.edits_of(e, r.old, r.new):
                versioning.add(e.source, info.doc, edit, value)
                if inserted:
                    versioning.inserted.setdefault((id(e.source), info.doc), []).append(
                        (info.offset, inserted, r.new)
                    )
            continue
        spot = info.name_spot
        if spot is None or spot.problem is not None:
            raise _spot_error(e.source, spot, info.offset, f"{info.kind} {info.name!r}")
        versioning.add(e.source, info.doc, Edit(spot.start, spot.end, _written(spot, r.new)), r.new)
    by_spot: dict[tuple[int, int], tuple[WorkloadPlan, Spot, list[tuple[Resolved, Renamed]]]] = {}
    for plan in plans:
        for res in plan.resolved:
            if res.entry is None or res.entry.id not in versioning.renamed:
                continue
            renamed = versioning.renamed[res.entry.id]
            if renamed.new == renamed.old:
                continue
            spot = res.ref.spot
            if spot is None or spot.problem is not None:
                raise _spot_error(
                    plan.source, spot, res.ref.offset, f"the reference to {renamed.old!r}"
                )
            key = (id(plan.source), spot.start)
            by_spot.setdefault(key, (plan, spot, []))[2].append((res, renamed))
    for plan, spot, hits in by_spot.values():
        _reference_edit(versioning, plan, spot, hits)


def _reference_edit(
    versioning: Versioning,
    plan: WorkloadPlan,
    spot: Spot,
    hits: list[tuple[Resolved, Renamed]],
) -> None:
    src = plan.source
    first = hits[0][0].ref
    if first.how != "declared":
        new = hits[0][1].new
        versioning.add(src, plan.info.doc, Edit(spot.start, spot.end, _written(spot, new)), new)
        return
    raw = src.text[spot.start : spot.end]
    quote = spot.style if spot.style in ("'", '"') else ""
    inner = raw[1:-1] if quote else raw
    escaped = {'"': "\\", "'": "''"}.get(quote)  # what would need unescaping
    if "\n" in inner or (escaped is not None and escaped in inner):
        raise _error(
            src,
            spot.start,
            f"cannot rewrite {first.declared_by} for versioned names: write it as a "
            "one-line string without escapes",
        )
    items = inner.split(",")
    regex = first.pattern or bool(first.declared_by and first.declared_by.endswith("/reload"))
    for _, renamed in hits:
        items = [_rename_item(src, spot, plan, renamed, item, regex) for item in items]
    if quote == '"' and any("\\" in item for item in items):
        raise _error(
            src,
            spot.start,
            f"cannot rewrite {first.declared_by} for versioned names: a double-quoted "
            "regular expression would need its backslashes doubled; write it unquoted or "
            "single-quoted",
        )
    text = quote + ",".join(items) + quote
    if text != raw:
        value = ",".join(items)
        versioning.add(src, plan.info.doc, Edit(spot.start, spot.end, text), value)


_LITERAL = re.compile(r"[a-z0-9-]+(?:\\\.[a-z0-9-]+)*")  # a name, dots escaped


def _rename_item(
    src: SourceText, spot: Spot, plan: WorkloadPlan, renamed: Renamed, item: str, regex: bool
) -> str:
    """One comma-separated item of a declaring annotation, with the object renamed when
    the item names it (in its namespace)."""
    core = item.strip()
    lead = item[: len(item) - len(item.lstrip())]
    trail = item[len(item.rstrip()) :]
    if renamed.entry.namespace != plan.namespace and not regex:
        ns, _, name = core.rpartition("/")
        hit = ns == renamed.entry.namespace and name == renamed.old
        return lead + f"{ns}/{renamed.new}" + trail if hit else item
    if not regex:
        ns, _, name = core.rpartition("/")
        if name != renamed.old or ns not in ("", plan.namespace):
            return item
        return lead + (f"{ns}/" if ns else "") + renamed.new + trail
    if renamed.entry.namespace != plan.namespace:
        return item  # Reloader matches in the workload's namespace only
    try:  # as Reloader reads it (analyze/patterns.py)
        if not patterns.matches(core, renamed.old) or patterns.matches(core, renamed.new):
            return item
    except patterns.PatternError:
        return item
    # a literal name (only dots escaped) matches that one object: follow it
    if _LITERAL.fullmatch(core) and core.replace("\\.", ".") == renamed.old:
        return lead + renamed.new.replace(".", "\\.") + trail
    widened = "(" + core + ")(-.*)?"
    raise _error(
        src,
        spot.start,
        f"cannot version {renamed.entry.info.kind} {renamed.old!r}: "
        f"the Reloader pattern {core!r} names it but would not match {renamed.new!r}; "
        f"widen it (for example {widened!r}, or escape the dots of a literal name) or opt "
        "the object out",
    )

"""``cmhash lock``: an export's fingerprints (analyze/export.py, analyze/fingerprint.py),
kept, with ``--for``, to the objects the manifests use, as the lock file's text
(plan/lockfile.py). Nothing here prints or exits."""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import NamedTuple

from cmhash.analyze.export import export_objects
from cmhash.analyze.fingerprint import LockEntry, lock_entries
from cmhash.model import ResourceId
from cmhash.plan.lockfile import lock_text
from cmhash.read.source import SourceText
from cmhash.settings.values import Settings


class LockResult(NamedTuple):
    text: str  # the lock file
    entries: list[LockEntry]
    notes: list[str]  # for the user: what is not locked, and why
    warnings: list[str]


def used_objects(
    manifests: list[SourceText], settings: Settings
) -> dict[ResourceId, ResourceId | None]:
    """The objects whose fingerprint a checksum of ``manifests`` would take: what each
    annotated workload uses that the manifests do not define themselves (a produced
    Secret; an object created outside Git), each with its producer (whose entry it
    takes when it has none of its own: plan/lock.py). Ids as the lock's."""
    from cmhash.app.pipeline import run

    result = run(
        manifests,
        settings._replace(lock=None, lock_file=None, verbose=False),
        keep_plans=True,
        allow_empty=True,
        output=False,
    )
    out: dict[ResourceId, ResourceId | None] = {}
    for plan in result.plans:
        if plan.skip is not None:
            continue
        for r in plan.resolved:
            if r.excluded is not None:
                continue
            if r.entry is not None and r.entry.info.content.source is None:
                continue  # a ConfigMap or Secret of the manifests: Git holds its content
            key = plan.target(r.ref)
            producer = None
            if r.entry is not None and r.entry.info.source is not None:
                kind, _, name = r.entry.info.source.partition("/")
                producer = ResourceId.config(kind, key.namespace, name)
            out[key] = producer
    return out


def needed_resources(manifests: list[SourceText], settings: Settings) -> list[str]:
    """What to export for ``manifests`` (kubectl's resource names, sorted): for each
    object their checksums would take a fingerprint of, the resource it is read from
    (knowledge/lockfields.py EXPORTS)."""
    from cmhash.knowledge.lockfields import EXPORTS

    out = set()
    issued = _issuers(manifests, settings.namespace or "")
    for target, producer in used_objects(manifests, settings).items():
        producer = producer or issued.get(target)
        kind = producer.kind if producer is not None else target.kind
        resource = EXPORTS.get(kind)
        if resource is not None:
            out.add(resource)
    return sorted(out)


def _issuers(manifests: list[SourceText], namespace: str) -> dict[ResourceId, ResourceId]:
    """Secret -> the object of the manifests whose own status fingerprints it (a
    cert-manager Certificate's spec.secretName: knowledge/lockfields.py FIELDS), for the
    Secrets cmhash's sources do not model: exporting that object suffices, and reading
    Secrets (every value in them) is not asked for."""
    import yaml

    from cmhash.knowledge.defaults import path_get
    from cmhash.knowledge.lockfields import EXPORTS, field_rows

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    out: dict[ResourceId, ResourceId] = {}
    for src in manifests:
        try:
            docs = list(yaml.load_all(src.text, Loader=loader))
        except yaml.YAMLError:
            continue  # (the run above said what is wrong with it)
        for doc in docs:
            if not isinstance(doc, dict) or doc.get("kind") not in EXPORTS:
                continue
            group, _, version = str(doc.get("apiVersion", "")).rpartition("/")
            ns = str(path_get(doc, ("metadata", "namespace")) or namespace)
            for row in field_rows(group, str(doc["kind"]), version)[:1]:
                name = path_get(doc, row.name) if row.name and row.target == "Secret" else None
                if isinstance(name, str) and name and row.kind == "Certificate":
                    own = str(path_get(doc, ("metadata", "name")) or "")
                    out[ResourceId.config("Secret", ns, name)] = ResourceId.config(
                        row.kind, ns, own
                    )
    return out


def _attributed(entry: LockEntry, producer: ResourceId | None) -> LockEntry:
    """An entry read from the object itself (ESO's annotation on its Secret) names the
    producer the manifests give it: the rotation happened in that one's store."""
    own = f"{entry.kind} {entry.namespace}/{entry.name}"
    if producer is None or entry.source != own or entry.field == "data":
        return entry
    return entry._replace(
        source=f"{producer.kind} {producer.namespace}/{producer.name}",
        field=f"{entry.field} of {entry.kind} {entry.name}",
    )


def _names(paths: Sequence[str]) -> list[str]:
    """The header's names of the exports and manifests: file names, not where a job
    put them (a runner's temporary directory moves), so an unchanged store keeps the
    lock byte-identical wherever the job runs."""
    return [p if p == "-" else os.path.basename(os.path.normpath(p)) for p in paths]


def make_lock(
    exports: list[SourceText],
    export_names: Sequence[str],
    settings: Settings,
    manifests: list[SourceText] | None = None,
    manifest_names: Sequence[str] = (),
) -> LockResult:
    objects = export_objects(exports)
    used = used_objects(manifests, settings) if manifests is not None else None
    wanted = None if used is None else set(used) | {p for p in used.values() if p is not None}
    found = lock_entries(objects, settings.secret_key, wanted)
    entries = found.entries
    notes = [n for _, n in found.notes]
    if used is not None and wanted is not None:
        entries = [_attributed(e, used.get(e.id)) for e in entries if e.id in wanted]
        notes = [n for key, n in found.notes if key in wanted]
        have = {e.id for e in entries} | {key for key, _ in found.notes}
        notes.extend(
            f"{k.kind} {k.namespace}/{k.name} is used by the manifests and not in the export: "
            "not locked"
            for k, producer in sorted(used.items(), key=lambda kv: kv[0][1:])
            if k not in have and producer not in have
        )
    kept = {e.id for e in entries}
    nameless = []
    if used is not None:
        have_ids = {e.id for e in found.entries} | {key for key, _ in found.notes if key}
        nameless = [k for k, p in used.items() if not k.namespace and k not in have_ids]
    warnings = (
        [
            f"{len(nameless)} object(s) the manifests use have no namespace "
            f"({nameless[0].kind} {nameless[0].name}), so no export's object can be theirs: "
            "give the namespace the deploy uses with -n (helm template writes none)"
        ]
        if nameless
        else []
    )
    warnings += [
        f"{o.resource.source.display}:{o.resource.source.position(o.node.start)[0]}: "
        f"Secret {o.namespace}/{o.name}: its data is not what its "
        "reconcile.external-secrets.io/data-hash annotation says (changed outside External "
        "Secrets, which will write it again): the lock holds the data as it is now"
        for o in found.drifted
        if o.id in kept
    ]
    unkeyed = 0
    if settings.secret_key is None:
        unkeyed = sum(1 for e in entries if e.kind == "Secret" and e.keys is not None)
    if unkeyed:
        warnings.append(
            f"the lock holds fingerprints of {unkeyed} Secret(s)' data, not keyed: a short or "
            "guessable value could be found from one by trying; give --secret-key-env "
            "(docs: Security and guarantees)"
        )
    text = lock_text(
        entries, _names(export_names), _names(manifest_names), keyed=settings.secret_key is not None
    )
    return LockResult(text, entries, notes, warnings)

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
from cmhash.plan.lockfile import Lock, lock_text
from cmhash.read.source import SourceText
from cmhash.settings.values import Settings


class LockResult(NamedTuple):
    text: str  # the lock file
    entries: list[LockEntry]
    notes: list[str]  # for the user: what is not locked, and why
    warnings: list[str]


class Used(NamedTuple):
    # what a checksum takes a fingerprint of -> its producer (see ``_used``)
    objects: dict[ResourceId, ResourceId | None]
    # under --versioned: the name each of them (and each producer) has in the cluster
    versioned: dict[ResourceId, ResourceId]


def _used(manifests: list[SourceText], settings: Settings) -> Used:
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
    writers = result.config_index.writers if result.config_index is not None else {}
    for plan in result.plans:
        if plan.skip is not None:
            continue
        for r in plan.resolved:
            if r.excluded is not None:
                continue
            key = plan.target(r.ref)
            if r.entry is not None and r.entry.info.content.source is None:
                writer = writers.get(key)
                if writer is None:
                    continue  # a ConfigMap or Secret of the manifests: Git holds its content
                # ... that a source fills (ESO Merge, VSO create: false): the store's part
                kind, _, name = writer.partition("/")
                out[key] = ResourceId.config(kind, key.namespace, name)
                continue
            producer = None
            if r.entry is not None and r.entry.info.source is not None:
                kind, _, name = r.entry.info.source.partition("/")
                producer = ResourceId.config(kind, key.namespace, name)
            out[key] = producer
    # Under --versioned the cluster holds the renamed objects (ESO's Secret
    # es-target-<suffix>, a class spc-<suffix>); the lock keeps the names the manifests
    # give them, which is what a checksum looks up (plan/lock.py)
    names = result.versioning.names if result.versioning is not None else {}
    versioned = {
        key: ResourceId.config(key.kind, key.namespace, names[key])
        for key in {*out, *(p for p in out.values() if p is not None)}
        if names.get(key, key.name) != key.name
    }
    return Used(out, versioned)


def needed_resources(manifests: list[SourceText], settings: Settings) -> list[str]:
    """What to export for ``manifests`` (kubectl's resource names, sorted): for each
    object their checksums would take a fingerprint of, the resource it is read from
    (knowledge/lockfields.py EXPORTS)."""
    from cmhash.knowledge.lockfields import EXPORTS

    out = set()
    issued = _issuers(manifests, settings.namespace or "")
    for target, producer in _used(manifests, settings).objects.items():
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


def _unversioned(entry: LockEntry, base: ResourceId | None) -> LockEntry:
    """An entry read from an object's versioned name, under the name the manifests give
    it (the lock's key, as a checksum looks it up); ``from`` still says what was read."""
    return entry if base is None else entry._replace(name=base.name)


def _as_named(key: ResourceId, renamed: dict[ResourceId, ResourceId]) -> str:
    new = renamed.get(key)
    return key.name if new is None else f"{key.name} (in the cluster {new.name}, versioned)"


def _names(paths: Sequence[str]) -> list[str]:
    """The header's names of the exports and manifests: file names, not where a job
    put them (a runner's temporary directory moves), so an unchanged store keeps the
    lock byte-identical wherever the job runs."""
    return [p if p == "-" else os.path.basename(os.path.normpath(p)) for p in paths]


def _kept(
    wanted: set[ResourceId], entries: list[LockEntry], previous: Lock | None, keyed: bool
) -> tuple[list[LockEntry], list[str]]:
    """The previous lock's entries for what the export shows no value of, though the
    object is there: a SecretProviderClass no pod mounts now. Its
    SecretProviderClassPodStatuses exist only while a pod mounts it (the CSI driver
    makes one per mounting pod, owned by the Pod: secrets-store-csi-driver
    pkg/secrets-store/utils.go createOrUpdateSecretProviderClassPodStatus), so
    none is "unknown", not "no fingerprint": a Deployment scaled to zero, or a class only
    a CronJob mounts between its runs, keeps its entry (and its users their checksum)."""
    if previous is None or previous.keyed != keyed:
        return [], []
    have = {e.id for e in entries}
    kept = [
        previous.entries[key]
        for key in sorted(wanted, key=lambda k: k[1:])
        if key.kind == "SecretProviderClass" and key not in have and key in previous.entries
    ]
    notes = [
        f"{e.kind} {e.namespace}/{e.name}: no pod mounts it now (no SecretProviderClassPodStatus "
        f"names it in the export): its entry is kept from {previous.path}"
        for e in kept
    ]
    return kept, notes


def make_lock(
    exports: list[SourceText],
    export_names: Sequence[str],
    settings: Settings,
    manifests: list[SourceText] | None = None,
    manifest_names: Sequence[str] = (),
    previous: Lock | None = None,
) -> LockResult:
    """``previous``: the lock the output replaces (with ``manifests``: what the export
    shows no value of keeps its entry, ``_kept``)."""
    objects = export_objects(exports)
    both = _used(manifests, settings) if manifests is not None else None
    used = both.objects if both is not None else None
    wanted = None if used is None else set(used) | {p for p in used.values() if p is not None}
    renamed = both.versioned if both is not None else {}
    base = {new: key for key, new in renamed.items()}
    found = lock_entries(
        objects, settings.secret_key, None if wanted is None else wanted | set(base)
    )
    entries = found.entries
    notes = [n for _, n in found.notes]
    if used is not None and wanted is not None:
        entries = [
            _unversioned(_attributed(e, used.get(base.get(e.id, e.id))), base.get(e.id))
            for e in entries
            if base.get(e.id, e.id) in wanted and e.id not in renamed
        ]
        notes = [n for k, n in found.notes if k is not None and base.get(k, k) in wanted]
        from_previous, said = _kept(wanted, entries, previous, settings.secret_key is not None)
        entries = sorted([*entries, *from_previous], key=lambda e: e.id[1:])
        notes.extend(said)
        have = {e.id for e in entries} | {key for key, _ in found.notes}
        notes.extend(
            f"{k.kind} {k.namespace}/{_as_named(k, renamed)} is used by the manifests and not "
            "in the export: not locked"
            for k, producer in sorted(used.items(), key=lambda kv: kv[0][1:])
            if k not in have and producer not in have
        )
    kept = {e.id for e in entries}
    nameless = []
    if used is not None:
        have_ids = {e.id for e in found.entries} | {key for key, _ in found.notes if key}
        nameless = [k for k, p in used.items() if not k.namespace and k not in have_ids]
    warnings = []
    if nameless:
        warnings.append(
            f"{len(nameless)} object(s) the manifests use have no namespace "
            f"({nameless[0].kind} {nameless[0].name}), so no export's object can be theirs: "
            "give the namespace the deploy uses with -n (helm template writes none)"
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
            f"the lock holds fingerprints of {unkeyed} "
            + ("Secret's" if unkeyed == 1 else "Secrets'")
            + " data, not keyed: a short or "
            "guessable value could be found from one by trying; give --secret-key-env "
            "(docs: Security and guarantees)"
        )
    text = lock_text(
        entries, _names(export_names), _names(manifest_names), keyed=settings.secret_key is not None
    )
    return LockResult(text, entries, notes, warnings)

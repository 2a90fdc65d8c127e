"""Objects that produce a Secret (or ConfigMap) in the cluster: a data table of source
kinds, like the workload kinds (kinds.py) and reference sites (refs.py).

In a GitOps repository the Secret is rarely in the stream; the object a controller turns
into it is (a SealedSecret, an ExternalSecret, a SecretProviderClass). A source stands in
for what it produces: references to the produced name resolve to it, and its *content* is
the fields that decide what the controller writes (never its metadata). cmhash cannot see
the values behind them (a secret store, a cloud vault): a change there rolls nothing
offline.

Each row says where the produced names are (default: the source's own name), which fields
are its content, and whether pods reference the source object itself (a CSI volume names
its SecretProviderClass). More rows come from ``secretSources`` in the config file.
"""

from __future__ import annotations

import json
from typing import Any, NamedTuple

from cmhash.errors import NodeError
from cmhash.parse.k8syaml import plain_bool, resolves_to_non_string
from cmhash.parse.tree import SCALAR, SEQ, Node, deref, entries, get_path, items, scalar, walk

Path = tuple[str, ...]


class Dependency(NamedTuple):
    """Objects a source copies content from (ExternalSecret ``templateFrom``): each item at
    ``path`` names one by ``name`` under one of ``kinds``' fields, optionally only some
    of its keys."""

    path: Path  # the items ("*" fans out)
    kinds: tuple[tuple[str, str], ...]  # (field of an item, the kind it names)
    name: str = "name"
    keys: Path = ("items", "*", "key")  # none listed: the whole object


# external-secrets apis/externalsecrets/v1/externalsecret_types.go: TemplateFrom
# {configMap, secret: TemplateRef{name, items: [{key, templateAs}]}, target, literal};
# the controller reads the listed keys of those objects, in the ExternalSecret's own
# namespace, and renders them into the Secret: their change is the Secret's change
TEMPLATE_FROM = Dependency(
    ("spec", "target", "template", "templateFrom", "*"),
    (("configMap", "ConfigMap"), ("secret", "Secret")),
)

# (kind, name, keys or None for all) of one object a source copies from
Depends = tuple[tuple[str, str, tuple[str, ...] | None], ...]


class Pin(NamedTuple):
    """Items of a source that read a value from a store: pinned when ``field`` is set
    (``None``: such an item can never be pinned)."""

    path: Path  # the items ("*" fans out)
    field: str | None


# external-secrets apis/externalsecrets/v1/externalsecret_types.go:
# ExternalSecretDataRemoteRef.Version ("Used to select a specific version of the
# Provider value, if supported"), used by spec.data[].remoteRef and
# spec.dataFrom[].extract; spec.dataFrom[].find (ExternalSecretFind) has no version:
# whatever matches at refresh time is written
EXTERNAL_SECRET_PINS = (
    Pin(("spec", "data", "*", "remoteRef"), "version"),
    Pin(("spec", "dataFrom", "*", "extract"), "version"),
    Pin(("spec", "dataFrom", "*", "find"), None),
)


class SecretSource(NamedTuple):
    group: str
    kind: str
    versions: tuple[str, ...]  # the served versions whose schema this row reads; () = any
    produces: str  # "Secret" | "ConfigMap"
    names: Path | None  # where the produced name(s) are ("*" fans out); None: own name
    own_name_default: bool  # no name at ``names``: the source's own name
    content: tuple[Path, ...]
    referenced: bool = False  # pods reference the source object itself (by its kind)
    # (path, values): a row that produces nothing when the field holds one of the values
    produces_nothing: tuple[Path, tuple[str, ...]] | None = None
    depends: Dependency | None = None  # objects whose content it copies in
    # the produced object's annotations as the source writes them (its template's): a
    # Reloader match/ignore there is the produced Secret's
    template_annotations: Path | None = None
    # store reads that a version may pin (an unpinned one changes with no Git change)
    pins: tuple[Pin, ...] = ()
    # how --versioned names what it produces (analyze/versioned_sources.py): "target",
    # "names", "sealed"; "": never versioned
    versioning: str = ""
    # (path, values): the produced Secret is not the source's own (not renamed)
    not_owned: tuple[Path, tuple[str, ...]] | None = None

    @property
    def label(self) -> str:
        return f"{self.group}/{self.kind}" if self.group else self.kind


def _path(text: str) -> Path:
    return tuple(text.split("."))


def source_row(
    group: str,
    kind: str,
    content: list[str],
    *,
    versions: tuple[str, ...] = (),
    produces: str = "Secret",
    name: str | None = None,
    own_name_default: bool = True,
    referenced: bool = False,
) -> SecretSource:
    return SecretSource(
        group,
        kind,
        versions,
        produces,
        _path(name) if name else None,
        own_name_default,
        tuple(_path(c) for c in content),
        referenced,
    )


BUILTIN_SOURCES: tuple[SecretSource, ...] = (
    # The controller names the Secret after the SealedSecret, in its namespace, whatever
    # spec.template.metadata says; re-sealing changes encryptedData, so it rolls the users.
    # spec.data is the deprecated whole-Secret form (bitnami-labs/sealed-secrets
    # pkg/apis/sealedsecrets/v1alpha1/sealedsecret_types.go: "Data is deprecated"), still
    # unsealed by the controller: content too.
    source_row(
        "bitnami.com",
        "SealedSecret",
        ["spec.encryptedData", "spec.data", "spec.template.type", "spec.template.data"],
        versions=("v1alpha1",),
    )._replace(
        # sealedsecret_expansion.go Unseal: the Secret's ObjectMeta is spec.template's
        template_annotations=_path("spec.template.metadata.annotations"),
        versioning="sealed",
    ),
    # spec.target.name, default its own name; creationPolicy None writes no Secret.
    # The values in the backing store are invisible offline (refreshInterval, or a
    # runtime reloader, is what picks those up).
    *(
        source_row(
            "external-secrets.io",
            "ExternalSecret",
            ["spec.data", "spec.dataFrom", "spec.target.template", "spec.secretStoreRef"],
            versions=(version,),
            name="spec.target.name",
        )._replace(
            produces_nothing=(_path("spec.target.creationPolicy"), ("None",)),
            depends=TEMPLATE_FROM,
            # ExternalSecretTemplateMetadata: the annotations the Secret is written with
            template_annotations=_path("spec.target.template.metadata.annotations"),
            pins=EXTERNAL_SECRET_PINS,
            versioning="target",
            # externalsecret_controller.go Reconcile: Merge patches a Secret that must
            # exist, None writes nothing; only Owner (the default) and Orphan create it
            not_owned=(_path("spec.target.creationPolicy"), ("Merge", "None")),
        )
        for version in ("v1", "v1beta1")
    ),
    # Pods name it in a CSI volume (volumeAttributes.secretProviderClass); its
    # secretObjects are synced into Secrets that env references may use.
    source_row(
        "secrets-store.csi.x-k8s.io",
        "SecretProviderClass",
        ["spec.parameters", "spec.secretObjects"],
        versions=("v1", "v1alpha1"),
        name="spec.secretObjects.*.secretName",
        own_name_default=False,
        referenced=True,
    )._replace(versioning="names"),
)


def _canonical(node: Node | None, depth: int = 0) -> Any:
    """A subtree as Kubernetes' decoder sees it, in a form where quoting, key order and
    flow/block style make no difference: strings stay strings; a plain scalar that
    decodes to a number, boolean or null is kept as ``["plain", text]``."""
    node = deref(node)
    if depth > 64:
        raise NodeError("source content nested too deeply", node.start if node else 0)
    if node is None or node.is_null:
        return None
    if node.kind == SCALAR:
        text = str(node.value)
        if node.style is None and node.tag is None and resolves_to_non_string(text):
            boolean = plain_bool(text)  # yes, True, on: one boolean to Kubernetes
            return boolean if boolean is not None else ["plain", text]
        return text
    if node.kind == SEQ:
        return [_canonical(x, depth + 1) for x in items(node)]
    return {k: _canonical(v, depth + 1) for k, (_, v) in entries(node).items()}


def source_content(node: Node, row: SecretSource) -> dict[str, bytes]:
    """Content path -> its canonical JSON (absent paths are left out)."""
    out = {}
    for path in row.content:
        if "*" in path:  # every item of a list
            found = [n for n, _ in walk(node, path)]
            value: Any = [_canonical(n) for n in found] if found else None
        else:
            one = get_path(node, path)
            value = _canonical(one) if one is not None else None
        if value is not None:
            text = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
            out[".".join(path)] = text.encode("utf-8")
    return out


def source_dependencies(node: Node, row: SecretSource) -> Depends:
    """The objects whose content the source copies in, in order, without repeats."""
    dep = row.depends
    if dep is None:
        return ()
    out: list[tuple[str, str, tuple[str, ...] | None]] = []
    for item, _ in walk(node, dep.path):
        for field, kind in dep.kinds:
            ref = get_path(item, (field,))
            name = scalar(get_path(ref, (dep.name,))) if ref is not None else None
            if not name:
                continue
            keys = [scalar(k) for k, _ in walk(ref, dep.keys)] if ref is not None else []
            listed = tuple(sorted({k for k in keys if k}))
            out.append((kind, name, listed or None))
    return tuple(dict.fromkeys(out))


def unpinned(node: Node, row: SecretSource) -> tuple[int, ...]:
    """Where the source reads a store value no version pins, in order (offsets)."""
    out = []
    for pin in row.pins:
        for item, _ in walk(node, pin.path):
            d = deref(item)
            if d is None or d.is_null:
                continue
            version = get_path(d, (pin.field,)) if pin.field is not None else None
            if version is None or not scalar(version):
                out.append(d.start)
    return tuple(sorted(out))


def secret_kinds(rows: tuple[SecretSource, ...]) -> frozenset[str]:
    """The kinds a pod references that are Secrets or stand for them (--exclude-secrets):
    Secret, and each source object pods reference by its own kind when it produces
    Secrets (a SecretProviderClass in a CSI volume)."""
    return frozenset(("Secret", *(r.kind for r in rows if r.referenced and r.produces == "Secret")))


def produced_names(node: Node, row: SecretSource, own_name: str) -> list[str]:
    """The names of the objects a source produces, in order, without repeats."""
    if row.produces_nothing is not None:
        path, values = row.produces_nothing
        if scalar(get_path(node, path)) in values:
            return []
    names: list[str] = []
    if row.names is not None:
        for n, _ in walk(node, row.names):
            d = deref(n)
            if d is not None and d.kind == SCALAR and not d.is_null:
                names.append(str(d.value))
            elif d is not None and not d.is_null:
                raise NodeError(f"'{'.'.join(row.names)}' must be a string", n.start)
    names = [n for n in names if n]  # an empty name means the default, as for a missing one
    if not names and row.own_name_default:
        names.append(own_name)
    return list(dict.fromkeys(names))


def sources_from_config(data: list[dict[str, Any]]) -> tuple[SecretSource, ...]:
    """``secretSources`` entries of the config file (schema-validated) -> rows."""
    rows = []
    for k in data:
        api = str(k.get("apiVersion", ""))
        group = str(k["group"]) if "group" in k else api.rpartition("/")[0]
        version = api.rpartition("/")[2] if api else ""
        rows.append(
            source_row(
                group,
                str(k["kind"]),
                list(k["content"]),
                versions=(version,) if version and "group" not in k else (),
                produces=str(k.get("produces", "Secret")),
                name=k.get("name"),
                own_name_default=bool(k.get("ownNameDefault", True)),
            )
        )
    return tuple(rows)

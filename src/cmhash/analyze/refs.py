"""The ConfigMaps and Secrets a PodSpec names, as References: the walk of the reference
sites (knowledge/podspec.py; an operator's resource: knowledge/operators.py), one trie
walk per container and pod spec (a pod spec's whole reading in C when the tree is
C-built: native/_ctree.c find_refs), and the subPath mounts of ConfigMap and Secret
volumes."""

# No "from __future__ import annotations": typing compiles string NamedTuple fields at import

import sys
from collections.abc import Callable
from typing import NamedTuple

from cmhash.analyze.annotations import Spot, spot_of
from cmhash.errors import NodeError
from cmhash.knowledge.podspec import (
    CONTAINER_LISTS,
    CONTAINER_SITES,
    FILE_SITES,
    IMAGE_PULL_SITE,
    POD_SITES,
    SUBPATH_FIELDS,
    Site,
)
from cmhash.native import cext
from cmhash.parse.k8syaml import FALSE_WORDS, HINTED, TRUE_WORDS, resolves_to_non_string
from cmhash.parse.resources import bool_field
from cmhash.parse.tree import MAP, Node, entries, get, items, scalar, walk


class Reference(NamedTuple):
    target_kind: str
    name: str  # a name, or for a Reloader annotation an anchored regular expression
    keys: tuple[str, ...] | None  # sorted, unique; None: the whole object
    optional: bool
    how: str
    field: str  # e.g. spec.template.spec.containers[0].env[2].valueFrom.configMapKeyRef
    offset: int  # where the reference is written
    container: str | None = None
    namespace: str | None = None  # a declared "namespace/name": that namespace
    pattern: bool = False  # ``name`` is a regular expression (Reloader's reload lists)
    declared_by: str | None = None  # the annotation that declared it (how == "declared")
    spot: Spot | None = None  # where the name is written (the annotation, if declared)


def _text(node: Node, name: str, field: str) -> str | None:
    """A string field of a reference; Kubernetes rejects anything else, so do we."""
    child = get(node, name)
    value = scalar(child)
    if child is not None and value is None and not child.is_null:
        raise NodeError(f"'{field}.{name}' must be a string", child.start)
    return value


def _maybe_not_a_string(ref: Reference) -> bool:
    """Whether a reference's name or a key would be a number or a boolean if written
    plain (then its node says whether it was: ``_refuse_non_strings``)."""
    return resolves_to_non_string(ref.name) or any(
        k[:1] in HINTED and resolves_to_non_string(k) for k in ref.keys or ()
    )


def _refuse_non_strings(site: Site, matches: list[tuple[Node, str]]) -> None:
    """A plain name or key that kubectl's decoder (go-yaml v2) reads as a number or a
    boolean (``name: 1234``, ``0x4D2``, ``yes``; ``key: 0x1F``) reaches the API server
    as one, which refuses it in a string field ("cannot unmarshal number into Go struct
    field ... of type string"): refused here too, at the value."""
    for node, f in matches:
        fields = [(site.name_field, f"{f}.{site.name_field}")] if site.name_field else [("", f)]
        if site.key_field is not None:
            fields.append((site.key_field, f"{f}.{site.key_field}"))
        for name, where in fields:
            child = get(node, name) if name else node
            if child is None or child.kind != "scalar" or child.style is not None:
                continue
            if child.tag is None and child.value and resolves_to_non_string(child.value):
                raise NodeError(
                    f"'{where}' must be a string: kubectl sends {child.value} as a number or "
                    "a boolean, which Kubernetes refuses here; quote it",
                    child.start,
                )


class _Trie(NamedTuple):
    """The sites' paths merged, so one walk of a container or pod spec finds every
    site (instead of one walk per site): keys to follow, "*" to fan out over list
    items, and the sites whose path ends here (their index in the table)."""

    children: dict[str, "_Trie"]
    ends: list[int]


def _trie(sites: tuple[Site, ...]) -> _Trie:
    root = _Trie({}, [])
    for index, site in enumerate(sites):
        node = root
        for step in site.path:
            node = node.children.setdefault(step, _Trie({}, []))
        node.ends.append(index)
    return root


Found = list[list[tuple[Node, str]]]  # per reference site: (node, field path)


def _matches(node: Node | None, trie: _Trie, field: str, count: int) -> Found:
    """Per site of the table, the nodes at its path with their field paths, in document
    order: what ``walk(node, site.path, field)`` gives for each site, in one walk."""
    found: Found = [[] for _ in range(count)]
    if node is not None:
        _collect(node, trie, field, found)
    return found


def _collect(node: Node, trie: _Trie, field: str, found: Found) -> None:
    for index in trie.ends:
        found[index].append((node, field))
    children = trie.children
    if not children:
        return
    star = children.get("*")
    if star is not None:
        for i, item in enumerate(items(node)):
            _collect(item, star, f"{field}[{i}]", found)
    if node.kind != MAP or len(children) == (star is not None):
        return
    written = entries(node)
    for step, sub in children.items():
        if step != "*" and step in written:  # (a dict lookup: most steps are absent)
            child = get(node, step)
            if child is not None:
                _collect(child, sub, f"{field}.{step}" if field else step, found)


_CONTAINER_TRIE = _trie(CONTAINER_SITES)
_POD_TRIE = _trie(POD_SITES)


def _py_site_refs(
    site: Site, matches: list[tuple[Node, str]], container: str | None
) -> list[Reference]:
    """The References of one site's nodes (native/_ctree.c's find_refs has a copy for the
    common case, and hands anything else back to find_references' Python body)."""
    refs = []
    for node, f in matches:
        if not site.name_field:  # the node is the name (a list of names)
            name = scalar(node)
        else:
            name = _text(node, site.name_field, f) if node.kind == "map" else None
        if not name:
            continue
        keys: tuple[str, ...] | None = None
        if site.key_field is not None:
            key = _text(node, site.key_field, f)
            keys = (key,) if key is not None else ()
        elif site.items_field is not None:
            listed = [scalar(get(x, "key")) for x in items(get(node, site.items_field))]
            names = tuple(sorted({k for k in listed if k is not None}))
            keys = names or None  # empty or absent items: every key is projected
        optional = False
        if site.optional_field is not None:
            optional = bool_field(node, site.optional_field, f"{f}.")
        # interned: the same field paths and container names repeat in every workload, and
        # a big run keeps tens of thousands of references until the reduce stage
        raw = (None, node) if not site.name_field else entries(node).get(site.name_field)
        refs.append(
            Reference(
                site.target,
                name,
                keys,
                optional,
                site.how,
                sys.intern(f),
                node.start,
                container and sys.intern(container),
                spot=spot_of(raw[1] if raw else None),
            )
        )
    return refs


def _sites(
    sites: tuple[Site, ...], trie: _Trie, node: Node | None, field: str, container: str | None
) -> list[Reference]:
    """The references at ``sites`` below ``node``, in table order. A malformed mapping on
    the way (a duplicate key, a bad merge) is reported as the walk site by site meets it
    first, so a document with several such errors always names the same one."""
    try:
        found = _matches(node, trie, field, len(sites))
    except NodeError:
        found = None
    refs: list[Reference] = []
    for i, site in enumerate(sites):
        matches = walk(node, site.path, field) if found is None else found[i]
        if matches:  # (most sites are absent from most pods)
            got = _py_site_refs(site, matches, container)
            if any(_maybe_not_a_string(r) for r in got):
                _refuse_non_strings(site, matches)
            refs += got
    return refs


def resource_references(
    root: Node,
    sites: tuple[Site, ...],
    defaults: tuple[tuple[str, str, str], ...] = (),
    name: str = "",
) -> list[Reference]:
    """The references an operator's resource makes outside its pod-spec-like block
    (operators.py): ``sites`` from the resource's root, in table order, then for each
    absent field of ``defaults`` the object the operator reads instead (optional: the
    operator makes do without it). Read in Python: these resources are few, and a list
    of bare names is not the C walk's common case."""
    refs: list[Reference] = []
    for site in sites:
        matches = walk(root, site.path, "")
        if matches:
            refs += _py_site_refs(site, matches, None)
    for field, target, template in defaults:
        written = walk(root, tuple(field.split(".")), "")
        if not written or all(n.is_null or scalar(n) == "" for n, _ in written):
            refs.append(
                Reference(
                    target, template.format(name=name), None, True, "operator", field, root.start
                )
            )
    return refs


def find_references(
    pod_spec: Node | None, field: str, *, image_pull_secrets: bool = False
) -> list[Reference]:
    """Every ConfigMap/Secret reference of one PodSpec, in document order of sites."""
    if pod_spec is not None and _C_FIND is not None:
        found = _C_FIND(pod_spec, field, image_pull_secrets)
        if found is not None and not any(_maybe_not_a_string(r) for r in found):
            return found  # (else the Python body, which refuses a plain 1234 or yes)
    return _py_find_references(pod_spec, field, image_pull_secrets=image_pull_secrets)


def _py_find_references(
    pod_spec: Node | None, field: str, *, image_pull_secrets: bool = False
) -> list[Reference]:
    """find_references in Python: the reference for native/_ctree.c's find_refs."""
    refs: list[Reference] = []
    for list_name in CONTAINER_LISTS:
        for i, container in enumerate(items(get(pod_spec, list_name))):
            cfield = f"{field}.{list_name}[{i}]"
            cname = scalar(get(container, "name"))
            refs += _sites(CONTAINER_SITES, _CONTAINER_TRIE, container, cfield, cname)
    refs += _sites(POD_SITES, _POD_TRIE, pod_spec, field, None)
    if image_pull_secrets:
        refs.extend(
            _py_site_refs(IMAGE_PULL_SITE, walk(pod_spec, IMAGE_PULL_SITE.path, field), None)
        )
    return refs


# native/_ctree.c's find_refs: the body of find_references over a C-built tree, None from
# it for anything else (an alias, a merge...): then the Python body reads it
_C_FIND: Callable[[Node, str, bool], list[Reference] | None] | None = cext.function(
    "find_refs",
    "bind_find",
    Reference,
    Spot,
    TRUE_WORDS,
    FALSE_WORDS,
    (
        CONTAINER_LISTS,
        CONTAINER_SITES,
        _CONTAINER_TRIE,
        POD_SITES,
        _POD_TRIE,
        (IMAGE_PULL_SITE,),
        _trie((IMAGE_PULL_SITE,)),
    ),
)


class SubPathMount(NamedTuple):
    """A ``volumeMounts`` entry with ``subPath``/``subPathExpr`` of a ConfigMap or Secret
    volume: the kubelet never updates such a file in place; only a new pod sees changes."""

    container: str | None
    volume: str
    targets: tuple[tuple[str, str], ...]  # (kind, name) behind the volume
    mount_path: str | None
    field: str
    offset: int


def _volume_targets(volume: Node) -> tuple[tuple[str, str], ...]:
    """(kind, name) of the ConfigMaps/Secrets behind one volume: the volume rows of
    POD_SITES, walked from the volume instead of the pod spec."""
    found = []
    matches = _matches(volume, _VOLUME_TRIE, "", len(_VOLUME_SITES))
    for site, nodes in zip(_VOLUME_SITES, matches, strict=True):
        for node, _ in nodes:
            name = scalar(get(node, site.name_field))
            if name:
                found.append((site.target, name))
    return tuple(found)


# the file sites, from a volume (their path minus ("volumes", "*"))
_VOLUME_SITES = tuple(s._replace(path=s.path[2:]) for s in POD_SITES if s.how in FILE_SITES)
_VOLUME_TRIE = _trie(_VOLUME_SITES)
_SUBPATH_KEYS = frozenset(SUBPATH_FIELDS)


def find_subpath_mounts(pod_spec: Node | None, field: str) -> list[SubPathMount]:
    """Every subPath mount of a ConfigMap/Secret volume of one PodSpec. The mounts come
    first: most pods have no subPath mount, and then their volumes are never read."""
    found = []  # (container, volume name, mount, its field) of every subPath mount
    for list_name in CONTAINER_LISTS:
        for i, container in enumerate(items(get(pod_spec, list_name))):
            for j, m in enumerate(items(get(container, "volumeMounts"))):
                # (a mount that writes neither key, most of them, is passed over on its
                # key index: ``get`` reads a mapping's through that same index)
                if m.kind != MAP or _SUBPATH_KEYS.isdisjoint(entries(m)):
                    continue
                if any(scalar(get(m, f)) for f in SUBPATH_FIELDS):
                    where = f"{field}.{list_name}[{i}].volumeMounts[{j}]"
                    found.append((container, scalar(get(m, "name")), m, where))
    if not found:
        return []
    volumes = {}
    for v in items(get(pod_spec, "volumes")):
        name = scalar(get(v, "name"))
        targets = _volume_targets(v)
        if name and targets:
            volumes[name] = targets
    return [
        SubPathMount(
            scalar(get(container, "name")),
            vname,
            volumes[vname],
            scalar(get(m, "mountPath")),
            where,
            m.start,
        )
        for container, vname, m, where in found
        if vname is not None and vname in volumes
    ]

"""The names that fields outside pod specs give ConfigMaps and Secrets (the table of
those fields: knowledge/namesites.py), found in one object: a Role's ``resourceNames``,
an Ingress's TLS Secret, Flux ``valuesFrom``, cert-manager's CA injection, ... An object
any of them names is read by name (plan/byname.py)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import NamedTuple

from cmhash.analyze.versioned_names import VERSIONABLE
from cmhash.knowledge.namesites import ANNOTATIONS, RBAC_RESOURCES, SITES, Site
from cmhash.parse.resources import Resource
from cmhash.parse.tree import Node, items, scalar, walk

_KINDS = sorted({k for s in SITES for k in s.kinds if k != "*"})
# a document worth parsing for these: one of the kinds, or one of the annotations
WANTED = re.compile(
    r"^\s*[\"']?kind[\"']?\s*:\s*[\"']?(?:"
    + "|".join(_KINDS)
    + r")[\"']?\s*$|"
    + "|".join(re.escape(s.name) for s in SITES if s.path == ANNOTATIONS),
    re.MULTILINE,
)


class NameRef(NamedTuple):
    """A field outside pod specs naming a ConfigMap or Secret."""

    kind: str
    namespace: str | None  # None: any namespace (a ClusterRole)
    name: str
    by: str  # ``Role/x`` and its field: what messages say
    offset: int  # where the name is written
    site: Site


def _applies(site: Site, res: Resource) -> bool:
    return ("*" in site.kinds or res.kind in site.kinds) and (
        "*" in site.groups or res.group in site.groups
    )


def _field(node: Node | None, key: str) -> str | None:
    found = walk(node, (key,))
    return scalar(found[0][0]) if found else None


def _targets(site: Site, item: Node) -> list[str]:
    if site.target in VERSIONABLE:
        return [site.target]
    if site.target == "kind":
        kind = _field(item, "kind") or site.default_kind
        core = _field(item, "group") in (None, "", "core")
        return [kind] if kind in VERSIONABLE and core else []
    # RBAC: the kinds the rule's resources name, when it is about the core group
    if not {scalar(g) for g in items(_get(item, "apiGroups"))} & {"", "*"}:
        return []
    resources = {scalar(r) or "" for r in items(_get(item, "resources"))}
    if "*" in resources:
        return list(RBAC_RESOURCES.values())
    return [RBAC_RESOURCES[r] for r in sorted(resources) if r in RBAC_RESOURCES]


def _get(node: Node | None, key: str) -> Node | None:
    found = walk(node, (key,))
    return found[0][0] if found else None


def references(res: Resource, default_namespace: str) -> Iterator[NameRef]:
    """Every name a non-pod field of ``res`` gives a ConfigMap or Secret."""
    if res.kind == "Secret":
        return  # nothing inside a Secret is ever read
    own_ns = None if res.kind == "ClusterRole" else (res.namespace or default_namespace)
    for site in SITES:
        if not _applies(site, res):
            continue
        for item, field in walk(res.node, site.path):
            kinds = _targets(site, item)
            if not kinds:
                continue
            if site.name.endswith("[]"):
                key = site.name[:-2]
                nodes = [(n, f"{field}.{key}[{i}]") for i, n in enumerate(items(_get(item, key)))]
            else:
                node = _get(item, site.name)
                nodes = [(node, f"{field}.{site.name}")] if node is not None else []
            for node, where in nodes:
                value = (scalar(node) or "").strip()
                if not value:
                    continue
                ns, name = own_ns, value
                if site.qualified:
                    ns, _, name = value.rpartition("/")
                    ns = ns or own_ns
                elif site.namespace is not None:
                    ns = _field(item, site.namespace) or own_ns
                label = f"{res.kind}/{res.name or ''} {where}"
                for kind in kinds:
                    yield NameRef(kind, ns, name, label, node.start, site)

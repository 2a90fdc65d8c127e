"""``{name, key}`` selectors outside pod specs (knowledge/selectors.py): the fields by
which an operator or a controller reads a ConfigMap's or Secret's key by name, found in
any resource of the input (plan/byname.py keeps what they name unversioned).

A resource's tree is walked outside its pod specs (a workload's pod template, an
operator resource's ``containers``, ``initContainers`` and ``volumes``: references there
are pod-spec references, rewritten with the object), its ``metadata`` and ``status``.
A mapping is a selector when

- a CRD of the input describes one at its path (``schema_selectors``: an object with
  string ``name`` and ``key`` properties and ``key`` required; a ``SecretOrConfigMap``'s
  arms) or the prometheus-operator table does (knowledge/selectors.py): certain, and
  the schema or the table says which kind it names; or
- it has the shape: a string ``name``, a string ``key`` and no other key but
  ``optional`` and ``namespace`` (which then names the object's namespace). Its kind is
  the one its field says (a ``secret``/``configMap`` arm, a field named ``...Secret...``
  or ``...ConfigMap...``); otherwise both are candidates.

Nothing comes of a selector whose name no ConfigMap or Secret of the input has in the
resource's namespace, or the one it names (plan/byname.py matches them): that keeps the
shape rule from reading meaning into an unrelated ``{name, key}``; and where both kinds
have the name, both keep it (renaming either could break the reader)."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from typing import NamedTuple

from cmhash.errors import NodeError
from cmhash.knowledge.kinds import WorkloadKind
from cmhash.knowledge.podspec import CONTAINER_LISTS
from cmhash.knowledge.selectors import ARMS, REQUIRED_KEYS, SELECTOR_KEYS, known
from cmhash.parse.resources import Resource
from cmhash.parse.tree import MAP, SCALAR, SEQ, Node, deref, entries, get, items, scalar
from cmhash.plan.workplan import WorkloadPlan

BOTH = ("ConfigMap", "Secret")
_KEY = re.compile(r"(?:^|[\s{,])[\"']?key[\"']?\s*:|CustomResourceDefinition", re.MULTILINE)
# one object of a kind whose fields outside its pod template never name another object
# (Kubernetes' own workloads: apps, batch, core), or a ConfigMap or Secret
_API = re.compile(r"^apiVersion:[ \t]*[\"']?(?:v1|apps/v1|batch/v1)[\"']?[ \t]*$", re.MULTILINE)
_KIND = re.compile(r"^kind:[ \t]*[\"']?([A-Za-z]+)[\"']?[ \t]*$", re.MULTILINE)
_PLAIN = frozenset(
    (
        *("ConfigMap", "Secret", "Deployment", "StatefulSet", "DaemonSet", "ReplicaSet", "Job"),
        *("CronJob", "Pod", "ReplicationController", "PodTemplate"),
    )
)


class Wanted:
    """Which documents are worth parsing for selectors: one with a key written as a
    mapping's key, or a CRD (its schemas), but not one object of a kind that never names
    another outside its pod template (``_PLAIN``: a run with thousands of Deployments
    parses none of them again)."""

    def search(self, text: str) -> bool:
        first = _KIND.search(text)
        if (
            first is not None
            and first.group(1) in _PLAIN
            and _KIND.search(text, first.end()) is None
            and _API.search(text) is not None
        ):
            return False  # (the common case: decided on two lines)
        return _KEY.search(text) is not None


WANTED = Wanted()
_CRD = ("apiextensions.k8s.io", "CustomResourceDefinition")
# kinds whose fields never name another object (their data is not read as references)
_NEVER = frozenset((("", "ConfigMap"), ("", "Secret"), _CRD))
# the fields a walk never enters: what the object is, not what it reads
_SKIPPED = frozenset(("metadata", "status"))


class Known(NamedTuple):
    """A selector field a schema or the table describes."""

    path: tuple[str, ...]  # from the resource's root ("*": list items, "{}": map values)
    targets: tuple[str, ...]  # the kinds it may name
    how: str  # what says so, for messages


class Found(NamedTuple):
    name: str
    targets: tuple[str, ...]
    field: str  # spec.endpoints[0].basicAuth.password
    offset: int  # where the name is written
    how: str
    namespace: str | None = None  # the selector's own namespace field, when it has one


# -- CRD schemas ---------------------------------------------------------------------


def _said(text: str) -> tuple[str, ...]:
    """The kind ``text`` (lower-case) names: one, or none when it names both or
    neither."""
    said = tuple(k for k in BOTH if k.lower() in text)
    return said if len(said) == 1 else ()


def _selector(node: Node) -> tuple[str, ...] | None:
    """The kinds a schema object selects a key of, () when it cannot tell, None when it
    is no selector (string name and key properties, key required)."""
    props = get(node, "properties")
    name, key = get(props, "name"), get(props, "key")
    if (
        name is None
        or key is None
        or "key" not in {scalar(r) for r in items(get(node, "required"))}
    ):
        return None
    if any(scalar(get(p, "type")) not in (None, "string") for p in (name, key)):
        return None
    for hint in (get(props, "optional"), key, node):  # (their descriptions)
        said = _said((scalar(get(hint, "description")) or "").lower())
        if said:
            return said
    return ()


def _schema(
    node: Node | None, path: tuple[str, ...], out: list[tuple[tuple[str, ...], Node]]
) -> None:
    """(path, schema node) of every object below ``node``."""
    todo = [(node, path)]
    while todo:
        node, path = todo.pop()
        node = deref(node)
        if node is None or node.kind != MAP:
            continue
        out.append((path, node))
        props = get(node, "properties")
        if props is not None and props.kind == MAP:
            todo.extend((v, (*path, k)) for k, (_, v) in entries(props).items())
        todo.append((get(node, "items"), (*path, "*")))
        todo.append((get(node, "additionalProperties"), (*path, "{}")))


def schema_selectors(crd: Resource) -> dict[tuple[str, str, str], list[Known]]:
    """(group, version, kind) -> the selectors a CustomResourceDefinition's schemas
    describe (apiextensions.k8s.io v1 ``spec.versions[].schema.openAPIV3Schema``; v1beta1
    ``spec.validation.openAPIV3Schema`` for every version)."""
    spec = get(crd.node, "spec")
    group, kind = scalar(get(spec, "group")) or "", scalar(get(get(spec, "names"), "kind")) or ""
    shared = get(get(spec, "validation"), "openAPIV3Schema")
    versions = [
        (scalar(get(v, "name")) or "", get(get(v, "schema"), "openAPIV3Schema") or shared)
        for v in items(get(spec, "versions"))
    ]
    if not versions and shared is not None:
        versions = [(scalar(get(spec, "version")) or "", shared)]
    label = f"the CRD {crd.name} in the input"
    out: dict[tuple[str, str, str], list[Known]] = {}
    for version, schema in versions:
        nodes: list[tuple[tuple[str, ...], Node]] = []
        _schema(schema, (), nodes)
        found = out.setdefault((group, version, kind), [])
        for path, node in nodes:
            said = _selector(node)
            if said is not None:
                arm = ARMS.get(path[-1]) if path else None
                targets = (arm,) if arm else said or _by_field(path)
                found.append(
                    Known(path, targets, f"a {'/'.join(targets)} key selector per {label}")
                )
    return out


# -- instances ----------------------------------------------------------------------


def _by_field(path: tuple[str, ...]) -> tuple[str, ...]:
    """The kind a selector's field names: its arm, or a field name that says it."""
    steps = [s for s in path if s not in ("*", "{}")]
    if not steps:
        return BOTH
    last = steps[-1]
    return (ARMS[last],) if last in ARMS else _said(last.lower()) or BOTH


def _shape(node: Node) -> bool:
    """A string name, a string key, nothing else but optional."""
    found = entries(node)
    if not set(found) <= SELECTOR_KEYS:
        return False
    values = [deref(found[k][1]) if k in found else None for k in REQUIRED_KEYS]
    return all(v is not None and v.kind == SCALAR for v in values)


def _name(node: Node) -> tuple[str, int, str | None] | None:
    """The name a selector gives, where it is written, and its namespace field."""
    value = get(node, "name")
    name = (scalar(value) or "").strip()
    key = get(node, "key")
    if not name or key is None or key.kind != SCALAR or value is None:
        return None
    return name, value.start, (scalar(get(node, "namespace")) or "").strip() or None


def find(res: Resource, skip: frozenset[tuple[str, ...]], schemas: list[Known]) -> Iterator[Found]:
    """Every selector of ``res`` outside its pod specs and the ``skip`` paths (generic,
    "*" for list items): those ``schemas`` (its CRD's) and the table describe, and
    those of the shape."""
    described = {k.path: k for k in schemas}
    for path, target, go in known(res.group, res.kind):
        described.setdefault(
            path, Known(path, (target,), f"a {target} key selector, prometheus-operator {go}")
        )
    maps_after = {p[i - 1] for p in described for i, s in enumerate(p) if s == "{}" and i}
    todo: list[tuple[Node | None, tuple[str, ...], str]] = [(res.node, (), "")]
    while todo:
        node, path, field = todo.pop()
        node = deref(node)
        if node is None or path in skip or (len(path) == 1 and path[0] in _SKIPPED):
            continue
        if node.kind == SEQ:
            todo.extend(
                (x, (*path, "*"), f"{field}[{i}]")
                for i, x in reversed(list(enumerate(items(node))))
            )
            continue
        if node.kind != MAP:
            continue
        try:
            pairs = entries(node)
        except NodeError:  # (a duplicate key, a bad merge: the map stage reported it)
            continue
        hit = described.get(path)
        if hit is not None or (path and _shape(node)):
            named = _name(node)
            if named is not None:
                targets, how = (
                    (hit.targets, hit.how) if hit else (_by_field(path), "a {name, key} selector")
                )
                yield Found(named[0], targets or BOTH, field, named[1], how, named[2])
                continue
        for key, (_, value) in reversed(pairs.items()):
            step = "{}" if path and path[-1] in maps_after else key
            todo.append((value, (*path, step), f"{field}.{key}" if field else key))


def _pod_specs(kind: WorkloadKind) -> set[tuple[str, ...]]:
    """The paths of a workload kind's pod specs, which the reference walk reads (and
    --versioned rewrites): a template's ``spec``; an operator's containers, init
    containers, volumes and pull Secrets."""
    if kind.spec_path is None:
        return {kind.pod_spec_path}
    fields = (*CONTAINER_LISTS, "volumes", "imagePullSecrets")
    return {(*kind.spec_path, f) for f in fields}


def all_found(
    resources: Iterable[Resource], plans: Iterable[WorkloadPlan]
) -> Iterator[tuple[Resource, Found]]:
    """Every selector of ``resources`` (the documents ``WANTED`` finds something in)
    outside the pod specs of ``plans``' workloads, with its resource."""
    pods: dict[tuple[int, int, str, str], set[tuple[str, ...]]] = {}
    for plan in plans:
        key = (id(plan.source), plan.info.doc, plan.info.kind.group, plan.info.kind.kind)
        pods.setdefault(key, set()).update(_pod_specs(plan.info.kind))
    found = list(resources)
    schemas: dict[tuple[str, str, str], list[Known]] = {}
    for res in found:
        if (res.group, res.kind) == _CRD:
            for at, described in schema_selectors(res).items():
                schemas.setdefault(at, []).extend(described)
    for res in found:
        if (res.group, res.kind) in _NEVER:
            continue
        skip = frozenset(pods.get((id(res.source), res.doc, res.group, res.kind), ()))
        version = res.api_version.rpartition("/")[2]
        own = schemas.get((res.group, version, res.kind), [])
        for f in find(res, skip, own):
            yield res, f

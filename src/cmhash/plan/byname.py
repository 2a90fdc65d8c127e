"""Which ConfigMaps and Secrets an application reads by name, so ``--versioned`` must
not rename them (plan/versioning/decision.py asks ``read_by_name``).

An object is read by name when

- a field outside pod specs names it (knowledge/namesites.py: a Role's ``resourceNames``, an
  Ingress's TLS Secret, Flux ``valuesFrom``, a Gateway's certificate, cert-manager's CA
  injection, ...; ``references`` finds them in one object): whatever reads that field
  looks for the old name;
- a ``{name, key}`` selector outside pod specs names it, in the referring resource's
  namespace (plan/selectors.py: a ServiceMonitor's ``basicAuth``, an operator resource's
  ``tlsConfig``, any resource's selector of that shape): the operator or controller that
  reconciles that resource reads the key by name;
- a workload declares it (``cmhash.io/extra-configmaps``, Wave, Reloader lists, kapp) and
  does not reference it in its pod spec: declaring is how a chart says "the app reads
  this through the API" (the README's Argo CD ``argocd-cm``);
- a workload references it in its pod spec and its ServiceAccount may read objects of
  that kind in that namespace through the API (a Role or ClusterRole in the input,
  bound to it, that allows ``get``, ``list`` or ``watch`` on ``configmaps``/``secrets``):
  the application can, and applications that can usually do (Argo CD reads ``argocd-cm``,
  ``argocd-cmd-params-cm``, ``argocd-tls-certs-cm`` by their fixed names).

Every answer is a sentence for the ``not-versioned`` finding, at the field that names the
object when a field does (``ByName.at``), else at the object. RBAC is read as the API
server reads it (k8s.io/kubernetes plugin/pkg/auth/authorizer/rbac/rbac.go
RuleAllows: verbs, apiGroups and resources each match or are ``*``; an empty
``resourceNames`` allows every name).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from typing import NamedTuple

from cmhash.analyze.versioned_names import VERSIONABLE
from cmhash.errors import NodeError
from cmhash.knowledge.namesites import (
    ALL_SERVICE_ACCOUNTS_GROUP,
    ANNOTATIONS,
    BUILTIN_CLUSTER_ROLES,
    RBAC_RESOURCES,
    READ_VERBS,
    SERVICE_ACCOUNT_GROUP_PREFIX,
    SERVICE_ACCOUNT_USER_PREFIX,
    SITES,
    Site,
)
from cmhash.model import ResourceId
from cmhash.parse.events import backend, parse_chunk
from cmhash.parse.resources import Resource, document_resources, pod_template
from cmhash.parse.tree import Node, get, items, scalar, walk
from cmhash.plan import selectors
from cmhash.plan.workplan import WorkloadPlan
from cmhash.read.source import SourceText
from cmhash.read.split import Chunk, split_chunks

_RBAC = re.compile(r"^\s*[\"']?kind[\"']?\s*:\s*[\"']?(?:Cluster)?Role(?:Binding)?[\"']?\s*$", re.M)

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
    site: Site | None  # its row of knowledge/namesites.py (None: a selector)


def _applies(site: Site, res: Resource) -> bool:
    return ("*" in site.kinds or res.kind in site.kinds) and (
        "*" in site.groups or res.group in site.groups
    )


def _targets(site: Site, item: Node) -> list[str]:
    if site.target in VERSIONABLE:
        return [site.target]
    if site.target == "kind":
        kind = scalar(get(item, "kind")) or site.default_kind
        core = scalar(get(item, "group")) in (None, "", "core")
        return [kind] if kind in VERSIONABLE and core else []
    return _rbac_kinds(item)


def _rbac_kinds(rule: Node) -> list[str]:
    """The kinds an RBAC rule's resources name, when it is about the core group."""
    if not _strings(get(rule, "apiGroups")) & {"", "*"}:
        return []
    resources = _strings(get(rule, "resources"))
    if "*" in resources:
        return list(RBAC_RESOURCES.values())
    return [RBAC_RESOURCES[r] for r in sorted(resources) if r in RBAC_RESOURCES]


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
                nodes = [(n, f"{field}.{key}[{i}]") for i, n in enumerate(items(get(item, key)))]
            else:
                node = get(item, site.name)
                nodes = [(node, f"{field}.{site.name}")] if node is not None else []
                if site.default is not None and not (scalar(node) or "").strip():
                    default = site.default.format(name=res.name or "")
                    label = f"{res.kind}/{res.name or ''} {field}.{site.name} (absent: {default})"
                    for kind in kinds:
                        yield NameRef(kind, own_ns, default, label, res.node.start, site)
            for node, where in nodes:
                value = (scalar(node) or "").strip()
                if not value:
                    continue
                ns, name = own_ns, value
                if site.qualified:
                    ns, _, name = value.rpartition("/")
                    ns = ns or own_ns
                elif site.namespace is not None:
                    ns = scalar(get(item, site.namespace)) or own_ns
                label = f"{res.kind}/{res.name or ''} {where}"
                for kind in kinds:
                    yield NameRef(kind, ns, name, label, node.start, site)


class Located(NamedTuple):
    source: SourceText
    ref: NameRef


class Grant(NamedTuple):
    """A ServiceAccount may read ``kind`` in ``namespace`` (None: every namespace)."""

    kind: str
    namespace: str | None
    how: str  # "Role/x (RoleBinding/y)"


def _resources(
    sources: list[SourceText], cut: _Cuts, wanted: re.Pattern[str] | selectors.Wanted
) -> Iterator[Resource]:
    """The resources of every document ``wanted`` finds something in (parsed again:
    the map stage keeps summaries of ConfigMaps, Secrets and workloads only)."""
    for src in sources:
        if not wanted.search(src.text):
            continue
        for index, (start, end) in enumerate(cut.of(src)):
            if wanted.search(src.text[start:end]):
                yield from _parsed(src, index, start, end)


def _parsed(src: SourceText, index: int, start: int, end: int) -> list[Resource]:
    """The resources of one document chunk ([] when it does not parse: the map stage
    reported it)."""
    try:
        text = src.text[start:end]
        return document_resources(src, index, parse_chunk(text, start, backend("fast")))
    except NodeError:
        return []


class _Cuts(dict[int, list[Chunk]]):
    """Each source's document chunks, split when first asked for (most inputs have no
    document this module reads)."""

    def of(self, src: SourceText) -> list[Chunk]:
        if id(src) not in self:
            self[id(src)] = split_chunks(src.text)
        return self[id(src)]


def _strings(node: Node | None) -> set[str]:
    return {s for s in (scalar(n) for n in items(node)) if s is not None}


def _read_kinds(role: Node) -> list[str]:
    """The kinds a Role's rules let one read whole (every name)."""
    out: list[str] = []
    for rule in items(get(role, "rules")):
        if items(get(rule, "resourceNames")):
            continue  # only named objects: ``references``
        if _strings(get(rule, "verbs")) & READ_VERBS:
            out += [k for k in _rbac_kinds(rule) if k not in out]
    return out


def _subjects(subject: Node | None, here: str | None, default_ns: str) -> list[tuple[str, str]]:
    """(namespace, ServiceAccount; "*": every one) a binding's subject stands for: a
    ServiceAccount, its user name (system:serviceaccount:NS:NAME), or the groups of
    ServiceAccounts (system:serviceaccounts:NS, system:serviceaccounts)."""
    kind, name = scalar(get(subject, "kind")), scalar(get(subject, "name")) or ""
    if kind == "ServiceAccount":
        return [(scalar(get(subject, "namespace")) or here or default_ns, name)]
    if kind == "User" and name.startswith(SERVICE_ACCOUNT_USER_PREFIX):
        ns, _, sa = name.removeprefix(SERVICE_ACCOUNT_USER_PREFIX).partition(":")
        return [(ns, sa)] if sa else []
    if kind == "Group" and name.startswith(SERVICE_ACCOUNT_GROUP_PREFIX):
        return [(name.removeprefix(SERVICE_ACCOUNT_GROUP_PREFIX), "*")]
    if kind == "Group" and name == ALL_SERVICE_ACCOUNTS_GROUP:
        return [("*", "*")]
    return []


def _grants(resources: list[Resource], default_ns: str) -> dict[tuple[str, str], list[Grant]]:
    """(namespace, ServiceAccount) -> what it may read, from the input's RBAC."""
    roles: dict[tuple[str, str | None, str], list[str]] = {}  # (kind, ns, name) -> kinds
    for res in resources:
        if res.kind in ("Role", "ClusterRole") and res.group == "rbac.authorization.k8s.io":
            ns = None if res.kind == "ClusterRole" else res.namespace or default_ns
            roles[(res.kind, ns, res.name or "")] = _read_kinds(res.node)
    out: dict[tuple[str, str], list[Grant]] = {}
    for res in resources:
        if res.kind not in ("RoleBinding", "ClusterRoleBinding"):
            continue
        ref = get(res.node, "roleRef")
        role_kind, role_name = scalar(get(ref, "kind")) or "", scalar(get(ref, "name")) or ""
        here = res.namespace or default_ns if res.kind == "RoleBinding" else None
        role_ns = here if role_kind == "Role" else None
        kinds = roles.get((role_kind, role_ns, role_name))
        if kinds is None and role_kind == "ClusterRole":
            kinds = BUILTIN_CLUSTER_ROLES.get(role_name, [])
        how = f"{role_kind}/{role_name} bound by {res.kind}/{res.name}"
        for subject in items(get(res.node, "subjects")):
            for who in _subjects(subject, here, default_ns):
                for kind in kinds or []:
                    out.setdefault(who, []).append(Grant(kind, here, how))
    return out


def _service_account(plan: WorkloadPlan, chunk: tuple[int, int] | None) -> str:
    """The ServiceAccount a workload's pods run as (``default`` when none is named)."""
    info = plan.info
    for res in _parsed(plan.source, info.doc, *chunk) if chunk is not None else ():
        if res.kind == info.kind.kind and res.name == info.name:
            spec = get(pod_template(res, info.kind)[0], "spec")
            named = scalar(get(spec, "serviceAccountName")) or scalar(get(spec, "serviceAccount"))
            return named or "default"
    return "default"


def namespace_at(src: SourceText, offset: int, default_ns: str) -> str | None:
    """The namespace of the resource written at ``offset`` ("" when it names none and no
    default is given); None when no resource holds it (a List's frame, a bad document)."""
    for index, (start, end) in enumerate(split_chunks(src.text)):
        if not start <= offset < end:
            continue
        for res in _parsed(src, index, start, end):
            if res.node.start <= offset < res.node.end:
                return res.namespace or default_ns
    return None


def same_namespace(referrer: str, target: str) -> bool:
    """Whether a field of an object in ``referrer`` may name one in ``target``: the same
    namespace, or one of them names none and none is given (a chart's extra objects
    beside its own namespaced ones: both land in the release namespace when Helm installs
    them). Unsure is read as yes: keeping a name is safe, breaking a reader is not."""
    return referrer == target or not referrer or not target


class ByName:
    """Why each object is read by name, the non-pod fields that name it, and where the
    first of them is (the not-versioned note's place)."""

    def __init__(self) -> None:
        self.reasons: dict[ResourceId, str] = {}
        self.refs: dict[ResourceId, list[Located]] = {}
        self.at: dict[ResourceId, Located] = {}

    def add(self, key: ResourceId, why: str, at: Located | None = None) -> None:
        if key not in self.reasons and at is not None:
            self.at[key] = at
        self.reasons.setdefault(key, why)

    def named(self, key: ResourceId, at: Located, why: str) -> None:
        self.refs.setdefault(key, []).append(at)
        self.add(key, why, at)


def read_by_name(
    sources: list[SourceText],
    objects: Iterable[ResourceId],
    plans: list[WorkloadPlan],
    default_ns: str,
) -> ByName:
    out = ByName()
    cut = _Cuts()
    keys = list(objects)
    by_name: dict[tuple[str, str], list[ResourceId]] = {}
    for k in keys:
        by_name.setdefault((k.kind, k.name), []).append(k)
    # 1. fields outside pod specs
    for res in _resources(sources, cut, WANTED):
        for ref in references(res, default_ns):
            for k in by_name.get((ref.kind, ref.name), []):
                if ref.namespace is None or same_namespace(ref.namespace, k.namespace):
                    why = f"{ref.by} names it, and what reads that field looks for this name"
                    out.named(k, Located(res.source, ref), why)
    # 1b. {name, key} selectors outside pod specs, in the resource's own namespace
    if by_name:
        for res, f in selectors.all_found(_resources(sources, cut, selectors.WANTED), plans):
            ns = f.namespace or res.namespace or default_ns
            for kind in f.targets:
                for k in by_name.get((kind, f.name), []):
                    if same_namespace(ns, k.namespace):
                        by = f"{res.kind}/{res.name or ''} {f.field}"
                        ref = NameRef(kind, ns, f.name, by, f.offset, None)
                        why = (
                            f"{by} selects a key of it ({f.how}), and what reads that "
                            "field looks for this name"
                        )
                        out.named(k, Located(res.source, ref), why)
    # 2. declared, not in the pod spec
    for plan in plans:
        mounted = {r.entry.id for r in plan.resolved if r.entry and r.ref.how != "declared"}
        for r in plan.resolved:
            if r.entry is not None and r.ref.how == "declared" and r.entry.id not in mounted:
                out.add(
                    r.entry.id,
                    f"{plan.label} declares it ({r.ref.declared_by}) without a pod spec "
                    "reference, so it reads it by name through the API",
                )
    # 2b. an operator mounts what its resource lists at a path that holds the name
    # (the Prometheus operator: /etc/prometheus/secrets/<name>/): the configuration that
    # reads the files names them (knowledge/operators.py)
    for plan in plans:
        if plan.info.kind.operator is None:
            continue
        for r in plan.resolved:
            if r.entry is not None and r.ref.how == "operator":
                out.add(
                    r.entry.id,
                    f"{plan.label} lists it in {r.ref.field.split('[')[0]}, which "
                    f"{plan.info.kind.operator} mounts at a path that holds its name",
                )
    # 3. a user that may read its kind through the API
    rbac = list(_resources(sources, cut, _RBAC))
    grants = _grants(rbac, default_ns) if rbac else {}
    if grants:
        wanted_ns = {ns for ns, _ in grants}
        for plan in plans:
            used = {r.entry.id for r in plan.resolved if r.entry is not None}
            if not used or not ({plan.namespace, "*"} & wanted_ns):  # its account is there
                continue
            per = cut.of(plan.source)
            chunk = per[plan.info.doc] if plan.info.doc < len(per) else None
            account = _service_account(plan, chunk)
            mine = [
                g
                for who in ((plan.namespace, account), (plan.namespace, "*"), ("*", "*"))
                for g in grants.get(who, [])
            ]
            for key in sorted(used):
                for g in mine:
                    if g.kind == key.kind and g.namespace in (None, key.namespace):
                        plural = "ConfigMaps" if key.kind == "ConfigMap" else "Secrets"
                        out.add(
                            key,
                            f"{plan.label} may read {plural} through the API ({g.how}), "
                            "so it may read it by name",
                        )
                        break
    return out

"""An export of cluster objects, as ``kubectl get ... -o yaml`` (or ``-o json``) writes it,
read for ``cmhash lock`` (analyze/fingerprint.py): a ``List`` of objects, or a stream of
them, each once, each with what the API server writes (``metadata.resourceVersion``).

What kubectl never writes is refused with ``file:line:col`` and what to do, never a
guess: a document that is not a mapping, a List inside a List, an object twice, an
anchor, an alias or a tag, an object with no ``apiVersion``, ``kind``, name or
``resourceVersion`` (a manifest from Git, say, which is not what the cluster holds), a
namespaced object the lock reads with no namespace, a name, namespace or
``resourceVersion`` that is not a string. An
export holds Secrets: no message ever quotes its text (``NodeError.public``).
"""

# No "from __future__ import annotations": typing compiles string NamedTuple fields at import

from typing import NamedTuple

from cmhash.errors import InputError, NodeError
from cmhash.knowledge.kinds import group_of, is_list
from cmhash.knowledge.lockfields import DNS_LABEL, DNS_SUBDOMAIN, NAMESPACED, valid
from cmhash.model import ResourceId
from cmhash.parse.events import backend, parse_chunk
from cmhash.parse.k8syaml import resolves_to_non_string
from cmhash.parse.resources import Resource
from cmhash.parse.tree import ALIAS, MAP, SCALAR, SEQ, Node, entries, get, get_path, items, scalar
from cmhash.read.source import SourceText
from cmhash.read.split import refuse_ambiguous, split_chunks

WHAT_TO_DO = "export with kubectl get ... -o yaml (a List, or one object per document)"
_NOT_A_NAME = "{what} is not a name the API server accepts: not what the cluster holds"


class ExportObject(NamedTuple):
    group: str
    version: str
    kind: str
    namespace: str  # "" for a cluster-scoped object
    name: str
    node: Node
    resource: Resource  # (what analyze/configs.py reads a ConfigMap's or Secret's data from)
    annotations: dict[str, str]

    @property
    def id(self) -> ResourceId:
        return ResourceId(self.group, self.kind, self.namespace, self.name)

    @property
    def has_data(self) -> bool:
        """A ConfigMap or Secret exported with its data (not only its metadata)."""
        node = self.node
        return any(get(node, k) is not None for k in ("data", "binaryData", "stringData"))


def _string(node: Node | None, what: str, at: int) -> str:
    text = scalar(node)
    if node is None or node.kind != SCALAR or not text:
        raise NodeError(f"an object with no {what}: kubectl get writes it; {WHAT_TO_DO}", at)
    _not_a_number(node, what)
    return text


def _not_a_number(node: Node, what: str) -> None:
    """A plain scalar that YAML reads as a number, a boolean or null (``name: 12345``):
    the API server's strings are written quoted by kubectl (it writes JSON's types)."""
    if node.style is None and resolves_to_non_string(str(node.value)):
        raise NodeError(
            f"{what} is not a string (kubectl get writes it quoted): not what the "
            f"cluster holds; {WHAT_TO_DO}",
            node.start,
        )


def _refuse_written_by_hand(root: Node) -> None:
    """Anchors, aliases and tags: kubectl never writes them (its YAML comes from JSON)."""
    stack = [root]
    while stack:
        node = stack.pop()
        if node.kind == ALIAS or node.anchor is not None or node.tag is not None:
            what = "an alias" if node.kind == ALIAS else ("an anchor" if node.anchor else "a tag")
            raise NodeError(f"{what}: kubectl never writes one; {WHAT_TO_DO}", node.start)
        if node.kind == SEQ:  # (reversed: the first in the text is met first)
            stack.extend(reversed(node.value))
        elif node.kind == MAP:
            for k, v in reversed(node.value):
                stack.extend((v, k))


def _object(src: SourceText, doc: int, node: Node, in_list: bool) -> list[ExportObject]:
    if node.kind != MAP:
        raise NodeError(f"not an object (a mapping); {WHAT_TO_DO}", node.start)
    entries(node)  # (duplicate keys refused here, with their position)
    api = _string(get(node, "apiVersion"), "apiVersion", node.start)
    kind = _string(get(node, "kind"), "kind", node.start)
    if is_list(api, kind) and kind != "ResourceList":
        if in_list:
            raise NodeError(
                f"a List inside a List: kubectl never writes one; {WHAT_TO_DO}", node.start
            )
        listed = get(node, "items")
        if listed is not None and not listed.is_null and listed.kind != SEQ:
            raise NodeError(f"'items' of a {kind} must be a sequence", listed.start)
        return [o for item in items(listed) for o in _object(src, doc, item, True)]
    meta = get(node, "metadata")
    if meta is None or meta.kind != MAP:
        raise NodeError(
            f"an object with no metadata: kubectl get writes it; {WHAT_TO_DO}", node.start
        )
    name_node = get(meta, "name")
    name = _string(name_node, "metadata.name", meta.start)
    ns_node = get(meta, "namespace")
    namespace = scalar(ns_node) or "" if ns_node is not None else ""
    if not namespace and (group_of(api), kind) in NAMESPACED:
        raise NodeError(
            f"a {kind} with no metadata.namespace: kubectl get writes the namespace of "
            f"every namespaced object; {WHAT_TO_DO}",
            meta.start,
        )
    if namespace and ns_node is not None:
        _not_a_number(ns_node, "metadata.namespace")
    if not valid(name, DNS_SUBDOMAIN) and (kind, api) in (("Secret", "v1"), ("ConfigMap", "v1")):
        raise NodeError(_NOT_A_NAME.format(what="metadata.name"), name_node.start)  # type: ignore[union-attr]
    if namespace and not valid(namespace, DNS_LABEL):
        raise NodeError(_NOT_A_NAME.format(what="metadata.namespace"), ns_node.start)  # type: ignore[union-attr]
    rv = get(meta, "resourceVersion")
    if rv is None or not scalar(rv):
        raise NodeError(
            "an object with no metadata.resourceVersion: not what the cluster holds (a "
            f"manifest from Git?); {WHAT_TO_DO}",
            meta.start,
        )
    _not_a_number(rv, "metadata.resourceVersion")
    annotations = (
        {k: v for k, (_, vn) in entries(a).items() if (v := scalar(vn)) is not None}
        if (a := get_path(meta, ("annotations",))) is not None and a.kind == MAP
        else {}
    )
    res = Resource(src, node, api, kind, name, namespace or None, doc)
    version = api.rpartition("/")[2]
    return [ExportObject(group_of(api), version, kind, namespace, name, node, res, annotations)]


def export_objects(sources: list[SourceText]) -> list[ExportObject]:
    """Every object of the exports, in order; InputError (exit 2) for what kubectl never
    writes, an object twice among them included."""
    be = backend("fast")
    out: list[ExportObject] = []
    seen: dict[ResourceId, ExportObject] = {}
    for src in sources:
        text = src.text
        documents = 0
        for doc, chunk in enumerate(split_chunks(text)):
            try:
                part = text[chunk.start : chunk.end]
                refuse_ambiguous(part, chunk.start)
                for root in parse_chunk(part, chunk.start, be):
                    if root.is_null:
                        continue
                    documents += 1
                    _refuse_written_by_hand(root)
                    for obj in _object(src, doc, root, False):
                        prev = seen.get(obj.id)
                        if prev is not None:
                            line = prev.resource.source.position(prev.node.start)[0]
                            where = f"{prev.resource.source.display}:{line}"
                            raise NodeError(
                                f"{obj.kind} {obj.namespace}/{obj.name} is in the export twice "
                                f"(also at {where}): kubectl get writes each object once; "
                                "export each namespace once",
                                obj.node.start,
                            )
                        seen[obj.id] = obj
                        out.append(obj)
            except NodeError as exc:
                raise src.error(exc.public, exc.offset) from None
        if not documents:  # (kubectl writes a List even when it finds nothing)
            raise InputError(
                "the export is empty: kubectl get -o yaml writes a List even when it finds "
                "nothing (did the export fail?)",
                path=src.display,
                line=1,
                column=1,
            )
    return out

"""Documents -> resources (List items unwrapped), and the two lookups every stage shares:
the resources of a document, and a workload's pod template."""

# No "from __future__ import annotations": typing compiles string NamedTuple fields at import

import sys
from collections.abc import Callable
from typing import NamedTuple

from cmhash.errors import NodeError
from cmhash.knowledge.kinds import WorkloadKind, group_of, is_list
from cmhash.native import cext
from cmhash.parse.k8syaml import plain_bool
from cmhash.parse.tree import (
    ALIAS,
    MAP,
    SCALAR,
    SEQ,
    Node,
    deref,
    get,
    get_path,
    items,
    own,
    scalar,
)
from cmhash.read.source import SourceText

SKIP_ANNOTATION = "cmhash.io/skip"
ENABLED_ANNOTATION = "cmhash.io/enabled"
_BOOL_TAG = "tag:yaml.org,2002:bool"


def bool_field(parent: Node | None, key: str, where: str) -> bool:
    """A boolean field (``optional``, ``paused``, ``immutable``) read as Kubernetes reads
    it: go-yaml's boolean spellings (``yes``, ``on``, ``True``...); absent or null is
    false; anything else (a quoted "true", a number) the API server refuses, so do we."""
    node = get(parent, key)
    if node is None or node.is_null:
        return False
    if node.kind == SCALAR and (node.tag == _BOOL_TAG or (node.style is None and node.tag is None)):
        value = plain_bool(node.value)  # (a !!bool one's text is a boolean word, quoted or not)
        if value is not None:
            return value
    raise NodeError(
        f"'{where}{key}' must be true or false (unquoted); Kubernetes refuses anything else here",
        node.start,
    )


class Resource(NamedTuple):
    source: SourceText
    node: Node
    api_version: str
    kind: str
    name: str | None
    namespace: str | None  # as written
    doc: int  # index of the document chunk in its source
    generate_name: str | None = None  # metadata.generateName, when there is no name

    @property
    def group(self) -> str:
        return group_of(self.api_version)

    @property
    def label(self) -> str:
        name = self.name or (f"{self.generate_name}*" if self.generate_name else "")
        return f"{self.kind}/{name}" + (f" -n {self.namespace}" if self.namespace else "")

    def annotations(self) -> Node | None:
        return get_path(self.node, ("metadata", "annotations"))

    def annotation(self, key: str) -> str | None:
        return scalar(get(self.annotations(), key))

    @property
    def skipped(self) -> bool:
        return flag_on(self.annotations(), SKIP_ANNOTATION)

    @property
    def opted_in(self) -> bool:
        return flag_on(self.annotations(), ENABLED_ANNOTATION)


def flag_on(annotations: Node | None, key: str) -> bool:
    """Whether an annotations mapping says ``key: "true"`` (any case)."""
    return annotations is not None and (scalar(get(annotations, key)) or "").lower() == "true"


def str_field(node: Node, key: str) -> str | None:
    value = get(node, key)  # (never an alias: get reads through them)
    if value is None:
        return None
    text = scalar(value)  # None for null, a mapping or a sequence
    if text is None and value.kind != SCALAR:
        raise NodeError(f"'{key}' must be a string", value.start)
    return text


def resources_of(source: SourceText, doc: int, root: Node) -> list[Resource]:
    """One resource per document, or one per item of a ``List``/``*List``."""
    root_d = root if root.kind == MAP else deref(root)
    if root_d is None or (root_d.kind != MAP and root_d.is_null):
        return []
    if root_d.kind != MAP:
        raise NodeError("a Kubernetes manifest must be a mapping", root.start)
    kind = str_field(root_d, "kind")
    if kind is None:
        raise NodeError("document has no 'kind'", root.start)
    api_version = str_field(root_d, "apiVersion") or ""
    if is_list(api_version, kind):
        listed = deref(get(root_d, "items"))
        if listed is not None and not listed.is_null and listed.kind != SEQ:
            raise NodeError(f"'items' of a {kind} must be a sequence", listed.start)
        return [r for item in items(listed) for r in resources_of(source, doc, item)]
    meta = get(root_d, "metadata")
    if meta is not None and not meta.is_null and meta.kind != MAP:
        raise NodeError("'metadata' must be a mapping", meta.start)
    name = namespace = generate_name = None
    if meta is not None and meta.kind == MAP:
        name = str_field(meta, "name")
        namespace = str_field(meta, "namespace")
        if not name:
            generate_name = str_field(meta, "generateName") or None
    # interned: a big stream repeats these in every object, and summaries outlive the parse
    return [
        Resource(
            source,
            root_d,
            sys.intern(api_version),
            sys.intern(kind),
            name,
            namespace and sys.intern(namespace),
            doc,
            generate_name,
        )
    ]


def document_resources(source: SourceText, doc: int, roots: list[Node]) -> list[Resource]:
    """Every resource of one document chunk, in order (its position is its index here).
    (In C from native/_ctree.c for the common case; resources_of is the reference.)"""
    if _C_RESOURCES is not None:
        found: list[Resource] = _C_RESOURCES(source, doc, roots)
        if found is not NotImplemented:
            return found
    return [r for root in roots for r in resources_of(source, doc, root)]


_C_RESOURCES: Callable[[SourceText, int, list[Node]], list[Resource]] | None = cext.function(
    "document_resources", "bind_resources", Resource
)


def pod_template(
    res: Resource, kind: WorkloadKind, *, owned: bool = False
) -> tuple[Node | None, Node | None]:
    """The pod template of a workload (the object itself for a bare Pod) and the key node
    it hangs under (None at the document root); (None, None) when it has none.

    ``owned``: the template is about to be edited, so every step must be written in this
    very mapping: a step that comes from a ``<<`` merge or is an alias is refused."""
    node = res.node
    key: Node | None = None
    for step in kind.template_path:
        child = get(node, step)
        if child is None:
            return None, None
        if not owned:
            node = child
            continue
        pair = own(node, step)
        if pair is None:
            raise NodeError(
                f"cannot annotate {res.label}: '{step}' comes from a '<<' merge; "
                "write it out in full",
                node.start,
            )
        key, raw = pair
        if raw.kind == ALIAS:
            raise NodeError(
                f"cannot annotate {res.label}: '{step}' is an alias (*{raw.anchor}); expand it",
                raw.start,
                public=f"cannot annotate {res.label}: '{step}' is an alias; expand it",
            )
        node = raw
    return (node, key) if node.kind == MAP else (None, None)


def require_name(res: Resource) -> str:
    if not res.name:
        raise NodeError(f"{res.kind} has no metadata.name", res.node.start)
    return res.name

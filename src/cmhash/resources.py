"""Documents -> resources (List items unwrapped) and ConfigMap/Secret content."""

from __future__ import annotations

import base64
import binascii
import sys
from typing import NamedTuple

from cmhash.errors import NodeError
from cmhash.hashing import Content
from cmhash.k8syaml import plain_bool, resolves_to_non_string
from cmhash.kinds import group_of, is_list
from cmhash.source import SourceText
from cmhash.yamltree import MAP, SCALAR, SEQ, Node, deref, entries, get, get_path, items, scalar

SKIP_ANNOTATION = "cmhash.io/skip"
ENABLED_ANNOTATION = "cmhash.io/enabled"
_BOOL_TAG = "tag:yaml.org,2002:bool"

def _non_string_plain(node: Node) -> bool:
    """A plain scalar that Kubernetes' decoder turns into a number, boolean or null."""
    return node.style is None and node.tag is None and resolves_to_non_string(node.value)


def bool_field(parent: Node | None, key: str, where: str) -> bool:
    """A boolean field (``optional``, ``paused``, ``immutable``) read as Kubernetes reads
    it: go-yaml's boolean spellings (``yes``, ``on``, ``True``...); absent or null is
    false; anything else (a quoted "true", a number) the API server refuses, so do we."""
    node = get(parent, key)
    if node is None or node.is_null:
        return False
    if node.kind == SCALAR and node.style is None and node.tag in (None, _BOOL_TAG):
        value = plain_bool(node.value)
        if value is not None:
            return value
    raise NodeError(f"'{where}{key}' must be true or false (unquoted); Kubernetes refuses "
                    "anything else here", node.start)


class Resource(NamedTuple):
    source: SourceText
    node: Node
    api_version: str
    kind: str
    name: str | None
    namespace: str | None  # as written
    doc: int               # index of the document chunk in its source
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
        return (self.annotation(SKIP_ANNOTATION) or "").lower() == "true"

    @property
    def opted_in(self) -> bool:
        return (self.annotation(ENABLED_ANNOTATION) or "").lower() == "true"


def _str_field(node: Node, key: str) -> str | None:
    value = get(node, key)
    if value is None or value.is_null:
        return None
    if value.kind != SCALAR:
        raise NodeError(f"'{key}' must be a string", value.start)
    return str(value.value)


def resources_of(source: SourceText, doc: int, root: Node) -> list[Resource]:
    """One resource per document, or one per item of a ``List``/``*List``."""
    root_d = deref(root)
    if root_d is None or root_d.is_null:
        return []
    if root_d.kind != MAP:
        raise NodeError("a Kubernetes manifest must be a mapping", root.start)
    kind = _str_field(root_d, "kind")
    if kind is None:
        raise NodeError("document has no 'kind'", root.start)
    api_version = _str_field(root_d, "apiVersion") or ""
    if is_list(api_version, kind):
        listed = deref(get(root_d, "items"))
        if listed is not None and not listed.is_null and listed.kind != SEQ:
            raise NodeError(f"'items' of a {kind} must be a sequence", listed.start)
        out = []
        for item in items(listed):
            out.extend(resources_of(source, doc, item))
        return out
    meta = get(root_d, "metadata")
    if meta is not None and not meta.is_null and meta.kind != MAP:
        raise NodeError("'metadata' must be a mapping", meta.start)
    name = namespace = generate_name = None
    if meta is not None and meta.kind == MAP:
        name = _str_field(meta, "name")
        namespace = _str_field(meta, "namespace")
        if not name:
            generate_name = _str_field(meta, "generateName") or None
    # interned: a big stream repeats these in every object, and summaries outlive the parse
    return [Resource(source, root_d, sys.intern(api_version), sys.intern(kind), name,
                     namespace and sys.intern(namespace), doc, generate_name)]


def require_name(res: Resource) -> str:
    if not res.name:
        raise NodeError(f"{res.kind} has no metadata.name", res.node.start)
    return res.name


def _string_map(parent: Node, field: str, *, what: str) -> dict[str, tuple[str, Node]]:
    node = get(parent, field)
    if node is None or node.is_null:
        return {}
    if node.kind != MAP:
        raise NodeError(f"{what} '{field}' must be a mapping of strings", node.start)
    out = {}
    for key, (_, v) in entries(node).items():
        val = deref(v)
        assert val is not None
        if val.kind != SCALAR:
            raise NodeError(f"{what} '{field}.{key}' must be a string", v.start)
        if val.is_null:
            out[key] = ("", val)
            continue
        if _non_string_plain(val):
            raise NodeError(f"{what} '{field}.{key}' is not a string in Kubernetes' YAML; "
                            "quote the value", v.start)
        out[key] = (str(val.value), val)
    return out


def _decode_b64(text: str, node: Node, what: str) -> bytes:
    compact = "".join(text.split())  # line-wrapped base64 is valid (the API skips newlines)
    try:
        return base64.b64decode(compact, validate=True)
    except (binascii.Error, ValueError):
        raise NodeError(f"{what} is not valid base64", node.start) from None


def config_content(res: Resource) -> Content:
    """The bytes a pod sees. Raises NodeError (never with a value in the message)."""
    name = require_name(res)
    node = res.node
    entries_: dict[str, bytes] = {}
    if res.kind == "ConfigMap":
        for key, (text, _) in _string_map(node, "data", what="ConfigMap").items():
            entries_[key] = text.encode("utf-8")
        for key, (text, vnode) in _string_map(node, "binaryData", what="ConfigMap").items():
            if key in entries_:
                raise NodeError(f"key {key!r} is in both data and binaryData", vnode.start)
            entries_[key] = _decode_b64(text, vnode, f"binaryData key {key!r}")
        return Content("ConfigMap", name, entries_)
    for key, (text, vnode) in _string_map(node, "data", what="Secret").items():
        entries_[key] = _decode_b64(text, vnode, f"Secret data key {key!r}")
    for key, (text, _) in _string_map(node, "stringData", what="Secret").items():
        entries_[key] = text.encode("utf-8")  # stringData wins, as on the API server
    secret_type = _str_field(node, "type") or "Opaque"
    return Content("Secret", name, entries_, secret_type)


def is_immutable(res: Resource) -> bool:
    return bool_field(res.node, "immutable", "")

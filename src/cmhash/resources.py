"""Documents -> resources (List items unwrapped) and ConfigMap/Secret content."""

from __future__ import annotations

import base64
import binascii
import re
import sys
from typing import NamedTuple

from cmhash.errors import NodeError
from cmhash.hashing import Content
from cmhash.kinds import group_of
from cmhash.source import SourceText
from cmhash.yamltree import MAP, SCALAR, SEQ, Node, deref, entries, get, get_path, items, scalar

SKIP_ANNOTATION = "cmhash.io/skip"

# Plain scalars that Kubernetes' YAML 1.1 decoder turns into non-strings: such a
# value in a map[string]string field (ConfigMap data, annotations) is rejected.
_YAML11_NON_STRING = re.compile(
    r"""^(?:y|Y|yes|Yes|YES|n|N|no|No|NO|true|True|TRUE|false|False|FALSE
    |on|On|ON|off|Off|OFF
    |[-+]?0b[01_]+|[-+]?0x[0-9a-fA-F_]+|[-+]?0o?[0-7_]+
    |[-+]?(?:[0-9][0-9_]*(?:\.[0-9_]*)?|\.[0-9_]+)(?:[eE][-+]?[0-9]+)?
    |[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+(?:\.[0-9_]*)?
    |[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$""", re.VERBOSE)
_HAS_DIGIT = re.compile(r"[0-9]")
_WORDS = frozenset("y Y yes Yes YES n N no No NO true True TRUE false False FALSE "
                   "on On ON off Off OFF .inf .Inf .INF -.inf +.inf .nan .NaN .NAN".split())


def _non_string_plain(node: Node) -> bool:
    if node.style is not None or node.tag is not None:
        return False
    v = node.value
    if v in _WORDS:
        return True
    return bool(_HAS_DIGIT.search(v)) and bool(_YAML11_NON_STRING.match(v))


class Resource(NamedTuple):
    source: SourceText
    node: Node
    api_version: str
    kind: str
    name: str | None
    namespace: str | None  # as written
    doc: int               # index of the document chunk in its source

    @property
    def group(self) -> str:
        return group_of(self.api_version)

    @property
    def label(self) -> str:
        return f"{self.kind}/{self.name}" + (f" -n {self.namespace}" if self.namespace else "")

    def annotations(self) -> Node | None:
        return get_path(self.node, ("metadata", "annotations"))

    def annotation(self, key: str) -> str | None:
        return scalar(get(self.annotations(), key))

    @property
    def skipped(self) -> bool:
        return (self.annotation(SKIP_ANNOTATION) or "").lower() == "true"


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
    listed = deref(get(root_d, "items"))
    if kind == "List" and listed is not None and not listed.is_null and listed.kind != SEQ:
        raise NodeError("'items' of a List must be a sequence", listed.start)
    if kind.endswith("List") and listed is not None and listed.kind == SEQ:
        out = []
        for item in items(listed):
            out.extend(resources_of(source, doc, item))
        return out
    meta = get(root_d, "metadata")
    if meta is not None and not meta.is_null and meta.kind != MAP:
        raise NodeError("'metadata' must be a mapping", meta.start)
    name = _str_field(meta, "name") if meta is not None and meta.kind == MAP else None
    namespace = _str_field(meta, "namespace") if meta is not None and meta.kind == MAP else None
    # interned: a big stream repeats these in every object, and summaries outlive the parse
    return [Resource(source, root_d, sys.intern(api_version), sys.intern(kind), name,
                     namespace and sys.intern(namespace), doc)]


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
    return (scalar(get(res.node, "immutable")) or "").lower() == "true"

"""What a pod sees of a ConfigMap or Secret: ``data``, decoded ``binaryData``, a Secret's
decoded ``data`` with ``stringData`` laid over it, and its ``type``. Values are read as
Kubernetes reads them (k8syaml.py); no message ever quotes a value."""

from __future__ import annotations

import binascii

from cmhash.analyze.hashing import Content
from cmhash.errors import NodeError
from cmhash.parse.k8syaml import resolves_to_non_string
from cmhash.parse.resources import Resource, bool_field, require_name, str_field
from cmhash.parse.tree import MAP, SCALAR, Node, deref, entries, get, scalar


def _non_string_plain(node: Node) -> bool:
    """A plain scalar that Kubernetes' decoder turns into a number, boolean or null."""
    return node.style is None and node.tag is None and resolves_to_non_string(node.value)


def _string_map(parent: Node, field: str, *, what: str) -> dict[str, tuple[str, Node]]:
    node = get(parent, field)
    if node is None or node.is_null:
        return {}
    if node.kind != MAP:
        raise NodeError(f"{what} '{field}' must be a mapping of strings", node.start)
    out = {}
    for key, (_, v) in entries(node).items():
        val = v if v.kind == SCALAR else deref(v)
        assert val is not None
        if val.kind != SCALAR:
            raise NodeError(f"{what} '{field}.{key}' must be a string", v.start)
        text = scalar(val)  # None: null
        if text is None:
            out[key] = ("", val)
            continue
        if val.style is None and _non_string_plain(val):
            raise NodeError(
                f"{what} '{field}.{key}' is not a string in Kubernetes' YAML; quote the value",
                v.start,
            )
        out[key] = (text, val)
    return out


def _decode_b64(text: str, node: Node, what: str) -> bytes:
    # Go's decoder, which the API server uses, skips only line breaks (encoding/base64:
    # decodeQuantum ignores '\r' and '\n'): a space or tab is an error there, and so
    # here. (A plain scalar wrapped over lines is folded with spaces: use a | block.)
    import base64  # (binaryData and Secret data only)

    compact = text.replace("\r", "").replace("\n", "")
    try:
        return base64.b64decode(compact, validate=True)
    except (binascii.Error, ValueError):
        blank = " " in compact or "\t" in compact
        why = " (it holds a space or tab; the API server allows only line breaks)" * blank
        raise NodeError(f"{what} is not valid base64{why}", node.start) from None


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
    secret_type = str_field(node, "type") or "Opaque"
    return Content("Secret", name, entries_, secret_type)


def is_immutable(res: Resource) -> bool:
    return bool_field(res.node, "immutable", "")

"""The map stage's summaries of ConfigMaps, Secrets and Secret sources (ConfigInfo): what
a pod sees of each, whether an annotation leaves it out of every checksum, what it says
about being versioned and the candidate edits ``--versioned`` would make (versioned.py);
a source object (knowledge/sources.py) stands for each object it produces, and for
itself when pods reference it by its own kind.

What a pod sees of a ConfigMap or Secret: ``data``, decoded ``binaryData``, a Secret's
decoded ``data`` with ``stringData`` laid over it, and its ``type``. Values are read as
Kubernetes reads them (k8syaml.py); no message ever quotes a value."""

from __future__ import annotations

import functools

from cmhash.analyze.annotations import labels_of, read_annotations
from cmhash.analyze.declared import config_excluded, reloader_match, restart_reason
from cmhash.analyze.hashing import Content
from cmhash.analyze.options import AnalyzeOptions
from cmhash.analyze.summaries import ConfigInfo
from cmhash.analyze.versioned import (
    name_spot,
    peer_keep_original,
    version_edits,
    version_window,
    versioned_flag,
)
from cmhash.edit.splice import Edit
from cmhash.errors import NodeError
from cmhash.knowledge.sources import SecretSource
from cmhash.parse.k8syaml import (
    HINTED,
    TagError,
    go_base64,
    key_string,
    resolves_to_non_string,
    tagged_value,
)
from cmhash.parse.resources import Resource, bool_field, require_name, str_field
from cmhash.parse.tree import ALIAS, MAP, SCALAR, Node, deref, entries, get, get_path
from cmhash.read.split import may_hold_secret

_BINARY_TAG = "tag:yaml.org,2002:binary"


def _key(knode: Node, written: str, what: str, field: str) -> str:
    """A data key as kubectl sends it: as written, unless it resolves to another type
    (``yes`` is ``true``, ``0x1F`` is ``31``) or has a tag (k8syaml.key_string)."""
    k = knode if knode.kind != ALIAS else deref(knode) or knode
    if k.tag is None and (k.style is not None or (written and written[0] not in HINTED)):
        return written  # (most keys: no lookup)
    try:
        return key_string(k.tag, written, k.style is None)
    except TagError as exc:
        raise NodeError(f"{what} '{field}': {exc.message}", k.start) from None


def _string_map(
    parent: Node, field: str, *, what: str, base64: bool = False
) -> dict[str, tuple[str, Node]]:
    """A map of strings (``data``, ``stringData``; ``base64``: ``binaryData``, a Secret's
    ``data``), key -> (the string kubectl sends, its node). A value or key with a tag is
    read as kubectl reads it (k8syaml.py): ``!!binary`` decoded, ``!!str`` the text,
    ``!!int`` a number (refused, as a plain 8080 is). ``!!binary`` where Kubernetes
    expects base64 is refused: kubectl sends the decoded bytes there, which the API
    server would decode again."""
    node = get(parent, field)
    if node is None or node.is_null:
        return {}
    if node.kind != MAP:
        raise NodeError(f"{what} '{field}' must be a mapping of strings", node.start)
    out: dict[str, tuple[str, Node]] = {}
    for written, (knode, v) in entries(node).items():
        key = _key(knode, written, what, field)
        if key in out:
            raise NodeError(
                f"{what} '{field}': {written!r} is the key {key!r} for Kubernetes, "
                "which this mapping already has",
                knode.start,
            )
        val = v if v.kind == SCALAR else deref(v)
        assert val is not None
        if val.kind != SCALAR:
            raise NodeError(f"{what} '{field}.{key}' must be a string", v.start)
        if val.tag is not None:
            out[key] = (_tagged_string(val, f"{what} '{field}.{key}'", base64), val)
            continue
        if val.is_null:
            out[key] = ("", val)
            continue
        text = str(val.value)  # (scalar(val): a scalar, read through its alias already)
        if val.style is None and resolves_to_non_string(text):  # (and no tag: above)
            raise NodeError(
                f"{what} '{field}.{key}' is not a string in Kubernetes' YAML; quote the value",
                v.start,
            )
        out[key] = (text, val)
    return out


def _tagged_string(val: Node, where: str, base64: bool) -> str:
    """The string kubectl sends for a tagged value ("" for null, as the API server stores
    it); a value that is no string, and ``!!binary`` in a base64 field, refused."""
    if base64 and val.tag == _BINARY_TAG:
        raise NodeError(
            f"{where} is tagged !!binary: kubectl sends the decoded bytes where Kubernetes "
            "expects base64, and the API server would decode them again; write the base64 "
            "text without the tag",
            val.start,
        )
    value = tagged_value(str(val.tag), str(val.value))
    if value is None:
        return ""
    if not isinstance(value, str):
        short = str(val.tag).rpartition(":")[2]
        raise NodeError(
            f"{where} is not a string in Kubernetes' YAML (tagged !!{short}); write it as a string",
            val.start,
        )
    return value


def _decode_b64(text: str, node: Node, what: str) -> bytes:
    # Go's decoder, which the API server uses, skips only line breaks (encoding/base64:
    # decodeQuantum ignores '\r' and '\n'): a space or tab is an error there, and so
    # here. (A plain scalar wrapped over lines is folded with spaces: use a | block.)
    data = go_base64(text)
    if data is None:
        compact = text.replace("\r", "").replace("\n", "")
        blank = " " in compact or "\t" in compact
        why = " (it holds a space or tab; the API server allows only line breaks)" * blank
        raise NodeError(f"{what} is not valid base64{why}", node.start)
    return data


def config_content(res: Resource) -> Content:
    """The bytes a pod sees. Raises NodeError (never with a value in the message)."""
    name = require_name(res)
    node = res.node
    entries_: dict[str, bytes] = {}
    if res.kind == "ConfigMap":
        for key, (text, _) in _string_map(node, "data", what="ConfigMap").items():
            entries_[key] = text.encode("utf-8")
        binary = _string_map(node, "binaryData", what="ConfigMap", base64=True)
        for key, (text, vnode) in binary.items():
            if key in entries_:
                raise NodeError(f"key {key!r} is in both data and binaryData", vnode.start)
            entries_[key] = _decode_b64(text, vnode, f"binaryData key {key!r}")
        return Content("ConfigMap", name, entries_)
    for key, (text, vnode) in _string_map(node, "data", what="Secret", base64=True).items():
        entries_[key] = _decode_b64(text, vnode, f"Secret data key {key!r}")
    for key, (text, _) in _string_map(node, "stringData", what="Secret").items():
        entries_[key] = text.encode("utf-8")  # stringData wins, as on the API server
    secret_type = str_field(node, "type") or "Opaque"
    return Content("Secret", name, entries_, secret_type)


def is_immutable(res: Resource) -> bool:
    return bool_field(res.node, "immutable", "")


def config_info(
    res: Resource, options: AnalyzeOptions, default_nl: str, doc_text: str
) -> ConfigInfo | None:
    """A ConfigMap's or Secret's summary; None for one named by generateName
    (``doc_text``: its document's text; no message quotes a document that may hold a
    Secret, asked only when there is a message)."""
    if res.name is None and res.generate_name is not None:
        # a name only the API server picks: nothing can reference it, but a Secret
        # stays a Secret: its data is checked like any Secret's, and its span goes to
        # DocInfo.unnamed_secrets (diffs and the mention scan keep out of it)
        if res.kind == "Secret":
            config_content(res._replace(name=res.generate_name))
        return None
    content = config_content(res)
    meta = get(res.node, "metadata")
    annotations = read_annotations(get(meta, "annotations"), "metadata.annotations")
    versioned = versioned_flag(annotations)
    edits: tuple[Edit, ...] = ()
    error = None
    if options.versioned or versioned:
        try:
            edits = version_edits(res, annotations, options, default_nl)
        except NodeError as exc:
            error = (exc.public if may_hold_secret(doc_text) else exc.message, exc.offset)
    node = res.node
    return _config_info(  # (every field, in order: no Python frame for the tuple)
        (
            res.kind,
            content.name,
            res.namespace,
            content,
            is_immutable(res),
            config_excluded(annotations, options.compat),
            node.start,
            res.doc,
            node.end,
            labels_of(get(meta, "labels")),
            reloader_match(annotations, options.compat),
            None,
            versioned,
            name_spot(res),
            edits,
            error,
            (),
            peer_keep_original(annotations),
            version_window(annotations),
            (),
            None,
            restart_reason(annotations),
            (),
        )
    )


_config_info = functools.partial(tuple.__new__, ConfigInfo)


def source_infos(
    res: Resource, row: SecretSource, options: AnalyzeOptions, default_nl: str
) -> list[ConfigInfo]:
    """What a source object stands for: the objects it produces, and itself when pods
    reference it by its own kind. Its content is its content fields, never metadata."""
    # (imported here: a source object is rare, and a plain chart has none)
    from cmhash.analyze.sources import (
        produced_names,
        restart_targets,
        source_content,
        source_dependencies,
        unpinned,
    )
    from cmhash.analyze.versioned_sources import keep_edits, unversioned
    from cmhash.analyze.versioned_sources import producer as source_producer

    if res.name is None:
        return []  # generateName: nothing can reference a name only the API server picks
    entries_ = source_content(res.node, row)
    annotations = read_annotations(res.annotations(), "metadata.annotations")
    # cmhash.io/versioned (or a peer's annotation) on the source: for what it produces
    flag = versioned_flag(annotations) if row.versioning else None
    versioning = bool(row.versioning) and (options.versioned or bool(flag))
    if versioning:
        entries_ = unversioned(entries_, row.names)
    produced = (
        read_annotations(get_path(res.node, row.template_annotations), "template")
        if row.template_annotations
        else None
    )
    # its own annotations, and those the produced Secret is written with (a Reloader
    # match/ignore there is the Secret's)
    excluded = config_excluded(annotations, options.compat) or config_excluded(
        produced, options.compat
    )
    match = reloader_match(annotations, options.compat) or reloader_match(produced, options.compat)
    labels = labels_of(get_path(res.node, ("metadata", "labels")))
    targets = [(row.produces, n) for n in produced_names(res.node, row, res.name)]
    depends = source_dependencies(res.node, row)
    pins = unpinned(res.node, row)
    restart = restart_reason(annotations)
    restarts = restart_targets(res.node, row) if row.restarts is not None else ()
    if row.referenced:
        targets.insert(0, (row.kind, res.name))
    via = f"{res.kind}/{res.name}"
    keep: tuple[tuple[Edit, ...], tuple[str, int] | None] = ((), None)
    if versioning:  # on the first: one set per document
        keep = keep_edits(res, annotations, options, default_nl)
    return [
        ConfigInfo(
            kind,
            name,
            res.namespace,
            Content(kind, name, entries_, None, row.label),
            False,
            excluded,
            res.node.start,
            res.doc,
            res.node.end,
            labels,
            match,
            None if kind == res.kind else via,
            depends=depends if kind != res.kind else (),
            unpinned=pins if kind != res.kind else (),
            name_spot=name_spot(res) if kind == res.kind else None,
            producer=(
                source_producer(res, row, name, annotations, default_nl)
                if kind != res.kind and versioning
                else None
            ),
            versioned=flag if kind != res.kind else None,
            window=version_window(annotations) if kind != res.kind and versioning else None,
            version_edits=keep[0] if n == 0 else (),
            version_error=keep[1] if n == 0 else None,
            restart=restart,
            restarts=restarts if kind != res.kind else (),
        )
        for n, (kind, name) in enumerate(targets)
    ]

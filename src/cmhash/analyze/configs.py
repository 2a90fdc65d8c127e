"""The map stage's summaries of ConfigMaps, Secrets and Secret sources (ConfigInfo): what
a pod sees of each, whether an annotation leaves it out of every checksum, what it says
about being versioned and the candidate edits ``--versioned`` would make (versioned.py);
a source object (knowledge/sources.py) stands for each object it produces, and for
itself when pods reference it by its own kind.

What a pod sees of a ConfigMap or Secret: ``data``, decoded ``binaryData``, a Secret's
decoded ``data`` with ``stringData`` laid over it, and its ``type``. Values are read as
Kubernetes reads them (k8syaml.py); no message ever quotes a value."""

from __future__ import annotations

import binascii
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
from cmhash.parse.k8syaml import resolves_to_non_string
from cmhash.parse.resources import Resource, bool_field, require_name, str_field
from cmhash.parse.tree import MAP, SCALAR, Node, deref, entries, get, get_path, scalar


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


def config_info(
    res: Resource, options: AnalyzeOptions, default_nl: str, secret: bool
) -> ConfigInfo | None:
    """A ConfigMap's or Secret's summary; None for one named by generateName (``secret``:
    the document may hold Secret text, which no message may quote)."""
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
            error = (exc.public if secret else exc.message, exc.offset)
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

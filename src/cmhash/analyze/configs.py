"""The map stage's summaries of ConfigMaps, Secrets and Secret sources (ConfigInfo): what
a pod sees of each (content.py), whether an annotation leaves it out of every checksum,
what it says about being versioned and the candidate edits ``--versioned`` would make
(versioned.py); a source object (knowledge/sources.py) stands for each object it
produces, and for itself when pods reference it by its own kind."""

from __future__ import annotations

import functools

from cmhash.analyze.annotations import labels_of, read_annotations
from cmhash.analyze.content import config_content, is_immutable
from cmhash.analyze.declared import config_excluded, reloader_match
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
from cmhash.parse.resources import Resource
from cmhash.parse.tree import get, get_path


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
        )
        for n, (kind, name) in enumerate(targets)
    ]

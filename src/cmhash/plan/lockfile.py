"""The lock file (``cmhash.lock``): written by ``cmhash lock``, read by ``--lock`` and
``lock:`` of the config file. One format, both ways, here.

It is JSON: the same bytes for the same content (one writer; objects sorted by kind,
namespace, name; a key per line, so a rotation is a one-line change in review), read
by every tool a CI job has (jq), with nothing a YAML reader could take otherwise (no
plain scalars that turn into numbers, no anchors). JSON is YAML too: cmhash reads it
with its own parser, for positions in messages. The header says what wrote it and from
which exports (the file names given, never a time), so an unchanged store gives a
byte-identical lock. It holds fingerprints only: never a value.
"""

# No "from __future__ import annotations": typing compiles string NamedTuple fields at import

import re
from collections.abc import Mapping, Sequence
from typing import NamedTuple

from cmhash.analyze.fingerprint import LockEntry
from cmhash.errors import NodeError
from cmhash.model import ResourceId
from cmhash.parse.tree import MAP, SCALAR, SEQ, Node, entries, get, items
from cmhash.read.source import SourceText

FORMAT = 1
ABOUT = (
    "Written by cmhash lock from the exports below: what the cluster holds, as one "
    "fingerprint per object, never a value. Do not edit: run cmhash lock again."
)
_HEX64 = r"[0-9a-f]{64}"
_KINDS = ("ConfigMap", "Secret", "SecretProviderClass")


class Lock(NamedTuple):
    path: str
    entries: Mapping[ResourceId, LockEntry]
    keyed: bool  # fingerprints HMAC-keyed with --secret-key-env


def lock_text(
    entries: Sequence[LockEntry], exports: Sequence[str], for_: Sequence[str], *, keyed: bool
) -> str:
    """The lock file's text (``entries`` sorted already)."""
    import json

    doc = {
        "cmhashLock": FORMAT,
        "about": ABOUT,
        "exports": list(exports),
        "for": list(for_),
        "keyed": keyed,
        "objects": [
            {
                "kind": e.kind,
                "namespace": e.namespace,
                "name": e.name,
                "from": e.source,
                "field": e.field,
                "fingerprint": e.fingerprint,
                **({"keys": dict(sorted(e.keys.items()))} if e.keys is not None else {}),
            }
            for e in entries
        ],
    }
    return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"


def _text(node: Node | None, what: str, at: int) -> str:
    if node is None or node.kind != SCALAR or (node.style is None and node.value in ("", "null")):
        raise NodeError(f"{what} must be a string", node.start if node is not None else at)
    return str(node.value)


def _hex(node: Node | None, what: str, at: int) -> str:
    text = _text(node, what, at)
    if not re.fullmatch(_HEX64, text):
        raise NodeError(f"{what} must be 64 lower-case hex digits", node.start if node else at)
    return text


def _entry(node: Node) -> LockEntry:
    if node.kind != MAP:
        raise NodeError("an object of the lock must be a mapping", node.start)
    entries(node)  # (duplicate keys refused)
    at = node.start
    kind = _text(get(node, "kind"), "kind", at)
    if kind not in _KINDS:
        raise NodeError(f"kind must be one of {', '.join(_KINDS)}", get(node, "kind").start)  # type: ignore[union-attr]
    keys_node = get(node, "keys")
    keys = None
    if keys_node is not None:
        if keys_node.kind != MAP:
            raise NodeError("keys must be a mapping of key -> fingerprint", keys_node.start)
        keys = {k: _hex(v, f"keys.{k}", v.start) for k, (_, v) in entries(keys_node).items()}
    ns = get(node, "namespace")
    return LockEntry(
        kind,
        ""
        if ns is not None and ns.kind == SCALAR and ns.value == ""
        else _text(ns, "namespace", at),
        _text(get(node, "name"), "name", at),
        _text(get(node, "from"), "from", at),
        _text(get(node, "field"), "field", at),
        _hex(get(node, "fingerprint"), "fingerprint", at),
        keys,
    )


def parse_lock(src: SourceText) -> Lock:
    """A lock file's text -> Lock; InputError at the offending place (exit 2)."""
    from cmhash.parse.events import backend, parse_chunk

    try:
        roots = parse_chunk(src.text, 0, backend("fast"))
        root = roots[0] if len(roots) == 1 else None
        if root is None or root.kind != MAP:
            raise NodeError("not a cmhash lock file (a JSON object)", 0)
        version = get(root, "cmhashLock")
        if version is None or version.kind != SCALAR or version.value != str(FORMAT):
            raise NodeError(
                f"not a cmhash lock file of format {FORMAT} (cmhashLock: {FORMAT}); write it "
                "again with this cmhash's `cmhash lock`",
                version.start if version is not None else root.start,
            )
        keyed = get(root, "keyed")
        listed = get(root, "objects")
        if listed is None or listed.kind != SEQ:
            raise NodeError("objects must be a list", listed.start if listed else root.start)
        out: dict[ResourceId, LockEntry] = {}
        for item in items(listed):
            entry = _entry(item)
            if entry.id in out:
                raise NodeError(
                    f"{entry.kind} {entry.namespace}/{entry.name} is in the lock twice", item.start
                )
            out[entry.id] = entry
    except NodeError as exc:
        raise src.error(exc.message, exc.offset) from None
    return Lock(src.display, out, keyed is not None and keyed.value == "true")


def read_lock(path: str, max_bytes: int) -> Lock:
    """The lock file at ``path`` (``--lock``, ``lock:``)."""
    from cmhash.read.source import decode, read_file

    return parse_lock(decode(path, read_file(path, max_bytes), max_bytes=max_bytes))

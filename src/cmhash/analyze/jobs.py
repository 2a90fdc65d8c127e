"""``--jobs=rename`` (docs/concepts/jobs.md): a Job that must run again when its
configuration changes (a migration, a seed) gets a name suffixed from its spec and its
config checksum. A Job's pod template is immutable, so a new name (a new Job, which runs)
is the way to change it; the same inputs give the same name. The base name is kept in
``cmhash.io/job-base-name``, so a second run replaces its own suffix instead of adding
one. Names stay within 63 characters: the Job controller copies the Job's name into its
pods' ``job-name`` label, whose values are limited to 63.
"""

# No "from __future__ import annotations": typing compiles string NamedTuple fields at import

import re
from typing import TYPE_CHECKING, NamedTuple

from cmhash.analyze.annotations import Spot, spot_of
from cmhash.analyze.hashing import canonical_json, sha256_hex
from cmhash.analyze.versioned_names import ALPHABET, SUFFIX_LEN, hashed
from cmhash.edit.splice import Edit, annotations_edits
from cmhash.errors import NodeError
from cmhash.knowledge.kinds import MAX_NAME, MUTABLE
from cmhash.parse.tree import entries, get, get_path, scalar, to_python

if TYPE_CHECKING:
    from cmhash.parse.resources import Resource
    from cmhash.parse.tree import Node

BASE_NAME = "cmhash.io/job-base-name"


class JobRename(NamedTuple):
    """What the map stage knows of a Job to rename: the reduce stage adds the suffix."""

    base: str  # the name the user wrote (kept in BASE_NAME)
    spot: Spot  # metadata.name as written
    digest: str  # the Job's spec (its template without cmhash's annotation; no mutable field)
    marker: tuple[Edit, ...]  # the BASE_NAME annotation, when the Job lacks it


def _spec_digest(spec: "Node | None", key: str) -> str:
    """SHA-256 of the Job's spec as data: its pod template without ``key`` (cmhash's own
    annotation) and the levels that held only it, and every other field but the mutable
    ones (a change to ``completions`` or ``backoffLimit`` would be refused as well)."""
    data = to_python(spec)
    if isinstance(data, dict):
        for field in MUTABLE:
            data.pop(field, None)
        template = data.get("template")
        meta = template.get("metadata") if isinstance(template, dict) else None
        if isinstance(meta, dict) and isinstance(meta.get("annotations"), dict):
            meta["annotations"].pop(key, None)
            if not meta["annotations"]:
                del meta["annotations"]
            if not meta and isinstance(template, dict):
                del template["metadata"]
    return sha256_hex(canonical_json(data).encode("utf-8"))


def _stem(base: str) -> str:
    """The base shortened to keep ``base-<suffix>`` within 63 characters (and to end in a
    letter or digit, as a name must)."""
    return base[: MAX_NAME - SUFFIX_LEN - 1].rstrip("-.")


def _renamed_from(name: str, base: str) -> bool:
    """Whether ``name`` is ``base`` or a name cmhash made from it (``base-<suffix>``)."""
    made = rf"{re.escape(_stem(base))}-[{ALPHABET}]{{{SUFFIX_LEN}}}"
    return name == base or re.fullmatch(made, name) is not None


def plan_rename(res: "Resource", key: str, default_nl: str, text: str) -> JobRename:
    """The map side: the base name, where the name is written, the template's digest and
    the base-name annotation's candidate edit. A name cmhash cannot rewrite in place (an
    alias, a block scalar) is an error at its position."""
    meta = get(res.node, "metadata")
    written = scalar(get_path(meta, ("annotations", BASE_NAME)))
    name = res.name or ""
    # the base cmhash kept, unless the name is no longer one made from it (renamed by hand)
    base = written if written and _renamed_from(name, written) else name
    raw = entries(meta).get("name") if meta is not None and meta.kind == "map" else None
    spot = spot_of(raw[1]) if raw is not None else None
    if spot is None or spot.problem is not None:
        problem = spot.problem if spot is not None else "the name is not a string"
        raise NodeError(f"cannot rename the Job (--jobs=rename): {problem}", res.node.start)
    marker = annotations_edits(
        text, res.node, None, {BASE_NAME: base}, default_nl, what="the Job", any_style=True
    )
    return JobRename(base, spot, _spec_digest(get(res.node, "spec"), key), tuple(marker))


def new_name(rename: JobRename, checksum: str) -> str:
    """``base-<suffix>``, the suffix of versioned names (the same alphabet) from the base,
    spec and checksum."""
    made = hashed(f"{rename.base}\n{rename.digest}\n{checksum}")
    return f"{_stem(rename.base)}-{made}"

"""``cmhash patches --kustomization DIR``: keep cmhash's patch file, and its entry under
``patches:`` of DIR's kustomization, current.

The kustomization is edited like every document cmhash touches: parsed for positions,
one line spliced in (or out), every other byte kept. The entry cmhash owns is the
``patches`` item whose ``path`` is the patch file's name; the patch file is cmhash's
when it starts with the generated header, and is never overwritten otherwise.

kustomize refuses a patch file without a document ("must specify a target for patch"),
so when no workload needs an annotation the entry is taken out and the file removed.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import NamedTuple

from cmhash.edit.splice import column, line_start
from cmhash.errors import InputError, NodeError
from cmhash.integrations.patches import (
    HEADER,
    NOT_STRINGS,
    file_error,
    line_end,
    read_file,
    without_bare_key,
)
from cmhash.parse.events import backend, parse_chunk
from cmhash.parse.tree import MAP, SCALAR, SEQ, Node, deref, entries, items, scalar

# kustomize's own order (api/konfig/general.go RecognizedKustomizationFileNames)
FILE_NAMES = ("kustomization.yaml", "kustomization.yml", "Kustomization")


class Plan(NamedTuple):
    """What ``--kustomization`` would write: the kustomization's new text (None: as it
    is), and the patch file's (None: remove it; unchanged when equal to what is there)."""

    kustomization: Path
    old_text: str
    new_text: str
    patch_path: Path
    old_patch: str | None
    new_patch: str | None
    notes: list[str]  # which kustomize builds the directory, when the entry goes in

    @property
    def stale(self) -> list[str]:
        out = []
        if self.new_text != self.old_text:
            out.append(f"{self.kustomization}: the entry for {self.patch_path.name}")
        if self.new_patch != self.old_patch:
            out.append(str(self.patch_path))
        return out


def find(directory: str) -> Path:
    base = Path(directory)
    if not base.is_dir():
        raise InputError(f"--kustomization {directory}: not a directory")
    for name in FILE_NAMES:
        if (base / name).is_file():
            return base / name
    raise InputError(
        f"--kustomization {directory}: no kustomization.yaml there; give the directory "
        "whose kustomization should apply the patches"
    )


def _root(text: str, path: Path) -> tuple[Node | None, dict[str, tuple[Node, Node]], Node | None]:
    """The kustomization's mapping (None: empty), its entries, and its first bare
    ``patches:`` file name (``legacy_patches``)."""
    try:
        roots = parse_chunk(text, 0, backend("exact"))
    except NodeError as exc:
        raise file_error(exc.public, path, text, exc.offset) from None
    docs = [r for r in roots if r is not None]
    if len(docs) > 1:
        raise file_error("a kustomization holds one document", path)
    root = deref(docs[0]) if docs else None
    if root is not None and root.kind != MAP:
        raise file_error("a kustomization is a mapping", path, text, root.start)
    try:
        return root, entries(root) if root is not None else {}, legacy_patches(root)
    except NodeError as exc:
        raise file_error(exc.public, path, text, exc.offset) from None


# The fields that list patch files, and how an item names one. `patches` is kustomize's
# field since v3.1 (api/types/kustomization.go), but a file of several documents there
# needs kustomize v5 (4.5.4: "unable to parse SM or JSON patch"); `patchesStrategicMerge`
# reads such a file in v4 and v5 (deprecated in v5, which still builds it).
FIELDS = {
    "patches": ("- path: {name}", "[{{path: {name}}}]"),
    "patchesStrategicMerge": ("- {name}", "[{name}]"),
}
# kustomize v4 reads a `patches:` list that holds a bare file name as patchesStrategicMerge:
# it rewrites the kustomization's text before reading it (api/types/fix.go at api/v0.11.4,
# FixKustomizationPreUnmarshalling: useLegacyPatch, then "patches:" replaced by
# "patchesStrategicMerge:"); v5 removed that and refuses the list ("cannot unmarshal
# string into Go struct field Kustomization.patches of type types.Patch"). In such a list
# an item `- path: F` breaks v4 too, and a patchesStrategicMerge key beside it makes a
# second one after the rewrite, of which v4 reads one and drops the other's patches
# without a word: cmhash's item is a bare name there, as the list's others.
V4_PATCHES = ("- {name}", "[{name}]")


# kustomization fields that rename or move what its resources are: its patches target
# the objects before them (api/krusty: patches run before the namespace and prefix/suffix
# transformers), so patches computed from the build would match nothing
RENAMING = ("namespace", "namePrefix", "nameSuffix")


def _scalar(name: str) -> str:
    """The file name as a YAML scalar: plain when YAML reads it as that string."""
    import json

    if re.fullmatch(r"[A-Za-z0-9_][A-Za-z0-9_.-]*", name) and name.lower() not in NOT_STRINGS:
        return name
    return json.dumps(name)


def _item_path(item: Node, field: str) -> str | None:
    item = deref(item)  # type: ignore[assignment]
    if item is None:
        return None
    if item.kind == SCALAR:  # patchesStrategicMerge's form, and v4's legacy patches'
        found = scalar(item)
    elif item.kind != MAP:
        return None
    else:
        pair = entries(item).get("path")
        found = scalar(pair[1]) if pair else None
    return found[2:] if found is not None and found.startswith("./") else found


def legacy_patches(root: Node | None) -> Node | None:
    """The first bare file name of ``patches:`` (kustomize v4's form), if it has one."""
    pair = entries(root).get("patches") if root is not None else None
    seq = deref(pair[1]) if pair is not None else None
    if seq is None or seq.kind != SEQ:
        return None
    names = [item for item in map(deref, items(seq)) if item is not None and item.kind == SCALAR]
    return names[0] if names else None


def with_entry(text: str, path: Path, name: str, wanted: bool, field: str = "patches") -> str:
    """``text`` with cmhash's item in ``field`` (``wanted``) or without it; wanted, it
    is moved there from the other field (kustomize v4 fails on the file under
    ``patches:``, and with both v5 would apply it twice)."""
    if wanted:
        other = next(f for f in FIELDS if f != field)
        text = _with_entry(text, path, name, False, other)
    return _with_entry(text, path, name, wanted, field)


def _with_entry(text: str, path: Path, name: str, wanted: bool, field: str) -> str:
    nl = "\r\n" if "\r\n" in text else "\n"
    root, written, legacy = _root(text, path)
    form = V4_PATCHES if legacy is not None and field == "patches" else FIELDS[field]
    block, flow = (f.format(name=_scalar(name)) for f in form)
    if wanted and legacy is not None and field == "patchesStrategicMerge":
        raise file_error(
            "patches: lists a bare file name, which kustomize v4 reads as "
            "patchesStrategicMerge (and v5 refuses): a patchesStrategicMerge key beside it "
            "makes v4 drop one of the two lists without a word; leave out --kustomize-field "
            "and cmhash adds its file to patches: as a bare name, as the list's others",
            path,
            text,
            legacy.start,
        )
    for renaming in RENAMING:
        if wanted and renaming in written:
            raise file_error(
                f"this kustomization sets {renaming}: kustomize applies its patches before that, "
                "to the objects as its resources name them, while the patches name the "
                "built objects; keep cmhash's patches in a kustomization of their own "
                "above this one (resources: [this directory]), and build and apply that",
                path,
                text,
                written[renaming][0].start,
            )
    pair = written.get(field)
    if pair is None:
        if not wanted:
            return text
        if root is not None and root.style:  # {…} or JSON
            raise file_error(
                f"the kustomization is written in flow style (JSON); add `{field}: {flow}` "
                "to it by hand",
                path,
                text,
                root.start,
            )
        body = text if not text or text.endswith(("\n", "\r")) else text + nl
        return f"{body}{field}:{nl}{block}{nl}"
    key, value = pair
    seq = deref(value)
    if seq is not None and seq.kind == SEQ and not seq.style:
        items = seq.value
        mine = [i for i in items if _item_path(i, field) == name]
        if wanted:
            if mine:
                return text
            first = line_start(text, seq.start)
            indent = " " * column(text, seq.start)
            return f"{text[:first]}{indent}{block}{nl}{text[first:]}"
        out = text
        for item in reversed(mine):  # our own item: one line
            out = out[: line_start(out, item.start)] + out[line_end(out, item.start) :]
        if len(mine) == len(items):  # nothing left: the key line too, if it is bare
            out = without_bare_key(out, key)
        return out
    if seq is None or (seq.kind == SCALAR and seq.is_null):
        if not wanted:
            return text
        eol = line_end(text, key.end)
        indent = " " * column(text, key.start)
        prefix = text[:eol] if text[:eol].endswith("\n") else text[:eol] + nl
        return f"{prefix}{indent}{block}{nl}{text[eol:]}"
    if seq.kind == SEQ and seq.style:  # patches: [...]
        items = seq.value
        mine = [i for i, item in enumerate(items) if _item_path(item, field) == name]
        inner = flow[1:-1]
        if wanted:
            if mine:
                return text
            sep = ", " if items else ""
            at = seq.start + 1
            return f"{text[:at]}{inner}{sep}{text[at:]}"
        if not mine:
            return text
        if len(items) == 1:
            return f"{text[: seq.start]}[]{text[seq.end :]}"
        i = mine[0]
        if i + 1 < len(items):
            return text[: items[i].start] + text[items[i + 1].start :]
        return text[: items[i - 1].end] + text[items[i].end :]
    raise file_error(
        f"cannot edit `{field}:` written this way; add `{block}` to it by hand",
        path,
        text,
        value.start,
    )


def plan(directory: str, name: str, patch_text: str | None, field: str | None = "patches") -> Plan:
    """What to write for ``patch_text`` (None: no workload needs a patch); ``field``
    None: ``patchesStrategicMerge`` when the kustomization uses that (kustomize v4's
    field: a ``patches:`` entry beside it would break the v4 build), else ``patches``."""
    kustomization = find(directory)
    old_text = read_file(kustomization)
    if field is None:
        written = _root(old_text, kustomization)[1]
        field = "patchesStrategicMerge" if "patchesStrategicMerge" in written else "patches"
    patch_path = kustomization.parent / name
    old_patch = read_file(patch_path) if patch_path.exists() else None
    if old_patch is not None and not old_patch.replace("\r\n", "\n").startswith(HEADER):
        raise file_error(
            "exists and was not written by cmhash (no generated header); choose another "
            "name with --patch-file",
            patch_path,
        )
    new_text = with_entry(old_text, kustomization, name, patch_text is not None, field)
    notes = []
    if new_text != old_text:
        bare = field == "patchesStrategicMerge" or _root(old_text, kustomization)[2] is not None
        _verify(old_text, new_text, kustomization, name, patch_text is not None, field, bare)
        notes = _versions_note(bare, field, patch_text, name)
    return Plan(kustomization, old_text, new_text, patch_path, old_patch, patch_text, notes)


def _versions_note(bare: bool, field: str, patch_text: str | None, name: str) -> list[str]:
    """What the kustomize that builds the directory must be, said when the entry goes in."""
    if patch_text is None:
        return []
    if bare and field == "patches":
        return [
            "patches: lists bare file names, kustomize v4's form (v5 refuses it): cmhash's "
            "entry is one too, so that kustomize v4 still builds the directory"
        ]
    if field == "patches" and patch_text.count("\n---\n") > 1:
        return [
            "a file of several patches under patches: needs kustomize v5 (kubectl kustomize, "
            "Flux, Argo CD; kustomize v4 fails on it): for kustomize v4, take "
            f"`- path: {name}` out of patches: (v4 builds the directory again) and run "
            "cmhash patches again with --kustomize-field patchesStrategicMerge"
        ]
    return []


def _verify(
    old: str, new: str, path: Path, name: str, wanted: bool, field: str, bare: bool
) -> None:
    """The edited kustomization reads as the old one with cmhash's item added (or taken
    out) and nothing else; otherwise exit 2 and the file is left as it is."""
    import yaml

    def items(data: object, key: str = field) -> list[object]:
        value = data.get(key) if isinstance(data, dict) else None
        return list(value) if isinstance(value, list) else []

    ours = name if bare else {"path": name}
    other = next(f for f in FIELDS if f != field)
    try:
        before, after = yaml.safe_load(old), yaml.safe_load(new)
    except yaml.YAMLError:
        after = None
        before = {}
    expected = [i for i in items(before) if i != ours]
    if wanted:
        expected = [ours, *expected]
    moved = [i for i in items(before, other) if i not in (name, {"path": name})] if wanted else []

    def rest(d: object) -> dict[object, object]:
        keep = (field, other) if wanted else (field,)
        return {k: v for k, v in d.items() if k not in keep} if isinstance(d, dict) else {}

    if (
        not isinstance(after, dict)
        or sorted(map(repr, items(after))) != sorted(map(repr, expected))
        or (wanted and items(after, other) != moved)
        or rest(after) != rest(before if isinstance(before, dict) else {})
    ):
        raise file_error(
            f"cannot edit `{field}:` written this way (an anchor, a tag, a null); add "
            f"`{ours if isinstance(ours, str) else '- path: ' + name}` to it by hand",
            path,
        )


def apply(p: Plan) -> None:
    """Write the patch file first, then the kustomization, each atomically."""
    from cmhash.write.writer import write_new_file

    if p.new_patch is not None and p.new_patch != p.old_patch:
        write_new_file(os.path.realpath(p.patch_path), p.new_patch)
    if p.new_text != p.old_text:  # through a link, as -i does: the file it names
        write_new_file(os.path.realpath(p.kustomization), p.new_text)
    if p.new_patch is None and p.old_patch is not None:
        os.unlink(p.patch_path)

"""Kustomize source trees in a repository walk: what is not an object.

A directory with a kustomization file (``kustomization.yaml``, ``kustomization.yml`` or
``Kustomization``: kustomize ``api/konfig/general.go`` RecognizedKustomizationFileNames)
is kustomize's input, not what gets deployed. Its patch files look like objects (an
overlay's ``map.yaml`` is a ConfigMap with only the changed keys) but are not: hashing
one as the ConfigMap would put a partial object's checksum into a workload. So the files
a kustomization names in these fields (kustomize ``api/types/kustomization.go``) are
left out of a walk, each with a note under ``-v``:

* ``patches[].path``, ``patchesJson6902[].path``, ``patchesStrategicMerge[]`` (a file
  name; an inline patch is no file), ``replacements[].path``;
* generator inputs: ``configMapGenerator[]`` / ``secretGenerator[]`` ``files`` (``[key=]path``),
  ``envs``, ``env``; ``helmCharts[].valuesFile``;
* plugin and transformer configuration: ``generators``, ``transformers``,
  ``validators``, ``configurations``, ``openapi.path``.

``resources`` stay: they are the objects. What an overlay deploys is only known after
``kustomize build``, so for every kustomization that patches, generates or lists
components, one note says where to run cmhash instead: ``kustomize build DIR | cmhash``.
A ``kind: Component`` is never such a DIR: kustomize builds it as part of the
kustomizations that list it under ``components`` (``api/internal/target/kusttarget.go``
``accumulateComponents``); built alone it gives half a picture, or fails on the patches
whose targets it lacks (both ``kustomize`` 4.5.4 and ``kubectl kustomize``). Its files
name the kustomizations of the walk that use it, directly or through other components,
or no build at all when none does.

Files named on the command line are read as given in the stream mode, and filtered like
walked files in the modes about files (``--check``, ``--diff``, ``-i``: pre-commit names
every changed file), as the other walk rules (read/inputs.py).

A file one kustomization names as a resource is an object, even when another names it
as a patch: it is deployed as it is by the first (a ``-v`` note says both). A
kustomization file cmhash cannot read (read/kustfile.py) is an error at its
``line:column`` when the walk reads files in or below its directory: kustomize's default
load restrictor keeps a kustomization's patches and generator inputs there
(``api/internal/loader/loadrestrictions.go``, ``RestrictionRootOnly``; docs/FAQ.md
"security: file 'foo' is not in or below 'bar'"), so any of them could be a patch taken
for an object. With no such file it changes nothing: a warning. Each kustomization is
read once, by its real path, however many ways the walk reaches it.
"""

# No "from __future__ import annotations": typing compiles string NamedTuple fields at import

import os
import shlex
from collections.abc import Iterable, Sequence
from typing import NamedTuple

from cmhash.errors import InputError
from cmhash.read import kustfile
from cmhash.read.inputs import Skipped
from cmhash.read.kustfile import FILE_NAMES, Broken, Kustomization
from cmhash.read.source import SourceText

__all__ = ["FILE_NAMES", "Kustomization", "apply", "not_objects", "pointer"]


def _directories(roots: Iterable[str], files: Iterable[str]) -> list[str]:
    """Every directory under the walked roots (hidden ones left out, as the walk does),
    and those holding a named file and their parents: where kustomizations may be.
    Absolute, so that a directory reached from a root and from a file is one."""
    seen: dict[str, None] = {}
    for root in roots:
        if os.path.isdir(root):
            for dirpath, dirnames, _ in os.walk(os.path.abspath(root)):
                dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
                seen[dirpath] = None
    for f in files:
        d = os.path.dirname(os.path.abspath(f))
        while d not in seen:
            seen[d] = None
            parent = os.path.dirname(d)
            if parent == d:
                break
            d = parent
    return list(seen)


def _load(directories: Iterable[str]) -> tuple[list[Kustomization], list[Broken]]:
    """The kustomizations of these directories, each file once by its real path."""
    found: list[Kustomization] = []
    broken: list[Broken] = []
    read: set[str] = set()
    for d in directories:
        paths = kustfile.find_all(d)
        if not paths or os.path.realpath(paths[0]) in read:
            continue
        read.add(os.path.realpath(paths[0]))
        got = kustfile.several(paths) if len(paths) > 1 else kustfile.read(d, paths[0])
        if isinstance(got, Broken):
            broken.append(got)
        else:
            found.append(got)
    found.sort(key=lambda k: k.directory)
    return found, broken


def _below(path: str, directory: str) -> bool:
    return os.path.commonpath([path, directory]) == directory


def _refuse(broken: Sequence[Broken], files: Sequence[str]) -> list[str]:
    """Exit 2 at the first broken kustomization with a walked file in or below its
    directory; a warning line for each of the others."""
    absolute = [os.path.normpath(os.path.abspath(f)) for f in files]
    warnings = []
    for b in sorted(broken):
        directory = os.path.dirname(os.path.abspath(b.file))
        shown = os.path.relpath(b.file)
        itself = os.path.normpath(os.path.abspath(b.file))
        if any(_below(f, directory) and f != itself for f in absolute):
            raise InputError(
                f"kustomization file: {b.problem}; kustomize refuses it, and cmhash cannot "
                f"tell which files in {os.path.relpath(directory)}{os.sep} are its patches "
                "or generator inputs rather than objects (fix it, or --exclude its directory)",
                path=shown,
                line=b.line,
                column=b.column,
            )
        warnings.append(
            f"{shown}:{b.line}:{b.column}: warning: kustomization file: {b.problem}; "
            "kustomize refuses it (no file of this run is in its directory, so nothing "
            "read here changes)"
        )
    return warnings


class Found(NamedTuple):
    """What the kustomizations of a walk say about its files."""

    left: list[Skipped]  # files that are not objects, and why
    changing: list[Kustomization]  # kustomizations that patch, generate or transform
    notes: list[str]  # -v: files kept as resources that another names otherwise
    warnings: list[str]  # broken kustomizations that change nothing


def not_objects(roots: Sequence[str], files: Sequence[str]) -> Found:
    """Which of ``files`` a kustomization names as something other than a resource (and
    none as a resource), and the kustomizations that patch, generate or transform."""
    found, broken = _load(_directories(roots, files))
    warnings = _refuse(broken, files)
    named: dict[str, tuple[str, Kustomization]] = {}
    resource_of: dict[str, Kustomization] = {}
    for k in found:
        for path, what in k.named.items():
            named.setdefault(path, (what, k))
        for path in k.resources:
            resource_of.setdefault(path, k)
    users = _users(found)
    # the kustomization file itself: kustomize's build configuration, never an object
    # (kind Kustomization or Component of kustomize.config.k8s.io, no API serves it),
    # with or without its apiVersion and kind
    own = {os.path.normpath(os.path.abspath(k.file)): k for k in found}
    left, notes = [], []
    for f in files:
        at = os.path.normpath(os.path.abspath(f))
        if at in own:
            left.append(Skipped(f, f"kustomize's build file, {_build(own[at], users)}"))
            continue
        hit = named.get(at)
        if hit is None:
            continue
        what, k = hit
        owner = resource_of.get(at)
        if owner is not None:
            notes.append(
                f"{f} is a resource of {os.path.relpath(owner.file)} (an object there) and "
                f"{what} of {os.path.relpath(k.file)}: read as an object"
            )
            continue
        left.append(Skipped(f, f"{what} of {os.path.relpath(k.file)}, {_build(k, users)}"))
    components = {k.directory for k in found if k.component}
    changing = []
    for k in found:
        if not k.changes or k.component:
            continue
        wrong = sorted(r for r in k.resources if r in components)
        if wrong:  # kustomize refuses the build: advise none
            warnings.append(
                f"{os.path.relpath(k.file)}: warning: lists the kustomize Component "
                f"{_arg(wrong[0])} under resources, which kustomize refuses to build "
                "(expected kind != 'Component'); list it under components"
            )
            continue
        changing.append(k)
    return Found(left, changing, notes, warnings)


def _users(found: Sequence[Kustomization]) -> dict[str, list[Kustomization]]:
    """Component directory -> the kustomizations (not components) of the walk that build
    it: those that list it under ``components``, or list a component that does."""
    by_dir = {k.directory: k for k in found}
    out: dict[str, list[Kustomization]] = {}
    for k in found:
        if k.component:
            continue
        todo, seen = list(k.components), set()
        while todo:
            d = todo.pop()
            if d in seen:
                continue
            seen.add(d)
            out.setdefault(d, []).append(k)
            listed = by_dir.get(d)
            if listed is not None:
                todo.extend(listed.components)
    return out


def _arg(directory: str) -> str:
    """A directory as a shell argument of the advice (``'overlays/my overlay'``)."""
    return shlex.quote(os.path.relpath(directory))


def _build(k: Kustomization, users: dict[str, list[Kustomization]]) -> str:
    """What the note of a file ``k`` names as no object says about building."""
    if not k.component:
        return f"not an object (build it: kustomize build {_arg(k.directory)} | cmhash)"
    built = sorted(_arg(u.directory) for u in users.get(k.directory, ()))
    if not built:
        return (
            "not an object (a kustomize Component: built only by the kustomizations that list it)"
        )
    return (
        "not an object (a kustomize Component: build a kustomization that lists it, "
        f"kustomize build {built[0]} | cmhash" + "".join(f", or {b}" for b in built[1:]) + ")"
    )


def pointer(k: Kustomization) -> str:
    """The note for a kustomization whose output differs from its files."""
    d = os.path.relpath(k.directory)
    return (
        f"{d}{os.sep} is a kustomization that patches or generates objects: its patches and "
        "generator inputs are not objects and are left out, and what it deploys is known "
        f"only after a build: run cmhash on that (kustomize build {_arg(k.directory)} | cmhash)"
    )


class Applied(NamedTuple):
    sources: list[SourceText]  # without the files that are not objects
    left: list[Skipped]
    pointers: list[str]  # one per kustomization that patches or generates
    notes: list[str]  # -v
    warnings: list[str]  # shown without -v


def apply(sources: list[SourceText], roots: Sequence[str], *, filter_named: bool) -> Applied:
    """The sources without what kustomizations name as patches, generator inputs and
    configuration, and what the run says about it. ``filter_named``: files named on the
    command line are filtered too. InputError: a broken kustomization that could change
    which files are objects."""
    files = [s.path for s in sources if not s.is_stdin]
    if not files:
        return Applied(sources, [], [], [], [])
    named = {os.path.normpath(r) for r in roots if not os.path.isdir(r)}
    found = not_objects(roots, files)
    drop = {x.path: x for x in found.left if filter_named or os.path.normpath(x.path) not in named}
    kept = [s for s in sources if s.path not in drop]
    pointers = list(dict.fromkeys(pointer(k) for k in found.changing))
    return Applied(kept, list(drop.values()), pointers, found.notes, found.warnings)

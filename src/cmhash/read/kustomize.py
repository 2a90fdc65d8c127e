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
``kustomize build``, so for every kustomization that patches or generates, one note says
where to run cmhash instead: ``kustomize build DIR | cmhash``.

Files named on the command line are read as given in the stream mode, and filtered like
walked files in the modes about files (``--check``, ``--diff``, ``-i``: pre-commit names
every changed file), as the other walk rules (read/inputs.py).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Sequence
from typing import Any, NamedTuple

from cmhash.read.source import SourceText

FILE_NAMES = ("kustomization.yaml", "kustomization.yml", "Kustomization")

# field -> what its files are, as the notes say it
_PATH_LISTS = {
    "patches": "a kustomize patch",
    "patchesJson6902": "a kustomize patch",
    "replacements": "a kustomize replacement",
}
_NAME_LISTS = {
    "patchesStrategicMerge": "a kustomize patch",
    "generators": "a kustomize generator's configuration",
    "transformers": "a kustomize transformer's configuration",
    "validators": "a kustomize validator's configuration",
    "configurations": "a kustomize transformer configuration",
}
_GENERATORS = ("configMapGenerator", "secretGenerator")
# fields that make what a kustomization deploys differ from its files
_CHANGES = (*_PATH_LISTS, *_NAME_LISTS, *_GENERATORS, "helmCharts")


class Kustomization(NamedTuple):
    directory: str
    file: str
    named: dict[str, str]  # absolute path of a file it names -> what it is
    changes: bool  # it patches, generates or transforms


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, list):
        for v in value:
            if isinstance(v, str) and "\n" not in v:
                yield v


def _named(data: dict[str, Any]) -> Iterator[tuple[str, str]]:
    for field, what in _PATH_LISTS.items():
        for item in data.get(field) or ():
            if isinstance(item, dict) and isinstance(item.get("path"), str):
                yield item["path"], what
    for field, what in _NAME_LISTS.items():
        for name in _strings(data.get(field)):
            yield name, what
    for field in _GENERATORS:
        for gen in data.get(field) or ():
            if not isinstance(gen, dict):
                continue
            what = f"an input of a kustomize {field}"
            for source in _strings(gen.get("files")):
                yield source.partition("=")[2] or source, what
            for env in _strings(gen.get("envs")):
                yield env, what
            if isinstance(gen.get("env"), str):
                yield gen["env"], what
    for chart in data.get("helmCharts") or ():
        if isinstance(chart, dict) and isinstance(chart.get("valuesFile"), str):
            yield chart["valuesFile"], "a kustomize helmCharts values file"
    openapi = data.get("openapi")
    if isinstance(openapi, dict) and isinstance(openapi.get("path"), str):
        yield openapi["path"], "kustomize's OpenAPI schema"


def load(directory: str) -> Kustomization | None:
    """The kustomization in ``directory``, or None (none, or one kustomize itself would
    refuse to read: then ``kustomize build`` says why)."""
    for name in FILE_NAMES:
        path = os.path.join(directory, name)
        if os.path.isfile(path):
            break
    else:
        return None
    import yaml

    try:
        with open(path, encoding="utf-8") as fh:
            data = yaml.safe_load(fh)
    except (OSError, UnicodeDecodeError, yaml.YAMLError):
        return None
    if not isinstance(data, dict):
        return None
    named = {
        os.path.normpath(os.path.join(os.path.abspath(directory), rel)): what
        for rel, what in _named(data)
    }
    return Kustomization(directory, path, named, any(data.get(f) for f in _CHANGES))


def _directories(roots: Iterable[str], files: Iterable[str]) -> list[str]:
    """Every directory under the walked roots (hidden ones left out, as the walk does),
    and those holding a named file and their parents: where kustomizations may be."""
    seen: dict[str, None] = {}
    for root in roots:
        if os.path.isdir(root):
            for dirpath, dirnames, _ in os.walk(root):
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


class LeftOut(NamedTuple):
    path: str
    why: str


def not_objects(
    roots: Sequence[str], files: Sequence[str]
) -> tuple[list[LeftOut], list[Kustomization]]:
    """Which of ``files`` a kustomization names as something other than a resource,
    and the kustomizations that patch, generate or transform (sorted by directory)."""
    found = [k for k in (load(d) for d in _directories(roots, files)) if k is not None]
    found.sort(key=lambda k: k.directory)
    named: dict[str, tuple[str, Kustomization]] = {}
    for k in found:
        for path, what in k.named.items():
            named.setdefault(path, (what, k))
    left = []
    for f in files:
        hit = named.get(os.path.normpath(os.path.abspath(f)))
        if hit is not None:
            what, k = hit
            left.append(
                LeftOut(
                    f,
                    f"{what} of {os.path.relpath(k.file)}, not an object (build it: "
                    f"kustomize build {os.path.relpath(k.directory)} | cmhash)",
                )
            )
    return left, [k for k in found if k.changes]


def pointer(k: Kustomization) -> str:
    """The note for a kustomization whose output differs from its files."""
    d = os.path.relpath(k.directory)
    return (
        f"{d}{os.sep} is a kustomization that patches or generates objects: its patches and "
        "generator inputs are not objects and are left out, and what it deploys is known "
        f"only after a build: run cmhash on that (kustomize build {d} | cmhash)"
    )


def apply(
    sources: list[SourceText], roots: Sequence[str], *, filter_named: bool
) -> tuple[list[SourceText], list[LeftOut], list[str]]:
    """The sources without what kustomizations name as patches, generator inputs and
    configuration; what was left out; the notes pointing at ``kustomize build``.
    ``filter_named``: files named on the command line are filtered too."""
    files = [s.path for s in sources if not s.is_stdin]
    if not files:
        return sources, [], []
    named = {os.path.normpath(r) for r in roots if not os.path.isdir(r)}
    left, changing = not_objects(roots, files)
    drop = {x.path: x for x in left if filter_named or os.path.normpath(x.path) not in named}
    kept = [s for s in sources if s.path not in drop]
    return kept, list(drop.values()), [pointer(k) for k in changing]

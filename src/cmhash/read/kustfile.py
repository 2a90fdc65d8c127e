"""One kustomization file, read for what it says about the files around it: which it
names as resources (objects) and which as patches, generator inputs or configuration
(not objects), with the position of anything cmhash cannot read.

The fields and their shapes are kustomize's (``api/types/kustomization.go``): a field
cmhash reads that has another shape (``patches: map.yaml`` instead of a list), or a file
that does not parse, is a ``Broken`` kustomization with its ``line:column``; kustomize
itself refuses such a file (``kustomize build``: "invalid Kustomization"), and cmhash
cannot tell which files it names. Fields cmhash does not read are left to kustomize.
"""

# No "from __future__ import annotations": typing compiles string NamedTuple fields at import

import os
from collections.abc import Iterator
from typing import Any, NamedTuple

FILE_NAMES = ("kustomization.yaml", "kustomization.yml", "Kustomization")

# field -> what its files are, as the notes say it
PATH_LISTS = {
    "patches": "a kustomize patch",
    "patchesJson6902": "a kustomize patch",
    "replacements": "a kustomize replacement",
}
NAME_LISTS = {
    "patchesStrategicMerge": "a kustomize patch",
    "generators": "a kustomize generator's configuration",
    "transformers": "a kustomize transformer's configuration",
    "validators": "a kustomize validator's configuration",
    "configurations": "a kustomize transformer configuration",
}
GENERATORS = ("configMapGenerator", "secretGenerator")
# fields that make what a kustomization deploys differ from its files (a component's
# patches and generators join the kustomization that lists it under ``components``)
CHANGES = (*PATH_LISTS, *NAME_LISTS, *GENERATORS, "helmCharts", "components")
# a kustomization file of this kind is a Component (kustomize api/types/kustomization.go
# ComponentKind): built only as part of the kustomizations that list its directory under
# ``components`` (api/internal/target/kusttarget.go accumulateComponents); alone it
# builds partial output, or fails on the patches whose targets it lacks
COMPONENT = "Component"

# the shape of each field read here: "strings" (a list of strings), "items" (a list of
# mappings whose listed keys are strings, or for "files"/"envs" lists of strings),
# "mapping" (one such mapping)
_LIST_KEYS = {"files", "envs"}
SHAPES: dict[str, tuple[str, tuple[str, ...]]] = {
    "resources": ("strings", ()),
    "components": ("strings", ()),
    **dict.fromkeys(PATH_LISTS, ("items", ("path",))),
    **dict.fromkeys(NAME_LISTS, ("strings", ())),
    **dict.fromkeys(GENERATORS, ("items", ("files", "envs", "env"))),
    "helmCharts": ("items", ("valuesFile",)),
    "openapi": ("mapping", ("path",)),
}


class Broken(NamedTuple):
    """A kustomization file cmhash cannot read: where, and what is wrong."""

    file: str
    line: int
    column: int
    problem: str


class Kustomization(NamedTuple):
    directory: str  # absolute
    file: str
    named: dict[str, str]  # absolute path of a file it names as no object -> what it is
    resources: frozenset[str]  # absolute paths of the files it names as resources
    changes: bool  # it patches, generates or transforms
    component: bool = False  # kind: Component (built only by those that list it)
    components: frozenset[str] = frozenset()  # absolute directories under ``components``


class _Shape(Exception):
    def __init__(self, node: Any, problem: str) -> None:
        super().__init__(problem)
        self.node, self.problem = node, problem


def _value(mapping: Any, key: str) -> Any:
    """The value node of ``key`` in a mapping node, or None."""
    for k, v in mapping.value:
        if getattr(k, "value", None) == key:
            return v
    return None


def _null(node: Any) -> bool:
    return node is None or (node.tag == "tag:yaml.org,2002:null")


def _check_mapping(node: Any, field: str, keys: tuple[str, ...]) -> None:
    import yaml

    if not isinstance(node, yaml.MappingNode):
        raise _Shape(node, f"each item of {field} must be a mapping")
    for key in keys:
        v = _value(node, key)
        if _null(v):
            continue
        if key in _LIST_KEYS:
            _check_strings(v, f"{field}[].{key}")
        elif not (isinstance(v, yaml.ScalarNode) and v.tag == "tag:yaml.org,2002:str"):
            raise _Shape(v, f"{field}[].{key} must be a file name (a string)")


def _check_strings(node: Any, field: str) -> None:
    import yaml

    if not isinstance(node, yaml.SequenceNode):
        raise _Shape(node, f"{field} must be a list of strings")
    for item in node.value:
        if not (isinstance(item, yaml.ScalarNode) and item.tag == "tag:yaml.org,2002:str"):
            raise _Shape(item, f"each item of {field} must be a string")


def _check(root: Any) -> None:
    """Raise _Shape at the first field read here that kustomize would refuse."""
    import yaml

    if not isinstance(root, yaml.MappingNode):
        raise _Shape(root, "a kustomization must be a mapping of fields")
    for field, (shape, keys) in SHAPES.items():
        node = _value(root, field)
        if _null(node):
            continue
        if shape == "strings":
            _check_strings(node, field)
        elif shape == "mapping":
            _check_mapping(node, field, keys)
        elif not isinstance(node, yaml.SequenceNode):
            raise _Shape(node, f"{field} must be a list")
        else:
            for item in node.value:
                _check_mapping(item, field, keys)


def _strings(value: Any) -> Iterator[str]:
    for v in value or ():
        if isinstance(v, str) and "\n" not in v:  # a multi-line string is inline
            yield v


def _named(data: dict[str, Any]) -> Iterator[tuple[str, str]]:
    for field, what in PATH_LISTS.items():
        for item in data.get(field) or ():
            if isinstance(item.get("path"), str):
                yield item["path"], what
    for field, what in NAME_LISTS.items():
        for name in _strings(data.get(field)):
            yield name, what
    for field in GENERATORS:
        what = f"an input of a kustomize {field}"
        for gen in data.get(field) or ():
            for source in _strings(gen.get("files")):
                yield source.partition("=")[2] or source, what
            for env in _strings(gen.get("envs")):
                yield env, what
            if isinstance(gen.get("env"), str):
                yield gen["env"], what
    for chart in data.get("helmCharts") or ():
        if isinstance(chart.get("valuesFile"), str):
            yield chart["valuesFile"], "a kustomize helmCharts values file"
    openapi = data.get("openapi")
    if isinstance(openapi, dict) and isinstance(openapi.get("path"), str):
        yield openapi["path"], "kustomize's OpenAPI schema"


def find_all(directory: str) -> list[str]:
    """Every kustomization file in ``directory``: more than one, kustomize builds none
    ("Found multiple kustomization files", api/konfig FileNameKustomization...)."""
    return [
        path
        for path in (os.path.join(directory, name) for name in FILE_NAMES)
        if os.path.isfile(path)
    ]


def several(paths: list[str]) -> Broken:
    """The second of several kustomization files in one directory, as a broken one."""
    return Broken(
        paths[1],
        1,
        1,
        f"{os.path.basename(paths[0])} is a kustomization file of this directory too, and "
        "kustomize builds none when it finds several (keep one)",
    )


def _broken(path: str, mark: Any, problem: str) -> Broken:
    line, column = (mark.line + 1, mark.column + 1) if mark is not None else (1, 1)
    return Broken(path, line, column, problem)


def read(directory: str, path: str) -> Kustomization | Broken:
    """The kustomization file ``path`` of ``directory`` (absolute), or where it is
    broken. An empty file names nothing; of several documents, the first is read (as
    kustomize does)."""
    import yaml

    try:
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
    except UnicodeDecodeError:
        return Broken(path, 1, 1, "it is not UTF-8 text")
    except OSError as exc:
        return Broken(path, 1, 1, f"it cannot be read ({exc.strerror})")
    loader = yaml.SafeLoader(text)
    try:
        # the first document only, as kustomize reads it (sigs.k8s.io/yaml Unmarshal)
        node = loader.get_node() if loader.check_node() else None
        if node is not None:
            _check(node)
        data = loader.construct_document(node) if node is not None else {}
    except yaml.MarkedYAMLError as exc:
        problem = exc.problem or "it does not parse"
        return _broken(path, exc.problem_mark or exc.context_mark, f"YAML: {problem}")
    except yaml.YAMLError as exc:  # (no position: a construction error of another kind)
        return Broken(path, 1, 1, f"YAML: {exc}")
    except _Shape as exc:
        return _broken(path, exc.node.start_mark, exc.problem)
    finally:
        loader.dispose()

    def absolute(rel: str) -> str:
        return os.path.normpath(os.path.join(directory, rel))

    named = {absolute(rel): what for rel, what in _named(data)}
    resources = frozenset(absolute(r) for r in _strings(data.get("resources")))
    components = frozenset(absolute(c) for c in _strings(data.get("components")) if _local(c))
    return Kustomization(
        directory,
        path,
        named,
        resources,
        any(data.get(f) for f in CHANGES),
        data.get("kind") == COMPONENT,
        components,
    )


def _local(entry: str) -> bool:
    """A ``components`` entry that is a directory of this repository, not a remote one
    (``github.com/org/repo//dir?ref=v1``, ``https://...``: kustomize fetches those)."""
    return "://" not in entry and "?" not in entry and not entry.startswith("github.com/")

"""Which object a reference means when a repository defines it more than once: one
directory per environment (``dev/``, ``prod/``, same names, no namespaces) is the most
common GitOps layout, and one environment's ConfigMap must never roll another's pods.

The rules (docs/concepts/environments.md, with examples), for an object id (kind,
namespace, name) that files in several directories define: walking up from the
workload's file, the first directory that defines it is used (a root ``cm.yaml`` is
shared by every environment below it that defines none), else the definition sharing the
deepest common directory with the workload; two equally near are an error (exit 2)
naming both files, as cmhash cannot tell which one the workload is deployed with.
``scopes:`` in ``.cmhash.yaml`` names directories (glob patterns relative to the config
file) that are each one environment: an object inside a scope is seen only by the
workloads in it, objects outside every scope are shared, and the rules above apply
inside what a workload sees.

Definitions in one directory are one scope: the later one is used, with the
``duplicate-object`` warning (plan/index.py). Input on stdin is one directory.
"""

from __future__ import annotations

import os
from collections import OrderedDict
from collections.abc import Callable, Iterable, Sequence
from fnmatch import fnmatchcase
from typing import TypeVar

from cmhash.analyze.refs import Reference
from cmhash.errors import TieError
from cmhash.model import ResourceId, make_id
from cmhash.plan.index import MARKS, ConfigEntry, ConfigIndex, Place, defined_in
from cmhash.read.source import SourceText

K = TypeVar("K")
V = TypeVar("V")
_TIE = object()  # several definitions equally near: an error when referenced
Ties = dict[ResourceId, dict[str, ConfigEntry]]  # id -> its definitions equally near, by place
Counts = Callable[[Reference, ConfigEntry], bool]  # whether the reference would hash it


def _parts(path: str) -> tuple[str, ...]:
    return tuple(p for p in path.split(os.sep) if p)


def _matches(parts: tuple[str, ...], pattern: tuple[str, ...]) -> bool:
    return len(parts) == len(pattern) and all(
        fnmatchcase(p, q) for p, q in zip(parts, pattern, strict=True)
    )


class Scopes:
    """``scopes:`` patterns (absolute, as the settings hold them) -> the scope of a
    directory: its deepest ancestor-or-self that a pattern names, or None."""

    def __init__(self, patterns: Sequence[str]) -> None:
        # relative patterns (a KRM functionConfig's): against the current directory
        self._patterns = [_parts(os.path.abspath(p)) for p in patterns]
        self._cache: dict[str, tuple[str, ...] | None] = {}

    def __bool__(self) -> bool:
        return bool(self._patterns)

    def of(self, path: str) -> tuple[str, ...] | None:
        found = self._cache.get(path, ())
        if found != ():
            return found
        parts = tuple(p for p in _parts(path) if not p.startswith(MARKS))
        scope = None
        for n in range(len(parts), 0, -1):
            if any(_matches(parts[:n], p) for p in self._patterns):
                scope = parts[:n]
                break
        self._cache[path] = scope
        return scope


class _Near:
    """The directories that define one id, for ``nearest`` in time of the depth of the
    workload's directory, not of the number of directories (a repository with a
    directory per application, each defining ConfigMap ``config``, asks once per
    directory)."""

    def __init__(self, dirs: Iterable[str]) -> None:
        self.dirs: dict[tuple[str, ...], str] = {}
        self.under: dict[tuple[str, ...], list[str]] = {}  # prefix -> the dirs below it
        for d in dirs:
            parts = _parts(d)
            self.dirs[parts] = d
            for n in range(len(parts) + 1):
                self.under.setdefault(parts[:n], []).append(d)

    def nearest(self, where: tuple[str, ...]) -> list[str]:
        """On the way up, the deepest directory that defines it; else the ones sharing
        the deepest common directory with ``where`` (several: a tie)."""
        for n in range(len(where), -1, -1):
            d = self.dirs.get(where[:n])
            if d is not None:
                return [d]
        for n in range(len(where), -1, -1):
            below = self.under.get(where[:n])
            if below:
                return below
        return []


class Scoping:
    """The index each workload sees: ``index.objects`` with the contested ids (defined in
    several directories, or inside a scope) replaced by the definition nearest to the
    workload's directory. Views are shared by the directories that choose alike, so a
    repository without contested ids pays nothing; only the last few are kept (each is
    a copy of the index, and workloads come file by file: a directory per application
    each choosing its own ConfigMap app kept one copy per directory, 475 MB for 3,000)."""

    def __init__(self, index: ConfigIndex, scopes: Scopes, place: Place | None = None) -> None:
        self.index = index
        self.scopes = scopes
        self.place = Place() if place is None else place
        self._contested = {
            key: per
            for key, per in index.by_directory.items()
            if len(per) > 1 or (scopes and any(scopes.of(d) is not None for d in per))
        }
        if scopes:  # an object inside a scope is hidden from the others: contested too
            for key, entry in index.objects.items():
                if key not in self._contested:
                    where = self.place(entry.source, entry.info.offset)
                    if scopes.of(where) is not None:
                        self._contested[key] = {where: entry}
        self._views: OrderedDict[tuple[object, ...], tuple[ConfigIndex, Ties]] = OrderedDict()
        self._by_dir: OrderedDict[str, tuple[ConfigIndex, Ties]] = OrderedDict()
        self._near: dict[tuple[ResourceId, tuple[str, ...] | None], _Near] = {}

    @property
    def contested(self) -> bool:
        """Whether any id is resolved per directory."""
        return bool(self._contested)

    def _nearest(self, where: str, key: ResourceId) -> list[str]:
        """The directories defining ``key`` that ``where`` sees (its scope's and the
        shared ones) nearest to it: one, a tie, or none."""
        scope = self.scopes.of(where) if self.scopes else None
        near = self._near.get((key, scope))
        if near is None:
            per = self._contested[key]
            dirs = [d for d in per if not self.scopes or self.scopes.of(d) in (None, scope)]
            near = self._near[(key, scope)] = _Near(dirs)
        return near.nearest(_parts(where))

    def _view(self, where: str) -> tuple[ConfigIndex, Ties]:
        got = _recent(self._by_dir, where)
        if got is not None:
            return got
        choices: dict[ResourceId, ConfigEntry | object | None] = {}
        for key, per in self._contested.items():
            near = self._nearest(where, key)
            choices[key] = (per[near[0]] if len(near) == 1 else _TIE) if near else None
        signature = tuple(id(c) for c in choices.values())
        got = _recent(self._views, signature)
        if got is None:
            view = ConfigIndex()
            view.objects = dict(self.index.objects)
            view.restarts = self.index.restarts
            view.restarted = self.index.restarted
            ties: Ties = {}
            for key, choice in choices.items():
                if isinstance(choice, ConfigEntry):
                    view.objects[key] = choice
                    continue
                del view.objects[key]
                if choice is _TIE:
                    per = self._contested[key]
                    ties[key] = {d: per[d] for d in self._nearest(where, key)}
            got = (view, ties)
            _keep(self._views, signature, got)
        _keep(self._by_dir, where, got)
        return got

    def index_for(self, src: SourceText, offset: int = 0) -> ConfigIndex:
        """The index a workload at ``offset`` of ``src`` sees."""
        if not self._contested:
            return self.index
        return self._view(self.place(src, offset))[0]

    def check(
        self,
        src: SourceText,
        refs: Sequence[Reference],
        namespace: str,
        label: str,
        counts: Counts | None = None,
        offset: int = 0,
    ) -> None:
        """Stop at the first reference to an id that two directories define equally near
        (rule 2): file, line and column of the reference, both files named. A Reloader
        pattern (``configmap.reloader.stakater.com/reload: "app-.*"``) stands for every name
        it matches, each resolved like a plain reference: one it matches among the tied
        ids is the same error (dropping it would leave a ConfigMap out unseen).
        ``counts``: a reference that would hash none of the tied definitions (the
        workload's ``cmhash.io/sources``, ``--exclude-secrets``, an ignored object) is no
        tie: whichever is deployed, the checksum is the same."""
        if not self._contested:
            return
        ties = self._view(self.place(src, offset))[1]
        if not ties:
            return
        for ref in refs:
            key, named = _tied(ref, ref.namespace or namespace, ties, counts)
            if key is None:
                continue
            line, column = src.position(ref.offset)
            raise TieError(
                f"{label} references {ref.target_kind} {named}, which "
                f"{defined_in(ties[key])} both define, equally "
                "near to this file: cmhash cannot tell which one it is deployed with (run "
                "cmhash on each environment's directory, move the workload into one of "
                "them, or declare the environments with scopes: in .cmhash.yaml)",
                path=src.display,
                line=line,
                column=column,
            )


def _tied(
    ref: Reference, ns: str, ties: Ties, counts: Counts | None
) -> tuple[ResourceId | None, str]:
    """The tied id ``ref`` stands for and would hash (a pattern: the first name it
    matches), and how the message names it."""
    if not ref.pattern:
        key = make_id(("", ref.target_kind, ns, ref.name))
        hit = key in ties and (counts is None or any(counts(ref, e) for e in ties[key].values()))
        return (key if hit else None), repr(ref.name)
    from cmhash.analyze import patterns  # (RE2: a run with a reload-list pattern)

    hits = sorted(
        (k for k in ties if k.kind == ref.target_kind and k.namespace == ns),
        key=lambda k: k.name,
    )
    for k in hits:
        one = ref._replace(name=k.name, pattern=False)
        if patterns.matches(ref.name, k.name) and (
            counts is None or any(counts(one, e) for e in ties[k].values())
        ):
            return k, f"{k.name!r} (matched by {ref.declared_by}: {ref.name!r})"
    return None, ""


_KEPT = 8  # views kept (plan/scopes.py Scoping): enough for the files of a directory


def _recent(cache: OrderedDict[K, V], key: K) -> V | None:
    got = cache.get(key)
    if got is not None:
        cache.move_to_end(key)
    return got


def _keep(cache: OrderedDict[K, V], key: K, value: V) -> None:
    cache[key] = value
    if len(cache) > _KEPT:
        cache.popitem(last=False)

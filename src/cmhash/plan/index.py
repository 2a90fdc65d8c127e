"""The reduce stage's first step: every ConfigMap and Secret of the input, by identity.
References never cross namespaces; an object without one is in ``--namespace`` (or in
none). An id that files in several directories define is kept per directory
(``by_directory``): environments of one repository, which plan/scopes.py tells apart;
only definitions in one directory are duplicates. Several Helm releases in one stream
(``helmfile template``, plan/renders.py) are told apart the same way: each render is a
place of its own below the source's directory (``Place``), as its objects, which name
no namespace, are deployed into its own release namespace."""

# No "from __future__ import annotations": typing compiles string NamedTuple fields at import

import functools
import os
from collections.abc import Callable, Iterable
from typing import NamedTuple

from cmhash.analyze.summaries import ConfigInfo
from cmhash.findings import Code, Finding, finding
from cmhash.model import ResourceId, make_id
from cmhash.plan.options import PlanOptions
from cmhash.plan.selection import first_match
from cmhash.read.source import SourceText


class ConfigEntry(NamedTuple):
    source: SourceText
    info: ConfigInfo
    namespace: str  # as written, else the default namespace, else ""
    excluded: str | None = None  # why it is out of every checksum (annotation or rule)

    @property
    def id(self) -> ResourceId:
        return self.info.id(self.namespace)


# ConfigEntry((source, info, namespace, excluded)) without a Python frame (build_index)
_entry = functools.partial(tuple.__new__, ConfigEntry)


class ConfigIndex:
    def __init__(self) -> None:
        self.objects: dict[ResourceId, ConfigEntry] = {}
        # id -> directory -> its definition there, for ids defined in several directories
        self.by_directory: dict[ResourceId, dict[str, ConfigEntry]] = {}
        self._namespaces: dict[tuple[str, str], set[str]] | None = None  # (other_namespaces)
        self._matched: dict[tuple[str, str, str], list[ConfigEntry]] = {}  # (matching)
        # a Secret that a source in the input writes besides its entry (a Secret the
        # input defines, or another source's): id -> that source ("ExternalSecret/db"),
        # which would go on writing the old name were the entry renamed
        self.writers: dict[ResourceId, str] = {}
        # (kind, namespace, name) of every source object in the input (an
        # ExternalSecret, ...): a name a renamed source may not take
        self.sources: set[tuple[str, str, str]] = set()
        # an object says cmhash.io/restart (its reason enters its users' checksums)
        self.restarts = False
        # (group, kind, namespace, name) of a workload an operator restarts itself when
        # an object changes (Vault Secrets Operator's rolloutRestartTargets) -> those
        self.restarted: dict[tuple[str, str, str, str], list[ConfigEntry]] = {}

    def every(self) -> list[ConfigEntry]:
        """Every definition: the ids' entries, and for an id that several directories
        define, the other directories' too (explain lists each)."""
        seen = {id(e) for e in self.objects.values()}
        return list(self.objects.values()) + [
            e for per in self.by_directory.values() for e in per.values() if id(e) not in seen
        ]

    def other_namespaces(self, kind: str, name: str, ns: str) -> set[str]:
        """The namespaces other than ``ns`` that have an object ``kind``/``name`` (for a
        reference that finds none in its own: rare, so worked out on the first ask)."""
        if self._namespaces is None:
            self._namespaces = {}
            for key in self.objects:
                self._namespaces.setdefault((key.kind, key.name), set()).add(key.namespace)
        return self._namespaces.get((kind, name), set()) - {ns}

    def matching(self, kind: str, namespace: str, pattern: str) -> list[ConfigEntry]:
        """Objects of ``kind`` in ``namespace`` whose name Reloader's pattern selects
        (analyze/patterns.py), sorted by name."""
        key = (kind, namespace, pattern)
        if key not in self._matched:
            self.prepare_patterns([key])
        return self._matched[key]

    def prepare_patterns(self, wanted: Iterable[tuple[str, str, str]]) -> None:
        """Match every (kind, namespace, pattern) at once: one RE2 Set per kind and
        namespace, each name scanned once (1,000 patterns x 10,000 names: one pass)."""
        groups: dict[tuple[str, str], list[str]] = {}
        for kind, namespace, pattern in wanted:
            if (kind, namespace, pattern) not in self._matched:
                groups.setdefault((kind, namespace), []).append(pattern)
        if not groups:
            return  # no reload-list pattern: RE2 (patterns.py) is not imported
        from cmhash.analyze import patterns

        for (kind, namespace), items in groups.items():
            entries = {
                k.name: e
                for k, e in self.objects.items()
                if k.kind == kind and k.namespace == namespace
            }
            hits = patterns.match_all(items, sorted(entries))
            for item, names in hits.items():
                self._matched[(kind, namespace, item)] = [entries[n] for n in names]


def _shadowed(entry: ConfigEntry, prev: ConfigEntry) -> Finding:
    real, produced = (prev, entry) if entry.info.source is not None else (entry, prev)
    info = produced.info
    rline = real.source.position(real.info.offset)[0]
    return finding(
        produced.source,
        info.offset,
        Code.SHADOWED_SOURCE,
        f"{info.source} produces {info.kind} {info.name!r}, which the input also defines at "
        f"{real.source.display}:{rline}; that {info.kind} is used and {info.source} is left "
        "out (remove one of them, unless the source merges into it: then its own changes "
        "roll nothing)",
        resource=ResourceId.config(info.kind, info.namespace or "", info.name),
        api_version="v1",
    )


RENDER_MARK = "\0"  # starts the path segment of a render (never a directory name)
FILE_MARK = "\1"  # starts the path segment of a source that is a place of its own
MARKS = (RENDER_MARK, FILE_MARK)
Render = Callable[[SourceText, int], "str | None"]  # the render at an offset, if several


class Place:
    """Where a definition or a workload is, for plan/scopes.py: its source's directory;
    for a file that is a render of its own (``apart``: Helm output, plan/helm.py), the
    file as a segment below it; inside a Helm stream of several releases (``render``),
    its render as a segment below that. So a release's workloads use their own
    release's objects first (the nearest place), and a definition in two releases (two
    committed renders in one directory, or two in one stream) is no duplicate."""

    def __init__(
        self, render: Render | None = None, apart: Callable[[SourceText], bool] | None = None
    ) -> None:
        self.render = render
        self.apart = apart
        self._dirs: dict[int, str] = {}

    def __call__(self, src: SourceText, offset: int) -> str:
        where = self._dirs.get(id(src))
        if where is None:
            where = "" if src.is_stdin else os.path.dirname(os.path.abspath(src.path))
            if self.apart is not None and not src.is_stdin and self.apart(src):
                where = os.path.join(where, f"{FILE_MARK}{os.path.basename(src.path)}")
            self._dirs[id(src)] = where
        unit = self.render(src, offset) if self.render is not None else None
        return where if unit is None else os.path.join(where, f"{RENDER_MARK}{unit}")


def several_places(per: dict[str, ConfigEntry]) -> tuple[str, str]:
    """What the places of ``per`` are, for a message: ("several directories", one of
    them), or for Helm renders (committed render files side by side, releases in one
    stream: a directory is no way to pick one) ("several Helm renders", a file to run
    on, or "" inside one stream)."""
    rendered = [w for w in per if os.path.basename(w).startswith(MARKS)]
    if not rendered:
        entry = next(iter(per.values()))
        return "several directories", entry.source.display.rpartition("/")[0] or "."
    what = "several Helm renders" if len(rendered) == len(per) else "several places"
    where, entry = next((w, e) for w, e in per.items() if w in rendered)
    in_stream = os.path.basename(where).startswith(RENDER_MARK)
    return what, "" if in_stream else entry.source.display


def defined_in(per: dict[str, ConfigEntry]) -> str:
    """The places of ``per`` (place -> definition) as messages name them: the files, and
    for a Helm render of several in one file, which one (``s.yaml (render demo#2)``)."""
    shown = []
    for where, entry in per.items():
        last = os.path.basename(where)
        render = f" (render {last[1:]})" if last.startswith(RENDER_MARK) else ""
        shown.append(entry.source.display + render)
    return " and ".join(shown)


def build_index(
    configs: list[tuple[SourceText, ConfigInfo]],
    options: PlanOptions,
    findings: list[Finding],
    default_namespace: Callable[[SourceText, int], str | None] | None = None,
    place: Place | None = None,
) -> ConfigIndex:
    """``default_namespace``: the namespace of an object that names none, by source and
    offset (a Helm render's release namespace, plan/helm.py), instead of
    ``options.namespace``. ``place``: where each definition is (by default its
    source's directory)."""
    index = ConfigIndex()
    objects = index.objects
    by_directory = index.by_directory
    place = Place() if place is None else place
    renders = place.render is not None
    default = options.namespace or ""
    rules = options.ignore_configs
    for src, info in configs:
        namespace = info.namespace or (
            default_namespace(src, info.offset) or "" if default_namespace else default
        )
        excluded = info.excluded
        if excluded is None and rules:
            rule = first_match(rules, info.kind, namespace, info.name, dict(info.labels))
            excluded = f"ignored by {rule.where} of the configuration" if rule else None
        entry = _entry((src, info, namespace, excluded))
        if info.restart is not None:
            index.restarts = True
        for group, kind, name, _ in info.restarts:
            index.restarted.setdefault((group, kind, namespace, name), []).append(entry)
        if info.source is not None:
            kind, _, name = info.source.partition("/")
            index.sources.add((kind, namespace, name))
        key = make_id(("", info.kind, namespace, info.name))  # entry.id, without frames
        prev = objects.get(key)
        per = None
        where = ""
        if prev is not None:
            where = place(src, info.offset)
            per = by_directory.get(key)
            if per is None and (renders or prev.source is not src):
                pdir = place(prev.source, prev.info.offset)
                if pdir != where:
                    per = by_directory[key] = {pdir: prev}
            if per is not None:
                prev = per.get(where)
        if prev is not None and (prev.info.source is None) != (info.source is None):
            findings.append(_shadowed(entry, prev))
            index.writers.setdefault(key, str(info.source or prev.info.source))
            if info.source is not None:
                continue  # the object itself wins, whatever the order
        elif prev is not None:
            if prev.info.source is not None:
                index.writers.setdefault(key, prev.info.source)
            pline = prev.source.position(prev.info.offset)[0]
            findings.append(
                finding(
                    src,
                    info.offset,
                    Code.DUPLICATE_OBJECT,
                    f"{info.kind} {info.name!r} is also defined at {prev.source.display}:{pline}; "
                    "this later definition is used",
                    resource=ResourceId.config(info.kind, info.namespace or "", info.name),
                    api_version="v1",
                )
            )
        objects[key] = entry
        if per is not None:
            per[where] = entry
    if any(e.info.depends for e in objects.values()):
        _copy_dependencies(index)
    return index


def _copy_dependencies(index: ConfigIndex) -> None:
    """What a source copies from other objects (ExternalSecret ``templateFrom``) becomes
    part of its content: ``templateFrom/<kind>/<name>/<key>`` entries, so a change of a
    template ConfigMap changes the produced Secret's hash. Objects not in the input add
    nothing (cmhash cannot see them); a source's own dependencies are not followed."""
    objects = index.objects
    for key, entry in list(objects.items()):
        info = entry.info
        if not info.depends:
            continue
        extra: dict[str, bytes] = {}
        for kind, name, keys in info.depends:
            dep = objects.get(make_id(("", kind, entry.namespace, name)))
            if dep is None or dep is entry:
                continue
            have = dep.info.content.entries
            for k in sorted(have) if keys is None else keys:
                if k in have:
                    extra[f"templateFrom/{kind}/{name}/{k}"] = have[k]
        if extra:
            content = info.content._replace(entries={**info.content.entries, **extra})
            objects[key] = entry._replace(info=info._replace(content=content))

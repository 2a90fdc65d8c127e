"""A bounded history of versioned objects, offline: ``--keep-versions N --previous PREV``.

``--versioned`` gives each content of a ConfigMap/Secret its own name; the versions
before it are what a rollback (``kubectl rollout undo``, the old ReplicaSet) reads. They
must exist, but not forever. PREV is the previous cmhash output (the merge base's
render, ``helm get manifest``, an environment branch). From it, up to N-1 earlier
versions of each versioned object are carried into the output, each document copied
byte for byte from PREV after one comment line that marks it::

    ---
    # cmhash.io/kept-version: 1 ConfigMap shop/app
    apiVersion: v1
    kind: ConfigMap
    ...

(age 1: the version just before the current one). A document written after directives
(``%YAML 1.1``, ``%TAG``) keeps them, before its marker and after a ``...`` line: the
only place YAML (and kubectl's stream splitter) takes them after another document, so
that the output reads back as PREV. Versions older than the window are left out: Helm,
Argo CD and Flux (prune), and ``kubectl apply --prune``, delete exactly those, because
they left the output. The age only grows when a new version appears:
the same input and PREV give the same output, and the output fed back as PREV adds
nothing. A Secret is copied as text: never decoded, never shown (its marker names the
base name only).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from contextlib import suppress
from typing import NamedTuple

from cmhash.analyze.versioned_names import VERSIONABLE, base_name, own_names
from cmhash.errors import NodeError
from cmhash.knowledge.sources import BUILTIN_SOURCES
from cmhash.model import ResourceId
from cmhash.parse.events import backend, parse_chunk
from cmhash.parse.resources import document_resources
from cmhash.plan.source_versions import own_source
from cmhash.plan.versioning.decision import Renamed, Versioning
from cmhash.read.source import SourceText
from cmhash.read.split import split_chunks

MARK = "cmhash.io/kept-version"
_MARK = re.compile(rf"# {re.escape(MARK)}: (\d+) ([A-Za-z]+) \S+[ \t]*\r?\n")
# what a history holds: versioned ConfigMaps and Secrets, and the versioned sources
# that produce Secrets in the cluster (an ExternalSecret, a SecretProviderClass, a
# namespace-wide SealedSecret: the old producer stays for old pods)
KINDS = frozenset(
    {("", k) for k in VERSIONABLE} | {(r.group, r.kind) for r in BUILTIN_SOURCES if r.versioning}
)
_KIND_LINE = re.compile(
    r"(?m)^\s*[\"']?kind[\"']?\s*:\s*[\"']?(?:"
    + "|".join(sorted({re.escape(k) for _, k in KINDS}))
    + r")\b"
)
_START = re.compile(r"---[ \t]*(?:#[^\n]*)?\r?\n")
_END = re.compile(r"(?m)^\.\.\.[ \t]*(?:#[^\n]*)?\r?\n\Z")  # a document end marker, last
_DIRECTIVES_END = re.compile(r"(?m)^---(?=[ \t\r\n]|\Z)")  # the marker after directives


class Identity(NamedTuple):
    """A versioned object across renders: its kind, namespace and base name."""

    kind: str
    namespace: str
    base: str

    @property
    def label(self) -> str:
        return f"{self.kind} {self.namespace + '/' if self.namespace else ''}{self.base}"


class Version(NamedTuple):
    identity: Identity
    name: str
    age: int  # 0: the current version of that render
    body: str  # the document's text in PREV, without its document marker and mark
    offset: int
    directives: str = ""  # its ``%YAML``/``%TAG`` lines, which go before its marker


class History(NamedTuple):
    carried: list[Version]  # with their new ages
    pruned: list[Version]  # left the window (their ages in PREV)
    nothing: str | None = None  # why PREV cannot carry anything (empty, no object, ...)

    def text(self) -> str:
        """The carried documents, marked, as a stream to append to the output."""
        out = []
        ended = False  # the text so far ends with a document end marker (``...``)
        for v in self.carried:
            first = v.body.find("\n")  # the document's own line ends, for the lines around it
            nl = "\r\n" if first > 0 and v.body[first - 1] == "\r" else "\n"
            body = v.body if v.body.endswith("\n") else v.body + nl
            # a document with directives: they come before its marker, and YAML allows
            # them only at the stream's start or after a document end marker (``...``)
            before = "" if not v.directives else v.directives if ended else f"...{nl}{v.directives}"
            out.append(f"{before}---{nl}# {MARK}: {v.age} {v.identity.label}{nl}{body}")
            ended = _END.search(body) is not None
        return "".join(out)


def _split_body(text: str) -> tuple[int, str, str]:
    """(age, body, directives) of one PREV document: its directives (the lines before its
    ``---`` line: the splitter starts a document that has any at its first ``%``), its
    ``---`` line and its mark removed."""
    rest, directives = text, ""
    if rest.startswith("%"):
        m = _DIRECTIVES_END.search(rest)
        if m is not None:
            directives, rest = rest[: m.start()], rest[m.start() :]
    m = _START.match(rest)
    if m is not None:
        rest = rest[m.end() :]
    mark = _MARK.match(rest)
    if mark is None:
        return 0, rest, directives
    return int(mark.group(1)), rest[mark.end() :], directives


class Previous(NamedTuple):
    versions: list[Version]  # its ConfigMap/Secret (and source) documents
    objects: int  # the documents that are Kubernetes objects (a kind), of any kind
    documents: int  # the documents that hold anything (not empty, not only comments)


def versions(
    prev: SourceText, default_ns: str, unwritten: dict[tuple[str, str], str] | None = None
) -> Previous:
    """Every ConfigMap/Secret document of PREV, with its identity and age, and how many
    objects PREV holds. Every document is parsed: one that does not parse as YAML is an
    error (exit 2) at its position in PREV, whatever it holds. ``unwritten``: (kind, base
    name) -> the namespace the input gives that object when it writes none (a Helm
    render's release namespace, plan/helm.py); a PREV document that writes none either
    is in the same one."""
    fast = backend("fast")
    found: list[tuple[str, str, str, int, str, int, str]] = []
    objects = documents = 0
    for index, (start, end) in enumerate(split_chunks(prev.text)):
        chunk = prev.text[start:end]
        try:
            roots = parse_chunk(chunk, start, fast)
            versionable = _KIND_LINE.search(chunk) is not None
            resources = document_resources(prev, index, roots) if versionable else []
        except NodeError as exc:
            raise prev.error(
                f"--previous: not a manifest stream cmhash can read ({exc.public})", exc.offset
            ) from None
        documents += sum(1 for root in roots if not root.is_null)
        if not versionable:
            # a document that is no object (``foo: bar``, a scalar) counts none: PREV's
            # other objects are not cmhash's to judge
            with suppress(NodeError):
                objects += len(document_resources(prev, index, roots))
            continue
        objects += len(resources)
        if len(resources) != 1 or resources[0].node is not roots[0]:
            continue  # a List: its items cannot be copied as documents
        res = resources[0]
        if (res.group, res.kind) not in KINDS or not res.name:
            continue
        if res.group == "" and res.api_version != "v1":
            continue
        age, body, directives = _split_body(chunk)
        ns = res.namespace or (unwritten or {}).get((res.kind, base_name(res.name)), default_ns)
        found.append((res.kind, ns, res.name, age, body, start, directives))
    own = own_names(ResourceId.config(k, n, name) for k, n, name, *_ in found)
    out = []
    for kind, ns, name, age, body, offset, directives in found:
        base = name if ResourceId.config(kind, ns, name) in own else base_name(name)
        out.append(Version(Identity(kind, ns, base), name, age, body, offset, directives))
    return Previous(out, objects, documents)


def _names(key: ResourceId, r: Renamed) -> list[tuple[str, str]]:
    """(kind, name in the output) of a versioned object, and of its source when it is
    renamed with it."""
    src = own_source(r.entry, base_name(r.old), r.new)
    return [(key.kind, r.new)] if src is None else [(key.kind, r.new), src]


def current(versioning: Versioning) -> dict[Identity, str]:
    """The versioned objects of this run: identity -> name in the output (a renamed
    source under its own kind and name)."""
    return {
        Identity(kind, key.namespace, base_name(name)): name
        for key, r in versioning.renamed.items()
        for kind, name in _names(key, r)
    }


def _unwritten(versioning: Versioning) -> dict[tuple[str, str], str]:
    """(kind, base name) -> namespace of this run's versioned objects that write no
    namespace (the one they are taken to be in)."""
    return {
        (kind, base_name(name)): key.namespace
        for key, r in versioning.renamed.items()
        if r.entry.info.namespace is None
        for kind, name in _names(key, r)
    }


def windows(versioning: Versioning) -> dict[Identity, tuple[int, str]]:
    """Objects whose own annotation bounds their history (kapp num-versions, Spinnaker
    max-version-history; analyze/versioned.py WINDOW_ANNOTATIONS): identity -> (the
    number of versions to keep, the current one included, and what said so), on their
    sources too. Each tool reads a whole number; anything else, or less than 1, is an
    error at the value."""
    out: dict[Identity, tuple[int, str]] = {}
    for key, r in versioning.renamed.items():
        window = r.entry.info.window
        if window is None:
            continue
        annotation, value, offset = window
        text = value.strip()
        if not text.isdigit() or int(text) < 1:
            raise r.entry.source.error(
                f"{annotation} must be a whole number of versions, 1 or more "
                f"(--keep-versions reads it for this object), not {value!r}",
                offset,
            )
        for kind, name in _names(key, r):
            out[Identity(kind, key.namespace, base_name(name))] = (int(text), annotation)
    return out


def carry(
    prev: SourceText,
    versioning: Versioning,
    keep: int,
    default_ns: str,
    present: frozenset[tuple[str, str, str]] = frozenset(),
) -> History:
    """What to carry from PREV with ``--keep-versions keep`` (or an object's own bound,
    ``windows``), and what leaves. ``present``: (kind, namespace, name) of the input's
    objects; a version among them is in the output already, and is not carried again."""
    now = current(versioning)
    own_keep = windows(versioning)
    before, objects, documents = versions(prev, default_ns, _unwritten(versioning))
    versioned_before = [v for v in before if v.name != v.identity.base or v.age]
    shared = any(v.identity in now for v in before)
    nothing = _nothing(documents, objects, bool(versioned_before), shared)
    if nothing is not None:
        return History([], [], nothing)
    if now and versioned_before and not any(v.identity in now for v in versioned_before):
        first = versioned_before[0]
        raise prev.error(
            f"--previous shares no versioned ConfigMap or Secret with the input (it has "
            f"{first.identity.label}, the input does not): is it another application's "
            "output? Pass the previous render of this one",
            first.offset,
        )
    carried: dict[tuple[Identity, str], Version] = {}
    pruned: list[Version] = []
    by_identity: dict[Identity, list[Version]] = {}
    for v in before:
        by_identity.setdefault(v.identity, []).append(v)
    for identity, vs in sorted(by_identity.items()):
        name = now.get(identity)
        if name is None:
            pruned += [v for v in vs if v.name != v.identity.base or v.age]
            continue
        shift = 0 if any(v.age == 0 and v.name == name for v in vs) else 1
        window = own_keep[identity][0] if identity in own_keep else keep
        for v in sorted(vs, key=lambda v: v.age):
            if v.name == name or (v.identity.kind, v.identity.namespace, v.name) in present:
                continue  # the current version, or one the input has itself
            age = max(v.age + shift, 1)
            if age > window - 1:
                pruned.append(v)
            elif (identity, v.name) not in carried:
                carried[(identity, v.name)] = v._replace(age=age)
    ordered = sorted(carried.values(), key=lambda v: (v.identity, v.age, v.name))
    return History(ordered, pruned)


def _nothing(documents: int, objects: int, versioned: bool, shared: bool) -> str | None:
    """Why a PREV that parses can carry nothing, or None: it is empty, it holds no
    Kubernetes object, or none of the input's versioned objects in any version (the
    first render with --keep-versions: PREV is the output of a run without it). PREV's
    versions of other objects are another application's output: refused (``carry``)."""
    if objects == 0:
        what = "holds no Kubernetes object" if documents else "is empty (or only comments)"
    elif not shared and not versioned:
        what = "holds no version of a versioned ConfigMap or Secret of the input"
    else:
        return None
    return f"--previous {what}: nothing is carried (as on the first render with --keep-versions)"


def is_carried(source: SourceText, offset: int) -> bool:
    """Whether the document at ``offset`` is a version a previous run carried (its mark
    is the comment line after the document's ``---``)."""
    start = source.text.rfind("---", 0, offset)
    if start < 0:
        return False
    line_end = source.text.find("\n", start)
    return line_end >= 0 and _MARK.match(source.text, line_end + 1) is not None


def pruned(old: Iterable[ResourceId], new: Iterable[ResourceId]) -> list[ResourceId]:
    """The versions OLD has and NEW does not: what Helm, Argo CD, Flux or ``kubectl
    apply --prune`` delete when NEW is applied (``report``)."""
    present = set(new)
    olds = [k for k in old if k.kind in VERSIONABLE]
    own = own_names(olds)
    return sorted(
        k for k in olds if k not in present and k not in own and base_name(k.name) != k.name
    )

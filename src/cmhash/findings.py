"""Findings: stable code, level, message and the 1-based position they point at."""

# No "from __future__ import annotations": typing compiles string NamedTuple fields at import

from collections.abc import Mapping
from fnmatch import fnmatchcase
from typing import Any, NamedTuple, Protocol

from cmhash.model import Level, ResourceId, TextEnum

# kept as names for the modules and templates that use the level text
ERROR, WARNING, INFO = Level.ERROR, Level.WARNING, Level.INFO


class Code(TextEnum):
    """The stable codes: tools key on them (KRM results, Code Quality, grep)."""

    MISSING_REFERENCE = "missing-reference"
    NAMESPACE_MISMATCH = "namespace-mismatch"
    MISSING_KEY = "missing-key"
    JOB_NOT_ANNOTATED = "job-not-annotated"
    JOB_NOT_RENAMED = "job-not-renamed"
    POD_NOT_ANNOTATED = "pod-not-annotated"
    NO_RESTART = "no-restart"
    REPLACED_ANNOTATION = "replaced-annotation"
    STALE_ANNOTATION = "stale-annotation"
    WORKLOAD_REF = "workload-ref"
    NO_TEMPLATE = "no-template"
    SUBPATH_MOUNT = "subpath-mount"
    IMMUTABLE_CONFIG = "immutable-config"
    DUPLICATE_OBJECT = "duplicate-object"
    SHADOWED_SOURCE = "shadowed-source"
    NOT_VERSIONED = "not-versioned"
    VERSIONED_UNREFERENCED = "versioned-unreferenced"
    UNKNOWN_REFERENCE = "unknown-reference"
    HELM_NAMESPACE = "helm-namespace"
    SKIPPED_ITEM = "skipped-item"
    UNPINNED_SOURCE = "unpinned-source"
    REFERENCE_SHAPE = "reference-shape"
    MISPLACED_ANNOTATION = "misplaced-annotation"
    LIVE_RELOADED = "live-reloaded"
    EMPTY_INPUT = "empty-input"
    ROLLOUT_DOWNTIME = "rollout-downtime"


# code -> (default level, one-line description)
CODES: dict[Code, tuple[Level, str]] = {
    Code.MISSING_REFERENCE: (
        WARNING,
        "a non-optional ConfigMap/Secret reference names an object that is not in the input",
    ),
    Code.NAMESPACE_MISMATCH: (WARNING, "a reference could only match across a namespace boundary"),
    Code.MISSING_KEY: (WARNING, "a reference names a key the in-stream object does not have"),
    Code.JOB_NOT_ANNOTATED: (
        WARNING,
        "a Job uses in-stream config; its template is immutable, so it is not annotated",
    ),
    Code.JOB_NOT_RENAMED: (
        INFO,
        "--jobs=rename leaves a Helm or Argo CD hook Job, or a generateName one, as it is: "
        "its tool or the API server makes a new Job each time",
    ),
    Code.POD_NOT_ANNOTATED: (
        INFO,
        "a bare Pod uses in-stream config; an annotation would not restart it",
    ),
    Code.NO_RESTART: (WARNING, "the annotation changes but existing pods are not replaced"),
    Code.REPLACED_ANNOTATION: (
        WARNING,
        "a value under our key that cmhash did not write (a chart's own checksum) was replaced",
    ),
    Code.STALE_ANNOTATION: (
        WARNING,
        "the workload carries our annotation but uses no in-stream config; left untouched",
    ),
    Code.WORKLOAD_REF: (INFO, "an Argo Rollout using workloadRef has no template to annotate"),
    Code.NO_TEMPLATE: (
        INFO,
        "a workload kind without its pod template (a patch or partial manifest): not annotated",
    ),
    Code.SUBPATH_MOUNT: (
        INFO,
        "a ConfigMap/Secret volume is mounted with subPath: never "
        "updated in place, only a restart delivers changes",
    ),
    Code.IMMUTABLE_CONFIG: (
        ERROR,
        "report: an immutable ConfigMap/Secret changed; kubectl apply will fail on it",
    ),
    Code.DUPLICATE_OBJECT: (WARNING, "the same object is defined twice; the last one is used"),
    Code.SHADOWED_SOURCE: (
        WARNING,
        "a Secret/ConfigMap and a source that produces the same name are both in the "
        "input; the object itself is used",
    ),
    Code.NOT_VERSIONED: (
        INFO,
        "--versioned leaves an object alone: a workload cmhash may not edit references "
        "it, an application reads it by name, or its source forbids a new name (a "
        "strict-scope SealedSecret, an ExternalSecret that does not own its Secret)",
    ),
    Code.VERSIONED_UNREFERENCED: (
        WARNING,
        "a versioned object nothing in the input references (an error with --strict)",
    ),
    Code.UNKNOWN_REFERENCE: (
        WARNING,
        "a versioned object's old name appears where cmhash does not rewrite references",
    ),
    Code.HELM_NAMESPACE: (
        WARNING,
        "an exported HELM_NAMESPACE is not the release namespace the chart's own "
        "references show (stale?); the chart's is used",
    ),
    Code.UNPINNED_SOURCE: (
        INFO,
        "--versioned: a secret source reads a store value no version pins (an "
        "ExternalSecret remoteRef without version, a dataFrom find): it can change "
        "with no change in Git, so the checksum does not follow it",
    ),
    Code.REFERENCE_SHAPE: (
        WARNING,
        "a reference field of an operator's resource is not the shape its profile reads "
        "(a string where {name, key} is expected, ...): it counts for nothing (an error "
        "with --strict)",
    ),
    Code.SKIPPED_ITEM: (
        WARNING,
        "an annotation item the tool that defines it skips (a Wave item with two '/')",
    ),
    Code.LIVE_RELOADED: (
        INFO,
        "an operator's own config reloader applies these objects without a restart (an "
        "Alertmanager's configuration): left out of its checksum (--hash-live-reloaded "
        "counts them)",
    ),
    Code.MISPLACED_ANNOTATION: (
        INFO,
        "an annotation written where the tool that defines it does not read it (Wave's on "
        "the pod template, Reloader's ignore on a workload): it does nothing there, for "
        "that tool and for cmhash (a warning with --strict)",
    ),
    Code.EMPTY_INPUT: (
        WARNING,
        "report: OLD or NEW holds no Kubernetes object (an empty pipe or file: a failed "
        "render?), compared as a render of nothing (an error with --strict)",
    ),
    Code.ROLLOUT_DOWNTIME: (
        WARNING,
        "report: a restarting workload has no pod available at some point of its rollout "
        "(Recreate, one replica with maxSurge 0, maxUnavailable at least the replicas, a "
        "one-replica StatefulSet); the message gives the fix",
    ),
}

# Findings whose reference counts for nothing in the checksum though its object may be
# what the pod uses: an object the input has in another namespace only, a reference
# field of an operator's resource cmhash cannot read. Where a route shows no warning
# (kustomize running cmhash as a KRM function or an exec transformer), these are errors
# (integrations/unshown.py); elsewhere they keep their level.
DROPS_A_REFERENCE = frozenset((Code.NAMESPACE_MISMATCH, Code.REFERENCE_SHAPE))


class Finding(NamedTuple):
    path: str
    line: int
    column: int
    level: Level
    code: Code
    message: str
    workload: str | None = None  # Kind/name of the workload concerned, when there is one
    resource: ResourceId | None = None  # the object concerned (KRM resourceRef)
    api_version: str | None = None  # its apiVersion, as written
    field: str | None = None  # the field path of the reference concerned

    def sort_key(self) -> tuple[str, int, int, int, str]:
        return (self.path, self.line, self.column, self.level.rank, self.code.value)

    def format(self) -> str:
        """``path:line:col: level: message [code]``; line 0: a place without a line (the
        file kustomize's origin annotation names, unshown.with_origins)."""
        where = f"{self.path}:{self.line}:{self.column}" if self.line else self.path
        return f"{where}: {self.level}: {self.message} [{self.code}]"

    def about(self) -> str:
        """The object as 'apiVersion/kind/name/namespace' ('' without one): what Code
        Quality fingerprints have always hashed, so they stay the same."""
        if self.resource is None:
            return ""
        r = self.resource
        return "/".join((self.api_version or "", r.kind, r.name, r.namespace))


class Positions(Protocol):
    """What a finding needs of its input (``read.source.SourceText``): the name it is
    shown by and 1-based positions."""

    @property
    def display(self) -> str: ...

    def position(self, offset: int) -> tuple[int, int]: ...


class About(NamedTuple):
    """The workload a finding is about (what findings need of it)."""

    label: str
    resource: ResourceId
    api_version: str


def finding(
    source: Positions,
    offset: int,
    code: Code,
    message: str,
    *,
    level: Level | None = None,
    about: About | None = None,
    resource: ResourceId | None = None,
    api_version: str | None = None,
    field: str | None = None,
) -> Finding:
    """A finding at ``offset`` of ``source``, at its code's level unless ``level``."""
    line, col = source.position(offset)
    label = None
    if about is not None:
        label, resource, api_version = about
    return Finding(
        source.display,
        line,
        col,
        level or CODES[code][0],
        code,
        message,
        label,
        resource,
        api_version,
        field,
    )


class Acknowledgement(NamedTuple):
    """One ``acknowledge:`` entry of the config: a known finding, one code on one object
    (kind and name, fnmatch globs; the namespace too when given)."""

    where: str  # "acknowledge[0]"
    code: Code
    kind: str
    name: str
    namespace: str | None = None
    reason: str = ""

    def matches(self, f: Finding) -> bool:
        r = f.resource
        if f.code is not self.code or r is None:
            return False
        if not (fnmatchcase(r.kind, self.kind) and fnmatchcase(r.name, self.name)):
            return False
        return self.namespace is None or fnmatchcase(r.namespace, self.namespace)


def acknowledgements(entries: list[dict[str, Any]] | None) -> tuple[Acknowledgement, ...]:
    """The config's ``acknowledge:`` (validated by the schema)."""
    return tuple(
        Acknowledgement(
            f"acknowledge[{i}]",
            Code(e["code"]),
            e["kind"],
            e["name"],
            e.get("namespace"),
            e.get("reason", ""),
        )
        for i, e in enumerate(entries or ())
    )


def acknowledged(
    findings: list[Finding],
    acks: tuple[Acknowledgement, ...],
    annotated: Mapping[ResourceId, tuple[str, ...]],
) -> list[Finding]:
    """Findings an ``acknowledge:`` entry names, or their workload's
    ``cmhash.io/acknowledge`` annotation, become info, saying so (with the entry's
    reason): still shown (explain, reports, KRM results), never failing a run."""
    if not acks and not annotated:
        return findings
    out = []
    for f in findings:
        ack = next((a for a in acks if a.matches(f)), None)
        if ack is not None:
            why = f": {ack.reason}" if ack.reason else ""
            f = f._replace(level=INFO, message=f"{f.message} (acknowledged in {ack.where}{why})")
        elif f.resource is not None and f.code.value in annotated.get(f.resource, ()):
            f = f._replace(
                level=INFO, message=f"{f.message} (acknowledged by cmhash.io/acknowledge)"
            )
        out.append(f)
    return out

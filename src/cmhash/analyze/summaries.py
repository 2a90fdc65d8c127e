"""What the map stage hands to the reduce stage: a small summary per document, per
ConfigMap/Secret and per workload. A big run keeps tens of thousands of these after the
parse trees are gone, so they hold plain values only."""

# No "from __future__ import annotations": typing compiles string NamedTuple fields at import

from typing import TYPE_CHECKING, NamedTuple

from cmhash.analyze.annotations import Spot
from cmhash.analyze.declared import Selection, Skipped
from cmhash.analyze.hashing import Content
from cmhash.analyze.refs import Reference, SubPathMount
from cmhash.edit.splice import Edit
from cmhash.errors import NodeError
from cmhash.findings import About
from cmhash.knowledge.kinds import WorkloadKind
from cmhash.knowledge.sources import Depends
from cmhash.model import ResourceId, TextEnum
from cmhash.read.split import Chunk
from cmhash.record import Record

if TYPE_CHECKING:  # (--jobs=rename and source objects only: not imported by a plain run)
    from cmhash.analyze.jobs import JobRename
    from cmhash.analyze.versioned_sources import Producer


class SkipReason(TextEnum):
    """Why a workload is not annotated; the value is what users read."""

    OPTED_OUT = "opted out"  # skip_detail names the annotation
    NO_TEMPLATE = "it has no pod template (a patch or a partial manifest?)"
    WORKLOAD_REF = "an Argo Rollout with spec.workloadRef takes its template from that workload"
    GENERATED = (
        "metadata.generateName: every create makes a new object, so there is "
        'nothing to roll (cmhash.io/enabled: "true" to annotate it anyway)'
    )
    JOB = "Job pod templates are immutable (--jobs to opt in)"
    POD = "bare Pods are not annotated (--pods to opt in)"
    INJECTED = (
        "a sidecar-mode collector runs no pods of its own: the operator injects it into "
        "the pods that ask for it when they are created, and a change to it restarts none "
        "of them (declare its ConfigMaps/Secrets on those workloads: "
        "cmhash.io/extra-configmaps, cmhash.io/extra-secrets)"
    )
    IGNORED = "ignored by a rule of the configuration"
    NOT_INCLUDED = "not matched by include.workloads of the configuration"
    NOT_OPTED_IN = (
        'optIn: only workloads that opt in are annotated (cmhash.io/enabled: "true", '
        'or Reloader auto/search or Wave update-on-config-change: "true")'
    )


Labels = tuple[tuple[str, str], ...]
NO_SELECTION = Selection()


class ConfigInfo(NamedTuple):
    kind: str
    name: str
    namespace: str | None
    content: Content
    immutable: bool
    excluded: str | None  # why it is out of every checksum, by its own annotations
    offset: int
    doc: int
    end: int  # where the object's text ends (Secret lines never show as diff context)
    labels: Labels = ()
    match: bool = False  # reloader.stakater.com/match: "true" (Reloader's search mode)
    source: str | None = None  # produced by this source object ("SealedSecret/db")
    # versioned names (analyze/versioned.py, plan/versioning/)
    versioned: bool | None = None  # cmhash.io/versioned or a peer's, when given
    name_spot: Spot | None = None  # where metadata.name is written
    version_edits: tuple[Edit, ...] = ()  # --versioned-keep / --versioned-immutable
    version_error: tuple[str, int] | None = None  # why those edits cannot be made
    # objects whose content a source copies in (ExternalSecret templateFrom): added to
    # its content once every object is indexed (plan/index.py)
    depends: Depends = ()
    # a peer's annotation asking for an original-named copy beside the versioned one
    # (kapp.k14s.io/versioned-keep-original), which cmhash cannot write
    keep_original: str | None = None
    # (annotation, value, offset): a peer's bound on its number of versions
    # (kapp.k14s.io/num-versions, strategy.spinnaker.io/max-version-history)
    window: tuple[str, str, int] | None = None
    # where its source reads a store value no version pins (analyze/sources.py)
    unpinned: tuple[int, ...] = ()
    # a produced Secret: how --versioned may rename it (analyze/versioned_sources.py)
    producer: "Producer | None" = None
    # cmhash.io/restart on it (or on its source): the reason, part of every user's checksum
    restart: str | None = None
    # the workloads its source's operator restarts itself when it changes (Vault Secrets
    # Operator's rolloutRestartTargets): (group, kind, name, operator)
    restarts: tuple[tuple[str, str, str, str], ...] = ()

    @property
    def label(self) -> str:
        """How messages name it: with its source when it is produced by one."""
        shown = f"{self.kind} {self.name!r}"
        return f"{shown} (produced by {self.source})" if self.source else shown

    @property
    def skipped(self) -> bool:
        return self.excluded is not None

    def id(self, namespace: str) -> ResourceId:
        """Its identity once its namespace is known (as written, or the default)."""
        return ResourceId.config(self.kind, namespace, self.name)


class WorkloadInfo(Record):
    __slots__ = (
        "api_version",
        "current",
        "current_style",
        "doc",
        "edit",
        "edit_error",
        "generated",
        "hook",
        "job",
        "kind",
        "labels",
        "name",
        "namespace",
        "no_restart",
        "offset",
        "refs",
        "selection",
        "skip",
        "skip_detail",
        "skipped_items",
        "subpaths",
    )

    def __init__(
        self,
        kind: WorkloadKind,
        api_version: str,
        name: str,
        namespace: str | None,
        offset: int,
        doc: int,
        generated: bool = False,
        hook: str | None = None,
        labels: Labels = (),
        selection: Selection = NO_SELECTION,
    ) -> None:
        self.kind = kind
        self.api_version = api_version
        self.name = name
        self.namespace = namespace
        self.offset = offset
        self.doc = doc
        self.generated = generated  # named by metadata.generateName only
        # a Helm or Argo CD hook ("pre": runs before the release's other objects exist,
        # "post"): deleted and created anew on each release
        self.hook = hook
        self.labels = labels
        self.selection = selection
        # what the map stage finds next (analyze/workload.py)
        self.skip: SkipReason | None = None
        self.skip_detail: str | None = None  # which annotation or rule, when it matters
        self.refs: tuple[Reference, ...] = ()
        self.current: str | None = None
        self.current_style: str | None = None  # the existing value's style (None: plain)
        self.edit: Edit | None = None  # candidate, value = PLACEHOLDER
        self.edit_error: NodeError | None = None
        self.no_restart: str | None = None
        self.subpaths: tuple[SubPathMount, ...] = ()
        # annotation items the tool that defines them skips (Wave): findings
        self.skipped_items: tuple[Skipped, ...] = ()
        self.job: JobRename | None = None  # --jobs=rename: what the reduce stage needs

    @property
    def label(self) -> str:
        name = f"{self.name}*" if self.generated else self.name
        group = f" ({self.kind.component})" if self.kind.component else ""
        ns = f" -n {self.namespace}" if self.namespace else ""
        return f"{self.kind.kind}/{name}{group}{ns}"

    @property
    def about(self) -> About:
        """For its findings: label, identity as written, apiVersion."""
        rid = ResourceId(self.kind.group, self.kind.kind, self.namespace or "", self.name)
        return About(self.label, rid, self.api_version)


class DocInfo(Record):
    __slots__ = (
        "chunk",
        "configs",
        "has_content",
        "index",
        "unnamed_secrets",
        "verify_error",
        "workloads",
    )

    def __init__(self, index: int, chunk: Chunk, has_content: bool) -> None:
        self.index = index
        self.chunk = chunk
        self.has_content = has_content
        # tuples, not lists: a big run keeps one DocInfo per ConfigMap, Secret and workload
        self.configs: tuple[ConfigInfo, ...] = ()
        self.workloads: tuple[WorkloadInfo, ...] = ()
        self.verify_error: tuple[str, int] | None = None
        # Secrets named by generateName only: in no index, but (start, end) of Secret text
        self.unnamed_secrets: tuple[tuple[int, int], ...] = ()

    @property
    def kept(self) -> bool:
        """Most documents (Services, CRDs, ...) need nothing after the map stage."""
        return bool(self.configs or self.workloads or self.verify_error or self.unnamed_secrets)

"""A workload's plan, the record the reduce stage makes of each workload: what its
references resolved to (``Resolved``), its value, why it is left alone or what selected
it, and its final edit; and the configuration's selection of workloads (``selected``:
the ignore and include rules, opt-in mode). Filled in by plan/workload.py; read by
--versioned, explain, report and the writer."""

# No "from __future__ import annotations": typing compiles string NamedTuple fields at import

from collections.abc import Sequence
from typing import NamedTuple

from cmhash.analyze.refs import Reference
from cmhash.analyze.summaries import SkipReason, WorkloadInfo
from cmhash.edit.splice import Edit
from cmhash.findings import Code, Finding, finding
from cmhash.model import Level, ResourceId, make_id
from cmhash.plan.index import ConfigEntry
from cmhash.plan.options import PlanOptions
from cmhash.plan.selection import first_match
from cmhash.read.source import SourceText
from cmhash.record import Record


class Resolved(NamedTuple):
    ref: Reference
    entry: ConfigEntry | None  # None: not in the input
    missing_keys: frozenset[str] = frozenset()
    excluded: str | None = None  # why it does not count (the object, or the selection)

    @property
    def counted(self) -> bool:
        """An in-stream object that enters the checksum."""
        return self.entry is not None and self.excluded is None


class LockUse(NamedTuple):
    """A lock entry in a workload's checksum: whose, from what, and what entered."""

    target: ResourceId
    entry: ResourceId  # the lock entry's (its producer's, for a produced object without one)
    source: str  # what the fingerprint was read from: "VaultStaticSecret shop/db"
    field: str  # ... and where: "status.secretMAC"
    part: str  # the canonical JSON that entered (fingerprints only)
    also: str | None = None  # the operator that restarts the workload itself on a change


class Requested(NamedTuple):
    """A restart asked for: on the workload (``where`` None) or on an object it uses."""

    where: str | None  # "ConfigMap cfg"
    reason: str

    @property
    def text(self) -> str:
        return self.reason if self.where is None else f"{self.where}: {self.reason}"


class WorkloadPlan(Record):
    __slots__ = (
        "edit",
        "info",
        "job_edits",
        "locked",
        "namespace",
        "resolved",
        "restarts",
        "runs_again_as",
        "selected_by",
        "skip",
        "skip_detail",
        "source",
        "value",
    )

    def __init__(self, source: SourceText, info: WorkloadInfo, namespace: str) -> None:
        self.source = source
        self.info = info
        self.namespace = namespace
        self.resolved: list[Resolved] = []
        self.value: str | None = None  # the checksum it should carry (None: no in-stream config)
        self.skip = info.skip
        self.skip_detail = info.skip_detail  # which annotation or rule
        self.selected_by: str | None = None  # the include rule or opt-in annotation that chose it
        self.edit: Edit | None = None  # with the real value
        self.job_edits: list[Edit] = []  # --jobs=rename: the new name and base-name mark
        self.runs_again_as: str | None = None  # --jobs=rename: the Job's new name
        # what Git does not see, in its checksum (plan/lock.py): the lock's entries
        # (LockUse) and the restarts asked for (Requested)
        self.locked: Sequence[LockUse] = ()
        self.restarts: Sequence[Requested] = ()

    @property
    def skip_text(self) -> str | None:
        if self.skip is None:
            return None
        return f"{self.skip} ({self.skip_detail})" if self.skip_detail else str(self.skip)

    @property
    def label(self) -> str:
        return self.info.label

    @property
    def id(self) -> ResourceId:
        """Its identity, namespace defaulted (how report matches OLD and NEW)."""
        k = self.info.kind
        return ResourceId(k.group, k.kind, self.namespace, self.info.name)

    @property
    def in_stream(self) -> bool:
        """Whether an in-stream object enters its checksum (one that is ``counted``)."""
        return any(r.counted for r in self.resolved)

    def finding(
        self,
        offset: int,
        code: Code,
        message: str,
        level: Level | None = None,
        field: str | None = None,
    ) -> Finding:
        """A finding about this workload, at ``offset`` of its source."""
        return finding(
            self.source, offset, code, message, level=level, about=self.info.about, field=field
        )

    def target(self, ref: Reference) -> ResourceId:
        """The object ``ref`` names: its namespace, or the workload's."""
        return make_id(("", ref.target_kind, ref.namespace or self.namespace, ref.name))


def selected(
    plan: WorkloadPlan, options: PlanOptions
) -> tuple[SkipReason | None, str | None, str | None]:
    """The configuration's workload rules and opt-in mode: (why it is left alone, which
    rule; or what selected it)."""
    info = plan.info
    labels = dict(info.labels)
    ident = (info.kind.kind, plan.namespace, info.name, labels)
    rule = first_match(options.ignore_workloads, *ident)
    if rule is not None:
        return SkipReason.IGNORED, rule.where, None
    chosen = []
    if options.include_workloads:
        rule = first_match(options.include_workloads, *ident)
        if rule is None:
            return SkipReason.NOT_INCLUDED, None, None
        chosen.append(rule.where)
    if options.opt_in:
        if info.selection.opted_in is None:
            return SkipReason.NOT_OPTED_IN, None, None
        chosen.append(info.selection.opted_in)
    return None, None, ", ".join(chosen) or None

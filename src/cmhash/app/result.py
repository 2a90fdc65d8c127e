"""What a run gives the views and commands: ``RunResult`` (and the Secrets' spans, worked
out when first asked)."""

# No "from __future__ import annotations": typing compiles string NamedTuple fields at import

from collections.abc import Iterator, Mapping
from functools import cached_property
from typing import TYPE_CHECKING, NamedTuple

from cmhash.analyze.summaries import DocInfo
from cmhash.findings import Finding
from cmhash.model import Level
from cmhash.plan.index import ConfigIndex
from cmhash.plan.workplan import WorkloadPlan
from cmhash.read.source import SourceText
from cmhash.write.emit import Change, FileResult

if TYPE_CHECKING:
    from cmhash.plan.versioning.decision import Versioning


class SecretSpans(Mapping[int, list[tuple[int, int]]]):
    """id(source) -> the (start, end) of its Secrets: worked out when first asked (a diff
    keeps their lines out of its context, versioning's mention scan skips them), so a
    run that needs none of it (a plain inject of 50,000 apps) does not pay for it."""

    def __init__(self, sources: list[SourceText], docs: list[list[DocInfo]]) -> None:
        self._sources = sources
        self._docs = docs

    @cached_property
    def _all(self) -> dict[int, list[tuple[int, int]]]:
        return {
            id(src): [
                *(
                    (c.offset, c.end)
                    for d in per
                    for c in d.configs
                    if c.kind == "Secret" and c.source is None
                ),
                *(span for d in per for span in d.unnamed_secrets),
            ]
            for src, per in zip(self._sources, self._docs, strict=True)
        }

    def __getitem__(self, key: int) -> list[tuple[int, int]]:
        return self._all[key]

    def __iter__(self) -> Iterator[int]:
        return iter(self._all)

    def __len__(self) -> int:
        return len(self._all)


class RunResult(NamedTuple):
    files: list[FileResult]
    changes: list[Change]
    findings: list[Finding]
    plans: list[WorkloadPlan]
    config_index: ConfigIndex | None
    secret_spans: Mapping[int, list[tuple[int, int]]]  # id(source) -> Secrets' (start, end)
    notes: list[str]  # what the run decided for the user (an inferred namespace)
    versioning: "Versioning | None" = None  # versioned names, when any apply (lazy: a string)
    empty: bool = False  # no document held an object (allowed with ``allow_empty``)
    kept: int = 0  # earlier versions carried from --previous (plan/history.py)

    @property
    def has_errors(self) -> bool:
        return any(f.level is Level.ERROR for f in self.findings)

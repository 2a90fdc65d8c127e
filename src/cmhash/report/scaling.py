"""report: the autoscalers of one side (knowledge/replicas.py AUTOSCALERS: a
HorizontalPodAutoscaler, a KEDA ScaledObject), and which workload each owns the pod
count of; and its RuntimeClasses' ``overhead.podFixed`` (knowledge/podrequests.py), which
admission sets as the overhead of the pods naming them.

An autoscaler is no workload, ConfigMap or Secret: the pipeline passes its document
through unread. Its documents are found here by the kind's name in the text (a scan
that costs nothing where the name does not occur), parsed, and read as plain data;
only when a rollout rule first asks for a workload's count. A document that does not
parse counts for nothing here (the pipeline already passed it through as it is).

A workload is matched by the autoscaler's target group, kind and name, and namespace:
the same namespace as written (both none: ``kubectl apply -n`` puts both in one), or the
autoscaler's (``--namespace`` for none) equal to the workload's."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from functools import cached_property
from typing import Any

from cmhash.errors import CmhashError, NodeError
from cmhash.knowledge.podrequests import RUNTIMECLASS, runtime_class_overhead
from cmhash.knowledge.replicas import BY_KIND, KIND_NAMES, Scaling, read_autoscaler
from cmhash.parse.events import backend, parse_chunk
from cmhash.parse.resources import document_resources
from cmhash.plan.workplan import WorkloadPlan
from cmhash.read.source import SourceText
from cmhash.read.split import chunk, cuts
from cmhash.report.plain import deep, plain


class Scalers:
    """One side's autoscalers, read when first asked for."""

    def __init__(
        self, sources: Iterable[SourceText], parser: str, namespace: str | None = None
    ) -> None:
        self._sources = list(sources)
        self._parser = parser
        self._namespace = namespace  # --namespace: where objects without one go

    def overhead(self, runtime_class: Any) -> Mapping[str, Any] | None:
        """The ``overhead.podFixed`` of the input's RuntimeClass of that name (cluster
        scoped), which admission sets as the pod's overhead."""
        return self._read[1].get(runtime_class) if isinstance(runtime_class, str) else None

    @cached_property
    def _read(
        self,
    ) -> tuple[dict[tuple[str, str, str], list[Scaling]], dict[str, Mapping[str, Any]]]:
        """The autoscalers by target, and the RuntimeClasses' podFixed by name."""
        found: dict[tuple[str, str, str], list[Scaling]] = {}
        classes: dict[str, Mapping[str, Any]] = {}
        be = backend(self._parser)
        names = (*KIND_NAMES, RUNTIMECLASS[1])
        for src in self._sources:
            text = src.text
            if not any(name in text for name in names):
                continue
            marks = cuts(text)
            for doc in range(len(marks) - 1):
                ch = chunk(marks, doc)
                piece = text[ch.start : ch.end]
                if not any(name in piece for name in names):
                    continue
                try:
                    roots = parse_chunk(piece, ch.start, be)
                    resources = document_resources(src, doc, roots)
                except (CmhashError, NodeError, ValueError, RecursionError):
                    continue
                for res in resources:
                    key = (res.group, res.kind)
                    if key not in BY_KIND and key != RUNTIMECLASS:
                        continue
                    with deep():
                        try:
                            obj = plain(res.node)
                        except (CmhashError, NodeError):
                            continue
                    if key == RUNTIMECLASS:
                        fixed = runtime_class_overhead(obj) if isinstance(obj, Mapping) else None
                        if fixed is not None and res.name:
                            classes[res.name] = fixed
                        continue
                    scaling = read_autoscaler(res.group, res.kind, obj)
                    if scaling is not None:
                        found.setdefault(scaling.target, []).append(scaling)
        return found, classes

    def of(self, plan: WorkloadPlan) -> Scaling | None:
        """The autoscaler that owns ``plan``'s count (the first, when several claim it:
        they fight over it, and the report cannot tell which wins)."""
        by_target = self._read[0]
        if not by_target:
            return None
        kind = plan.info.kind
        for s in by_target.get((kind.group, kind.kind, plan.info.name), ()):
            if s.namespace == plan.info.namespace:
                return s
            if (s.namespace or self._namespace or "") == plan.id.namespace:
                return s
        return None


NO_SCALERS = Scalers((), "fast")

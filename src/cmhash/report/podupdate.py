"""report: a bare Pod's changed fields walked through knowledge/podupdate.py POD_FIELDS
(first match wins; a field no row matches is refused), and the Pod's outcome in words."""

from __future__ import annotations

import re
from typing import NamedTuple

from cmhash.knowledge.podupdate import POD_FIELDS, Effect, Pods
from cmhash.report.podtemplate import TemplateCause


class PodChange(NamedTuple):
    field: str
    effect: Effect


def classify(pods: Pods, causes: tuple[TemplateCause, ...]) -> list[PodChange]:
    """What each changed field of a bare Pod does (causes: podtemplate.py)."""
    out = []
    for c in causes:
        effect = Effect.REFUSED
        for row in POD_FIELDS:
            m = re.fullmatch(row.pattern, c.field)
            if m is not None:
                if row.allowed(pods, c.change, m):
                    effect = row.does(pods, m)
                break
        out.append(PodChange(c.field, effect))
    return out


def _container(field: str) -> str:
    m = re.fullmatch(r"spec\.(?:init)?[cC]ontainers\[(.+)\]\.image", field)
    return m.group(1) if m else field


def describe(changes: list[PodChange]) -> tuple[Effect, str]:
    """The Pod's outcome (the API server refuses the update when one change is refused)
    and a line saying why."""
    refused = [c.field for c in changes if c.effect is Effect.REFUSED]
    if refused:
        return Effect.REFUSED, (
            f"a bare Pod's {', '.join(refused)} cannot change (the API server allows only "
            "images, activeDeadlineSeconds, added tolerations, removed scheduling gates): "
            "kubectl apply is refused; delete and re-create the Pod"
        )
    restarts = sorted({_container(c.field) for c in changes if c.effect is Effect.RESTARTS})
    if restarts:
        which = ", ".join(restarts)
        noun = "container" if len(restarts) == 1 else "containers"
        return Effect.RESTARTS, (
            f"a bare Pod's image changes: the kubelet restarts {noun} {which} in place "
            "(the Pod stays)"
        )
    fields = ", ".join(c.field for c in changes) or "its annotations"
    return Effect.APPLIED, f"a bare Pod is updated in place ({fields}): no container restarts"

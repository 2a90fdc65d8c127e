"""report: whether Reloader restarts a workload that reads changed configuration but whose
checksum does not follow it (opted out of cmhash, or the object left out of checksums).

Reloader runs in the cluster and changes the workload's pod template itself when an
object it watches for that workload is applied: the pods roll then, by the workload's
own rollout rules, whatever cmhash writes. Its decision is knowledge/compat.py's table
(stakater/Reloader ``ShouldReload``), in Reloader's own default mode (``--auto-reload-all``
off: a workload must ask, with ``reloader.stakater.com/auto``, a typed ``auto``, a reload
list, or ``search`` with a ``match`` on the object), read from the workload's object as
plain data: the reload list, ``auto``, the typed ``auto`` and ``search`` from
``metadata.annotations`` when any of the four is there, else all from the pod
template's; the exclude list from ``metadata.annotations`` only. Only the kinds Reloader
rolls (``ROLLS``): a Job or CronJob it re-creates or runs is another matter."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from cmhash.knowledge.compat import (
    RELOADER_AUTO,
    RELOADER_BY_KIND,
    RELOADER_SEARCH,
    Case,
    ReloaderView,
    decide,
    split_reloader,
    why,
)
from cmhash.knowledge.defaults import path_get

# stakater/Reloader internal/pkg/callbacks/rolling_upgrade.go: the kinds whose pod
# template it updates (Deployments, DaemonSets, StatefulSets, Argo Rollouts)
ROLLS = frozenset(
    {
        ("apps", "Deployment"),
        ("apps", "DaemonSet"),
        ("apps", "StatefulSet"),
        ("argoproj.io", "Rollout"),
    }
)


def _annotations(obj: Any, *path: str) -> dict[str, str]:
    found = path_get(obj, (*path, "annotations"))
    if not isinstance(found, dict):
        return {}
    return {
        str(k): ("true" if v is True else "false" if v is False else str(v))
        for k, v in found.items()
        if v is not None
    }


def _listed(patterns: str, name: str) -> bool:
    from cmhash.analyze.patterns import PatternError, matches

    for item in split_reloader(patterns):
        if not item:
            continue
        try:
            if matches(item, name):
                return True
        except PatternError:
            continue  # Reloader logs the error and skips the item
    return False


class Watched:
    """A changed object a workload reads: its kind, name, and whether it says
    ``reloader.stakater.com/match: "true"`` or ``ignore: "true"``."""

    __slots__ = ("ignored", "kind", "match", "name")

    def __init__(self, kind: str, name: str, match: bool, ignored: bool) -> None:
        self.kind, self.name, self.match, self.ignored = kind, name, match, ignored


def restarts(
    key: tuple[str, str], obj: Mapping[str, Any], changed: Iterable[Watched]
) -> str | None:
    """``Reloader restarts it when ConfigMap app is applied (...)``, when it does."""
    if key not in ROLLS:
        return None
    meta = _annotations(obj, "metadata")
    template = _annotations(obj, "spec", "template", "metadata")
    for w in changed:
        rk = RELOADER_BY_KIND.get(w.kind)
        if rk is None:
            continue
        keys = (rk.reload, RELOADER_AUTO, rk.typed_auto, RELOADER_SEARCH)
        on_meta = any(k in meta for k in keys)
        src = meta if on_meta else template
        field = "metadata.annotations" if on_meta else "spec.template.metadata.annotations"
        excluded = tuple(n for n in split_reloader(meta.get(rk.exclude, "")) if n)
        view = ReloaderView(
            w.kind,
            src.get(RELOADER_AUTO, ""),
            src.get(rk.typed_auto, ""),
            src.get(RELOADER_SEARCH, ""),
            excluded,
            field,
        )
        listed = _listed(src.get(rk.reload, ""), w.name)
        rule = decide(Case(view, w.name, listed, w.match, w.ignored, False))
        if rule.reloads:
            return (
                f"Reloader changes its pod template when {w.kind} {w.name} is applied "
                f"({why(rule, view)}, in {field})"
            )
    return None

"""report --versioned: the versions a deployment tool deletes when NEW is applied.

Each side's ConfigMaps and Secrets are taken under the names they are applied with:
cmhash's versioned output names them (a raw render is versioned by the run, as
``cmhash --versioned`` would write it; an output already versioned keeps its names). The
versions OLD applies that NEW does not are deleted by Helm, Argo CD, Flux or ``kubectl
apply --prune``; a produced Secret is named by its source (the ExternalSecret or
SealedSecret, under its own versioned name): that is what the tool deletes, and its
controller deletes the Secret with it."""

from __future__ import annotations

from typing import TYPE_CHECKING

from cmhash.analyze.versioned_names import shown
from cmhash.model import ResourceId
from cmhash.plan.history import pruned
from cmhash.plan.index import ConfigEntry
from cmhash.plan.source_versions import own_source

if TYPE_CHECKING:
    from cmhash.app.result import RunResult


def _applied(r: RunResult) -> dict[ResourceId, tuple[ConfigEntry, str]]:
    """A side's objects by the name they are applied with -> (entry, that name)."""
    objects = r.config_index.objects if r.config_index else {}
    renamed = r.versioning.renamed if r.versioning is not None else {}
    out = {}
    for k, e in objects.items():
        new = renamed[k].new if k in renamed else k.name
        out[k._replace(name=new)] = (e, new)
    return out


def pruned_versions(old: RunResult, new: RunResult) -> list[dict[str, str]]:
    """Versions OLD applies that NEW does not (kind, namespace, name as shown)."""
    olds = _applied(old)
    out = []
    for k in pruned(olds, _applied(new)):
        e, name = olds[k]
        if e.info.source is None:
            out.append({"kind": k.kind, "namespace": k.namespace, "name": shown(k.kind, name)})
            continue
        kind, _, source = e.info.source.partition("/")
        own = own_source(e, name[: name.rfind("-")], name) if "-" in name else None
        source = own[1] if own else source
        # (a SealedSecret named as its Secret: that name is a hash of the Secret's values)
        source = shown(k.kind, name) if source == name else source
        out.append({"kind": kind, "namespace": k.namespace, "name": source})
    return out

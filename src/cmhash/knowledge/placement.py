"""Where each annotation cmhash reads on a workload is read, by the tool that defines it
(and by cmhash, which reads it there too): written anywhere else, it does nothing, and
nothing says so. analyze/placement.py compares a workload's annotations with this table
and makes one ``misplaced-annotation`` finding per workload (a note; a warning with
``--strict``).

The places: the workload's own ``metadata.annotations`` (``WORKLOAD``), its pod
template's annotations (``TEMPLATE``: an operator's resource, where the operator copies
them to its pods), and a ConfigMap's, Secret's or secret source's own
``metadata.annotations`` (``CONFIG``: on a workload, such an annotation does nothing).
A row whose ``shadowed`` is set is read on the pod template only when the workload's
metadata has none of Reloader's keys for that kind of object (its reload list, ``auto``,
the typed ``auto``, ``search``): Reloader reads all four from one place
(knowledge/compat.py; analyze/declared.py ``reloader_source``).

Each row cites where its tool reads it: stakater/Reloader at ``655a2b3814ba``,
wave-k8s/wave at ``b4e8d70c3469``, carvel-dev/kapp at ``a89576c50397``; cmhash's own
cite the module that reads them.
"""

# No "from __future__ import annotations": typing compiles string NamedTuple fields at import

from typing import NamedTuple

from cmhash.knowledge.compat import (
    KAPP_REF,
    RELOADER_AUTO,
    RELOADER_IGNORE,
    RELOADER_KINDS,
    RELOADER_MATCH,
    RELOADER_SEARCH,
    WAVE_ON,
)

WORKLOAD = "workload"
TEMPLATE = "template"
CONFIG = "config"


class Placement(NamedTuple):
    annotation: str  # the key (ending in ".": any key it begins, kapp's suffixed refs)
    tool: str | None  # its tool's name in ``compat:`` (None: cmhash's own, always read)
    who: str  # the tool, as messages name it
    read: tuple[str, ...]  # where it is read: WORKLOAD, TEMPLATE, CONFIG
    cite: str  # where the tool reads it
    shadowed: bool = False  # on the pod template only when the metadata has none of
    # Reloader's four keys for the kind (see the module docstring)
    kinds: tuple[str, ...] = ()  # the workload kinds its tool handles (empty: every one)


# Wave runs controllers for these kinds only (wave-k8s/wave pkg/controller
# add_deployment.go, add_statefulset.go, add_daemonset.go)
WAVE_KINDS = ("Deployment", "StatefulSet", "DaemonSet")


_SHOULD_RELOAD = "pkg/common/common.go ShouldReload"
_WAVE_CHILDREN = "pkg/core/children.go getChildNamesByType: obj.GetAnnotations()"

PLACEMENTS: tuple[Placement, ...] = (
    # Wave reads the workload's own annotations, never its pod template's
    Placement(
        WAVE_ON,
        "wave",
        "Wave",
        (WORKLOAD,),
        "pkg/core/required_annotation.go hasRequiredAnnotation: obj.GetAnnotations()",
        kinds=WAVE_KINDS,
    ),
    *(
        Placement(key, "wave", "Wave", (WORKLOAD,), _WAVE_CHILDREN, kinds=WAVE_KINDS)
        for key in ("wave.pusher.com/extra-configmaps", "wave.pusher.com/extra-secrets")
    ),
    # Reloader: the exclude lists from the workload's metadata only (read before
    # ShouldReload may switch to podAnnotations) ...
    *(
        Placement(
            k.exclude,
            "reloader",
            "Reloader",
            (WORKLOAD,),
            f"{_SHOULD_RELOAD}: annotations[...ExcludeReloaderAnnotation], never podAnnotations",
        )
        for k in RELOADER_KINDS
    ),
    # ... the reload lists, auto, typed auto and search from the metadata when any of a
    # kind's four is there, else all four from the pod template's
    *(
        Placement(
            key,
            "reloader",
            "Reloader",
            (WORKLOAD, TEMPLATE),
            f"{_SHOULD_RELOAD}: annotations = podAnnotations only when !found && !foundAuto "
            "&& !foundTypedAuto && !foundSearchAnn",
            shadowed=True,
        )
        for key in (
            *(k.reload for k in RELOADER_KINDS),
            RELOADER_AUTO,
            *(k.typed_auto for k in RELOADER_KINDS),
            RELOADER_SEARCH,
        )
    ),
    # ... and ignore and match from the ConfigMap's or Secret's own annotations
    *(
        Placement(
            key,
            "reloader",
            "Reloader",
            (CONFIG,),
            f"pkg/common/config.go ResourceAnnotations: configmap.Annotations, "
            f"secret.Annotations; {_SHOULD_RELOAD}: config.ResourceAnnotations[...]",
        )
        for key in (RELOADER_IGNORE, RELOADER_MATCH)
    ),
    # kapp reads explicit references on a resource's own annotations
    *(
        Placement(
            key,
            "kapp",
            "kapp",
            (WORKLOAD,),
            "pkg/kapp/diff/versioned_resource.go: for k, v := range res.Annotations() "
            "(explicitReferenceKey, explicitReferenceKeyPrefix)",
        )
        for key in (KAPP_REF, KAPP_REF + ".")
    ),
    # cmhash's own
    Placement(
        "cmhash.io/skip",
        None,
        "cmhash",
        (WORKLOAD, CONFIG),
        "parse/resources.py SKIP_ANNOTATION: the object's own metadata.annotations",
    ),
    Placement(
        "cmhash.io/versioned",
        None,
        "cmhash",
        (CONFIG,),
        "analyze/versioned.py versioned_flag: a ConfigMap's, Secret's or source's own",
    ),
    *(
        Placement(key, None, "cmhash", (WORKLOAD, TEMPLATE), "analyze/declared.py")
        for key in (
            "cmhash.io/enabled",
            "cmhash.io/sources",
            "cmhash.io/acknowledge",
            "cmhash.io/extra-configmaps",
            "cmhash.io/extra-secrets",
        )
    ),
)

_EXACT = {p.annotation: p for p in PLACEMENTS if not p.annotation.endswith(".")}
_PREFIXES = tuple(p for p in PLACEMENTS if p.annotation.endswith("."))


def placement(key: str) -> Placement | None:
    """The row of an annotation key, or None when cmhash does not read it (every row's
    key holds one of knowledge/compat.py ``PLACED_PARTS``)."""
    row = _EXACT.get(key)
    if row is not None:
        return row
    return next((p for p in _PREFIXES if key.startswith(p.annotation)), None)

"""refs.find_subpath_mounts passes over a mount that writes neither subPath key on its
key index alone: the same mounts, findings and errors as reading each key with ``get``
(its first form, the reference here), whatever the mount is written as."""

from __future__ import annotations

from typing import Any

import pytest

from cmhash.analyze import refs
from cmhash.errors import NodeError
from cmhash.knowledge.podspec import SUBPATH_FIELDS
from cmhash.parse import events
from cmhash.parse.tree import Node, get, items, scalar


def _reference(pod_spec: Node | None, field: str) -> list[refs.SubPathMount]:
    """find_subpath_mounts as first written: each subPath key read with ``get``."""
    found = []
    for list_name in refs.CONTAINER_LISTS:
        for i, container in enumerate(items(get(pod_spec, list_name))):
            for j, m in enumerate(items(get(container, "volumeMounts"))):
                if any(scalar(get(m, f)) for f in SUBPATH_FIELDS):
                    where = f"{field}.{list_name}[{i}].volumeMounts[{j}]"
                    found.append((container, scalar(get(m, "name")), m, where))
    if not found:
        return []
    volumes = {}
    for v in items(get(pod_spec, "volumes")):
        name = scalar(get(v, "name"))
        targets = refs._volume_targets(v)
        if name and targets:
            volumes[name] = targets
    return [
        refs.SubPathMount(
            scalar(get(c, "name")), vname, volumes[vname], scalar(get(m, "mountPath")), w, m.start
        )
        for c, vname, m, w in found
        if vname is not None and vname in volumes
    ]


def _outcome(find: Any, spec: Node | None) -> Any:
    try:
        return find(spec, "spec")
    except NodeError as exc:
        return ("error", exc.message, exc.offset)


VOLUMES = "volumes: [{name: c, configMap: {name: cm}}, {name: s, secret: {secretName: sec}}]\n"


@pytest.mark.parametrize(
    "mounts",
    [
        "[{name: c, mountPath: /a}, {name: s, mountPath: /b}]",  # none: the common case
        "[{name: c, mountPath: /a, subPath: a}, {name: s, mountPath: /b, subPathExpr: $(X)}]",
        "[{name: c, subPath: ''}, {name: c, subPath: ~}, {name: c, subPathExpr: null}]",
        "[{name: c, subPath: [a]}, {name: c, subPath: {a: b}}, {name: c, subPath: 0}]",
        "[*m, {<<: *m, mountPath: /x}, {<<: [*m], name: s}]",  # aliases and merges
        "[{name: c, !!str subPath: a}, {name: c, \"subPath\": a}, {name: c, 'subPathExpr': b}]",
        "[a, [b], ~, {}]",  # not mappings: no mount
        "[{name: c, subPath: a, subPath: b}]",  # a duplicate key: the same error
        "[{name: c, mountPath: /a, subPath: a, a: 1, a: 2}]",
        "[{name: c, <<: 1}]",  # a bad merge: the same error
        "*ms",  # the list an alias
    ],
)
@pytest.mark.parametrize("parser", ["fast", "exact"])
def test_the_same_as_reading_each_key(mounts: str, parser: str) -> None:
    text = (
        "defs: {m: &m {name: c, subPath: x}, ms: &ms [{name: s, subPath: y}]}\n"
        f"spec:\n  containers:\n  - name: app\n    volumeMounts: {mounts}\n  {VOLUMES}"
    )
    root = events.parse_chunk(text, 0, events.backend(parser))[0]
    spec = get(root, "spec")
    want = _outcome(_reference, spec)
    assert _outcome(refs.find_subpath_mounts, spec) == want
    assert want == [] or want[0] == "error" or want[0].volume in ("c", "s")


def test_a_subpath_mount_is_found() -> None:
    text = (
        "spec:\n  initContainers:\n  - name: i\n    volumeMounts:\n"
        "    - {name: c, mountPath: /a, subPath: a}\n  " + VOLUMES
    )
    spec = get(events.parse_chunk(text, 0, events.backend("fast"))[0], "spec")
    (mount,) = refs.find_subpath_mounts(spec, "spec")
    assert (mount.container, mount.volume, mount.targets, mount.mount_path, mount.field) == (
        "i",
        "c",
        (("ConfigMap", "cm"),),
        "/a",
        "spec.initContainers[0].volumeMounts[0]",
    )

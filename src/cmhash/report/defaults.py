"""report: the API server's defaults of pod-template fields, as one table, and the
resource quantities it takes as equal.

The API server fills these in before it stores an object, so a field spelled out with
its default on one side and left out on the other is the same stored template: the
Deployment controller finds its ReplicaSet unchanged and nothing rolls (the
pod-template hash is computed on the stored, defaulted template). The report compares
the two templates after filling in, on each side, the defaults the other side spells
out: only those, so that the values it shows stay as the manifests wrote them.

Source: kubernetes/kubernetes pkg/apis/core/v1/defaults.go (``SetDefaults_PodSpec``,
``SetDefaults_Container``, ``SetDefaults_ContainerPort``, ``SetDefaults_Probe``,
``SetDefaults_HTTPGetAction``, ``SetDefaults_ObjectFieldSelector``, and the volume
sources' ``DefaultMode``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from decimal import Decimal
from typing import Any, NamedTuple

CONTAINERS = frozenset({"containers", "initContainers", "ephemeralContainers"})
VOLUME_MODE = 0o644  # SecretVolumeSourceDefaultMode, ConfigMapVolumeSourceDefaultMode, ...


def _pull_policy(container: Mapping[str, Any]) -> str:
    """Always for an image tagged latest (or not tagged at all), else IfNotPresent
    (a digest: IfNotPresent); SetDefaults_Container with parsers.ParseImageName."""
    image = container.get("image")
    if not isinstance(image, str):
        return "IfNotPresent"
    name, at, _digest = image.partition("@")
    last = name.rsplit("/", 1)[-1]
    tag = last.rsplit(":", 1)[1] if ":" in last else ("" if at else "latest")
    return "Always" if tag == "latest" else "IfNotPresent"


class Default(NamedTuple):
    pattern: tuple[str, ...]  # path steps: "*" any key or list item, "<c>" a container list
    value: Any  # the default, or a function of the object that holds the field


_PROBE: tuple[tuple[str, Any], ...] = (
    ("timeoutSeconds", 1),
    ("periodSeconds", 10),
    ("successThreshold", 1),
    ("failureThreshold", 3),
    ("httpGet.scheme", "HTTP"),
    ("httpGet.path", "/"),
)

DEFAULTS: tuple[Default, ...] = (
    Default(("spec", "dnsPolicy"), "ClusterFirst"),
    Default(("spec", "restartPolicy"), "Always"),
    Default(("spec", "schedulerName"), "default-scheduler"),
    Default(("spec", "terminationGracePeriodSeconds"), 30),
    Default(("spec", "securityContext"), {}),
    Default(("spec", "enableServiceLinks"), True),
    Default(("spec", "<c>", "*", "terminationMessagePath"), "/dev/termination-log"),
    Default(("spec", "<c>", "*", "terminationMessagePolicy"), "File"),
    Default(("spec", "<c>", "*", "imagePullPolicy"), _pull_policy),
    Default(("spec", "<c>", "*", "ports", "*", "protocol"), "TCP"),
    Default(("spec", "<c>", "*", "env", "*", "valueFrom", "fieldRef", "apiVersion"), "v1"),
    *(
        Default(("spec", "<c>", "*", probe, *field.split(".")), value)
        for probe in ("livenessProbe", "readinessProbe", "startupProbe")
        for field, value in _PROBE
    ),
    *(
        Default(("spec", "volumes", "*", source, "defaultMode"), VOLUME_MODE)
        for source in ("configMap", "secret", "projected", "downwardAPI")
    ),
)


# resource quantities: the API server stores a quantity in its canonical form (500m for
# 0.5, 1Gi for 1024Mi: resource.Quantity's CanonicalizeBytes, by amount within one format:
# binary Ki..Ei, decimal n..E, or an exponent), so two spellings of one amount in one
# format are one stored template; across formats (1Gi, 1073741824) the bytes differ, and
# a StatefulSet's or DaemonSet's revision with them: the report keeps that a change
QUANTITIES: tuple[tuple[str, ...], ...] = (
    *(
        (*at, kind, "*")
        for at in (("spec", "<c>", "*", "resources"), ("spec", "resources"))
        for kind in ("limits", "requests")
    ),
    ("spec", "overhead", "*"),
)
_QUANTITY = re.compile(
    r"([+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+))(Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE]|[eE][+-]?[0-9]+)?"
)
_SUFFIX: dict[str, Decimal] = {
    **{s: Decimal(2) ** (10 * i) for i, s in enumerate(("Ki", "Mi", "Gi", "Ti", "Pi", "Ei"), 1)},
    **{
        s: Decimal(10) ** e
        for s, e in zip("numkMGTPE", (-9, -6, -3, 3, 6, 9, 12, 15, 18), strict=True)
    },
}


def quantity(value: Any) -> tuple[str, Decimal] | None:
    """(the format, the amount) a resource.Quantity spelling stands for (None: not one)."""
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        return None
    m = _QUANTITY.fullmatch(str(value))
    if m is None:
        return None
    number, suffix = Decimal(m.group(1)), m.group(2) or ""
    if suffix[:1] in ("e", "E") and suffix not in _SUFFIX:
        exponent = int(suffix[1:])
        return ("exponent", number.scaleb(exponent)) if abs(exponent) <= 1000 else None
    family = "binary" if suffix.endswith("i") else "decimal"
    return family, number * _SUFFIX.get(suffix, Decimal(1))


def _matches(pattern: tuple[str, ...], path: tuple[str, ...]) -> bool:
    return len(pattern) == len(path) and all(
        p == "*" or p == s or (p == "<c>" and s in CONTAINERS)
        for p, s in zip(pattern, path, strict=True)
    )


def _default(path: tuple[str, ...], holder: Mapping[str, Any]) -> tuple[bool, Any]:
    """(whether the field at ``path`` has a default, that default) for ``holder``."""
    for d in DEFAULTS:
        if _matches(d.pattern, path):
            value = d.value(holder) if callable(d.value) else d.value
            return True, value
    return False, None


def _key(item: Any, parent: str, names: Mapping[str, str]) -> Any:
    field = names.get(parent)
    return item.get(field) if field and isinstance(item, dict) else None


def _filled(
    a: Any, b: Any, path: tuple[str, ...], names: Mapping[str, str], spell: bool = False
) -> Any:
    """``a`` with the defaults ``b`` spells out where ``a`` leaves them out, and with
    ``spell``, ``b``'s spelling of a quantity of the same amount (a copy)."""
    if spell and a != b and any(_matches(q, path) for q in QUANTITIES):
        amount = quantity(a)
        return b if amount is not None and amount == quantity(b) else a
    if isinstance(a, dict) and isinstance(b, dict):
        out = dict(a)
        for k, v in b.items():
            if k not in a:
                known, value = _default((*path, k), a)
                if known and value == v:
                    out[k] = v
            else:
                out[k] = _filled(a[k], v, (*path, k), names, spell)
        return out
    if isinstance(a, list) and isinstance(b, list):
        parent = path[-1] if path else ""
        by_name: dict[str, Any] = {}
        for item in b:
            name = _key(item, parent, names)
            if isinstance(name, str):
                by_name.setdefault(name, item)
        out_list = []
        for i, item in enumerate(a):
            name = _key(item, parent, names)
            other = by_name.get(name) if isinstance(name, str) else None
            if other is None and names.get(parent) is None and i < len(b):
                other = b[i]  # a list without names: by position
            out_list.append(
                item if other is None else _filled(item, other, (*path, "*"), names, spell)
            )
        return out_list
    return a


def with_defaults(old: Any, new: Any, names: Mapping[str, str]) -> tuple[Any, Any]:
    """Both templates, each with the defaults the other spells out filled in (``names``:
    the field that names a list's items, as podtemplate.py matches them)."""
    # (a quantity takes NEW's spelling on the OLD side only: one side, or they would swap)
    return _filled(old, new, (), names, spell=True), _filled(new, old, (), names)


__all__ = ["DEFAULTS", "QUANTITIES", "Default", "quantity", "with_defaults"]

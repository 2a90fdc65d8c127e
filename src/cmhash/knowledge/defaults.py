"""The API server's defaults of pod-template fields, as one table, and the resource
quantities it takes as equal.

The API server fills these in before it stores an object, so a field spelled out with
its default on one side and left out on the other is the same stored template: the
Deployment controller finds its ReplicaSet unchanged and nothing rolls (the
pod-template hash is computed on the stored, defaulted template). The report compares
the two templates after filling them in (report/podtemplate.py).

Paths are patterns (``matches``): ``"*"`` any key or list item, ``"<c>"`` a container
list (``CONTAINERS``).

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

CONTAINERS = ("containers", "initContainers", "ephemeralContainers")
VOLUME_MODE = 0o644  # SecretVolumeSourceDefaultMode, ConfigMapVolumeSourceDefaultMode, ...


def matches(pattern: tuple[str, ...], path: tuple[str, ...]) -> bool:
    """Whether ``path`` (field steps) is one the pattern stands for."""
    return len(pattern) == len(path) and all(
        p == "*" or p == s or (p == "<c>" and s in CONTAINERS)
        for p, s in zip(pattern, path, strict=True)
    )


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

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

And how these tables and the report read an object held as plain data (dicts and lists,
as kubectl sends it): ``path_get``.

``FIXED``: the fields of a workload's object, outside its pod template, that the API server
never lets change: a change of one makes ``kubectl apply`` fail ("field is immutable",
"updates to statefulset spec for fields other than ... are forbidden"), whatever else
the change does. Each row gives, for an object, its fixed fields as the server compares
them (``apiequality.Semantic``: an empty list, map or string is as good as none;
quantities by amount) after its defaults (pkg/apis/apps/v1/defaults.go,
pkg/apis/core/v1/defaults.go); report/rollout.py compares OLD's with NEW's.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from decimal import Decimal
from typing import Any, NamedTuple


def path_get(obj: Any, path: tuple[str, ...]) -> Any:
    """``obj[path[0]][path[1]]...``, or None where a step is missing or not a mapping."""
    for step in path:
        if not isinstance(obj, Mapping):
            return None
        obj = obj.get(step)
    return obj


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
# a StatefulSet's or DaemonSet's revision with them (kubernetes/kubernetes
# pkg/controller/history/controller_history.go EqualRevision: the hash of the revision's
# serialized template, and bytes.Equal of it): the report keeps that a change, except for
# the kinds of ``BY_AMOUNT``
QUANTITIES: tuple[tuple[str, ...], ...] = (
    *(
        (*at, kind, "*")
        for at in (("spec", "<c>", "*", "resources"), ("spec", "resources"))
        for kind in ("limits", "requests")
    ),
    ("spec", "overhead", "*"),
)
# the kinds whose controller finds its current ReplicaSet by comparing pod templates with
# apiequality.Semantic, whose Quantity rule is a.Cmp(b) == 0 ("Ignore formatting, only
# care that numeric value stayed the same": apimachinery pkg/api/equality/semantic.go):
# a quantity respelled in another format rolls nothing. Deployment: kubernetes/kubernetes
# pkg/controller/deployment/util/deployment_util.go FindNewReplicaSet -> EqualIgnoreHash;
# Argo Rollout: argoproj/argo-rollouts utils/replicaset/replicaset.go FindNewReplicaSet
# (by hash, then PodTemplateEqualIgnoreHash: Semantic.DeepEqual)
BY_AMOUNT = frozenset(
    {("apps", "Deployment"), ("extensions", "Deployment"), ("argoproj.io", "Rollout")}
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


APPS = "kubernetes/kubernetes pkg/registry/apps"
STS_UPDATABLE = frozenset(
    {
        "replicas",
        "ordinals",
        "template",
        "updateStrategy",
        "revisionHistoryLimit",
        "persistentVolumeClaimRetentionPolicy",
        "minReadySeconds",
    }
)


def _semantic(value: Any) -> Any:
    """``value`` without empty parts (Semantic.DeepEqual: nil and empty are equal)."""
    if isinstance(value, dict):
        out = {k: _semantic(v) for k, v in value.items()}
        return {k: v for k, v in out.items() if v not in (None, "", [], {})}
    if isinstance(value, list):
        return [_semantic(v) for v in value]
    return value


def _claim(claim: Any) -> Any:
    """A volumeClaimTemplates item as stored: no apiVersion, kind or status (the server
    drops or defaults them), volumeMode Filesystem by default, quantities by amount."""
    if not isinstance(claim, dict):
        return claim
    out = {k: v for k, v in claim.items() if k not in ("apiVersion", "kind", "status")}
    spec = out.get("spec")
    if isinstance(spec, dict):
        spec = {"volumeMode": "Filesystem", **spec}
        resources = spec.get("resources")
        if isinstance(resources, dict):
            spec["resources"] = {
                kind: (
                    {k: _amount(v) for k, v in amounts.items()}
                    if isinstance(amounts, dict)
                    else amounts
                )
                for kind, amounts in resources.items()
            }
        out["spec"] = spec
    return out


def _amount(value: Any) -> Any:
    """A quantity by its amount (Semantic: Quantity.Cmp, whatever the format)."""
    q = quantity(value)
    return value if q is None else q[1]


def _selector(obj: Mapping[str, Any]) -> dict[str, Any]:
    return {"spec.selector": _semantic(path_get(obj, ("spec", "selector")))}


def _statefulset(obj: Mapping[str, Any]) -> dict[str, Any]:
    """Every spec field but those an update may change (the selector is its own row)."""
    spec = path_get(obj, ("spec",))
    spec = spec if isinstance(spec, dict) else {}
    fixed = {k: v for k, v in spec.items() if k not in STS_UPDATABLE and k != "selector"}
    fixed.setdefault("podManagementPolicy", "OrderedReady")
    claims = fixed.get("volumeClaimTemplates")
    if isinstance(claims, list):
        fixed["volumeClaimTemplates"] = [_claim(c) for c in claims]
    return {f"spec.{k}": v for k, v in _semantic(fixed).items()}


class Fixed(NamedTuple):
    kinds: frozenset[tuple[str, str]]  # (group, kind)
    fields: Callable[[Mapping[str, Any]], dict[str, Any]]  # field path -> compared value
    source: str


# apps/v1 (the selector could change in extensions/v1beta1 and apps/v1beta1 only)
FIXED: tuple[Fixed, ...] = (
    Fixed(
        frozenset(("apps", k) for k in ("Deployment", "DaemonSet", "StatefulSet", "ReplicaSet")),
        _selector,
        f"{APPS}/deployment/strategy.go, daemonset/strategy.go, replicaset/strategy.go "
        "ValidateUpdate (ValidateImmutableField on spec.selector from apps/v1); "
        "statefulset: pkg/apis/apps/validation/validation.go ValidateStatefulSetUpdate",
    ),
    Fixed(
        frozenset({("apps", "StatefulSet")}),
        _statefulset,
        "kubernetes/kubernetes pkg/apis/apps/validation/validation.go "
        "ValidateStatefulSetUpdate (updates to statefulset spec for fields other than "
        "'replicas', 'ordinals', 'template', 'updateStrategy', 'revisionHistoryLimit', "
        "'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden)",
    ),
)

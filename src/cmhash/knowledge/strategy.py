"""Update strategies the API server refuses, and integer fields as it decodes them.

kubectl sends a manifest as JSON: a plain YAML float (``3.0``, ``1e3``) is a JSON number
(``3``, ``1000``), which decodes into an int32 field when it is whole; anything else
(``1.5``, ``"3"``, ``true``) is refused at decoding. An int-or-string (``maxSurge``)
keeps a string as a string.

``STRATEGY_CHECKS`` is the API server's validation of an apps workload's update
strategy after its defaults, one row per refusal, each citing where Kubernetes defines
it; ``refused_strategy`` returns the first that holds, in the API server's words.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any, NamedTuple

from cmhash.knowledge.defaults import path_get

VALIDATION = "kubernetes/kubernetes pkg/apis/apps/validation/validation.go"
DEFAULTS = "kubernetes/kubernetes pkg/apis/apps/v1/defaults.go"
DECODE = (
    "kubernetes/apimachinery pkg/util/intstr/intstr.go UnmarshalJSON (a JSON number "
    "into the int32, a string as is); sigs.k8s.io/yaml YAMLToJSON (a YAML float a JSON "
    "number: 3.0 is 3, 1e3 is 1000)"
)
INT32 = 2**31 - 1


class Invalid(NamedTuple):
    """A value the API server cannot decode into the field."""

    value: Any


def as_int32(value: Any) -> int | Invalid | None:
    """An int32 field as decoded from kubectl's JSON (None: absent)."""
    if value is None:
        return None
    if isinstance(value, float) and value.is_integer() and abs(value) <= INT32:
        return int(value)
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) <= INT32:
        return value
    return Invalid(value)


def int_or_string(value: Any) -> int | str | Invalid | None:
    """An IntOrString field as decoded (None: absent)."""
    if isinstance(value, str):
        return value
    return as_int32(value)


def _percent(v: int | str) -> int | None:
    """``getPercentValue``: the number of a valid ``"p%"``, else None."""
    if isinstance(v, str):
        m = re.fullmatch(r"[0-9]+%", v)
        return int(v[:-1]) if m else None
    return None


def _value(v: int | str) -> int:
    """``getIntOrPercentValue`` (an invalid string: 0, as ``IntValue`` parses it)."""
    p = _percent(v)
    if p is not None:
        return p
    if isinstance(v, int):
        return v
    try:
        return int(v)
    except ValueError:
        return 0


def _bad(v: int | str) -> bool:
    """``ValidatePositiveIntOrPercent`` refuses it."""
    return (isinstance(v, str) and _percent(v) is None) or (isinstance(v, int) and v < 0)


def _over_100(v: int | str) -> bool:
    """``IsNotMoreThan100Percent`` refuses it."""
    p = _percent(v)
    return p is not None and p > 100


class Strategy(NamedTuple):
    """A workload's update strategy after the API server's defaults."""

    kind: str
    type: Any
    rolling: Any  # the rollingUpdate block as written (None: absent)
    max_surge: int | str | Invalid | None
    max_unavailable: int | str | Invalid | None
    partition: int | Invalid | None = None  # a StatefulSet's


def whole(value: Any) -> int | None:
    """An int32 field's number as decoded, None when absent or undecodable."""
    v = as_int32(value)
    return None if isinstance(v, Invalid) else v


def strategy(kind: str, spec: Mapping[str, Any]) -> Strategy:
    """``SetDefaults_Deployment`` (RollingUpdate: 25% / 25%), ``SetDefaults_DaemonSet``
    (RollingUpdate: maxUnavailable 1, maxSurge 0), ``SetDefaults_StatefulSet`` (no
    maxUnavailable default that validation sees as 0)."""
    field = "strategy" if kind == "Deployment" else "updateStrategy"
    t = path_get(spec, (field, "type"))
    t = "RollingUpdate" if t is None or t == "" else t
    rolling = path_get(spec, (field, "rollingUpdate"))
    ms = int_or_string(path_get(rolling, ("maxSurge",)))
    mu = int_or_string(path_get(rolling, ("maxUnavailable",)))
    if kind == "StatefulSet":
        ms = None  # no such field
    if t == "RollingUpdate" and kind == "Deployment":
        ms, mu = ("25%" if ms is None else ms), ("25%" if mu is None else mu)
    if t == "RollingUpdate" and kind == "DaemonSet":
        ms, mu = (0 if ms is None else ms), (1 if mu is None else mu)
    return Strategy(kind, t, rolling, ms, mu, as_int32(path_get(rolling, ("partition",))))


class StrategyCheck(NamedTuple):
    name: str
    kinds: tuple[str, ...]
    when: Callable[[Strategy], bool]
    text: Callable[[Strategy], str]  # the API server's words
    source: str


def _rolling(s: Strategy) -> bool:
    return bool(s.type == "RollingUpdate")


def _undecodable(s: Strategy) -> Invalid | None:
    return next((v for v in (s.max_surge, s.max_unavailable) if isinstance(v, Invalid)), None)


def _both(s: Strategy, test: Callable[[int | str], bool]) -> str | None:
    for name, v in (("maxSurge", s.max_surge), ("maxUnavailable", s.max_unavailable)):
        if v is not None and not isinstance(v, Invalid) and test(v):
            return f"{name} {v!r}"
    return None


def _over(s: Strategy) -> str | None:
    """What ``IsNotMoreThan100Percent`` refuses: a DaemonSet's maxSurge or any
    maxUnavailable above 100%."""
    if s.kind != "DaemonSet":
        mu = s.max_unavailable
        ok = mu is None or isinstance(mu, Invalid) or not _over_100(mu)
        return None if ok else f"maxUnavailable {mu!r}"
    return _both(s, _over_100)


def _nonzero(v: int | str | Invalid | None) -> bool:
    return v is not None and not isinstance(v, Invalid) and _value(v) != 0


SUPPORTED = {
    "Deployment": ("RollingUpdate", "Recreate"),
    "DaemonSet": ("RollingUpdate", "OnDelete"),
    "StatefulSet": ("RollingUpdate", "OnDelete"),
}

STRATEGY_CHECKS: tuple[StrategyCheck, ...] = (
    StrategyCheck(
        "unsupported-type",
        ("Deployment", "DaemonSet", "StatefulSet"),
        lambda s: s.type not in SUPPORTED[s.kind],
        lambda s: (
            f"type {s.type!r} is not supported (the API server takes "
            f"{' or '.join(SUPPORTED[s.kind])})"
        ),
        f"{VALIDATION} ValidateDeploymentStrategy, ValidateDaemonSetUpdateStrategy, "
        "ValidateStatefulSetUpdateStrategy (field.NotSupported)",
    ),
    StrategyCheck(
        "recreate-with-rolling-update",
        ("Deployment",),
        lambda s: s.type == "Recreate" and s.rolling is not None,
        lambda s: "rollingUpdate may not be specified when strategy type is 'Recreate'",
        f'{VALIDATION} ValidateDeploymentStrategy (field.Forbidden(rollingUpdate, "may not '
        "be specified when strategy `type` is 'Recreate'\"))",
    ),
    StrategyCheck(
        "undecodable",
        ("Deployment", "DaemonSet", "StatefulSet"),
        lambda s: _rolling(s) and _undecodable(s) is not None,
        lambda s: (
            f"rollingUpdate value {getattr(_undecodable(s), 'value', None)!r} is neither "
            "an integer nor a percentage string"
        ),
        DECODE,
    ),
    StrategyCheck(
        "not-int-or-percent",
        ("Deployment", "DaemonSet", "StatefulSet"),
        lambda s: _rolling(s) and _both(s, _bad) is not None,
        lambda s: f"rollingUpdate {_both(s, _bad)}: must be an integer ≥ 0 or a percentage ('25%')",
        f"{VALIDATION} ValidatePositiveIntOrPercent (IsValidPercent; ValidateNonnegativeField)",
    ),
    StrategyCheck(
        "over-100-percent",
        ("Deployment", "DaemonSet", "StatefulSet"),
        lambda s: _rolling(s) and _over(s) is not None,
        lambda s: f"rollingUpdate {_over(s)}: must not be greater than 100%",
        f"{VALIDATION} IsNotMoreThan100Percent (ValidateRollingUpdateDeployment: "
        "maxUnavailable only, a maxSurge of 200% is valid; ValidateRollingUpdateDaemonSet: "
        "both; validateRollingUpdateStatefulSet: maxUnavailable)",
    ),
    StrategyCheck(
        "deployment-both-zero",
        ("Deployment",),
        lambda s: _rolling(s) and not _nonzero(s.max_surge) and not _nonzero(s.max_unavailable),
        lambda s: "rollingUpdate.maxUnavailable may not be 0 when maxSurge is 0",
        f'{VALIDATION} ValidateRollingUpdateDeployment ("may not be 0 when `maxSurge` is '
        '0"); ' + f"{DEFAULTS} SetDefaults_Deployment (25%, 25%)",
    ),
    StrategyCheck(
        "daemonset-both-set",
        ("DaemonSet",),
        lambda s: _rolling(s) and _nonzero(s.max_surge) and _nonzero(s.max_unavailable),
        lambda s: (
            "rollingUpdate.maxSurge may not be set when maxUnavailable is non-zero"
            + (
                " (maxUnavailable defaults to 1: set maxUnavailable: 0 with maxSurge)"
                if path_get(s.rolling, ("maxUnavailable",)) is None
                else ""
            )
        ),
        f'{VALIDATION} ValidateRollingUpdateDaemonSet ("Validate exactly one of MaxSurge '
        f'or MaxUnavailable is non-zero"); {DEFAULTS} SetDefaults_DaemonSet '
        "(maxUnavailable 1, maxSurge 0)",
    ),
    StrategyCheck(
        "daemonset-both-zero",
        ("DaemonSet",),
        lambda s: _rolling(s) and not _nonzero(s.max_surge) and not _nonzero(s.max_unavailable),
        lambda s: "rollingUpdate.maxUnavailable cannot be 0 when maxSurge is 0",
        f'{VALIDATION} ValidateRollingUpdateDaemonSet ("cannot be 0 when maxSurge is 0")',
    ),
    StrategyCheck(
        "statefulset-partition-undecodable",
        ("StatefulSet",),
        lambda s: _rolling(s) and isinstance(s.partition, Invalid),
        lambda s: f"rollingUpdate.partition {getattr(s.partition, 'value', None)!r} is no integer",
        f"{DECODE}; kubernetes/api apps/v1 types.go RollingUpdateStatefulSetStrategy "
        "(partition *int32)",
    ),
    StrategyCheck(
        "statefulset-max-unavailable-zero",
        ("StatefulSet",),
        lambda s: (
            _rolling(s)
            and s.max_unavailable is not None
            and not isinstance(s.max_unavailable, Invalid)
            and _value(s.max_unavailable) == 0
        ),
        lambda s: f"rollingUpdate.maxUnavailable {s.max_unavailable!r} cannot be 0",
        f'{VALIDATION} validateRollingUpdateStatefulSet ("MaxUnavailable cannot be 0")',
    ),
)


def refused_strategy(kind: str, spec: Mapping[str, Any]) -> str | None:
    """Why the API server refuses the workload's update strategy, or None."""
    s = strategy(kind, spec)
    hit = next((c for c in STRATEGY_CHECKS if kind in c.kinds and c.when(s)), None)
    return None if hit is None else hit.text(s)

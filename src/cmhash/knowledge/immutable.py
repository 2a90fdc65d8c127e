"""Fields of a workload's object, outside its pod template, that the API server never
lets change: a change of one makes ``kubectl apply`` fail ("field is immutable",
"updates to statefulset spec for fields other than ... are forbidden"), whatever else
the change does.

Each row gives, for an object, its fixed fields as the server compares them
(``apiequality.Semantic``: an empty list, map or string is as good as none; quantities
by amount) after its defaults (pkg/apis/apps/v1/defaults.go, pkg/apis/core/v1/defaults.go);
report/rollout.py compares OLD's with NEW's.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, NamedTuple

from cmhash.knowledge.defaults import quantity
from cmhash.knowledge.plain import path_get

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

"""How a label selector selects, as apimachinery decides it: a ``LabelSelector`` (plain
data: ``matchLabels`` and ``matchExpressions``) made a selector by
``metav1.LabelSelectorAsSelector`` (pkg/apis/meta/v1/helpers.go: nil is
``labels.Nothing()``, an empty one ``labels.Everything()``; the operators In, NotIn,
Exists, DoesNotExist, In and NotIn with values, the other two without) and matched
against a set of labels (pkg/labels/selector.go ``Requirement.Matches``: NotIn and
DoesNotExist hold for an absent key). Read by the rollout rules
(knowledge/rollout_apps.py: a selector that does not match the template's labels)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def _label(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _requirement(expr: Any, labels: Mapping[str, Any]) -> bool | None:
    """One matchExpressions item against the labels (None: not a valid requirement,
    LabelSelectorAsSelector fails)."""
    if not isinstance(expr, dict) or not isinstance(expr.get("key"), str):
        return None
    key, op, values = expr["key"], expr.get("operator"), expr.get("values") or []
    if not isinstance(values, list):
        return None
    have = key in labels
    wanted = {_label(v) for v in values}
    if op == "In" and values:
        return have and _label(labels[key]) in wanted
    if op == "NotIn" and values:
        return not have or _label(labels[key]) not in wanted
    if op == "Exists" and not values:
        return have
    if op == "DoesNotExist" and not values:
        return not have
    return None


def selector_matches(selector: Any, labels: Any) -> bool | None:
    """Whether a LabelSelector (plain data) selects ``labels``, as
    metav1.LabelSelectorAsSelector then Matches decide: None (absent) matches nothing,
    an empty one everything; None returned: the selector does not parse."""
    labels = labels if isinstance(labels, dict) else {}
    if selector is None:
        return False
    if not isinstance(selector, dict):
        return None
    match = selector.get("matchLabels") or {}
    exprs = selector.get("matchExpressions") or []
    if not isinstance(match, dict) or not isinstance(exprs, list):
        return None
    results = [k in labels and _label(labels[k]) == _label(v) for k, v in match.items()]
    for expr in exprs:
        got = _requirement(expr, labels)
        if got is None:
            return None
        results.append(got)
    return all(results)


def is_empty(selector: Any) -> bool:
    return isinstance(selector, dict) and not (
        selector.get("matchLabels") or selector.get("matchExpressions")
    )

"""report: what changed in a workload's pod template between OLD and NEW, as causes of a
restart: image, command/args, env, envFrom, volumes, resources, probes, security
context, scheduling, references, and any other field by its path.

The two templates are walked together; a path that matches a row of ``UNITS`` is
compared whole and gives one cause of that row's type; anything else that differs is an
"other" change, named by its field path. List items with a name (containers, env,
volumes) are matched by it, as the API server's strategic merge does; other lists by
position. Our own annotation is left to the checksum causes (workloads.py).

The two templates are compared as the API server stores them: a built-in kind's
template without the zero values its Go types cannot tell from absent
(knowledge/zerovalues.py); on each side the defaults
the other side spells out are filled in (knowledge/defaults.py DEFAULTS), only those, so
that the values the report shows stay as the manifests wrote them; a quantity spelled two
ways in one format (QUANTITIES) is one amount.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, NamedTuple

from cmhash.knowledge.defaults import CONTAINERS, DEFAULTS, QUANTITIES, matches, quantity
from cmhash.knowledge.zerovalues import stored


class Unit(NamedTuple):
    pattern: tuple[str, ...]  # path steps; "*" any key, "<c>" a container list
    type: str
    values: bool = True  # whether old/new values are shown


def _c(*rest: str) -> tuple[str, ...]:
    return ("spec", "<c>", "*", *rest)


# first match wins; an env entry is described by _env (a Secret's value is never there)
UNITS: tuple[Unit, ...] = (
    Unit(_c("image"), "image"),
    Unit(_c("command"), "command"),
    Unit(_c("args"), "args"),
    Unit(_c("env", "*"), "env"),
    Unit(_c("envFrom"), "envFrom"),
    Unit(_c("volumeMounts"), "volume"),
    Unit(("spec", "volumes", "*"), "volume"),
    Unit(_c("resources"), "resources"),
    Unit(("spec", "resources"), "resources"),
    Unit(_c("livenessProbe"), "probe"),
    Unit(_c("readinessProbe"), "probe"),
    Unit(_c("startupProbe"), "probe"),
    Unit(_c("securityContext"), "securityContext"),
    Unit(("spec", "securityContext"), "securityContext"),
    Unit(("spec", "nodeSelector"), "scheduling"),
    Unit(("spec", "affinity"), "scheduling"),
    Unit(("spec", "tolerations"), "scheduling"),
    Unit(("spec", "topologySpreadConstraints"), "scheduling"),
    Unit(("spec", "nodeName"), "scheduling"),
    Unit(("spec", "priorityClassName"), "scheduling"),
    Unit(("spec", "schedulerName"), "scheduling"),
    Unit(("spec", "serviceAccountName"), "reference"),
    Unit(("spec", "serviceAccount"), "reference"),
    Unit(("spec", "imagePullSecrets"), "reference"),
    Unit(("spec", "<c>", "*"), "container", values=False),  # a container added or removed
)

# list items matched by this field (else by position)
_LIST_KEYS = {"containers": "name", "initContainers": "name", "ephemeralContainers": "name"}
_LIST_KEYS |= {"env": "name", "volumes": "name"}


class TemplateCause(NamedTuple):
    type: str
    field: str  # the path in the pod template, e.g. spec.containers[api].image
    change: str  # added | removed | changed
    old: str | None = None
    new: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return {k: v for k, v in self._asdict().items() if v is not None}  # (old, new: if any)


def shown(value: Any) -> str:
    """A value as one line (strings as they are, the rest as compact JSON); cut to its
    shown length only once any Secret value in it is masked (redact.py ``bound``)."""
    text = value if isinstance(value, str) else json.dumps(value, separators=(",", ":"))
    return text.replace("\r", "\\r").replace("\n", "\\n")


def _env(item: Any) -> str | None:
    """An env entry as shown: a plain value as it is; a reference by what it names
    (a Secret by name and key only: its value is never in the template anyway)."""
    if not isinstance(item, dict):
        return None
    if "valueFrom" not in item:
        return shown(item.get("value") or "")
    src = item["valueFrom"]
    if isinstance(src, dict):
        for field, kind in (("secretKeyRef", "Secret"), ("configMapKeyRef", "ConfigMap")):
            ref = src.get(field)
            if isinstance(ref, dict):
                return f"from {kind} {ref.get('name')} key {ref.get('key')}"
        if src:
            return f"from {next(iter(src))}"
    return "from valueFrom"


def _label(path: tuple[str, ...]) -> str:
    out = ""
    for step in path:
        out += step if step.startswith("[") else (f".{step}" if out else step)
    return out


def _items(parent: str, value: list[Any]) -> dict[str, Any]:
    key = _LIST_KEYS.get(parent)
    out: dict[str, Any] = {}
    for i, item in enumerate(value):
        name = item.get(key) if key and isinstance(item, dict) else None
        out[f"[{name}]" if isinstance(name, str) and f"[{name}]" not in out else f"[{i}]"] = item
    return out


def _change(old: Any, new: Any) -> str:
    return "added" if old is None else "removed" if new is None else "changed"


# a named list whose items only moved: still a new pod template (a rollout), and an env
# entry's $(VAR) reads only the entries before it
_ORDER_TYPES = {"env": "env", "volumes": "volume"} | dict.fromkeys(CONTAINERS, "container")


def _reordered(
    parent: str,
    path: tuple[str, ...],
    o_items: dict[str, Any],
    n_items: dict[str, Any],
    out: list[TemplateCause],
) -> None:
    """A cause when the items both sides have (by name) are in another order."""
    if parent not in _LIST_KEYS:
        return
    before = [k for k in o_items if k in n_items]
    after = [k for k in n_items if k in o_items]
    if before != after:
        names = (", ".join(k.strip("[]") for k in ks) for ks in (before, after))
        o, n = (shown(f"order {v}") for v in names)
        out.append(TemplateCause(_ORDER_TYPES[parent], _label(path), "changed", o, n))


def _walk(old: Any, new: Any, path: tuple[str, ...], key: str, out: list[TemplateCause]) -> None:
    if old == new:
        return
    steps = tuple(s.strip("[]") if s.startswith("[") else s for s in path)
    unit = next((u for u in UNITS if matches(u.pattern, steps)), None)
    if unit is not None and (unit.type != "container" or old is None or new is None):
        if unit.type == "env":
            o, n = _env(old), _env(new)
        elif unit.values:
            o = None if old is None else shown(old)
            n = None if new is None else shown(new)
        else:
            o = n = None
        out.append(TemplateCause(unit.type, _label(path), _change(old, new), o, n))
        return
    if old is None and isinstance(new, dict | list):  # a whole block added: its parts
        old = type(new)()
    elif new is None and isinstance(old, dict | list):
        new = type(old)()
    if isinstance(old, dict) and isinstance(new, dict):
        for k in list(old) + [k for k in new if k not in old]:
            if k == key and path == ("metadata", "annotations"):
                continue  # the checksum: workloads.py says what it covers
            _walk(old.get(k), new.get(k), (*path, k), key, out)
        return
    if isinstance(old, list) and isinstance(new, list):
        parent = path[-1] if path else ""
        o_items, n_items = _items(parent, old), _items(parent, new)
        for k in list(o_items) + [k for k in n_items if k not in o_items]:
            _walk(o_items.get(k), n_items.get(k), (*path, k), key, out)
        _reordered(parent, path, o_items, n_items, out)
        return
    if path[:2] == ("metadata", "annotations"):
        # a pod template's annotation is named, never shown: charts hash Secrets into
        # them (checksum/secret: {{ include "secret.yaml" . | sha256sum }})
        o = n = None
    else:
        o = None if old is None else shown(old)
        n = None if new is None else shown(new)
    out.append(TemplateCause("other", _label(path), _change(old, new), o, n))


def template_causes(
    old: Any, new: Any, annotation_key: str, typed: bool = False, by_amount: bool = False
) -> list[TemplateCause]:
    """Why the pod template ``new`` differs from ``old`` (both plain data), in field
    order; empty when they are equal apart from ``annotation_key`` and the API server's
    defaults (``with_defaults``). ``typed``: a built-in kind's template, which the
    server stores without its zero values (knowledge/zerovalues.py); ``by_amount``: its
    controller compares quantities by amount, whatever the format (defaults.py
    BY_AMOUNT)."""
    out: list[TemplateCause] = []
    if typed:
        old, new = stored(old)[1], stored(new)[1]
    # a field spelled out with the API server's default on one side only: no change
    before, after = with_defaults(
        old if isinstance(old, dict) else {},
        new if isinstance(new, dict) else {},
        _LIST_KEYS,
        by_amount,
    )
    _walk(before, after, (), annotation_key, out)
    return out


def _default(path: tuple[str, ...], holder: Mapping[str, Any]) -> tuple[bool, Any]:
    """(whether the field at ``path`` has a default, that default) for ``holder``."""
    for d in DEFAULTS:
        if matches(d.pattern, path):
            value = d.value(holder) if callable(d.value) else d.value
            return True, value
    return False, None


def _key(item: Any, parent: str, names: Mapping[str, str]) -> Any:
    field = names.get(parent)
    return item.get(field) if field and isinstance(item, dict) else None


def _same(a: Any, b: Any, by_amount: bool) -> bool:
    """Whether two quantities are one as stored (same format and amount), or with
    ``by_amount``, as apiequality.Semantic compares them (the amount)."""
    qa, qb = quantity(a), quantity(b)
    if qa is None or qb is None:
        return False
    return qa[1] == qb[1] if by_amount else qa == qb


def _filled(
    a: Any,
    b: Any,
    path: tuple[str, ...],
    names: Mapping[str, str],
    spell: bool | None = None,
) -> Any:
    """``a`` with the defaults ``b`` spells out where ``a`` leaves them out, and unless
    ``spell`` is None, ``b``'s spelling of a quantity of the same amount (a copy; with
    ``spell`` True, in whatever format)."""
    if spell is not None and a != b and any(matches(q, path) for q in QUANTITIES):
        return b if _same(a, b, spell) else a
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


def with_defaults(
    old: Any, new: Any, names: Mapping[str, str], by_amount: bool = False
) -> tuple[Any, Any]:
    """Both templates, each with the defaults the other spells out filled in (``names``:
    the field that names a list's items, as podtemplate.py matches them)."""
    # (a quantity takes NEW's spelling on the OLD side only: one side, or they would swap)
    return _filled(old, new, (), names, spell=by_amount), _filled(new, old, (), names)

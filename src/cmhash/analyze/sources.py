"""What a Secret source (``knowledge/sources.py``: SealedSecret, ExternalSecret,
SecretProviderClass, ``secretSources`` of the config file) holds, read from its tree:
the names it produces, its content (the fields that decide what the controller writes),
the objects it copies in, its store reads that no version pins."""

from __future__ import annotations

from typing import Any

from cmhash.analyze.hashing import canonical_json
from cmhash.errors import NodeError
from cmhash.knowledge.sources import Depends, SecretSource
from cmhash.parse.k8syaml import plain_bool, resolves_to_non_string, tagged_value
from cmhash.parse.tree import SCALAR, SEQ, Node, deref, entries, get_path, items, scalar, walk


def _canonical(node: Node | None, depth: int = 0) -> Any:
    """A subtree as Kubernetes' decoder sees it, in a form where quoting, key order and
    flow/block style make no difference: strings stay strings; a plain scalar that
    decodes to a number, boolean or null is kept as ``["plain", text]``."""
    node = deref(node)
    if depth > 64:
        raise NodeError("source content nested too deeply", node.start if node else 0)
    if node is None or node.is_null:
        return None
    if node.kind == SCALAR:
        text = str(node.value)
        if node.tag is not None:  # as kubectl sends it (k8syaml.py): !!str 3 is "3"
            value = tagged_value(node.tag, text)
            return value if value is None or isinstance(value, str | bool) else ["plain", text]
        if node.style is None and resolves_to_non_string(text):
            boolean = plain_bool(text)  # yes, True, on: one boolean to Kubernetes
            return boolean if boolean is not None else ["plain", text]
        return text
    if node.kind == SEQ:
        return [_canonical(x, depth + 1) for x in items(node)]
    return {k: _canonical(v, depth + 1) for k, (_, v) in entries(node).items()}


def source_content(node: Node, row: SecretSource) -> dict[str, bytes]:
    """Content path -> its canonical JSON (absent paths are left out)."""
    out = {}
    for path in row.content:
        if "*" in path:  # every item of a list
            found = [n for n, _ in walk(node, path)]
            value: Any = [_canonical(n) for n in found] if found else None
        else:
            value = _canonical(get_path(node, path))  # (None when absent)
        if value is not None:
            out[".".join(path)] = canonical_json(value).encode("utf-8")
    return out


def source_dependencies(node: Node, row: SecretSource) -> Depends:
    """The objects whose content the source copies in, in order, without repeats."""
    dep = row.depends
    if dep is None:
        return ()
    out: list[tuple[str, str, tuple[str, ...] | None]] = []
    for item, _ in walk(node, dep.path):
        for field, kind in dep.kinds:
            ref = get_path(item, (field,))
            name = scalar(get_path(ref, (dep.name,))) if ref is not None else None
            if not name:
                continue
            keys = [scalar(k) for k, _ in walk(ref, dep.keys)] if ref is not None else []
            listed = tuple(sorted({k for k in keys if k}))
            out.append((kind, name, listed or None))
    return tuple(dict.fromkeys(out))


def unpinned(node: Node, row: SecretSource) -> tuple[int, ...]:
    """Where the source reads a store value no version pins, in order (offsets)."""
    out = []
    for pin in row.pins:
        for item, _ in walk(node, pin.path):
            d = deref(item)
            if d is None or d.is_null:
                continue
            version = get_path(d, (pin.field,)) if pin.field is not None else None
            if version is None or not scalar(version):
                out.append(d.start)
    return tuple(sorted(out))


def produced_names(node: Node, row: SecretSource, own_name: str) -> list[str]:
    """The names of the objects a source produces, in order, without repeats."""
    if row.produces_nothing is not None:
        path, values = row.produces_nothing
        if scalar(get_path(node, path)) in values:
            return []
    names: list[str] = []
    if row.names is not None:
        for n, _ in walk(node, row.names):
            d = deref(n)
            if d is not None and d.kind == SCALAR and not d.is_null:
                names.append(str(d.value))
            elif d is not None and not d.is_null:
                raise NodeError(f"'{'.'.join(row.names)}' must be a string", n.start)
    names = [n for n in names if n]  # an empty name means the default, as for a missing one
    if not names and row.own_name_default:
        names.append(own_name)
    return list(dict.fromkeys(names))


def restart_targets(node: Node, row: SecretSource) -> tuple[tuple[str, str, str, str], ...]:
    """The workloads the source's operator restarts itself (``row.restarts``: Vault
    Secrets Operator's rolloutRestartTargets), as (group, kind, name, operator), in
    order, without repeats; none when the operator ignores them (a VaultStaticSecret
    with hmacSecretData: false). A kind the operator does not know is left out (its CRD
    refuses it)."""
    spec = row.restarts
    if spec is None:
        return ()
    if spec.off is not None:
        path, off, default = spec.off
        value = scalar(get_path(node, path))
        flag = plain_bool(value) if value is not None else default
        if flag is off:
            return ()
    kinds = dict(spec.kinds)
    out: list[tuple[str, str, str, str]] = []
    for item, _ in walk(node, spec.path):
        kind = kinds.get(scalar(get_path(item, ("kind",))) or "")
        name = scalar(get_path(item, ("name",)))
        if kind is not None and name:
            out.append((*kind, name, spec.operator))
    return tuple(dict.fromkeys(out))

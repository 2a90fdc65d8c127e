"""Reference fields of an operator's resource written in a shape the profile cannot read
(``spec.additionalScrapeConfigs: scrape.yaml`` where the operator wants ``{name, key}``,
``spec.secrets: tls`` where it wants a list of names): a ``reference-shape`` finding at
the field, naming the shape expected, instead of silence (an error with --strict).

A built-in profile's CRD schema says the same (tests/test_operators.py), so the API
server would refuse the object; cmhash says so at render time, where the line is known.
Never an exception, whatever the shape. A null field is no reference at all (the
operator's default applies), never a finding.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from cmhash.analyze.declared import Skipped
from cmhash.parse.tree import MAP, SCALAR, SEQ, deref, get, items

if TYPE_CHECKING:
    from cmhash.knowledge.podspec import Site
    from cmhash.parse.tree import Node

_WHAT = {SCALAR: "a string", SEQ: "a list", MAP: "a mapping"}


def _reference(site: Site) -> str:
    """The shape of the node at a site's path."""
    if not site.name_field:
        return "a name (a string)"
    fields = [site.name_field, *(f for f in (site.key_field, site.items_field) if f)]
    return "a mapping {" + ", ".join(fields) + "}"


def _expected(site: Site, rest: tuple[str, ...]) -> str:
    """What the node ``rest`` steps above the site's node must be."""
    if not rest:
        return _reference(site)
    if rest[0] != "*":
        return "a mapping"
    if len(rest) == 1:
        return "a list of names" if not site.name_field else f"a list of {_reference(site)}"
    return "a list"


def _fits(node: Node, site: Site, rest: tuple[str, ...]) -> bool:
    if not rest:
        return node.kind == SCALAR if not site.name_field else node.kind == MAP
    return node.kind == (SEQ if rest[0] == "*" else MAP)


def misshapen(root: Node, sites: tuple[Site, ...], operator: str | None) -> list[Skipped]:
    """One finding per node on a site's path that is not the shape the path needs (the
    walk stops there: what is below it cannot be read)."""
    who = operator or "the profile"
    out: list[Skipped] = []
    for site in sites:
        todo: list[tuple[Node | None, tuple[str, ...], str]] = [(root, site.path, "")]
        while todo:
            node, rest, field = todo.pop()
            node = deref(node)
            if node is None or node.is_null:
                continue
            if field and not _fits(node, site, rest):
                out.append(
                    Skipped(
                        node.start,
                        f"{field} is {_WHAT.get(node.kind, 'a value')} where {who} expects "
                        f"{_expected(site, rest)}: cmhash cannot read a reference there",
                        shape=True,
                    )
                )
                continue
            if not rest:
                continue
            step, tail = rest[0], rest[1:]
            if step == "*":
                listed = [(x, tail, f"{field}[{i}]") for i, x in enumerate(items(node))]
                todo.extend(reversed(listed))
            else:
                todo.append((get(node, step), tail, f"{field}.{step}" if field else step))
    # (one finding per node: sites that share a prefix, env's ConfigMap and Secret
    # selectors, meet the same misshapen node)
    return sorted({s.offset: s for s in reversed(out)}.values(), key=lambda s: s.offset)

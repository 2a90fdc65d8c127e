"""Spots: where a name is written in the source, for the edits that rename it in place
(versioned names, --jobs=rename), and why one cannot be renamed (an alias, a block
scalar, an anchor, a tag, a node an alias repeats)."""

# No "from __future__ import annotations": typing compiles string NamedTuple fields at import

from collections.abc import Sequence
from typing import NamedTuple

from cmhash.parse.tree import ALIAS, SCALAR, Node


class Spot(NamedTuple):
    """Where a name is written (a scalar's span and style), for renaming it in place
    (versioned names); ``problem`` says why it cannot be."""

    start: int
    end: int
    style: str | None
    problem: str | None = None


def spot_of(raw: Node | None) -> Spot | None:
    """The spot of a name's scalar as written (``raw``: not through an alias)."""
    if raw is None:
        return None
    problem = None
    if raw.kind == ALIAS:
        problem = "the name is an alias; write the name out in full"
    elif raw.kind != SCALAR:
        return None
    elif raw.style in ("|", ">"):
        problem = "the name is a block scalar; write it on one line"
    elif raw.anchor is not None:
        problem = "the name carries an anchor that aliases may repeat; write the name out in full"
    elif raw.tag is not None:
        problem = "the name has an explicit tag; remove it"
    return Spot(raw.start, raw.end, raw.style, problem)


def aliased_spot(spot: Spot | None, aliased: Sequence[tuple[Node, Node]]) -> Spot | None:
    """A spot inside a node an alias repeats (or a ``<<`` merge pulls in) cannot be
    renamed: the copy would change too."""
    if spot is None or spot.problem is not None:
        return spot
    for target, _ in aliased:
        if target.start <= spot.start < target.end:
            return spot._replace(
                problem="the name is inside a node an alias repeats; write that part out in full"
            )
    return spot

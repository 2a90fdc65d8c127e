"""The edit's whole life: planned with a placeholder, given its value, spliced into the
text. Never re-serialising anything.

1. The map stage plans a *candidate* edit per workload whose value is ``PLACEHOLDER``
   (64 zeros: the real value is unknown until every ConfigMap is indexed), checks that
   it does not land inside a node an alias repeats, and verifies the edited document.
2. The reduce stage swaps in the real value (``with_value``): 64 hex digits inside double
   quotes like the placeholder, so the structure that was verified cannot change.
3. ``apply_edits`` splices the edits into the document's text.

Where the edit goes (docs/concepts/text-fidelity.md): the deepest existing mapping on
``template -> metadata -> annotations`` decides. Our key's value scalar is replaced; or
``key: "value"`` inserted in ``annotations`` (block: a new line at the first key's
column; flow: ``, "key": "value"`` after the last value); or the missing levels written
after the colon of a null ``annotations`` or ``metadata``, or inserted as the first key
of the parent mapping where they are missing.

Anything reached through an alias, a ``<<`` merge, an anchor or a tag is
refused with the position of the offending node: an edit there would change
other nodes too, and falling back to re-dumping is never an option.
"""

# No "from __future__ import annotations": typing compiles string NamedTuple fields at import

import functools
from collections.abc import Sequence
from typing import NamedTuple

from cmhash.errors import NodeError
from cmhash.parse.k8syaml import plain_bool
from cmhash.parse.tree import ALIAS, MAP, SCALAR, Node, is_merge_key, own
from cmhash.read.source import newline_at

_MAP_TAG = "tag:yaml.org,2002:map"
_STR_TAG = "tag:yaml.org,2002:str"
DEFAULT_STEP = 2


PLACEHOLDER = "0" * 64  # the candidate value: same shape as every real one


class Edit(NamedTuple):
    start: int
    end: int
    text: str


# Edit((start, end, text)) without a Python frame (with_value: one per annotated workload)
_edit = functools.partial(tuple.__new__, Edit)


def with_value(edit: Edit, value: str) -> Edit:
    """The candidate edit, planned with ``PLACEHOLDER``, carrying the real value."""
    return _edit((edit.start, edit.end, edit.text.replace(PLACEHOLDER, value)))


def inside_aliased(edit: Edit, aliased: Sequence[tuple[Node, Node]]) -> NodeError | None:
    """An edit inside a node that an alias repeats elsewhere would change that copy too
    (and what it means after kubectl expands the alias): refused, at the alias."""
    for target, alias in aliased:
        if target.start < edit.start < target.end:
            return NodeError(
                f"cannot add the annotation: it would land inside the anchored node "
                f"&{target.anchor}, which the alias here repeats; write the aliased part "
                "out in full",
                alias.start,
                public="cannot add the annotation: it would land inside an anchored node "
                "that the alias here repeats; write the aliased part out in full",
            )
    return None


def _check_owned(node: Node, what: str) -> None:
    if node.kind == ALIAS:
        raise NodeError(
            f"cannot add the annotation: {what} is an alias (*{node.anchor}); "
            "expand it or add the annotation by hand",
            node.start,
            public=f"cannot add the annotation: {what} is an alias; expand it or "
            "add the annotation by hand",
        )
    if node.anchor is not None:
        raise NodeError(
            f"cannot add the annotation: {what} carries an anchor (&{node.anchor}) "
            "that other nodes may share",
            node.start,
            public=f"cannot add the annotation: {what} carries an anchor that "
            "other nodes may share",
        )
    if node.tag is not None and node.tag not in (_MAP_TAG, _STR_TAG):
        raise NodeError(
            f"cannot add the annotation: {what} has an explicit tag {node.tag}",
            node.start,
            public=f"cannot add the annotation: {what} has an explicit tag",
        )


def _check_map(node: Node, what: str) -> None:
    """A mapping written out: no ``<<`` merge key pulls entries in from elsewhere."""
    if node.kind != MAP:
        raise NodeError(f"{what} is not a mapping", node.start)
    for k, _ in node.value:
        if k.kind == SCALAR and is_merge_key(k):
            raise NodeError(
                f"cannot add the annotation: {what} uses a '<<' merge key; "
                "write the annotations out in full",
                k.start,
            )


def line_start(text: str, pos: int) -> int:
    return text.rfind("\n", 0, pos) + 1


def column(text: str, pos: int) -> int:
    return pos - line_start(text, pos)


def _colon_after(text: str, key: Node) -> int:
    i = key.end
    while i < len(text) and text[i] in " \t":
        i += 1
    if i >= len(text) or text[i] != ":":
        raise NodeError("cannot locate the ':' after this key", key.start)
    return i


def _q(s: str) -> str:
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


class _Ctx(NamedTuple):
    """What to write: ``pairs`` of key and value *as written* (``"..."`` or plain)."""

    text: str
    pairs: list[tuple[str, str]]
    default_nl: str

    def flow_value(self, levels: list[str]) -> str:
        inner = ", ".join(f"{_q(k)}: {v}" for k, v in self.pairs)
        for name in reversed(levels):
            inner = f"{_q(name)}: {{{inner}}}"
        return inner

    def block_lines(self, levels: list[str], indent: str, step: str, nl: str) -> str:
        out = [f"{indent}{step * depth}{name}:" for depth, name in enumerate(levels)]
        out.extend(f"{indent}{step * len(levels)}{k}: {v}" for k, v in self.pairs)
        return nl.join(out)


def _step(text: str, mapping: Node, parent_key: Node | None) -> str:
    """The document's indentation step, seen between a parent key and its mapping."""
    if mapping.kind == MAP and not mapping.style and mapping.value:
        first = mapping.value[0][0]
        if parent_key is not None:
            diff = column(text, first.start) - column(text, parent_key.start)
            if diff > 0:
                return " " * diff
        elif column(text, first.start) == 0:
            for _, v in mapping.value:
                if v.kind == MAP and not v.style and v.value:
                    diff = column(text, v.value[0][0].start)
                    if diff > 0:
                        return " " * diff
    return " " * DEFAULT_STEP


def _insert_pair(
    ctx: _Ctx, mapping: Node, parent_key: Node | None, levels: list[str], step: str | None = None
) -> Edit:
    text = ctx.text
    if mapping.style:  # flow mapping
        if not mapping.value:
            close = mapping.end - 1
            if text[close] != "}":
                raise NodeError("cannot locate the closing '}' of this mapping", mapping.start)
            return Edit(close, close, ctx.flow_value(levels))
        last = mapping.value[-1][1]
        if last.end <= last.start:
            raise NodeError(
                "cannot add the annotation after an empty value in a flow mapping", last.start
            )
        return Edit(last.end, last.end, ", " + ctx.flow_value(levels))
    first = mapping.value[0][0]
    ls = line_start(text, first.start)
    indent = text[ls : first.start]
    if indent.strip(" "):
        raise NodeError(
            "cannot add the annotation: this mapping's first key does not start its line",
            first.start,
        )
    nl = newline_at(text, first.start, ctx.default_nl)
    step = step or _step(text, mapping, parent_key)
    return Edit(ls, ls, ctx.block_lines(levels, indent, step, nl) + nl)


def _fill_null(
    ctx: _Ctx, parent: Node, key_node: Node, value: Node, levels: list[str], step: str
) -> Edit:
    """``annotations:`` / ``metadata: null`` -> write the missing levels as its value."""
    text = ctx.text
    colon = _colon_after(text, key_node)
    explicit = value.end > value.start
    if parent.style:  # flow parent: write a flow value
        if explicit:
            return Edit(value.start, value.end, "{" + ctx.flow_value(levels) + "}")
        return Edit(colon + 1, colon + 1, " {" + ctx.flow_value(levels) + "}")
    nl_pos = text.find("\n", colon)
    line_end = len(text) if nl_pos < 0 else (nl_pos - 1 if text[nl_pos - 1] == "\r" else nl_pos)
    if explicit and not (colon < value.start and value.end <= line_end):
        raise NodeError("cannot add the annotation: null value not on its key's line", value.start)
    rest_from = value.end if explicit else colon + 1
    rest = text[rest_from:line_end]
    if rest.strip() and not rest.strip().startswith("#"):
        raise NodeError("cannot add the annotation: unexpected text after this key", key_node.start)
    nl = newline_at(text, colon, ctx.default_nl)
    indent = " " * column(text, key_node.start) + step
    body = ctx.block_lines(levels, indent, step, nl)
    return Edit(colon + 1, line_end, rest.rstrip(" \t") + nl + body)


ANNOTATIONS = ("metadata", "annotations")  # where a pod template's annotations are


def annotation_edit(
    text: str,
    target: Node,
    target_key: Node | None,
    key: str,
    value: str,
    default_nl: str,
    level: tuple[str, ...] = ANNOTATIONS,
) -> Edit | None:
    """The edit that makes ``target.<level>[key] == value``; None if it already is.

    ``target`` is the pod template mapping (or a bare Pod, or an operator resource's
    ``spec``), ``target_key`` the key node it hangs under (None for a document root),
    ``level`` the mappings below it that hold the annotations (``metadata.annotations``;
    ``podMetadata.annotations`` for the Prometheus operator's resources).
    """
    edits = annotations_edits(text, target, target_key, {key: value}, default_nl, level=level)
    return edits[0] if edits else None


def annotations_edits(
    text: str,
    target: Node,
    target_key: Node | None,
    values: dict[str, str],
    default_nl: str,
    what: str = "the pod template",
    any_style: bool = False,
    level: tuple[str, ...] = ANNOTATIONS,
) -> list[Edit]:
    """The edits that make ``target.<level>`` hold every key of ``values`` (double-quoted
    strings): one insertion for the keys it lacks, a replacement for each that holds
    another value (``any_style``: or the same value unquoted). The deepest existing
    mapping on the way decides: missing levels are inserted, null ones filled."""
    ctx = _Ctx(text, [(k, _q(v)) for k, v in values.items()], default_nl)
    _check_owned(target, what)
    _check_map(target, what)
    step = _step(text, target, target_key)
    ann, akey = target, target_key
    for depth, name in enumerate(level):
        pair = own(ann, name)
        if pair is None:
            if not ann.value and not ann.style:
                empty = f"an empty {what}" if depth == 0 else f"empty {level[depth - 1]}"
                raise NodeError(f"cannot add the annotation to {empty}", ann.start)
            return [_insert_pair(ctx, ann, akey, list(level[depth:]), step)]
        k, v = pair
        _check_owned(v, name)
        if v.kind == SCALAR and v.is_null:
            return [_fill_null(ctx, ann, k, v, list(level[depth + 1 :]), step)]
        _check_map(v, name)
        ann, akey = v, k
    edits: list[Edit] = []
    missing = []
    for key, value in values.items():
        pair = own(ann, key)
        if pair is None:
            missing.append((key, _q(value)))
            continue
        if any_style and pair[1].kind == SCALAR and pair[1].value == value and not pair[1].tag:
            continue
        edit = _replace_value(text, key, value, None, *pair)
        if edit is not None:
            edits.append(edit)
    if missing:  # (``ann`` has entries or is a flow mapping: YAML has no empty block one)
        edits.append(_insert_pair(_Ctx(text, missing, default_nl), ann, akey, [], step))
    return edits


def pair_edit(text: str, mapping: Node, key: str, plain: str, default_nl: str) -> Edit | None:
    """The edit that makes ``mapping[key]`` the plain scalar ``plain`` (``immutable:
    true``): its value replaced, or the pair inserted before ``metadata`` (else as the
    mapping's first entry)."""
    _check_owned(mapping, "the object")
    _check_map(mapping, "the object")
    pair = own(mapping, key)
    if pair is not None:
        value = pair[1]
        if value.kind == SCALAR and value.style is None and value.tag is None:
            now = str(value.value)
            if now == plain or plain_bool(now) is plain_bool(plain) is True:
                return None  # already so (``yes`` and ``True`` are true to Kubernetes)
        return _replace_value(text, key, plain, plain, *pair)
    meta = own(mapping, "metadata")
    if meta is not None and not mapping.style:  # after apiVersion and kind, where it reads
        ls = line_start(text, meta[0].start)
        indent = text[ls : meta[0].start]
        if not indent.strip(" "):
            nl = newline_at(text, meta[0].start, default_nl)
            return Edit(ls, ls, f"{indent}{key}: {plain}{nl}")
    return _insert_pair(_Ctx(text, [(key, plain)], default_nl), mapping, None, [])


def _replace_value(
    text: str, key: str, value: str, plain: str | None, k: Node, v: Node
) -> Edit | None:
    """Our key exists: its value scalar becomes ``value``, double-quoted (or ``plain``,
    written as is); None if it already is."""
    if k.anchor is not None or k.tag is not None:  # (the self-check reads our key plain)
        raise NodeError(
            f"cannot replace the value of {key!r}: its key is anchored or tagged; write the "
            "key without them",
            k.start,
        )
    if v.kind == ALIAS or v.anchor is not None or (v.tag not in (None, _STR_TAG)):
        raise NodeError(
            f"cannot replace the value of {key!r}: it is an alias, anchored or tagged", v.start
        )
    if v.kind != SCALAR:
        raise NodeError(f"annotation {key!r} is not a string", v.start)
    if v.style in ("|", ">"):
        raise NodeError(
            f"cannot replace the block scalar value of {key!r}; write it as a quoted string",
            v.start,
        )
    if v.value == value and (v.style is None) == (plain is not None):
        return None
    written = plain if plain is not None else _q(value)
    if v.end <= v.start:  # empty value: write after the colon
        colon = _colon_after(text, k)
        return Edit(colon + 1, colon + 1, " " + written)
    return Edit(v.start, v.end, written)


def apply_edits(text: str, edits: list[Edit], base: int = 0) -> str:
    """Splice non-overlapping edits (absolute offsets; ``text`` starts at ``base``)."""
    pieces = []
    pos = 0
    for e in sorted(edits, key=lambda e: (e.start, e.end)):
        start, end = e.start - base, e.end - base
        if start < pos:
            raise AssertionError("overlapping edits")
        pieces.append(text[pos:start])
        pieces.append(e.text)
        pos = end
    pieces.append(text[pos:])
    return "".join(pieces)

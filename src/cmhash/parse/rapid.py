"""The C++ read path: rapidyaml parses a document, and the same tree events.py builds
from libyaml is built from rapidyaml's node table, or None when this path cannot be
sure (libyaml then reads the document, as it always did).

rapidyaml (PyPI ``rapidyaml``, module ``ryml``) parses in C++ about 20x faster than
libyaml hands its events to Python, but its Python binding costs ~0.3 us a call, more
than a libyaml event. So the tree's node table is read in one block: rapidyaml 0.15
keeps it as an array of ``NodeData`` (type; key and value, each as tag, scalar and
anchor views; parent, first and last child, next and previous sibling), 18 machine
words a node. ``_layout_ok`` checks that layout against the binding's own accessors
once per process; any other layout turns this path off.

What libyaml would say is rebuilt from the text, never guessed:

* character offsets: a view's address minus the buffer's (documents are ASCII, so a
  byte is a character); a quoted scalar spans its quotes, a block scalar its header
  to the line where its indentation ends; a block collection ends where the next
  token starts (libyaml's BLOCK-END), a flow one after its bracket; an empty value
  sits right after its ``:``;
* values: a plain or quoted scalar must read as its own text, or as rapidyaml's
  unescaping of a one-line quoted scalar; a block scalar's value is computed here and
  must equal rapidyaml's.

Anything else goes to libyaml: non-ASCII text, tabs, CRs, directives, anchors,
aliases, tags, complex keys, multi-line plain or quoted scalars, block scalars with
indicators or odd blank lines, empty values outside a block mapping, keys of a
mapping that do not share a column, a parse error, or a position that does not check
out. ``tests/test_rapid.py`` compares both trees node by node on the corpus, the
golden cases, the bad-input catalogue and generated documents.
"""

from __future__ import annotations

import ctypes
import os
import re
from typing import Any, NamedTuple

from cmhash.parse.events import Roots
from cmhash.parse.limits import MAX_DEPTH, MAX_SCALAR
from cmhash.parse.tree import MAP, SCALAR, SEQ, Node

MIN_INPUT = 1 << 20  # below this, importing rapidyaml costs more than it saves
_WORDS = 18  # machine words in one rapidyaml 0.15 NodeData
_NONE = (1 << 64) - 1  # ryml.NONE: no such node
_module: Any = False  # not tried yet
_layout: bool | None = None


def rapidyaml() -> Any:
    """The ``ryml`` module, or None when it is not installed (or turned off)."""
    global _module
    if os.environ.get("CMHASH_RAPIDYAML") == "0":
        return None
    if _module is False:
        try:
            import ryml

            _module = ryml
        except ImportError:
            _module = None
    return _module


def wanted(total_bytes: int) -> bool:
    """Whether the C++ paths (this reader, write/cverify.py) serve an input of this
    size: from 1 MiB by default, always with ``CMHASH_RAPIDYAML=1``, never with ``0``."""
    setting = os.environ.get("CMHASH_RAPIDYAML")
    if setting == "0":
        return False
    if setting != "1" and total_bytes < MIN_INPUT:
        return False
    return rapidyaml() is not None


class quiet:
    """Silence file descriptor 2 around a rapidyaml call: on a parse error it prints
    its own message there, which is not ours to show (and may point into a Secret)."""

    _null = -1
    _saved = -1

    def __enter__(self) -> None:
        if quiet._null < 0:
            quiet._null = os.open(os.devnull, os.O_WRONLY)
        quiet._saved = os.dup(2)
        os.dup2(quiet._null, 2)

    def __exit__(self, *exc: object) -> None:
        os.dup2(quiet._saved, 2)
        os.close(quiet._saved)


# the NodeData words this path reads: type, key view (address, length), value view
# (address, length), first child, next sibling
_FIELDS = (0, 3, 4, 9, 10, 14, 16)


class _Table(NamedTuple):
    """The node table, one list per field, indexed by node id."""

    type: list[int]
    key: list[int]
    key_len: list[int]
    val: list[int]
    val_len: list[int]
    first_child: list[int]
    next_sibling: list[int]


_view = ctypes.pythonapi.PyMemoryView_FromMemory  # a view of C memory, no copy, no new type
_view.restype = ctypes.py_object
_view.argtypes = (ctypes.c_void_p, ctypes.c_ssize_t, ctypes.c_int)
_READ_ONLY = 0x100  # PyBUF_READ


def _words(tree: Any) -> memoryview | None:
    """The tree's node table as machine words, in place (valid while the tree lives)."""
    size = tree.size()
    nodes = ctypes.c_void_p.from_address(int(tree.this)).value  # Tree::m_buf, the 1st member
    if not nodes or size <= 0:
        return None
    view: memoryview = _view(nodes, 8 * _WORDS * size, _READ_ONLY)
    return view.cast("Q")


def _table(tree: Any) -> _Table:
    """The fields this path reads, copied out in one strided pass each."""
    words = _words(tree)
    if words is None:
        return _Table([], [], [], [], [], [], [])
    return _Table(*(words[f::_WORDS].tolist() for f in _FIELDS))


def _address(buf: bytearray) -> int:
    return ctypes.addressof(ctypes.c_char.from_buffer(buf))


def _layout_ok(ryml: Any) -> bool:
    """Whether the node table reads as the binding itself reads it (types, views,
    links), on a document with every kind of node this path takes."""
    sample = b"a: 1\nb: [x, 'y']\nc:\n  d: |\n    z\n  e:\n  - f\n"
    buf = bytearray(sample)
    try:
        tree = ryml.parse_in_place(buf)
        all_words = _words(tree)
        if all_words is None:
            return False
        words = all_words.tolist()
        base = _address(buf)
        table = _table(tree)
        for i in range(tree.size()):
            w = words[i * _WORDS : (i + 1) * _WORDS]
            if [column[i] for column in table] != [w[f] for f in _FIELDS]:
                return False
            if w[0] != tree.type(i):
                return False
            for has, view, ptr in ((tree.has_key, tree.key, 3), (tree.has_val, tree.val, 9)):
                if (
                    has(i)
                    and w[ptr]
                    and bytes(view(i)) != bytes(buf[w[ptr] - base :][: w[ptr + 1]])
                ):
                    return False
            links = (tree.parent, tree.first_child, tree.last_child, tree.next_sibling)
            if [f(i) for f in links] != w[13:17]:
                return False
        return bool(tree.size() > 0)
    except Exception:  # any surprise: this path stays off
        return False


def available() -> Any:
    """The ``ryml`` module when this path can be used, else None."""
    global _layout
    ryml = rapidyaml()
    if ryml is None:
        return None
    if _layout is None:
        _layout = _layout_ok(ryml)
        if _layout:
            _Build.configure(ryml)
    return ryml if _layout else None


# What sends a document to libyaml before any parsing (see the module docstring); each
# pattern runs only when its character is in the text at all.
_PROPERTY = re.compile(r"(?:^|(?<=[\s\[{,]))[&*!][^\s,\[\]{}\"']", re.MULTILINE)
_COMPLEX_KEY = re.compile(r"(?:^|(?<=\s))\?(?:\s|$)", re.MULTILINE)
_ITEM_BLOCK = re.compile(r"^ *- *[|>]", re.MULTILINE)


_AFTER_END = re.compile(r"^\.\.\.(?:[ \n].*)?\n(?:[ ]*(?:#.*)?\n)*[ ]*[^\s#]", re.MULTILINE)


def _unsure_text(text: str) -> bool:
    if not text.isascii() or "\t" in text or "\r" in text:
        return True
    if ("\n..." in text or text.startswith("...")) and _AFTER_END.search(text):
        return True  # content after a document end marker
    if text.startswith("%") or "\n%" in text:
        return True
    if ("&" in text or "*" in text or "!" in text) and _PROPERTY.search(text):
        return True
    if "?" in text and _COMPLEX_KEY.search(text):
        return True
    return ("- |" in text or "- >" in text or "-|" in text or "->" in text) and bool(
        _ITEM_BLOCK.search(text)
    )


class _Unsure(Exception):
    """This document goes to libyaml."""


def parse_fast(text: str, base: int) -> Roots | None:
    """The document's root (one block mapping), as events.py would build it from
    libyaml, offsets shifted by ``base``; None when libyaml must read it."""
    if _unsure_text(text):
        return None
    ryml = available()
    if ryml is None:
        return None
    buf = bytearray(text.encode("ascii"))
    try:
        with quiet():
            tree = ryml.parse_in_place(buf)
    except Exception:  # a parse error: libyaml says what it is
        return None
    table = _table(tree)
    addr = _address(buf)
    del tree
    try:
        root = _Build(text, buf.decode("latin-1"), table, addr, base).document()
    except (_Unsure, IndexError):
        return None
    roots = Roots()
    roots.append(root)
    return roots


_BITS = (  # rapidyaml's node type bits this path reads
    "MAP",
    "SEQ",
    "STREAM",
    "FLOW_SL",
    "FLOW_ML",
    "VALNIL",
    "VAL_DQUO",
    "VAL_SQUO",
    "VAL_LITERAL",
    "VAL_FOLDED",
    "KEY_DQUO",
    "KEY_SQUO",
    "KEY_PLAIN",
    "KEY_LITERAL",
    "KEY_FOLDED",
    "KEYREF",
    "VALREF",
    "KEYANCH",
    "VALANCH",
    "KEYTAG",
    "VALTAG",
    "KEYNIL",
    "KEY",
    "VAL",
    "VAL_PLAIN",
)
_BLOCK_HEADER = re.compile(r"([|>])(-?) *(?:#.*)?$")


class _Build:
    """One document's tree from the node table; raises _Unsure at the first doubt."""

    # rapidyaml's node type bits (configure)
    map = seq = stream = flow = valnil = dquo = squo = literal = folded = 0
    kdquo = ksquo = kplain = kblock = unsure = both_plain = plain_val = 0

    def __init__(self, text: str, filtered: str, table: _Table, addr: int, base: int) -> None:
        self.text = text
        self.filtered = filtered  # the buffer after parsing: unescaped values in place
        self.ty, self.kp, self.kl, self.vp, self.vl, self.fc, self.nx = table
        self.addr = addr
        self.base = base
        # nothing was unescaped, folded or dedented: every scalar reads as its own text
        self.verbatim = filtered == text

    @classmethod
    def configure(cls, ryml: Any) -> None:
        """rapidyaml's node type bits, read from the module once."""
        bit = {name: int(getattr(ryml, name)) for name in _BITS}
        cls.map, cls.seq, cls.stream = bit["MAP"], bit["SEQ"], bit["STREAM"]
        cls.flow = bit["FLOW_SL"] | bit["FLOW_ML"]
        cls.valnil = bit["VALNIL"]
        cls.dquo, cls.squo = bit["VAL_DQUO"], bit["VAL_SQUO"]
        cls.literal, cls.folded = bit["VAL_LITERAL"], bit["VAL_FOLDED"]
        cls.kdquo, cls.ksquo = bit["KEY_DQUO"], bit["KEY_SQUO"]
        cls.kplain = bit["KEY_PLAIN"]
        cls.kblock = bit["KEY_LITERAL"] | bit["KEY_FOLDED"]
        cls.unsure = 0
        for name in ("KEYREF", "VALREF", "KEYANCH", "VALANCH", "KEYTAG", "VALTAG", "KEYNIL"):
            cls.unsure |= bit[name]
        cls.both_plain = bit["KEY"] | bit["VAL"] | bit["KEY_PLAIN"] | bit["VAL_PLAIN"]
        cls.plain_val = bit["VAL"] | bit["VAL_PLAIN"]

    # ------------------------------------------------------------ the document

    def document(self) -> Node:
        ty, fc, root = self.ty, self.fc, 0
        if not ty:
            raise _Unsure
        if ty[0] & self.stream == self.stream:  # (its bits include SEQ's)
            first = fc[0]
            if first == _NONE or self.nx[first] != _NONE:
                raise _Unsure  # no document, or several
            root = first
        t = ty[root]
        if not t & self.map or t & self.flow or fc[root] == _NONE:
            raise _Unsure  # only a block mapping with content
        node = self.mapping(root, 0, False)
        end = node.end - self.base
        if end != len(self.text) and not self.text.startswith("...", end):
            raise _Unsure
        return node

    # ------------------------------------------------------------ collections

    def mapping(self, i: int, depth: int, in_flow: bool) -> Node:
        if depth >= MAX_DEPTH:
            raise _Unsure
        text, base, addr, n = self.text, self.base, self.addr, len(self.text)
        ty, kp, kl, vp, vl, fc, nx = self.ty, self.kp, self.kl, self.vp, self.vl, self.fc, self.nx
        flow = bool(ty[i] & self.flow)
        both_plain = self.both_plain if self.verbatim and not (flow or in_flow) else -1
        pairs: list[tuple[Node, Node]] = []
        child = fc[i]
        column = -1
        while child != _NONE:
            if ty[child] == both_plain:  # the common case, inline: `key: value`, both plain
                ka, kn, va, vn = kp[child] - addr, kl[child], vp[child] - addr, vl[child]
                if not (0 <= ka < ka + kn < va < va + vn < n):
                    raise _Unsure
                if (
                    text[ka] in _INDICATORS
                    or text[va] in _INDICATORS
                    or text[ka + kn] != ":"
                    or text[va + vn] != "\n"
                ):  # anything but `key: value` and a line break: every rule checked
                    self.plain(ka, kn, True, False)
                    self.plain(va, vn, False, False)
                key = Node(SCALAR, base + ka, base + ka + kn, text[ka : ka + kn], None, None, None)
                value = Node(
                    SCALAR, base + va, base + va + vn, text[va : va + vn], None, None, None
                )
            else:
                key = self.key(child, flow or in_flow)
                value = self.value(child, key, depth + 1, flow or in_flow)
            if not flow:
                at = key.start - base
                col = at - text.rfind("\n", 0, at) - 1
                if column < 0:
                    column = col
                elif col != column:
                    raise _Unsure  # libyaml would refuse this indentation
            pairs.append((key, value))
            child = nx[child]
        if flow:
            start, end = self.brackets(i, pairs[0][0] if pairs else None, pairs, "{}")
        else:
            start = pairs[0][0].start - base
            end = self.next_token(pairs[-1][1].end - base)
        return Node(MAP, base + start, base + end, pairs, flow, None, None)

    def sequence(self, i: int, depth: int, in_flow: bool) -> Node:
        if depth >= MAX_DEPTH:
            raise _Unsure
        text, base, addr, n = self.text, self.base, self.addr, len(self.text)
        ty, vp, vl, fc, nx = self.ty, self.vp, self.vl, self.fc, self.nx
        flow = bool(ty[i] & self.flow)
        plain = self.plain_val if self.verbatim and not (flow or in_flow) else -1
        values: list[Node] = []
        child = fc[i]
        while child != _NONE:
            if ty[child] == plain:
                va, vn = vp[child] - addr, vl[child]
                if not 0 <= va < va + vn < n:
                    raise _Unsure
                if text[va] in _INDICATORS or text[va + vn] != "\n":
                    self.plain(va, vn, False, False)
                values.append(
                    Node(SCALAR, base + va, base + va + vn, text[va : va + vn], None, None, None)
                )
            else:
                values.append(self.value(child, None, depth + 1, flow or in_flow))
            child = nx[child]
        if flow:
            start, end = self.brackets(i, values[0] if values else None, values, "[]")
        else:
            if not values:
                raise _Unsure
            dash = vp[i] - addr  # rapidyaml points at the first "-": checked
            if not 0 <= dash < n - 1 or text[dash] != "-" or text[dash + 1] not in " \n":
                raise _Unsure
            line = text[text.rfind("\n", 0, dash) + 1 : dash]
            if line.replace("- ", "  ").strip(" "):  # only indentation, or "- " of outer items
                raise _Unsure
            if self.next_token(dash + 1) != values[0].start - base:
                raise _Unsure
            start, end = dash, self.next_token(values[-1].end - base)
        return Node(SEQ, base + start, base + end, values, flow, None, None)

    def brackets(
        self, i: int, first: Node | None, children: list[Any], pair: str
    ) -> tuple[int, int]:
        """A flow collection's start (its opening bracket) and end (after the closing one)."""
        text = self.text
        start = self.vp[i] - self.addr  # rapidyaml points at the bracket: checked
        if not 0 <= start < len(text) or text[start] != pair[0]:
            raise _Unsure
        if first is not None and _skip_blank(text, start + 1) != first.start - self.base:
            raise _Unsure  # a comment, or anything else, before the first entry
        if children:
            last = children[-1]
            last_end = (last[1] if isinstance(last, tuple) else last).end - self.base
            pos = _skip_blank(text, last_end)
            if text[pos] == ",":
                pos = _skip_blank(text, pos + 1)
        else:
            pos = _skip_blank(text, start + 1)
        if text[pos] != pair[1]:
            raise _Unsure
        return start, pos + 1

    def next_token(self, pos: int) -> int:
        """Where libyaml's next token starts: past blanks, line breaks and comments."""
        text, n = self.text, len(self.text)
        while pos < n:
            c = text[pos]
            if c == " " or c == "\n":
                pos += 1
            elif c == "#" and (pos == 0 or text[pos - 1] in " \n"):
                eol = text.find("\n", pos)
                pos = n if eol < 0 else eol
            else:
                break
        return pos

    # ------------------------------------------------------------ nodes

    def value(self, i: int, key: Node | None, depth: int, in_flow: bool) -> Node:
        t = self.ty[i]
        if t & self.unsure:
            raise _Unsure
        if t & self.map:
            return self.mapping(i, depth, in_flow)
        if t & self.seq:
            return self.sequence(i, depth, in_flow)
        if t & self.valnil:
            if key is None or in_flow:
                raise _Unsure  # libyaml's position for it is not worth the doubt
            at = _colon(self.text, key.end - self.base) + 1
            self.after(at, False, False)
            return Node(SCALAR, self.base + at, self.base + at, "", None, None, None)
        ptr, length = self.vp[i], self.vl[i]
        if t & (self.literal | self.folded):
            return self.block_scalar(ptr, length, key, bool(t & self.folded))
        style = '"' if t & self.dquo else "'" if t & self.squo else None
        return self.scalar(ptr, length, style, False, in_flow)

    def key(self, i: int, in_flow: bool) -> Node:
        t = self.ty[i]
        if t & (self.unsure | self.kblock):
            raise _Unsure
        style = '"' if t & self.kdquo else "'" if t & self.ksquo else None
        return self.scalar(self.kp[i], self.kl[i], style, True, in_flow)

    def plain(self, at: int, length: int, is_key: bool, in_flow: bool) -> None:
        """A plain scalar libyaml reads as rapidyaml did (rapidyaml is more lenient)."""
        text = self.text
        c = text[at]
        if c in _INDICATORS and not (c == "-" and length > 1 and text[at + 1] not in " \n"):
            raise _Unsure
        if text[at + length - 1] == " ":
            raise _Unsure
        if in_flow and any(x in text[at : at + length] for x in _NOT_IN_FLOW):
            raise _Unsure
        self.after(at + length, is_key, in_flow)

    def after(self, end: int, is_key: bool, in_flow: bool) -> None:
        """What may follow a scalar: a ':' after a key (then a blank), a line break or a
        comment, and in flow ',', ']' or '}'."""
        text, n = self.text, len(self.text)
        pos = end
        while pos < n and text[pos] == " ":
            pos += 1
        c = text[pos] if pos < n else "\n"
        if is_key:
            if c != ":" or (pos + 1 < n and text[pos + 1] not in " \n" and not in_flow):
                raise _Unsure
            return
        if c == "\n" or (c == "#" and pos > end) or (in_flow and c in ",]}"):
            return
        raise _Unsure

    def scalar(self, ptr: int, length: int, style: str | None, is_key: bool, in_flow: bool) -> Node:
        text, base = self.text, self.base
        at = ptr - self.addr
        if not 0 <= at <= len(text) or length > MAX_SCALAR:
            raise _Unsure
        value = self.filtered[at : at + length]
        if style is None:
            if text[at : at + length] != value or "\n" in value or not length:
                raise _Unsure  # folded over lines (or empty): libyaml decides
            self.plain(at, length, is_key, in_flow)
            return Node(SCALAR, base + at, base + at + length, value, None, None, None)
        start = at - 1
        if start < 0 or text[start] != style:
            raise _Unsure
        end = _closing(text, at, style)
        self.after(end + 1, is_key, in_flow)
        if not value.isascii():  # rapidyaml unescaped it into UTF-8 bytes
            value = value.encode("latin-1").decode("utf-8")
        return Node(SCALAR, base + start, base + end + 1, value, style, None, None)

    def block_scalar(self, ptr: int, length: int, key: Node | None, folded: bool) -> Node:
        """``key: |`` / ``|-`` / ``>`` / ``>-``: the header's position, the lines whose
        indentation keeps them in the scalar, and the value computed here, which must be
        rapidyaml's too."""
        text, base = self.text, self.base
        if key is None:
            raise _Unsure
        kstart = key.start - base
        indicator = _skip_spaces(text, _colon(text, key.end - base) + 1)
        eol = text.find("\n", indicator)
        if eol < 0:
            raise _Unsure
        header = _BLOCK_HEADER.match(text, indicator, eol)
        if header is None:
            raise _Unsure
        parent = kstart - text.rfind("\n", 0, kstart) - 1
        lines, end = _block_lines(text, eol + 1, parent)
        value = _literal(lines) if not folded else _folded(lines)
        if header.group(2) != "-":
            value += "\n"
        at = ptr - self.addr
        if not 0 <= at <= len(text) or self.filtered[at : at + length] != value:
            raise _Unsure
        style = ">" if folded else "|"
        return Node(SCALAR, base + indicator, base + end, value, style, None, None)


# characters that may not start a plain scalar ("-" may, before a non-blank)
_INDICATORS = frozenset("-?:,[]{}#&*!|>'\"%@` \n")
_NOT_IN_FLOW = (":", "?", "#", ",", "[", "]", "{", "}")


def _skip_blank(text: str, pos: int) -> int:
    n = len(text)
    while pos < n and text[pos] in " \n":
        pos += 1
    if pos >= n:
        raise _Unsure
    return pos


def _skip_spaces(text: str, pos: int) -> int:
    while pos < len(text) and text[pos] == " ":
        pos += 1
    return pos


def _colon(text: str, pos: int) -> int:
    pos = _skip_spaces(text, pos)
    if pos >= len(text) or text[pos] != ":":
        raise _Unsure
    return pos


def _closing(text: str, at: int, quote: str) -> int:
    """The closing quote of a one-line quoted scalar whose content starts at ``at``."""
    i, n = at, len(text)
    while i < n:
        c = text[i]
        if c == "\n":
            raise _Unsure  # a multi-line quoted scalar: libyaml folds it
        if quote == '"' and c == "\\":
            i += 2
            continue
        if c == quote:
            if quote == "'" and text.startswith("'", i + 1):
                i += 2
                continue
            return i
        i += 1
    raise _Unsure


def _block_lines(text: str, start: int, parent: int) -> tuple[list[str], int]:
    """A block scalar's content lines (indentation removed, "" for empty lines) and
    where it ends: the start of the first line indented less (blank lines at the end
    belong to it), or the end of the text."""
    lines: list[str] = []
    indent = -1
    pos, n = start, len(text)
    while pos < n:
        eol = text.find("\n", pos)
        if eol < 0:
            raise _Unsure  # a last line without a line break: not worth the doubt
        line = text[pos:eol]
        body = line.lstrip(" ")
        spaces = len(line) - len(body)
        if not body:
            if spaces and (indent < 0 or spaces > indent):
                raise _Unsure  # spaces that could be content, or an error
            lines.append("")
        else:
            if indent < 0:
                if spaces <= parent:
                    raise _Unsure  # an empty block scalar
                indent = spaces
            if spaces < indent:
                break
            lines.append(line[indent:])
        pos = eol + 1
    if indent < 0:
        raise _Unsure
    while lines and not lines[-1]:
        lines.pop()
    return lines, pos


def _literal(lines: list[str]) -> str:
    return "\n".join(lines)


def _folded(lines: list[str]) -> str:
    """Folding without more-indented lines: one line break between two lines becomes a
    space, each empty line in between one line break."""
    out: list[str] = []
    breaks = 0
    for line in lines:
        if line.startswith(" "):
            raise _Unsure  # a more-indented line keeps its breaks: libyaml decides
        if not line:
            breaks += 1
            continue
        if out:
            out.append("\n" * breaks if breaks else " ")
        out.append(line)
        breaks = 0
    return "".join(out)

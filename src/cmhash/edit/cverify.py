"""The self-check in C++ (rapidyaml), for big inputs without the C tree builder: the
same promise as verify.py, an independent re-parse of every edited document.

Both documents are parsed by rapidyaml; our annotation (the planned value,
double-quoted) is removed from the edited tree with the levels the edit created, an
existing value under our key from the original; then rapidyaml emits both, keeping every
scalar's value and style, tags, anchors and aliases: equal texts mean nothing else
changed. Only plain cases take this path: one document holding one object, no anchors,
aliases or tags (rapidyaml and libyaml may read those differently), no ``metadata:`` or
``annotations:`` left null. Anything else, a parse error, or a difference, returns
``None`` and the Python verifier decides (its message is the one users see).

rapidyaml is optional (PyPI ``rapidyaml``, the ``fast`` extra): without it, or with
``CMHASH_RAPIDYAML=0``, every document takes the Python path. ``CMHASH_RAPIDYAML=1``
uses it for every input size (tests); by default only inputs of 1 MiB and more use it,
so a small chart does not pay its import.
"""

from __future__ import annotations

import os
import re
import signal
from typing import Any, ClassVar

from cmhash.knowledge.kinds import WorkloadKind
from cmhash.runtime.signals import HELD

MIN_INPUT = 1 << 20  # below this, importing rapidyaml costs more than it saves
_module: Any = False  # not tried yet


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
    """Whether the C++ self-check is used for an input of this size."""
    if os.environ.get("CMHASH_RAPIDYAML") != "1" and total_bytes < MIN_INPUT:
        return False
    return rapidyaml() is not None  # (None with CMHASH_RAPIDYAML=0)


# an anchor, alias or tag where a node starts (after a space, a line start or a flow
# indicator); a plain value that merely contains one sends the document to Python too
# (the pattern starts with the indicator and looks behind it, so the search jumps from one
# '&*!' to the next instead of trying an alternation at every character: 46 -> 7 µs on
# a CronJob whose schedule has '*'). Compiled by re's cache on first use: the C tree builder
# (native/_ctree.c) leaves this check to the installs without it.
_PROPERTY = r"[&*!](?<![^\s\[{,].)[^\s,\[\]{}\"']"


def _plain(text: str) -> bool:
    """No anchors, aliases or tags (conservative: when in doubt, Python decides)."""
    if "&" not in text and "*" not in text and "!" not in text:
        return True
    return re.search(_PROPERTY, text) is None


class quiet:
    """Silence file descriptor 2 around a rapidyaml call: on a parse error it prints its
    own message there, which is not ours to show (and may point into a Secret)."""

    _null = -1
    _saved = -1
    _mask: ClassVar[set[int | signal.Signals]] = set()

    def __enter__(self) -> None:
        if quiet._null < 0:
            quiet._null = os.open(os.devnull, os.O_WRONLY)
        # signals wait until stderr is back: "cmhash: terminated" must reach the user
        quiet._mask = signal.pthread_sigmask(signal.SIG_BLOCK, HELD)
        quiet._saved = os.dup(2)
        os.dup2(quiet._null, 2)

    def __exit__(self, *exc: object) -> None:
        os.dup2(quiet._saved, 2)
        os.close(quiet._saved)
        signal.pthread_sigmask(signal.SIG_SETMASK, quiet._mask)


def _root(tree: Any) -> int | None:
    root = tree.root_id()
    if tree.is_stream(root):
        if tree.num_children(root) != 1:
            return None
        root = tree.first_child(root)
    return root if tree.is_map(root) else None


def _child(ryml: Any, tree: Any, node: int | None, key: str) -> int | None:
    """The child of a mapping under ``key``; None if absent (never ryml.NONE)."""
    if node is None or not tree.is_map(node):
        return None
    child = tree.find_child(node, key.encode("utf-8"))
    return None if child == ryml.NONE else child


def _template(ryml: Any, tree: Any, kind: WorkloadKind) -> int | None:
    node = _root(tree)
    for step in kind.template_path:
        node = _child(ryml, tree, node, step)
    return node if node is not None and tree.is_map(node) else None


def _null(tree: Any, node: int | None) -> bool:
    return node is not None and not tree.is_container(node) and tree.val_is_null(node)


def verify(old_text: str, new_text: str, kind: WorkloadKind, key: str, value: str) -> bool | None:
    """True when the edited document is the original plus our annotation; None when this
    path cannot tell (the Python verifier then decides)."""
    ryml = rapidyaml()
    if ryml is None or not _plain(old_text) or kind.level != ("metadata", "annotations"):
        return None
    try:
        with quiet():
            old = ryml.parse_in_arena(old_text.encode("utf-8"))
            new = ryml.parse_in_arena(new_text.encode("utf-8"))
    except Exception:  # rapidyaml refuses what libyaml read: let Python decide
        return None
    old_t, new_t = _template(ryml, old, kind), _template(ryml, new, kind)
    if old_t is None or new_t is None:
        return None
    old_meta = _child(ryml, old, old_t, "metadata")
    old_ann = _child(ryml, old, old_meta, "annotations")
    if _null(old, old_meta) or _null(old, old_ann):
        return None
    new_meta = _child(ryml, new, new_t, "metadata")
    new_ann = _child(ryml, new, new_meta, "annotations")
    ours = _child(ryml, new, new_ann, key)
    if ours is None or bytes(new.val(ours)).decode("utf-8") != value or not new.is_val_dquo(ours):
        return None
    new.remove(ours)
    previous = _child(ryml, old, old_ann, key)
    if previous is not None:
        old.remove(previous)
    elif old_ann is None and new_ann is not None:
        if new.num_children(new_ann):
            return None
        new.remove(new_ann)
    if old_meta is None and new_meta is not None:
        if new.num_children(new_meta):
            return None
        new.remove(new_meta)
    try:  # (its emitter stops at 64 levels, cmhash's limit is higher: then Python decides)
        with quiet():
            return bool(ryml.emit_yaml(old) == ryml.emit_yaml(new)) or None
    except Exception:
        return None

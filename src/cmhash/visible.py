"""Text from the input made safe to print: control characters shown as escapes.

A name, key, value or path in a user's manifests may hold an ESC (terminal escape
sequences: colours, cursor moves, a rewritten title, OSC 8 links), a carriage return (a
line that overwrites itself), a BEL, other C0/C1 controls, or a bidirectional override
(U+202E and friends: text that reads differently from what it is, as in CVE-2021-42574
"Trojan Source"). Every human-facing output (text, Markdown, Mermaid, a user's template,
GitLab Code Quality descriptions, one-line messages) passes such text through ``visible``
first; JSON escapes C0 controls by itself and stays data.

An escaped character is written as Python writes it in a string literal: ``\\x1b``,
``\\r``, ``\\u202e``.
"""

from __future__ import annotations

import re
from typing import Any

# C0 (tab and newline apart), DEL, C1, the Unicode line and paragraph separators, and the
# bidirectional formatting characters (Unicode TR9: LRM, RLM, ALM, LRE..RLO, LRI..PDI)
_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069]")
_UNSAFE_LINES = re.compile("[\n\t]|" + _UNSAFE.pattern)
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _escape(m: re.Match[str]) -> str:
    ch = m.group()
    if ch in _NAMED:
        return _NAMED[ch]
    n = ord(ch)
    return f"\\x{n:02x}" if n < 0x100 else f"\\u{n:04x}"


def visible(text: str, lines: bool = False) -> str:
    """``text`` with control and bidi characters escaped; newlines and tabs too unless
    ``lines`` (a multi-line value shown as lines)."""
    pattern = _UNSAFE if lines else _UNSAFE_LINES
    return pattern.sub(_escape, text) if pattern.search(text) else text


# keys of the report whose string values are multi-line text (shown as lines)
MULTILINE = frozenset({"valueDiffs"})


def visible_data(value: Any, lines: bool = False) -> Any:
    """``value`` (plain data) with every string, dict keys too, made ``visible``; strings
    under a ``MULTILINE`` key keep their line breaks."""
    if isinstance(value, str):
        return visible(value, lines)
    if isinstance(value, dict):
        return {
            (visible(k) if isinstance(k, str) else k): visible_data(v, lines or k in MULTILINE)
            for k, v in value.items()
        }
    if isinstance(value, list | tuple):
        return [visible_data(v, lines) for v in value]
    return value

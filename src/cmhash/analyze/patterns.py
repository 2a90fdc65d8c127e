"""Reloader's reload-list patterns, read exactly as Reloader reads them.

Reloader compiles each comma-separated item of ``configmap.reloader.stakater.com/reload``
(and the Secret and SecretProviderClass lists) with Go's ``regexp.Compile("^" + item +
"$")`` and reloads when ``re.Match(name)`` holds (stakater/Reloader ``pkg/common/
common.go``, ``ShouldReload``). Go's ``regexp`` is RE2: linear time, POSIX classes
(``[[:alpha:]]``), ``\\z``, ``\\Q…\\E``, ``\\pL``, flags mid-pattern; no lookaround, no
backreferences, repeat counts up to 1000. So the anchors bind to the outer alternatives
only: ``web|db`` is ``^web|db$``, names starting with ``web`` or ending with ``db``.

cmhash uses Google's RE2 itself (PyPI ``google-re2``), not Python's ``re``: the same
syntax and the same refusals as Go, and no pattern can make a run backtrack; where the
two part, ``_go_refuses`` says. Many patterns are matched against many names through one
``re2.Set`` per (kind, namespace): each name is scanned once (``match_all``). RE2 is
imported when the first pattern is read (``_re2``): most runs hold no reload list, and
importing it is about 2 ms of a small chart's start-up.
"""

# No "from __future__ import annotations": typing compiles string NamedTuple fields at import

import functools
import re
from collections.abc import Iterable
from typing import Any, NamedTuple

# Where Go's regexp/syntax and RE2 (C++) part: \C (any byte) is RE2 only; a repeat count
# of 100,000,000 or more is "invalid repeat size" to Go (parseInt caps it at -1) while
# RE2 reads the whole brace as literal text.
_ANY_BYTE = "\\C (any byte) is not Go regexp syntax"
_BIG_REPEAT = r"\{([0-9]+)(?:,([0-9]*))?\}"  # (compiled by re's cache when a pattern has "{")


@functools.cache
def _re2() -> tuple[Any, Any]:
    """The ``re2`` module and the options every pattern is compiled with."""
    import re2

    options = re2.Options()
    options.log_errors = False  # RE2 would print its own copy of the error to stderr
    options.max_mem = 64 << 20  # the DFA's budget (default 8 MiB)
    return re2, options


class PatternError(ValueError):
    """A pattern RE2 (Go's regexp) refuses: ``reason`` in RE2's words."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def anchored(item: str) -> str:
    """The regular expression Reloader compiles for one list item."""
    return "^" + item + "$"


def _go_refuses(item: str) -> str | None:
    """What Go refuses and RE2 accepts (a scan outside \\Q…\\E and character classes)."""
    i = 0
    in_class = False
    while i < len(item):
        ch = item[i]
        if ch == "\\" and i + 1 < len(item):
            nxt = item[i + 1]
            if nxt == "Q" and not in_class:  # literal text up to \E (or the end)
                end = item.find("\\E", i + 2)
                i = len(item) if end < 0 else end + 2
                continue
            if nxt == "C":
                return _ANY_BYTE
            i += 2
            continue
        if in_class:
            if item.startswith("[:", i) and ":]" in item[i + 2 :]:
                i = item.index(":]", i + 2) + 2
                continue
            in_class = ch != "]"
            i += 1
            continue
        if ch == "[":
            in_class = True
            i += 1
            i += item.startswith("^", i)
            i += item.startswith("]", i)  # a "]" first in a class is literal
            continue
        if ch == "{":
            m = re.compile(_BIG_REPEAT).match(item, i)
            if m and any(n and n[0] != "0" and len(n) > 8 for n in m.groups()):
                return f"invalid repeat count {m.group(0)} (at most 1000)"
        i += 1
    return None


@functools.lru_cache(maxsize=4096)
def compile_item(item: str) -> Any:
    """One list item, compiled as Reloader compiles it; PatternError if RE2 refuses it."""
    refused = _go_refuses(item)
    if refused is not None:
        raise PatternError(refused)
    re2, options = _re2()
    try:
        return re2.compile(anchored(item), options)
    except re2.error as exc:
        reason = exc.args[0] if exc.args else str(exc)
        if isinstance(reason, bytes):
            reason = reason.decode("utf-8", "replace")
        raise PatternError(str(reason)) from None


@functools.lru_cache(maxsize=4096)
def check(item: str) -> None:
    """Raise PatternError when Reloader could not compile ``item``. RE2's parser alone
    decides (a Set's Add parses without compiling: a fifteenth of the time, and the map
    stage checks every item of every workload); what it refuses is compiled for RE2's
    reason."""
    refused = _go_refuses(item)
    if refused is not None:
        raise PatternError(refused)
    re2, options = _re2()
    if re2.Set.SearchSet(options)._set.Add(anchored(item).encode("utf-8")) < 0:
        compile_item(item)  # raises with the reason
        raise PatternError("refused by RE2's parser")  # (compiles, yet did not parse)


def matches(item: str, name: str) -> bool:
    """Whether Reloader's pattern ``item`` selects the object ``name``."""
    return compile_item(item).search(name) is not None


class _Batch(NamedTuple):
    items: list[str]
    regexps: Any  # the re2.Set, or None when it could not be built


def match_all(items: Iterable[str], names: Iterable[str]) -> dict[str, list[str]]:
    """Every item -> the names it selects (in the order given), in one pass over the
    names: RE2 Sets of the items. A name the Set cannot decide (its DFA ran out of
    memory: RE2 then reports no match at all, so an always-matching sentinel tells) is
    tried item by item."""
    unique = list(dict.fromkeys(items))
    out: dict[str, list[str]] = {item: [] for item in unique}
    for item in unique:
        check(item)  # refuse what RE2 refuses before building a Set
    batches = [_set(unique[i : i + _SET_SIZE]) for i in range(0, len(unique), _SET_SIZE)]
    for name in names:
        for batch in batches:
            hits = batch.regexps.Match(name) if batch.regexps is not None else None
            if not hits:  # the sentinel always matches: no hit at all: "could not tell"
                for item in batch.items:
                    if matches(item, name):
                        out[item].append(name)
                continue
            for i in hits:
                if i < len(batch.items):
                    out[batch.items[i]].append(name)
    return out


# patterns per Set: one Set of thousands of hostile patterns builds DFA states for their
# product (measured: 3,000 patterns, 10,000 names: 0.46 s in one Set, 0.05 s in Sets of 512)
_SET_SIZE = 512


def _set(items: list[str]) -> _Batch:
    re2, options = _re2()
    try:
        regexps = re2.Set.SearchSet(options)
        for item in items:
            regexps.Add(anchored(item))
        regexps.Add("(?s).*")  # the sentinel, index len(items)
        regexps.Compile()
    except re2.error:
        return _Batch(items, None)
    return _Batch(items, regexps)

"""report: what changed in each ConfigMap and Secret between OLD and NEW, and whether
kubectl apply will refuse it (an immutable object).

And the old and new value of each changed ConfigMap key, as a unified diff (``value_diffs``):
only ConfigMaps that are written in the input, never a Secret, never anything a Secret
source produces (its entries are the source's content fields). Bounded: a value longer
than ``MAX_LINES`` diff lines is cut, and so is a line longer than ``MAX_LINE``; a
report shows at most ``MAX_TOTAL`` lines of value diffs in all.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from typing import NamedTuple

from cmhash.model import ResourceId, TextEnum
from cmhash.plan.index import ConfigEntry


class Change(TextEnum):
    ADDED = "added"
    REMOVED = "removed"
    CHANGED = "changed"


ADDED, REMOVED, CHANGED = Change.ADDED, Change.REMOVED, Change.CHANGED


class Violation(TextEnum):
    """Why kubectl apply refuses a change to an immutable object."""

    DATA_CHANGED = "its data changed"
    IMMUTABLE_UNSET = "immutable cannot be unset"


DATA_CHANGED, IMMUTABLE_UNSET = Violation.DATA_CHANGED, Violation.IMMUTABLE_UNSET


class ConfigChange(NamedTuple):
    key: ResourceId
    change: Change
    entry: ConfigEntry  # the NEW side's object; the OLD one when removed
    keys_added: tuple[str, ...]
    keys_removed: tuple[str, ...]
    keys_changed: tuple[str, ...]
    type_changed: bool
    immutable_violation: Violation | None  # why kubectl apply will refuse it

    @property
    def touched(self) -> frozenset[str]:
        return frozenset(self.keys_added + self.keys_removed + self.keys_changed)


def _diff_entries(
    old: Mapping[str, bytes], new: Mapping[str, bytes]
) -> tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]:
    if old == new:  # (most objects: one comparison, in C)
        return (), (), ()
    added = tuple(sorted(k for k in new if k not in old))
    removed = tuple(sorted(k for k in old if k not in new))
    changed = tuple(sorted(k for k in new if k in old and old[k] != new[k]))
    return added, removed, changed


def config_changes(
    old: Mapping[ResourceId, ConfigEntry], new: Mapping[ResourceId, ConfigEntry]
) -> list[ConfigChange]:
    out = []
    for key in sorted(set(old) | set(new)):
        o, n = old.get(key), new.get(key)
        before = o.info.content.entries if o is not None else {}
        after = n.info.content.entries if n is not None else {}
        added, removed, changed = _diff_entries(before, after)
        if o is None or n is None:  # every key added, or every key removed
            one, change = (n, ADDED) if o is None else (o, REMOVED)
            assert one is not None
            out.append(ConfigChange(key, change, one, added, removed, (), False, None))
            continue
        type_changed = o.info.content.secret_type != n.info.content.secret_type
        data_changed = bool(added or removed or changed or type_changed)
        violation = None
        if o.info.immutable and data_changed:
            violation = DATA_CHANGED
        elif o.info.immutable and not n.info.immutable:
            violation = IMMUTABLE_UNSET
        if data_changed or violation:
            out.append(
                ConfigChange(key, CHANGED, n, added, removed, changed, type_changed, violation)
            )
    return out


MAX_LINES = 40  # diff lines per key
MAX_LINE = 200  # characters per line
MAX_TOTAL = 400  # diff lines per report


def _text(value: bytes | None) -> list[str] | None:
    """The value's lines, or None for binary content."""
    if value is None:
        return []
    try:
        text = value.decode("utf-8")
    except UnicodeDecodeError:
        return None
    if "\0" in text:
        return None
    return text.split("\n")  # cut to MAX_LINE once masked (redact.py ``bound``)


def _diff(old: bytes | None, new: bytes | None) -> str:
    o, n = _text(old), _text(new)
    if o is None or n is None:
        size = (len(old) if old is not None else 0, len(new) if new is not None else 0)
        return f"(binary value: {size[0]} → {size[1]} bytes)"
    if old is None or new is None:  # an added or removed key: its lines, no hunk header
        lines = [f"+{ln}" for ln in n] if old is None else [f"-{ln}" for ln in o]
    elif len(o) == 1 and len(n) == 1:
        lines = [f"-{o[0]}", f"+{n[0]}"]  # one line each: no hunk header needed
    else:
        lines = list(difflib.unified_diff(o, n, lineterm="", n=2))[2:]  # no ---/+++
    if len(lines) > MAX_LINES:
        lines = [*lines[:MAX_LINES], f"… {len(lines) - MAX_LINES} more diff lines"]
    return "\n".join(lines)


def shows_values(entry: ConfigEntry | None) -> bool:
    """Whether this object's values may appear in a report: a ConfigMap written as one."""
    return (
        entry is not None
        and entry.info.kind == "ConfigMap"
        and entry.info.content.kind == "ConfigMap"
        and entry.info.content.source is None
    )


class DiffBudget:
    """The report's value-diff lines left, spent key by key. Once they are spent, one key
    says so and later keys are left out (their names stay in the configs table): a
    placeholder per key would grow a big change's report past a comment's size limit."""

    __slots__ = ("left", "noted")

    def __init__(self, left: int = MAX_TOTAL) -> None:
        self.left = left
        self.noted = False


NOT_SHOWN = "(not shown, nor any value after it: the report's limit of value diffs is reached)"


def value_diffs(
    change: ConfigChange, old: ConfigEntry | None, new: ConfigEntry | None, budget: DiffBudget
) -> dict[str, str]:
    """key -> its diff, for the added, removed and changed keys of a ConfigMap (empty
    for anything else). ``budget``: the report's remaining diff lines, spent here."""
    if not (shows_values(old) or old is None) or not (shows_values(new) or new is None):
        return {}
    if old is None and new is None:
        return {}
    before: Mapping[str, bytes] = old.info.content.entries if old is not None else {}
    after: Mapping[str, bytes] = new.info.content.entries if new is not None else {}
    out: dict[str, str] = {}
    for key in sorted(change.touched):
        if budget.left <= 0:
            if not budget.noted:
                out[key] = NOT_SHOWN
                budget.noted = True
            break
        text = _diff(before.get(key), after.get(key))
        budget.left -= text.count("\n") + 1
        out[key] = text
    return out

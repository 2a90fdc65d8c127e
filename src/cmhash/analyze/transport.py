"""How a forked worker's results cross the pipe to the parent (pool.py).

Packed by the C extension (``_cpack.c``) when it was compiled at install: pickle spends
about a microsecond and a half on each small object (a NamedTuple is rebuilt through its
Python ``__new__``, a slots record through a state dict), and a worker sends tens of
thousands of them. A result the packer does not take (an input error, something of a
type not registered here) is pickled, as is everything without the extension; the first
byte says which. The worker is a fork of the parent, so both hold the same registry."""

from __future__ import annotations

import enum
import functools
import pickle
from typing import Any

from cmhash.analyze.annotations import Spot
from cmhash.analyze.declared import Selection, Skipped
from cmhash.analyze.hashing import Content
from cmhash.analyze.jobs import JobRename
from cmhash.analyze.refs import Reference, SubPathMount
from cmhash.analyze.summaries import ConfigInfo, DocInfo, SkipReason, WorkloadInfo
from cmhash.analyze.versioned_sources import Producer
from cmhash.edit.splice import Edit
from cmhash.knowledge.compat import ReloaderView
from cmhash.knowledge.kinds import Policy, WorkloadKind
from cmhash.knowledge.podspec import Site
from cmhash.native.cext import optional
from cmhash.read.split import Chunk
from cmhash.record import Record

PACKED, PICKLED = b"c", b"p"

# what the map stage's summaries are made of (beyond str, int, bytes, None, bool,
# tuple, list, dict and frozenset)
CLASSES: tuple[type, ...] = (
    DocInfo,
    WorkloadInfo,
    ConfigInfo,
    Content,
    Chunk,
    Reference,
    Spot,
    Producer,
    SubPathMount,
    Edit,
    Selection,
    ReloaderView,
    Skipped,
    WorkloadKind,
    Site,
    JobRename,
    Policy,
    SkipReason,
)

HOW_TUPLE, HOW_RECORD, HOW_ENUM = 0, 1, 2
Registry = tuple[dict[type, int], tuple[tuple[type, int, Any], ...]]


def _entry(cls: type) -> tuple[type, int, Any]:
    """How the packer writes ``cls``: a NamedTuple by its items, a record by its slots in
    order, an enum by its member's position."""
    if issubclass(cls, enum.Enum):
        return cls, HOW_ENUM, tuple(cls)
    if cls.__dictoffset__:
        raise TypeError(f"{cls.__name__} has a __dict__: the packer would lose it")
    if issubclass(cls, tuple):  # (Python allows no slots of its own on a tuple)
        return cls, HOW_TUPLE, None
    if issubclass(cls, Record):
        slots = tuple(s for c in reversed(cls.__mro__) for s in c.__dict__.get("__slots__", ()))
        return cls, HOW_RECORD, slots
    raise TypeError(f"the packer cannot write {cls.__name__}")


@functools.cache
def registry() -> Registry:
    entries = tuple(_entry(cls) for cls in CLASSES)
    return {cls: i for i, (cls, _, _) in enumerate(entries)}, entries


packer = optional("cmhash.native._cpack")


def encode(result: object) -> bytes:
    """``result`` as bytes; pickling errors propagate (the worker then leaves the batch
    to the parent)."""
    if packer is not None:
        index, entries = registry()
        packed: bytes | None = packer.pack(result, index, entries)
        if packed is not None:
            return PACKED + packed
    return PICKLED + pickle.dumps(result, pickle.HIGHEST_PROTOCOL)


def decode(data: bytes | memoryview) -> Any:
    view = memoryview(data)
    if view[:1] == PACKED:
        assert packer is not None
        return packer.unpack(view[1:], registry()[1])
    if view[:1] != PICKLED:
        raise ValueError("not a packed or pickled result")
    return pickle.loads(view[1:])

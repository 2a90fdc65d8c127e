"""``Record``: the base of the mutable records a run builds per input, document and
workload (SourceText, DocInfo, WorkloadInfo, WorkloadPlan).

They are what ``@dataclass(slots=True)`` would give: ``__slots__``, an ``__init__``,
equality and a repr over the slots. Written out instead of generated: dataclass builds
each class's methods with ``exec`` when the module is imported, 0.5-1.5 ms a class, and
importing ``dataclasses`` itself costs more. Together that was about 4 ms, 7 % of a
small chart's whole run (the pre-commit hook and Helm post-renderer case).
"""

from __future__ import annotations

from typing import ClassVar


class Record:
    __slots__: ClassVar[tuple[str, ...]] = ()
    __hash__: ClassVar[None] = None  # type: ignore[assignment]  # mutable: not hashable

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        return all(getattr(self, n) == getattr(other, n) for n in self.__slots__)

    def __repr__(self) -> str:
        shown = ", ".join(f"{n}={getattr(self, n)!r}" for n in self.__slots__ if n[0] != "_")
        return f"{type(self).__name__}({shown})"

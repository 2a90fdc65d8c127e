"""The small shared vocabulary: one identity for objects, and the enums that status
travels as (never bare strings that code compares)."""

# No "from __future__ import annotations": typing compiles string NamedTuple fields at import

import enum
import functools
from typing import NamedTuple


class TextEnum(str, enum.Enum):
    """An enum whose members are their text: JSON, templates and messages show the value,
    and a member still equals its string."""

    # its text, as str itself gives it (in C: Enum.value is a Python-level property,
    # and a big explain or report asks for thousands of these)
    __str__ = str.__str__


class ResourceId(NamedTuple):
    """What Kubernetes identifies an object by (kustomize's ResId): API group, kind,
    namespace (``""``: none, or cluster-scoped) and name."""

    group: str
    kind: str
    namespace: str
    name: str

    @classmethod
    def config(cls, kind: str, namespace: str, name: str) -> "ResourceId":
        """A ConfigMap or Secret (core group)."""
        return cls("", kind, namespace, name)

    @property
    def label(self) -> str:
        return f"{self.kind}/{self.name}" + (f" -n {self.namespace}" if self.namespace else "")


# ResourceId((group, kind, namespace, name)) without a Python frame: for the hot paths
# that make one per reference (the plan, report)
make_id = functools.partial(tuple.__new__, ResourceId)


class Level(TextEnum):
    ERROR = "error"
    WARNING = "warning"
    INFO = "info"

    @property
    def rank(self) -> int:
        """0 for the most severe: findings sort errors first."""
        return _RANK[self]


_RANK = {Level.ERROR: 0, Level.WARNING: 1, Level.INFO: 2}


class TargetState(TextEnum):
    """What a reference finds in the input (explain, report)."""

    IN_STREAM = "in-stream"
    MISSING = "missing"
    OPTIONAL_ABSENT = "optional-absent"
    OPTED_OUT = "opted-out"  # the object is out of every checksum (annotation or rule)
    EXCLUDED = "excluded"  # this workload's selection leaves it out
    IN_LOCK = "in-lock"  # not in the input; the lock file has its fingerprint (--lock)


class WorkloadStatus(TextEnum):
    """What cmhash does with a workload (explain)."""

    ANNOTATED = "annotated"
    SKIPPED = "skipped"
    NO_CONFIG = "no-in-stream-config"


DEFAULT_KEY = "checksum/config"  # the annotation cmhash writes, unless told another

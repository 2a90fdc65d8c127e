"""The self-check in C: the edited document, parsed again by libyaml, must be the original
tree plus our annotation. The same promise as verify.py, without a second tree and
without PyYAML (small inputs never import it).

``_ctree.check_edit`` (native/_ctree.c) walks the edited text's libyaml events against the
original tree, node by node: kinds, values, styles and the order of entries must be the
same; no anchors, aliases or tags (the tree must come from the C builder). Only plain
cases take this path: one document holding one object (the workload itself, not a List
item), with ``metadata``/``annotations`` mappings or absent. Our annotation must hold the
planned value, double-quoted, and may be anywhere in its mapping (so may a level the edit
created, holding nothing else); an existing value under our key is dropped from the
original; every other key stays where it was. Anything else, or any difference, returns
``None`` and verify.py, the reference, decides (its message is the one users see); the
tests hold this check to never accept what verify.py refuses.
"""

from __future__ import annotations

from cmhash.edit.splice import ANNOTATIONS
from cmhash.knowledge.kinds import WorkloadKind
from cmhash.parse.backends import CheckEdit
from cmhash.parse.builder import Roots


def verify(
    roots: Roots,
    new_text: str,
    kind: WorkloadKind,
    key: str,
    value: str,
    check: CheckEdit | None,
) -> bool | None:
    """True when the edited document is the original plus our annotation; None when this
    path cannot tell. ``check``: the C walk, for trees the C builder made (None: this
    path cannot tell)."""
    if check is None or len(roots) != 1 or roots.aliased or kind.level != ANNOTATIONS:
        return None  # (the C walk knows pod templates' metadata.annotations only)
    return check(roots[0], new_text, kind.template_path, key, value) or None

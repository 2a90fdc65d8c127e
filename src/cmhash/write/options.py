"""What the write stage reads of the settings (``settings/stages.py`` builds it)."""

# No "from __future__ import annotations": typing compiles string NamedTuple fields at import

from typing import NamedTuple

from cmhash.model import DEFAULT_KEY


class WriteOptions(NamedTuple):
    annotation_key: str = DEFAULT_KEY
    parser: str = "fast"  # the self-check of a partly edited document reads with it
    versioned_keep: bool = False  # the marks versioned objects carry (recheck.py)
    keep_versions: int | None = None
    versioned_immutable: bool = False

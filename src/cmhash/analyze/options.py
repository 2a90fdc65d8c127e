"""What the map stage reads of the settings (``settings/stages.py`` builds it, once
per run; worker processes receive it, not the settings)."""

# No "from __future__ import annotations": typing compiles string NamedTuple fields at import

from typing import NamedTuple

from cmhash.knowledge.compat import COMPAT_NAMES
from cmhash.model import DEFAULT_KEY


class AnalyzeOptions(NamedTuple):
    annotation_key: str = DEFAULT_KEY
    parser: str = "fast"  # "fast" (libyaml) or "exact" (ruamel)
    compat: frozenset[str] = frozenset(COMPAT_NAMES)  # other tools' annotations read
    opt_in: bool = False  # only workloads that opt in are annotated
    image_pull_secrets: bool = False  # imagePullSecrets are references too
    jobs_rename: bool = False  # a Job runs again under a new name (jobs.py)
    versioned: bool = False  # every referenced ConfigMap/Secret gets a versioned name
    versioned_keep: bool = False  # mark versioned objects so Helm and Argo CD keep them
    versioned_immutable: bool = False  # immutable: true on versioned objects
    keep_versions: int | None = None  # --keep-versions: a bounded history
    cpp_verify: bool = False  # the self-check in C++ (edit/cverify.py): big inputs
    # a candidate edit even for a workload without references (the pipeline's second
    # look at one an operator restarts: app/pipeline.py)
    edit_always: bool = False

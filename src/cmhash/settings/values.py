"""``Settings``: every option of a run, frozen; what the command line and the config file
can say (``layering.py``), before each stage takes its part (``stages.py``)."""

# No "from __future__ import annotations": typing compiles string NamedTuple fields at import

import os
import re
from typing import TYPE_CHECKING, Any, NamedTuple

from cmhash.findings import Acknowledgement
from cmhash.knowledge.kinds import WorkloadKind
from cmhash.knowledge.sources import SecretSource
from cmhash.model import DEFAULT_KEY
from cmhash.plan.options import secret_hidden
from cmhash.plan.selection import Rule

if TYPE_CHECKING:  # (a run with a lock file only)
    from cmhash.plan.lockfile import Lock

CONFIG_NAME = ".cmhash.yaml"
DEFAULT_MAX_INPUT = 256 * 1024 * 1024

# settings the config file and the command line give as they are: config-file key ->
# Settings field (the command-line option's name is the field's)
PLAIN_KEYS = (
    ("annotationKey", "annotation_key"),
    ("namespace", "namespace"),
    ("strict", "strict"),
    ("pods", "pods"),
    ("imagePullSecrets", "image_pull_secrets"),
    ("excludeSecrets", "exclude_secrets"),
    ("optIn", "opt_in"),
    ("versioned", "versioned"),
    ("versionedKeep", "versioned_keep"),
    ("versionedImmutable", "versioned_immutable"),
    ("hashLiveReloaded", "hash_live_reloaded"),
)


def find_config(start: str | None = None) -> str | None:
    """The .cmhash.yaml of ``start`` (the working directory) or its nearest parent."""
    d = os.path.abspath(start or os.getcwd())
    while True:
        candidate = os.path.join(d, CONFIG_NAME)
        if os.path.isfile(candidate):
            return candidate
        parent = os.path.dirname(d)
        if parent == d:
            return None
        d = parent


# (patterns, compiled by re's cache when a key is given: most runs give none)
_DNS_SUBDOMAIN = r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$"
_NAME = r"^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$"


def validate_annotation_key(key: str) -> str | None:
    """None if ``key`` is a valid annotation key (Kubernetes qualified name), else why not."""
    prefix, slash, name = key.rpartition("/")
    if slash and not prefix:
        return "the prefix before '/' is empty"
    if slash and (len(prefix) > 253 or not re.match(_DNS_SUBDOMAIN, prefix.lower())):
        return f"prefix {prefix!r} is not a DNS subdomain (lower-case, dots, dashes; <= 253)"
    if not name or len(name) > 63 or not re.match(_NAME, name):
        return (
            f"name {name!r} must be 1-63 characters of [A-Za-z0-9-_.], "
            "starting and ending with a letter or digit"
        )
    return None


class Settings(NamedTuple):
    annotation_key: str = DEFAULT_KEY
    namespace: str | None = None
    strict: bool = False
    jobs: bool = False
    jobs_rename: bool = False  # --jobs=rename: a Job runs again under a new name (jobs.py)
    pods: bool = False
    image_pull_secrets: bool = False
    exclude_secrets: bool = False
    secret_key: bytes | None = None  # never shown: see __repr__
    extra_kinds: tuple[WorkloadKind, ...] = ()
    extra_sources: tuple[SecretSource, ...] = ()  # secretSources of the config file
    quiet: bool = False
    parser: str = "fast"  # "fast" (libyaml, skips irrelevant documents) or "exact" (reference)
    max_input_bytes: int = DEFAULT_MAX_INPUT
    workers: int = 0  # 0: automatic (several processes only for big inputs)
    paths: tuple[str, ...] = ()  # manifest roots from the config file (relative to the cwd)
    exclude: tuple[str, ...] = ()  # gitignore-style patterns: config file, then --exclude
    scopes: tuple[str, ...] = ()  # environment directories: absolute glob patterns (scopes.py)
    config_file: str | None = None  # the .cmhash.yaml in use
    verbose: bool = False  # notes (skipped files, inferred namespace) on stderr
    notes: tuple[str, ...] = ()  # the configuration's notes, shown under --verbose
    progress: bool = False  # a progress bar on stderr (a terminal, not -q, not Helm/KRM)
    # the annotations of other tools that are read (analyze/declared.py)
    compat: frozenset[str] = frozenset(("reloader", "wave", "kapp"))
    opt_in: bool = False  # only workloads that opt in are annotated
    ignore_configs: tuple[Rule, ...] = ()  # plan/selection.py
    ignore_workloads: tuple[Rule, ...] = ()
    include_workloads: tuple[Rule, ...] = ()  # when any: only matching workloads
    versioned: bool = False  # rename every referenced ConfigMap/Secret (plan/versioning/)
    versioned_keep: bool = False  # mark versioned objects so Helm and Argo CD keep old ones
    versioned_immutable: bool = False  # set immutable: true on versioned objects
    keep_versions: int | None = None  # --keep-versions: a bounded history (plan/history.py)
    # count what an operator's own reloader applies without a restart (plan/resolve.py)
    hash_live_reloaded: bool = False
    acknowledge: tuple[Acknowledgement, ...] = ()  # known findings (findings.py)
    lock_file: str | None = None  # --lock, lock: (relative to the config file's directory)
    lock: "Lock | None" = None  # that file, read (plan/lockfile.py)

    def merged(self, **overrides: Any) -> "Settings":
        return self._replace(**{k: v for k, v in overrides.items() if v is not None})

    def __repr__(self) -> str:
        return secret_hidden(self)

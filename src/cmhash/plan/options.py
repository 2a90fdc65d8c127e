"""What the plan stage reads of the settings (``settings/stages.py`` builds it, once per
run; a Helm render's inferred namespace gives a copy with its ``namespace``)."""

# No "from __future__ import annotations": typing compiles string NamedTuple fields at import

from typing import TYPE_CHECKING, Any, NamedTuple

from cmhash.knowledge.sources import SecretSource
from cmhash.model import DEFAULT_KEY
from cmhash.plan.selection import Rule

if TYPE_CHECKING:  # (a run with --lock only: not imported by a plain run)
    from cmhash.plan.lockfile import Lock


class PlanOptions(NamedTuple):
    annotation_key: str = DEFAULT_KEY
    namespace: str | None = None  # the namespace of objects that name none
    strict: bool = False  # a missing reference is an error
    jobs: bool = False  # Jobs are annotated
    jobs_rename: bool = False  # a Job runs again under a new name
    pods: bool = False  # bare Pods are annotated
    opt_in: bool = False  # only workloads that opt in
    image_pull_secrets: bool = False  # imagePullSecrets count
    exclude_secrets: bool = False  # Secrets never count
    secret_key: bytes | None = None  # HMAC key of Secret values; never shown (__repr__)
    extra_sources: tuple[SecretSource, ...] = ()  # secretSources of the config file
    ignore_configs: tuple[Rule, ...] = ()  # plan/selection.py
    ignore_workloads: tuple[Rule, ...] = ()
    include_workloads: tuple[Rule, ...] = ()  # when any: only matching workloads
    versioned: bool = False  # every referenced ConfigMap/Secret gets a versioned name
    lock: "Lock | None" = None  # --lock, lock: fingerprints of what the cluster holds
    # what an operator's own reloader applies without a restart counts too
    # (knowledge/operators.py: an Alertmanager's configuration)
    hash_live_reloaded: bool = False

    def __repr__(self) -> str:
        return secret_hidden(self)


def secret_hidden(options: Any) -> str:
    """The repr of options (a NamedTuple) with their ``secret_key``, when set, hidden."""
    shown = ", ".join(
        f"{k}={'<hidden>' if k == 'secret_key' and v else repr(v)}"
        for k, v in zip(options._fields, options, strict=True)
    )
    return f"{type(options).__name__}({shown})"

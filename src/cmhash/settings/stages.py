"""Each stage's options from the Settings: the one place that knows which stage reads
which setting. A new option touches the command line (``cli/``), the settings
(``values.py``, ``config.py`` when the config file has it too), this table and the one
stage that reads it."""

# No "from __future__ import annotations": typing compiles string NamedTuple fields at import

from typing import NamedTuple

from cmhash.analyze.options import AnalyzeOptions
from cmhash.plan.options import PlanOptions
from cmhash.settings.values import Settings
from cmhash.write.options import WriteOptions


class Stages(NamedTuple):
    analyze: AnalyzeOptions
    plan: PlanOptions
    write: WriteOptions


def stages(s: Settings) -> Stages:
    return Stages(
        AnalyzeOptions(
            annotation_key=s.annotation_key,
            parser=s.parser,
            compat=s.compat,
            opt_in=s.opt_in,
            image_pull_secrets=s.image_pull_secrets,
            jobs_rename=s.jobs_rename,
            versioned=s.versioned,
            versioned_keep=s.versioned_keep,
            versioned_immutable=s.versioned_immutable,
            keep_versions=s.keep_versions,
        ),
        PlanOptions(
            annotation_key=s.annotation_key,
            namespace=s.namespace,
            strict=s.strict,
            jobs=s.jobs,
            jobs_rename=s.jobs_rename,
            pods=s.pods,
            opt_in=s.opt_in,
            image_pull_secrets=s.image_pull_secrets,
            exclude_secrets=s.exclude_secrets,
            secret_key=s.secret_key,
            extra_sources=s.extra_sources,
            ignore_configs=s.ignore_configs,
            ignore_workloads=s.ignore_workloads,
            include_workloads=s.include_workloads,
            versioned=s.versioned,
        ),
        WriteOptions(
            annotation_key=s.annotation_key,
            parser=s.parser,
            versioned_keep=s.versioned_keep,
            keep_versions=s.keep_versions,
            versioned_immutable=s.versioned_immutable,
        ),
    )

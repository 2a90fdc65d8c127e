"""Each stage's options from the Settings: the one place that knows which stage reads
which setting. A new option touches the command line (``cli/``), the settings
(``values.py``, ``config.py`` when the config file has it too), the options of the one
stage that reads it (a field of the same name as the setting's) and that stage."""

# No "from __future__ import annotations": typing compiles string NamedTuple fields at import

from typing import NamedTuple, TypeVar

from cmhash.analyze.options import AnalyzeOptions
from cmhash.plan.options import PlanOptions
from cmhash.settings.values import Settings
from cmhash.write.options import WriteOptions

Options = TypeVar("Options", AnalyzeOptions, PlanOptions, WriteOptions)


class Stages(NamedTuple):
    analyze: AnalyzeOptions
    plan: PlanOptions
    write: WriteOptions


def _part(options: type[Options], s: Settings) -> Options:
    """The settings ``options`` has a field of the same name for; a field no setting
    gives (AnalyzeOptions.cpp_verify: the stage decides it) keeps its default."""
    return options(**{f: getattr(s, f) for f in options._fields if f in Settings._fields})


def stages(s: Settings) -> Stages:
    return Stages(_part(AnalyzeOptions, s), _part(PlanOptions, s), _part(WriteOptions, s))

"""``cmhash report OLD NEW``: what a change to rendered manifests does to running pods.

``compare`` builds the report as plain data from two normal runs (no I/O); ``render``
formats it. It never puts a Secret's values or any hash of them in its output: Secrets
are described by key names only, and workload checksums are left out altogether.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from cmhash.report.budget import NO_BUDGET, Budget
from cmhash.report.compare import build
from cmhash.report.render import FORMATS, fails, formatted

if TYPE_CHECKING:
    from cmhash.settings.values import Settings

__all__ = ["Budget", "data_of", "formatted", "run", "verdict"]


def data_of(old: str, new: str, settings: Settings, values: bool = True) -> dict[str, Any]:
    """Both sides (paths, or ``-`` for one) through the normal pipeline, and the report
    as plain data."""
    from cmhash.app import pipeline as app
    from cmhash.errors import UsageError
    from cmhash.read.inputs import select
    from cmhash.read.mode import Mode
    from cmhash.runtime import lifetime

    if old == "-" and new == "-":
        raise UsageError("OLD and NEW cannot both be - (stdin)")
    sides = [
        app.run(
            select(
                [p],
                mode=Mode.STREAM,
                config_paths=(),
                config_file=None,
                excludes=settings.exclude,
                max_bytes=settings.max_input_bytes,
            ).sources,
            settings,
            keep_plans=True,
            allow_empty=True,
            output=False,
        )
        for p in (old, new)
    ]
    data = build(sides[0], sides[1], settings.annotation_key, settings.parser, values)
    lifetime.keep(data)  # (not freed object by object at the end of the run)
    return data


def verdict(data: dict[str, Any], fail_on: str | None, budget: Budget) -> int:
    """The exit code: 1 with ``fail_on`` findings or more restarts than ``budget`` (one
    line on stderr), else 0."""
    from cmhash.errors import EXIT_CHANGED, EXIT_OK

    over = budget.over(data)
    if over is not None:
        from cmhash.output import err

        err(f"cmhash: {over}")
    return EXIT_CHANGED if fails(data, fail_on) or over is not None else EXIT_OK


def run(
    old: str,
    new: str,
    settings: Settings,
    fmt: str,
    template_file: str | None,
    fail_on: str | None,
    output: str | None,
    budget: Budget = NO_BUDGET,
    values: bool = True,
) -> int:
    """The report command: the report written (stdout, or ``output`` atomically), and
    its ``verdict``."""
    from cmhash.errors import UsageError
    from cmhash.output import write_stdout

    if template_file is not None and callable(FORMATS[fmt]):
        raise UsageError(f"--template applies to --format markdown or text, not {fmt}")
    data = data_of(old, new, settings, values)
    text = formatted(data, fmt, template_file)
    if output and output != "-":
        from cmhash.write.writer import write_new_file

        write_new_file(output, text)
    else:
        write_stdout(text)
    return verdict(data, fail_on, budget)

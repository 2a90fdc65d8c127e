"""The views of a run: ``cmhash explain`` (what each workload references and the
checksum it would get) and ``cmhash report`` (two renders compared, for a merge
request). Their modules (explain.py, report/) load only when one of them runs."""

from __future__ import annotations

from typing import Any

import click

from cmhash.cli.inject import empty_allowed, run_pipeline, select_inputs, warn_if_empty
from cmhash.cli.options import BUDGETS, common_options, settings_options, verdict_options
from cmhash.errors import EXIT_INPUT

EXPLAIN_EXIT_CODES_HELP = """\b
Exit codes:
  0  explanation written (warnings or not)
  2  bad input or usage, or error-level findings (e.g. --strict);
     the explanation is written all the same
  3  internal error (a bug: please report it)"""


@click.command(epilog=EXPLAIN_EXIT_CODES_HELP)
@common_options
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["text", "json", "mermaid"]),
    default="text",
    show_default=True,
    help="text: a tree; json: versioned, schema in schemas/explain.schema.json; "
    "mermaid: config objects -> workloads.",
)
@click.option(
    "--detail",
    is_flag=True,
    help="text: every reference on its own line (by default the references to one "
    "object share a line).",
)
def explain(paths: tuple[str, ...], fmt: str, detail: bool, **opts: Any) -> None:
    """Show, for every workload, what it references (kind, name, how, keys, optional),
    whether each target is in the input, and the checksum cmhash would write.
    Writes nothing; findings are listed too."""
    from cmhash.explain import FORMATS, build
    from cmhash.output import report_notes, write_stdout
    from cmhash.read.stdin import Mode
    from cmhash.runtime import lifetime
    from cmhash.settings.layering import layered

    settings = layered(opts)
    inputs = select_inputs(paths, settings, Mode.STREAM)
    allow_empty = empty_allowed(inputs, settings, Mode.STREAM)
    result = run_pipeline(inputs, settings, keep_plans=True, allow_empty=allow_empty, output=False)
    warn_if_empty(result, inputs, settings)
    report_notes(result.notes, quiet=settings.quiet)
    data = build(result, settings.annotation_key)
    lifetime.keep(data)  # (a dict per workload, config and reference: not freed one by one)
    write_stdout(FORMATS["text-detail" if detail and fmt == "text" else fmt](data))
    if result.has_errors:
        raise SystemExit(EXIT_INPUT)


@click.command(
    epilog="""\b
Exit codes:
  0  report written (findings or not)
  1  --fail-on: findings of that level or worse; more restarts than
     --max-restarts / --max-restarts-per-namespace; more surge than
     --max-surge-cpu / --max-surge-memory; downtime with --no-downtime
  2  bad input or usage
  3  internal error (a bug: please report it)"""
)
@click.argument("old", type=click.Path(allow_dash=True))
@click.argument("new", type=click.Path(allow_dash=True))
@settings_options
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["markdown", "json", "text", "codequality"]),
    default="markdown",
    show_default=True,
    help="markdown: for a merge-request comment; json: versioned, schema in "
    "schemas/report.schema.json; text: for a terminal; codequality: GitLab "
    "Code Quality artifact.",
)
@verdict_options("fail_on")
@click.option(
    "--template",
    "template_file",
    type=click.Path(dir_okay=False, exists=True),
    help="A jinja2 template instead of the shipped one (markdown and text).",
)
@click.option(
    "-o",
    "--output",
    type=click.Path(dir_okay=False, allow_dash=True),
    help="Write the report to this file (a regular file atomically; a device or FIFO as a "
    "stream; through a symlink, its target) instead of stdout.",
)
@verdict_options(*BUDGETS)
@click.option(
    "--old-lock",
    metavar="FILE",
    type=click.Path(dir_okay=False),
    help="OLD's lock file (cmhash lock), when it is not NEW's (--lock, lock:): a store "
    "rotation then shows as its cause.",
)
def report(
    old: str,
    new: str,
    fmt: str,
    fail_on: str | None,
    template_file: str | None,
    output: str | None,
    old_lock: str | None,
    **opts: Any,
) -> None:
    """Compare two renders of the same manifests (OLD: e.g. the target branch, NEW: the
    merge request; files, directories or -) and report which workloads will restart and
    why, which use changed configuration but will not restart, changed objects nobody
    uses, and findings (immutable objects that changed are errors).

    Secrets are described by key names only: never a value, never a hash of one."""
    from cmhash import report as rep
    from cmhash.cli.options import pop_budget
    from cmhash.settings.layering import layered

    budget, values, nodes = pop_budget(opts)
    settings = layered(opts)
    old_settings = None
    if old_lock is not None:
        from cmhash.plan.lockfile import read_lock

        old_lock_read = read_lock(old_lock, settings.max_input_bytes)
        old_settings = settings._replace(lock_file=old_lock, lock=old_lock_read)
    raise SystemExit(
        rep.run(
            old,
            new,
            settings,
            fmt,
            template_file,
            fail_on,
            output,
            budget,
            values,
            old_settings,
            nodes,
        )
    )
